"""The engine's own board (:mod:`blitzaco.board`) held against python-chess, and its
evaluations (:mod:`blitzaco.classical`, :mod:`blitzaco.network`) held to their
properties.

:func:`cross_check` plays random games (standard and Chess960, favouring castling, en
passant and promotions) on both boards in step and, in every position, compares the
legal moves, the split into noisy and quiet moves, check, the key (against one
computed from the python-chess board, and Polyglot's in standard chess), insufficient
material, the position written back as FEN, the table-move test and whether each legal move
gives check (:meth:`Board.gives_check`, unmade); for every legal
move it makes the move, compares the key with one computed from scratch and the
reported changes (:attr:`Board.dirty`) with the change of the piece map, unmakes it
and compares the whole state with what it was. Any difference raises
:class:`Mismatch` naming the position.

:func:`eval_check` follows random games with the classical evaluation's incremental
sums (make, null move, unmake) and holds every position's score to one computed
afresh, its trace to the score (the terms add up to it) and to the colour mirror's
(equal and opposite, every feature count swapped). :func:`net_check` follows random
games with the network's lazy accumulator and holds its score to one reset on the
position and to :func:`reference_network_score`, the file format's definition
written out plainly. ``tests/data/eval_scores.csv`` holds the shipped evaluations'
scores of 200 positions beside these checks.

The tests run both on the installed modules, pure or compiled, so that both builds
are held to the same reference (``tests/test_board.py``, ``tests/test_classical.py``,
``tests/test_native.py``).
"""

from __future__ import annotations

import random

import chess
import chess.polyglot
from librt.vecs import vec
from mypy_extensions import i64

from blitzaco.board import CHECK_UNKNOWN, MAX_MOVES, Board, compute_key, legal_codes
from blitzaco.classical import TERM_NAMES, Classical
from blitzaco.config import EvalConfig
from blitzaco.network import NetEvaluator
from blitzaco.nnue import (
    FLAG_MIRRORED,
    FLAG_RESIDUAL,
    FLAG_SQUARED,
    INPUTS,
    NetworkWeights,
    classical_share,
    feature,
    flip,
    output_bucket,
)
from blitzaco.trace import classical_trace
from blitzaco.tt import EXACT, TranspositionTable

__all__ = [
    "Mismatch", "cross_check", "check_position", "eval_check", "check_evaluation", "code_of", "legal_codes",
    "piece_map", "snapshot", "net_check", "random_net", "reference_network_score", "table_check",
]


class Mismatch(AssertionError):
    """The two boards disagree."""


def code_of(move: chess.Move) -> int:
    """A python-chess move as the engine's move code."""
    return move.from_square | move.to_square << 6 | (move.promotion or 0) << 12


def _generated(board: Board, noisy: bool) -> list[int]:
    out = vec[i64]([0] * MAX_MOVES)
    end = board.gen_noisy(out, 0) if noisy else board.gen_quiets(out, 0)
    return [out[i] for i in range(end)]


def piece_map(board: Board) -> dict[int, int]:
    """``square: piece code`` for every occupied square."""
    return {square: board.piece_at(square) for square in range(64) if board.piece_at(square)}


def snapshot(board: Board) -> tuple:
    """Everything make and unmake change, for comparing states."""
    return (
        list(board.squares), board.side, board.castling, board.ep, board.halfmove, board.fullmove, board.key,
        list(board.kings), list(board.counts), board.ply, board.barrier, list(board.keys)[: board.ply + 1],
        list(board.occupied),
    )


def _is_noisy(reference: chess.Board, move: chess.Move) -> bool:
    """The noisy stage, as Stockfish's: captures and queen promotions; a capture
    that under-promotes comes with the quiet moves."""
    return move.promotion == chess.QUEEN or (reference.is_capture(move) and not move.promotion)


