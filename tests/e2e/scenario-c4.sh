#!/bin/sh
# Case C4, live on the simulator: rank 0 leaves the loop after step 18 (alive, outside NCCL); it lags,
# and its thread stack says where it is (the job's stop function).
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
check_hang_case c4-rank-leaves-loop 4
check_stack c4-rank-leaves-loop 0 job_stop_forever
echo "c4-rank-leaves-loop: ok"
