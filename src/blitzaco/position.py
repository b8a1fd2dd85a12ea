"""The search's board: a python-chess :class:`chess.Board` plus state the engine
keeps up to date itself around ``push``/``pop``.

python-chess recomputes nothing we need cheaply: its Polyglot hash costs about
20 µs and its repetition test replays the move stack. So :class:`Position` keeps

* a 64-bit Zobrist key, updated from the move in a couple of microseconds. It uses
  the Polyglot random numbers, so for standard chess it equals
  ``chess.polyglot.zobrist_hash(board)``; castling rights are keyed by the rook's
  square, with extra keys for Chess960 rook squares;
* the evaluation's midgame and endgame sums and the game phase;
* the network's accumulator (:mod:`blitzaco.nnue`: one integer whose 16-bit lanes
  are the first layer's sums), when a network is given;
* a stack of the keys of every position since the start of the game, for repetition
  detection that counts the game history before the root.

``push`` expects a legal move (or at least a pseudo-legal one that python-chess
accepts), exactly as ``chess.Board.push`` does.
"""

from __future__ import annotations

import random
from typing import Final

import chess
from chess.polyglot import POLYGLOT_RANDOM_ARRAY

from blitzaco.evaluate import PHASE_WEIGHT, PsqTable
from blitzaco.moves import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, encode_move
from blitzaco.nnue import Network

__all__ = ["Position", "compute_key", "repetition_window"]

#: Each colour's back rank: castling rights it loses when its king moves.
_BACKRANK: Final = (chess.BB_RANK_8, chess.BB_RANK_1)
_BB_SQUARES: Final = chess.BB_SQUARES
_BB_PAWN_ATTACKS: Final = chess.BB_PAWN_ATTACKS


def _piece_key(color: chess.Color, piece_type: chess.PieceType, square: chess.Square) -> int:
    return POLYGLOT_RANDOM_ARRAY[64 * ((piece_type - 1) * 2 + int(color)) + square]


#: Castling rights keyed by the square of the rook that holds them. The four corners
#: use Polyglot's castling numbers; the other squares (Chess960) get numbers of their
#: own from a fixed seed.
_rng = random.Random(0x626C69747A61636F)  # "blitzaco"
_CASTLE_SQUARE_KEY: Final = [_rng.getrandbits(64) for _ in chess.SQUARES]
_CASTLE_SQUARE_KEY[chess.H1] = POLYGLOT_RANDOM_ARRAY[768]
_CASTLE_SQUARE_KEY[chess.A1] = POLYGLOT_RANDOM_ARRAY[769]
_CASTLE_SQUARE_KEY[chess.H8] = POLYGLOT_RANDOM_ARRAY[770]
_CASTLE_SQUARE_KEY[chess.A8] = POLYGLOT_RANDOM_ARRAY[771]
del _rng
_EP_FILE_KEY: Final = tuple(POLYGLOT_RANDOM_ARRAY[772 + file] for file in range(8))
_WHITE_TO_MOVE_KEY: Final = POLYGLOT_RANDOM_ARRAY[780]
_castle_key_cache: Final[dict[int, int]] = {}


def _castle_key(rights: chess.Bitboard) -> int:
    key = _castle_key_cache.get(rights)
    if key is None:
        key = 0
        for square in chess.scan_forward(rights):
            key ^= _CASTLE_SQUARE_KEY[square]
        _castle_key_cache[rights] = key
    return key


def _ep_key(board: chess.Board) -> int:
    """En passant is keyed only when a pawn of the side to move could capture
    (pseudo-legally), as in Polyglot."""
    ep = board.ep_square
    if ep is not None and board.pawns & board.occupied_co[board.turn] & _BB_PAWN_ATTACKS[not board.turn][ep]:
        return _EP_FILE_KEY[ep & 7]
    return 0


def repetition_window(board: chess.Board) -> int:
    """How many of *board*'s last moves repetition detection needs: those since the
    last capture or pawn move (no position before it can recur)."""
    return min(board.halfmove_clock, len(board.move_stack))


