#!/bin/sh
# Real PyTorch Flight Recorder dumps of a 16-rank Megatron MoE job with two
# faulty ranks each (tests/fixtures/nvrx/, NVIDIA nvidia-resiliency-ext test
# data): the verdict is a hang (never a mismatch: the uneven all-to-all
# sizes of MoE routing are by design) and names exactly the two injected
# ranks as the root cause, each with the group and the op where it stopped.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
FIX="$FR_SRCDIR/tests/fixtures/nvrx"

# real_case SET STATE RANK RANK [UNEXPLAINED]: the set's verdict, and the
# observations it leaves unexplained (a JSON array; none by default).
real_case() {
  set_=$1 state=$2 r1=$3 r2=$4 unexplained=${5:-[]}
  "$FR_ANALYZE" --json "$FIX/$set_" > "$FR_TMP/$set_.json"
  rc=$?
  [ "$rc" -eq 1 ] || fail "$set_: fr-analyze exited $rc, expected 1 (a problem found)"
  cat > "$FR_TMP/$set_.expected.json" <<JSON
{ "verdict": { "status": "hang", "root_cause_ranks": [$r1, $r2], "mismatch": null, "cycle": null,
               "unexplained": $unexplained } }
JSON
  "$FR_JSON_EXPECT" "$FR_TMP/$set_.expected.json" "$FR_TMP/$set_.json" || fail "$set_: verdict differs"
  "$FR_JSON_EXPECT" --no-waiting-roots "$FR_TMP/$set_.json" || fail "$set_: a root cause waits in NCCL"
  # each root cause with the group and the op where it stopped
  for r in "$r1" "$r2"; do
    tr -d ' \t\n' < "$FR_TMP/$set_.json" |
      grep -q "\"comm\":\"[0-9a-f]*\",\"seq\":[0-9]*,\"op\":\"[A-Za-z]*\",\"pt_op\":\"[a-z_]*\",\"rank\":$r,\"state\":\"$state\"" ||
      fail "$set_: rank $r is not named $state with the group and op where it stopped"
  done
  "$FR_ANALYZE" "$FIX/$set_" > "$FR_TMP/$set_.txt"
  sed '/^$/,$d' "$FR_TMP/$set_.txt" > "$FR_TMP/$set_.verdict"
  cat "$FR_TMP/$set_.verdict"
  grep -q "^verdict: hang" "$FR_TMP/$set_.verdict" || fail "$set_: text verdict is not a hang"
  grep -q "root cause: *$r1,$r2\$" "$FR_TMP/$set_.verdict" || fail "$set_: root cause line"
  grep -q "PARALLEL_GROUP" "$FR_TMP/$set_.verdict" && grep -q "pg [0-9][0-9]*" "$FR_TMP/$set_.verdict" ||
    fail "$set_: the group's desc and name are not shown"
  grep -qw "none seq\|collective seq 0" "$FR_TMP/$set_.verdict" && fail "$set_: an op named none or seq 0"
  [ "$(awk 'length > 80' "$FR_TMP/$set_.verdict" | wc -l)" -eq 0 ] || fail "$set_: verdict wider than 80 columns"
}
# Ranks 4-7 (a pipeline stage of their own) wait in ops of their own groups
# that every member joined: in flight when they dumped, or held by something
# the dumps do not show; no fault explains them, and the verdict says so.
real_case gpu_error_1st unfinished 12 14 '[
  {"kind": "waiting", "rank": 6, "comm": "72e9d08e21848e70"}, {"kind": "waiting", "rank": 7, "comm": "72e9d08e21848e70"},
  {"kind": "waiting", "rank": 4, "comm": "72eeb78d34c01917"}, {"kind": "waiting", "rank": 5, "comm": "72eeb78d34c01917"},
  {"kind": "waiting", "rank": 6, "comm": "a4878ffc0dbd4a5d"}, {"kind": "waiting", "rank": 7, "comm": "a4878ffc0dbd4a5d"},
  {"kind": "waiting", "rank": 4, "comm": "a573d0cfd7d3e6f9"}, {"kind": "waiting", "rank": 5, "comm": "a573d0cfd7d3e6f9"},
  {"kind": "waiting", "rank": 6, "comm": "a573d0cfd7d3e6f9"}, {"kind": "waiting", "rank": 7, "comm": "a573d0cfd7d3e6f9"},
  {"kind": "waiting", "rank": 4, "comm": "b08164f481cf1cf6"}, {"kind": "waiting", "rank": 5, "comm": "b08164f481cf1cf6"}]'

real_case lock_gil_1st lagging 9 14
echo "pytorch-real: both real dump sets name exactly their two faulty ranks"
