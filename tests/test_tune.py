"""The weight tuner: genome and spec, the position set against the engine's own
evaluation, both optimisers (seeded, resumable, their output files), the games
fitness on this machine and on a local Ray instance, and adopting tuned weights."""

from __future__ import annotations

import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest

torch = pytest.importorskip("torch")

from blitzaco.board import Board  # noqa: E402
from blitzaco.classical import Classical  # noqa: E402
from blitzaco.config import Config, ConfigError, EvalConfig, config_from_dict, dump_toml  # noqa: E402
from blitzaco.tools.tune.adopt import adopt, shipped_config_path  # noqa: E402
from blitzaco.tools.tune.fitness import LINEAR_PATHS, GameFitness, PositionFitness  # noqa: E402
from blitzaco.tools.tune.optimise import anneal, genetic, texel  # noqa: E402
from blitzaco.tools.tune.positions import PositionSet, extract, extract_labels, selfplay, tuning_openings  # noqa: E402
from blitzaco.tools.tune.spec import (  # noqa: E402
    AnnealSettings,
    GameSettings,
    GaSettings,
    Genome,
    TexelSettings,
    default_spec_path,
    load_spec,
)

ROOT = Path(__file__).resolve().parent.parent
# Bounds that hold the shipped values (the shipped spec's), so that decoding the
# shipped genes gives the shipped config back.
SMALL = {
    "eval.pawns.isolated": (-60.0, 10.0), "eval.pieces.mobility_knight": (-100.0, 100.0), "eval.tempo": (0.0, 40.0),
}


def white_score(config: EvalConfig, board: chess.Board) -> int:
    """The engine's classical evaluation of *board* with the weights *config* (the
    search's evaluator on its own board), White's view."""
    classical = Classical(config)
    own = Board.from_chess(board)
    classical.reset(own)
    score = int(classical.evaluate(own))
    return score if board.turn else -score


# ------------------------------------------------------------------- the genome


def test_genome_encodes_and_decodes_the_config() -> None:
    genome = Genome(SMALL)
    assert len(genome) == 2 + 9 * 2 + 2
    values = genome.encode()
    shipped = Config().eval
    assert values[:2] == list(map(float, shipped.pawns.isolated)) and values[-2:] == list(map(float, shipped.tempo))
    assert genome.decode(values) == Config()
    values[0], values[-1] = -20.4, 999.0
    tuned = genome.decode(values)
    assert tuned.eval.pawns.isolated == (-20, shipped.pawns.isolated[1])  # rounded: the config holds integers
    assert tuned.eval.tempo == (shipped.tempo[0], 40)  # clamped to the gene's bounds
    features = [gene.feature for gene in genome.genes[:3]]
    assert features == ["pawns.isolated", "pawns.isolated", "pieces.mobility_knight[0]"]
    assert [gene.phase for gene in genome.genes[:2]] == [0, 1]
    pst = Genome({"eval.pst.knight_eg": (-50, 50), "eval.spectral.entropy": (-200, 200)})
    assert len(pst) == 65 and pst.genes[0].phase == 1 and not pst.genes[-1].integer


@pytest.mark.parametrize("bounds", [{"eval.nothing": (0, 1)}, {"eval.pawns": (0, 1)}, {"eval.classical": (0, 1)},
                                    {"eval.tempo": (5, 1)}])
def test_genome_refuses_what_it_cannot_tune(bounds: dict) -> None:
    with pytest.raises(ConfigError):
        Genome(bounds)


def test_spec_loading(tmp_path: Path) -> None:
    spec = load_spec(default_spec_path())
    assert len(spec.genome()) > 150 and spec.ga.population > 1
    scalars = load_spec(default_spec_path().with_name("scalar_spec.toml"))
    assert len(scalars.genome()) == 52 and set(scalars.bounds) < set(spec.bounds)
    bad = tmp_path / "bad.toml"
    for text, key in (('[ga]\npopulaton = 3\n', "ga.populaton"), ('[genome]\n"eval.tempo" = 3\n', "eval.tempo"),
                      ('[gaa]\n', "gaa"), ('[ga]\npopulation = "many"\n', "ga.population")):
        bad.write_text(text)
        with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
            load_spec(bad)


# ------------------------------------------------------------------ the positions


@pytest.fixture(scope="module")
def positions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tune")
    report = selfplay(folder / "games.pgn", 6, nodes=150)
    assert report.games == 6
    count = extract([folder / "games.pgn"], folder / "positions.npz")
    assert count > 50
    return folder / "positions.npz"


def test_selfplay_games_are_all_different(positions: Path) -> None:
    """Two identical engines at fixed nodes replay a game when the colours swap: each
    game has its own opening, so no game is stored twice."""
    with open(positions.parent / "games.pgn", encoding="utf-8") as handle:
        games = []
        while (game := chess.pgn.read_game(handle)) is not None:
            games.append(tuple(game.mainline_moves()))
    assert len(games) == 6
    assert len(set(games)) == 6


