"""The Python module shatranj_tb, installed with `pip install .` (tests/python/run.sh).

Needs SHATRANJ_TB_TEST_TABLES (the 4-man tables the Rust tests generate) and
SHATRANJ_TB_BIN (the shatranj-tb binary, whose `probe --json` the dicts must equal);
pyffish 0.0.90 (Fairy-Stockfish) is the oracle for the legal moves.
"""

import ast
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import shatranj_tb
from shatranj_tb import Tablebase

TABLES = Path(os.environ["SHATRANJ_TB_TEST_TABLES"])
BIN = os.environ.get("SHATRANJ_TB_BIN")
DIAMOND = "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1"  # al-Suli's Diamond: White wins in 39 plies


@pytest.fixture(scope="module")
def tb():
    return Tablebase(TABLES)


def random_fens(tb, rng, n, white_roles="QBNRP", black_roles="QBNRP", pieces=(1, 1)):
    """n random legal positions (the module says which are legal), each side a shah and
    pieces[0] white and pieces[1] black men."""
    out = []
    while len(out) < n:
        board = [["" for _ in range(8)] for _ in range(8)]
        men = ["K", "k"]
        men += [rng.choice(white_roles) for _ in range(pieces[0])]
        men += [rng.choice(black_roles).lower() for _ in range(pieces[1])]
        for man in men:
            while True:
                r, f = rng.randrange(8), rng.randrange(8)
                if not board[r][f]:
                    board[r][f] = man
                    break
        rows = []
        for r in range(7, -1, -1):
            row, empty = "", 0
            for f in range(8):
                if board[r][f]:
                    row += (str(empty) if empty else "") + board[r][f]
                    empty = 0
                else:
                    empty += 1
            rows.append(row + (str(empty) if empty else ""))
        fen = "/".join(rows) + " " + rng.choice("wb") + " - - 0 1"
        try:
            tb.wdl(fen)
        except ValueError:
            continue  # illegal placement
        out.append(fen)
    return out


def test_diamond(tb):
    r = tb.probe(DIAMOND)
    assert list(r) == [
        "fen", "material", "rules", "wdl", "dtm", "dtz", "category", "end", "best_move", "moves",
    ]
    assert r["fen"] == DIAMOND
    assert r["material"] == "KQvKQ"
    assert r["rules"] == "bare-king=counter,stalemate=loss" == shatranj_tb.DEFAULT_RULES
    assert (r["wdl"], r["dtm"], r["end"]) == ("win", 39, None)
    assert r["best_move"] == r["moves"][0]["uci"]
    first = r["moves"][0]
    assert list(first) == ["uci", "san", "wdl", "dtm", "dtz", "zeroing"]
    assert {k: first[k] for k in ("uci", "san", "wdl", "dtm")} == {
        "uci": r["best_move"], "san": "Kb4", "wdl": "win", "dtm": 39,
    }
    assert first["dtz"] > 0 and first["zeroing"] is False
    assert r["category"] == "win" and 0 < r["dtz"] <= 39
    assert len(r["moves"]) == 9
    assert tb.wdl(DIAMOND) == shatranj_tb.WIN == 1
    assert tb.dtm(DIAMOND) == 39
    line = tb.line(DIAMOND)
    assert len(line) == 39
    assert [s["dtm"] for s in line] == list(range(38, -1, -1))
    assert line[0]["uci"] == r["best_move"]
    assert line[-1]["end"] in ("checkmate", "stalemate", "bare-king")
    assert tb.line(line[-1]["fen"]) == []


def test_values_of_finished_games_and_draws(tb):
    # bare shah to move that cannot take the rook: lost, DTM 0, no moves
    r = tb.probe("8/8/8/4k3/8/8/7R/K7 b - - 0 1")
    assert (r["wdl"], r["dtm"], r["end"], r["best_move"], r["moves"]) == ("loss", 0, "bare-king", None, [])
    assert tb.wdl("8/8/8/4k3/8/8/7R/K7 b - - 0 1") == shatranj_tb.LOSS
    # shah against shah: a draw, DTM None
    assert tb.wdl("8/8/8/4k3/8/8/8/K7 w - - 0 1") == shatranj_tb.DRAW
    assert tb.dtm("8/8/8/4k3/8/8/8/K7 w - - 0 1") is None
    assert tb.line("8/8/8/4k3/8/8/8/K7 w - - 0 1") == []


def board_of(fen):
    """{square name: FEN letter} of a FEN's board."""
    out = {}
    for i, row in enumerate(fen.split()[0].split("/")):
        f = 0
        for c in row:
            if c.isdigit():
                f += int(c)
            else:
                out["abcdefgh"[f] + str(8 - i)] = c
                f += 1
    return out


