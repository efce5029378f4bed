#!/bin/sh
# Waits that the creation of communicators makes, and comm ranks that share
# a process (tests/scenarios/README.md): a comm that never forms because a
# rank never calls its init (W=4, and one of two comms at W=8); pairwise comms
# created lazily in inconsistent orders, a cycle of init waits (W=3, W=4: a
# deadlock, though no dump places the other end of each pair); one unique id
# used by two and by three groups (a shared id, a hang inside the second
# group at W=4); and one process driving several devices (CommInitAll) where
# one device skips a collective (W=2, W=3), or a link between two of its
# devices stops (W=1, W=2); a shrink that a survivor never
# calls (its excluded rank left no dump, and is not the one blamed), and a
# healthy shrink (called by the survivors only, no collective of the parent).
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
for name in v-init-never-called-w4 v-init-never-called-w8 v-init-pair-cycle-w3 \
  v-init-pair-cycle-w4 v-shared-uid-w4 v-shared-uid-w6 v-initall-skip-dev-w2 \
  v-initall-skip-dev-w3 v-shrink-survivor-stops-w4; do
  run_case "$name"
  expect_exit 1 "$FR_ANALYZE" "$FR_TMP/run/dumps" >/dev/null
  echo "$name: ok"
done
run_case healthy-shrink
expect_exit 0 "$FR_ANALYZE" "$FR_TMP/run/dumps" >/dev/null
# the comm that never formed names who arrived and who did not
run_case v-init-never-called-w4
grep -q 'never called CommInitRank' "$FR_TMP/run/verdict-full.txt" || fail "verdict does not say who never called the init"
grep -q 'never formed:   comm ranks 0-2 arrived' "$FR_TMP/run/verdict-full.txt" || fail "details do not list the arrived comm ranks"
# a stalled link between two devices of one process is named by comm rank,
# not "0->0" (both ends are global rank 0), in the summary and the list
for name in v-initall-link-stall-w1 v-initall-link-stall-w2; do
  run_case "$name" > /dev/null
  expect_exit 1 "$FR_ANALYZE" "$FR_TMP/run/dumps" >/dev/null
  want=$([ "$name" = v-initall-link-stall-w1 ] && echo "2->3" || echo "1->2")
  grep -q "missing links:  comm rank $want of rank 0 channel 0 (SendPeerWait" "$FR_TMP/run/verdict-full.txt" ||
    { cat "$FR_TMP/run/verdict-full.txt" >&2; fail "$name: the link is not named by comm rank"; }
  ! grep -q ' 0->0' "$FR_TMP/run/verdict-full.txt" || fail "$name: a link reads 0->0"
  echo "$name: ok"
done
# the CommInitAll verdict names the comm rank and device
run_case v-initall-skip-dev-w2
grep -q 'comm rank 1 (device 1) of rank 0 never entered' "$FR_TMP/run/verdict-full.txt" ||
  fail "verdict does not name the device that skipped"
