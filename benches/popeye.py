#!/usr/bin/env python3
"""The solver beside Popeye, the chess problem solver, on the same problems.

    POPEYE=/path/to/py benches/popeye.py [--bin target/release/shatranj-tb]
        [--tables target/bench-tables-4] [--problems tests/data/mansubat.txt] [--only NAME]

For every problem of the collection (`name | FEN | result | plies | key | source`) whose
goal Popeye can state, it runs `shatranj-tb solve FEN --plies P --threads 1 --json` and
Popeye on the same position, each as a whole process on one thread, and prints their CPU
seconds (user + system, from the kernel's accounting of the child), the ratio ours /
Popeye's, and whether both found the same keys. Both get the same memory: `solve --hash
1024` (its table grows to that only as a problem needs it) and Popeye's `-maxmem 1G`.

Popeye's input is made from the FEN:
- pieces: shah `K`, ferz `FE` (fers), alfil `AL`, knight `S`, rook `R`, pawn `P`;
- `Condition PromOnly FE`: a pawn promotes to a ferz only;
- `Option NoCastling` for every king and rook on a square castling would start from;
- a Black-to-move problem is turned over (ranks mirrored, colours swapped: an exact symmetry
  of shatranj), since Popeye's direct problems are White to move;
- the goal is `#=N` (mate or stalemate in N moves, N = (plies + 1) / 2), since a stalemate
  wins in shatranj too (`--goal mate` asks for `#N`, mate only, which proves less where a
  defence is answered by stalemate). A win that ends by bare king has no Popeye goal and is
  skipped.

Where the rules differ, the row says so: Popeye's pawn on its start rank may step two squares
(shatranj's never does), and Popeye knows no bare-king end, so a line through a capture of
the last man is judged differently. The comparison is of the proof each makes: the shortest
length and every key of that length.

With no POPEYE given, it prints our figures alone.
"""

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

POPEYE_PIECE = {"k": "K", "q": "FE", "f": "FE", "b": "AL", "a": "AL", "e": "AL",
                "n": "S", "r": "R", "p": "P"}


def parse_problems(path):
    problems = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = [x.strip() for x in line.split(" | ")]
            if len(fields) < 5:
                raise SystemExit(f"{path}: a problem needs at least 5 fields: {line}")
            problems.append({"name": fields[0], "fen": fields[1], "result": fields[2],
                             "plies": int(fields[3]), "key": fields[4]})
    return problems


def board_of(fen):
    """{square: piece letter} (upper case White) and the side to move."""
    parts = fen.split()
    if len(parts) < 2:
        raise ValueError(f"bad FEN (no side to move): {fen}")
    rows = parts[0].split("/")
    if len(rows) != 8:
        raise ValueError(f"bad FEN (not 8 ranks): {fen}")
    board = {}
    for r, row in enumerate(rows):
        file = 0
        for ch in row:
            if ch.isdigit():
                file += int(ch)
                continue
            if ch.lower() not in POPEYE_PIECE:
                raise ValueError(f"bad FEN (unknown piece {ch!r}): {fen}")
            board["abcdefgh"[file] + str(8 - r)] = ch
            file += 1
        if file != 8:
            raise ValueError(f"bad FEN (rank {8 - r} is not 8 squares): {fen}")
    return board, parts[1]


def turned_over(board):
    """Ranks mirrored and colours swapped: the same problem with the other side to move."""
    return {sq[0] + str(9 - int(sq[1])): (p.lower() if p.isupper() else p.upper())
            for sq, p in board.items()}


def turn_square(sq):
    return sq[0] + str(9 - int(sq[1]))


def popeye_input(board, goal, moves, max_time):
    white = sorted(f"{POPEYE_PIECE[p.lower()]}{sq}" for sq, p in board.items() if p.isupper())
    black = sorted(f"{POPEYE_PIECE[p]}{sq}" for sq, p in board.items() if p.islower())
    no_castling = sorted(sq for sq, p in board.items()
                         if (p == "K" and sq == "e1") or (p == "k" and sq == "e8")
                         or (p == "R" and sq in ("a1", "h1")) or (p == "r" and sq in ("a8", "h8")))
    lines = ["BeginProblem",
             "Pieces",
             "  White " + " ".join(white),
             "  Black " + " ".join(black),
             f"Stipulation {goal}{moves}",
             "Condition PromOnly FE"]
    options = [f"MaxTime {max_time}"]
    if no_castling:
        options.append("NoCastling " + " ".join(no_castling))
    lines.append("Option " + " ".join(options))
    lines.append("EndProblem")
    return "\n".join(lines) + "\n"


def pawn_notes(board):
    notes = []
    if any(p == "P" and sq[1] == "2" for sq, p in board.items()):
        notes.append("a white pawn on rank 2 (Popeye's may double-step)")
    if any(p == "p" and sq[1] == "7" for sq, p in board.items()):
        notes.append("a black pawn on rank 7 (Popeye's may double-step)")
    return notes


