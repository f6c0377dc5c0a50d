#!/usr/bin/env python3
"""Makes tests/data/mates.txt: forced mates of 2 to 5 moves with many men, from real play.

    POPEYE=/path/to/py scripts/mate-set.py [--games 300] [--seed 1] [--engine fairy-stockfish]
        [--bin target/release/shatranj-tb] [--tables DIR] [--out tests/data/mates.txt]

Fairy-Stockfish plays shatranj against itself (a random opening of mostly pawn moves, in
the manner of the tabiyas, then a fixed time a move, with a share of random moves mixed in so that mates arise while the board is
still full). Wherever it announces a mate in at most 5 moves, the position is a candidate
if the rules of shatranj and of orthodox problems coincide there for the length of the mate:
- each side keeps more men besides its shah than the mate has moves, so no side can be
  bared within it (shatranj's bare-king end is unknown to a chess problem solver);
- no pawn stands on its start rank (shatranj's pawn never steps two squares, Popeye's may).
`shatranj-tb solve` then proves the shortest win and every key (one thread, a time limit),
and Popeye proves `#=N` (mate or stalemate in N moves: shatranj's stalemate is a win for
the side that gives it) on the same position. A position enters the set only when both
agree on the length and on every key; a disagreement is printed and left out.

Needs: Debian's `fairy-stockfish` (or `--engine`), pyffish (PyPI) for FENs and legal moves,
a Popeye binary (`POPEYE`), our binary, and the 4-man tables.
"""

import argparse
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benches"))
import popeye as pop  # noqa: E402  (benches/popeye.py: FEN to Popeye input, key parsing)

import pyffish  # noqa: E402

VARIANT = "shatranj"


class Engine:
    def __init__(self, path):
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)
        self.send("uci")
        self.wait("uciok")
        self.send(f"setoption name UCI_Variant value {VARIANT}")
        self.send("setoption name Threads value 1")
        self.send("setoption name Hash value 32")
        self.send("isready")
        self.wait("readyok")

    def send(self, line):
        self.p.stdin.write(line + "\n")

    def wait(self, word):
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("the engine closed its output")
            if line.startswith(word):
                return line

    def go(self, fen, movetime):
        """(best move, mate in N for the side to move or None)."""
        self.send(f"position fen {fen}")
        self.send(f"go movetime {movetime}")
        mate = None
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError("the engine closed its output")
            words = line.split()
            if words and words[0] == "info" and "score" in words:
                i = words.index("score")
                mate = int(words[i + 2]) if words[i + 1] == "mate" else None
            if words and words[0] == "bestmove":
                return words[1], mate

    def close(self):
        self.send("quit")
        self.p.wait(timeout=10)


def men(board):
    """Men besides the shah, per colour."""
    white = sum(1 for p in board.values() if p.isupper() and p != "K")
    black = sum(1 for p in board.values() if p.islower() and p != "k")
    return white, black


def coincide(fen, moves):
    board, _side = pop.board_of(fen)
    white, black = men(board)
    if min(white, black) <= moves:
        return False
    return not pop.pawn_notes(board)


def solve(args, fen, max_plies):
    out = subprocess.run([args.bin, "solve", fen, "--plies", str(max_plies), "--threads", "1",
                          "--tree-depth", "0", "--time", str(args.time), "--json",
                          "--tables", args.tables], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"solve failed on {fen}: {out.stderr.strip()}")
    import json
    return json.loads(out.stdout)


def popeye_keys(args, fen, goal, moves):
    board, side = pop.board_of(fen)
    if side == "b":
        board = pop.turned_over(board)
    text = pop.popeye_input(board, goal, moves, args.popeye_max_time)
    path = os.path.join(args.work, "p.inp")
    with open(path, "w") as f:
        f.write(text)
    out = subprocess.run([args.popeye, "-maxmem", "512M", path], capture_output=True, text=True)
    if "solving interrupted" in out.stdout.lower():
        return None
    keys = pop.popeye_keys(out.stdout)
    if side == "b":
        keys = {pop.turn_square(k[:2]) + pop.turn_square(k[2:]) for k in keys}
    return keys


