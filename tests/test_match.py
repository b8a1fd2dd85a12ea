"""The match runner: statistics, real short games, faults, adjudication, PGN."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import chess.pgn
import pytest
from script_loader import load_script
from uci_driver import DATA

from blitzaco.tools.match.runner import (
    Adjudication,
    EngineSpec,
    MatchLimit,
    Opening,
    config_texts,
    load_openings,
    play_match,
    with_config_texts,
)
from blitzaco.tools.match.stats import (
    Penta,
    Sprt,
    elo_from_score,
    elo_interval,
    los,
    score_from_elo,
    trinomial_interval,
)

HERE = Path(__file__).parent
BLITZACO = f"cmd='{sys.executable} -m blitzaco'"
STOCKFISH = shutil.which("stockfish") or ("/usr/games/stockfish" if Path("/usr/games/stockfish").exists() else None)
OPENINGS = load_openings(DATA / "openings.epd")


def fake(mode: str) -> EngineSpec:
    return EngineSpec.parse(f"name={mode} cmd='{sys.executable} {HERE / 'fake_engine.py'} {mode}'")


# ---------------------------------------------------------------- statistics


def test_elo_and_score_are_inverse() -> None:
    assert elo_from_score(0.5) == 0
    assert elo_from_score(0.75) == pytest.approx(190.849, abs=1e-3)
    for elo in (-400, -35, 0, 12.5, 300):
        assert elo_from_score(score_from_elo(elo)) == pytest.approx(elo)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf


def test_los() -> None:
    assert los(0, 0) == 0.5
    assert los(10, 10) == 0.5
    assert los(60, 40) == pytest.approx(0.97725, abs=1e-4)  # z = 20 / sqrt(200) ~ 1.414... -> Phi(2)
    assert los(40, 60) == pytest.approx(1 - 0.97725, abs=1e-4)


def test_pentanomial_interval_by_hand() -> None:
    penta = Penta([10, 20, 40, 20, 10])  # symmetric: Elo 0
    elo, error = elo_interval(penta)
    assert elo == pytest.approx(0.0)
    # per-pair variance: (10*0.25 + 20*0.0625 + 20*0.0625 + 10*0.25) / 100 = 0.075
    half = 1.959964 * math.sqrt(0.075 / 100)
    assert error == pytest.approx((elo_from_score(0.5 + half) - elo_from_score(0.5 - half)) / 2, rel=1e-6)


def test_trinomial_interval() -> None:
    elo, error = trinomial_interval(30, 40, 30)
    assert elo == pytest.approx(0.0) and 30 < error < 60


def test_sprt_bounds_and_decisions() -> None:
    sprt = Sprt(0, 10, 0.05, 0.05)
    lower, upper = sprt.bounds()
    assert lower == pytest.approx(-2.944, abs=1e-3) and upper == pytest.approx(2.944, abs=1e-3)
    assert sprt.verdict(Penta([0, 5, 50, 100, 45])) == "H1"
    assert sprt.verdict(Penta([45, 100, 50, 5, 0])) == "H0"
    assert sprt.verdict(Penta([1, 2, 3, 2, 1])) is None
    # a handful of pairs never decides, however lopsided (their variance is no estimate)
    assert sprt.llr(Penta([0, 0, 0, 1, 0])) > upper and sprt.verdict(Penta([0, 0, 0, 1, 0])) is None
    assert sprt.verdict(Penta([0, 0, 0, 0, 19])) is None and sprt.verdict(Penta([0, 0, 0, 0, 20])) == "H1"
    # the LLR grows with evidence in favour of H1
    assert sprt.llr(Penta([0, 10, 20, 12, 0])) < sprt.llr(Penta([0, 10, 20, 30, 0]))


# ---------------------------------------------------------------- settings


def test_engine_spec_parsing() -> None:
    spec = EngineSpec.parse("name=x cmd='python -m blitzaco' option.Hash=16 option.OwnBook=true env.A=b dir=/tmp")
    assert spec.name == "x" and spec.command == ("python", "-m", "blitzaco")
    assert dict(spec.options) == {"Hash": 16, "OwnBook": True}
    assert dict(spec.env) == {"A": "b"} and spec.cwd == "/tmp"
    with pytest.raises(ValueError):
        EngineSpec.parse("name=x")
    with pytest.raises(ValueError):
        EngineSpec.parse("name=x cmd=y colour=blue")
    # An engine's own limit (time or node odds), cutechess-cli's keys.
    assert spec.limit is None
    assert EngineSpec.parse("cmd=y tc=20+0.2").limit == MatchLimit(base=20.0, increment=0.2)
    assert EngineSpec.parse("cmd=y nodes=500").limit == MatchLimit(nodes=500)
    assert EngineSpec.parse("cmd=y depth=6").limit == MatchLimit(depth=6)
    assert EngineSpec.parse("cmd=y st=0.5").limit == MatchLimit(movetime=0.5)
    for wrong in ("tc=nodes=5", "tc=fast", "nodes=5+1"):
        with pytest.raises(ValueError):
            EngineSpec.parse(f"cmd=y {wrong}")


def test_limit_parsing() -> None:
    assert MatchLimit.parse("10+0.1") == MatchLimit(base=10.0, increment=0.1)
    assert MatchLimit.parse("nodes=500") == MatchLimit(nodes=500)
    assert MatchLimit.parse("depth=3").describe() == "depth=3"


def test_openings_from_epd_and_pgn(tmp_path: Path) -> None:
    assert len(OPENINGS) == 250
    pgn = tmp_path / "o.pgn"
    pgn.write_text('[Event "x"]\n[Opening "Italian"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bc4 *\n\n[Event "y"]\n\n1. d4 d5 *\n')
    openings = load_openings(pgn)
    assert [o.label for o in openings] == ["Italian", ""]
    assert openings[0].board().fen() == "r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"
    assert len(openings[0].board().move_stack) == 5


# ---------------------------------------------------------------- real games


def test_short_match_between_two_engine_processes(tmp_path: Path) -> None:
    first = EngineSpec.parse(f"name=default {BLITZACO}")
    weak_config = tmp_path / "weak.toml"
    weak_config.write_text("[eval.material]\nqueen = [300, 300]\nrook = [200, 200]\n")
    second = EngineSpec.parse(f"name=weak {BLITZACO} option.ConfigFile={weak_config}")
    pgn = tmp_path / "games.pgn"
    lines: list[str] = []
    report = play_match(
        first, second, OPENINGS[:2], MatchLimit(nodes=400), 4, concurrency=2, pgn_path=pgn, progress=lines.append
    )
    assert report.games == 4 and report.penta.pairs == 2
    assert report.wins + report.draws + report.losses == 4
    assert sum(report.terminations.values()) == 4
    assert not report.faults
    assert len(lines) == 2 and lines[-1].startswith("[4] ")
    games = []
    with open(pgn) as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            games.append(game)
    assert len(games) == 4
    assert {games[0].headers["White"], games[0].headers["Black"]} == {"default", "weak"}
    assert games[0].headers["White"] == games[1].headers["Black"]
    for game in games:
        assert game.headers["Result"] in ("1-0", "0-1", "1/2-1/2")
        first_move = game.next()
        assert first_move is not None and "s" in first_move.comment  # "+0.12/3 0.05s"
        board = game.end().board()
        if game.headers["Termination"] == "checkmate":
            assert board.is_checkmate()


def test_clock_games_record_the_clock_in_the_pgn(tmp_path: Path) -> None:
    # A 1-second game beside other tests on two cores: a margin of 100 ms a move for
    # the scheduler's delays, as a user gives a loaded machine (Move Overhead).
    first = EngineSpec.parse(f"name=a {BLITZACO} 'option.Move Overhead=100'")
    second = EngineSpec.parse(f"name=b {BLITZACO} 'option.Move Overhead=100'")
    pgn = tmp_path / "clock.pgn"
    report = play_match(
        first, second, OPENINGS[:1], MatchLimit(base=1.0, increment=0.05), 2,
        adjudication=Adjudication(resign_score=600, resign_moves=3, draw_score=5, draw_moves=6, draw_after=20),
        pgn_path=pgn,
    )
    assert report.games == 2 and not report.faults
    game = chess.pgn.read_game(open(pgn))
    assert game is not None and game.next() is not None
    assert game.next().clock() is not None  # [%clk ...]
    assert game.headers["TimeControl"] == "1+0.05"
    # A second match to the same file appends: the first match's games stay.
    play_match(first, second, OPENINGS[:1], MatchLimit(nodes=200), 2, pgn_path=pgn)
    with open(pgn) as handle:
        games = []
        while (read := chess.pgn.read_game(handle)) is not None:
            games.append(read)
    assert len(games) == 4 and [g.headers["TimeControl"] for g in games[:2]] == ["1+0.05", "1+0.05"]


def _by_mover(game: chess.pgn.Game) -> list[tuple[str, chess.pgn.ChildNode]]:
    """Each move of *game* with the name of the engine that played it."""
    return [(game.headers["White" if node.parent.board().turn == chess.WHITE else "Black"], node)
            for node in game.mainline()]


def test_time_odds_give_each_side_its_own_clock(tmp_path: Path) -> None:
    # The first engine on 3 s + 0.5 s, the second on the match's 1 s + 0.05 s: each
    # side's clock starts and grows by its own control, and the PGN says both.
    first = EngineSpec.parse(f"name=slow cmd='{sys.executable} {HERE / 'fake_engine.py'} good' tc=3+0.5")
    pgn = tmp_path / "odds.pgn"
    report = play_match(first, fake("good"), OPENINGS[:1], MatchLimit(base=1.0, increment=0.05), 2, pgn_path=pgn)
    assert report.games == 2 and not report.faults
    assert report.limit == "slow 3+0.5, good 1+0.05"
    with open(pgn) as handle:
        games = [chess.pgn.read_game(handle), chess.pgn.read_game(handle)]
    for game in games:
        assert game is not None and "TimeControl" not in game.headers
        controls = {game.headers[colour]: game.headers[colour + "TimeControl"] for colour in ("White", "Black")}
        assert controls == {"slow": "3+0.5", "good": "1+0.05"}
        first_clocks: dict[str, float | None] = {}
        for name, node in _by_mover(game):
            first_clocks.setdefault(name, node.clock())
        slow, good = first_clocks["slow"], first_clocks["good"]
        assert slow is not None and good is not None and 3.0 < slow <= 3.5 and 0.5 < good <= 1.05


def test_node_odds_send_each_side_its_own_nodes(tmp_path: Path) -> None:
    # The fake engine reports the nodes its go asked for as its depth: 7 for the
    # engine with its own limit, the match's 3 for the other, move after move.
    first = EngineSpec.parse(f"name=more cmd='{sys.executable} {HERE / 'fake_engine.py'} nodes' nodes=7")
    second = EngineSpec.parse(f"name=less cmd='{sys.executable} {HERE / 'fake_engine.py'} nodes'")
    pgn = tmp_path / "nodes.pgn"
    report = play_match(first, second, OPENINGS[:1], MatchLimit(nodes=3), 2, pgn_path=pgn)
    assert report.games == 2 and report.limit == "more nodes=7, less nodes=3"
    game = chess.pgn.read_game(open(pgn))
    assert game is not None and game.headers["WhiteTimeControl"] == game.headers["BlackTimeControl"] == "-"
    depths: dict[str, set[str]] = {"more": set(), "less": set()}
    for name, node in _by_mover(game):
        depths[name].add(node.comment.split("/")[1].split()[0])
    assert depths == {"more": {"7"}, "less": {"3"}} and len(list(game.mainline())) > 10


def test_faults_are_counted_separately() -> None:
    report = play_match(fake("good"), fake("illegal"), OPENINGS[:1], MatchLimit(nodes=10), 2)
    assert report.wins == 2 and report.faults["illegal"]["illegal"] == 2
    report = play_match(fake("good"), fake("crash"), OPENINGS[:1], MatchLimit(nodes=10), 2)
    assert report.faults["crash"]["crash"] >= 1
    assert report.losses == 0
    report = play_match(fake("good"), fake("slow"), OPENINGS[:1], MatchLimit(base=0.5, increment=0.0), 2)
    assert report.faults["slow"]["time"] == 2 and report.wins == 2
    assert "time forfeit" in report.terminations


def test_an_engine_starts_off_the_clock() -> None:
    # Two seconds to start, then instant moves on a half-second clock: the start-up is
    # not a move's thinking (cutechess starts the engines before the game).
    report = play_match(fake("good"), fake("late"), OPENINGS[:1], MatchLimit(base=0.5, increment=0.1), 2)
    assert report.games == 2 and not report.faults


def test_resign_adjudication() -> None:
    queen_up = Opening("rnb1kbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 3")
    first = EngineSpec.parse(f"name=a {BLITZACO}")
    second = EngineSpec.parse(f"name=b {BLITZACO}")
    rules = Adjudication(resign_score=500, resign_moves=2)
    report = play_match(first, second, [queen_up], MatchLimit(depth=2), 2, adjudication=rules)
    assert report.terminations.get("adjudication: resign") == 2
    assert report.wins == 1 and report.losses == 1  # White wins both games


def test_sprt_stops_the_match_early() -> None:
    report = play_match(
        fake("good"), fake("illegal"), OPENINGS, MatchLimit(nodes=10), 200, sprt=Sprt(0, 10), concurrency=1
    )
    assert report.verdict == "H1" and report.games < 200


def _rounds(pgn: Path) -> list[int]:
    rounds = []
    with open(pgn, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            rounds.append(int(game.headers["Round"]))
    return rounds


def test_a_stopped_match_resumes_from_its_pgn(tmp_path: Path) -> None:
    """A match killed between the two games of its third pair (its second game cut
    off mid-write): --resume keeps the two whole pairs, drops the lone game and the
    fragment, and plays only the pairs it lacks."""
    whole = tmp_path / "whole.pgn"
    play_match(fake("good"), fake("illegal"), OPENINGS, MatchLimit(nodes=10), 6, pgn_path=whole)
    texts = whole.read_text().split("\n\n[Event")
    assert len(texts) == 6
    texts = [texts[0]] + ["[Event" + text for text in texts[1:]]
    pgn = tmp_path / "match.pgn"
    pgn.write_text("\n\n".join(texts[:5]) + "\n\n" + texts[5][:60])
    lines: list[str] = []
    report = play_match(fake("good"), fake("illegal"), OPENINGS, MatchLimit(nodes=10), 8, pgn_path=pgn,
                        progress=lines.append, resume=True)
    assert len(lines) == 2  # pairs 3 and 4, not 1 and 2
    assert (report.wins, report.draws, report.losses, report.penta.pairs) == (8, 0, 0, 4)
    assert report.faults["illegal"]["illegal"] == 8
    assert sorted(_rounds(pgn)) == list(range(1, 9))


def test_a_finished_match_resumed_plays_nothing_and_keeps_its_verdict(tmp_path: Path) -> None:
    pgn = tmp_path / "match.pgn"
    sprt = Sprt(0, 10)
    played = play_match(fake("good"), fake("illegal"), OPENINGS, MatchLimit(nodes=10), 200, sprt=sprt, pgn_path=pgn)
    assert played.verdict == "H1"
    # The same names, engines that cannot start: any game played would be a crash.
    gone = [EngineSpec.parse(f"name={name} cmd={tmp_path / 'none'}") for name in ("good", "illegal")]
    # Nor is a Ray started (no cluster listens there).
    again = play_match(gone[0], gone[1], OPENINGS, MatchLimit(nodes=10), 200, sprt=sprt, pgn_path=pgn, resume=True,
                       ray="127.0.0.1:9")
    assert again.verdict == "H1" and again.faults == played.faults  # read back, no crash among them
    assert (again.wins, again.games, again.penta.pairs) == (played.wins, played.games, played.penta.pairs)
    assert len(_rounds(pgn)) == played.games


def test_a_resumed_match_refuses_games_of_another_opening_or_colour(tmp_path: Path) -> None:
    pgn = tmp_path / "match.pgn"
    play_match(fake("good"), fake("illegal"), OPENINGS, MatchLimit(nodes=10), 2, pgn_path=pgn)
    with pytest.raises(ValueError, match="another opening"):
        play_match(fake("good"), fake("illegal"), OPENINGS[1:], MatchLimit(nodes=10), 2, pgn_path=pgn, resume=True)
    with pytest.raises(ValueError, match="pairing"):
        play_match(fake("illegal"), fake("good"), OPENINGS, MatchLimit(nodes=10), 2, pgn_path=pgn, resume=True)
    with pytest.raises(ValueError, match="pgn_path"):
        play_match(fake("good"), fake("illegal"), OPENINGS, MatchLimit(nodes=10), 2, resume=True)


def test_config_files_travel_as_text(tmp_path: Path) -> None:
    """What a Ray node is sent in place of the driver's ConfigFile path."""
    config = tmp_path / "mine.toml"
    config.write_text("[search]\nnull_move = false\n")
    spec = EngineSpec.parse(f"name=a cmd=x option.ConfigFile={config} option.Hash=16")
    texts = config_texts(spec, EngineSpec.parse("name=b cmd=y"))
    assert texts == {"a": "[search]\nnull_move = false\n"}
    there = tmp_path / "node"
    there.mkdir()
    moved = with_config_texts(spec, texts, str(there))
    assert moved.options == (("ConfigFile", str(there / "a.toml")), ("Hash", 16))
    assert (there / "a.toml").read_text() == texts["a"]
    assert with_config_texts(EngineSpec.parse("name=b cmd=y"), texts, str(there)).options == ()