def dtz_rank(dtz):
    """Better for the mover is greater: quick wins, draws, long losses (no move rule)."""
    if dtz > 0:
        return 10**9 - dtz
    if dtz < 0:
        return -(10**9) - dtz
    return 0


def test_dtz_and_category(tb):
    d = tb.dtz(DIAMOND)
    assert tb.category(DIAMOND) == "win"
    r = tb.probe(DIAMOND)
    assert r["dtz"] == d and 0 < d <= 39
    # the DTZ-optimal move keeps the position's DTZ; no move does better
    assert max(dtz_rank(m["dtz"]) for m in r["moves"]) == dtz_rank(d)
    # finished games and draws: 0 plies, the category says who has won
    assert (tb.dtz("8/8/8/4k3/8/8/7R/K7 b - - 0 1"), tb.category("8/8/8/4k3/8/8/7R/K7 b - - 0 1")) == (0, "loss")
    assert (tb.dtz("8/8/8/4k3/8/8/7R/K7 w - - 0 1"), tb.category("8/8/8/4k3/8/8/7R/K7 w - - 0 1")) == (0, "win")
    assert (tb.dtz("8/8/8/4k3/8/8/8/K7 w - - 0 1"), tb.category("8/8/8/4k3/8/8/8/K7 w - - 0 1")) == (0, "draw")
    sign = {"win": 1, "draw": 0, "loss": -1}
    rng = random.Random(13)
    seen = set()
    for fen in random_fens(tb, rng, 300) + random_fens(tb, rng, 50, pieces=(2, 0)):
        r = tb.probe(fen)
        d, c = tb.dtz(fen), tb.category(fen)
        assert (r["dtz"], r["category"]) == (d, c), fen
        assert c == r["wdl"], fen  # no move rule: the plain three
        assert (d > 0) - (d < 0) == sign[c] or d == 0 and r["end"], fen
        seen.add(c)
        board = board_of(fen)
        for m in r["moves"]:
            assert (m["dtz"] > 0) - (m["dtz"] < 0) == sign[m["wdl"]], (fen, m)
            zeroing = m["uci"][2:4] in board or board[m["uci"][:2]] in "Pp"
            assert m["zeroing"] is zeroing, (fen, m)
        if r["moves"] and not r["end"]:
            assert max(dtz_rank(m["dtz"]) for m in r["moves"]) == dtz_rank(d), fen
    assert seen == {"win", "draw", "loss"}


def test_dtz_without_dtz_files(tmp_path):
    # the WDL and DTM files only: probe answers without DTZ, dtz() is a LookupError
    for ext in ("tbw", "tbd"):
        name = f"KQvKQ.counter-loss.{ext}"
        shutil.copy(TABLES / name, tmp_path / name)
    old = Tablebase(tmp_path)
    r = old.probe(DIAMOND)
    assert (r["dtm"], r["dtz"], r["category"]) == (39, None, None)
    assert all(m["dtz"] is None for m in r["moves"])
    with pytest.raises(LookupError, match="KQvKQ"):
        old.dtz(DIAMOND)
    with pytest.raises(LookupError, match="KQvKQ"):
        old.category(DIAMOND)
    # under the 70-move rule the test tables have no DTZ files either
    seventy = Tablebase(TABLES, rules="move-rule=70")
    assert seventy.wdl(DIAMOND) == 1
    with pytest.raises(LookupError, match="move-rule=70"):
        seventy.dtz(DIAMOND)
    assert seventy.probe(DIAMOND)["dtz"] is None
    with pytest.raises(ValueError, match="invalid FEN"):
        tb_dtz_bad = Tablebase(TABLES)
        tb_dtz_bad.dtz("not a fen")


def test_the_binary_and_the_oracle_are_there():
    """The comparisons below need both: without them the run fails, it does not skip."""
    assert BIN, "SHATRANJ_TB_BIN is not set (the shatranj-tb binary to compare with)"
    assert os.access(BIN, os.X_OK), f"SHATRANJ_TB_BIN={BIN} is not an executable"
    import pyffish

    assert pyffish.version() == (0, 0, 90)


def test_probe_equals_the_cli_json(tb):
    assert BIN, "SHATRANJ_TB_BIN is not set (the shatranj-tb binary to compare with)"
    rng = random.Random(5)
    fens = random_fens(tb, rng, 15) + random_fens(tb, rng, 5, pieces=(2, 0)) + [DIAMOND]
    for fen in fens:
        cli = subprocess.run(
            [BIN, "probe", fen, "--json", "--tables", str(TABLES)],
            check=True, capture_output=True, text=True,
        )
        assert tb.probe(fen) == json.loads(cli.stdout), fen