def check_position(board: Board, reference: chess.Board, pool: list[int], rng: random.Random) -> None:
    """Compare *board* with *reference* (the same position) as the module says;
    *pool* holds move codes from other positions for the table-move test, *rng*
    draws a few random codes more. Raises :class:`Mismatch`."""
    fen = reference.fen()

    def fail(what: str) -> Mismatch:
        return Mismatch(f"{what} in {fen}")

    expected = {code_of(move) for move in reference.legal_moves}
    # Legality by the attack test alone, then by was_legal with the check state
    # known (its short test: only the ray through the square a piece left).
    board.checks[board.ply] = CHECK_UNKNOWN
    out = vec[i64]([0] * MAX_MOVES)
    by_attack = set()
    for i in range(board.gen_all(out, 0)):
        board.make(out[i])
        if not board.attacked(board.kings[board.side ^ 1], board.side):
            by_attack.add(out[i])
        board.unmake()
    if by_attack != expected:
        raise fail(f"legal moves by attack differ: extra {by_attack - expected}, missing {expected - by_attack}")
    board.in_check()
    legal = legal_codes(board)
    if len(legal) != len(set(legal)) or set(legal) != expected:
        raise fail(f"legal moves differ: extra {set(legal) - expected}, missing {expected - set(legal)}")
    noisy = _generated(board, True)
    quiet = _generated(board, False)
    if set(noisy) & set(quiet):
        raise fail("a move is both noisy and quiet")
    for move in reference.legal_moves:
        if (code_of(move) in noisy) != _is_noisy(reference, move):
            raise fail(f"{move} is in the wrong stage")
    if [board.occupied[side] for side in (0, 1)] != [_signed(reference.occupied_co[colour])
                                                       for colour in (chess.WHITE, chess.BLACK)]:
        raise fail("the occupied squares differ")
    if board.in_check() != reference.is_check():
        raise fail("check differs")
    if board.key != _signed(compute_key(reference)):
        raise fail("the key differs")
    if not reference.chess960 and board.key != _signed(chess.polyglot.zobrist_hash(reference)):
        raise fail("the key is not Polyglot's")
    if board.is_insufficient_material() != reference.is_insufficient_material():
        raise fail("insufficient material differs")
    if board.to_chess().fen() != fen:
        raise fail(f"written back as {board.to_chess().fen()}")
    generated = set(noisy) | set(quiet)
    for code in pool + legal + [rng.getrandbits(15) for _ in range(8)]:
        if board.is_pseudo_legal(code) != (code in generated):
            raise fail(f"is_pseudo_legal({code}) is wrong")
    before = snapshot(board)
    pieces = piece_map(board)
    for move in reference.legal_moves:
        if board.gives_check(code_of(move)) != reference.gives_check(move):
            raise fail(f"gives_check({move}) is wrong")
    if snapshot(board) != before:
        raise fail("gives_check changed the board")
    for code in legal:
        board.make(code)
        if board.key != board.compute_key():
            raise fail(f"the key after {code} differs from one computed afresh")
        changed = dict(pieces)
        for i in range(board.dirty_count):
            piece, frm, to = board.dirty[3 * i], board.dirty[3 * i + 1], board.dirty[3 * i + 2]
            if frm >= 0:
                if changed.get(frm) != piece:
                    raise fail(f"the change of {code} removes a piece that was not there")
                del changed[frm]
        for i in range(board.dirty_count):
            piece, frm, to = board.dirty[3 * i], board.dirty[3 * i + 1], board.dirty[3 * i + 2]
            if to >= 0:
                changed[to] = piece
        if changed != piece_map(board):
            raise fail(f"the reported change of {code} is not the change of the board")
        board.unmake()
        if snapshot(board) != before:
            raise fail(f"unmake of {code} does not restore the state")


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def cross_check(seed: int, games: int, plies: int) -> int:
    """Play *games* random games of up to *plies* plies (odd games Chess960) and
    check every position; return how many positions were checked."""
    rng = random.Random(seed)
    checked = 0
    pool: list[int] = []
    for game in range(games):
        reference = chess.Board.from_chess960_pos(rng.randrange(960)) if game % 2 else chess.Board()
        board = Board.from_chess(reference, plies + 1)
        for _ in range(plies):
            check_position(board, reference, pool, rng)
            checked += 1
            moves = list(reference.legal_moves)
            if not moves:
                break
            special = [
                m for m in moves if reference.is_castling(m) or reference.is_en_passant(m) or m.promotion
            ]
            move = rng.choice(special) if special and rng.random() < 0.5 else rng.choice(moves)
            pool.extend(code_of(m) for m in rng.sample(moves, min(3, len(moves))))
            del pool[:-200]
            reference.push(move)
            board.make(code_of(move))
            if reference.is_game_over(claim_draw=False) and rng.random() < 0.5:
                break
    return checked


