"""Ray for the tools' distributed work (label batches, the game pairs of SPSA,
fitness and matches): a local instance or a cluster, started one way for all."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["RETRIES", "retried_task", "start_ray"]

#: Times Ray gives a task again when its worker or node dies.
RETRIES = 5


def start_ray(address: str, workers: int, object_store_mb: int = 256) -> Any:
    """Ray, initialised: *address* ``auto`` starts a new local instance of *workers*
    cores (``local``: never one that RAY_ADDRESS or an earlier ``ray start`` names),
    any other address (HOST:PORT) joins that cluster. Returns the module."""
    import ray

    if address == "auto":
        ray.init(address="local", num_cpus=workers, include_dashboard=False, log_to_driver=False,
                 object_store_memory=object_store_mb * 1024 * 1024)
    else:
        ray.init(address=address, log_to_driver=False)
    return ray


def retried_task(ray: Any, function: Callable[..., Any]) -> Any:
    """*function* as a Ray task of one core, given again (up to :data:`RETRIES`
    times) when its worker or node dies, and spread over the cluster's nodes:
    Ray's default packs the driver's node first, and a node whose workers start
    slowly on a busy machine could be left out of a short run."""
    return ray.remote(max_retries=RETRIES, num_cpus=1, scheduling_strategy="SPREAD")(function)
