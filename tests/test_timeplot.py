"""scripts/plot_time.py's library on small hand-written match PGNs: seconds per move
by the player's own move number, the summary (means, lowest clock, forfeits, phase
shares) and the plot."""

from __future__ import annotations

from pathlib import Path

import pytest

from blitzaco.tools.timeplot import plot, read_games, seconds_by_move, summarise, table

# Two games between "fast" and "slow", as the match runner writes them: book moves
# without a time, then "score/depth seconds [%clk left]". In round 2 "fast" loses on
# time (the runner does not write the move that overstepped).
TWO_GAMES = """\
[Event "BlitzACO match"]
[Round "1"]
[White "fast"]
[Black "slow"]
[Result "1-0"]
[TimeControl "10+0.1"]
[Termination "adjudication: resign"]
[PlyCount "4"]

1. e4 { book } 1... e5 { book } 2. Nf3 { +0.10/5 1.00s [%clk 0:00:09.100] }
2... Nc6 { -0.10/5 2.00s [%clk 0:00:08.100] } 3. Bc4 { +0.20/5 0.50s [%clk 0:00:08.700] }
3... Nf6 { -0.20/5 3.00s [%clk 0:00:05.200] } 1-0

[Event "BlitzACO match"]
[Round "2"]
[White "slow"]
[Black "fast"]
[Result "1-0"]
[TimeControl "10+0.1"]
[Termination "time forfeit"]
[PlyCount "5"]

1. d4 { +0.10/5 4.00s [%clk 0:00:06.100] } 1... d5 { -0.10/5 1.50s [%clk 0:00:08.600] }
2. c4 { +0.10/5 2.00s [%clk 0:00:04.200] } 2... e6 { -0.10/5 7.90s [%clk 0:00:00.800] }
3. Nc3 { +0.20/6 0.25s [%clk 0:00:04.050] } 1-0

"""


def _write(tmp_path: Path, text: str, name: str = "games.pgn") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _shuffle_game(moves_each: int, seconds: float, round_number: int = 1) -> str:
    """A game of *moves_each* moves a side (knights out and back), every move
    *seconds* long, "a" White and "b" Black, drawn."""
    white, black = ("Nf3", "Ng1"), ("Nf6", "Ng8")
    text = []
    for number in range(1, moves_each + 1):
        note = f"{{ +0.00/5 {seconds:.2f}s [%clk 0:00:05] }}"
        text.append(f"{number}. {white[(number - 1) % 2]} {note} {number}... {black[(number - 1) % 2]} {note}")
    headers = (f'[Round "{round_number}"]\n[White "a"]\n[Black "b"]\n[Result "1/2-1/2"]\n[Termination "repetition"]\n'
               f'[PlyCount "{2 * moves_each}"]\n\n')
    return headers + "\n".join(text) + " 1/2-1/2\n\n"


def test_seconds_are_collected_by_the_players_own_move_number(tmp_path: Path) -> None:
    records, left_out = read_games([_write(tmp_path, TWO_GAMES)])
    assert left_out == 0
    assert seconds_by_move(records) == {
        "fast": {1: [1.0, 1.5], 2: [0.5, 7.9]},  # book moves not counted, Black's moves too
        "slow": {1: [2.0, 4.0], 2: [3.0, 2.0], 3: [0.25]},
    }


def test_summary_gives_means_lowest_clock_and_forfeits(tmp_path: Path) -> None:
    path = _write(tmp_path, TWO_GAMES)
    summaries = summarise(read_games([path])[0])
    fast, slow = summaries["fast"], summaries["slow"]
    assert (fast.games, fast.moves, slow.games, slow.moves) == (2, 4, 2, 5)
    assert fast.mean == pytest.approx(10.9 / 4)
    assert fast.median == pytest.approx(1.25)
    assert slow.mean == pytest.approx(11.25 / 5)
    assert slow.median == pytest.approx(2.0)
    assert fast.lowest_clock == pytest.approx(0.8)
    assert fast.lowest_clock_game == f"{path} round 2"
    assert slow.lowest_clock == pytest.approx(4.05)
    assert slow.lowest_clock_game == f"{path} round 2"
    assert fast.final_clock == pytest.approx((8.7 + 0.8) / 2)  # each game's last clock, averaged
    assert slow.final_clock == pytest.approx((5.2 + 4.05) / 2)
    assert (fast.forfeits, slow.forfeits) == (1, 0)  # the loser by Result, not the winner
    assert "0.800s" in table(summaries.values())
    assert "4.75s" in table(summaries.values())


def test_a_crash_with_timeout_in_its_name_is_no_time_forfeit(tmp_path: Path) -> None:
    crashed = TWO_GAMES.replace('[Termination "time forfeit"]', '[Termination "crash (TimeoutError)"]')
    summaries = summarise(read_games([_write(tmp_path, crashed)])[0])
    assert summaries["fast"].forfeits == 0


def test_a_game_still_being_written_is_left_out(tmp_path: Path) -> None:
    # The file ends in the middle of round 2: fewer moves than its PlyCount.
    cut = TWO_GAMES[: TWO_GAMES.index("2. c4")] + "\n"
    records, left_out = read_games([_write(tmp_path, cut)])
    assert left_out == 1
    assert {record.game for record in records} == {f"{tmp_path / 'games.pgn'} round 1"}


def test_phase_shares_split_at_moves_10_30_and_60(tmp_path: Path) -> None:
    records, _ = read_games([_write(tmp_path, _shuffle_game(70, 1.0))])
    shares = summarise(records)["a"].shares
    assert shares == pytest.approx((10 / 70, 20 / 70, 30 / 70, 10 / 70))
    assert summarise(records)["b"].lowest_clock == pytest.approx(5.0)


def test_plot_writes_a_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    games = _shuffle_game(40, 0.5, 1) + _shuffle_game(30, 1.0, 2)
    records, _ = read_games([_write(tmp_path, games)])
    out = tmp_path / "time.png"
    plot(records, out, min_games=2)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match="3 games"):
        plot(records, tmp_path / "none.png", min_games=3)
