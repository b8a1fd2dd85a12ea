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

import itertools
from collections.abc import Iterator, Sequence

import chess

from blitzaco.tt import decode_move

__all__ = ["SEE_VALUES", "see_ge", "ordered_moves", "capture_moves", "mvv_lva", "CheckTest"]

#: Piece values for the exchange evaluation, by piece type (centipawns; the king is
#: never captured, its value only has to exceed everything else).
SEE_VALUES = (0, 100, 320, 330, 500, 950, 20000)

_BB_SQUARES = chess.BB_SQUARES
_BB_ALL = chess.BB_ALL
_PAWN_ATTACKS = chess.BB_PAWN_ATTACKS
_KNIGHT_ATTACKS = chess.BB_KNIGHT_ATTACKS
_KING_ATTACKS = chess.BB_KING_ATTACKS
_DIAG_MASKS, _DIAG_ATTACKS = chess.BB_DIAG_MASKS, chess.BB_DIAG_ATTACKS
_FILE_MASKS, _FILE_ATTACKS = chess.BB_FILE_MASKS, chess.BB_FILE_ATTACKS
_RANK_MASKS, _RANK_ATTACKS = chess.BB_RANK_MASKS, chess.BB_RANK_ATTACKS
_PAWN, _KNIGHT, _BISHOP, _ROOK, _QUEEN = chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN
_BACKRANKS = chess.BB_RANK_1 | chess.BB_RANK_8
#: Sort key of a quiet move with a pheromone trail: above every history score.
PRIOR_BASE = 1 << 40


def _code(move: chess.Move) -> int:
    return move.from_square | move.to_square << 6 | (move.promotion or 0) << 12


def mvv_lva(board: chess.Board, move: chess.Move) -> int:
    """Ordering key of a capture or promotion: victim first, then the cheaper attacker."""
    victim = board.piece_type_at(move.to_square) or (_PAWN if board.is_en_passant(move) else 0)
    attacker = board.piece_type_at(move.from_square) or 0
    return victim * 8 - attacker + (move.promotion or 0) * 8


def see_ge(board: chess.Board, move: chess.Move, threshold: int = 0) -> bool:
    """Whether the exchange started by *move* on its target square wins at least
    *threshold* centipawns, both sides recapturing with their least valuable piece
    (x-rays included, pins ignored). Castling, en passant and promotions count 0."""
    frm, to = move.from_square, move.to_square
    if move.promotion or board.is_castling(move):
        return threshold <= 0
    victim = board.piece_type_at(to)
    if victim is None:  # en passant or a quiet move
        return threshold <= (SEE_VALUES[_PAWN] if board.is_en_passant(move) else 0)
    swap = SEE_VALUES[victim] - threshold
    if swap < 0:
        return False
    attacker = board.piece_type_at(frm)
    swap = SEE_VALUES[attacker] - swap  # type: ignore[index]
    if swap <= 0:
        return True
    occupied = board.occupied ^ _BB_SQUARES[frm] ^ _BB_SQUARES[to]
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
    side = board.turn
    result = 1
    while True:
        side = not side
        attackers &= occupied
        mine = attackers & (white if side else black)
        if not mine:
            break
        result ^= 1
        if mine & pawns:
            swap = SEE_VALUES[_PAWN] - swap
            if swap < result:
                break
            occupied ^= (mine & pawns) & -(mine & pawns)
            attackers |= _DIAG_ATTACKS[to][_DIAG_MASKS[to] & occupied] & diagonal
        elif mine & knights:
            swap = SEE_VALUES[_KNIGHT] - swap
            if swap < result:
                break
            occupied ^= (mine & knights) & -(mine & knights)
        elif mine & board.bishops:
            swap = SEE_VALUES[_BISHOP] - swap
            if swap < result:
                break
            piece = mine & board.bishops
            occupied ^= piece & -piece
            attackers |= _DIAG_ATTACKS[to][_DIAG_MASKS[to] & occupied] & diagonal
        elif mine & board.rooks:
            swap = SEE_VALUES[_ROOK] - swap
            if swap < result:
                break
            piece = mine & board.rooks
            occupied ^= piece & -piece
            attackers |= (
                _RANK_ATTACKS[to][_RANK_MASKS[to] & occupied] | _FILE_ATTACKS[to][_FILE_MASKS[to] & occupied]
            ) & straight
        elif mine & board.queens:
            swap = SEE_VALUES[_QUEEN] - swap
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


