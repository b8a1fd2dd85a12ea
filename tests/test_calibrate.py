"""The level calibration's logic (blitzaco.tools.calibrate): who plays whom, the Elo
a match gives, the chain below Stockfish's lowest level, and the fitted table. The
matches themselves are replaced by scripted results (the match runner has its own
tests; real calibration games take hours)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import pytest

from blitzaco.tools import calibrate
from blitzaco.tools.calibrate import (
    Measurement,
    Plan,
    fitted_table,
    format_rows,
    measure,
    pgn_results,
    stockfish_elo,
    verify,
)
from blitzaco.tools.match.runner import EngineSpec, MatchLimit, MatchReport, Opening


def _plan() -> Plan:
    return Plan(
        engine=EngineSpec("blitzaco", ("blitzaco",), (("OwnBook", False), ("Skill Level", 20))),
        stockfish=EngineSpec("stockfish", ("stockfish",), (("Threads", 1),)),
        openings=[Opening("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")],
        limit=MatchLimit(base=10, increment=0.1),
        games=10,
    )


def _scripted(results: dict[str, tuple[int, int, int]], played: list[tuple[EngineSpec, EngineSpec]]) -> Any:
    """A play_match that returns *results* by the second engine's name."""

    def play_match(first: EngineSpec, second: EngineSpec, *args: Any, **kwargs: Any) -> MatchReport:
        played.append((first, second))
        wins, draws, losses = results[second.name]
        return MatchReport(first.name, second.name, "10+0.1", wins=wins, draws=draws, losses=losses)

    return play_match


def test_stockfish_setting_is_rounded_and_clamped() -> None:
    assert stockfish_elo(1234) == 1350
    assert stockfish_elo(1687) == 1690
    assert stockfish_elo(3100) == 2850


def test_a_match_gives_the_opponents_elo_plus_the_difference() -> None:
    even = Measurement("level 20", "Stockfish UCI_Elo 1700", 1700.0, 0.0, 40, 20, 40, 20)
    assert even.score == 0.5 and even.elo == pytest.approx(1700.0)
    assert 0 < even.error < 100
    weaker = Measurement("level 20", "Stockfish UCI_Elo 1700", 1700.0, 0.0, 20, 20, 60, 20)
    assert weaker.score == 0.3 and weaker.elo == pytest.approx(1700.0 - 147.2, abs=0.1)
    chained = Measurement("level 8", "level 12", 1300.0, 50.0, 20, 20, 60, 8)
    assert chained.error == pytest.approx(math.hypot(weaker.difference()[1], 50.0))


def test_a_clean_sweep_is_only_a_bound() -> None:
    swept = Measurement("level 0", "level 4", 1000.0, 30.0, 0, 0, 10, 0)
    assert swept.bound and math.isinf(swept.error)
    assert swept.elo == pytest.approx(1000.0 - 400 * math.log10(19))  # taken at half a point
    assert "≤ " in format_rows([swept])[-1] and "(bound)" in format_rows([swept])[-1]


def test_levels_above_stockfish_lowest_play_stockfish_and_the_rest_the_chain(monkeypatch: Any) -> None:
    played: list[tuple[EngineSpec, EngineSpec]] = []
    # Level 20 scores 50 % against its guess, so the guesses below it are not shifted.
    results = {"sf1800": (40, 20, 40), "sf1400": (50, 0, 50), "level12": (30, 0, 70), "level8": (50, 0, 50)}
    monkeypatch.setattr(calibrate, "play_match", _scripted(results, played))
    table = [800 + 50 * level for level in range(21)]  # level 20: 1800, 12: 1400, 8: 1200
    done = measure(_plan(), [4, 20, 12, 8], table)
    assert [m.level for m in done] == [20, 12, 8, 4]  # highest first
    subjects = [dict(first.options) for first, _ in played]
    assert [s["Skill Level"] for s in subjects] == [20, 12, 8, 4]
    assert all(s["UCI_LimitStrength"] is False and s["OwnBook"] is False for s in subjects)
    opponents = [second for _, second in played]
    assert dict(opponents[0].options)["UCI_Elo"] == 1800 and dict(opponents[0].options)["UCI_LimitStrength"]
    assert opponents[0].name == "sf1800" and opponents[1].name == "sf1400"
    assert opponents[2].name == "level12" and dict(opponents[2].options)["Skill Level"] == 12
    assert opponents[3].name == "level8"
    assert done[1].opponent_elo == 1400.0
    assert done[2].opponent_elo == pytest.approx(done[1].elo)  # the chain: level 8 against level 12
    assert done[3].opponent_elo == pytest.approx(done[2].elo)
    assert done[3].error > done[2].error > done[1].error  # errors add along the chain
    assert done[3].elo == pytest.approx(done[2].elo)  # 50 % against level 8


def test_each_guess_is_shifted_by_the_node_limited_level_measured_before_it(monkeypatch: Any) -> None:
    played: list[tuple[EngineSpec, EngineSpec]] = []
    # Level 20 (entry 1800) is guessed at 1700 and measured at 1700 + 191 (75 %); full
    # strength plays on the clock, so level 16 keeps its entry as its guess (1600).
    # Level 16 measures 1600 + 191, 191 above its entry, so level 12 is guessed 191
    # above its own: 1400 -> 1591, Stockfish at 1590.
    results = {"sf1700": (75, 0, 25), "sf1600": (75, 0, 25), "sf1590": (50, 0, 50)}
    monkeypatch.setattr(calibrate, "play_match", _scripted(results, played))
    table = [800 + 50 * level for level in range(21)]  # level 20: 1800, 16: 1600, 12: 1400
    done = measure(_plan(), [20, 16, 12], table, first_guess=1700)
    assert [second.name for _, second in played] == ["sf1700", "sf1600", "sf1590"]
    assert done[0].elo == pytest.approx(1700 + 190.8, abs=0.1)
    assert done[1].elo == pytest.approx(1600 + 190.8, abs=0.1)
    assert done[2].elo == pytest.approx(1590)
    # A level guessed below Stockfish's lowest setting plays the chain, however its entry reads.
    played.clear()
    results = {"sf1800": (2, 0, 98), "sf1600": (2, 0, 98), "level16": (50, 0, 50)}
    monkeypatch.setattr(calibrate, "play_match", _scripted(results, played))
    done = measure(_plan(), [20, 16, 12], table)
    assert [second.name for _, second in played] == ["sf1800", "sf1600", "level16"]


