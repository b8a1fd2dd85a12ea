"""The tools' Ray tasks (blitzaco.tools.rayinit): label batches and SPSA game pairs
(and those of game fitness and matches) are made by one helper, so all are retried
when a worker dies, take one core and spread over a cluster's nodes. A stand-in for
the ray module records what each asks for; the real clusters are started by
test_labelrun, test_spsa and test_match."""

from __future__ import annotations

from typing import Any

import pytest

from blitzaco.tools.tune import labelrun, spsa
from blitzaco.tools.rayinit import RETRIES, retried_task

WANTED = {"max_retries": RETRIES, "num_cpus": 1, "scheduling_strategy": "SPREAD"}


class _FakeRay:
    """What the tuner calls of the ray module, recording the options of each task."""

    def __init__(self) -> None:
        self.options: list[dict[str, Any]] = []

    def remote(self, **options: Any) -> Any:
        self.options.append(options)
        return lambda function: ("task", function)


def test_a_task_is_retried_of_one_core_and_spread() -> None:
    ray = _FakeRay()
    assert retried_task(ray, len) == ("task", len)
    assert ray.options == [WANTED] and RETRIES >= 1


def test_label_batches_and_spsa_pairs_ask_for_the_same_task(monkeypatch: pytest.MonkeyPatch) -> None:
    ray = _FakeRay()
    monkeypatch.setattr(labelrun, "start_ray", lambda address, workers: ray)
    monkeypatch.setattr(spsa, "start_ray", lambda address, workers: ray)
    labelrun._Ray("auto", 2, labelrun.RunSettings(seed=1), None, "static")
    spsa.RayPlay("auto", 2)
    assert ray.options == [WANTED, WANTED]
