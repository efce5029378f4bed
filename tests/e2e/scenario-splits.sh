#!/bin/sh
# A healthy job with CommSplit communicators, grouped Send/Recv and
# ncclBcast, every rank dumping at exit: the split comms get the same
# identity on every member (7 comms, each complete), nothing is stuck.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
run_case healthy-splits
grep -q '^communicators: 7$' "$FR_TMP/run/verdict-full.txt" || fail "expected 7 communicators"
full=$(grep -cE '^  comm [0-9a-f]{16}: ([0-9]+) ranks, \1 with a dump' "$FR_TMP/run/verdict-full.txt")
[ "$full" -eq 7 ] || fail "only $full of 7 communicators have every member (split identity differs across ranks?)"
grep -q 'status=exit:0' "$FR_TMP/run/launch.log" || fail "ranks did not exit cleanly"
! grep -v 'status=exit:0 dump=yes' "$FR_TMP/run/launch.log" | grep -q . || fail "a rank failed or did not dump"
echo "healthy-splits: ok"
