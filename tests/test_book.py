"""Opening books: the database format, the Polyglot writer (byte-exact against
PolyGlot's make-book when it is installed), the shipped book, and book play."""

from __future__ import annotations

import random
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot
import pytest
from uci_driver import UciProcess

from blitzaco.config import BookConfig
from blitzaco.probe import Probe, bundled_book
from blitzaco.tools.book import book_bytes, build_book, database_entries, pgn_entries, read_database

ROOT = Path(__file__).parent.parent
POLYGLOT = shutil.which("polyglot") or ("/usr/games/polyglot" if Path("/usr/games/polyglot").exists() else None)


def _read(data: bytes) -> list[tuple[int, int, int, int]]:
    return [struct.unpack(">QHHI", data[i : i + 16]) for i in range(0, len(data), 16)]


def test_database_lines_malformed_ones_reported_with_line_numbers(tmp_path: Path) -> None:
    db = tmp_path / "db.txt"
    db.write_text(
        "# comment\n"
        "Italian | e4 e5 Nf3 Nc6 Bc4 | 10\n"
        "\n"
        "Bad move | e4 e5 Ke3 | 5\n"
        "No fields\n"
        "Bad weight | d4 d5 | heavy\n"
        "UCI moves | e2e4 c7c5 g1f3 | 4\n"
        "Castles | e4 e5 Nf3 Nc6 Bc4 Bc5 O-O | 2\n"
    )
    lines, problems = read_database(db)
    assert [line.name for line in lines] == ["Italian", "UCI moves", "Castles"]
    assert [problem.split(":")[1] for problem in problems] == ["4", "5", "6"]
    assert "move 3 'Ke3'" in problems[0]


def test_database_weights_add_up_and_python_chess_reads_the_book(tmp_path: Path) -> None:
    db = tmp_path / "db.txt"
    db.write_text(
        "A | e4 e5 Nf3 | 10\nB | e4 c5 | 5\nC | d4 | 3\nD | e4 e5 Nf3 Nc6 Bc4 Bc5 O-O | 2\n"
    )
    lines, _ = read_database(db)
    book = tmp_path / "book.bin"
    book.write_bytes(book_bytes(database_entries(lines)))
    with chess.polyglot.open_reader(book) as reader:
        start = {entry.move.uci(): entry.weight for entry in reader.find_all(chess.Board())}
        assert start == {"e2e4": 17, "d2d4": 3}
        board = chess.Board()
        for uci in "e2e4 e7e5 g1f3 b8c6 f1c4 f8c5".split():
            board.push_uci(uci)
        castling = [entry.move for entry in reader.find_all(board)]
        assert castling == [chess.Move.from_uci("e1g1")] and board.is_castling(castling[0])
    records = _read(book.read_bytes())
    assert [r[0] for r in records] == sorted(r[0] for r in records)


def _random_games(path: Path, count: int = 300, seed: int = 7) -> None:
    rng = random.Random(seed)
    with open(path, "w") as handle:
        for _ in range(count):
            board, game = chess.Board(), chess.pgn.Game()
            node: chess.pgn.GameNode = game
            for _ in range(rng.randint(4, 40)):
                moves = sorted(board.legal_moves, key=lambda m: m.uci())
                if not moves:
                    break
                move = moves[min(len(moves) - 1, int(rng.expovariate(1.0)))]  # many shared openings
                node = node.add_variation(move)
                board.push(move)
            game.headers["Result"] = rng.choice(["1-0", "0-1", "1/2-1/2", "1-0", "*"])
            print(game, file=handle, end="\n\n")


@pytest.mark.skipif(POLYGLOT is None, reason="PolyGlot (Debian package polyglot) is not installed")
@pytest.mark.parametrize("options", [[], ["-min-game", "1"], ["-min-game", "2", "-max-ply", "12"]])
def test_pgn_books_are_byte_identical_to_polyglot_make_book(tmp_path: Path, options: list[str]) -> None:
    pgn = tmp_path / "games.pgn"
    _random_games(pgn)
    theirs = tmp_path / "polyglot.bin"
    subprocess.run([POLYGLOT, "make-book", "-pgn", str(pgn), "-bin", str(theirs), *options], check=True,
                   capture_output=True)
    names = {"-min-game": "min_games", "-max-ply": "max_ply"}
    kwargs = {names[k]: int(v) for k, v in zip(options[::2], options[1::2], strict=True)}
    ours = book_bytes(pgn_entries([pgn], **kwargs))
    assert len(ours) > 16 * 100
    assert ours == theirs.read_bytes()


