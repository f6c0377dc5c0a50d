"""Interop test: a stock Python grpcio client against `shatranj-tb serve`.

Stubs are generated from our proto at test time (grpcio-tools) into a temporary
directory; health and reflection use the standard grpcio-health-checking and
grpcio-reflection packages. Run through tests/grpc_py/run.sh, which sets:

  SHATRANJ_TB_BIN          the binary to start
  SHATRANJ_TB_TEST_TABLES  a tables directory holding KQvKQ (the 4-man tables)

A missing binary, tables directory or table fails the tests: nothing is skipped.
"""

import importlib
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROTO_ROOT = ROOT / "proto"
PROTO = "shatranj/tablebase/v1/tablebase.proto"
SERVICE = "shatranj.tablebase.v1.Tablebase"

K_V_K = "8/8/8/4k3/8/8/8/K7 w - - 0 1"
BARE_BLACK_TO_MOVE = "8/8/8/4k3/8/8/7R/K7 b - - 0 1"
BARE_BLACK_WHITE_TO_MOVE = "8/8/8/4k3/8/8/7R/K7 w - - 0 1"
AL_SULI = "8/8/8/3k4/8/1KQ5/8/q7 w - - 0 1"
AL_SULI_WITH_A_ROOK = "8/8/8/3k4/8/1KQ5/8/qr6 w - - 0 1"
ILLEGAL = "8/8/8/4k3/8/8/4R3/K7 w - - 0 1"

TIMEOUT = 10  # seconds, for every call


@pytest.fixture(scope="session")
def stubs():
    """Compiles the proto with grpcio-tools and imports the generated modules."""
    from grpc_tools import protoc

    out = tempfile.mkdtemp(prefix="shatranj-grpc-stubs-")
    include = pathlib.Path(protoc.__file__).parent / "_proto"
    rc = protoc.main(
        [
            "grpc_tools.protoc",
            f"-I{PROTO_ROOT}",
            f"-I{include}",
            f"--python_out={out}",
            f"--grpc_python_out={out}",
            PROTO,
        ]
    )
    assert rc == 0, "protoc failed on our proto"
    sys.path.insert(0, out)
    pb2 = importlib.import_module("shatranj.tablebase.v1.tablebase_pb2")
    pb2_grpc = importlib.import_module("shatranj.tablebase.v1.tablebase_pb2_grpc")
    return pb2, pb2_grpc


def tables_dir_with_kqvkq():
    path = os.environ.get("SHATRANJ_TB_TEST_TABLES")
    if not path:
        pytest.fail("SHATRANJ_TB_TEST_TABLES is not set (tests/grpc_py/run.sh TABLES_DIR)")
    tables = pathlib.Path(path)
    for name in ("KQvKQ.counter-loss.tbd", "KQvKQ.counter-loss.tbw"):
        if not (tables / name).is_file():
            pytest.fail(f"{tables / name} is missing: the tests need the 4-man tables")
    return tables