def test_the_fitted_table_interpolates_keeps_the_old_steps_outside_and_never_falls() -> None:
    old = [800 + 50 * level for level in range(21)]

    def at(level: int, elo: float) -> Measurement:  # a measurement giving exactly *elo*
        return Measurement(f"level {level}", "x", elo, 0.0, 50, 0, 50, level)

    table = fitted_table([at(20, 1700.0), at(10, 1200.0), at(5, 1250.0)], old)
    assert len(table) == 21
    assert table[20] == 1700 and table[10] == 1250  # measured 1200, raised to level 5's 1250
    assert table[15] == 1450  # halfway between levels 10 and 20
    assert table[4] == 1250 - 50  # below the lowest measured: the old step
    assert table[5] == 1250 and all(table[i] >= table[i - 1] for i in range(1, 21))  # 6..10 raised to 1250
    assert table[7] == 1250
    assert fitted_table([], old) == tuple(old)


def test_verify_plays_the_same_uci_elo_on_both_sides(monkeypatch: Any) -> None:
    played: list[tuple[EngineSpec, EngineSpec]] = []
    monkeypatch.setattr(calibrate, "play_match", _scripted({"sf1400": (45, 10, 45), "sf1600": (20, 10, 70)}, played))
    done = verify(_plan(), [1400, 1600])
    for (first, second), elo in zip(played, (1400, 1600), strict=True):
        assert dict(first.options)["UCI_LimitStrength"] is True and dict(first.options)["UCI_Elo"] == elo
        assert dict(second.options)["UCI_Elo"] == elo
    assert done[0].score == 0.5 and done[1].score == 0.25
    rows = format_rows(done)
    assert rows[2].startswith("| UCI_Elo 1400 | Stockfish UCI_Elo 1400 | 100 | 45-45-10 | 50.0 % |")


def test_the_engines_keep_their_own_limit_environment_and_folder(monkeypatch: Any) -> None:
    # The tool renames the engines and sets their strength options; the rest of what
    # the user gave (a limit of its own, env., dir=) reaches the match as it was.
    played: list[tuple[EngineSpec, EngineSpec]] = []
    monkeypatch.setattr(calibrate, "play_match", _scripted({"sf1400": (45, 10, 45)}, played))
    engine = EngineSpec.parse("name=blitzaco cmd=blitzaco option.OwnBook=false env.A=b dir=/work tc=20+0.2")
    verify(dataclasses.replace(_plan(), engine=engine), [1400])
    (first, second), = played
    assert first.name == "elo1400" and first.limit == MatchLimit(base=20.0, increment=0.2)
    assert first.env == (("A", "b"),) and first.cwd == "/work" and first.command == ("blitzaco",)
    assert dict(first.options) == {"OwnBook": False, "UCI_LimitStrength": True, "UCI_Elo": 1400}
    assert second.limit is None and second.command == ("stockfish",)


def _pgn(path: Path, games: list[tuple[str, str, str]]) -> None:
    path.write_text("".join(f'[White "{w}"]\n[Black "{b}"]\n[Result "{r}"]\n\n{r}\n\n' for w, b, r in games))


def test_pgn_results_count_for_the_named_player(tmp_path: Path) -> None:
    path = tmp_path / "m.pgn"
    _pgn(
        path,
        [
            ("a", "b", "1-0"),
            ("b", "a", "1-0"),
            ("a", "b", "1/2-1/2"),
            ("b", "a", "0-1"),
            ("a", "b", "*"),
            ("c", "d", "1/2-1/2"),
        ],
    )
    assert pgn_results(path, "a") == (2, 1, 1)
    assert pgn_results(path, "b") == (1, 1, 2)  # unfinished games and other players' games do not count


def test_a_match_finished_in_the_pgn_folder_is_read_back_not_played(monkeypatch: Any, tmp_path: Path) -> None:
    """A calibration spread over sittings: the finished match (level 20) is read
    from its file and the chain goes on from it; an interrupted one (level 12) is
    set aside and played again."""
    played: list[tuple[EngineSpec, EngineSpec]] = []
    monkeypatch.setattr(calibrate, "play_match", _scripted({"sf1800": (1, 1, 1), "sf1400": (5, 0, 5)}, played))
    plan = dataclasses.replace(_plan(), pgn_folder=tmp_path)
    _pgn(tmp_path / "level20-vs-sf1800.pgn", [("level20", "sf1800", "1-0"), ("sf1800", "level20", "1-0")] * 5)
    _pgn(tmp_path / "level12-vs-sf1400.pgn", [("level12", "sf1400", "1-0")] * 3)
    table = [800 + 50 * level for level in range(21)]
    done = measure(plan, [20, 12], table)
    assert [second.name for _, second in played] == ["sf1400"]  # level 20 was not played again
    assert (done[0].wins, done[0].draws, done[0].losses) == (5, 0, 5)
    assert (done[1].wins, done[1].draws, done[1].losses) == (5, 0, 5)  # the new match's result
    assert (tmp_path / "level12-vs-sf1400.partial1.pgn").is_file()
