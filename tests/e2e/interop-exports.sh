#!/bin/sh
# fr-dump's exports and checks, and the JSON documents against their
# schemas: the Chrome trace of C1 (ours and PyTorch's) has one process per
# rank and the stuck op as an unfinished slice on exactly the waiting ranks;
# --check says ok/bad per file; fr-dump --json and fr-analyze --json validate
# against formats/dump.schema.json and formats/analysis.schema.json.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
cd "$FR_TMP" || exit 99
TRACE_CHECK="$FR_BUILDDIR/tests/trace-check"
SCHEMA_CHECK="$FR_BUILDDIR/tests/json-schema-check"
FIX="$FR_SRCDIR/tests/fixtures/pytorch-fr"
"$FR_BUILDDIR/tests/unit/check_analyze" --mkdumps dumps > /dev/null || fail "cannot generate the dumps"

# ---- Chrome trace ------------------------------------------------------------------
expect_exit 0 "$FR_DUMP" --format=chrome-trace -o c1.trace.json dumps/c1
"$TRACE_CHECK" c1.trace.json 8 "AllReduce seq 37" 0,1,2,3,4,6,7 || fail "C1 trace (frz dumps)"
expect_exit 0 "$FR_DUMP" --format=chrome-trace -o pt-c1.trace.json "$FIX/c1"
"$TRACE_CHECK" pt-c1.trace.json 8 "AllReduce seq 73" 0,1,2,3,4,6,7 || fail "C1 trace (PyTorch dumps)"
# one file: one rank; several directories: one trace
expect_exit 0 "$FR_DUMP" --format=chrome-trace -o r5.trace.json dumps/c1/job-42-r00005-f0000.frz
"$TRACE_CHECK" r5.trace.json 1 "AllReduce seq 37" "" || fail "rank 5 alone: no stuck slice expected"
expect_exit 0 "$FR_DUMP" --format=chrome-trace -o c9.trace.json "$FIX/c9"
"$TRACE_CHECK" c9.trace.json 3 "Recv from 1 #2" 0 || fail "C9 trace (PyTorch dumps)"
expect_exit 0 "$FR_DUMP" --format=chrome-trace -o timeout.trace.json "$FIX/h200-timeout"
"$TRACE_CHECK" timeout.trace.json 1 "AllReduce seq 7" 0 || fail "trace of the real watchdog dump"
# C11 (proxy progress): every rank's all-reduce unfinished, and each stalled
# connection marked where it stopped: rank 3's send to 4 on channel 1
expect_exit 0 "$FR_DUMP" --format=chrome-trace -o c11.trace.json "$FR_SRCDIR/samples/c11-link-stalls"
"$TRACE_CHECK" c11.trace.json 8 "AllReduce seq 5" 0,1,2,3,4,5,6,7 || fail "C11 trace"
grep -q '"cat":"proxy","name":"ch 1 send->4 SendPeerWait ([0-9]*/[0-9]* steps)","pid":3,' c11.trace.json ||
  fail "C11 trace: no proxy mark of rank 3's stalled send to 4"
# wall-clock alignment: the PyTorch C1 trace starts at its earliest record
grep -q '"time_base_realtime_ns":1795989600002000000' pt-c1.trace.json || fail "trace time base"
# a frame-0 trigger is marked on every rank of our dumps
[ "$(grep -c '"cat":"hang"' c1.trace.json)" -eq 8 ] || fail "hang marks in the C1 trace"

# ---- --check --------------------------------------------------------------------------
"$FR_DUMP" --check dumps/c1 "$FIX/c1" "$FIX/h200-1rank" "$FIX/h200-timeout" > check-ok.out 2>&1
[ $? -eq 0 ] || { cat check-ok.out; fail "--check of good dumps"; }
[ "$(grep -c ': ok (rank ' check-ok.out)" -eq 19 ] || fail "--check: expected 19 ok lines"
head -c 300 dumps/c1/job-42-r00000-f0000.frz > truncated.frz
printf '\200\002}q\000X\377\377\377\177ab' > huge.pickle
printf 'not a dump\n' > garbage
"$FR_DUMP" --check dumps/c1/job-42-r00000-f0000.frz truncated.frz huge.pickle garbage > check-bad.out 2>&1
[ $? -eq 1 ] || fail "--check of bad files: expected exit 1"
grep -q '^truncated.frz: bad: at byte ' check-bad.out || fail "--check: truncated frz"
grep -q '^huge.pickle: bad: at byte 5: pickle truncated' check-bad.out || fail "--check: huge pickle string"
grep -q '^garbage: bad: at byte 0: not a flightrec dump' check-bad.out || fail "--check: garbage"
grep -q '^dumps/c1/job-42-r00000-f0000.frz: ok' check-bad.out || fail "--check: the good one"
expect_exit 2 "$FR_DUMP" --check --json dumps/c1