class Server:
    """`shatranj-tb serve` on 127.0.0.1, port chosen by the OS and read from its log."""

    def __init__(self, tables):
        binary = os.environ.get("SHATRANJ_TB_BIN", str(ROOT / "target/release/shatranj-tb"))
        self.proc = subprocess.Popen(
            [binary, "serve", "--listen", "127.0.0.1:0", "--tables", str(tables), "--no-generate"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stderr.readline()
        found = re.search(r" on (127\.0\.0\.1:\d+)", line)
        if not found:
            self.proc.kill()
            raise AssertionError(f"server did not start: {line!r}")
        self.address = found.group(1)
        self.channel = grpc.insecure_channel(self.address)

    def stop(self):
        self.channel.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise
        return self.proc.returncode


@pytest.fixture(scope="module")
def server():
    srv = Server(tables_dir_with_kqvkq())
    wait_serving(srv.channel)
    yield srv
    srv.stop()


def wait_serving(channel, service=SERVICE):
    health = health_pb2_grpc.HealthStub(channel)
    deadline = time.monotonic() + 30
    while True:
        try:
            status = health.Check(
                health_pb2.HealthCheckRequest(service=service), timeout=TIMEOUT
            ).status
            if status == health_pb2.HealthCheckResponse.SERVING:
                return
        except grpc.RpcError:
            pass
        assert time.monotonic() < deadline, "server never became SERVING"
        time.sleep(0.05)


def test_health_is_serving(server):
    health = health_pb2_grpc.HealthStub(server.channel)
    for name in ("", SERVICE):
        answer = health.Check(health_pb2.HealthCheckRequest(service=name), timeout=TIMEOUT)
        assert answer.status == health_pb2.HealthCheckResponse.SERVING


def test_reflection_lists_the_service(server):
    stub = reflection_pb2_grpc.ServerReflectionStub(server.channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    answers = list(stub.ServerReflectionInfo(iter([request]), timeout=TIMEOUT))
    names = {s.name for s in answers[0].list_services_response.service}
    assert SERVICE in names
    assert "grpc.health.v1.Health" in names


def test_probe_positions_decided_by_the_rules(server, stubs):
    pb2, pb2_grpc = stubs
    client = pb2_grpc.TablebaseStub(server.channel)

    draw = client.Probe(pb2.ProbeRequest(fen=K_V_K), timeout=TIMEOUT)
    assert draw.wdl == pb2.WDL_DRAW
    assert not draw.HasField("dtm")
    assert draw.end == pb2.END_REASON_BARE_KING
    assert draw.material == "KvK"

    loss = client.Probe(pb2.ProbeRequest(fen=BARE_BLACK_TO_MOVE), timeout=TIMEOUT)
    assert (loss.wdl, loss.dtm) == (pb2.WDL_LOSS, 0)
    assert loss.HasField("dtm")

    win = client.Probe(pb2.ProbeRequest(fen=BARE_BLACK_WHITE_TO_MOVE), timeout=TIMEOUT)
    assert (win.wdl, win.dtm) == (pb2.WDL_WIN, 0)
    assert win.rules == "bare-king=counter,stalemate=loss"


def test_bad_fen_is_invalid_argument(server, stubs):
    pb2, pb2_grpc = stubs
    client = pb2_grpc.TablebaseStub(server.channel)
    for fen in ("not a fen", ILLEGAL):
        with pytest.raises(grpc.RpcError) as caught:
            client.Probe(pb2.ProbeRequest(fen=fen), timeout=TIMEOUT)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert fen in caught.value.details()


def test_probe_many_goes_on_after_a_bad_item(server, stubs):
    pb2, pb2_grpc = stubs
    client = pb2_grpc.TablebaseStub(server.channel)
    fens = [K_V_K, "not a fen", BARE_BLACK_TO_MOVE]
    answers = list(
        client.ProbeMany(iter(pb2.ProbeRequest(fen=f) for f in fens), timeout=TIMEOUT)
    )
    assert [a.index for a in answers] == [0, 1, 2]
    assert [a.WhichOneof("outcome") for a in answers] == ["result", "error", "result"]
    assert answers[1].error.code == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    assert answers[2].result.wdl == pb2.WDL_LOSS


def test_al_suli_diamond(server, stubs):
    pb2, pb2_grpc = stubs
    client = pb2_grpc.TablebaseStub(server.channel)
    # a 5-man position: its table is not among the 4-man ones
    with pytest.raises(grpc.RpcError) as caught:
        client.Probe(pb2.ProbeRequest(fen=AL_SULI_WITH_A_ROOK), timeout=TIMEOUT)
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert "shatranj-tb generate KQvKRQ" in caught.value.details()
    answer = client.Probe(pb2.ProbeRequest(fen=AL_SULI), timeout=TIMEOUT)
    assert (answer.wdl, answer.dtm) == (pb2.WDL_WIN, 39)
    assert answer.material == "KQvKQ"
    assert answer.best_move == answer.moves[0].uci
    # DTZ: the tables have DTZ files; the DTZ-optimal moves keep the position's DTZ
    assert answer.HasField("dtz") and 0 < answer.dtz <= 39
    assert answer.category == pb2.CATEGORY_WIN
    assert all(m.HasField("dtz") for m in answer.moves)
    assert any(m.dtz == answer.dtz for m in answer.moves)
    assert min(m.dtz for m in answer.moves if m.dtz > 0) == answer.dtz
    assert not answer.moves[0].zeroing
    # value_only: the position's value alone, without DTZ
    short = client.Probe(pb2.ProbeRequest(fen=AL_SULI, value_only=True), timeout=TIMEOUT)
    assert not short.HasField("dtz") and short.category == pb2.CATEGORY_UNSPECIFIED


def test_solve_streams_progress_then_the_proof(server, stubs):
    # Abu Na'im's mansuba (Murray No. 53): White mates in 3 (5 plies) with Nh5+ only;
    # 10 men, so the answer comes from the search, with or without tables
    pb2, pb2_grpc = stubs
    client = pb2_grpc.TablebaseStub(server.channel)
    request = pb2.SolveRequest(fen="6K1/3r3r/5kn1/5p2/5P2/6N1/8/4R1R1 w - - 0 1", max_plies=7)
    updates = list(client.Solve(request, timeout=TIMEOUT))
    progress = [u.progress.plies for u in updates if u.WhichOneof("update") == "progress"]
    results = [u.result for u in updates if u.WhichOneof("update") == "result"]
    assert progress == [1, 2, 3, 4]
    assert len(results) == 1 and updates[-1].WhichOneof("update") == "result"
    answer = results[0]
    assert (answer.result, answer.plies, answer.end) == (
        pb2.SOLVE_RESULT_WIN,
        5,
        pb2.END_REASON_CHECKMATE,
    )
    assert [(k.uci, k.san, k.plies) for k in answer.keys] == [("g3h5", "Nh5+", 5)]
    assert list(answer.line_san) == ["Nh5+", "Rxh5", "Rxg6+", "Kxg6", "Re6#"]
    assert list(answer.line)[:1] == ["g3h5"] and len(answer.line) == 5
    assert answer.proved == "White wins in 5 plies by shah mat"
    with pytest.raises(grpc.RpcError) as caught:
        list(client.Solve(pb2.SolveRequest(fen=request.fen, max_plies=1000), timeout=TIMEOUT))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_sigterm_stops_the_server_cleanly():
    with tempfile.TemporaryDirectory(prefix="shatranj-tables-") as empty:
        srv = Server(empty)
        wait_serving(srv.channel)
        assert srv.stop() == 0


def readme_python_snippet():
    """The README's ```python block of the gRPC client (the one that connects to the
    server), verbatim."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    clients = [b for b in blocks if "grpc.insecure_channel" in b]
    assert len(clients) == 1, "one gRPC client snippet in the README"
    return clients[0]


def test_readme_python_snippet(server, stubs):
    """Runs the README's client snippet (its stubs are the ones generated here) against
    the server, and checks what it prints against the README's comments."""
    snippet = readme_python_snippet()
    assert '"127.0.0.1:50051"' in snippet
    code = snippet.replace('"127.0.0.1:50051"', repr(server.address))
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "WDL_WIN 39 b3b4", lines
    assert lines[1].startswith("StatusCode.INVALID_ARGUMENT invalid FEN"), lines
    assert lines[2:] == ["0 WDL_DRAW", "1 WDL_LOSS"], lines
    # the README's comments say the same
    for line in ("# WDL_WIN 39 b3b4", "# 0 WDL_DRAW", "# 1 WDL_LOSS"):
        assert line in snippet
