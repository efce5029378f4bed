#!/bin/sh
# Case C2, live: the scenario runs on the simulator with the
# recorder preloaded into every rank; fr-analyze's JSON must match the
# expected verdict, and every rank must have dumped frame 0.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
check_hang_case c2-majority-lags 8