def test_tuning_openings_differ_and_are_playable() -> None:
    openings = tuning_openings(20, seed=3)
    assert len({opening.moves for opening in openings}) == 20
    assert all(not opening.board().is_game_over() for opening in openings)
    assert tuning_openings(20, seed=3) == openings


def test_position_set_rebuilds_the_engine_evaluation(positions: Path) -> None:
    """The tuner's torch evaluation at the base weights is the engine's evaluation
    (up to the engine's integer rounding), and moving a gene moves it as the
    engine's would."""
    data = PositionSet.load(positions)
    genome = load_spec(default_spec_path()).genome()
    fitness = PositionFitness(data, genome, k=1.0)
    evals = fitness.evals(fitness.theta0.unsqueeze(0))[:, 0]
    for row in range(0, len(data), 7):
        board = chess.Board(str(data.fen[row]))
        white = white_score(Config().eval, board)
        # The engine rounds twice (the scaled endgame score, then the phase blend).
        assert abs(float(evals[row]) - white) < 2.0, board.fen()
        assert data.result[row] in (0.0, 0.5, 1.0)
    changed = genome.encode()
    index = [gene.name for gene in genome.genes].index("eval.pieces.threat_by_pawn.mg")
    changed[index] += 40
    config = genome.decode(changed).eval
    moved = fitness.evals(torch.tensor([changed]))[:, 0]
    differ = 0
    for row in range(0, len(data), 7):
        board = chess.Board(str(data.fen[row]))
        white = white_score(config, board)
        assert abs(float(moved[row]) - white) < 2.0, board.fen()
        differ += white != white_score(Config().eval, board)
    assert differ > 0, "the moved gene moved no score"


def test_position_fitness_refuses_nonlinear_genes_and_other_weights(positions: Path) -> None:
    data = PositionSet.load(positions)
    with pytest.raises(ValueError, match="linearly"):
        PositionFitness(data, Genome({"eval.king.attack_weight": (0, 40)}))
    other = config_from_dict({"eval": {"pawns": {"doubled": [-30, -30]}}})
    with pytest.raises(ValueError, match="traced with other evaluation weights"):
        PositionFitness(data, Genome(SMALL, other))
    # Settings outside the evaluation do not matter to the trace.
    PositionFitness(data, Genome(SMALL, config_from_dict({"pheromone": {"enabled": False}})))


def test_held_out_share_is_a_random_sample_of_the_games(positions: Path, tmp_path: Path) -> None:
    """Two files of games with opposite results (two matches under different
    conditions): the held-out last share holds games of both, and the same seed
    gives the same set."""
    games = (positions.parent / "games.pgn").read_text().strip().split("\n\n[Event")
    games = [g if g.startswith("[Event") else "[Event" + g for g in games]
    files = []
    for name, result in (("white.pgn", "1-0"), ("black.pgn", "0-1")):
        text = "\n\n".join(re.sub(r'\[Result "[^"]*"\]', f'[Result "{result}"]', g) for g in games * 4)
        (tmp_path / name).write_text(text + "\n")
        files.append(tmp_path / name)
    counts = [extract(files, tmp_path / f"set{i}.npz", seed=seed) for i, seed in enumerate((1, 1, 2))]
    assert counts[0] == counts[1] == counts[2] > 0
    sets = [PositionSet.load(tmp_path / f"set{i}.npz") for i in range(3)]
    _, last = sets[0].split(0.25)
    assert set(last.result.tolist()) == {0.0, 1.0}
    assert list(sets[0].fen) == list(sets[1].fen) and list(sets[0].fen) != list(sets[2].fen)


def test_split_and_l2_penalty(positions: Path) -> None:
    data = PositionSet.load(positions)
    first, last = data.split(0.25)
    assert len(first) + len(last) == len(data) and len(last) == round(len(data) * 0.25)
    assert list(last.fen) == list(data.fen[len(first):])
    genome = Genome(SMALL)
    whole = PositionFitness(data, genome, k=1.0)
    parts = [PositionFitness(part, genome, k=1.0) for part in (first, last)]
    base = whole.theta0.unsqueeze(0)
    combined = sum(float(p.error(base)[0]) * p.count for p in parts) / len(data)
    assert combined == pytest.approx(float(whole.error(base)[0]), rel=1e-5)
    penalised = PositionFitness(data, genome, k=1.0, l2=0.5)
    moved = base.clone()
    moved[0, 0] += 35.0  # half the range of pawns.isolated's gene
    plain = float(whole(moved)[0])
    assert float(penalised(moved)[0]) == pytest.approx(plain - 0.5 * 0.25 / len(genome), rel=1e-5)
    assert float(penalised(base)[0]) == pytest.approx(float(whole(base)[0]))