def test_a_match_on_a_two_node_ray_cluster(tmp_path: Path) -> None:
    """--ray HOST:PORT: a real two-node cluster started here (one core each); each
    pair a Ray task on engines started for it, one pair on each node."""
    pytest.importorskip("ray")
    from raycluster import ray_cluster

    config = tmp_path / "a.toml"
    config.write_text("[search]\nnull_move = false\n")
    first = EngineSpec.parse(f"name=a {BLITZACO} option.ConfigFile={config}")
    second = EngineSpec.parse(f"name=b {BLITZACO}")
    pgn = tmp_path / "match.pgn"
    with ray_cluster(nodes=2, cpus=1) as address:
        report = play_match(first, second, OPENINGS, MatchLimit(nodes=200), 4, pgn_path=pgn, ray=address)
    assert report.games == 4 and not report.faults and len(report.ray_nodes) == 2
    assert sorted(_rounds(pgn)) == [1, 2, 3, 4]


def test_a_resumed_sprt_match_on_a_local_ray(tmp_path: Path) -> None:
    """--ray auto with --resume and an SPRT: the pairs already in the PGN count, the
    rest are Ray tasks until the SPRT decides (the tasks left are cancelled)."""
    pytest.importorskip("ray")
    from raycluster import ray_lock

    pgn = tmp_path / "match.pgn"
    play_match(fake("good"), fake("illegal"), OPENINGS, MatchLimit(nodes=10), 4, pgn_path=pgn)
    with ray_lock():
        report = play_match(fake("good"), fake("illegal"), OPENINGS, MatchLimit(nodes=10), 200, concurrency=2,
                            sprt=Sprt(0, 10), pgn_path=pgn, resume=True, ray="auto")
    assert report.verdict == "H1" and report.games < 200 and report.ray_nodes
    rounds = _rounds(pgn)
    assert len(rounds) == report.games and len(set(rounds)) == len(rounds) and {1, 2, 3, 4} <= set(rounds)