def write(args, found):
    """Writes the set so far (a temporary file renamed into place: a stopped run keeps it)."""
    with open(args.out + ".tmp", "w", encoding="utf-8") as f:
        f.write(f"""# Forced mates of 2 to 5 moves with many men, from Fairy-Stockfish's shatranj self-play,
# made by scripts/mate-set.py (seed {args.seed}, {args.movetime} ms a move, {args.quick_movetime} ms where
# no position could enter the set, a random opening of mostly pawn moves, a share
# {args.blunder} of random moves after it, so that mates arise with many men on the board;
# the engine's moves depend on its time, so another run finds other positions).
# One position a line:
#
#   name | FEN | result | plies | keys (UCI, comma-separated, every one) | end | source
#
# On each the rules of shatranj and of orthodox problems coincide for the length of the
# mate (each side keeps more men than the mate has moves; no pawn on its start rank), and
# Popeye's `#=N` (mate or stalemate in N moves, `Condition PromOnly FE`) found the same
# length and the same keys as `shatranj-tb solve`. tests/solve.rs checks the solver against
# these lines; benches/popeye.py times both on them.
""")
        for i, (game, ply, fen, plies, end, keys, count) in enumerate(found, 1):
            f.write(f"sp-{i:03} | {fen} | win | {plies} | {','.join(keys)} | {end} | "
                    f"self-play game {game}, ply {ply}, {count} men\n")
    os.replace(args.out + ".tmp", args.out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--games", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--movetime", type=int, default=10, help="engine milliseconds a move")
    ap.add_argument("--quick-movetime", type=int, default=2,
                    help="milliseconds a move where no position could enter the set")
    ap.add_argument("--engine", default="/usr/games/fairy-stockfish")
    ap.add_argument("--bin", default=os.path.join(root, "target/release/shatranj-tb"))
    ap.add_argument("--tables", default=os.path.join(root, "target/bench-tables-4"))
    ap.add_argument("--out", default=os.path.join(root, "tests/data/mates.txt"))
    ap.add_argument("--want", type=int, default=120, help="stop when this many are found")
    ap.add_argument("--time", type=float, default=20, help="seconds solve may take a position")
    ap.add_argument("--popeye-max-time", type=int, default=60)
    ap.add_argument("--per-game", type=int, default=2, help="positions taken from one game")
    ap.add_argument("--blunder", type=float, default=0.25,
                    help="share of moves played at random instead of the engine's, so that "
                         "mates arise while many men are still on the board")
    ap.add_argument("--work", default="/tmp")
    args = ap.parse_args()
    args.popeye = os.environ.get("POPEYE")
    if not args.popeye:
        raise SystemExit("POPEYE must name a Popeye binary")

    rng = random.Random(args.seed)
    engine = Engine(args.engine)
    start = pyffish.start_fen(VARIANT)
    found, seen, disagreements = [], set(), 0
    for game in range(1, args.games + 1):
        if len(found) >= args.want:
            break
        fen, taken, last_taken = start, 0, -100
        # A random opening in the manner of a tabiya: mostly pawns leaving their start
        # rank (as shatranj's openings did), so games differ and the start ranks clear.
        for _ in range(rng.randint(14, 22)):
            legal = sorted(pyffish.legal_moves(VARIANT, fen, []))
            if not legal:
                break
            board, side = pop.board_of(fen)
            home = "2" if side == "w" else "7"
            pawn = "P" if side == "w" else "p"
            pushes = [m for m in legal if m[1] == home and board.get(m[:2]) == pawn]
            move = rng.choice(pushes if pushes and rng.random() < 0.8 else legal)
            fen = pyffish.get_fen(VARIANT, fen, [move])
        for ply in range(400):
            legal = pyffish.legal_moves(VARIANT, fen, [])
            if not legal or pyffish.is_immediate_game_end(VARIANT, fen, [])[0]:
                break
            # where no mate could enter the set (too few men, a pawn at home), a quick move
            board, _ = pop.board_of(fen)
            hopeful = min(men(board)) > 2 and not pop.pawn_notes(board)
            best, mate = engine.go(fen, args.movetime if hopeful else args.quick_movetime)
            if mate is not None and mate > 0 and os.environ.get("MATESET_DEBUG"):
                print(f"debug: game {game} ply {ply} mate {mate} men {men(pop.board_of(fen)[0])} {fen}", file=sys.stderr)
            if (mate is not None and 2 <= mate <= 5 and taken < args.per_game
                    and ply >= last_taken + 8
                    and fen.split()[0] not in seen and coincide(fen, mate)):
                seen.add(fen.split()[0])
                answer = solve(args, fen, 2 * mate - 1)
                plies = answer.get("plies")
                if (answer["result"] == "win" and plies is not None and plies >= 3
                        and answer["end"] in ("checkmate", "stalemate")
                        and coincide(fen, (plies + 1) // 2)):
                    n = (plies + 1) // 2
                    ours = sorted({k["uci"] for k in answer["keys"] if k["plies"] == plies})
                    theirs = popeye_keys(args, fen, "#=", n)
                    if theirs is None:
                        print(f"game {game} ply {ply}: Popeye stopped at its limit; left out",
                              file=sys.stderr)
                    elif sorted(theirs) != sorted(k[:4] for k in ours):
                        disagreements += 1
                        print(f"DISAGREE game {game} ply {ply}: {fen}: ours {ours} in {plies} "
                              f"plies, Popeye {sorted(theirs)} (#={n})", file=sys.stderr)
                    else:
                        taken += 1
                        last_taken = ply
                        write(args, found)
                        found.append((game, ply, fen, plies, answer["end"], ours,
                                      sum(1 for c in fen.split()[0] if c.isalpha())))
                        print(f"{len(found)}: game {game} ply {ply}: {len(ours)} key(s) "
                              f"{','.join(ours)} in {plies} plies ({answer['end']}), "
                              f"{answer['seconds']:.2f} s", file=sys.stderr)
            if best == "(none)":
                break
            if min(men(board)) <= 2:
                break  # too few men left for the set
            move = rng.choice(sorted(legal)) if rng.random() < args.blunder else best
            fen = pyffish.get_fen(VARIANT, fen, [move])
    engine.close()

    write(args, found)
    print(f"{len(found)} positions written to {args.out}; {disagreements} disagreements",
          file=sys.stderr)


if __name__ == "__main__":
    main()