def run_timed(cmd, stdin=None):
    """Runs cmd; returns (stdout, cpu seconds of the child, wall seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[0]} exited {proc.returncode}: {proc.stderr.strip()[:400]}")
    return proc.stdout, cpu, wall


KEY_RE = re.compile(r"^\s*1\.([A-Za-z]*)([a-h][1-8])[-*]([a-h][1-8])\S*(?:\s+\S+)*?\s*!\s*$")


def popeye_keys(output):
    """The from-to squares of every key Popeye prints (`1.Sg3-h5 + !`)."""
    keys = set()
    for line in output.splitlines():
        m = KEY_RE.match(line)
        if m:
            keys.add(m.group(2) + m.group(3))
    return keys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/shatranj-tb"))
    ap.add_argument("--tables", default=os.path.join(ROOT, "target/bench-tables-4"))
    ap.add_argument("--problems", default=os.path.join(ROOT, "tests/data/mansubat.txt"))
    ap.add_argument("--only", action="append", help="run only this problem (repeatable)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the fastest counts")
    ap.add_argument("--goal", choices=["mate-or-stalemate", "mate"], default="mate-or-stalemate",
                    help="Popeye's goal: #=N (shatranj's stalemate wins too: the same proof) "
                         "or #N (mate only: a lower bound on Popeye's work when a defence "
                         "ends in stalemate)")
    ap.add_argument("--hash", type=int, default=1024,
                    help="MiB of transposition table for solve (default 1024, the memory "
                         "Popeye is given with -maxmem 1G)")
    ap.add_argument("--popeye-max-time", type=int, default=600,
                    help="seconds Popeye may take on one problem (its MaxTime option)")
    args = ap.parse_args()

    popeye = os.environ.get("POPEYE")
    if not os.path.exists(args.bin):
        raise SystemExit(f"no shatranj-tb binary at {args.bin}: cargo build --release, or --bin")
    if not os.path.isdir(args.tables):
        raise SystemExit(f"no tables folder {args.tables}: "
                         f"{args.bin} generate --men 4 --tables {args.tables}")
    if popeye and not os.access(popeye, os.X_OK):
        raise SystemExit(f"POPEYE={popeye} is not an executable")

    rows = []
    for prob in parse_problems(args.problems):
        if args.only and prob["name"] not in args.only:
            continue
        if prob["result"] != "win":
            print(f"{prob['name']}: result {prob['result']}, no Popeye goal; skipped", file=sys.stderr)
            continue
        ours_cpu = None
        answer = None
        for _ in range(max(1, args.repeat)):
            out, cpu, _wall = run_timed([args.bin, "solve", prob["fen"], "--plies", str(prob["plies"]),
                                         "--threads", "1", "--hash", str(args.hash), "--tree-depth", "0", "--json",
                                         "--tables", args.tables])
            answer = json.loads(out)
            ours_cpu = cpu if ours_cpu is None else min(ours_cpu, cpu)
        if answer["result"] != "win" or answer["plies"] != prob["plies"]:
            raise SystemExit(f"{prob['name']}: solve says {answer['result']} in {answer['plies']}, "
                             f"the collection {prob['result']} in {prob['plies']}")
        our_keys = {k["uci"][:4] for k in answer["keys"] if k["plies"] == prob["plies"]}
        row = {"name": prob["name"], "plies": prob["plies"], "ours": ours_cpu,
               "keys": our_keys, "popeye": None, "popeye_keys": None, "notes": []}
        board, side = board_of(prob["fen"])
        if side == "b":
            board = turned_over(board)
        goal = None if answer.get("end") == "bare-king" else ("#" if args.goal == "mate" else "#=")
        row["notes"] += pawn_notes(board)
        if goal is None:
            row["notes"].append(f"ends by {answer.get('end')}: no Popeye goal")
        elif popeye:
            text = popeye_input(board, goal, (prob["plies"] + 1) // 2, args.popeye_max_time)
            with tempfile.NamedTemporaryFile("w", suffix=".inp", delete=False) as f:
                f.write(text)
                inp = f.name
            try:
                best = None
                keys = set()
                for _ in range(max(1, args.repeat)):
                    out, cpu, _wall = run_timed([popeye, "-maxmem", "1G", inp])
                    keys = popeye_keys(out)
                    best = cpu if best is None else min(best, cpu)
                    if "solving interrupted" in out.lower() or "maxtime" in out.lower():
                        row["notes"].append(f"Popeye stopped at its {args.popeye_max_time} s limit")
                        best = None
                        break
                if side == "b":
                    keys = {turn_square(k[:2]) + turn_square(k[2:]) for k in keys}
                row["popeye"] = best
                row["popeye_keys"] = keys
            finally:
                os.unlink(inp)
        rows.append(row)

    print(f"{'problem':<18} {'plies':>5} {'ours s':>9} {'Popeye s':>9} {'ratio':>7}  keys")
    ratios = []
    for r in rows:
        pop = "-" if r["popeye"] is None else f"{r['popeye']:.3f}"
        ratio = "-"
        if r["popeye"] is not None:
            value = max(r["ours"], 1e-3) / max(r["popeye"], 1e-3)
            ratios.append(value)
            ratio = f"{value:.2f}"
        if r["popeye_keys"] is None:
            keys = ",".join(sorted(r["keys"]))
        elif r["popeye_keys"] == r["keys"]:
            keys = "same: " + ",".join(sorted(r["keys"]))
        else:
            keys = f"DIFFER: ours {sorted(r['keys'])} Popeye {sorted(r['popeye_keys'])}"
        note = ("  (" + "; ".join(r["notes"]) + ")") if r["notes"] else ""
        print(f"{r['name']:<18} {r['plies']:>5} {r['ours']:>9.3f} {pop:>9} {ratio:>7}  {keys}{note}")
    if ratios:
        ratios.sort()
        mid = ratios[len(ratios) // 2] if len(ratios) % 2 else (ratios[len(ratios) // 2 - 1] + ratios[len(ratios) // 2]) / 2
        print(f"ours / Popeye: median {mid:.2f}, worst {ratios[-1]:.2f} over {len(ratios)} problems "
              f"(CPU seconds of the whole process, one thread each; a time below 1 ms counts as 1 ms)")
    elif not popeye:
        print("POPEYE not set: our figures only")


if __name__ == "__main__":
    main()
