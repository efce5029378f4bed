#!/bin/sh
# Case C13, live on the simulator: rank 6 is 200 ms late every step; a dump is triggered by hand and frames
# follow: no hang, rank 6 the straggler, and --exclude-list prints 6.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
run_case c13-straggler
ls "$FR_TMP/run/dumps" | grep -q -- '-f0001\.frz$' || fail "no second frame"
[ "$("$FR_ANALYZE" --exclude-list "$FR_TMP/run/dumps")" = 6 ] || fail "--exclude-list does not print 6"
echo "c13-straggler: ok"