def test_pgn_weighting_by_results(tmp_path: Path) -> None:
    pgn = tmp_path / "g.pgn"
    pgn.write_text(
        '[Result "1-0"]\n\n1. e4 e5 1-0\n\n[Result "1/2-1/2"]\n\n1. e4 c5 1/2-1/2\n\n[Result "0-1"]\n\n1. d4 d5 0-1\n\n'
    )
    entries = {(entry.key, entry.move): entry.weight for entry in pgn_entries([pgn], min_games=1)}
    start = chess.polyglot.zobrist_hash(chess.Board())
    e4 = chess.E4 | chess.E2 << 6
    assert entries[(start, e4)] == 3  # a win (2) and a draw (1) for White
    assert (start, chess.D4 | chess.D2 << 6) not in entries  # lost every time: weight 0, dropped


def test_pgn_min_games_and_max_ply(tmp_path: Path) -> None:
    """PolyGlot's -min-game and -max-ply, without PolyGlot: a move is kept when
    played in at least min_games games, and only the first max_ply plies count."""
    pgn = tmp_path / "g.pgn"
    pgn.write_text('[Result "1/2-1/2"]\n\n1. e4 e5 2. Nf3 Nc6 1/2-1/2\n\n' * 3 + '[Result "1-0"]\n\n1. d4 d5 1-0\n\n')

    def moves(**kwargs: int) -> set[str]:
        return {_uci(entry.move) for entry in pgn_entries([pgn], **kwargs)}

    assert moves() == {"e2e4", "e7e5", "g1f3", "b8c6"}  # d4 (once) is below the default of 3 games
    assert moves(min_games=1) == {"e2e4", "e7e5", "g1f3", "b8c6", "d2d4"}  # d5 lost: weight 0, dropped
    assert moves(max_ply=2) == {"e2e4", "e7e5"}
    assert moves(min_games=4) == set()


def _uci(move: int) -> str:
    """A PolyGlot move word as from-square and to-square (no promotions here)."""
    return chess.square_name(move >> 6 & 63) + chess.square_name(move & 63)


def test_shipped_book_is_built_from_the_shipped_database() -> None:
    data, problems, count = build_book(ROOT / "assets" / "openings.txt")
    assert problems == []
    assert count > 300
    assert data == (ROOT / "assets" / "book.bin").read_bytes(), "rebuild with: python scripts/build_book.py"
    assert bundled_book() is not None


def test_build_book_script(tmp_path: Path) -> None:
    db = tmp_path / "db.txt"
    db.write_text("A | e4 e5 | 2\nbroken line\n")
    out = tmp_path / "b.bin"
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_book.py"), "--database", str(db), "--out",
                          str(out)], capture_output=True, text=True, check=True)
    assert "2 entries" in run.stdout
    assert "db.txt:2" in run.stderr
    assert len(out.read_bytes()) == 32


@pytest.mark.skipif(POLYGLOT is None, reason="PolyGlot (Debian package polyglot) is not installed")
def test_polyglot_reads_the_shipped_book() -> None:
    run = subprocess.run([POLYGLOT, "info-book", "-bin", str(ROOT / "assets" / "book.bin")], capture_output=True,
                         text=True, check=True)
    assert "Lines for white" in run.stdout and "error" not in run.stdout.lower()


# ------------------------------------------------------------------ playing from a book


def _book(tmp_path: Path, lines: str) -> str:
    db = tmp_path / "db.txt"
    db.write_text(lines)
    data, _, _ = build_book(db)
    path = tmp_path / "book.bin"
    path.write_bytes(data)
    return str(path)


