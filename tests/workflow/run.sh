#!/usr/bin/env bash
# The 4-man set through Snakemake (workflow/Snakefile, the local profile, 2 cores): the
# same files and MANIFEST as one `generate --men 4`; run again it does nothing; a table
# deleted is remade and nothing else is; a job killed halfway leaves no table and is
# redone.
#
#   tests/workflow/run.sh [REFERENCE]
#
# $SHATRANJ_TB_BIN: the binary (default target/debug/shatranj-tb, the one `cargo test`
# builds). Snakemake goes into the virtualenv target/snakemake-venv (pip, from PyPI).
# Fails, never skips, when the binary or Snakemake is missing.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"

bin="${SHATRANJ_TB_BIN:-$root/target/debug/shatranj-tb}"
if [[ ! -x "$bin" ]]; then
    echo "tests/workflow: no binary at $bin (build it with cargo test or cargo build)" >&2
    exit 1
fi

source "$root/tests/support/venv.sh"
ensure_venv snakemake-venv tests/workflow/requirements.txt
snakemake="$venv/bin/snakemake"
if [[ ! -x "$snakemake" ]]; then
    echo "tests/workflow: snakemake did not install into $venv" >&2
    exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() {
    echo "tests/workflow: FAIL: $*" >&2
    exit 1
}

# The reference: the folder REFERENCE if given (a `generate --men 4` of this binary's
# sources, such as the Rust tests' target/test-tables), else one `generate --men 4` made
# here. Either way its MANIFEST must be tables/MANIFEST.
# milliseconds since $1 (from `date +%s%N`), as seconds
seconds_since() { local ms=$((($(date +%s%N) - $1) / 1000000)); printf '%d.%03d' $((ms / 1000)) $((ms % 1000)); }
if [[ -n "${1:-}" ]]; then
    [[ -d "$1" ]] || fail "no reference folder $1"
    mkdir -p "$work/ref"
    cp "$1"/*.tb? "$work/ref/"
    "$bin" manifest --tables "$work/ref" 2>/dev/null || fail "manifest of the reference failed"
    generate_seconds="(not run: reference $1)"
else
    start=$(date +%s%N)
    "$bin" generate --men 4 --tables "$work/ref" 2>/dev/null
    generate_seconds="$(seconds_since "$start") s"
fi
cmp -s "$work/ref/MANIFEST" tables/MANIFEST || fail "the reference's MANIFEST is unlike tables/MANIFEST"

tables="$work/run/tables"
mkdir -p "$work/run"
sm() {
    (cd "$work/run" && "$snakemake" -s "$root/workflow/Snakefile" \
        --profile "$root/workflow/profiles/local" --cores 2 \
        --config tables="$tables" bin="$bin" "$@")
}
same_as_reference() {
    local n=0
    for f in "$work/ref"/*; do
        cmp -s "$f" "$tables/$(basename "$f")" || fail "$(basename "$f") differs from generate --men 4's"
        n=$((n + 1))
    done
    # 15 tables, each a WDL, a DTM and a DTZ file, and the MANIFEST
    [[ $n -eq 46 ]] || fail "$n files in the reference, 46 expected"
    [[ $(ls -A "$tables" | wc -l) -eq 46 ]] || fail "other files in $tables: $(ls -A "$tables")"
}
# name, inode and modification time of every file: what a rerun must leave alone
stamps() { (cd "$tables" && stat -c '%n %i %Y.%y' * | sort); }

start=$(date +%s%N)
sm --quiet >"$work/log1" 2>&1 || { cat "$work/log1"; fail "the first run failed"; }
snakemake_seconds=$(seconds_since "$start")
same_as_reference
echo "tests/workflow: 4-man set: generate --men 4 ${generate_seconds}, snakemake --cores 2 ${snakemake_seconds} s"

# Run again: nothing to do.
before="$(stamps)"
sm >"$work/log2" 2>&1 || { cat "$work/log2"; fail "the second run failed"; }
grep -q "Nothing to be done" "$work/log2" || { cat "$work/log2"; fail "the second run did something"; }
[[ "$(stamps)" == "$before" ]] || fail "the second run touched files"

# A deleted table is remade, and nothing else: no other table, and the MANIFEST is
# rewritten with the same bytes. (KRvKR: no table reads it. A table that others read is
# remade with them, Snakemake's rule for a job whose input is remade.)
rm "$tables"/KRvKR.*
sm >"$work/log3" 2>&1 || { cat "$work/log3"; fail "the run after deleting KRvKR failed"; }
same_as_reference
diff <(echo "$before" | grep -Ev '^(KRvKR\.|MANIFEST)') <(stamps | grep -Ev '^(KRvKR\.|MANIFEST)') >/dev/null ||
    fail "files other than KRvKR's changed: $(diff <(echo "$before") <(stamps))"
grep -Eq "^(local)?rule table_KRvKR:" "$work/log3" || { cat "$work/log3"; fail "KRvKR was not remade"; }
[[ $(grep -Ec "^(local)?rule table_" "$work/log3") -eq 1 ]] || { cat "$work/log3"; fail "other tables were redone"; }

# A job killed halfway leaves no table (only a temporary of its own, or nothing) ...
rm "$tables"/KNvKP.*
"$bin" generate KNvKP --no-deps --tables "$tables" --threads 1 2>/dev/null &
job=$!
sleep 0.5
kill -KILL "$job" 2>/dev/null || true
wait "$job" 2>/dev/null || true
for f in "$tables"/KNvKP.counter-loss.*; do
    [[ -e "$f" ]] || continue
    # a file written before the kill is complete
    cmp -s "$f" "$work/ref/$(basename "$f")" || fail "a killed job left a partial $(basename "$f")"
done
# ... and, like an attempt killed between writing its two files, is redone by Snakemake.
rm -f "$tables"/KNvKP.counter-loss.tbw
echo half > "$tables/.KNvKP.counter-loss.tbw.tmp.999999999.0"
sm >"$work/log4" 2>&1 || { cat "$work/log4"; fail "the run after the killed job failed"; }
same_as_reference
echo "tests/workflow: ok"
