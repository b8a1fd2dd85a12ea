"""Move ordering, and static exchange evaluation.

Moves come in stages so that a node that is cut off early never pays for the rest:

1. the transposition table's move, checked only for pseudo-legality;
2. captures and queen promotions whose exchange does not lose material, most
   valuable victim first (least valuable attacker breaking ties);
3. the two killer moves of this ply and the counter-move to the opponent's last move;
4. the other quiet moves: those on a pheromone trail first (strongest first), then
   the rest by history score;
5. captures that lose material (by SEE) and under-promotions.

Moves are pseudo-legal: the search makes each one and drops it if it left the king in
check, which costs one attack test instead of a legality test of every generated move.
Moves are passed around encoded as integers (see :func:`blitzaco.tt.encode_move`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Final

import chess

from blitzaco.moves import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, decode_move, encode_move

__all__ = [
    "SEE_VALUES", "mvv_lva", "see_ge", "see_code_ge", "ordered_moves", "capture_moves", "evasions", "CheckTest",
    "attacked_by", "is_check", "was_into_check", "legality_masks", "evasion_codes", "RISKY", "CODE_MASK",
]

#: Piece values for the exchange evaluation, by piece type (centipawns; the king is
#: never captured, its value only has to exceed everything else).
SEE_VALUES: Final = (0, 100, 320, 330, 500, 950, 20000)


def mvv_lva(victim: int, attacker: int, promotion: int = 0) -> int:
    """Ordering key of a capture or promotion by piece types (0: none): the most
    valuable victim first, then the cheaper attacker; a promotion counts as
    capturing its piece."""
    return (victim + promotion) * 8 - attacker


# A capture waiting to be sorted is one integer,
#     mvv_lva << 28 | (2047 - index) << 16 | risky << 15 | code,
# so that the list sorts as plain integers (several times cheaper than tuples by a key
# function): most valuable victim first, then the cheaper attacker, then generation
# order (as a stable sort would keep it; the order decides which tree is searched).
_KEY_SHIFT: Final = 28
_RISKY_FLAG: Final = 1 << 15
_CODE_MASK: Final = _RISKY_FLAG - 1
_CODE_AND_FLAG: Final = _RISKY_FLAG | _CODE_MASK
#: For the users of :func:`capture_moves`.
RISKY: Final = _RISKY_FLAG
CODE_MASK: Final = _CODE_MASK
#: ``_RISKY[attacker][victim]``: only a capture by a more valuable piece can lose
#: the exchange, so only those are checked by SEE (the flag as it sits in an entry).
_RISKY: Final = tuple(
    tuple(_RISKY_FLAG if SEE_VALUES[attacker] > SEE_VALUES[victim] else 0 for victim in range(7))
    for attacker in range(7)
)
#: ``_CAPTURE[attacker][victim]``: the entry's key and risk flag, index and code to add.
_CAPTURE: Final = tuple(
    tuple(mvv_lva(victim, attacker) << _KEY_SHIFT | _RISKY[attacker][victim] for victim in range(7))
    for attacker in range(7)
)
#: A pawn capturing and promoting to a queen, by victim; a quiet queen promotion.
_QUEEN_CAPTURE: Final = tuple(mvv_lva(victim, chess.PAWN, chess.QUEEN) << _KEY_SHIFT for victim in range(7))
_QUEEN_PUSH: Final = mvv_lva(0, 0, chess.QUEEN) << _KEY_SHIFT
_INDEX_STEP: Final = 1 << 16
_FIRST_INDEX: Final = 2047 << 16

_BB_SQUARES: Final = chess.BB_SQUARES
_BB_ALL: Final = chess.BB_ALL
_PAWN_ATTACKS: Final = chess.BB_PAWN_ATTACKS
_KNIGHT_ATTACKS: Final = chess.BB_KNIGHT_ATTACKS
_KING_ATTACKS: Final = chess.BB_KING_ATTACKS
_DIAG_MASKS: Final = chess.BB_DIAG_MASKS
_DIAG_ATTACKS: Final = chess.BB_DIAG_ATTACKS
_FILE_MASKS: Final = chess.BB_FILE_MASKS
_FILE_ATTACKS: Final = chess.BB_FILE_ATTACKS
_RANK_MASKS: Final = chess.BB_RANK_MASKS
_RANK_ATTACKS: Final = chess.BB_RANK_ATTACKS
#: Squares a bishop, rook or queen on each square reaches on an empty board: a piece
#: with no victim on its rays needs no attack lookup.
_DIAG_RAYS: Final = [_DIAG_ATTACKS[sq][0] for sq in chess.SQUARES]
_LINE_RAYS: Final = [_RANK_ATTACKS[sq][0] | _FILE_ATTACKS[sq][0] for sq in chess.SQUARES]
_BACKRANKS: Final = chess.BB_RANK_1 | chess.BB_RANK_8
_NOT_FILE_A: Final = ~chess.BB_FILE_A & chess.BB_ALL
_NOT_FILE_H: Final = ~chess.BB_FILE_H & chess.BB_ALL
#: The rank a pawn about to promote stands on, and the rank from which it can
#: capture en passant, by colour.
_SEVENTH: Final = (chess.BB_RANK_2, chess.BB_RANK_7)
_EP_RANKS: Final = (chess.BB_RANK_4, chess.BB_RANK_5)

#: Sort key of a quiet move with a pheromone trail: above every history score.
PRIOR_BASE: Final = 1 << 40
#: Trail levels (0 to max_level) to sort key units.
PRIOR_SCALE: Final = 1_000_000


def attacked_by(board: chess.Board, color: chess.Color, square: chess.Square) -> bool:
    """Whether *color* attacks *square* (python-chess's ``is_attacked_by`` without
    building the whole attacker set: each piece kind is tried in turn and the first
    hit answers; a slider lookup only when a slider stands on the empty-board ray)."""
    them = board.occupied_co[color]
    if _KNIGHT_ATTACKS[square] & board.knights & them or _PAWN_ATTACKS[not color][square] & board.pawns & them:
        return True
    queens = board.queens & them
    diagonal = _DIAG_RAYS[square] & (board.bishops & them | queens)
    if diagonal and _DIAG_ATTACKS[square][_DIAG_MASKS[square] & board.occupied] & diagonal:
        return True
    straight = _LINE_RAYS[square] & (board.rooks & them | queens)
    if straight:
        occupied = board.occupied
        rank = _RANK_ATTACKS[square][_RANK_MASKS[square] & occupied]
        if (rank | _FILE_ATTACKS[square][_FILE_MASKS[square] & occupied]) & straight:
            return True
    return bool(_KING_ATTACKS[square] & board.kings & them)


def is_check(board: chess.Board) -> bool:
    """Whether the side to move is in check (``board.is_check()``, cheaper)."""
    us = board.turn
    king = board.kings & board.occupied_co[us]
    return bool(king) and attacked_by(board, not us, king.bit_length() - 1)


def was_into_check(board: chess.Board) -> bool:
    """Whether the move just made left its own king attacked (``was_into_check``)."""
    us = board.turn
    king = board.kings & board.occupied_co[not us]
    return bool(king) and attacked_by(board, us, king.bit_length() - 1)


def _piece_type(board: chess.Board, bb: int) -> int:
    """The type of the piece on the one square of *bb* (0: empty); cheaper than
    ``piece_type_at`` for a square already in hand as a bitboard."""
    if board.pawns & bb:
        return PAWN
    if board.knights & bb:
        return KNIGHT
    if board.bishops & bb:
        return BISHOP
    if board.rooks & bb:
        return ROOK
    if board.queens & bb:
        return QUEEN
    if board.kings & bb:
        return KING
    return 0


def see_ge(board: chess.Board, move: chess.Move, threshold: int = 0) -> bool:
    """Whether the exchange started by *move* on its target square wins at least
    *threshold* centipawns, both sides recapturing with their least valuable piece
    (x-rays included, pins ignored). Castling, en passant and promotions count 0."""
    return see_code_ge(board, encode_move(move), threshold)


def see_code_ge(board: chess.Board, code: int, threshold: int = 0) -> bool:
    """:func:`see_ge` for a move given as its code."""
    frm, to = code & 63, code >> 6 & 63
    from_bb, to_bb = _BB_SQUARES[frm], _BB_SQUARES[to]
    if code >> 12:
        return threshold <= 0
    us = board.turn
    if board.kings & from_bb and (
        abs((to & 7) - (frm & 7)) > 1 or board.rooks & board.occupied_co[us] & to_bb
    ):  # castling
        return threshold <= 0
    victim = _piece_type(board, to_bb)
    if not victim:  # en passant or a quiet move
        en_passant = to == board.ep_square and board.pawns & from_bb and (to - frm) & 7
        return threshold <= (SEE_VALUES[PAWN] if en_passant else 0)
    swap = SEE_VALUES[victim] - threshold
    if swap < 0:
        return False
    swap = SEE_VALUES[_piece_type(board, from_bb)] - swap
    if swap <= 0:
        return True
    occupied = board.occupied ^ from_bb ^ to_bb
    pawns, knights, kings = board.pawns, board.knights, board.kings
    diagonal = board.bishops | board.queens
    straight = board.rooks | board.queens
    white, black = board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK]
    attackers = (
        (_PAWN_ATTACKS[chess.BLACK][to] & pawns & white)
        | (_PAWN_ATTACKS[chess.WHITE][to] & pawns & black)
        | (_KNIGHT_ATTACKS[to] & knights)
        | (_KING_ATTACKS[to] & kings)
        | (_DIAG_ATTACKS[to][_DIAG_MASKS[to] & occupied] & diagonal)
        | ((_RANK_ATTACKS[to][_RANK_MASKS[to] & occupied] | _FILE_ATTACKS[to][_FILE_MASKS[to] & occupied]) & straight)
    )
    side = us
    result = 1
    while True:
        side = not side
        attackers &= occupied
        mine = attackers & (white if side else black)
        if not mine:
            break
        result ^= 1
        if mine & pawns:
            swap = SEE_VALUES[PAWN] - swap
            if swap < result:
                break
            occupied ^= (mine & pawns) & -(mine & pawns)
            attackers |= _DIAG_ATTACKS[to][_DIAG_MASKS[to] & occupied] & diagonal
        elif mine & knights:
            swap = SEE_VALUES[KNIGHT] - swap
            if swap < result:
                break
            occupied ^= (mine & knights) & -(mine & knights)
        elif mine & board.bishops:
            swap = SEE_VALUES[BISHOP] - swap
            if swap < result:
                break
            piece = mine & board.bishops
            occupied ^= piece & -piece
            attackers |= _DIAG_ATTACKS[to][_DIAG_MASKS[to] & occupied] & diagonal
        elif mine & board.rooks:
            swap = SEE_VALUES[ROOK] - swap
            if swap < result:
                break
            piece = mine & board.rooks
            occupied ^= piece & -piece
            attackers |= (
                _RANK_ATTACKS[to][_RANK_MASKS[to] & occupied] | _FILE_ATTACKS[to][_FILE_MASKS[to] & occupied]
            ) & straight
        elif mine & board.queens:
            swap = SEE_VALUES[QUEEN] - swap
            if swap < result:
                break
            piece = mine & board.queens
            occupied ^= piece & -piece
            attackers |= (_DIAG_ATTACKS[to][_DIAG_MASKS[to] & occupied] & diagonal) | (
                (_RANK_ATTACKS[to][_RANK_MASKS[to] & occupied] | _FILE_ATTACKS[to][_FILE_MASKS[to] & occupied])
                & straight
            )
        else:  # only the king is left: it may recapture only if nothing defends
            theirs = attackers & (black if side else white)
            return bool(result ^ 1) if theirs else bool(result)
    return bool(result)


def _captures(
    board: chess.Board, victims: chess.Bitboard, from_mask: chess.Bitboard, ep_mask: chess.Bitboard,
    late: list[int] | None,
) -> list[int]:
    """Pseudo-legal captures of the pieces on *victims* by our pieces on *from_mask*
    (and en passant captures when the en passant square is on *ep_mask*), as sort
    entries (see ``_KEY_SHIFT``) in the order python-chess generates them: pieces
    by square from h8 down, pawns after them, en passant last. The order matters:
    sorting is stable, so it breaks ties, and a different order would search a
    different tree. An entry is flagged risky when the capture is by a more valuable
    piece, the only kind whose exchange can lose. Promotions by capture come as the
    queen's; the under-promotions go to *late*, or nowhere when it is None.

    The victim's type is found by the same chain of bitboard tests in both loops,
    written out on purpose: a helper call per capture costs more than the lines."""
    us = board.turn
    ours = board.occupied_co[us]
    occupied = board.occupied
    pawns, knights, bishops, rooks, queens = board.pawns, board.knights, board.bishops, board.rooks, board.queens
    out: list[int] = []
    append = out.append
    index = _FIRST_INDEX  # (2047 - generation index) << 16
    pieces = ours & ~pawns & from_mask
    while pieces:
        frm = pieces.bit_length() - 1
        bit = 1 << frm
        pieces ^= bit
        if knights & bit:
            attacker, targets = KNIGHT, _KNIGHT_ATTACKS[frm] & victims
        elif bishops & bit:
            if not _DIAG_RAYS[frm] & victims:
                continue
            attacker, targets = BISHOP, _DIAG_ATTACKS[frm][_DIAG_MASKS[frm] & occupied] & victims
        elif rooks & bit:
            if not _LINE_RAYS[frm] & victims:
                continue
            attacker = ROOK
            targets = (
                _RANK_ATTACKS[frm][_RANK_MASKS[frm] & occupied] | _FILE_ATTACKS[frm][_FILE_MASKS[frm] & occupied]
            ) & victims
        elif queens & bit:
            attacker = QUEEN
            targets = 0
            if _DIAG_RAYS[frm] & victims:
                targets = _DIAG_ATTACKS[frm][_DIAG_MASKS[frm] & occupied] & victims
            if _LINE_RAYS[frm] & victims:
                targets |= (
                    _RANK_ATTACKS[frm][_RANK_MASKS[frm] & occupied] | _FILE_ATTACKS[frm][_FILE_MASKS[frm] & occupied]
                ) & victims
        else:
            attacker, targets = KING, _KING_ATTACKS[frm] & victims
        while targets:
            to = targets.bit_length() - 1
            target = 1 << to
            targets ^= target
            if pawns & target:
                victim = PAWN
            elif knights & target:
                victim = KNIGHT
            elif bishops & target:
                victim = BISHOP
            elif rooks & target:
                victim = ROOK
            elif queens & target:
                victim = QUEEN
            else:  # only in an illegal position (the side not to move in check)
                victim = KING
            append(_CAPTURE[attacker][victim] | index | frm | to << 6)
            index -= _INDEX_STEP
    our_pawns = pawns & ours & from_mask
    if not our_pawns:
        return out
    # Only the pawns that attack a victim (same order: from h8 down).
    if us:
        capturers = our_pawns & (((victims & _NOT_FILE_A) >> 9) | ((victims & _NOT_FILE_H) >> 7))
    else:
        capturers = our_pawns & (((victims & _NOT_FILE_H) << 9) | ((victims & _NOT_FILE_A) << 7))
    pawn_attacks = _PAWN_ATTACKS[us]
    while capturers:
        frm = capturers.bit_length() - 1
        capturers ^= 1 << frm
        targets = pawn_attacks[frm] & victims
        while targets:
            to = targets.bit_length() - 1
            target = 1 << to
            targets ^= target
            if knights & target:
                victim = KNIGHT
            elif bishops & target:
                victim = BISHOP
            elif rooks & target:
                victim = ROOK
            elif queens & target:
                victim = QUEEN
            elif pawns & target:
                victim = PAWN
            else:
                victim = KING
            code = frm | to << 6
            if target & _BACKRANKS:
                append(_QUEEN_CAPTURE[victim] | index | code | QUEEN << 12)
                if late is not None:
                    late.append(code | ROOK << 12)
                    late.append(code | BISHOP << 12)
                    late.append(code | KNIGHT << 12)
            else:
                append(_CAPTURE[PAWN][victim] | index | code)
            index -= _INDEX_STEP
    ep_square = board.ep_square
    if ep_square and _BB_SQUARES[ep_square] & ep_mask & ~occupied:
        for frm in _scan(our_pawns & _PAWN_ATTACKS[not us][ep_square] & _EP_RANKS[us]):
            append(_CAPTURE[PAWN][PAWN] | index | frm | ep_square << 6)
            index -= _INDEX_STEP
    return out


def _scan(bb: int) -> Iterator[int]:
    """The squares of *bb*, from h8 down (python-chess's ``scan_reversed``)."""
    while bb:
        square = bb.bit_length() - 1
        bb ^= 1 << square
        yield square


def _queen_pushes(board: chess.Board, promoting: chess.Bitboard) -> list[int]:
    """Quiet promotions to a queen of the pawns on *promoting*, from h8 down."""
    free = ~board.occupied & _BACKRANKS
    targets = (promoting << 8 if board.turn else promoting >> 8) & free
    step = -8 if board.turn else 8
    return [to + step | to << 6 | QUEEN << 12 for to in _scan(targets)]


def capture_moves(board: chess.Board, targets: chess.Bitboard = _BB_ALL) -> list[int]:
    """Pseudo-legal captures of pieces on *targets* (en passant only when all are
    targets), every capture by a promoting pawn, and quiet queen promotions, as move
    codes; most valuable victim first. Under-promotions are left out. A code has
    :data:`RISKY` set when its exchange can lose (a capture by a more valuable
    piece): only those need :func:`see_code_ge`, the others never lose material
    (``code & CODE_MASK`` is the move)."""
    us = board.turn
    theirs = board.occupied_co[not us]
    scored = _captures(board, theirs & targets, _BB_ALL, targets, None)
    promoting = board.pawns & board.occupied_co[us] & _SEVENTH[us]
    if promoting:
        if targets != _BB_ALL:
            for entry in _captures(board, theirs & ~targets, promoting, 0, None):
                scored.append(entry & ~(2047 << 16) | (2047 - len(scored)) << 16)
        for code in _queen_pushes(board, promoting):
            scored.append(_QUEEN_PUSH | (2047 - len(scored)) << 16 | code)
    scored.sort(reverse=True)
    return [entry & _CODE_AND_FLAG for entry in scored]


def _first(item: tuple[int, int] | tuple[int, int, bool]) -> int:
    return item[0]


def ordered_moves(
    board: chess.Board,
    tt_move: int,
    killers: Sequence[int],
    counter: int,
    history: list[int],
    use_see: bool = True,
    prior: dict[int, float] | None = None,
) -> Iterator[tuple[int, bool]]:
    """All pseudo-legal moves in stages, as move codes, each with whether it is
    tactical (a capture or a promotion). *history* is indexed by
    ``side << 12 | from << 6 | to``. *prior*: pheromone levels by move code; marked
    quiet moves come first among the quiet moves, strongest first."""
    us = board.turn
    theirs = board.occupied_co[not us]
    if tt_move:
        move = decode_move(tt_move)
        if move is not None and board.is_pseudo_legal(move):
            yield tt_move, bool(move.promotion or theirs & _BB_SQUARES[move.to_square] or board.is_en_passant(move))

    # captures and promotions
    late: list[int] = []  # losing captures and under-promotions
    tactical = _captures(board, theirs, _BB_ALL, _BB_ALL, late)
    index = len(tactical)  # the next generation index (the table move may leave a gap)
    if tt_move:
        tactical = [entry for entry in tactical if entry & _CODE_MASK != tt_move]
        late = [code for code in late if code != tt_move]
    promoting = board.pawns & board.occupied_co[us] & _SEVENTH[us]
    if promoting:
        for code in _queen_pushes(board, promoting):
            if code != tt_move:
                tactical.append(_QUEEN_PUSH | (2047 - index) << 16 | code)
                index += 1
            for under in (ROOK, BISHOP, KNIGHT):
                under_code = code ^ (QUEEN ^ under) << 12
                if under_code != tt_move:
                    late.append(under_code)
    tactical.sort(reverse=True)
    for entry in tactical:
        code = entry & _CODE_MASK
        if use_see and entry & _RISKY_FLAG and not see_code_ge(board, code):
            late.append(code)
            continue
        yield code, True

    # killers and the counter-move
    specials = []
    for code in (killers[0], killers[1], counter):
        if code and code != tt_move and code not in specials:
            move = decode_move(code)
            if (
                move is not None
                and not move.promotion
                and not theirs & _BB_SQUARES[move.to_square]
                and board.is_pseudo_legal(move)
                and not board.is_en_passant(move)
            ):
                specials.append(code)
                yield code, False

    # quiet moves by history, generated in python-chess's order (see _captures)
    base = us << 12
    ours = board.occupied_co[us]
    occupied = board.occupied
    empty = ~occupied & _BB_ALL
    pawns, knights, bishops, rooks, queens = board.pawns, board.knights, board.bishops, board.rooks, board.queens
    skip = specials + [tt_move] if tt_move else specials
    # Each quiet move as one sort key, history << 16 | (65535 - its index): sorting
    # plain integers is several times cheaper than sorting tuples by a key function,
    # and the index keeps equal histories in generation order, as a stable sort would.
    codes: list[int] = []
    keys: list[int] = []
    add_code = codes.append
    add_key = keys.append
    pieces = ours & ~pawns
    while pieces:
        frm = pieces.bit_length() - 1
        bit = 1 << frm
        pieces ^= bit
        if knights & bit:
            targets = _KNIGHT_ATTACKS[frm] & empty
        elif bishops & bit:
            targets = _DIAG_ATTACKS[frm][_DIAG_MASKS[frm] & occupied] & empty
        elif rooks & bit:
            targets = (
                _RANK_ATTACKS[frm][_RANK_MASKS[frm] & occupied] | _FILE_ATTACKS[frm][_FILE_MASKS[frm] & occupied]
            ) & empty
        elif queens & bit:
            targets = (
                _DIAG_ATTACKS[frm][_DIAG_MASKS[frm] & occupied]
                | _RANK_ATTACKS[frm][_RANK_MASKS[frm] & occupied]
                | _FILE_ATTACKS[frm][_FILE_MASKS[frm] & occupied]
            ) & empty
        else:
            targets = _KING_ATTACKS[frm] & empty
        while targets:
            to = targets.bit_length() - 1
            targets ^= 1 << to
            code = frm | to << 6
            if code not in skip:
                add_key(history[base | code] << 16 | 65535 - len(codes))
                add_code(code)
    our_pawns = pawns & ours
    if our_pawns:
        if us:
            singles = our_pawns << 8 & empty & ~_BACKRANKS
            doubles = (our_pawns << 8 & empty) << 8 & empty & (chess.BB_RANK_3 | chess.BB_RANK_4)
            step = -8
        else:
            singles = our_pawns >> 8 & empty & ~_BACKRANKS
            doubles = (our_pawns >> 8 & empty) >> 8 & empty & (chess.BB_RANK_6 | chess.BB_RANK_5)
            step = 8
        for to in _scan(singles):
            code = (to + step) | to << 6
            if code not in skip:
                add_key(history[base | code] << 16 | 65535 - len(codes))
                add_code(code)
        step *= 2
        for to in _scan(doubles):
            code = (to + step) | to << 6
            if code not in skip:
                add_key(history[base | code] << 16 | 65535 - len(codes))
                add_code(code)
    if board.castling_rights & ours:
        for move in board.generate_castling_moves():
            code = encode_move(move)
            if code not in skip:
                add_key(history[base | (code & 4095)] << 16 | 65535 - len(codes))
                add_code(code)
    if prior:
        for index, code in enumerate(codes):
            level = prior.get(code)
            if level is not None:
                keys[index] = (PRIOR_BASE + int(level * PRIOR_SCALE)) << 16 | 65535 - index
    keys.sort(reverse=True)
    for key in keys:
        yield codes[65535 - (key & 65535)], False
    for code in late:
        yield code, True


class CheckTest:
    """Which quiet moves of the side to move might give check, without making them.

    Never wrong in the safe direction: :meth:`maybe` is true for every move that gives
    check (and for some that do not, which the search then makes and tests).
    A quiet move gives check either directly (the piece lands on a square from which
    it attacks the king, computed with the current occupancy: a slider moving along
    its own line to the king could only check if it already did, which is illegal)
    or by discovery (it leaves the line between the king and one of our sliders).
    """

    __slots__ = ("squares", "discoverers")

    def __init__(self, board: chess.Board) -> None:
        us = board.turn
        king = board.king(not us)
        assert king is not None
        occupied = board.occupied
        diagonal = _DIAG_ATTACKS[king][_DIAG_MASKS[king] & occupied]
        straight = (
            _RANK_ATTACKS[king][_RANK_MASKS[king] & occupied] | _FILE_ATTACKS[king][_FILE_MASKS[king] & occupied]
        )
        pawn, knight = _PAWN_ATTACKS[not us][king], _KNIGHT_ATTACKS[king]
        self.squares = (0, pawn, knight, diagonal, straight, diagonal | straight, 0)
        ours = board.occupied_co[us]
        snipers = ours & (
            ((_RANK_ATTACKS[king][0] | _FILE_ATTACKS[king][0]) & (board.rooks | board.queens))
            | (_DIAG_ATTACKS[king][0] & (board.bishops | board.queens))
        )
        discoverers = 0
        for sniper in chess.scan_forward(snipers):
            blocker = chess.between(king, sniper) & occupied
            if blocker and not blocker & (blocker - 1) and blocker & ours:
                discoverers |= blocker
        self.discoverers = discoverers

    def maybe(self, board: chess.Board, code: int) -> bool:
        """False only if the quiet move *code* certainly does not give check."""
        from_bb = _BB_SQUARES[code & 63]
        if from_bb & self.discoverers:
            return True
        to = code >> 6 & 63
        if board.kings & from_bb:  # only castling can check
            return abs((to & 7) - (code & 7)) > 1 or bool(board.rooks & board.occupied_co[board.turn] & _BB_SQUARES[to])
        return bool(_BB_SQUARES[to] & self.squares[_piece_type(board, from_bb)])


#: Evasion order keys: the table's move above every capture, captures above quiet moves.
_EVASION_TT_KEY: Final = 1 << 20
_EVASION_CAPTURE_BASE: Final = 1000


def evasion_codes(board: chess.Board) -> list[int]:
    """The candidate moves out of check, as codes, in exactly the order of
    python-chess's legal generator (``Board._generate_evasions``): king steps off
    the checking lines, then (against a single checker) captures of it and blocks
    by the other pieces, pawn captures, pushes and double pushes, en passant. They
    are pseudo-legal: a pinned piece's move or a king step to a defended square is
    among them, and the search drops it after making it (:func:`legality_masks`),
    as it drops the other illegal moves. The same order as python-chess's means
    the same tree as when the evasions came from it, at a fraction of its cost."""
    us = board.turn
    ours = board.occupied_co[us]
    theirs = board.occupied_co[not us]
    occupied = board.occupied
    king_bb = board.kings & ours
    if not king_bb:
        return []
    king = king_bb.bit_length() - 1
    checkers = board.attackers_mask(not us, king)
    if not checkers:
        return []
    sliders = checkers & (board.bishops | board.rooks | board.queens)
    attacked = 0
    while sliders:
        checker = sliders.bit_length() - 1
        sliders ^= 1 << checker
        attacked |= chess.BB_RAYS[king][checker] & ~_BB_SQUARES[checker]
    codes = [king | to << 6 for to in _scan(_KING_ATTACKS[king] & ~ours & ~attacked)]
    checker = checkers.bit_length() - 1
    if checkers & (checkers - 1):
        return codes  # double check: only the king moves
    target = chess.between(king, checker) | checkers
    append = codes.append
    pawns = board.pawns
    for frm in _scan(ours & ~pawns & ~board.kings):
        bit = _BB_SQUARES[frm]
        if board.knights & bit:
            moves = _KNIGHT_ATTACKS[frm]
        elif board.bishops & bit:
            moves = _DIAG_ATTACKS[frm][_DIAG_MASKS[frm] & occupied]
        elif board.rooks & bit:
            moves = _RANK_ATTACKS[frm][_RANK_MASKS[frm] & occupied] | _FILE_ATTACKS[frm][_FILE_MASKS[frm] & occupied]
        else:  # a queen
            moves = (
                _DIAG_ATTACKS[frm][_DIAG_MASKS[frm] & occupied]
                | _RANK_ATTACKS[frm][_RANK_MASKS[frm] & occupied]
                | _FILE_ATTACKS[frm][_FILE_MASKS[frm] & occupied]
            )
        for to in _scan(moves & ~ours & target):
            append(frm | to << 6)
    our_pawns = pawns & ours
    if our_pawns:
        pawn_attacks = _PAWN_ATTACKS[us]
        for frm in _scan(our_pawns):
            for to in _scan(pawn_attacks[frm] & theirs & target):
                _add_pawn_move(append, frm, to)
        if us:
            single = our_pawns << 8 & ~occupied
            double = single << 8 & ~occupied & chess.BB_RANK_4
        else:
            single = our_pawns >> 8 & ~occupied
            double = single >> 8 & ~occupied & chess.BB_RANK_5
        step = -8 if us else 8
        for to in _scan(single & target):
            _add_pawn_move(append, to + step, to)
        for to in _scan(double & target):
            append(to + 2 * step | to << 6)
    ep_square = board.ep_square
    if ep_square and not _BB_SQUARES[ep_square] & occupied:
        # En passant blocking the check (the square between) or taking the checker.
        if _BB_SQUARES[ep_square] & target or ep_square + (-8 if us else 8) == checker:
            for frm in _scan(our_pawns & _PAWN_ATTACKS[not us][ep_square] & _EP_RANKS[us]):
                append(frm | ep_square << 6)
    return codes


def _add_pawn_move(append: Callable[[int], None], frm: int, to: int) -> None:
    """A pawn move, as the four promotions (queen first) on the last rank."""
    code = frm | to << 6
    if _BB_SQUARES[to] & _BACKRANKS:
        append(code | QUEEN << 12)
        append(code | ROOK << 12)
        append(code | BISHOP << 12)
        append(code | KNIGHT << 12)
    else:
        append(code)


def evasions(board: chess.Board, tt_move: int) -> list[tuple[int, bool]]:
    """The moves out of check (:func:`evasion_codes`: pseudo-legal, the search tests
    them): the table's move, then captures by most valuable victim, then the rest.
    Each comes with whether it is tactical."""
    theirs = board.occupied_co[not board.turn]
    ep_square = board.ep_square
    scored = []
    for code in evasion_codes(board):
        to = code >> 6 & 63
        to_bb = _BB_SQUARES[to]
        frm_bb = _BB_SQUARES[code & 63]
        en_passant = to == ep_square and board.pawns & frm_bb and not to_bb & board.occupied
        tactical = bool(theirs & to_bb or code >> 12 or en_passant)
        if code == tt_move:
            key = _EVASION_TT_KEY
        elif tactical:
            victim = _piece_type(board, to_bb) or PAWN
            key = _EVASION_CAPTURE_BASE + mvv_lva(victim, _piece_type(board, frm_bb))
        else:
            key = 0
        scored.append((key, code, tactical))
    scored.sort(key=_first, reverse=True)
    return [(code, tactical) for _, code, tactical in scored]


def legality_masks(board: chess.Board) -> tuple[chess.Bitboard, chess.Square | None]:
    """Which pseudo-legal moves need the after-make test "is my king attacked?"
    (:func:`was_into_check`): those from a square of the first mask, and those to the
    en passant square (the second). The search writes the test inline:
    ``(BB_SQUARES[code & 63] & suspects or code >> 6 & 63 == ep_square)``.

    Only king moves, en passant captures and moves of a piece standing on a line
    through the king (it may be pinned) can leave it attacked; in check, the same
    holds for the evasions (:func:`evasion_codes`), which block or take the checker
    or move the king."""
    king = board.kings & board.occupied_co[board.turn]
    lines = _KING_LINES[king.bit_length() - 1] if king else chess.BB_ALL
    return lines | board.kings, board.ep_square


#: Squares on a rank, file or diagonal through each square (the square excluded).
_KING_LINES: Final = [
    (chess.BB_RANK_ATTACKS[sq][0] | chess.BB_FILE_ATTACKS[sq][0] | chess.BB_DIAG_ATTACKS[sq][0]) for sq in chess.SQUARES
]
