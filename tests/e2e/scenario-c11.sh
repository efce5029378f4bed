#!/bin/sh
# Case C11, live on the simulator: the link 3->4 stalls on
# channel 1 while every rank has joined the all-reduce; the proxy progress
# in the dumps names that link, and no rank is blamed.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
check_hang_case c11-link-stalls 8
grep -q 'all joined, not completed' "$FR_TMP/run/verdict-full.txt" || fail "verdict does not say all joined"
grep -q 'missing links:  3->4 channel 1 (SendPeerWait' "$FR_TMP/run/verdict-full.txt" ||
  fail "the text verdict does not name link 3->4 on channel 1"
# NCCL's own view of the stuck all-reduce is on the record: its fifth
# AllReduce (NCCL's seqNumber 4), ring, Simple protocol, 2 channels
d4=$(ls "$FR_TMP"/run/dumps/*-r00004-f0000.frz)
"$FR_DUMP" --json "$d4" > "$FR_TMP/d4.json" || fail "fr-dump --json $d4"
tr -d ' \t\n' < "$FR_TMP/d4.json" |
  grep -q '"seq":5,"op":"AllReduce"[^}]*"nccl_seq":4,"algo":"Ring","proto":"Simple","nchannels":2' ||
  fail "rank 4's AllReduce seq 5 lacks NCCL's seqNumber/algo/proto/channels"
check_tui_first c11-link-stalls "all joined, not completed" "missing link 3 -> 4" "channel 1 stopped in SendPeerWait"
echo "c11-link-stalls: ok"