def test_sigmoid_scale_is_fitted(positions: Path) -> None:
    fitness = PositionFitness(PositionSet.load(positions), Genome(SMALL))
    base = fitness.theta0.unsqueeze(0)
    best = float(fitness.error(base)[0])
    assert 0.05 <= fitness.k <= 10.0
    for k in (max(fitness.k * 0.7, 0.05), min(fitness.k * 1.3, 10.0)):  # the search's range
        assert float(fitness.error(base, k)[0]) >= best * (1 - 1e-6)  # float32's rounding, not a worse fit


# ------------------------------------------------------------------ the optimisers


def _read_log(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_genetic_algorithm_is_seeded_resumable_and_writes_its_files(positions: Path, tmp_path: Path) -> None:
    fitness = PositionFitness(PositionSet.load(positions), Genome(SMALL))
    settings = GaSettings(population=12, generations=6, seed=4)
    straight = genetic(fitness, fitness.genome, settings, tmp_path / "straight", progress=False)
    assert straight.best_fitness >= straight.base_fitness
    # Stopped after three generations, then resumed: the same run.
    genetic(fitness, fitness.genome, GaSettings(population=12, generations=3, seed=4), tmp_path / "resumed",
            progress=False)
    resumed = genetic(fitness, fitness.genome, settings, tmp_path / "resumed", resume=True, progress=False)
    assert resumed.best == straight.best and resumed.best_fitness == straight.best_fitness
    last = _read_log(tmp_path / "straight" / "log.csv")[-1]
    assert _read_log(tmp_path / "resumed" / "log.csv")[-1]["best"] == last["best"]
    assert len(_read_log(tmp_path / "resumed" / "log.csv")) == 6
    again = genetic(fitness, fitness.genome, settings, tmp_path / "again", progress=False)
    assert again.best == straight.best
    out = tmp_path / "straight"
    assert (out / "fitness.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    tuned = config_from_dict(__import__("tomllib").loads((out / "tuned.toml").read_text()))
    assert tuned == fitness.genome.decode(straight.best)


def test_a_planted_checkpoint_cannot_run_code(positions: Path, tmp_path: Path) -> None:
    """--resume reads the checkpoint as tensors and plain values only: a pickle that
    would run code when loaded is refused, and the code never runs."""
    fitness = PositionFitness(PositionSet.load(positions), Genome(SMALL))
    out = tmp_path / "run"
    out.mkdir()
    marker = tmp_path / "ran"

    class Planted:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            return (marker.write_text, ("pwned",))

    torch.save({"genes": [gene.name for gene in fitness.genome.genes], "x": Planted()}, out / "checkpoint.pt")
    with pytest.raises(Exception, match="(?i)weights_only|unpickl|unsupported"):
        genetic(fitness, fitness.genome, GaSettings(population=12, generations=2, seed=4), out, resume=True,
                progress=False)
    assert not marker.exists()
    assert not list(out.glob("*.tmp"))


def test_simulated_annealing_improves_and_resumes(positions: Path, tmp_path: Path) -> None:
    fitness = PositionFitness(PositionSet.load(positions), Genome(SMALL))
    settings = AnnealSettings(steps=300, t_start=1e-4, t_end=1e-8, seed=2)
    straight = anneal(fitness, fitness.genome, settings, tmp_path / "a", progress=False)
    assert straight.best_fitness > straight.base_fitness
    anneal(fitness, fitness.genome, AnnealSettings(steps=150, t_start=1e-4, t_end=1e-8, seed=2), tmp_path / "b",
           progress=False)
    # A resumed run continues the schedule of its own settings: the same steps.
    resumed = anneal(fitness, fitness.genome, settings, tmp_path / "b", resume=True, progress=False)
    assert len(_read_log(tmp_path / "b" / "log.csv")) == len(_read_log(tmp_path / "a" / "log.csv"))
    assert resumed.best_fitness >= resumed.base_fitness

    # Stopped after its checkpoint at step 150 (the fitness fails at step 180) and
    # resumed with the same settings: exactly the run straight through.
    class Stopped(Exception):
        pass

    def failing(population: torch.Tensor, step: int) -> torch.Tensor:
        if step == 180:
            raise Stopped
        return fitness(population, step)

    with pytest.raises(Stopped):
        anneal(failing, fitness.genome, settings, tmp_path / "c", progress=False)  # type: ignore[arg-type]
    assert [row["step"] for row in _read_log(tmp_path / "c" / "log.csv")] == ["50", "100", "150"]
    again = anneal(fitness, fitness.genome, settings, tmp_path / "c", resume=True, progress=False)
    assert again.best == straight.best and again.best_fitness == straight.best_fitness

    def without_seconds(path: Path) -> list[dict[str, str]]:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in _read_log(path / "log.csv")]

    assert without_seconds(tmp_path / "c") == without_seconds(tmp_path / "a")


# ---------------------------------------------------------------------- the games


def _small_games_fitness(**kwargs: object) -> GameFitness:
    genome = Genome({"eval.pieces.bishop_pair": (0.0, 100.0)})
    return GameFitness(genome, GameSettings(nodes=150, pairs=1, workers=2), **kwargs)  # type: ignore[arg-type]


def test_games_fitness_plays_each_candidate_against_the_base() -> None:
    fitness = _small_games_fitness()
    scores = fitness(torch.tensor([[60.0, 90.0], [0.0, 0.0]]), 0)
    assert scores.shape == (2,) and all(0.0 <= float(s) <= 1.0 for s in scores)
    assert fitness.games == 4 and fitness.evaluations == 2
    assert fitness.openings(0) == fitness.openings(0) and fitness.openings(0) != fitness.openings(1)


def test_games_fitness_on_a_local_ray_instance() -> None:
    """A Ray head started here (and only this one stopped afterwards): the
    candidates' games are played by Ray's worker processes."""
    pytest.importorskip("ray")
    from raycluster import ray_cluster

    with ray_cluster(nodes=1, cpus=2) as address:
        fitness = _small_games_fitness(ray_address=address)
        scores = fitness(torch.tensor([[60.0, 90.0], [0.0, 0.0]]), 0)
        fitness.close()
    assert scores.shape == (2,) and fitness.games == 4
    assert fitness.workers and all(not where.endswith(f":{os.getpid()}") for where in fitness.workers)


def test_games_fitness_ray_addresses_as_the_other_tools_read_them() -> None:
    """``auto`` starts a local Ray instance of ``workers`` cores, as the labels'
    and the SPSA's ``--ray auto`` do; ``none`` plays in local processes."""
    pytest.importorskip("ray")
    assert _small_games_fitness(ray_address="none")._ray is None
    fitness = _small_games_fitness(ray_address="auto")
    try:
        assert fitness._ray.cluster_resources().get("CPU") == 2
        scores = fitness(torch.tensor([[60.0, 90.0]]), 0)
    finally:
        fitness.close()
    assert scores.shape == (1,) and fitness.games == 2


# ------------------------------------------------------------------------- adopt


def test_adopted_weights_become_the_defaults(tmp_path: Path) -> None:
    """adopt writes the defaults file (a data file, no code): a process started on
    it has the tuned weights as its defaults; adopting the defaults changes nothing."""
    tuned = config_from_dict({
        "eval": {"pawns": {"isolated": [-14, -21], "passed": [[0, 0], [5, 11], [7, 17], [15, 31], [31, 56], [56, 96],
                                                                [91, 151], [0, 0]]},
                 "pst": {"knight_mg": [i - 32 for i in range(64)]}, "king": {"attack_weight": [9, 8, 13, 21]},
                 "spectral": {"entropy": -77.5}},
        "search": {"futility_margin": 120},
    })
    # A copy of the checkout (the package, and the defaults at its top) adopted into.
    assert shipped_config_path() == ROOT / "config.toml"  # the checkout's one source of the defaults
    shutil.copytree(ROOT / "src" / "blitzaco", tmp_path / "src" / "blitzaco",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    defaults = tmp_path / "config.toml"
    shutil.copy(ROOT / "config.toml", defaults)
    assert adopt(tuned, defaults) == 6
    code = "from blitzaco.config import Config, dump_toml; print(dump_toml(Config()), end='')"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(tmp_path / "src")}).stdout
    assert out == dump_toml(tuned)
    shipped = shipped_config_path().read_text()
    assert adopt(Config(), defaults) == 0
    assert defaults.read_text() == shipped


