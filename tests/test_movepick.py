"""Move ordering and static exchange evaluation on the engine's board
(:mod:`blitzaco.movepick`), held against python-chess.

:class:`MovePicker` is checked over random positions (standard and Chess960, in
check and out of it) with a random table move, killers and counter-move given
through :class:`OrderingMemory` and a random history: it yields every pseudo-legal
move exactly once (the legal ones among them are python-chess's legal moves), says
rightly which are tactical, and keeps its stages: the table move, the captures and
queen promotions by MVV-LVA (losing ones set aside with ``see_ordering``), the
killers and the counter-move, the quiet moves by history, then the late moves (the
losing captures, then the under-promotions).

:func:`see_ge` is checked against a brute-force exchange on the target square
written with python-chess (least valuable attacker first, x-rays seen because the
pieces that took are lifted off the board, each side free to stop), on known
positions and on every capture and promotion of hundreds of random positions;
:func:`blitzaco.tools.exchange.see_ge` (python-chess moves) gives the same answers.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import chess
import pytest
from librt.vecs import vec
from mypy_extensions import i64

from blitzaco.board import MAX_MOVES, Board
from blitzaco.movepick import SEE_VALUE, MovePicker, OrderingMemory, see_ge, see_scratch
from blitzaco.moves import decode_move, encode_move
from blitzaco.pheromone import Trails
from blitzaco.tools import exchange

#: The exchange values by piece type, as python-chess numbers them (0: none).
VALUES = (0, 100, 320, 330, 500, 950, 20000)


def test_the_exchange_values_are_the_documented_ones() -> None:
    """The oracle below values the pieces as the engine does."""
    assert [SEE_VALUE[kind] for kind in range(7)] == list(VALUES)


# ------------------------------------------------------------------ the oracle


def _replies(board: chess.Board, side: chess.Color, target: chess.Square, standing: int) -> set[int]:
    """What *side* can gain on *target*, where a piece worth *standing* now stands
    (after the pieces that took before were lifted off *board*): nothing if it stops,
    else that piece less the other side's best answer; with its least valuable
    attacker, every one of them when several are worth the same (the set of the
    results: more than one means the order among equals decides)."""
    attackers = list(board.attackers(side, target))
    if not attackers:
        return {0}
    cheapest = min(VALUES[board.piece_type_at(square) or 0] for square in attackers)
    results = set()
    for square in attackers:
        value = VALUES[board.piece_type_at(square) or 0]
        if value != cheapest:
            continue
        after = board.copy(stack=False)
        after.remove_piece_at(square)
        results |= {max(0, standing - answer) for answer in _replies(after, not side, target, value)}
    return results


def exchange_values(board: chess.Board, move: chess.Move) -> set[int]:
    """The static exchange value(s) of *move* by brute force: castling and
    promotions 0, en passant a pawn, a quiet move 0, a capture the victim less the
    opponent's best answer on the square."""
    if move.promotion or board.is_castling(move):
        return {0}
    if board.is_en_passant(move):
        return {VALUES[chess.PAWN]}
    victim = board.piece_type_at(move.to_square)
    if victim is None:
        return {0}
    after = board.copy(stack=False)
    mover = after.remove_piece_at(move.from_square)
    assert mover is not None
    return {VALUES[victim] - answer for answer in _replies(after, not board.turn, move.to_square,
                                                            VALUES[mover.piece_type])}


def random_positions(seed: int, count: int, chess960_share: float = 0.3) -> list[chess.Board]:
    """*count* positions of random games (some Chess960), captures, promotions and
    checks favoured so that exchanges and evasions come up often."""
    rng = random.Random(seed)
    boards: list[chess.Board] = []
    while len(boards) < count:
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if rng.random() < chess960_share else chess.Board()
        for _ in range(rng.randrange(10, 90)):
            moves = list(board.legal_moves)
            if not moves:
                break
            forcing = [move for move in moves if board.is_capture(move) or move.promotion or board.gives_check(move)]
            board.push(rng.choice(forcing) if forcing and rng.random() < 0.35 else rng.choice(moves))
            boards.append(board.copy(stack=False))
    return boards[:count]


# ------------------------------------------------------------------ exchanges

