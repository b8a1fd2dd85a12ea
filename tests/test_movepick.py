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
              see_ordering: bool, trails: Trails | None = None) -> Picked:
    out = vec[i64]([0] * (MAX_MOVES * (ply + 1)))
    picker = MovePicker(own, memory, out, see_scratch(), trails, see_ordering, ply)
    picker.start(tt_move, previous)
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


def test_continuation_history_orders_the_quiet_move_that_refuted_after_the_same_move() -> None:
    """[search] continuation_history: a cutoff by a quiet move after a given move
    raises that pair's entry and lowers the quiet moves tried before it (within the
    gravity bound); the picker then orders it first among the quiet moves after the
    same move, and not after another one. Off, the table is empty and nothing moves."""
    from blitzaco.movepick import CONTINUATION_LIMIT, CONTINUATION_SIZE, move_column, piece_square, previous_move

    own = Board.from_chess(chess.Board())
    own.make(encode_move(chess.Move.from_uci("e2e4")))  # the move before: a pawn to e4
    previous = previous_move(own)
    memory = OrderingMemory(True, False, True, continuation=True)
    assert len(memory.continuation) == CONTINUATION_SIZE
    assert len(OrderingMemory(True, False, True).continuation) == 0
    refutation = encode_move(chess.Move.from_uci("a7a6"))  # the last quiet move in any plain order
    tried = [encode_move(chess.Move.from_uci(uci)) for uci in ("g8f6", "b8c6")]
    for i, code in enumerate(tried):
        memory.tried[i] = code
    for _ in range(40):  # far past the bound: gravity keeps every entry within it
        memory.reward_continuation(own, 0, refutation, 9, previous, len(tried))
    row = memory.continuation_row(own, previous)
    assert row == piece_square(own, chess.E4) * 768
    assert 0 < memory.continuation[row + move_column(own, refutation)] <= CONTINUATION_LIMIT
    assert all(-CONTINUATION_LIMIT <= memory.continuation[row + move_column(own, code)] < 0 for code in tried)
    quiets = _quiets(_pick_all(own, memory, 0, 0, previous, see_ordering=True))
    assert quiets[0] == refutation and set(tried) <= set(quiets[-4:])
    own_other = Board.from_chess(chess.Board())
    own_other.make(encode_move(chess.Move.from_uci("d2d4")))  # another move before: no entry
    assert _quiets(_pick_all(own_other, memory, 0, 0, previous_move(own_other), see_ordering=True))[0] != refutation


def test_a_quiet_moves_history_for_pruning_adds_its_continuation_history_after_the_previous_move() -> None:
    """[search] history_pruning reads :meth:`MovePicker.quiet_history`: the move's
    history, plus its continuation history after the move that led to the node where
    that table is on; after another move, or without the table, the history alone."""
    from blitzaco.movepick import move_column, previous_move

    own = Board.from_chess(chess.Board())
    own.make(encode_move(chess.Move.from_uci("e2e4")))
    previous = previous_move(own)
    move = encode_move(chess.Move.from_uci("a7a6"))
    for continuation in (True, False):
        memory = OrderingMemory(True, False, True, continuation=continuation)
        memory.history[own.side << 12 | (move & 4095)] = -40
        picker = MovePicker(own, memory, vec[i64]([0] * MAX_MOVES), see_scratch(), None, False, 0)
        if continuation:
            memory.continuation[memory.continuation_row(own, previous) + move_column(own, move)] = -300
        picker.start(0, previous)
        assert picker.quiet_history(move) == (-340 if continuation else -40)
        picker.start(0, 0)  # no move before (the root, a null move): the history alone
        assert picker.quiet_history(move) == -40


def test_history_with_gravity_stays_within_its_bound_and_orders_the_refutation_first() -> None:
    """[search] history_gravity: a cutoff raises its quiet move's history and lowers
    the ones tried before it, each entry within +-the bound however many cutoffs, and
    the refutation is ordered first; without gravity the same cutoffs pass the bound
    (the plain table grows by depth squared until 2^20)."""
    from blitzaco.movepick import HISTORY_LIMIT

    own = Board.from_chess(chess.Board())
    refutation = encode_move(chess.Move.from_uci("a2a3"))  # the last quiet move in any plain order
    tried = [encode_move(chess.Move.from_uci(uci)) for uci in ("g1f3", "b1c3")]
    bound = 16384
    memory = OrderingMemory(False, False, True, gravity=bound)
    plain = OrderingMemory(False, False, True)
    for table in (memory, plain):
        for i, code in enumerate(tried):
            table.tried[i] = code
        for _ in range(300):  # far past the bound: 300 cutoffs at depth 9 (plain: 24,300)
            table.reward(0, own.side, refutation, 9, 0, len(tried))
    index = own.side << 12
    assert 0 < memory.history[index | (refutation & 4095)] <= bound
    assert all(-bound <= memory.history[index | (code & 4095)] < 0 for code in tried)
    assert bound < plain.history[index | (refutation & 4095)] <= HISTORY_LIMIT
    quiets = _quiets(_pick_all(own, memory, 0, 0, 0, see_ordering=True))
    assert quiets[0] == refutation and set(tried) <= set(quiets[-2:])


def test_capture_history_orders_captures_of_one_victim_by_their_cutoffs() -> None:
    """[search] capture_history: captures are ordered by victim first, whatever the
    history; among captures of the same victim a cutoff's capture rises above the
    ones tried before it (each kept within the bound), where plain MVV-LVA puts the
    cheaper attacker first. Off, no table is allocated."""
    from blitzaco.movepick import CAPTURE_LIMIT, CAPTURE_SIZE, capture_index

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
    for _ in range(30):
        memory.reward_captures(own, 0, bishop, 10, True, 1)  # the bishop's capture refuted, the knight's tried first
    assert 0 < memory.captures[capture_index(own, bishop)] <= CAPTURE_LIMIT
    assert -CAPTURE_LIMIT <= memory.captures[capture_index(own, knight)] < 0
    assert _pick_all(own, memory, 0, 0, 0, see_ordering=False).moves[:3] == [rook, bishop, knight]


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
