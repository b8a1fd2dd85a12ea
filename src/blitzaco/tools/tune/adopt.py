"""Make tuned weights the shipped defaults.

The defaults live in ``blitzaco/config.py`` (``config.toml`` is generated from them),
so adopting a tuned config means rewriting the default values there: this module
finds each field's definition (``_param(default, ...)``, ``_pair(mg, eg, ...)``,
``_pairs(doc, (mg, eg), ...)``, ``_table(doc, ...)``, ``_ints(doc, ...)``) with the
``ast`` module and replaces only the numbers of the fields that differ, keeping the
documentation and the layout. Nothing happens unless asked
(``scripts/tune.py adopt``).
"""

from __future__ import annotations

import ast
import dataclasses
import os
import tempfile
from pathlib import Path
from typing import Any

from blitzaco import config as config_module
from blitzaco.config import Config

__all__ = ["adopt_source", "changed_fields"]


def changed_fields(new: Config, old: Config | None = None) -> dict[tuple[str, str], Any]:
    """{(dataclass name, field name): new value} for every leaf that differs."""
    old = old if old is not None else Config()
    changes: dict[tuple[str, str], Any] = {}

    def walk(a: Any, b: Any) -> None:
        for f in dataclasses.fields(a):
            x, y = getattr(a, f.name), getattr(b, f.name)
            if dataclasses.is_dataclass(x):
                walk(x, y)
            elif x != y:
                changes[(type(a).__name__, f.name)] = x

    walk(new, old)
    return changes


def _layout(items: list[str], indent: int, per_line: int | None) -> str:
    """*items* comma-separated as the config tables are written: *per_line* to a
    line (or as many as fit in 116 columns), continuation lines indented by
    *indent*; no comma after the last (the source keeps its own)."""
    lines: list[list[str]] = [[]]
    width = indent
    for item in items:
        full = per_line is not None and len(lines[-1]) == per_line
        if lines[-1] and (full or per_line is None and width + len(item) + 2 > 116):
            lines.append([])
            width = indent
        lines[-1].append(item)
        width += len(item) + 2
    return (",\n" + " " * indent).join(", ".join(line) for line in lines).lstrip()


def adopt_source(source: str, new: Config, old: Config | None = None) -> tuple[str, int]:
    """*source* (the text of config.py) with the defaults of the fields in which *new*
    differs from *old* (default: the built-in config) replaced; returns the text and
    the number of fields changed. Raises ValueError for a field it cannot find."""
    changes = changed_fields(new, old)
    tree = ast.parse(source)
    data = source.encode("utf-8")
    lines = data.split(b"\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def span(first: ast.expr, last: ast.expr) -> tuple[int, int]:
        return (starts[first.lineno - 1] + first.col_offset,
                starts[last.end_lineno - 1] + last.end_col_offset)  # type: ignore[operator]

    edits: list[tuple[int, int, str]] = []
    found = set()
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        for item in node.body:
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                continue
            key = (node.name, item.target.id)
            if key not in changes:
                continue
            call = item.value
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
                raise ValueError(f"{node.name}.{item.target.id}: not a field definition")
            value, kind, args = changes[key], call.func.id, call.args
            if kind == "_param":
                edits.append((*span(args[0], args[0]), repr(value)))
            elif kind == "_pair":
                edits.append((*span(args[0], args[0]), repr(value[0])))
                edits.append((*span(args[1], args[1]), repr(value[1])))
            elif kind in ("_pairs", "_table", "_ints"):
                indent = args[0].col_offset  # the documentation string starts the block
                if kind == "_pairs":
                    text = _layout([f"({mg}, {eg})" for mg, eg in value], indent, None)
                elif kind == "_table":
                    text = _layout([f"{v:4d}" for v in value], indent, 8)
                else:
                    text = _layout([str(v) for v in value], indent, None)
                edits.append((*span(args[1], args[-1]), text))
            else:
                raise ValueError(f"{node.name}.{item.target.id}: unknown field kind {kind}")
            found.add(key)
    missing = set(changes) - found
    if missing:
        raise ValueError(f"cannot find the definition of {sorted(missing)[0]}")
    for start, end, text in sorted(edits, reverse=True):
        data = data[:start] + text.encode("utf-8") + data[end:]
    return data.decode("utf-8"), len(found)


def adopt(new: Config, path: Path | None = None) -> int:
    """Rewrite blitzaco/config.py so that its defaults are *new*; returns the number
    of fields changed. Regenerate config.toml afterwards (``blitzaco config``)."""
    path = path if path is not None else Path(config_module.__file__)
    text, count = adopt_source(path.read_text(encoding="utf-8"), new)
    # A temporary file beside it, then a rename: an interrupted adopt leaves the old
    # file whole, never half a module.
    handle, name = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.chmod(name, path.stat().st_mode & 0o777)
        os.replace(name, path)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return count
