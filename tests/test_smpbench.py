"""scripts/smp_bench.py's logic at a trivially small setting: it runs and reports
every figure (no figure is checked: they are measurements, not behaviour)."""

from __future__ import annotations

from pathlib import Path

import pytest

from blitzaco.engine import MAX_THREADS
from blitzaco.tools.smpbench import main, table_costs, time_to_depth


def test_table_costs_are_reported_for_both_tables() -> None:
    """The process's own table and the shared one, each with its three costs."""
    costs = table_costs(operations=2000, hash_mb=1, rounds=1)
    assert [cost.table for cost in costs] == ["own", "shared"]
    assert all(cost.probe_hit_us >= 0 and cost.probe_miss_us >= 0 and cost.store_us >= 0 for cost in costs)


@pytest.mark.skipif(MAX_THREADS < 2, reason="Threads 2 needs two cores")
def test_time_to_depth_with_one_and_two_threads() -> None:
    """The whole script at depth 2 on two positions: the table costs, a summary line
    per thread count with the speed-up, and one run's depth and nodes."""
    lines: list[str] = []
    assert main(["--depth", "2", "--positions", "2", "--hash", "1", "--operations", "500"], out=lines.append) == 0
    assert any(line.startswith("  shared ") for line in lines), lines
    summary = [line for line in lines if line.startswith("Threads ") and " nodes/s" in line and "position" not in line]
    assert len(summary) == 2 and "speed-up against Threads 1" in summary[1], lines
    runs = time_to_depth(2, 1, ["8/8/8/4k3/8/8/4P3/4K3 w - - 0 1"], hash_mb=1, out=lines.append)
    assert runs[0].depth == 2 and runs[0].nodes > 0


def test_config_file_reaches_the_searches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """--config: the searches get the file's configuration (other skip tables), and a
    bad file is refused with the key it names."""
    from blitzaco.tools import smpbench

    seen = []

    def fake(depth, threads, fens, hash_mb, config=None, out=print):  # type: ignore[no-untyped-def]
        seen.append(config)
        return []

    monkeypatch.setattr(smpbench, "time_to_depth", fake)
    good = tmp_path / "odd.toml"
    good.write_text(f"[threads]\nskip_size = {[1] * 20}\nskip_phase = {[1] * 20}\n")
    assert main(["--no-table", "--threads", "1", "--config", str(good)], out=lambda line: None) == 0
    config = seen[0]
    assert config is not None
    assert list(config.threads.skip_size) == [1] * 20 and list(config.threads.skip_phase) == [1] * 20
    assert main(["--no-table", "--threads", "1"], out=lambda line: None) == 0
    assert seen[1] is None  # the shipped configuration
    bad = tmp_path / "bad.toml"
    bad.write_text("[threads]\nno_such_key = 1\n")
    with pytest.raises(SystemExit):
        main(["--no-table", "--threads", "1", "--config", str(bad)], out=lambda line: None)
    assert "no_such_key" in capsys.readouterr().err
