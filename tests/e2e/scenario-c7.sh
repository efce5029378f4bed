#!/bin/sh
# Case C7, live on the simulator: a count mismatch that completes, then rank 0 stops: both are reported.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
run_case c7-size-mismatch-completes
echo "c7-size-mismatch-completes: ok"
