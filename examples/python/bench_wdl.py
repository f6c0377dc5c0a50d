"""Calls per second of shatranj_tb's wdl(), dtm() and probe() from Python, warm, on
random legal positions of the given materials.

    pip install .
    python examples/python/bench_wdl.py tables KRvKQ,KQvKR,KNvKB [POSITIONS] [SECONDS]
"""

import random
import sys
import time

from shatranj_tb import Tablebase


def random_fens(tb, materials, n, rng):
    fens = []
    while len(fens) < n:
        material = materials[len(fens) % len(materials)]
        white, black = material.split("v")
        squares = rng.sample(range(64), len(white) + len(black))
        board = [""] * 64
        for man, sq in zip(white + black.lower(), squares):
            board[sq] = man
        rows = []
        for rank in range(7, -1, -1):
            row, empty = "", 0
            for man in board[rank * 8 : rank * 8 + 8]:
                if man:
                    row += (str(empty) if empty else "") + man
                    empty = 0
                else:
                    empty += 1
            rows.append(row + (str(empty) if empty else ""))
        fen = "/".join(rows) + " " + rng.choice("wb") + " - - 0 1"
        try:
            tb.wdl(fen)  # also warms the caches
        except ValueError:
            continue
        fens.append(fen)
    return fens


def rate(call, fens, seconds):
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for fen in fens:
            call(fen)
        calls += len(fens)
    return calls / (time.perf_counter() - start)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    tb = Tablebase(sys.argv[1])
    materials = sys.argv[2].split(",")
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 100_000
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 2.0
    fens = random_fens(tb, materials, n, random.Random(1))
    for f in fens:
        tb.dtm(f)
    print(f"{len(fens)} random positions of {sys.argv[2]}, warm")
    for name in ("wdl", "dtm", "probe"):
        print(f"{name}(): {rate(getattr(tb, name), fens, seconds) / 1e3:.0f} k calls/s")


if __name__ == "__main__":
    main()
