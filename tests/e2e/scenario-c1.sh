#!/bin/sh
# Case C1 of cases.md, live: the scenario runs on the simulator with the
# recorder preloaded into every rank; fr-analyze's JSON must match the
# expected verdict, and every rank must have dumped frame 0.  The verdict
# shows where rank 5 is: its thread stack ends in the job's stop function,
# in a stack class of its own.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
check_hang_case c1-rank-stops 8
check_stack c1-rank-stops 5 job_stop_forever
check_tui_first c1-rank-stops " HANG: rank 5 never entered" ">         5 C C" "-- rank 5 (comm rank 5)"