#: (FEN, move, exchange value): the chessprogramming wiki's two examples, an x-ray
#: behind the first taker, a king that may not take back a defended piece, a king
#: that may, and the value of a lone capture.
KNOWN = [
    ("1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1", "e1e5", 100),
    ("1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1", "d3e5", 100 - 320),
    ("4k3/3r4/8/3p4/8/8/3R4/3QK3 w - - 0 1", "d2d5", 100),  # the queen behind the rook takes back
    ("4k3/3r4/8/3p4/8/8/3R4/4K3 w - - 0 1", "d2d5", 100 - 500),  # without it, the rook is lost
    ("8/8/8/4k3/3p4/8/3R4/3RK3 w - - 0 1", "d2d4", 100),  # Kxd4 would walk into the other rook
    ("8/8/8/4k3/3p4/8/3R4/4K3 w - - 0 1", "d2d4", 100 - 500),  # nothing defends: the king takes
    ("3k4/8/8/3q4/8/8/3R4/3RK3 w - - 0 1", "d2d5", 950),
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", 100),  # en passant: a pawn
    ("1n2k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7b8q", 0),  # promotions count as 0
]


@pytest.mark.parametrize(("fen", "uci", "value"), KNOWN)
def test_see_on_known_positions(fen: str, uci: str, value: int) -> None:
    """The exchange value of each known capture, as the oracle computes it and as
    see_ge answers it at the value and just above it."""
    board = chess.Board(fen)
    move = chess.Move.from_uci(uci)
    assert move in board.pseudo_legal_moves
    assert exchange_values(board, move) == {value}
    own = Board.from_chess(board)
    scratch = see_scratch()
    assert see_ge(own, encode_move(move), value, scratch)
    assert not see_ge(own, encode_move(move), value + 1, scratch)
    assert exchange.see_ge(board, move, value) and not exchange.see_ge(board, move, value + 1)


def test_see_agrees_with_the_brute_force_exchange() -> None:
    """Every capture, promotion and en passant of 400 random positions, at several
    thresholds: see_ge on the engine's board answers as the brute-force exchange,
    and leaves its scratch array zeroed; tools.exchange.see_ge (python-chess moves)
    answers alike."""
    scratch = see_scratch()
    compared = ambiguous = 0
    for index, reference in enumerate(random_positions(3, 400)):
        own = Board.from_chess(reference)
        for move in reference.pseudo_legal_moves:
            if not (reference.is_capture(move) or move.promotion):
                continue
            values = exchange_values(reference, move)
            for threshold in (-400, -1, 0, 1, 100, 250, 500):
                answers = {value >= threshold for value in values}
                if len(answers) > 1:  # the order among equal attackers decides: no single answer
                    ambiguous += 1
                    continue
                expected = answers.pop()
                assert see_ge(own, encode_move(move), threshold, scratch) == expected, (
                    reference.fen(), move.uci(), threshold, values,
                )
                if index % 8 == 0:
                    assert exchange.see_ge(reference, move, threshold) == expected
                compared += 1
        assert list(scratch) == [0] * 120
    assert compared > 4000 and ambiguous < compared // 100


def test_the_oracle_can_tell_a_wrong_exchange() -> None:
    """The comparison can fail: the oracle's values differ from what a capture
    without recaptures would give where a recapture matters."""
    board = chess.Board(KNOWN[1][0])
    move = chess.Move.from_uci(KNOWN[1][1])
    assert exchange_values(board, move) != {VALUES[chess.PAWN]}
    own = Board.from_chess(board)
    assert not see_ge(own, encode_move(move), 0, see_scratch())


# ------------------------------------------------------------------ the picker


@dataclass
class Picked:
    """What a picker yielded at one node: the moves and their tactical flags."""

    moves: list[int]
    tactical: list[bool]


def _mvv_lva(board: chess.Board, move: chess.Move) -> int:
    """The capture stage's key from python-chess: the victim (en passant: a pawn;
    a promotion adds its piece) times 8, less the attacker."""
    victim = chess.PAWN if board.is_en_passant(move) else board.piece_type_at(move.to_square) or 0
    attacker = board.piece_type_at(move.from_square) or 0
    return (victim + (move.promotion or 0)) * 8 - attacker


def _is_noisy(board: chess.Board, move: chess.Move) -> bool:
    """The capture stage's moves: captures and queen promotions (an under-promotion,
    capture or not, is a late move)."""
    return move.promotion == chess.QUEEN or (board.is_capture(move) and not move.promotion)


