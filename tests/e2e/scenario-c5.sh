#!/bin/sh
# Case C5, live on the simulator: rank 7 broadcasts where everyone else all-reduces: a collective-type
# mismatch with rank 7 as the minority culprit, nobody missing.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
run_case c5-coll-mismatch
grep -q '^verdict: mismatch' "$FR_TMP/run/verdict-full.txt" || fail "text verdict is not a mismatch"
echo "c5-coll-mismatch: ok"