def _traced(classical: Classical, reference: chess.Board) -> tuple[int, dict[str, list[int]], dict[str, list[int]]]:
    """(score for the side to move, terms, non-zero feature counts) of *reference* by
    *classical* (:func:`blitzaco.trace.classical_trace`, which leaves it reset to the
    position), with the trace's own consistency checked: the terms (tempo aside) add
    up to the midgame and endgame sums the score is blended from, and the score
    untraced is the same."""
    trace = classical_trace(reference, classical)
    # Tempo is the side to move's, added when the phases are blended.
    mg = sum(row[0] - row[2] for name, row in trace.terms.items() if name != "Tempo")
    eg = sum(row[1] - row[3] for name, row in trace.terms.items() if name != "Tempo")
    if (mg, eg) != (trace.mg, trace.eg):
        raise Mismatch(f"the terms add up to {(mg, eg)}, the score is blended from {(trace.mg, trace.eg)} "
                       f"in {reference.fen()}")
    score = trace.score if reference.turn == chess.WHITE else -trace.score
    if classical.evaluate(Board.from_chess(reference)) != score:
        raise Mismatch(f"traced and untraced scores differ in {reference.fen()}")
    features = {name: list(counts) for name, counts in trace.features.items() if any(counts)}
    return score, {name: [int(value) for value in row] for name, row in trace.terms.items()}, features


def check_evaluation(classical: Classical, reference: chess.Board) -> int:
    """Score *reference* afresh by *classical* and hold the score to its properties:
    the trace adds up to it (:func:`_traced`), and the colour mirror (the same
    position with the colours and the side to move swapped) gets the same score for
    its side to move, every term and feature count with the colours swapped. Returns
    the score (side to move's view), *classical* reset to *reference*; raises
    :class:`Mismatch`."""
    reference = reference.copy(stack=False)  # the evaluation reads no history
    mirror_score, mirror_terms, mirror_features = _traced(classical, reference.mirror())
    score, terms, features = _traced(classical, reference)  # last: *classical* is left on *reference*
    if mirror_score != score:
        raise Mismatch(f"score {score}, the colour mirror's {mirror_score} in {reference.fen()}")
    for name in TERM_NAMES:
        white_mg, white_eg, black_mg, black_eg = terms[name]
        if mirror_terms[name] != [black_mg, black_eg, white_mg, white_eg]:
            raise Mismatch(f"{name}: {terms[name]}, the mirror's {mirror_terms[name]} in {reference.fen()}")
    swapped = {name: [counts[1], counts[0]] for name, counts in features.items()}
    if swapped != mirror_features:
        differ = sorted(name for name in swapped.keys() | mirror_features.keys()
                        if swapped.get(name) != mirror_features.get(name))
        raise Mismatch(f"feature counts differ from the mirror's ({', '.join(differ[:5])}) in {reference.fen()}")
    return score