def _pick_all(own: Board, memory: OrderingMemory, ply: int, tt_move: int, previous: int,
              see_ordering: bool, trails: Trails | None = None, rows: tuple[int, int] = (-1, -1)) -> Picked:
    out = vec[i64]([0] * (MAX_MOVES * (ply + 1)))
    picker = MovePicker(own, memory, out, see_scratch(), trails, see_ordering, ply)
    picker.start(tt_move, previous, rows[0], rows[1])
    picked = Picked([], [])
    while True:
        code = picker.next()
        if code == 0:
            break
        picked.moves.append(int(code))
        picked.tactical.append(bool(picker.tactical))
    assert picker.next() == 0  # done stays done
    return picked


def _generated(own: Board) -> dict[int, chess.Move]:
    """The board's pseudo-legal moves (its own generator), as codes and as python-chess moves."""
    out = vec[i64]([0] * MAX_MOVES)
    codes = [int(out[i]) for i in range(own.gen_all(out, 0))]
    moves = {code: decode_move(code) for code in codes}
    return {code: move for code, move in moves.items() if move is not None}


def _non_increasing(keys: list[object]) -> bool:
    return all(a >= b for a, b in zip(keys, keys[1:], strict=False))  # type: ignore[operator]


def _check_picker(reference: chess.Board, rng: random.Random, pool: list[int]) -> None:
    """One node of *reference* with a random table move, killers, counter-move and
    history: the picker's moves against python-chess's, stage by stage."""
    own = Board.from_chess(reference)
    ply = rng.randrange(4)
    memory = OrderingMemory(True, True, True)
    legal = [encode_move(move) for move in reference.legal_moves]
    pseudo = _generated(own)
    # The board's pseudo-legal moves are python-chess's, and castling moves python-chess
    # already knows to pass through an attacked square (was_legal drops them).
    theirs = {encode_move(move) for move in reference.pseudo_legal_moves}
    assert theirs <= set(pseudo), reference.fen()
    assert all(reference.is_castling(pseudo[code]) for code in set(pseudo) - theirs), reference.fen()

    def draw() -> int:
        """A move for the table or the memory: one of this position, of another, or garbage."""
        roll = rng.random()
        if roll < 0.45 and legal:
            return rng.choice(legal)
        if roll < 0.75 and pool:
            return rng.choice(pool)
        return 0 if roll < 0.85 else rng.getrandbits(15)

    tt_move = draw()
    memory.killers[2 * ply] = draw()
    memory.killers[2 * ply + 1] = draw()
    previous = rng.choice((0, rng.getrandbits(12) | 1))
    counter = draw()
    if previous:
        memory.counters[previous & 4095] = counter
    side = own.side << 12
    for code in pseudo:
        memory.history[side | (code & 4095)] = rng.randrange(-5000, 5000) if rng.random() < 0.7 else 0
    see_ordering = rng.random() < 0.7
    picked = _pick_all(own, memory, ply, tt_move, previous, see_ordering)
    moves = picked.moves
    fen = reference.fen()

    # Every pseudo-legal move once; the legal ones are python-chess's.
    assert len(moves) == len(set(moves)), fen
    assert set(moves) == set(pseudo), (fen, set(moves) ^ set(pseudo))
    made_legal = []
    for code in moves:
        own.make(code)
        if own.was_legal():
            made_legal.append(code)
        own.unmake()
    assert sorted(made_legal) == sorted(legal), fen
    for code, tactical in zip(moves, picked.tactical, strict=True):
        move = pseudo[code]
        assert tactical == (reference.is_capture(move) or bool(move.promotion)), (fen, move.uci())

    # The stages, in order.
    first = [tt_move] if tt_move in pseudo else []
    losing = {code for code, move in pseudo.items() if see_ordering and _is_noisy(reference, move)
              and move.promotion is None and min(exchange_values(reference, move)) < 0} - set(first)
    captures = {code for code, move in pseudo.items() if _is_noisy(reference, move)} - losing - set(first)
    specials: list[int] = []
    killer1, killer2 = int(memory.killers[2 * ply]), int(memory.killers[2 * ply + 1])
    for code in (killer1, 0 if killer2 == killer1 else killer2,
                 counter if previous and counter not in (killer1, killer2) else 0):
        special = pseudo.get(code)
        if special is not None and code not in first and not _is_noisy(reference, special) and not special.promotion:
            specials.append(code)
    under = {code for code, move in pseudo.items() if move.promotion and move.promotion != chess.QUEEN} - set(first)
    quiets = set(pseudo) - set(first) - captures - losing - set(specials) - under
    stages = [first, captures, specials, quiets, losing, under]
    bounds = [0]
    for stage in stages:
        bounds.append(bounds[-1] + len(stage))
    parts = [moves[start:end] for start, end in zip(bounds, bounds[1:], strict=False)]
    assert parts[0] == first, fen
    assert set(parts[1]) == captures, fen
    assert _non_increasing([_mvv_lva(reference, pseudo[code]) for code in parts[1]]), fen
    assert parts[2] == specials, fen
    assert set(parts[3]) == quiets, fen
    assert _non_increasing([memory.history[side | (code & 4095)] for code in parts[3]]), fen
    assert set(parts[4]) == losing, fen
    assert _non_increasing([_mvv_lva(reference, pseudo[code]) for code in parts[4]]), fen
    assert set(parts[5]) == under, fen


