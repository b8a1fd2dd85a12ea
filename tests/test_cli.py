"""The blitzaco command and python -m blitzaco."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from uci_driver import ENGINE_COMMAND


def _run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=True, env={**os.environ, **env})


def _bench_nodes(output: str) -> int:
    lines = output.strip().splitlines()
    assert lines[-2].startswith("Nodes searched: ")
    assert lines[-1].startswith("Nodes/second: ")
    return int(lines[-2].split(": ")[1])


def test_console_script_and_module_are_the_same_program() -> None:
    script = shutil.which("blitzaco")
    assert script is not None, "the blitzaco console script is not installed"
    assert _run([script, "--version"]).stdout == _run([*ENGINE_COMMAND, "--version"]).stdout
    assert _run([script, "--version"]).stdout.startswith("BlitzACO ")


def test_version_says_whether_the_build_is_compiled() -> None:
    from blitzaco.board import INTERPRETED

    out = _run([*ENGINE_COMMAND, "--version"]).stdout.strip()
    interpreted = "(interpreted: install with a C compiler, or the release's wheel, for the compiled build)"
    assert out.endswith(interpreted if INTERPRETED else "(compiled)"), out


def test_bench_prints_a_deterministic_node_count_last() -> None:
    first = _bench_nodes(_run([*ENGINE_COMMAND, "bench", "2"], PYTHONHASHSEED="1").stdout)
    second = _bench_nodes(_run([*ENGINE_COMMAND, "bench", "2"], PYTHONHASHSEED="12345").stdout)
    assert first == second > 0


def test_bench_depth_changes_the_count() -> None:
    shallow = _bench_nodes(_run([*ENGINE_COMMAND, "bench", "1"]).stdout)
    assert shallow < _bench_nodes(_run([*ENGINE_COMMAND, "bench", "2"]).stdout)


def test_eval_command(tmp_path: Path) -> None:
    position = ["4k3/8/8/8/8/8/8/3QK3", "w", "-", "-", "0", "1"]
    # By default the network (net.bin) alone is the score; the classical one is shown, not added.
    blend = _run([*ENGINE_COMMAND, "eval", *position]).stdout.splitlines()
    assert any(line.startswith("Network: network net.bin") for line in blend)
    network = next(line for line in blend if line.startswith("Network score"))
    assert "weight 1, in the score" in network
    classical = next(line for line in blend if line.startswith("Classical evaluation"))
    assert "(white side, replaced by the network: not in the score)" in classical
    parts = float(network.split()[2])
    assert abs(float(blend[-1].split()[2]) - parts) <= 0.02 and parts > 5
    plain = tmp_path / "plain.toml"
    plain.write_text("[eval.nn]\nenabled = false\n")
    out = _run([*ENGINE_COMMAND, "--config", str(plain), "eval", *position]).stdout
    lines = out.splitlines()
    assert "Network: switched off" in lines
    assert lines[0].split() == ["Term", "|", "White", "|", "Black", "|", "Total"]
    for term in ("Material", "PST", "Pawns", "Passed", "Mobility", "King safety", "Threats", "Tempo"):
        assert any(line.strip().startswith(f"{term} |") for line in lines), term
    assert any(line.strip().startswith("connectivity |") for line in lines)
    assert any(line.startswith("Pheromone:") for line in lines)
    assert lines[-1].startswith("Final evaluation +") and lines[-1].endswith("(white side)")
    # With the extra terms off the final score is the classical one, a queen up.
    classical = next(line for line in lines if line.startswith("Classical evaluation"))
    assert classical.split()[2] == lines[-1].split()[2] and float(lines[-1].split()[2]) > 5
    assert "(white side, in the score)" in classical
    black = _run([*ENGINE_COMMAND, "--config", str(plain), "eval", "3qk3/8/8/8/8/8/8/4K3", *position[1:]]).stdout
    assert black.splitlines()[-1].startswith("Final evaluation -")


def test_the_engine_does_not_import_torch_or_numpy() -> None:
    code = (
        "import sys, blitzaco.cli, blitzaco.uci, blitzaco.engine, blitzaco.tools.bench;"
        "bad = [m for m in ('torch', 'numpy') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
