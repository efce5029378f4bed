#!/bin/sh
# CUDA graphs, live on the simulator: NCCL calls captured once into a graph
# and replayed every step (the job looks cuGraphLaunch up through
# cuGetProcAddress_v2, as a statically linked CUDA runtime does).  Each
# case's analysis must match its expected verdict, which names the replay
# and the graph; replays must carry the same seqs on every rank.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir

# replay_seqs DUMP: "GRAPH REPLAY OP SEQ" per replay record of a dump.
replay_seqs() {
  "$FR_DUMP" "$1" | awk '$1 ~ /^[0-9]+$/ && NF > 10 { seq = $3 }
    $1 == "replay" && $3 == "of" { sub(",", "", $5); print $5, $2, $7, seq }'
}

# A decode loop of 10,000 replays; rank 2 stops launching at replay 9000.
check_hang_case g-decode-stops-launching-w4 4
v=$(tr '\n' ' ' < "$FR_TMP/run/verdict.txt" | tr -s ' ')
case "$v" in
  *"rank 2 never launched replay 9000 of graph 1: AllReduce seq 18003"*) ;;
  *) fail "g-decode-stops-launching-w4: the verdict does not name rank 2 and replay 9000: $v" ;;
esac
# every rank's replays of the retained window carry the same seqs
for r in 0 1 3; do
  replay_seqs "$(ls "$FR_TMP/run/dumps/"*-r0000$r-f0000.frz)" | sort > "$FR_TMP/seqs.$r"
  [ -s "$FR_TMP/seqs.$r" ] || fail "rank $r's dump shows no replay record"
done
grep -q '^1 8999 1 18001$' "$FR_TMP/seqs.0" || fail "rank 0: replay 8999 of graph 1 is not at seq 18001"
cmp -s "$FR_TMP/seqs.0" "$FR_TMP/seqs.1" && cmp -s "$FR_TMP/seqs.0" "$FR_TMP/seqs.3" ||
  fail "the replays' seqs differ between ranks"
# rank 2's last replay is 8999; it has no record of replay 9000
replay_seqs "$(ls "$FR_TMP/run/dumps/"*-r00002-f0000.frz)" > "$FR_TMP/seqs.2"
tail -n 1 "$FR_TMP/seqs.2" | grep -q '^1 8999 2 18002$' || fail "rank 2's last replay is not 8999"
check_tui_first g-decode-stops-launching-w4 "replay 9000 of graph 1"

# A replay whose kernel never finishes on rank 1: device side, with the replay.
check_hang_case g-replay-kernel-stall-w4 4
grep -q 'device or network side' "$FR_TMP/run/verdict.txt" || fail "g-replay-kernel-stall-w4: not the device side"
grep -q 'replay 300 of graph 1' "$FR_TMP/run/verdict.txt" || fail "g-replay-kernel-stall-w4: no replay 300"

# A rank whose graph was captured with another size: a mismatch, rank 3 the culprit.
run_case g-replay-other-size-w4 >/dev/null
grep -q '^verdict: mismatch' "$FR_TMP/run/verdict-full.txt" || fail "g-replay-other-size-w4: not a mismatch"
r3=$(ls "$FR_TMP/run/dumps/"*-r00003-f*.frz | tail -n 1)
"$FR_DUMP" "$r3" | grep -q 'captured into graph 1 as its op 1' || fail "rank 3's dump shows no captured op"
echo "g-replay-other-size-w4: ok"

# Graphs and eager calls on one comm: the verdict's seq is the eager broadcast.
check_hang_case g-mixed-eager-w4 4
for r in 0 1 2 3; do
  replay_seqs "$(ls "$FR_TMP/run/dumps/"*-r0000$r-f0000.frz)" | awk '$2 < 49' | sort > "$FR_TMP/mixed.$r"
done
grep -q '^2 48 2 248$' "$FR_TMP/mixed.0" || fail "g-mixed-eager-w4: replay 48 of graph 2 is not at seq 247-248"
for r in 1 2 3; do
  cmp -s "$FR_TMP/mixed.0" "$FR_TMP/mixed.$r" || fail "g-mixed-eager-w4: rank $r's replays differ from rank 0's"
done
echo "scenario-graphs: ok"