@pytest.mark.skipif(STOCKFISH is None, reason="Stockfish is not installed")
def test_games_against_stockfish() -> None:
    first = EngineSpec.parse(f"name=blitzaco {BLITZACO}")
    second = EngineSpec.parse(f"name=stockfish cmd={STOCKFISH} option.Threads=1 option.Hash=16")
    report = play_match(first, second, OPENINGS[:1], MatchLimit(nodes=2000), 2)
    assert report.games == 2 and not report.faults


def test_command_line_front_end(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    run = subprocess.run(
        [
            sys.executable, str(HERE.parent / "scripts" / "match.py"),
            "--engine", f"name=good cmd='{sys.executable} {HERE / 'fake_engine.py'} good'",
            "--engine", f"name=illegal cmd='{sys.executable} {HERE / 'fake_engine.py'} illegal'",
            "--openings", str(DATA / "openings.epd"), "--games", "4", "--nodes", "10", "--json", str(out), "--quiet",
        ],
        capture_output=True, text=True, check=True,
    )
    assert "Score of good vs illegal: 4 - 0 - 0" in run.stdout
    assert "illegal: 0 time forfeits, 4 illegal moves, 0 crashes" in run.stdout
    assert json.loads(out.read_text())["wins"] == 4


def test_command_line_resume_goes_on_and_needs_a_pgn(tmp_path: Path) -> None:
    pgn = tmp_path / "match.pgn"
    command = [sys.executable, str(HERE.parent / "scripts" / "match.py"),
               "--engine", f"name=good cmd='{sys.executable} {HERE / 'fake_engine.py'} good'",
               "--engine", f"name=illegal cmd='{sys.executable} {HERE / 'fake_engine.py'} illegal'",
               "--openings", str(DATA / "openings.epd"), "--nodes", "10", "--pgn", str(pgn), "--quiet", "--resume"]
    for games in ("2", "4", "4"):
        run = subprocess.run([*command, "--games", games], capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
    assert "Score of good vs illegal: 4 - 0 - 0" in run.stdout and sorted(_rounds(pgn)) == [1, 2, 3, 4]
    run = subprocess.run(
        [sys.executable, str(HERE.parent / "scripts" / "match.py"), "--engine", "name=a cmd=x", "--engine",
         "name=b cmd=y", "--openings", str(DATA / "openings.epd"), "--nodes", "10", "--resume"],
        capture_output=True, text=True, timeout=60,
    )
    assert run.returncode == 2 and "--resume needs --pgn" in run.stderr


def test_command_line_takes_engine_words_as_cutechess_does(tmp_path: Path) -> None:
    """--engine name=X cmd="..." as separate words (the documented example) and as
    one quoted string give the same engines."""
    good = f"cmd={sys.executable} {HERE / 'fake_engine.py'} good"
    run = subprocess.run(
        [
            sys.executable, str(HERE.parent / "scripts" / "match.py"),
            "--engine", "name=first", good,
            "--engine", f"name=second cmd='{sys.executable} {HERE / 'fake_engine.py'} illegal'",
            "--openings", str(DATA / "openings.epd"), "--games", "2", "--nodes", "10", "--quiet",
        ],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "Score of first vs second: 2 - 0 - 0" in run.stdout


def test_an_option_the_engine_refuses_leaves_no_process_behind() -> None:
    """An engine that rejects a setoption loses the game on a fault and is closed: no
    orphan process keeps the front end's output open (it used to hang here)."""
    run = subprocess.run(
        [
            sys.executable, str(HERE.parent / "scripts" / "match.py"),
            "--engine", f"name=first cmd='{sys.executable} {HERE / 'fake_engine.py'} good' option.Hash=16",
            "--engine", f"name=second cmd='{sys.executable} {HERE / 'fake_engine.py'} good'",
            "--openings", str(DATA / "openings.epd"), "--games", "2", "--nodes", "10", "--quiet",
        ],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "Score of first vs second: 0 - 2 - 0" in run.stdout
    assert "does not support option Hash" in run.stdout


def test_repetition_ends_the_game_only_when_it_has_happened() -> None:
    from blitzaco.tools.match.runner import _outcome

    board = chess.Board()
    for move in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"]:
        board.push_uci(move)
    # Black could repeat the start position a third time, but has not: play on.
    assert board.can_claim_threefold_repetition()
    assert _outcome(board) is None
    board.push_uci("f6g8")
    outcome = _outcome(board)
    assert outcome is not None and outcome.termination == chess.Termination.THREEFOLD_REPETITION
    fifty = chess.Board("8/8/8/3k4/8/8/8/R3K3 w - - 100 80")
    assert _outcome(fifty) == chess.Outcome(chess.Termination.FIFTY_MOVES, None)
    mated = chess.Board("R5k1/5ppp/8/8/8/8/8/6K1 b - - 100 80")
    assert _outcome(mated).termination == chess.Termination.CHECKMATE


def test_ablation_script_plays_switch_on_against_off(tmp_path: Path) -> None:
    """scripts/ablation.py flips the named switch both ways, also one that is off by
    default, and plays the two configurations against each other."""
    script = Path(__file__).resolve().parent.parent / "scripts" / "ablation.py"
    out = tmp_path / "abl"
    result = subprocess.run(
        [sys.executable, str(script), "--games", "2", "--tc", "nodes=200", "--concurrency", "1",
         "--out", str(out), "root_filter", "search.killers", "eval.spectral.enabled"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    from blitzaco.config import load_config

    assert load_config(out / "with_root_filter.toml").search.root_filter is True
    assert load_config(out / "without_root_filter.toml").search.root_filter is False
    assert load_config(out / "without_search.killers.toml").search.killers is False
    assert load_config(out / "with_eval.spectral.enabled.toml").eval.spectral.enabled is True
    assert load_config(out / "without_eval.spectral.enabled.toml").eval.spectral.enabled is False
    report = json.loads((out / "root_filter.json").read_text())
    assert report["games"] == 2
    rejected = subprocess.run([sys.executable, str(script), "--out", str(out), "eval.nonsense"],
                              capture_output=True, text=True, timeout=60)
    assert rejected.returncode != 0 and "eval.nonsense" in rejected.stderr



def test_ablation_sets_fields_and_options_on_both_sides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """scripts/ablation.py --set changes a config field on both sides (a switch that
    needs another one on), --option gives both engines a UCI option; the switch
    alone differs between them."""
    from blitzaco.config import load_config

    ablation = load_script("scripts/ablation.py")
    played: list[tuple] = []

    class Report:
        games, wins, draws, losses = 2, 1, 0, 1

        def summary(self) -> str:
            return "1-1-0"

        def as_dict(self) -> dict:
            return {"games": 2}

        def elo(self) -> tuple[float, float]:
            return 0.0, 0.0

    def fake_match(first: object, second: object, *args: object, **kwargs: object) -> Report:
        played.append((first, second, kwargs))
        return Report()

    monkeypatch.setattr(ablation, "play_match", fake_match)
    out = tmp_path / "abl"
    assert ablation.main(["--out", str(out), "--set", "late_move_pruning=true", "--set", "eval.nn.weight=0.5",
                          "--option", "OwnBook=false", "--engine", "blitzaco --flag", "--env", "PYTHONPATH=b/site",
                          "--sprt", "-10", "10", "--resume", "late_move_pruning_improving"]) == 0
    [(first, second, kwargs)] = played
    assert kwargs["sprt"] == Sprt(-10.0, 10.0, 0.05, 0.05) and kwargs["resume"] is True
    for spec, side, value in ((first, "with", True), (second, "without", False)):
        path = out / f"{side}_late_move_pruning_improving.toml"
        assert spec.command == ("blitzaco", "--flag")
        assert spec.options == (("ConfigFile", str(path)), ("OwnBook", "false"))
        assert spec.env == (("PYTHONPATH", "b/site"),)
        config = load_config(path)
        assert config.search.late_move_pruning_improving is value
        assert config.search.late_move_pruning is True and config.eval.nn.weight == 0.5
    with pytest.raises(SystemExit):
        ablation.main(["--out", str(out), "--option", "OwnBook", "killers"])


def test_adjudication_parses_the_command_line_forms() -> None:
    assert Adjudication.parse("1000:5", "10:8:40") == Adjudication(1000, 5, 10, 8, 40)
    assert Adjudication.parse(None, "10:8:40") == Adjudication(draw_score=10, draw_moves=8, draw_after=40)
    assert Adjudication.parse() == Adjudication()
    for resign, draw in (("1000", None), (None, "10:8"), ("a:b", None)):
        with pytest.raises(ValueError):
            Adjudication.parse(resign, draw)


def test_pgn_balance_counts_material_pawns_and_depth(tmp_path: Path) -> None:
    """scripts/pgn_balance.py: the named player's balance at the asked plies, from
    its own side, and the median depth of the moves' comments, over its games only."""
    # White wins a pawn (ply 3), Black wins it back (ply 6), White wins a knight (ply 11).
    moves = ["e4", "d5", "exd5", "Nf6", "d4", "Nxd5", "c4", "Nb4", "a3", "N8c6", "axb4"]
    pgn = ""
    for white, black, step in (("Hero", "Other", 1), ("X", "Y", 10)):
        game = chess.pgn.Game()
        game.headers["White"], game.headers["Black"] = white, black
        node: chess.pgn.GameNode = game
        for number, san in enumerate(moves, 1):
            node = node.add_variation(node.board().parse_san(san), comment=f"+0.10/{number * step} 0.01s")
        pgn += str(game) + "\n\n"
    path = tmp_path / "games.pgn"
    path.write_text(pgn, encoding="utf-8")
    script = Path(__file__).resolve().parent.parent / "scripts" / "pgn_balance.py"

    def run(player: str, *extra: str) -> list[str]:
        command = [sys.executable, str(script), str(path), "--player", player, "--plies", "3", "6", "11", "20", *extra]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout.splitlines()

    assert run("Hero") == [
        "1 games of Hero",
        "ply 3: 1 games, material +1.00, pawns +1.00",
        "ply 6: 1 games, material +0.00, pawns +0.00",
        "ply 11: 1 games, material +3.00, pawns +0.00",
        "median depth 6 over 11 moves",
    ]
    assert run("Other")[1:4] == [
        "ply 3: 1 games, material -1.00, pawns -1.00",
        "ply 6: 1 games, material +0.00, pawns +0.00",
        "ply 11: 1 games, material -3.00, pawns +0.00",
    ]
    # --moves: each side's first moves, the player's (Hero White: plies 1 and 3) apart.
    assert run("Hero", "--moves", "2")[-2:] == [
        "first 2 moves, Hero: median depth 2, mean 0.010 s a move over 2 moves",
        "first 2 moves, the opponents: median depth 3, mean 0.010 s a move over 2 moves",
    ]
    assert run("Other", "--moves", "2")[-2:] == [
        "first 2 moves, Other: median depth 3, mean 0.010 s a move over 2 moves",
        "first 2 moves, the opponents: median depth 2, mean 0.010 s a move over 2 moves",
    ]
