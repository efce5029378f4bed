#!/bin/sh
# The faults of the analysis's fault model, run live (tests/scenarios/m-*.scn,
# tests/scenarios/README.md): an init that fails on one rank (world, a split,
# a late comm), a call that never returns, members that disagree on the
# algorithm or protocol (per host by NCCL_PROTO, per op), an all-to-all-v
# whose splits differ on one rank, a capture into a graph never launched (then
# misaligned: a later collective completing on the capturing rank alone, a
# p2p exchange waiting for innocent neighbours), a
# group never ended, sub-groups that never formed for want of the same ranks.
# Each scenario's "# dump: RANK WORD" lines say what that rank's dump must
# show (fr-dump --json: a record or comm flag, an algorithm or protocol), so
# the simulator and the job are checked to inject the fault; the analysis is
# compared with NAME.expected.json (every scenario has one), and no root
# cause may wait inside an NCCL call.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
for scn in "$FR_SRCDIR"/tests/scenarios/m-*.scn; do
  name=$(basename "$scn" .scn)
  "$FR_RUN_SCENARIO" "$scn" "$FR_TMP/run" > "$FR_TMP/stdout" 2> "$FR_TMP/stderr" ||
    { cat "$FR_TMP/stderr" >&2; fail "run-scenario $name failed"; }
  grep '^# dump: ' "$scn" | while read -r _ _ rank word; do
    dump=$(ls "$FR_TMP"/run/dumps/*-r$(printf %05d "$rank")-f*.frz 2>/dev/null | tail -n 1)
    [ -n "$dump" ] || fail "$name: rank $rank left no dump"
    "$FR_DUMP" --json "$dump" | grep -qw -- "$word" || fail "$name: rank $rank's dump does not show $word"
  done || exit 1
  exp="$FR_SRCDIR/tests/scenarios/$name.expected.json"
  [ -f "$exp" ] || fail "$name: no $exp"
  "$FR_JSON_EXPECT" "$exp" "$FR_TMP/run/analysis.json" ||
    { sed '/^$/,$d' "$FR_TMP/run/verdict.txt" >&2; fail "$name: analysis differs from $exp"; }
  "$FR_JSON_EXPECT" --no-waiting-roots "$FR_TMP/run/analysis.json" || fail "$name: a root cause waits in NCCL"
  echo "$name: ok"
done