# ---- JSON Schemas ---------------------------------------------------------------------------
DS="$FR_SRCDIR/formats/dump.schema.json"
AS="$FR_SRCDIR/formats/analysis.schema.json"
expect_exit 0 "$FR_DUMP" --json dumps/c1/job-42-r00005-f0000.frz > one.json
"$SCHEMA_CHECK" "$DS" one.json || fail "fr-dump --json (one file) against the schema"
expect_exit 0 "$FR_DUMP" --json dumps/c1 > many.json
"$SCHEMA_CHECK" "$DS" many.json || fail "fr-dump --json (a directory) against the schema"
expect_exit 0 "$FR_DUMP" --json "$FIX/c10" "$FIX/h200-1rank" > pt.json
"$SCHEMA_CHECK" "$DS" pt.json || fail "fr-dump --json (PyTorch dumps) against the schema"
# the 1.2 sections: proxy and kernel progress of C11, call sites and
# backtraces of a real PyTorch job
expect_exit 0 "$FR_DUMP" --json "$FR_SRCDIR/samples/c11-link-stalls" > c11.json
"$SCHEMA_CHECK" "$DS" c11.json || fail "fr-dump --json (proxy, kernel channels) against the schema"
grep -q '"state":[[:space:]]*"SendPeerWait"' c11.json || fail "fr-dump --json: C11's stalled sender is missing"
grep -q '"started_seq":' c11.json || fail "fr-dump --json: no kernel channels in C11"
expect_exit 0 "$FR_DUMP" --json "$FR_SRCDIR/samples/h200-frames-callsites" > bt.json
"$SCHEMA_CHECK" "$DS" bt.json || fail "fr-dump --json (call sites, backtraces) against the schema"
grep -q '"name":[[:space:]]*"libtorch_cuda.so!_ZN4c10d16ProcessGroupNCCL' bt.json ||
  fail "fr-dump --json: backtrace frames are not named"
expect_exit 0 "$FR_DUMP" --json dumps/hostile > hostile.json
"$SCHEMA_CHECK" "$DS" hostile.json || fail "fr-dump --json (hostile dump) against the schema"
# the frz regression inputs (hostile strings, unknown enums and flag bits,
# INT64_MAX seqs): fr-dump's text and JSON hold, JSON fits the schema, and
# fr-tui draws them
for f in "$FR_SRCDIR"/tests/fuzz/regressions/frz/*.frz; do
  b=$(basename "$f" .frz)
  "$FR_DUMP" "$f" > "reg-$b.txt" 2>&1 || fail "fr-dump $f"
  "$FR_DUMP" --json "$f" > "reg-$b.json" 2>&1 || fail "fr-dump --json $f"
  "$SCHEMA_CHECK" "$DS" "reg-$b.json" || fail "fr-dump --json $f against the schema"
  mkdir "reg-$b" && cp "$f" "reg-$b/" || exit 99
  tui_batch "reg-$b" > "reg-$b.tui" 2>&1 || fail "fr-tui --batch on $f"
  for o in "reg-$b.txt" "reg-$b.json" "reg-$b.tui"; do
    ! LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]\|\342\200\256')" "$o" ||
      fail "$o: a control character or bidi override from $f reached the output"
  done
done
n=0
for d in dumps/c1 dumps/hostile "$FIX/c1" "$FIX/c2" "$FIX/c5" "$FIX/c9" "$FIX/c10" "$FIX/h200-1rank" "$FIX/h200-timeout" \
         "$FR_SRCDIR"/samples/*/; do
  [ -d "$d" ] || continue
  "$FR_ANALYZE" --json "$d" > analysis.json 2> /dev/null
  "$SCHEMA_CHECK" "$AS" analysis.json || fail "fr-analyze --json $d against the schema"
  n=$((n + 1))
done
# a document that breaks the contract is caught
sed 's/"status":[^,]*/"status": "bogus"/' analysis.json > broken.json
"$SCHEMA_CHECK" "$AS" broken.json > broken.out
[ $? -eq 1 ] || fail "the schema check accepted a bogus status"
grep -q 'verdict.status: value not in enum' broken.out || fail "the schema check's message"
# GPU-side durations (FR_GPU_TIMING, default on): in a live job on the
# simulator, whose CUDA events keep the time its streams passed them, the
# completed ops are slices of non-zero length in the order each stream ran
# them; with FR_GPU_TIMING=0 the times are the watchdog's polls again and
# the same check fails (no slice is GPU-timed).
for timing in 1 0; do
  printf '%s\n' 'world 4' 'steps 12' 'env FR_TIMEOUT_SEC=1' "env FR_GPU_TIMING=$timing" 'time-limit 20' \
    'allreduce world count=65536 id=ar' 'broadcast world count=65536' 'allgather world count=16384' \
    'fault rank=2 step=10 op=ar stop' > timed$timing.scn
  "$FR_RUN_SCENARIO" --no-analyze timed$timing.scn timed$timing > /dev/null 2>&1 || fail "run-scenario timed$timing.scn"
  expect_exit 0 "$FR_DUMP" --format=chrome-trace -o timed$timing.json timed$timing/dumps
done
"$TRACE_CHECK" --timed timed1.json 4 "AllReduce seq 28" 0,1,3 || fail "GPU-timed trace of a live job"
"$TRACE_CHECK" --timed timed0.json 4 "AllReduce seq 28" 0,1,3 > timed0.out && fail "FR_GPU_TIMING=0 still timed by the GPU"
grep -q "no GPU-timed slice on rank 0" timed0.out || fail "FR_GPU_TIMING=0: $(cat timed0.out)"

echo "interop exports: ok ($n analyses validated)"
