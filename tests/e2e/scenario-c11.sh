#!/bin/sh
# Case C11 of cases.md, live on the simulator: the link 3->4 stalls on
# channel 1 while every rank has joined the all-reduce; the proxy progress
# in the dumps names that link, and no rank is blamed.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
check_hang_case c11-link-stalls 8
grep -q 'all joined, not completed' "$FR_TMP/run/verdict.txt" || fail "verdict does not say all joined"
grep -q 'missing links:  3->4 channel 1 (SendPeerWait' "$FR_TMP/run/verdict.txt" ||
  fail "the text verdict does not name link 3->4 on channel 1"
