#!/usr/bin/env python3
"""What a player of a match PGN does with material: the mean balance (the player's
material minus the opponent's, pawn 1, knight 3, bishop 3, rook 5, queen 9) and pawn
balance at chosen plies, over the games that reach them, and the median search
depth of all the moves of those games (both sides) whose comments carry one (``{ +0.18/7 0.53s ... }``, as the match
runner writes them). With ``--moves N``: each side's median depth and mean time a
move over its first N moves of every game (what the engine does with the clock early).

    python scripts/pgn_balance.py validation.pgn --player tuned --plies 30 50 70
"""

from __future__ import annotations

import argparse
import re
import statistics
from pathlib import Path

import chess
import chess.pgn

VALUES = {chess.PAWN: 1, chess.KNIGHT: 3, chess.BISHOP: 3, chess.ROOK: 5, chess.QUEEN: 9}
#: A move's comment: score/depth, then its time where the runner wrote one.
DEPTH = re.compile(r"^\S+/(\d+) (?:([\d.]+)s)?")


def material(board: chess.Board, colour: chess.Color) -> int:
    return sum(value * len(board.pieces(piece, colour)) for piece, value in VALUES.items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pgn", type=Path)
    parser.add_argument("--player", required=True, help="the player's name in the White/Black tags")
    parser.add_argument("--plies", type=int, nargs="+", default=[30, 50, 70])
    parser.add_argument("--moves", type=int, help="each side's median depth and mean time over its first N moves")
    args = parser.parse_args(argv)
    balance: dict[int, list[int]] = {ply: [] for ply in args.plies}
    pawns: dict[int, list[int]] = {ply: [] for ply in args.plies}
    depths: list[int] = []
    early: dict[bool, tuple[list[int], list[float]]] = {chess.WHITE: ([], []), chess.BLACK: ([], [])}
    games = 0
    with open(args.pgn, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            if args.player not in (game.headers.get("White"), game.headers.get("Black")):
                continue
            games += 1
            me = chess.WHITE if game.headers.get("White") == args.player else chess.BLACK
            board = game.board()
            for ply, node in enumerate(game.mainline(), 1):
                board.push(node.move)
                if (found := DEPTH.match(node.comment)) is not None:
                    depths.append(int(found.group(1)))
                    if args.moves and found.group(2) is not None and (ply + 1) // 2 <= args.moves:
                        mover = (ply % 2 == 1) == (me == chess.WHITE)  # True: the player's move
                        early[mover][0].append(int(found.group(1)))
                        early[mover][1].append(float(found.group(2)))
                if ply in balance:
                    balance[ply].append(material(board, me) - material(board, not me))
                    pawns[ply].append(len(board.pieces(chess.PAWN, me)) - len(board.pieces(chess.PAWN, not me)))
    print(f"{games} games of {args.player}")
    for ply in args.plies:
        if balance[ply]:
            print(f"ply {ply}: {len(balance[ply])} games, material {statistics.mean(balance[ply]):+.2f}, "
                  f"pawns {statistics.mean(pawns[ply]):+.2f}")
    if depths:
        print(f"median depth {statistics.median(depths):g} over {len(depths)} moves")
    for mover, who in ((True, args.player), (False, "the opponents")):
        found_depths, times = early[mover]
        if found_depths:
            print(f"first {args.moves} moves, {who}: median depth {statistics.median(found_depths):g}, "
                  f"mean {statistics.mean(times):.3f} s a move over {len(times)} moves")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
