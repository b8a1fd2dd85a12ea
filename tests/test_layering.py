"""The house's layering, read from the code: the engine never imports a tool (loading
every engine module, the UCI loop and everything under it, loads nothing from
``blitzaco.tools`` nor torch), and every import goes down the floors that
docs/architecture.md draws, with python-chess only at the named edges."""

from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import blitzaco

#: Every module of the engine proper: the package's top-level modules except the
#: command dispatcher (``cli``, which loads a tool for the command it runs).
ENGINE_MODULES = sorted(
    f"blitzaco.{info.name}"
    for info in pkgutil.iter_modules(blitzaco.__path__)
    if not info.ispkg and info.name not in ("cli", "__main__")
)


def test_the_engine_modules_are_the_expected_ones() -> None:
    assert {"blitzaco.uci", "blitzaco.engine", "blitzaco.search", "blitzaco.static_eval"} <= set(ENGINE_MODULES)
    assert not any(name.startswith("blitzaco.tools") for name in ENGINE_MODULES)


def test_importing_the_engine_loads_no_tool() -> None:
    code = (
        "import sys\n"
        f"for name in {ENGINE_MODULES!r}:\n"
        "    if name != 'blitzaco.spectral':  # numpy, loaded only when the term is on\n"
        "        __import__(name)\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "blitzaco.uci" in loaded and "blitzaco.search" in loaded
    tools = [name for name in loaded if name.startswith("blitzaco.tools") or name.split(".")[0] in ("torch", "numpy")]
    assert tools == []


def test_the_check_would_see_a_tool() -> None:
    """The check above can fail: importing a tool shows up in the same listing."""
    code = "import sys, blitzaco.uci, blitzaco.tools.bench\nprint('\\n'.join(sorted(sys.modules)))\n"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert "blitzaco.tools.bench" in loaded


def test_start_up_does_not_load_traceback_until_a_bug_is_reported(capsys) -> None:  # type: ignore[no-untyped-def]
    """``traceback`` (with ``textwrap``) cost about 4 ms of start-up: the UCI loop loads
    it only when it reports a bug, and then prints the exception being handled."""
    code = "import sys, blitzaco.cli, blitzaco.uci\nprint('traceback' in sys.modules, 'textwrap' in sys.modules)\n"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert loaded == ["False", "False"]
    from blitzaco.engine import print_traceback

    try:
        raise ValueError("a planted bug")
    except ValueError:
        print_traceback()
    err = capsys.readouterr().err
    assert "Traceback" in err and "ValueError: a planted bug" in err


# ---------------------------------------------------------------------------- the layering read from the code

SOURCE = Path(blitzaco.__file__).resolve().parent

#: The house from the ground up: a module may import only modules of its own or a
#: lower floor (docs/architecture.md draws it). Within a floor, imports follow the
#: order listed here (each name may import those before it on its floor).
FLOORS: tuple[tuple[str, ...], ...] = (
    # ground: what everything stands on, importing nothing of the engine
    ("system", "bundled", "moves", "options", "shm", "board"),
    # configuration and files
    ("config", "nnue", "probe", "timeman", "wdl", "tt", "sharedtt", "pheromone", "perft"),
    # the evaluation: the board, never the search
    ("classical", "network", "trace", "spectral", "static_eval"),
    # move ordering and the search
    ("movepick", "search"),
    # helpers, one move's thinking, the facade, the protocol, the command line
    ("smp", "turn", "engine", "uci", "cli"),
)
#: The modules that may import python-chess: the edges where a library is the right
#: tool (the game record, FEN and move parsing, root moves, books and tablebases, the
#: eval command, the research terms' graphs), each for the reason given.
CHESS_EDGES = {
    "board": "sets a board up from a python-chess one and writes one back; keys a game's position",
    "moves": "move codes to and from chess.Move",
    "classical": "attack and square tables built from python-chess's at import, never per node",
    "perft": "the root position and its moves",
    "pheromone": "the trails of a game's moves",
    "probe": "Polyglot books and Syzygy tables",
    "timeman": "the go command's limits (searchmoves, the side's clock)",
    "wdl": "the game position's material",
    "trace": "the eval command's position",
    "spectral": "the attack graph of a python-chess board (a research term)",
    "static_eval": "the score of a python-chess board for eval and the tools",
    "search": "the root moves in and the lines out, and a tablebase probe",
    "smp": "the board and root moves sent to the helpers",
    "turn": "one move's position, legal moves and choice",
    "engine": "the facade's position and moves",
    "uci": "parsing FENs and moves",
    "cli": "the command line's positions",
}


def _imports(path: Path) -> list[tuple[str, int]]:
    """(imported module, line) for every import in *path*, wherever it stands (a
    function's lazy import and a type checker's import count: they are dependencies
    of the design all the same). Modules of the package are named without the
    ``blitzaco.`` prefix; ``blitzaco.tools`` as ``tools``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "blitzaco":
                names = [alias.name for alias in node.names]
            else:
                names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "blitzaco" and len(parts) > 1:
                found.append((parts[1], node.lineno))
            elif parts[0] in ("chess", "torch"):
                found.append((parts[0], node.lineno))
            elif parts[0] in {path.stem for path in SOURCE.glob("*.py")} | {"tools"} and name == parts[0]:
                found.append((parts[0], node.lineno))  # from blitzaco import x
    return found


def _graph() -> dict[str, list[tuple[str, int]]]:
    return {path.stem: _imports(path) for path in sorted(SOURCE.glob("*.py")) if path.stem not in ("__init__",
                                                                                                     "__main__")}


def _violations(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    """Every import against the layering, named: 'search imports engine (line 12)'."""
    rank = {name: (floor, index) for floor, names in enumerate(FLOORS) for index, name in enumerate(names)}
    problems = []
    for module, imported in graph.items():
        if module not in rank:
            problems.append(f"{module} is on no floor of the house (add it to FLOORS and docs/architecture.md)")
            continue
        for target, line in imported:
            where = f"{module} imports {target} (line {line})"
            if target == "chess":
                if module not in CHESS_EDGES:
                    problems.append(f"{where}: python-chess below the edges")
            elif target == "torch":
                problems.append(f"{where}: the engine never imports torch")
            elif target == "tools":
                if module != "cli":
                    problems.append(f"{where}: the engine never imports a tool")
            elif target in rank and rank[target] >= rank[module]:
                problems.append(f"{where}: a module above it or beside it on its floor")
    return problems


def _layers(graph: dict[str, list[tuple[str, int]]]) -> int:
    """The height of the import graph (the longest chain of imports, in modules);
    raises ValueError on a circle."""
    edges = {module: {target for target, _ in imported if target in graph} - {module}
             for module, imported in graph.items()}
    height: dict[str, int] = {}
    visiting: set[str] = set()

    def measure(module: str) -> int:
        if module in height:
            return height[module]
        if module in visiting:
            raise ValueError(f"an import circle through {module}")
        visiting.add(module)
        height[module] = 1 + max((measure(target) for target in edges[module]), default=0)
        visiting.discard(module)
        return height[module]

    return max(measure(module) for module in edges)


def test_every_import_follows_the_layering() -> None:
    """The board imports nothing of the engine; the evaluation imports the board but
    not the search; the search imports neither the facade nor the protocol; only the
    named edges import python-chess; the engine never imports a tool or torch."""
    assert _violations(_graph()) == []


def test_the_import_graph_has_no_circle_and_few_layers() -> None:
    """11 layers at the one-stack change (14, with a circle evaluate <-> position,
    before it); 12 since ``system`` (the operating systems' differences) became the
    leaf under ``bundled``: one floor deeper, no module more tangled."""
    assert _layers(_graph()) <= 12


def test_the_layering_check_names_a_wrong_import() -> None:
    """The checks can fail: an import of the engine by the board, of python-chess by
    the move picker, and a circle are each found and named."""
    graph = _graph()
    graph["board"] = graph["board"] + [("engine", 7)]
    graph["movepick"] = graph["movepick"] + [("chess", 3)]
    assert _violations(graph) == [
        "board imports engine (line 7): a module above it or beside it on its floor",
        "movepick imports chess (line 3): python-chess below the edges",
    ]
    graph["board"] = graph["board"] + [("search", 9)]
    graph["tt"] = graph["tt"] + [("board", 1)]
    graph["board"].append(("tt", 2))
    with pytest.raises(ValueError, match="circle"):
        _layers(graph)


# ---------------------------------------------------------------------------- no import circle anywhere in the package


def _module_name(path: Path) -> str:
    """The dotted name of the package's module at *path* (a package by its __init__)."""
    parts = ("blitzaco", *path.relative_to(SOURCE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_graph() -> dict[str, set[str]]:
    """Every module of the package, tools included, and the modules of the package it
    imports, by dotted name; every import counts, at the top, in a function or for the
    type checker (``from blitzaco.tools.tune import labels`` is an import of
    ``labels``; ``from blitzaco.tools.tune.labels import x`` one of ``labels``)."""
    paths = {_module_name(path): path for path in SOURCE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package, or one above it per extra dot
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in paths else base for alias in node.names]
            else:
                continue
            for name in names:
                while name and name not in paths:  # a name inside a module: the module
                    name = name.rpartition(".")[0]
                if name and name != module:
                    targets.add(name)
        graph[module] = targets
    return graph


def _circles(graph: dict[str, set[str]]) -> list[str]:
    """Each import circle found (the first one through each module met), written
    'a -> b -> a'; empty when the imports form no circle."""
    found: list[str] = []
    done: set[str] = set()
    path: list[str] = []

    def visit(module: str) -> None:
        path.append(module)
        for target in sorted(graph[module]):
            if target in path:
                found.append(" -> ".join([*path[path.index(target):], target]))
            elif target not in done:
                visit(target)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        if module not in done:
            visit(module)
    return found


def test_no_module_of_the_package_is_in_an_import_circle() -> None:
    """Not the engine's floors alone: the tools too (the last circle, the label games'
    labels <-> the Stockfish network's check, was broken by the Stockfish pipe's own
    module, tools/tune/stockfish_pipe.py, which both import)."""
    graph = _package_graph()
    assert {"blitzaco.uci", "blitzaco.tools.tune.labels", "blitzaco.tools.tune.stockfish_net"} <= set(graph)
    assert _circles(graph) == []
    assert "blitzaco.tools.tune.stockfish_pipe" in graph["blitzaco.tools.tune.stockfish_net"]


def test_the_circle_check_names_a_circle_among_the_tools() -> None:
    """The check can fail: a planted lazy import back from the network to the labels,
    as it stood before, is named with the way round."""
    graph = _package_graph()
    graph["blitzaco.tools.tune.stockfish_net"].add("blitzaco.tools.tune.labels")
    assert _circles(graph) == [
        "blitzaco.tools.tune.labels -> blitzaco.tools.tune.stockfish_net -> blitzaco.tools.tune.labels"
    ]
