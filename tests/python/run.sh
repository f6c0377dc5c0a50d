#!/usr/bin/env bash
# Builds the Python module with `pip install .` (maturin, the binding crate in python/)
# into a virtualenv at target/py-venv and runs its tests (pytest).
#
#   tests/python/run.sh TABLES_DIR
#
# TABLES_DIR: the 4-man tables (target/test-tables, which the Rust tests generate).
# $SHATRANJ_TB_BIN: the shatranj-tb binary whose `probe --json` the module must match.
# The build is a release build of the binding crate into target/ (the same target
# directory as every other build, so a second run recompiles nothing).
# pytest, maturin and the oracle pyffish 0.0.90 come from PyPI (requirements.txt).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export SHATRANJ_TB_TEST_TABLES="$(cd "${1:?usage: tests/python/run.sh TABLES_DIR}" && pwd)"

source "$root/tests/support/venv.sh"
ensure_venv py-venv tests/python/requirements.txt

# The build tools are in the venv already: no isolated build environment to download.
start=$SECONDS
PATH="$venv/bin:$PATH" "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-build-isolation --force-reinstall --no-deps "$root"
echo "tests/python/run.sh: pip install . took $((SECONDS - start)) s" >&2

# Run from outside the repository, so that `import shatranj_tb` finds the installed
# package and not python/shatranj_tb (which lacks the native module).
cd "$root/target"
exec "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$root/tests/python"