def compute_key(board: chess.Board) -> int:
    """The Zobrist key of *board* from scratch (slow; the reference for tests)."""
    key = 0
    for square, piece in board.piece_map().items():
        key ^= _piece_key(piece.color, piece.piece_type, square)
    key ^= _castle_key(board.clean_castling_rights())
    key ^= _ep_key(board)
    if board.turn == chess.WHITE:
        key ^= _WHITE_TO_MOVE_KEY
    return key


#: ``_Tables[color][piece_type][square] == (zobrist, mg, eg, network row)``
_Tables = tuple[tuple[tuple[tuple[int, int, int, int], ...], ...], ...]


def _combine(psq: PsqTable, net: Network | None) -> _Tables:
    return tuple(
        tuple(
            tuple(
                (_piece_key(color, pt, sq), *psq[color][pt][sq], net.rows[color][pt][sq] if net is not None else 0)
                for sq in chess.SQUARES
            )
            if pt
            else ()
            for pt in range(7)
        )
        for color in (chess.BLACK, chess.WHITE)
    )


_tables_cache: Final[dict[tuple[int, int], tuple[PsqTable, Network | None, _Tables]]] = {}
#: What make saves for unmake: key, mg, eg, accumulator, phase, castling key, en
#: passant key, the six piece bitboards, the mover's and the other side's pieces,
#: castling rights, en passant square, halfmove clock.
_Undo = tuple[
    int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, "int | None", int
]


def _tables_for(psq: PsqTable, net: Network | None) -> _Tables:
    cached = _tables_cache.get((id(psq), id(net)))
    if cached is None or cached[0] is not psq or cached[1] is not net:
        cached = (psq, net, _combine(psq, net))
        _tables_cache.clear()
        _tables_cache[(id(psq), id(net))] = cached
    return cached[2]