def test_wdl_and_dtm_agree_with_probe(tb):
    rng = random.Random(7)
    names = {"win": 1, "draw": 0, "loss": -1}
    seen = set()
    for fen in random_fens(tb, rng, 400) + random_fens(tb, rng, 100, pieces=(2, 0)):
        r = tb.probe(fen)
        assert tb.wdl(fen) == names[r["wdl"]], fen
        assert tb.dtm(fen) == r["dtm"], fen
        seen.add(r["wdl"])
        if r["moves"]:
            best = r["moves"][0]
            assert (best["wdl"], best["dtm"]) == (r["wdl"], r["dtm"]), fen
    assert seen == {"win", "draw", "loss"}


def test_moves_are_pyffish_legal_moves(tb):
    import pyffish  # the oracle: missing, the test fails

    assert pyffish.version() == (0, 0, 90)
    rng = random.Random(11)
    # No bare side: Fairy-Stockfish ends a bare-king game one ply later than our rules
    # (and lists moves in K v K), so those positions do not compare.
    fens = random_fens(tb, rng, 250) + random_fens(tb, rng, 50, white_roles="P", black_roles="QBNRP")
    compared = 0
    for fen in fens:
        ours = sorted(m["uci"] for m in tb.probe(fen)["moves"])
        theirs = sorted(pyffish.legal_moves("shatranj", fen, []))
        assert ours == theirs, fen
        compared += len(ours)
    assert compared > 2000


