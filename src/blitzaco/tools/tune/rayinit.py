"""Ray for the tuner's distributed work (label batches, SPSA game pairs): a local
instance or a cluster, started one way for both."""

from __future__ import annotations

from typing import Any

__all__ = ["start_ray"]


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
