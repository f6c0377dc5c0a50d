#!/usr/bin/env bash
# Runs the explorer page test in a real headless browser (Debian's chromium and
# chromium-driver, driven by Selenium) against the real `shatranj-tb serve --http`.
#
#   tests/browser/run.sh TABLES_DIR
#
# TABLES_DIR: a tables directory holding at least KQvKQ and KRvKQ (e.g. target/test-tables,
# which the Rust tests generate).
# $SHATRANJ_TB_BIN: the binary to test (default: target/release/shatranj-tb, built here).
# Selenium goes into a virtualenv at target/browser-venv (pip, from PyPI); screenshots are
# written to target/explorer.png and target/explorer-phone.png.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

if [[ $# -ne 1 ]]; then
    echo "usage: tests/browser/run.sh TABLES_DIR" >&2
    exit 1
fi
export SHATRANJ_TB_TEST_TABLES="$(cd "$1" && pwd)"
for table in KQvKQ KRvKQ; do  # stored forms (KQvKR is stored as KRvKQ)
    if [[ ! -f "$SHATRANJ_TB_TEST_TABLES/$table.counter-loss.tbd" ]]; then
        echo "tests/browser/run.sh: $1 has no $table table (the tests need the 4-man tables)" >&2
        exit 1
    fi
done
export SHATRANJ_TB_SHOTS="$root/target"

for tool in chromium chromedriver; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "tests/browser/run.sh: $tool is missing (apt-get install chromium chromium-driver)" >&2
        exit 1
    fi
done
export SHATRANJ_TB_CHROMIUM="$(command -v chromium)"
export SHATRANJ_TB_CHROMEDRIVER="$(command -v chromedriver)"

source "$root/tests/support/venv.sh"
ensure_venv browser-venv tests/browser/requirements.txt

if [[ -z "${SHATRANJ_TB_BIN:-}" ]]; then
    cargo build --release --quiet --bin shatranj-tb
    export SHATRANJ_TB_BIN="$root/target/release/shatranj-tb"
fi
if [[ ! -x "$SHATRANJ_TB_BIN" ]]; then
    echo "tests/browser/run.sh: SHATRANJ_TB_BIN=$SHATRANJ_TB_BIN is not an executable" >&2
    exit 1
fi

exec "$venv/bin/python" tests/browser/test_explorer.py