@pytest.mark.parametrize("seed", range(3))
def test_the_picker_yields_every_move_once_in_its_stages(seed: int) -> None:
    """Random positions, a quarter of them Chess960 and some in check: every
    pseudo-legal move exactly once, the legal ones python-chess's, the tactical flag
    right, and the stages in order (see the module's documentation)."""
    rng = random.Random(seed)
    pool: list[int] = []
    checked = in_check = 0
    for reference in random_positions(100 + seed, 150, chess960_share=0.25):
        _check_picker(reference, rng, pool)
        pool.extend(encode_move(move) for move in rng.sample(list(reference.legal_moves),
                                                             min(3, reference.legal_moves.count())))
        del pool[:-100]
        checked += 1
        in_check += reference.is_check()
    assert checked == 150 and in_check > 10


@pytest.mark.parametrize(
    "fen",
    [
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",  # castling both ways
        "1r2k3/P7/8/8/8/8/8/1K6 w - - 0 1",  # axb8 in check: every promotion
        "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",  # promotions by capture and not
        "8/8/8/2k5/3Pp3/8/8/4K3 b - d3 0 1",  # en passant out of check
        "bqnb1rkr/pp3ppp/3pp3/2p5/5P2/P2P3n/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",  # Chess960 in check
        "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",  # Chess960 castling
    ],
)
def test_the_picker_on_special_positions(fen: str) -> None:
    """Castling (Chess960 too), promotions of every kind, en passant and checks, with
    twenty random table moves and memories each."""
    reference = chess.Board(fen, chess960="HFhf" in fen)
    rng = random.Random(fen)
    pool = [encode_move(move) for move in random_positions(7, 30)[-1].legal_moves]
    for _ in range(20):
        _check_picker(reference, rng, pool)