def test_weighted_choice_replays_with_the_same_seed(tmp_path: Path) -> None:
    path = _book(tmp_path, "A | e4 | 10\nB | d4 | 10\nC | c4 | 10\nD | Nf3 | 10\n")

    def games(probe: Probe) -> list[list[chess.Move]]:
        probe.open_book(path)
        played = []
        for _ in range(3):
            probe.new_game()
            played.append([probe.book_move(chess.Board())[0].move for _ in range(12)])  # type: ignore[union-attr]
        return played

    first = games(Probe(BookConfig(seed=42)))
    assert first == games(Probe(BookConfig(seed=42)))  # a new run replays the same games
    assert len({tuple(game) for game in first}) == 3  # the games of a run differ
    assert len(set(first[0])) > 1
    assert games(Probe(BookConfig(seed=0))) != games(Probe(BookConfig(seed=0)))  # 0: a new seed every start


def test_best_rule_min_weight_and_max_ply(tmp_path: Path) -> None:
    path = _book(tmp_path, "A | e4 e5 Nf3 | 10\nB | d4 | 30\nC | c4 | 1\n")
    probe = Probe(BookConfig(selection="best"))
    probe.open_book(path)
    assert probe.book_move(chess.Board())[0].move == chess.Move.from_uci("d2d4")  # type: ignore[union-attr]
    probe.book_config = BookConfig(min_weight=20)
    board = chess.Board()
    board.push_uci("e2e4")
    assert probe.book_move(board)[0] is None  # e5 has weight 10 < 20
    probe.book_config = BookConfig(max_ply=1)
    assert probe.book_move(board)[0] is None  # ply 1 is beyond the book depth


def test_illegal_book_entries_are_never_played(tmp_path: Path) -> None:
    path = tmp_path / "bad.bin"
    key = chess.polyglot.zobrist_hash(chess.Board())
    illegal = chess.E5 | chess.E2 << 6  # e2e5
    path.write_bytes(struct.pack(">QHHI", key, illegal, 100, 0))
    probe = Probe()
    assert "loaded" in probe.open_book(str(path))
    assert probe.book_move(chess.Board()) == (None, None)


def test_engine_plays_the_bundled_book_by_default(uci: UciProcess) -> None:
    options = [line for line in uci.seen if line.startswith("option name OwnBook")]
    assert options == ["option name OwnBook type check default true"]
    uci.send("position startpos")
    uci.send("go wtime 10000 btime 10000")
    lines = uci.read_until("bestmove")
    assert any(line.startswith("info string book move") for line in lines)
    uci.send("go infinite")  # analysis never uses the book
    uci.read_until(lambda line: line.startswith("info depth"))
    uci.send("stop")
    assert not any("book move" in line for line in uci.read_until("bestmove"))
    uci.send("setoption name OwnBook value false")
    uci.send("go depth 2")
    assert not any("book move" in line for line in uci.read_until("bestmove"))


def test_a_source_checkout_finds_its_own_assets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a checkout with PYTHONPATH=src (no installed ``blitzaco.assets``), the
    engine still finds the checkout's book and pheromone memory, and nothing else;
    plain files are found without importlib.resources."""
    import importlib.resources

    import blitzaco.bundled as bundled

    asked: list[str] = []

    def not_installed(package: str) -> None:
        asked.append(package)
        raise ModuleNotFoundError(package)

    monkeypatch.setattr(importlib.resources, "files", not_installed)
    assert bundled.bundled_file("book.bin") == (ROOT / "assets" / "book.bin").resolve()
    assert bundled.bundled_file("pheromone.bin") == (ROOT / "assets" / "pheromone.bin").resolve()
    assert asked == []
    assert bundled.bundled_file("no-such-file.bin") is None
    assert asked == ["blitzaco.assets"]  # the last resort, for installs in a zip file


def test_an_installed_package_finds_the_assets_beside_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A wheel installs the assets as blitzaco/assets: those come first."""
    import blitzaco.bundled as bundled

    (tmp_path / "book.bin").write_bytes(b"")
    monkeypatch.setattr(bundled, "_PACKAGE_ASSETS", tmp_path)
    assert bundled.bundled_file("book.bin") == tmp_path / "book.bin"
    assert bundled.bundled_file("pheromone.bin") == (ROOT / "assets" / "pheromone.bin").resolve()