class Position:
    """A board with incrementally maintained key, evaluation sums and key history.

    Not thread-safe: one search owns one Position.
    """

    __slots__ = (
        "board", "key", "mg", "eg", "acc", "phase", "keys", "root_index",
        "_castle", "_ep", "_undo", "_tables", "_null_barrier", "_null_barriers",
    )

    def __init__(self, board: chess.Board, psq: PsqTable, net: Network | None = None) -> None:
        """Copy *board* and compute the incremental state from scratch. The moves
        since the last capture or pawn move are replayed for repetition detection;
        no position before them can recur, so older history is not needed. With a
        network *net*, :attr:`acc` is its accumulator (else 0)."""
        self._tables = _tables_for(psq, net)
        replay = repetition_window(board)
        if replay < len(board.move_stack):
            board = board.copy(stack=replay)
        root = board.root()
        root.castling_rights = root.clean_castling_rights()
        root.promoted = 0  # only crazyhouse reads it; push leaves it alone
        self.board = root
        self.key = compute_key(root)
        self.mg = self.eg = self.phase = 0
        self.acc = net.bias if net is not None else 0
        for square, piece in root.piece_map().items():
            _, m, e, a = self._tables[piece.color][piece.piece_type][square]
            self.mg += m
            self.eg += e
            self.acc += a
            self.phase += PHASE_WEIGHT[piece.piece_type]
        self._castle = root.castling_rights
        self._ep = _ep_key(root)
        self.keys = [self.key]
        self._undo: list[_Undo] = []
        # Index in keys of the position after the last null move (0: none), and the
        # earlier values to restore when that null move is taken back.
        self._null_barrier = 0
        self._null_barriers: list[int] = []
        for move in board.move_stack:
            self.push_move(move)
        self.root_index = len(self.keys) - 1

    # ------------------------------------------------------------------ make/unmake

    def push_move(self, move: chess.Move) -> None:
        """Make a :class:`chess.Move` (see :meth:`push`)."""
        self.push(encode_move(move))

    def push(self, code: int) -> None:
        """Make the move *code* (``from | to << 6 | promotion << 12``, as
        :func:`blitzaco.moves.encode_move` packs it); the board, key, sums and history
        follow.

        The board's bitboards, castling rights, en passant square and clocks are
        updated here directly, as ``chess.Board.push`` would leave them, and saved in
        one tuple that :meth:`pop` restores: python-chess's own ``push`` snapshots its
        whole state and keeps a move stack, several times the cost. The board's
        ``move_stack`` therefore stays as it was at the root. Castling may be written
        king-two-squares or king-takes-rook (Chess960)."""
        board = self.board
        us = board.turn
        frm = code & 63
        to = code >> 6 & 63
        fbb = _BB_SQUARES[frm]
        tbb = _BB_SQUARES[to]
        occupied_co = board.occupied_co
        ours = occupied_co[us]
        theirs = occupied_co[not us]
        pawns, knights, bishops, rooks, queens, kings = (
            board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings
        )
        rights = board.castling_rights
        ep_square = board.ep_square
        halfmove = board.halfmove_clock
        self._undo.append((
            self.key, self.mg, self.eg, self.acc, self.phase, self._castle, self._ep,
            pawns, knights, bishops, rooks, queens, kings, ours, theirs, rights, ep_square, halfmove,
        ))
        mine = self._tables[us]
        key = self.key ^ self._ep ^ _WHITE_TO_MOVE_KEY
        mg = self.mg
        eg = self.eg
        acc = self.acc
        new_ep = None
        halfmove += 1
        # The mover's type (and below the victim's), written out on purpose: a
        # helper call per move costs more than the repeated tests.
        if pawns & fbb:
            piece_type = PAWN
            pawns ^= fbb
        elif knights & fbb:
            piece_type = KNIGHT
            knights ^= fbb
        elif bishops & fbb:
            piece_type = BISHOP
            bishops ^= fbb
        elif rooks & fbb:
            piece_type = ROOK
            rooks ^= fbb
        elif queens & fbb:
            piece_type = QUEEN
            queens ^= fbb
        else:
            piece_type = KING
        z, m, e, a = mine[piece_type][frm]
        key ^= z
        mg -= m
        eg -= e
        acc -= a
        if piece_type == KING and (ours & tbb or to - frm == 2 or frm - to == 2):
            # Castling, written king-takes-rook (Chess960) or king-two-squares.
            rook_from = to if ours & tbb else (to | 7 if to > frm else to & 56)
            rank = frm & 56
            king_to, rook_to = (rank + 6, rank + 5) if rook_from > frm else (rank + 2, rank + 3)
            rfbb = _BB_SQUARES[rook_from]
            kings = (kings & ~fbb) | _BB_SQUARES[king_to]
            rooks = (rooks & ~rfbb) | _BB_SQUARES[rook_to]
            ours = (ours & ~(fbb | rfbb)) | _BB_SQUARES[king_to] | _BB_SQUARES[rook_to]
            rights &= ~_BACKRANK[us]
            z, m, e, a = mine[ROOK][rook_from]
            key ^= z
            mg -= m
            eg -= e
            acc -= a
            z, m, e, a = mine[KING][king_to]
            key ^= z
            mg += m
            eg += e
            acc += a
            z, m, e, a = mine[ROOK][rook_to]
            key ^= z
            mg += m
            eg += e
            acc += a
        else:
            phase = self.phase
            if theirs & tbb:
                halfmove = 0
                if pawns & tbb:
                    captured = PAWN
                    pawns ^= tbb
                elif knights & tbb:
                    captured = KNIGHT
                    knights ^= tbb
                elif bishops & tbb:
                    captured = BISHOP
                    bishops ^= tbb
                elif rooks & tbb:
                    captured = ROOK
                    rooks ^= tbb
                else:  # a pseudo-legal move never captures the king
                    captured = QUEEN
                    queens ^= tbb
                theirs ^= tbb
                z, m, e, a = self._tables[not us][captured][to]
                key ^= z
                mg -= m
                eg -= e
                acc -= a
                phase -= PHASE_WEIGHT[captured]
            elif piece_type == PAWN:
                if to == ep_square and (to - frm) & 7:
                    capture_bb = _BB_SQUARES[to - 8 if us else to + 8]
                    pawns ^= capture_bb
                    theirs ^= capture_bb
                    z, m, e, a = self._tables[not us][PAWN][to - 8 if us else to + 8]
                    key ^= z
                    mg -= m
                    eg -= e
                    acc -= a
                elif to - frm == 16:
                    new_ep = frm + 8
                elif frm - to == 16:
                    new_ep = frm - 8
            if piece_type == PAWN:
                halfmove = 0
                promotion = code >> 12
                if promotion:
                    piece_type = promotion
                    phase += PHASE_WEIGHT[promotion]
            if piece_type == PAWN:
                pawns |= tbb
            elif piece_type == KNIGHT:
                knights |= tbb
            elif piece_type == BISHOP:
                bishops |= tbb
            elif piece_type == ROOK:
                rooks |= tbb
            elif piece_type == QUEEN:
                queens |= tbb
            else:
                kings ^= fbb | tbb
                rights &= ~_BACKRANK[us]
            ours ^= fbb | tbb
            if rights:
                rights &= ~(fbb | tbb)
            self.phase = phase
            z, m, e, a = mine[piece_type][to]
            key ^= z
            mg += m
            eg += e
            acc += a
        board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings = (
            pawns, knights, bishops, rooks, queens, kings
        )
        occupied_co[us] = ours
        occupied_co[not us] = theirs
        board.occupied = ours | theirs
        board.ep_square = new_ep
        board.halfmove_clock = halfmove
        if not us:
            board.fullmove_number += 1
        board.turn = not us
        if rights != self._castle:
            key ^= _castle_key(self._castle) ^ _castle_key(rights)
            self._castle = rights
        board.castling_rights = rights
        if new_ep is not None and pawns & theirs & _BB_PAWN_ATTACKS[us][new_ep]:
            self._ep = _EP_FILE_KEY[new_ep & 7]
            key ^= self._ep
        else:
            self._ep = 0
        self.key = key
        self.mg = mg
        self.eg = eg
        self.acc = acc
        self.keys.append(key)

    def pop(self) -> None:
        """Unmake the last move made with :meth:`push` or :meth:`push_null`."""
        board = self.board
        (
            self.key, self.mg, self.eg, self.acc, self.phase, self._castle, self._ep,
            board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
            ours, theirs, board.castling_rights, board.ep_square, board.halfmove_clock,
        ) = self._undo.pop()
        us = board.turn = not board.turn
        if not us:
            board.fullmove_number -= 1
        occupied_co = board.occupied_co
        occupied_co[us] = ours
        occupied_co[not us] = theirs
        board.occupied = ours | theirs
        self.keys.pop()
        if len(self.keys) <= self._null_barrier:
            self._null_barrier = self._null_barriers.pop()

    def push_null(self) -> None:
        """Pass the move (for null-move pruning): only the side to move and the en
        passant right change. Positions before a null move never count as repetitions
        of positions after it."""
        board = self.board
        us = board.turn
        self._undo.append((
            self.key, self.mg, self.eg, self.acc, self.phase, self._castle, self._ep,
            board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
            board.occupied_co[us], board.occupied_co[not us], board.castling_rights, board.ep_square,
            board.halfmove_clock,
        ))
        board.ep_square = None
        board.halfmove_clock += 1
        if not us:
            board.fullmove_number += 1
        board.turn = not us
        self.key ^= self._ep ^ _WHITE_TO_MOVE_KEY
        self._ep = 0
        self.keys.append(self.key)
        self._null_barriers.append(self._null_barrier)
        self._null_barrier = len(self.keys) - 1

    @property
    def ply(self) -> int:
        """Moves made since the root of the search."""
        return len(self.keys) - 1 - self.root_index

    # -------------------------------------------------------------------- draws

    def is_repetition(self) -> bool:
        """True when the position repeats one that occurred after the root, or occurs
        for the third time counting the game history before the root."""
        keys = self.keys
        last = len(keys) - 1
        key = keys[last]
        stop = max(last - self.board.halfmove_clock, self._null_barrier, 0)
        root = self.root_index
        seen = 0
        for index in range(last - 4, stop - 1, -2):
            if keys[index] == key:
                if index > root:
                    return True
                seen += 1
                if seen == 2:
                    return True
        return False
