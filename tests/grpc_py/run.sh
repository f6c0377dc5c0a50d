#!/usr/bin/env bash
# Runs the Python grpcio client test against the real `shatranj-tb serve` binary.
#
#   tests/grpc_py/run.sh TABLES_DIR
#
# TABLES_DIR (or $SHATRANJ_TB_TEST_TABLES): the 4-man tables (target/test-tables, which
# the Rust tests generate); the tests fail without them.
# $SHATRANJ_TB_BIN: the binary to test (default: target/release/shatranj-tb, built here).
# The client libraries go into a virtualenv at target/grpc-venv (pip, from PyPI).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

if [[ $# -gt 0 ]]; then
    export SHATRANJ_TB_TEST_TABLES="$(cd "$1" && pwd)"
fi
if [[ -z "${SHATRANJ_TB_TEST_TABLES:-}" ]]; then
    echo "usage: tests/grpc_py/run.sh TABLES_DIR (the 4-man tables, e.g. target/test-tables)" >&2
    exit 1
fi

source "$root/tests/support/venv.sh"
ensure_venv grpc-venv tests/grpc_py/requirements.txt

if [[ -z "${SHATRANJ_TB_BIN:-}" ]]; then
    cargo build --release --quiet --bin shatranj-tb
    export SHATRANJ_TB_BIN="$root/target/release/shatranj-tb"
fi
if [[ ! -x "$SHATRANJ_TB_BIN" ]]; then
    echo "tests/grpc_py/run.sh: SHATRANJ_TB_BIN=$SHATRANJ_TB_BIN is not an executable" >&2
    exit 1
fi

exec "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider tests/grpc_py/test_grpc.py