def eval_check(seed: int, games: int, plies: int, config: EvalConfig | None = None) -> int:
    """Random games (odd ones Chess960): every position scored afresh and held to its
    properties (:func:`check_evaluation`), and the evaluator that follows the game
    (make, null moves, unmake) holding the same sums and giving the same score;
    return the positions checked."""
    config = config if config is not None else EvalConfig()
    classical = Classical(config)  # follows the games
    scorer = Classical(config)  # scores each position afresh
    rng = random.Random(seed)
    checked = 0
    for game in range(games):
        reference = chess.Board.from_chess960_pos(rng.randrange(960)) if game % 2 else chess.Board()
        board = Board.from_chess(reference, plies + 1)
        classical.reset(board)
        depth = 0  # moves and null moves made since the game's start
        for _ in range(plies):
            expected = check_evaluation(scorer, reference)
            checked += 1
            top = classical.top
            sums = (classical.mg[top], classical.eg[top], classical.phase[top])
            if sums != (scorer.mg[scorer.top], scorer.eg[scorer.top], scorer.phase[scorer.top]):
                raise Mismatch(f"incremental sums differ from those computed afresh in {reference.fen()}")
            if classical.evaluate(board) != expected:
                raise Mismatch(f"the evaluator that followed the game scores {classical.evaluate(board)}, "
                               f"afresh {expected} in {reference.fen()}")
            moves = list(reference.legal_moves)
            roll = rng.random()
            if roll < 0.15 and depth:
                depth -= 1
                reference.pop()
                board.unmake()
                classical.unmake()
            elif roll < 0.2 and not reference.is_check():
                depth += 1
                board.make_null()
                classical.make(board)
                reference.push(chess.Move.null())
            elif moves:
                move = rng.choice(moves)
                depth += 1
                reference.push(move)
                board.make(code_of(move))
                classical.make(board)
            else:
                break
    return checked


def reference_network_score(weights: NetworkWeights, reference: chess.Board) -> int:
    """The network's score of *reference* for its side to move, by the file format's
    definition (:mod:`blitzaco.nnue`) written out plainly: each perspective's first
    layer is the biases plus the rows of its features, clipped to [0, QA]; the output
    is the side to move's clipped values times the first half of the output weights,
    the other side's times the second, plus the output bias, in centipawns; with
    output buckets, the weights and bias of the bucket of the number of pieces; with
    the squared flag, each clipped value squared and the bias and divisor times QA;
    with the mirrored flag, a perspective whose own king is on files a-d reads every
    square mirrored horizontally."""
    hidden = weights.hidden
    scale = weights.qa if weights.flags & FLAG_SQUARED else 1  # the squared values' extra QA
    bucket = output_bucket(len(reference.piece_map()), weights.buckets)
    w2 = weights.w2[bucket * 2 * hidden:(bucket + 1) * 2 * hidden]
    w1 = weights.w1
    layers = []
    for perspective in (reference.turn, not reference.turn):
        values = list(weights.b1)
        king = reference.king(perspective)
        mirror = flip(king) if weights.flags & FLAG_MIRRORED and king is not None else 0
        for square, piece in reference.piece_map().items():
            row = feature(perspective, piece.color, piece.piece_type, square, mirror) * hidden
            for j in range(hidden):
                values[j] += w1[row + j]
        clipped = [min(max(value, 0), weights.qa) for value in values]
        layers.append([value * value for value in clipped] if scale != 1 else clipped)
    total = weights.b2[bucket] * scale
    for half, layer in enumerate(layers):
        total += sum(w * value for w, value in zip(w2[half * hidden:(half + 1) * hidden], layer, strict=True))
    return total * 100 // (weights.qa * weights.qb * scale)


def random_net(hidden: int, seed: int, residual: bool = False, buckets: int = 1,
               squared: bool = False, mirrored: bool = False) -> NetworkWeights:
    """A network of random weights within the file format's limits (32 pieces and
    the bias stay inside 16 bits), with *buckets* outputs; *squared*: the squared
    clipped ReLU; *mirrored*: the input mirrored by the king's file."""
    rng = random.Random(seed)
    w1 = tuple(rng.randint(-800, 800) for _ in range(INPUTS * hidden))
    b1 = tuple(rng.randint(-900, 900) for _ in range(hidden))
    w2 = tuple(rng.randint(-3000, 3000) for _ in range(2 * hidden * buckets))
    b2 = tuple(rng.randint(-99999, 99999) for _ in range(buckets))
    flags = (FLAG_RESIDUAL if residual else 0) | (FLAG_SQUARED if squared else 0) | (FLAG_MIRRORED if mirrored else 0)
    return NetworkWeights(hidden, 255, 1024, flags, w1, b1, w2, b2, {})