def test_the_table_move_killers_and_counter_come_in_their_places() -> None:
    """A known position: the table move (a quiet one) first, then the captures (the
    pawn before the knight's exchange), then the killers and the counter-move, the
    history's best quiet move before the others; a killer that is a capture is
    searched with the captures, not twice."""
    board = chess.Board("r1bqkbnr/pppp1ppp/8/4p3/3nP3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    own = Board.from_chess(board)
    memory = OrderingMemory(True, True, True)
    code = {uci: encode_move(chess.Move.from_uci(uci)) for uci in
            ("b1c3", "f3e5", "f3d4", "f1c4", "d2d3", "h2h3", "e1g1", "f1b5")}
    memory.killers[0] = code["f1c4"]
    memory.killers[1] = code["f3e5"]  # a capture: not a killer here
    previous = encode_move(chess.Move.from_uci("c6d4"))
    memory.counters[previous & 4095] = code["d2d3"]
    memory.history[code["h2h3"] & 4095] = 900
    picked = _pick_all(own, memory, 0, code["b1c3"], previous, see_ordering=True)
    order = picked.moves
    assert order[0] == code["b1c3"]
    assert order[1:3] == [code["f3d4"], code["f3e5"]]  # the knight (victim 2) before the pawn (victim 1)
    assert order[3:5] == [code["f1c4"], code["d2d3"]]
    assert order[5] == code["h2h3"]
    assert order.count(code["f3e5"]) == 1 and order.count(code["b1c3"]) == 1
    assert picked.tactical[:5] == [False, True, True, False, False]


def test_losing_captures_wait_with_see_ordering_only() -> None:
    """Qxd5 loses the queen to a pawn: with see_ordering it comes after every quiet
    move, without it among the captures, first (the most valuable victim)."""
    board = chess.Board("4k3/8/4p3/3n4/8/8/8/3QK3 w - - 0 1")
    own = Board.from_chess(board)
    take = encode_move(chess.Move.from_uci("d1d5"))
    ordered = _pick_all(own, OrderingMemory(True, True, True), 0, 0, 0, see_ordering=True).moves
    plain = _pick_all(own, OrderingMemory(True, True, True), 0, 0, 0, see_ordering=False).moves
    assert ordered[-1] == take and plain[0] == take
    assert sorted(ordered) == sorted(plain)


def _quiets(picked: Picked) -> list[int]:
    return [code for code, tactical in zip(picked.moves, picked.tactical, strict=True) if not tactical]


def _row_after(uci: str, board: chess.Board | None = None) -> int:
    """The continuation-history row of move *uci*, made from *board* (the start)."""
    from blitzaco.movepick import continuation_row

    return int(continuation_row(Board.from_chess(board or chess.Board()), encode_move(chess.Move.from_uci(uci))))


def test_continuation_history_orders_the_quiet_move_that_refuted_after_the_same_moves() -> None:
    """[search] continuation_history: a cutoff by a quiet move raises its entries
    after the moves one and two plies up and lowers the quiet moves tried before it
    (within the bound however many cutoffs); the picker then orders it first after
    the same move, one ply up or two, and not after other moves. Off, the table is
    empty and nothing moves."""
    from blitzaco.movepick import CONTINUATION_SIZE, move_column, piece_square, previous_move

    start = chess.Board()
    own = Board.from_chess(start)
    row2 = _row_after("g1f3")  # a move two plies up: a knight to f3 (only its row is used)
    own.make(encode_move(chess.Move.from_uci("e2e4")))  # the move one ply up: a pawn to e4
    previous = previous_move(own)
    row1 = _row_after("e2e4")
    assert row1 == piece_square(own, chess.E4) * 768 and row1 != row2
    memory = OrderingMemory(False, False, False, continuation=True)  # the continuation history alone
    assert len(memory.continuation) == CONTINUATION_SIZE
    assert len(OrderingMemory(True, False, True).continuation) == 0
    refutation = encode_move(chess.Move.from_uci("a7a6"))  # the last quiet move in any plain order
    tried = [encode_move(chess.Move.from_uci(uci)) for uci in ("g8f6", "b8c6")]
    for i, code in enumerate(tried):
        memory.tried[i] = code
    for _ in range(200):  # far past the bound: gravity keeps every entry within it
        memory.reward(own, 0, refutation, 9, previous, len(tried), row1, row2)
    limit = memory.limit
    for row in (row1, row2):
        assert limit // 2 < memory.continuation[row + move_column(own, refutation)] <= limit
        assert all(-limit <= memory.continuation[row + move_column(own, code)] < -limit // 2 for code in tried)
    for rows in ((row1, -1), (-1, row2), (row1, row2)):
        quiets = _quiets(_pick_all(own, memory, 0, 0, previous, see_ordering=True, rows=rows))
        assert quiets[0] == refutation and set(tried) <= set(quiets[-4:]), rows
    other = _row_after("d2d4")
    assert _quiets(_pick_all(own, memory, 0, 0, previous, see_ordering=True, rows=(other, -1)))[0] != refutation


def test_a_quiet_moves_history_adds_its_continuation_histories() -> None:
    """:meth:`MovePicker.quiet_history`, the one score that orders the quiet moves and
    that history pruning and history-scaled reductions read: the move's history,
    plus its continuation histories after the moves one and two plies up where that
    table is on; without a row, or without the table, the history alone."""
    from blitzaco.movepick import move_column

    own = Board.from_chess(chess.Board())
    own.make(encode_move(chess.Move.from_uci("e2e4")))
    row1, row2 = _row_after("e2e4"), _row_after("g1f3")
    move = encode_move(chess.Move.from_uci("a7a6"))
    for continuation in (True, False):
        memory = OrderingMemory(True, False, True, continuation=continuation)
        memory.history[own.side << 12 | (move & 4095)] = -40
        picker = MovePicker(own, memory, vec[i64]([0] * MAX_MOVES), see_scratch(), None, False, 0)
        if continuation:
            memory.continuation[row1 + move_column(own, move)] = -300
            memory.continuation[row2 + move_column(own, move)] = 1000
        picker.start(0, 0, row1, row2)
        assert picker.quiet_history(move) == (660 if continuation else -40)
        picker.start(0, 0, row1, -1)
        assert picker.quiet_history(move) == (-340 if continuation else -40)
        picker.start(0, 0)  # no move before (the root's line, a null move): the history alone
        assert picker.quiet_history(move) == -40


def test_history_with_gravity_stays_within_its_bound_on_both_sides() -> None:
    """[search] history_gravity: a cutoff raises its quiet move's history and lowers
    the ones tried before it, each entry within +-the bound however many cutoffs (a
    move that only fails falls toward -limit and stops there), and the refutation is
    ordered first; without gravity the maluses drive the tried moves below -limit
    without bound (the table is halved only when a rewarded entry passes 2^20)."""
    own = Board.from_chess(chess.Board())
    refutation = encode_move(chess.Move.from_uci("a2a3"))  # the last quiet move in any plain order
    tried = [encode_move(chess.Move.from_uci(uci)) for uci in ("g1f3", "b1c3")]
    memory = OrderingMemory(False, False, True, gravity=True)
    plain = OrderingMemory(False, False, True)
    bound = memory.limit
    for table in (memory, plain):
        for i, code in enumerate(tried):
            table.tried[i] = code
        for _ in range(300):  # far past the bound: 300 cutoffs at depth 9
            table.reward(own, 0, refutation, 9, 0, len(tried), -1, -1)
    index = own.side << 12
    assert bound // 2 < memory.history[index | (refutation & 4095)] <= bound
    assert all(-bound <= memory.history[index | (code & 4095)] < -bound // 2 for code in tried)
    assert all(plain.history[index | (code & 4095)] < -bound for code in tried)
    quiets = _quiets(_pick_all(own, memory, 0, 0, 0, see_ordering=True))
    assert quiets[0] == refutation and set(tried) <= set(quiets[-2:])


def test_the_history_bonus_is_capped_and_grows_with_depth() -> None:
    """The one bonus of every table of the standard shape: quadratic plus linear in
    the depth, capped at history_bonus_max (itself at most the bound), so that one
    deep cutoff moves an entry by a bounded share of its range (Stockfish's cap is
    about a ninth): min(16 d^2 + 320 d, 2048) with the shipped numbers."""
    memory = OrderingMemory(False, False, True, gravity=True)
    assert [memory.bonus(d) for d in (1, 2, 3, 4, 5, 30)] == [336, 704, 1104, 1536, 2000, 2048]
    assert OrderingMemory(False, False, True, gravity=True, limit=1000, bonus_max=5000).bonus(9) == 1000
    from blitzaco.config import SearchConfig
    from blitzaco.search import SearchMemory

    config = SearchConfig()
    shipped = SearchMemory(config).ordering
    assert (shipped.limit, shipped.bonus_quadratic, shipped.bonus_linear, shipped.bonus_max) == (
        config.history_limit, config.history_bonus_quadratic, config.history_bonus_linear, config.history_bonus_max)


def test_division_of_a_history_rounds_toward_zero() -> None:
    """History scales reductions by division: a history of -1 must not add a ply of
    reduction (Python's -1 // 8192 is -1; C's division, and toward_zero, give 0)."""
    from blitzaco.movepick import toward_zero

    assert [toward_zero(v, 8192) for v in (-1, -8191, -8192, -16385, 0, 8191, 8192, 16385)] == [
        0, 0, -1, -2, 0, 0, 1, 2]


def test_aging_halves_every_history_toward_zero() -> None:
    """A game's memory kept across its moves (keep_memory) is aged before each
    search: every history entry halved toward zero, the killers emptied apart."""
    memory = OrderingMemory(True, False, True, continuation=True, captures=True, gravity=True)
    for table in (memory.history, memory.continuation, memory.captures):
        table[0], table[1], table[2] = 1001, -1001, -1
    memory.age()
    for table in (memory.history, memory.continuation, memory.captures):
        assert (table[0], table[1], table[2]) == (500, -500, 0)


def test_capture_history_can_overturn_the_victim_order() -> None:
    """[search] capture_history: captures are keyed by what they win x 16 plus their
    history: with no history the richer victim first (the rook's capture of a knight
    before the pawn captures) and the cheaper attacker among equal victims; a capture
    that kept refuting rises above the ones tried before it, and enough history lifts
    a pawn capture over a knight capture that kept failing. Off, no table."""
    from blitzaco.movepick import CAPTURE_SIZE, capture_index

    # Both the knight on c3 and the bishop on g2 take the pawn on e4; the rook on a1
    # takes the knight on a5.
    reference = chess.Board("4k3/8/8/n7/4p3/2N5/6B1/R3K3 w - - 0 1")
    own = Board.from_chess(reference)
    knight, bishop, rook = (encode_move(chess.Move.from_uci(uci)) for uci in ("c3e4", "g2e4", "a1a5"))
    plain = OrderingMemory(True, False, True)
    assert len(plain.captures) == 0
    assert _pick_all(own, plain, 0, 0, 0, see_ordering=False).moves[:3] == [rook, knight, bishop]
    memory = OrderingMemory(True, False, True, captures=True)
    assert len(memory.captures) == CAPTURE_SIZE
    assert _pick_all(own, memory, 0, 0, 0, see_ordering=False).moves[:3] == [rook, knight, bishop]
    memory.tried_captures[0] = knight
    memory.reward_captures(own, 0, bishop, 10, True, 1)  # the bishop's capture refuted, the knight's tried first
    assert 0 < memory.captures[capture_index(own, bishop)] <= memory.limit
    assert -memory.limit <= memory.captures[capture_index(own, knight)] < 0
    assert _pick_all(own, memory, 0, 0, 0, see_ordering=False).moves[:3] == [rook, bishop, knight]
    memory.tried_captures[0] = rook
    for _ in range(60):
        memory.reward_captures(own, 0, bishop, 10, True, 1)  # now the rook's capture keeps failing
    moves = _pick_all(own, memory, 0, 0, 0, see_ordering=False).moves
    assert moves.index(bishop) < moves.index(rook)
    assert all(abs(v) <= memory.limit for v in memory.captures)


def test_see_of_a_quiet_move_counts_what_it_leaves_en_prise() -> None:
    """see_ge_quiet (SEE pruning's test of a quiet move): a knight moved where a pawn
    takes it loses 320; defended by a pawn against a pawn it still loses the knight
    for a pawn; moved to a square nobody attacks it loses nothing. see_ge counts a
    quiet move as 0 whatever it risks, and both agree on captures."""
    from blitzaco.movepick import see_ge_quiet

    board = Board.from_chess(chess.Board("4k3/8/3p4/8/8/2N5/8/4K3 w - - 0 1"))
    scratch = see_scratch()
    hanging = encode_move(chess.Move.from_uci("c3e5"))  # the pawn on d6 takes it
    safe = encode_move(chess.Move.from_uci("c3a4"))
    assert see_ge_quiet(board, hanging, -320, scratch) and not see_ge_quiet(board, hanging, -319, scratch)
    assert see_ge(board, hanging, 0, scratch)  # see_ge: a quiet move is worth 0
    assert see_ge_quiet(board, safe, 0, scratch) and not see_ge_quiet(board, safe, 1, scratch)
    defended = Board.from_chess(chess.Board("4k3/8/3p4/8/5P2/2N5/8/4K3 w - - 0 1"))  # f4 guards e5
    assert see_ge_quiet(defended, hanging, -220, scratch) and not see_ge_quiet(defended, hanging, -219, scratch)
    capture = Board.from_chess(chess.Board("4k3/8/3p4/4p3/8/2N5/8/4K3 w - - 0 1"))
    takes = encode_move(chess.Move.from_uci("c3e5"))  # knight takes a pawn the other pawn defends
    for threshold in (-220, -219, 0):
        assert see_ge_quiet(capture, takes, threshold, scratch) == see_ge(capture, takes, threshold, scratch)
