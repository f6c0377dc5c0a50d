#!/usr/bin/env python3
"""Batch oracle for tests/oracle.rs: asks pyffish (Fairy-Stockfish) about many positions.

Input on stdin, one request per line: FEN <TAB> CHILDREN <TAB> SANITY [<TAB> SAN], the flags
'0'/'1'.
Output on stdout, one JSON object per request, in input order:
  fen       the FEN as given
  ended     is_immediate_game_end('shatranj') -> [bool, value]: the bare-king rule
  variant   which variant listed the moves: 'shatranj', or 'chaturanga' (shatranj
            without the bare-king rule) when shatranj's bare-king rule has ended the
            game and so lists no moves
  moves     sorted UCI legal moves of that variant
  check     (only when not ended and no legal move) gives_check: mate or stalemate
  result    (same) game_result, the value for the side to move
  children  (CHILDREN=1, not ended) {uci: is_immediate_game_end after that move}
  opposite_check, validate  (SANITY=1) is the side NOT to move in check (chaturanga,
            side flipped), and validate_fen's code (1 = OK)
  san       (SAN=1) {uci: get_san} for every move listed, in the listing variant

Conventions are pyffish's own: Q = ferz, B = alfil, game values +32000 / -32000 / 0
from the side to move's point of view. No rule logic of ours here.
Every pyffish call costs ~3 ms, so the work is spread over SHATRANJ_ORACLE_JOBS
processes (default 2).
"""

import json
import multiprocessing
import os
import sys

try:
    import pyffish as sf
except ImportError as e:  # pragma: no cover
    sys.stderr.write("pyffish is not importable (%s); run ./scripts/test, which installs "
                     "pyffish==0.0.90 into target/oracle-venv\n" % e)
    sys.exit(3)

SHATRANJ = "shatranj"
NO_BARE = "chaturanga"


def answer(line):
    fields = line.rstrip("\n").split("\t")
    fen, want_children, want_sanity = fields[:3]
    want_san = len(fields) > 3 and fields[3] == "1"
    ended, value = sf.is_immediate_game_end(SHATRANJ, fen, [])
    out = {"fen": fen, "ended": [ended, value]}
    variant = NO_BARE if ended else SHATRANJ
    moves = sorted(sf.legal_moves(variant, fen, []))
    out["variant"] = variant
    out["moves"] = moves
    if not ended and not moves:
        out["check"] = sf.gives_check(SHATRANJ, fen, [])
        out["result"] = sf.game_result(SHATRANJ, fen, [])
    if want_children == "1" and not ended:
        out["children"] = {m: list(sf.is_immediate_game_end(SHATRANJ, fen, [m])) for m in moves}
    if want_san:
        out["san"] = {m: sf.get_san(variant, fen, m) for m in moves}
    if want_sanity == "1":
        parts = fen.split()
        parts[1] = "b" if parts[1] == "w" else "w"
        out["opposite_check"] = sf.gives_check(NO_BARE, " ".join(parts), [])
        out["validate"] = sf.validate_fen(fen, SHATRANJ)
    return json.dumps(out)


def main():
    lines = [l for l in sys.stdin if l.strip()]
    jobs = max(1, int(os.environ.get("SHATRANJ_ORACLE_JOBS", "2")))
    info = {"pyffish": list(sf.version()), "info": sf.info()}
    sys.stdout.write(json.dumps(info) + "\n")
    if jobs > 1 and len(lines) > 1:
        with multiprocessing.Pool(jobs) as pool:
            for row in pool.imap(answer, lines, chunksize=25):
                sys.stdout.write(row + "\n")
    else:
        for l in lines:
            sys.stdout.write(answer(l) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
