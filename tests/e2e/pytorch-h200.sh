#!/bin/sh
# Real dumps of real 4-rank PyTorch jobs (PyTorch 2.11, NCCL 2.28.9, one
# H200, tests/fixtures/pytorch-fr/h200-4rank/, made by
# tests/device/run-multirank.sh): every kind PyTorch writes (the full
# pickle, JSON, active entries only, pg_status alone, the watchdog's dump
# on timeout) and the recorder's own frz dumps of the same jobs.  Each
# directory gets its verdict: the healthy job is healthy, the hung ones
# name exactly the rank that stopped (3 before world's all_to_all_single,
# 1 before tp0's uneven all_gather, 2 before its send in a pipeline), never
# one that waits in NCCL.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
FIX="$FR_SRCDIR/tests/fixtures/pytorch-fr/h200-4rank"

# h200_case JOB KIND STATUS EXIT [ROOT]: JOB/KIND's verdict.
h200_case() {
  job=$1 kind=$2 status=$3 want=$4 root=${5:-}
  d="$FIX/$job/$kind"
  [ -d "$d" ] || fail "missing $d"
  "$FR_ANALYZE" --json "$d" > "$FR_TMP/v.json"
  rc=$?
  [ "$rc" -eq "$want" ] || { "$FR_ANALYZE" "$d" >&2; fail "$job/$kind: fr-analyze exited $rc, expected $want"; }
  if [ -n "$root" ]; then
    printf '{ "verdict": { "status": "%s", "root_cause_ranks": [%s], "mismatch": null } }\n' "$status" "$root"
  else
    printf '{ "verdict": { "status": "%s" } }\n' "$status"
  fi > "$FR_TMP/want.json"
  "$FR_JSON_EXPECT" "$FR_TMP/want.json" "$FR_TMP/v.json" ||
    { "$FR_ANALYZE" "$d" >&2; fail "$job/$kind: verdict differs"; }
  "$FR_JSON_EXPECT" --no-waiting-roots "$FR_TMP/v.json" || fail "$job/$kind: a root cause waits in NCCL"
  echo "$job/$kind: $status${root:+ [$root]}"
}

# h200_no_wrong JOB KIND RANK: JOB/KIND's verdict names no rank but RANK
# (it may name none: a kind whose verdict is not complete yet, below).
h200_no_wrong() {
  job=$1 kind=$2 ok=$3
  "$FR_ANALYZE" --json "$FIX/$job/$kind" > "$FR_TMP/v.json"
  [ $? -le 2 ] || fail "$job/$kind: fr-analyze failed"
  python3 - "$FR_TMP/v.json" "$ok" <<'PY' || { "$FR_ANALYZE" "$FIX/$job/$kind" >&2; fail "$job/$kind: a wrong rank is named"; }
import json, sys
v = json.load(open(sys.argv[1]))["verdict"]
sys.exit(0 if set(v.get("root_cause_ranks") or []) <= {int(sys.argv[2])} else 1)
PY
  "$FR_JSON_EXPECT" --no-waiting-roots "$FR_TMP/v.json" || fail "$job/$kind: a root cause waits in NCCL"
  echo "$job/$kind: no rank but $ok named"
}

for k in api-full api-json api-active api-noentries api-noentries-json frz; do
  h200_case kinds $k healthy 0
done
# a 4-stage pipeline whose rank 2 stops before its forward send; pg_status
# alone mixes p2p and collective seqs there: inconclusive, not healthy
for k in api-full api-json api-active timeout frz; do
  h200_case pp-hang $k hang 1 2
done
for k in api-noentries api-noentries-json; do
  h200_case pp-hang $k inconclusive 2
done
# rank 2's stream busy with a 60 s kernel: its ops never start while the
# others' started (PyTorch's dumps, timing on): named; pg_status alone and
# the recorder's dumps (which saw the stall end 55.7 s later, and the job
# end on PyTorch's watchdog) name no other rank
for k in api-full api-json api-active timeout; do
  h200_case gpu-stall $k hang 1 2
done
for k in api-noentries api-noentries-json frz; do
  h200_no_wrong gpu-stall $k 2
done
for k in api-full api-json api-active api-noentries api-noentries-json timeout frz; do
  h200_case a2a-hang $k hang 1 3
  h200_case coalesced-hang $k hang 1 1
done
# where PyTorch's dumps say which op: the one the rank never called
"$FR_ANALYZE" "$FIX/a2a-hang/timeout" | grep -q "rank 3 never entered all_to_all seq 21" ||
  fail "a2a-hang: the stuck all_to_all is not named"
"$FR_ANALYZE" "$FIX/coalesced-hang/api-active" | grep -q "rank 1 never entered _all_gather_base seq 19" ||
  fail "coalesced-hang: the active entries do not name the stuck _all_gather_base"
# an all-to-all moves data between every pair: the links inferred for the
# missing rank are from and to every waiting one, not its ring neighbours
a2a=$("$FR_ANALYZE" --full "$FIX/a2a-hang/api-full")  # (the details list every link)
for l in 0 1 2; do
  for e in "$l->3" "3->$l"; do
    echo "$a2a" | grep -q -- "$e (inferred)" || fail "a2a-hang: link $e not inferred"
  done
done
# the recorder's own dumps (no streams): the ranks that enqueued the next
# collective after their unfinished all-to-all (or pipeline) sends and
# receives are said so, not "wait in it"; PyTorch's dumps without timing
# show no starts, and are not
for j in a2a-hang pp-hang; do
  "$FR_ANALYZE" "$FIX/$j/frz" | tr '\n' ' ' | tr -s ' ' |
    grep -q "enqueued it, and it never started there, after sends and receives of their own" ||
    fail "$j/frz: the ranks queued after their unfinished p2p are not said so"
done
"$FR_ANALYZE" "$FIX/pp-hang/api-full" | grep -q "never started there" &&
  fail "pp-hang/api-full: a dump without starts said an op never started"
# fr-dump shows a PyTorch p2p op by PyTorch's own p2p_seq_id (text), and
# gives it beside the aligned seq (JSON), not the import's internal seq
"$FR_DUMP" "$FIX/pp-hang/timeout/nccl_trace_rank_2" | awk '$4 == "Send" || $4 == "Recv" { print $3 }' |
  grep -q '^4294967' && fail "fr-dump shows the import's internal p2p seq"
"$FR_DUMP" --json "$FIX/pp-hang/timeout/nccl_trace_rank_2" |
  python3 -c 'import json,sys; r=[x for x in json.load(sys.stdin)["records"] if x["kind"] == "p2p"]; sys.exit(0 if r and all(isinstance(x.get("p2p_seq_id"), int) for x in r) else 1)' ||
  fail "fr-dump --json: a PyTorch p2p record without its p2p_seq_id"
echo "pytorch-h200: 34 real dump directories, each with its verdict"