def test_errors(tb, tmp_path):
    with pytest.raises(ValueError, match="invalid FEN"):
        tb.probe("not a fen")
    with pytest.raises(ValueError, match="adjacent"):
        tb.wdl("8/8/8/3Kk3/8/8/8/8 w - - 0 1")
    with pytest.raises(ValueError, match="side not to move is in check"):
        tb.dtm("8/8/8/4k3/8/8/8/K3R3 w - - 0 1")
    with pytest.raises(LookupError, match="generate KRQvKQ"):
        tb.probe("8/8/8/3k4/8/1KQ5/8/q6R w - - 0 1")
    with pytest.raises(LookupError, match="at most 6"):
        tb.wdl("8/8/8/3k4/8/1KQ5/8/qrR4R w - - 0 1")
    with pytest.raises(FileNotFoundError):
        Tablebase(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="never"):
        Tablebase(TABLES, rules="bare-king=never")
    other = Tablebase(TABLES, rules="bare-king=immediate,stalemate=draw")
    assert other.rules == "bare-king=immediate,stalemate=draw"
    with pytest.raises(LookupError, match="--rules bare-king=immediate,stalemate=draw"):
        other.probe(DIAMOND)
    # a damaged file: an OSError naming it, every time it is asked
    for ext in ("tbw", "tbd"):
        name = f"KQvKQ.counter-loss.{ext}"
        data = (TABLES / name).read_bytes()
        (tmp_path / name).write_bytes(data[: len(data) // 2])
    damaged = Tablebase(tmp_path)
    assert damaged.materials() == ["KQvKQ"]
    for _ in range(2):
        with pytest.raises(OSError, match="KQvKQ.counter-loss.tbd"):
            damaged.probe(DIAMOND)
        with pytest.raises(OSError, match="KQvKQ.counter-loss.tbw"):
            damaged.wdl(DIAMOND)


def test_one_cache_bound_for_all_tables(tb):
    rng = random.Random(5)
    fens = random_fens(tb, rng, 300)
    want = [(tb.wdl(f), tb.dtm(f)) for f in fens]
    for mb in (1, 0):
        small = Tablebase(TABLES, cache_mb=mb)
        assert small.cache_stats()["capacity"] == mb << 20
        for f, w in zip(fens, want):
            assert (small.wdl(f), small.dtm(f)) == w, f
            assert small.cache_stats()["resident_bytes"] <= mb << 20
        stats = small.cache_stats()
        assert stats["peak_bytes"] <= mb << 20, stats
        assert (stats["peak_bytes"] > 0) == (mb > 0), stats
        assert (stats["blocks"] > 0) == (mb > 0), stats
    assert tb.cache_stats()["capacity"] == 1 << 30


def test_a_table_copied_over_in_place_is_an_error_not_a_crash(tmp_path):
    for ext in ("tbw", "tbd"):
        name = f"KQvKQ.counter-loss.{ext}"
        shutil.copy(TABLES / name, tmp_path / name)
    live = Tablebase(tmp_path, cache_mb=0)  # every probe reads the file
    assert live.dtm(DIAMOND) == 39
    # as `cp` does: the same file truncated, then other bytes written
    other = (TABLES / "KRvKQ.counter-loss.tbd").read_bytes()
    with open(tmp_path / "KQvKQ.counter-loss.tbd", "wb") as f:
        f.write(other[: len(other) // 3])
    with pytest.raises(OSError, match="KQvKQ.counter-loss.tbd.*changed in place"):
        live.dtm(DIAMOND)
    shutil.copyfile(TABLES / "KQvKQ.counter-loss.tbd", tmp_path / "KQvKQ.counter-loss.tbd")
    assert live.dtm(DIAMOND) == 39


def test_threads_share_a_tablebase(tb):
    rng = random.Random(3)
    fens = random_fens(tb, rng, 300)
    fresh = Tablebase(TABLES)  # files opened by racing threads
    serial = [(tb.wdl(f), tb.dtm(f)) for f in fens]
    with ThreadPoolExecutor(4) as pool:
        parallel = list(pool.map(lambda f: (fresh.wdl(f), fresh.dtm(f)), fens * 4))
    assert parallel == serial * 4


def test_gil_is_released_while_probing(tb):
    # With a switch interval of minutes, a thread waiting for the GIL gets it only when
    # the holder lets it go: the counter below ticks during the probes only if each
    # probe releases the GIL.
    rng = random.Random(4)
    fens = random_fens(tb, rng, 200)
    stop = threading.Event()
    ticks = [0]

    def count():
        while not stop.is_set():
            time.sleep(1e-5)  # releases the GIL; taking it back needs the prober's release
            ticks[0] += 1

    old = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    t = threading.Thread(target=count)
    try:
        t.start()
        before = ticks[0]
        deadline = time.perf_counter() + 0.3
        while time.perf_counter() < deadline:
            for f in fens:
                tb.probe(f)
        during = ticks[0] - before
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(old)
    assert during > 20, during


def test_stubs_match_the_module():
    pkg = Path(shatranj_tb.__file__).parent
    assert (pkg / "py.typed").exists()
    stub = ast.parse((pkg / "_native.pyi").read_text())
    cls = next(n for n in stub.body if isinstance(n, ast.ClassDef) and n.name == "Tablebase")
    stubbed = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)} - {"__init__"}
    public = {n for n in dir(Tablebase) if not n.startswith("_")}
    assert stubbed == public
    consts = {t.target.id for t in stub.body if isinstance(t, ast.AnnAssign)}
    assert consts == {"WIN", "DRAW", "LOSS", "DEFAULT_RULES"}
    assert repr(Tablebase(TABLES)).startswith("Tablebase(")


def test_solve_dilaram_and_its_bound(tb):
    # Dilaram's mate: 11 men, above the tables; White wins in 11 plies, key Rh8+ only
    fen = "1r4k1/8/5PP1/8/K1n3NR/7B/1r6/7R w - - 0 1"
    s = tb.solve(fen, plies=11, tree_depth=2)
    assert (s["result"], s["plies"], s["end"]) == ("win", 11, "checkmate")
    assert s["keys"] == [{"uci": "h4h8", "san": "Rh8+", "plies": 11}]
    assert s["line_san"][:3] == ["Rh8+", "Kxh8", "Bf5+"]
    assert len(s["line"]) == 11 and s["line"][0] == "h4h8"
    assert s["tree"]["moves"][0]["uci"] == "h4h8"
    short = tb.solve(fen, plies=9)
    assert (short["result"], short["plies"], short["no_win_within"]) == ("unknown", None, 9)
    assert short["proved"] == "no forced win within 9 plies"


def test_solve_agrees_with_a_table(tb):
    # a position the tables cover is answered from them, as probe answers it
    fen = "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1"
    s = tb.solve(fen, plies=40, tree_depth=0)
    p = tb.probe(fen)
    assert (s["result"], s["plies"], s["from_table"]) == (p["wdl"], p["dtm"], True)
    assert [k["uci"] for k in s["keys"]] == sorted(
        m["uci"] for m in p["moves"] if (m["wdl"], m["dtm"]) == (p["wdl"], p["dtm"])
    )


def test_solve_errors(tb):
    with pytest.raises(ValueError):
        tb.solve("not a fen")
    with pytest.raises(ValueError):
        tb.solve("1r4k1/8/5PP1/8/K1n3NR/7B/1r6/7R w - - 0 1", plies=0)
    with pytest.raises(ValueError):
        tb.solve("1r4k1/8/5PP1/8/K1n3NR/7B/1r6/7R w - - 0 1", hash_mb=0)
