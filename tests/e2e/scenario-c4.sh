#!/bin/sh
# Case C4 of cases.md, live on the simulator: rank 0 leaves the loop after step 18 (alive, outside NCCL); it lags.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
check_hang_case c4-rank-leaves-loop 4
echo "c4-rank-leaves-loop: ok"
