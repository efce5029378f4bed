#!/bin/sh
# Case C3, live on the simulator: one rank is ahead: rank 2 starts a fifth step alone; it is the divergent rank.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
run_case c3-rank-ahead
expect_exit 1 "$FR_ANALYZE" "$FR_TMP/run/dumps" >/dev/null
echo "c3-rank-ahead: ok"
