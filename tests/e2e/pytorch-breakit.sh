#!/bin/sh
# PyTorch Flight Recorder dumps a break-it pass wrote (2026-12-04,
# tests/fixtures/pytorch-fr/breakit/, README there), modelled on the real
# PyTorch 2.11 dumps of h200-4rank/: each once judged wrong, with controls.
# The rank whose p2p work went through and went on to the next collective
# is no rank ahead (batch_isend_irecv rings, pipelines); a healthy job whose
# ranks dumped a moment apart is healthy; two different files that claim
# one rank leave the verdict inconclusive, naming nobody.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
FIX="$FR_SRCDIR/tests/fixtures/pytorch-fr/breakit"

# bcase DIR STATUS EXIT [ROOTS [UNEXPLAINED]]: DIR's verdict and exit status,
# and the observations it leaves unexplained (a JSON array; none by default).
bcase() {
  d=$1 status=$2 want=$3 root=${4:-} unexplained=${5:-[]}
  "$FR_ANALYZE" --json "$FIX/$d" > "$FR_TMP/v.json"
  rc=$?
  [ "$rc" -eq "$want" ] || { "$FR_ANALYZE" "$FIX/$d" >&2; fail "$d: fr-analyze exited $rc, expected $want"; }
  printf '{ "verdict": { "status": "%s", "root_cause_ranks": [%s], "unexplained": %s } }\n' "$status" "$root" \
    "$unexplained" > "$FR_TMP/want.json"
  "$FR_JSON_EXPECT" "$FR_TMP/want.json" "$FR_TMP/v.json" || { "$FR_ANALYZE" "$FIX/$d" >&2; fail "$d: verdict differs"; }
  "$FR_JSON_EXPECT" --no-waiting-roots "$FR_TMP/v.json" || fail "$d: a root cause waits in NCCL"
  echo "$d: $status [$root]"
}

bcase p19-batched-ring-skip hang 1 2
bcase p19b-batched-ring-skip-2ar hang 1 2
bcase p40-batched-ring-skip-onlyactive hang 1 2
bcase p41-batched-ring-skip-noahead hang 1 2
bcase p26b-pipe-last-stage-stops-first-stage-ahead hang 1 3
bcase p26c-pytorch-twin-of-s29 hang 1 3
bcase p22-healthy-skewed-dump-times healthy 0
bcase p43-healthy-one-old-dump healthy 0
# (whose dump is whose is in doubt: the verdict names nobody, and what the
# dumps show stays unexplained)
bcase p48-local-rank-filenames inconclusive 2 "" '[{"kind": "waiting", "rank": 0}, {"kind": "waiting", "rank": 1},
  {"kind": "not-posted", "rank": 2}, {"kind": "waiting", "rank": 3}]'
bcase p4h-pipe-batch-healthy healthy 0
bcase p1-fsdp8-rs-skip hang 1 5
bcase p5-moe-a2a-stop hang 1 6
bcase p8-gpu-stuck-before-kernel-timing hang 1 3
bcase p65b-noentries-fsdp-rank2-missing hang 1 2
# a p2p call left out of a pipeline's rounds: the rank that left it out, not its peer
bcase p10-pp-missing-send deadlock 1 2
bcase p10-pp-batched-missing-send deadlock 1 1
"$FR_ANALYZE" "$FIX/p48-local-rank-filenames" | grep -q "two different dumps claim rank" ||
  fail "p48: the conflict is not said"
echo "pytorch-breakit: 14 break-it dump sets, each with its verdict"
