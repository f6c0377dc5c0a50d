#!/usr/bin/env bash
# Runs the Python grpcio client test against the real `shatranj-tb serve` binary.
#
#   tests/grpc_py/run.sh [TABLES_DIR]
#
# TABLES_DIR (or $SHATRANJ_TB_TEST_TABLES): a tables directory holding at least KQvKQ,
# for the al-Suli's Diamond check (win, DTM 39); without it that check is skipped and the
# rest runs over an empty tables directory.
# $SHATRANJ_TB_BIN: the binary to test (default: target/release/shatranj-tb, built here).
# The client libraries go into a virtualenv at target/grpc-venv (pip, from PyPI).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

if [[ $# -gt 0 ]]; then
    export SHATRANJ_TB_TEST_TABLES="$(cd "$1" && pwd)"
fi

source "$root/tests/support/venv.sh"
ensure_venv grpc-venv tests/grpc_py/requirements.txt

if [[ -z "${SHATRANJ_TB_BIN:-}" ]]; then
    cargo build --release --quiet --bin shatranj-tb
    export SHATRANJ_TB_BIN="$root/target/release/shatranj-tb"
fi

exec "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider tests/grpc_py/test_grpc.py