def test_tune_adopt_writes_the_top_level_config_of_its_checkout(tmp_path: Path) -> None:
    """scripts/tune.py adopt, run from a checkout, rewrites that checkout's top-level
    config.toml (the one source of the defaults), and nothing in the package."""
    for folder in ("src", "scripts"):
        shutil.copytree(ROOT / folder, tmp_path / folder,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.egg-info"))
    shutil.copy(ROOT / "config.toml", tmp_path / "config.toml")
    tuned = tmp_path / "tuned.toml"
    tuned.write_text("[search]\nfutility_margin = 123\n")
    done = subprocess.run([sys.executable, str(tmp_path / "scripts" / "tune.py"), "adopt", str(tuned)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(tmp_path / "src")})
    assert done.returncode == 0, done.stderr
    assert str(tmp_path / "config.toml") in done.stdout
    assert "futility_margin = 123\n" in (tmp_path / "config.toml").read_text()
    assert not (tmp_path / "src" / "blitzaco" / "config.toml").exists()


def test_tune_script_runs_end_to_end(positions: Path, tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text('[genome]\n"eval.pawns.isolated" = [-60, 10]\n"eval.tempo" = [0, 40]\n[ga]\npopulation = 6\n')
    script = ROOT / "scripts" / "tune.py"
    result = subprocess.run(
        [sys.executable, str(script), "ga", "--data", str(positions), "--spec", str(spec), "--generations", "2",
         "--out", str(tmp_path / "run"), "--quiet"], capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "candidates" in result.stdout and (tmp_path / "run" / "tuned.toml").is_file()
    shipped = (ROOT / "config.toml").read_text()
    assert shipped == dump_toml(Config())  # the run did not touch the shipped file
    missing = subprocess.run([sys.executable, str(script), "ga", "--out", str(tmp_path / "x")],
                             capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and "--data" in missing.stderr


# ------------------------------------------------------------- Stockfish labels


def test_label_records_round_trip() -> None:
    from blitzaco.tools.tune.labels import decode, encode

    for fen in (
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        "8/8/4k3/8/8/3K4/8/7R b - - 0 1",
    ):
        board = chess.Board(fen)
        record = decode(encode(board, -123, 0.5))
        assert record.board.board_fen() == board.board_fen() and record.board.turn == board.turn
        assert record.board.clean_castling_rights() == board.clean_castling_rights()
        assert record.board.has_legal_en_passant() == board.has_legal_en_passant()
        assert (record.score, record.result) == (-123, 0.5)


@pytest.mark.skipif(__import__("blitzaco.tools.tune.labels", fromlist=["x"]).find_stockfish() is None,
                    reason="Stockfish labels the positions")
def test_labelled_positions_are_quiet_seeded_and_resumable(tmp_path: Path) -> None:
    """A tiny run of the label command: quiet positions only (not in check, no
    winning capture), scores and results in range; the same seed gives the same file,
    and a run continued to more positions extends it."""
    from blitzaco.tools.exchange import see_ge
    from blitzaco.tools.tune.labels import generate, read_labels

    first = tmp_path / "a.bin"
    figures = generate(first, 30, seed=3, nodes=300, workers=1, progress=False)
    assert figures["positions"] >= 30
    records = list(read_labels(first))
    assert len(records) == figures["total"]
    for record in records:
        board = record.board
        assert board.is_valid() and not board.is_check()
        assert not any(see_ge(board, move, 1) for move in board.generate_legal_captures() if not move.promotion)
        assert abs(record.score) < 1500 and record.result in (0.0, 0.5, 1.0)
    again = tmp_path / "b.bin"
    generate(again, 30, seed=3, nodes=300, workers=1, progress=False)
    assert again.read_bytes() == first.read_bytes()
    more = generate(first, figures["total"] + 20, seed=3, nodes=300, workers=1, progress=False)
    extended = first.read_bytes()
    assert extended.startswith(again.read_bytes()) and more["total"] >= figures["total"] + 20



@pytest.mark.skipif(__import__("blitzaco.tools.tune.labels", fromlist=["x"]).find_stockfish() is None,
                    reason="Stockfish labels the positions")
def test_static_labels_are_stockfishs_evaluation_seeded_and_resumable(tmp_path: Path) -> None:
    """The static kind: quiet positions of low-node games (some moves random, some
    games Chess960), each labelled by Stockfish's ``eval`` (asked again here, one
    position at a time, it says the same); the same seed gives the same file, in one
    run or continued with another number of workers; a file is not continued with
    other settings; random moves are refused for search labels."""
    from blitzaco.tools.exchange import see_ge
    from blitzaco.tools.tune.labels import Stockfish, find_stockfish, generate, read_labels

    settings = {"seed": 11, "nodes": 100, "label": "static", "random_moves": 0.2, "chess960": 0.5, "children": 2,
                "progress": False}
    first = tmp_path / "a.bin"
    figures = generate(first, 400, workers=2, **settings)  # type: ignore[arg-type]
    records = list(read_labels(first))
    assert len(records) == figures["total"] >= 400
    for record in records:
        board = record.board
        assert board.is_valid() and not board.is_check() and record.result in (0.0, 0.5, 1.0, None)
        assert not any(see_ge(board, move, 1) for move in board.generate_legal_captures() if not move.promotion)
    off_line = sum(record.result is None for record in records)
    assert 0 < off_line < len(records), "children of the game's positions, without a result, beside them"
    starts = {record.board.board_fen()[:8] for record in records}
    assert len(starts) > 1, "some games start from Chess960 positions"
    binary = find_stockfish()
    assert binary is not None
    engine = Stockfish(binary)
    try:
        for record in records[:: max(1, len(records) // 25)]:
            assert engine.static_eval(record.board) == record.score
    finally:
        engine.quit()
    half = tmp_path / "b.bin"
    generate(half, 150, workers=1, **settings)  # type: ignore[arg-type]
    generate(half, 400, workers=2, **settings)  # type: ignore[arg-type]
    assert half.read_bytes() == first.read_bytes()
    with pytest.raises(ValueError, match="was made with"):
        generate(half, 500, workers=1, **{**settings, "random_moves": 0.1})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="static labels"):
        generate(tmp_path / "c.bin", 10, seed=12, nodes=100, random_moves=0.1, progress=False)


def test_a_label_without_a_game_result_stands_for_its_score_alone(tmp_path: Path) -> None:
    """A record off the game's line (result byte NO_RESULT) reads back without a
    result; the trainer's arrays, check-eval's and the Texel set's targets then take
    its score's own expectation in its place, so that its target is the score's
    whatever the weight of the result."""
    import numpy as np

    from blitzaco.tools.tune.labels import MAGIC, TARGET_SCALE, decode, encode, known_result, target
    from blitzaco.tools.tune.nn import load_arrays

    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 3")
    assert decode(encode(board, -40, None)).result is None and decode(encode(board, -40, 1.0)).result == 1.0
    path = tmp_path / "mixed.bin"
    path.write_bytes(MAGIC + encode(board, -40, None) + encode(board, -40, 1.0))
    arrays = load_arrays(path)
    implied = 1 / (1 + np.exp(40 / TARGET_SCALE))
    assert arrays.result[0] == pytest.approx(implied) and arrays.result[1] == 0.0  # Black to move: White won
    for lam in (0.0, 0.5, 1.0):
        assert target(-40.0, arrays.result[0], lam) == pytest.approx(implied, abs=1e-6)
    assert known_result(-40.0, None) == pytest.approx(implied) and known_result(-40.0, 0.5) == 0.5


@pytest.mark.skipif(__import__("blitzaco.tools.tune.labels", fromlist=["x"]).find_stockfish() is None,
                    reason="Stockfish labels the positions")
def test_a_label_run_out_of_time_stops_and_continues_where_it_stopped(tmp_path: Path) -> None:
    """``--max-minutes``: a run whose time is spent writes no game it has not
    finished, and the same seed continued later makes the file a run without the
    limit makes."""
    import json

    from blitzaco.tools.tune.labels import MAGIC, generate

    cut = tmp_path / "cut.bin"
    figures = generate(cut, 10_000, seed=5, nodes=200, workers=1, progress=False, max_seconds=1e-6)
    assert figures["positions"] == 0 and cut.read_bytes() == MAGIC
    assert json.loads(cut.with_name("cut.bin.json").read_text())["games"] == 0
    generate(cut, 20, seed=5, nodes=200, workers=1, progress=False)
    whole = tmp_path / "whole.bin"
    generate(whole, 20, seed=5, nodes=200, workers=1, progress=False)
    assert cut.read_bytes() == whole.read_bytes() and len(whole.read_bytes()) > len(MAGIC)


@pytest.mark.skipif(__import__("blitzaco.tools.tune.labels", fromlist=["x"]).stockfish_name() != "Stockfish 15.1",
                    reason="the recorded games are Stockfish 15.1's")
def test_the_pipe_driver_plays_the_games_python_chess_played(tmp_path: Path) -> None:
    """labels_s3_n300.bin was written (seed 3, 300 nodes, 148 positions of 3 games)
    when python-chess's engine layer drove Stockfish; the label worker's own UCI
    driver must make the same file, byte for byte: the same position commands, the
    same score read, the same game ends. It was played on python-chess's board
    (generator 1), which the label runs of that time regenerate with."""
    from blitzaco.tools.tune.labels import generate

    out = tmp_path / "again.bin"
    generate(out, 120, seed=3, nodes=300, workers=1, progress=False, generator=1)
    assert out.read_bytes() == (ROOT / "tests" / "data" / "labels_s3_n300.bin").read_bytes()


def test_the_engine_board_generator_makes_its_recorded_file(tmp_path: Path) -> None:
    """labels_s3_n300_g2.bin was written by generator 2 (the games on the engine's
    board; seed 3, 300 nodes, static labels with children, Chess960 starts and
    random moves): the same seed makes it again, byte for byte, and a run continued
    from the file's state keeps its generator (a file of generator 1 refuses 2)."""
    from blitzaco.tools.tune.labels import generate

    recorded = ROOT / "tests" / "data" / "labels_s3_n300_g2.bin"
    out = tmp_path / "again.bin"
    settings: dict[str, Any] = dict(seed=3, nodes=300, workers=1, progress=False, label="static",
                                    random_moves=0.1, chess960=0.5, children=2)
    generate(out, 100, **settings)
    assert json.loads(out.with_name("again.bin.json").read_text())["generator"] == 2
    generate(out, 400, **settings)  # continued
    assert out.read_bytes() == recorded.read_bytes()
    with pytest.raises(ValueError, match="generator 2"):
        generate(out, 500, generator=1, **settings)

def test_wdl_fit_recovers_a_known_model() -> None:
    """Observations drawn from a known model: the fit predicts them as well as the
    model that made them (log loss within 1 %), and far better than a flat guess."""
    from blitzaco.config import WdlConfig
    from blitzaco.tools.wdlfit import Observation, fit, log_loss
    from blitzaco.wdl import wdl

    truth = WdlConfig((0.0, 0.0, 40.0, 60.0), (0.0, 0.0, 30.0, 70.0))
    rng = __import__("random").Random(5)
    data = []
    for _ in range(6000):
        score, pieces = rng.randint(-600, 600), rng.randint(10, 78)
        win, draw, _ = wdl(score, pieces, truth)
        draw_at = rng.random() * 1000
        result = 1.0 if draw_at < win else 0.5 if draw_at < win + draw else 0.0
        data.append(Observation(score, pieces, result))
    fitted = fit(data)
    assert log_loss(data, fitted) <= log_loss(data, truth) * 1.01
    assert log_loss(data, fitted) < log_loss(data, WdlConfig((0.0, 0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 5000.0)))


def test_an_interrupted_adopt_leaves_the_defaults_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """adopt writes a temporary file and renames it: when the write cannot be
    completed (here the rename fails), the defaults file is still the old one, whole,
    and no temporary file is left behind."""
    copy = tmp_path / "config.toml"
    original = shipped_config_path().read_text()
    copy.write_text(original)
    tuned = config_from_dict({"search": {"futility_margin": 121}})

    def refuse(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="disk full"):
        adopt(tuned, copy)
    assert copy.read_text() == original
    assert sorted(path.name for path in tmp_path.iterdir()) == ["config.toml"]


# ------------------------------------------------- Texel on Stockfish's labels

LABEL_SAMPLE = ROOT / "tests" / "data" / "labels_sample.bin"


@pytest.fixture(scope="module")
def label_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("labels") / "labels.npz"
    assert extract_labels(LABEL_SAMPLE, out, lam=0.75, scale=361.0, limit=400) == 400
    return out


def test_label_set_holds_the_blended_target_and_the_engine_evaluation(label_set: Path) -> None:
    """Each position of a label file keeps its board and gets the trainer's target
    (lam * sigmoid(Stockfish / scale) + (1 - lam) * result, White's view); its
    trace rebuilds the engine's evaluation as a games set's does."""
    from blitzaco.tools.tune.labels import read_labels

    data = PositionSet.load(label_set)
    records = [record for _, record in zip(range(400), read_labels(LABEL_SAMPLE), strict=False)]
    assert len(data) == len(records) == 400
    fitness = PositionFitness(data, load_spec(default_spec_path()).genome(), k=1.0)
    evals = fitness.evals(fitness.theta0.unsqueeze(0))[:, 0]
    blends = set()
    for row, record in enumerate(records):
        assert str(data.fen[row]) == record.board.fen()
        white = record.score if record.board.turn else -record.score
        expected = 0.75 / (1 + 10 ** (-white / 361.0 / math.log(10))) + 0.25 * record.result
        assert abs(float(data.result[row]) - expected) < 1e-5
        blends.add(round(float(data.result[row]), 3))
        if row % 9 == 0:
            assert abs(float(evals[row]) - white_score(Config().eval, record.board)) < 2.0
    assert len(blends) > 100  # not just the three results


def test_dense_counts_are_the_sparse_ones(label_set: Path) -> None:
    data = PositionSet.load(label_set)
    # A midgame gene and an endgame gene share their feature: names may repeat.
    wanted = ["material.pawn", "pst.knight_mg[18]", "no.such.feature", "pieces.mobility_bishop[7]", "material.pawn"]
    matrix = data.dense(wanted)
    assert matrix.shape == (len(data), 5) and not matrix[:, 2].any()
    for column, name in enumerate(wanted):
        expected = [0.0] * len(data)
        if name in data.names:
            source = data.names.index(name)
            for row, col, value in zip(data.rows, data.cols, data.vals, strict=True):
                if col == source:
                    expected[row] = float(value)
        assert matrix[:, column].tolist() == expected
    assert matrix[:, 0].any() and matrix[:, 1].any()


def test_labels_spec_tunes_the_tables_linearly() -> None:
    spec = load_spec(Path(default_spec_path()).with_name("labels_spec.toml"))
    genome = spec.genome()
    assert len(genome) == 984
    assert sum(gene.path.startswith("eval.pst.") for gene in genome.genes) == 768
    assert all(gene.path.startswith(LINEAR_PATHS) for gene in genome.genes)
    assert spec.texel.steps > 0 and 0 < spec.positions.held_out < 1


def test_texel_descent_lowers_the_error_within_bounds_and_repeats(label_set: Path, tmp_path: Path) -> None:
    data, held_out = PositionSet.load(label_set).split(0.25)
    bounds = {**SMALL, "eval.material.knight": (240.0, 420.0), "eval.pst.pawn_mg": (-150.0, 150.0)}
    genome = Genome(bounds)
    fitness = PositionFitness(data, genome)
    settings = TexelSettings(steps=40, lr=0.02, log_every=5)
    first = texel(fitness, genome, settings, tmp_path / "a", progress=False)
    second = texel(fitness, genome, settings, tmp_path / "b", progress=False)
    # Nothing random (a tolerance only for the float sums' order across BLAS threads).
    assert max(abs(a - b) for a, b in zip(first.best, second.best, strict=True)) < 1e-3
    assert first.best_fitness > first.base_fitness
    assert all(gene.lo <= value <= gene.hi for gene, value in zip(genome.genes, first.best, strict=True))
    rows = _read_log(tmp_path / "a" / "log.csv")
    assert [int(row["step"]) for row in rows] == list(range(0, 41, 5))
    tuned = (tmp_path / "a" / "tuned.toml").read_text()
    assert genome.decode(first.best) == config_from_dict(__import__("tomllib").loads(tuned))
    # The fitted weights are scored on positions they never saw, by the cli; here:
    check = PositionFitness(held_out, genome, fitness.k)
    assert check.error(torch.tensor([first.best])).item() < 0.25


def test_texel_and_label_positions_through_the_script(label_set: Path, tmp_path: Path) -> None:
    script = ROOT / "scripts" / "tune.py"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300)

    made = run("positions", "--labels", str(LABEL_SAMPLE), "--limit", "120", "--out", str(tmp_path / "l.npz"))
    assert made.returncode == 0, made.stderr
    assert "120 quiet positions" in made.stdout and len(PositionSet.load(tmp_path / "l.npz")) == 120
    spec = tmp_path / "spec.toml"
    spec.write_text('[genome]\n"eval.pawns.isolated" = [-60, 10]\n"eval.tempo" = [0, 40]\n'
                    '[positions]\nheld_out = 0.2\n')
    tuned = run("texel", "--data", str(tmp_path / "l.npz"), "--spec", str(spec), "--steps", "5", "--quiet",
                "--out", str(tmp_path / "tx"))
    assert tuned.returncode == 0, tuned.stderr
    assert "held-out Texel error" in tuned.stdout and (tmp_path / "tx" / "tuned.toml").is_file()
    refused = run("texel", "--fitness", "games", "--out", str(tmp_path / "g"))
    assert refused.returncode == 2 and "positions fitness only" in refused.stderr
    neither = run("positions", "--out", str(tmp_path / "n.npz"))
    assert neither.returncode == 2 and "--labels" in neither.stderr


def test_label_files_are_counted_and_read_from_a_record_on() -> None:
    from blitzaco.tools.tune.labels import count_labels, read_labels, target

    records = list(read_labels(LABEL_SAMPLE))
    assert count_labels(LABEL_SAMPLE) == len(records) == 600
    tail = list(read_labels(LABEL_SAMPLE, 590))
    assert [(r.board.fen(), r.score, r.result) for r in tail] == [(r.board.fen(), r.score, r.result)
                                                                  for r in records[590:]]
    assert target(0, 0.5) == 0.5 and target(361.0, 1.0, lam=1.0) == pytest.approx(1 / (1 + math.exp(-1)))
    assert target(-10_000, 0.0) == pytest.approx(0.0, abs=1e-6)


def test_fit_wdl_prints_only_the_wdl_section(tmp_path: Path) -> None:
    """scripts/fit_wdl.py prints the [wdl] section to paste into config.toml: that
    section and nothing of the tables after it."""
    import tomllib

    games = []
    for number, (result, sign) in enumerate([("1-0", 1), ("0-1", -1), ("1/2-1/2", 0)] * 4):
        moves = "1. e4 { %+.2f/6 0.10s } 1... e5 { %+.2f/6 0.10s } 2. Nf3 { %+.2f/6 0.10s }" % (
            0.3 * sign + 0.01 * number, -0.3 * sign, 0.5 * sign)
        games.append(f'[Round "{number + 1}"]\n[White "a"]\n[Black "b"]\n[Result "{result}"]\n\n{moves} {result}\n')
    pgn = tmp_path / "games.pgn"
    pgn.write_text("\n".join(games))
    script = Path(__file__).parent.parent / "scripts" / "fit_wdl.py"
    out = subprocess.run(
        [sys.executable, str(script), str(pgn), "--check", str(pgn)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert "held out, 36 scored moves of 12 games" in out.stdout  # --check reads the other games
    section = out.stdout[out.stdout.index("[wdl]"):]
    assert set(tomllib.loads(section)) == {"wdl"} and set(tomllib.loads(section)["wdl"]) == {"a", "b"}
