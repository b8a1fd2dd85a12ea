"""SPSA (blitzaco.tools.tune.spsa, ``tune.py spsa``): the spec's parameters checked
against the configuration, the schedules ending at the spec's step and rate, the
update moving each value towards the side that won within its bounds, integer
fields played rounded, a run continued giving the run made in one go, and one real
iteration of the engine against itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from blitzaco.config import Config, ConfigError, load_config
from blitzaco.tools.match.runner import MatchReport, Opening
from blitzaco.tools.tune.spsa import (
    SpsaParam,
    SpsaSettings,
    config_text,
    default_spsa_spec_path,
    load_spsa_spec,
    run_spsa,
    schedule,
)

ROOT = Path(__file__).resolve().parent.parent
OPENINGS = [Opening("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"),
            Opening("rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1")]


def _spec(tmp_path: Path, params: str, spsa: str = "iterations = 10\npairs = 1\n") -> Path:
    path = tmp_path / "spec.toml"
    path.write_text(f"[params]\n{params}\n[spsa]\n{spsa}")
    return path


def test_the_shipped_spec_names_numbers_of_the_search_around_their_defaults() -> None:
    params, settings = load_spsa_spec(default_spsa_spec_path())
    assert len(params) >= 8 and all(p.path.startswith("search.") for p in params)
    assert {p.path: p.integer for p in params}["search.lmr_base"] is False
    assert {p.path: p.integer for p in params}["search.futility_margin"] is True
    assert settings.iterations >= 100 and settings.pairs >= 1


@pytest.mark.parametrize("params, spsa, message", [
    ('"search.futility" = [0, 1, 1]', "", "not a single number"),
    ('"search.nonsense" = [0, 1, 1]', "", "no such config field"),
    ('"search.futility_margin" = [5000, 6000, 5]', "", "must hold the default"),
    ('"search.futility_margin" = [0, 300, 0]', "", "must hold the default"),
    ('"search.futility_margin" = [0, 300]', "", "[lowest, highest, step]"),
    ('"search.futility_margin" = [0, 300, 5]', "speed = 3\n", "unknown [spsa] key"),
    ('"search.futility_margin" = [0, 300, 5]', 'tc = "soon"\n', ""),
])
def test_a_bad_spec_is_refused(tmp_path: Path, params: str, spsa: str, message: str) -> None:
    with pytest.raises((ConfigError, ValueError), match=None) as raised:
        load_spsa_spec(_spec(tmp_path, params, spsa))
    assert message in str(raised.value)


def test_the_schedules_end_at_the_step_and_the_rate() -> None:
    param = SpsaParam("search.futility_margin", 40, 250, 12, True)
    settings = SpsaSettings(iterations=200, learning=0.01)
    first, last = schedule(param, settings, 1), schedule(param, settings, 200)
    assert last == pytest.approx((12, 0.01))
    assert first[0] > 12 and first[1] > 0.01  # earlier iterations move further and learn faster
    assert schedule(param, settings, 100)[0] < first[0]


def test_config_text_rounds_integer_fields_and_reads_as_a_config(tmp_path: Path) -> None:
    params = [SpsaParam("search.futility_margin", 40, 250, 12, True), SpsaParam("search.lmr_base", 0, 1.5, 0.1, False),
              SpsaParam("time.soft_factor", 0.3, 1.2, 0.05, False)]
    path = tmp_path / "c.toml"
    path.write_text(config_text(params, [117.6, 0.83, 0.55]))
    config = load_config(path)
    assert config.search.futility_margin == 118 and config.search.lmr_base == 0.83
    assert config.time.soft_factor == 0.55


class _Fake:
    """A match where the engine with the given name wins every game; records the
    engines and openings it was given."""

    def __init__(self, winner: str = "plus") -> None:
        self.winner = winner
        self.calls: list[tuple] = []

    def __call__(self, first, second, openings, limit, games, **kwargs) -> MatchReport:  # type: ignore[no-untyped-def]
        self.calls.append((first, second, list(openings), games))
        report = MatchReport(first.name, second.name, limit.describe())
        if self.winner == first.name:
            report.wins = games
        else:
            report.losses = games
        return report


def test_each_value_moves_towards_the_side_that_won_within_its_bounds(tmp_path: Path) -> None:
    defaults = Config().search  # where the run starts
    margin, base = defaults.futility_margin, defaults.lmr_base
    low, high = margin - 10, margin + 20
    params, settings = load_spsa_spec(_spec(tmp_path, f'"search.futility_margin" = [{low}, {high}, 12]\n'
                                                      '"search.lmr_base" = [0.0, 1.5, 0.1]\n',
                                            "iterations = 40\npairs = 1\nlearning = 0.05\n"))
    fake = _Fake("plus")
    out = tmp_path / "run.json"
    state = run_spsa(params, settings, out, command=["engine"], openings=OPENINGS, options=[("OwnBook", "false")],
                     iterations=1, play=fake)
    [(first, second, openings, games)] = fake.calls
    assert games == 2 and openings == [OPENINGS[0]]
    assert first.options == (("ConfigFile", str(tmp_path / "run.plus.toml")), ("OwnBook", "false"))
    assert second.options[0] == ("ConfigFile", str(tmp_path / "run.minus.toml"))
    plus = load_config(tmp_path / "run.plus.toml").search
    minus = load_config(tmp_path / "run.minus.toml").search
    # The plus side won 2-0: each value moved towards the plus side's, r c 2 far.
    for index, (name, start) in enumerate((("futility_margin", margin), ("lmr_base", base))):
        c, r = schedule(params[index], settings, 1)
        toward = 1 if getattr(plus, name) > getattr(minus, name) else -1
        assert state["theta"][index] == pytest.approx(start + toward * r * c * 2)
    # Always won by plus: every value walks to a bound and stays inside it.
    state = run_spsa(params, settings, out, command=["engine"], openings=OPENINGS, play=fake)
    assert state["iteration"] == 40 and len(state["results"]) == 40
    assert low <= state["theta"][0] <= high and 0.0 <= state["theta"][1] <= 1.5
    assert fake.calls[1][2] == [OPENINGS[1]]  # the next opening each iteration
    assert load_config(tmp_path / "run.toml").search.futility_margin == round(state["theta"][0])


def test_a_continued_run_is_the_run_made_in_one_go(tmp_path: Path) -> None:
    params, settings = load_spsa_spec(_spec(tmp_path, '"search.futility_margin" = [40, 250, 12]\n'
                                                      '"search.reverse_futility_margin" = [30, 200, 10]\n'))
    alternating = iter(["plus", "minus", "minus", "plus", "plus", "plus", "minus", "plus", "minus", "minus"] * 2)

    def play(first, second, openings, limit, games, **kwargs):  # type: ignore[no-untyped-def]
        return _Fake(next(alternating))(first, second, openings, limit, games)

    whole = run_spsa(params, settings, tmp_path / "whole.json", command=["e"], openings=OPENINGS, play=play)
    run_spsa(params, settings, tmp_path / "parts.json", command=["e"], openings=OPENINGS, iterations=4, play=play)
    parts = run_spsa(params, settings, tmp_path / "parts.json", command=["e"], openings=OPENINGS, play=play)
    assert parts["theta"] == whole["theta"] and parts["results"] == whole["results"]
    other, _ = load_spsa_spec(_spec(tmp_path, '"search.futility_margin" = [40, 250, 12]\n'))
    with pytest.raises(ValueError, match="other parameters"):
        run_spsa(other, settings, tmp_path / "parts.json", command=["e"], openings=OPENINGS, play=play)


def test_one_real_iteration_of_the_engine_against_itself(tmp_path: Path) -> None:
    """tune.py spsa plays the engine against itself (200 nodes a move) and writes its
    state and the values reached."""
    spec = _spec(tmp_path, '"search.futility_margin" = [40, 250, 12]\n',
                 'iterations = 5\npairs = 1\ntc = "nodes=200"\n')
    out = tmp_path / "run.json"
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "tune.py"), "spsa", "--spec", str(spec),
                             "--out", str(out), "--iterations", "1", "--concurrency", "1", "--ray", "none"],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    state = json.loads(out.read_text())
    assert state["iteration"] == 1 and sum(state["results"][0]) == 2
    assert 40 <= load_config(tmp_path / "run.toml").search.futility_margin <= 250


def test_the_game_pairs_run_as_ray_tasks_on_a_two_node_cluster(tmp_path: Path) -> None:
    """``tune.py spsa --ray HOST:PORT``: a real two-node Ray cluster started here (a
    head and a second ``ray start --address``, one core each, stopped afterwards);
    the iteration's two game pairs are Ray tasks, one on each node, their engines'
    configurations sent as text; the state is what a local run writes."""
    pytest.importorskip("ray")
    from raycluster import ray_cluster

    spec = _spec(tmp_path, '"search.futility_margin" = [40, 250, 12]\n',
                 'iterations = 5\npairs = 2\ntc = "nodes=200"\n')
    out = tmp_path / "run.json"
    with ray_cluster(nodes=2, cpus=1) as address:
        result = subprocess.run([sys.executable, str(ROOT / "scripts" / "tune.py"), "spsa", "--spec", str(spec),
                                 "--out", str(out), "--iterations", "1", "--ray", address],
                                capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "game pairs played on 2 Ray node(s)" in result.stdout, result.stdout
    state = json.loads(out.read_text())
    assert state["iteration"] == 1 and sum(state["results"][0]) == 4
    assert 40 <= load_config(tmp_path / "run.toml").search.futility_margin <= 250
