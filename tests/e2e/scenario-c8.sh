#!/bin/sh
# Case C8, live on the simulator: rank 5 is SIGKILLed mid-step: its dump is missing, the others wait for it.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
run_case c8-rank-dies
grep -q 'left no dump' "$FR_TMP/run/verdict-full.txt" || fail "the missing dump is not named"
echo "c8-rank-dies: ok"