def capture_moves(board: chess.Board, targets: chess.Bitboard = _BB_ALL) -> list[chess.Move]:
    """Pseudo-legal captures of pieces on *targets* (en passant only when all are
    targets), every capture by a promoting pawn, and quiet queen promotions; most
    valuable victim first. Under-promotions are left out."""
    scored = []
    piece_type_at = board.piece_type_at
    us = board.turn
    promoting = board.pawns & board.occupied_co[us] & (chess.BB_RANK_7 if us else chess.BB_RANK_2)
    captures = board.generate_pseudo_legal_captures(_BB_ALL, targets)
    if promoting and targets != _BB_ALL:
        extra = board.occupied_co[not us] & ~targets
        captures = itertools.chain(captures, board.generate_pseudo_legal_captures(promoting, extra))
    for move in captures:
        if move.promotion and move.promotion != _QUEEN:
            continue
        victim = piece_type_at(move.to_square) or _PAWN  # en passant
        attacker: int = piece_type_at(move.from_square)  # type: ignore[assignment]
        scored.append((victim * 8 - attacker + (move.promotion or 0) * 8, move))
    if promoting:
        for move in board.generate_pseudo_legal_moves(promoting, ~board.occupied & _BACKRANKS):
            if move.promotion == _QUEEN:
                scored.append((_QUEEN * 8, move))
    scored.sort(key=_first, reverse=True)
    return [move for _, move in scored]


def _first(item: tuple[int, chess.Move] | tuple[int, chess.Move, bool]) -> int:
    return item[0]


def ordered_moves(
    board: chess.Board,
    tt_move: int,
    killers: Sequence[int],
    counter: int,
    history: list[int],
    use_see: bool = True,
    prior: dict[int, float] | None = None,
) -> Iterator[tuple[chess.Move, bool]]:
    """All pseudo-legal moves in stages, each with whether it is tactical (a capture
    or a promotion). *history* is indexed by ``side << 12 | from << 6 | to``.
    *prior*: pheromone levels by move code; marked quiet moves come first among the
    quiet moves, strongest first."""
    piece_type_at = board.piece_type_at
    theirs = board.occupied_co[not board.turn]
    if tt_move:
        move = decode_move(tt_move)
        if move is not None and board.is_pseudo_legal(move):
            yield move, bool(move.promotion or theirs & _BB_SQUARES[move.to_square] or board.is_en_passant(move))

    # captures and promotions
    tactical: list[tuple[int, chess.Move, bool]] = []
    late: list[chess.Move] = []  # losing captures and under-promotions
    for move in board.generate_pseudo_legal_captures():
        if _code(move) == tt_move:
            continue
        if move.promotion and move.promotion != _QUEEN:
            late.append(move)
            continue
        victim = piece_type_at(move.to_square) or _PAWN  # en passant
        attacker: int = piece_type_at(move.from_square)  # type: ignore[assignment]
        # Only a capture by a more valuable piece can lose the exchange.
        risky = not move.promotion and SEE_VALUES[attacker] > SEE_VALUES[victim]
        tactical.append((victim * 8 - attacker + (move.promotion or 0) * 8, move, risky))
    us = board.turn
    promoting = board.pawns & board.occupied_co[us] & (chess.BB_RANK_7 if us else chess.BB_RANK_2)
    if promoting:
        for move in board.generate_pseudo_legal_moves(promoting, ~board.occupied & _BACKRANKS):
            if _code(move) == tt_move:
                continue
            if move.promotion == _QUEEN:
                tactical.append((_QUEEN * 8, move, False))
            else:
                late.append(move)
    tactical.sort(key=_first, reverse=True)
    for _, move, risky in tactical:
        if use_see and risky and not see_ge(board, move):
            late.append(move)
            continue
        yield move, True

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
                yield move, False

    # quiet moves by history
    base = us << 12
    ep_square = board.ep_square
    quiets = []
    for move in board.generate_pseudo_legal_moves(_BB_ALL, ~board.occupied & _BB_ALL):
        if move.promotion:
            continue
        to = move.to_square
        code = move.from_square | to << 6
        if code == tt_move or code in specials:
            continue
        if to == ep_square and board.pawns & _BB_SQUARES[move.from_square] and (to - move.from_square) & 7:
            continue  # en passant: already among the captures
        quiets.append((history[base | code], move))
    if board.castling_rights & board.occupied_co[us]:
        for move in board.generate_castling_moves():
            code = _code(move)
            if code != tt_move and code not in specials:
                quiets.append((history[base | (code & 4095)], move))
    if prior:
        for index, (_, move) in enumerate(quiets):
            level = prior.get(_code(move))
            if level is not None:
                quiets[index] = (PRIOR_BASE + int(level * 1_000_000), move)
    quiets.sort(key=_first, reverse=True)
    for _, move in quiets:
        yield move, False
    for move in late:
        yield move, True


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

    def maybe(self, board: chess.Board, move: chess.Move) -> bool:
        """False only if the quiet *move* certainly does not give check."""
        frm = move.from_square
        if _BB_SQUARES[frm] & self.discoverers:
            return True
        piece_type = board.piece_type_at(frm)
        if piece_type == chess.KING:
            return board.is_castling(move)
        return bool(_BB_SQUARES[move.to_square] & self.squares[piece_type])  # type: ignore[index]
