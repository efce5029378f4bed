#!/bin/sh
# Case C1 of cases.md, live: the scenario runs on the simulator with the
# recorder preloaded into every rank; fr-analyze's JSON must match the
# expected verdict, and every rank must have dumped frame 0.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
check_hang_case c1-rank-stops 8
