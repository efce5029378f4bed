#!/bin/sh
# Case C6, live on the simulator: even ranks bfloat16, odd ranks float32: two groups, no single culprit.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
run_case c6-dtype-split
grep -q 'no single culprit' "$FR_TMP/run/verdict-full.txt" || fail "a culprit was named"
echo "c6-dtype-split: ok"
