"""A real Ray cluster on this machine for the tests: a head and more nodes, each a
``ray start --block`` process in its own session, on the loopback address only,
stopped (only these, never another Ray on the machine) when the test is done.

The tests that start Ray take a file lock first: Ray's head listens on fixed ports
besides the one given (its client server's), so two heads started at once by
parallel test workers would collide.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from blitzaco.system import environment

#: Every Ray process of a test: token authentication off (a local test cluster),
#: no usage report.
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
_LOCK = Path(tempfile.gettempdir()) / "blitzaco-ray-tests.lock"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def ray_lock() -> Iterator[None]:
    """One Ray instance of the tests at a time on this machine, and its environment set."""
    with open(_LOCK, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            with environment(RAY_ENV):
                yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def ray_cluster(nodes: int = 1, cpus: int = 1) -> Iterator[str]:
    """A head and ``nodes - 1`` more nodes of *cpus* cores each; yields the head's
    address once every node has joined."""
    import ray

    ray_command = shutil.which("ray") or str(Path(sys.executable).parent / "ray")
    port = free_port()
    folder = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # Ray's socket paths must stay short
    common = ["--block", "--node-ip-address=127.0.0.1", "--num-cpus", str(cpus), "--disable-usage-stats"]
    processes: list[subprocess.Popen[bytes]] = []
    with ray_lock():
        try:
            processes.append(subprocess.Popen(
                [ray_command, "start", "--head", "--port", str(port), "--include-dashboard=false",
                 f"--temp-dir={folder}", *common],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
            address = f"127.0.0.1:{port}"
            _wait_for(lambda: _alive_nodes(ray, address) >= 1, processes)
            for _ in range(nodes - 1):
                processes.append(subprocess.Popen(
                    [ray_command, "start", f"--address={address}", *common],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
            _wait_for(lambda: _alive_nodes(ray, address) >= nodes, processes)
            yield address
        finally:
            for process in reversed(processes):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGTERM)
            for process in processes:
                try:
                    process.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)
                    process.wait(timeout=30)
            shutil.rmtree(folder, ignore_errors=True)


def _alive_nodes(ray: object, address: str) -> int:
    ray.init(address=address, log_to_driver=False)  # type: ignore[attr-defined]
    try:
        return sum(1 for node in ray.nodes() if node["Alive"])  # type: ignore[attr-defined]
    finally:
        ray.shutdown()  # type: ignore[attr-defined]


def _wait_for(ready: object, processes: list[subprocess.Popen[bytes]], seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if ready():  # type: ignore[operator]
                return
        except Exception:
            if time.monotonic() > deadline or any(process.poll() is not None for process in processes):
                raise
        if time.monotonic() > deadline or any(process.poll() is not None for process in processes):
            raise TimeoutError("the Ray cluster did not start (a node ended, or the wait ran out)")
        time.sleep(1)
