#!/bin/sh
# Case C12, live on the simulator: C1 with a wrapped ring on rank 2, an empty dump from rank 6 and none
# from rank 7: the C1 verdict for what the data supports; the empty file is
# reported as a problem.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
run_case c12-partial-evidence
grep -q 'r00006-f0000.frz: at byte 0: empty file' "$FR_TMP/run/verdict-full.txt" || fail "the empty dump is not reported"
echo "c12-partial-evidence: ok"
