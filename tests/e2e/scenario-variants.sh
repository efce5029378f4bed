#!/bin/sh
# More of each kind than the handed cases' instances (tests/scenarios/README.md): a rank stopping in a split
# comm behind a wait-for chain (W=6), the majority lagging at W=16, a
# deadlock cycle through three comms and three ranks, rank 0 ahead at W=8, a
# root mismatch in a split comm, rank 0 dying at W=4, a straggler at W=4, and
# a rank whose kernel stops inside a joined all-reduce (no link, no rank blamed),
# and p2p chains whose middle ranks wait inside NCCL groups (W=3, W=5: only
# the rank that stopped outside NCCL is the root cause), and three kinds from
# a break-it pass: a pipeline stall that cascades into the data-parallel
# pairs, a grouped ring exchange with rank 0 stopped, a rank stopped before
# its second communicator's op; and an order inversion across comms without
# a host wait, found through stream order (W=2, W=4: a deadlock); and a rank
# stopped before an all-to-all (one NCCL group of sends and receives): the
# pairs that both posted wait with their group, not on a link (W=4, 5, 6);
# and a rank whose stream is busy for good before a collective the others
# started (W=3, 4, 8): it is named.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
for name in v-stop-in-split v-majority-w16 v-cycle-three-comms v-ahead-w8 \
  v-root-mismatch-split v-dies-rank0-w4 v-straggler-w4 v-kernel-stall-w4 \
  v-p2p-chain-w3 v-p2p-chain-w5 v-pp-dp-cascade v-ring-exchange v-sleep-2nd-comm \
  v-order-stream-w2 v-order-stream-w4 v-crash-mid-ring-w5 v-pipe-crash-lost-dump-w4 v-pipe-crash-lost-dump-w4b \
  v-pp-crash-lost-dump-w8 v-pp-crash-lost-dump-w8b v-early-end-empty-w5 v-early-end-ahead-w5 v-early-end-tp-w6 v-early-leaver-minority-w5 \
  v-a2a-group-stop-w4 v-a2a-group-stop-ep-w6 v-a2a-group-stop-w5 \
  v-busy-stream-w4 v-busy-stream-tp-w8 v-busy-stream-w3; do
  run_case "$name"
  expect_exit 1 "$FR_ANALYZE" "$FR_TMP/run/dumps" >/dev/null
  case $name in
    v-a2a-group-*) # the pairs of an all-to-all that both posted wait with their group, not on the link
      grep -q "held by its NCCL group" "$FR_TMP/run/verdict-full.txt" && ! grep -q "device or network" "$FR_TMP/run/verdict-full.txt" ||
        { cat "$FR_TMP/run/verdict-full.txt" >&2; fail "$name: pairs held by their group read as a device or network fault"; } ;;
    v-pipe-crash-lost-dump-w4) # the peer placed by the world comm's line, named (no empty rank list)
      tr '\n' ' ' < "$FR_TMP/run/verdict-full.txt" | tr -s ' ' | grep -q "that rank 2 never posted" ||
        { cat "$FR_TMP/run/verdict-full.txt" >&2; fail "$name: the placed peer is not said"; } ;;
    v-pp-crash-lost-dump-w8) # peers no dump places: the summary says so, with no empty rank list
      tr '\n' ' ' < "$FR_TMP/run/verdict-full.txt" | tr -s ' ' | grep -q "that no member with a dump posted" ||
        { cat "$FR_TMP/run/verdict-full.txt" >&2; fail "$name: the unplaced peers are not said"; } ;;
    v-early-end-empty-w5|v-early-end-tp-w6) # a teardown before the stuck seq, no minority: both readings
      tr '\n' ' ' < "$FR_TMP/run/verdict-full.txt" | tr -s ' ' | grep -q "down before seq .* the dumps cannot tell which" ||
        { cat "$FR_TMP/run/verdict-full.txt" >&2; fail "$name: the two readings are not said"; } ;;
    v-order-stream-*) # the member whose op sits behind another on its stream: "behind", not lagging
      grep -q "^      behind   [0-9,-]* (enqueued it, queued behind other ops on" "$FR_TMP/run/verdict-full.txt" &&
        ! grep -q "^      lagging \|lagging members got as far as" "$FR_TMP/run/verdict-full.txt" ||
        { cat "$FR_TMP/run/verdict-full.txt" >&2; fail "$name: a member queued on its stream is listed as lagging"; } ;;
  esac
  echo "$name: ok"
done
