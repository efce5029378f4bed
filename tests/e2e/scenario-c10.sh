#!/bin/sh
# Case C10, live on the simulator: two ranks call all-reduces on comms B and C in opposite orders: a
# deadlock cycle across communicators.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
run_case c10-order-inversion
grep -q '^verdict: deadlock' "$FR_TMP/run/verdict-full.txt" || fail "no deadlock in the text verdict"
check_tui_first c10-order-inversion "DEADLOCK" "wait-for cycle:"
echo "c10-order-inversion: ok"
