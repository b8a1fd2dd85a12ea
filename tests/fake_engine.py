"""A deliberately faulty UCI engine for testing the match runner.

    python fake_engine.py MODE

MODE: ``good`` plays the first legal move; ``illegal`` answers an illegal move;
``crash`` exits when asked to move after its third move; ``slow`` thinks for two
seconds whatever its clock says; ``late`` takes two seconds to start, then plays at
once; ``nodes`` plays the first legal move and reports as its depth the nodes its
``go`` asked for (0 where it asked for none), so that a test sees each side's limit.
"""

import sys
import time

import chess

mode = sys.argv[1]
if mode == "late":
    time.sleep(2)
board = chess.Board()
moves_played = 0
for line in sys.stdin:
    words = line.split()
    if not words:
        continue
    if words[0] == "uci":
        print("id name fake-" + mode)
        print("uciok", flush=True)
    elif words[0] == "isready":
        print("readyok", flush=True)
    elif words[0] == "position":
        if words[1] == "startpos":
            board = chess.Board()
            rest = words[2:]
        else:
            index = words.index("moves") if "moves" in words else len(words)
            board = chess.Board(" ".join(words[2:index]))
            rest = words[index:]
        for uci in rest[1:]:
            board.push_uci(uci)
    elif words[0] == "go":
        moves_played += 1
        if mode == "crash" and moves_played > 3:
            sys.exit(3)
        if mode == "slow":
            time.sleep(2)
        move = next(iter(board.legal_moves))
        answer = "a1a1" if mode == "illegal" else move.uci()
        depth = "1"
        if mode == "nodes":
            depth = words[words.index("nodes") + 1] if "nodes" in words else "0"
        print(f"info depth {depth} score cp 0 pv {move.uci()}")
        print(f"bestmove {answer}", flush=True)
    elif words[0] == "quit":
        break