def net_check(weights: NetworkWeights, seed: int, games: int, plies: int, weight: float = 1.0,
              config: EvalConfig | None = None, share: float = 0.0) -> int:
    """Random games (odd ones Chess960, captures, promotions and castling favoured,
    and king moves in a mirrored net):
    at about two positions in three (so that the lazy accumulator catches up over
    several plies) the network evaluator that followed the game (make, unmake) and
    one reset on the position give :func:`reference_network_score` (times *weight*;
    plus the classical score for a residual net, or *share* times it for a replacing
    one); raises :class:`Mismatch`. Returns the positions checked."""
    config = config if config is not None else EvalConfig()
    residual = bool(weights.flags & 1)
    mirrored = bool(weights.flags & FLAG_MIRRORED)  # king moves favoured too: they cross the d/e boundary
    classical = Classical(config)
    follower = NetEvaluator(config, weights, weight, share)
    fresh = NetEvaluator(config, weights, weight, share)
    rng = random.Random(seed)
    asked = random.Random(seed + 1)  # which positions are scored, apart from the games
    checked = 0
    for game in range(games):
        reference = chess.Board.from_chess960_pos(rng.randrange(960)) if game % 2 else chess.Board()
        board = Board.from_chess(reference, plies + 1)
        follower.reset(board)
        made = 0
        for _ in range(plies):
            if asked.random() < 0.65:
                expected = reference_network_score(weights, reference)
                if weight != 1.0:
                    expected = int(weight * expected)
                factor = classical_share(residual, share)
                own = Board.from_chess(reference.copy(stack=False))
                if factor:
                    classical.reset(own)
                    classical_score = int(classical.evaluate(own))
                    expected += classical_score if factor == 1.0 else int(factor * classical_score)
                fresh.reset(own)
                got = (follower.evaluate(board), fresh.evaluate(own))
                if got != (expected, expected):
                    raise Mismatch(f"network: followed {got[0]}, from scratch {got[1]}, by definition {expected} "
                                   f"in {reference.fen()}")
                checked += 1
            moves = list(reference.legal_moves)
            if not moves:
                break
            if made and rng.random() < 0.15:
                reference.pop()
                board.unmake()
                follower.unmake()
                made -= 1
                continue
            noisy = [move for move in moves
                     if reference.is_capture(move) or move.promotion or reference.is_castling(move)
                     or (mirrored and reference.piece_type_at(move.from_square) == chess.KING)]
            move = rng.choice(noisy) if noisy and rng.random() < 0.5 else rng.choice(moves)
            reference.push(move)
            board.make(code_of(move))
            follower.make(board)
            made += 1
    return checked


def table_check(seed: int, clears: int) -> int:
    """A 16-slot :class:`blitzaco.tt.TranspositionTable` filled and cleared *clears* times
    (compiled, its salt comes round every 16 clearings and the memory is zeroed):
    each search's entries are found until the clearing and none after it; raises
    :class:`Mismatch`. Returns the entries checked."""
    table = TranspositionTable(1)
    table.mask = 15
    table.keys = vec[i64]([0] * 16)
    table.data = vec[i64]([0] * 16)
    rng = random.Random(seed)
    checked = 0
    for _ in range(clears):
        table.new_search()
        last: dict[int, int] = {}  # slot: the key stored there last
        for _ in range(12):
            key = rng.getrandbits(64) - (1 << 63)
            table.put(key, 0, rng.randrange(-500, 500), 3, EXACT)  # one depth: each put replaces
            last[key & 15] = key
        for key in last.values():
            if table.find(key) == 0:
                raise Mismatch(f"table: key {key} stored and not found")
        table.clear()
        for key in last.values():
            if table.find(key) != 0:
                raise Mismatch(f"table: key {key} found after the table was cleared")
            checked += 1
    return checked
