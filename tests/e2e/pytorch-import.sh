#!/bin/sh
# PyTorch Flight Recorder import, end to end: the generated PyTorch-style
# dumps of cases C1 (also as a ROCm job's), C2, C5, C9, C10 (tests/fixtures/pytorch-fr/, written by
# tests/gen-pytorch-fr.py) get the verdicts our own dumps of the same
# scenarios get (tests/scenarios/*.expected.json; for C1 and C2 the links are
# inferred from ring order, as in tests/fixtures/pytorch-fr/cN.expected.json,
# since PyTorch's dumps carry no proxy progress); the real PyTorch 2.11 dump
# is read in both forms; --input-format chooses the reader.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
FIX="$FR_SRCDIR/tests/fixtures/pytorch-fr"

# case DIR EXPECTED: the directory, auto-detected, gives the expected verdict.
check_case() {
  "$FR_ANALYZE" --json "$FIX/$1" > "$FR_TMP/$1.json"
  rc=$?
  [ "$rc" -eq 1 ] || fail "$1: fr-analyze exited $rc, expected 1 (a problem found)"
  "$FR_JSON_EXPECT" "$2" "$FR_TMP/$1.json" || fail "$1: verdict differs from $2"
}
check_case c1 "$FIX/c1.expected.json"
# the same ring from a ROCm job (RCCL named in comm_lib_version): read as C1,
# the same verdict, the library's version read past its name
check_case c1-rocm "$FIX/c1.expected.json"
"$FR_DUMP" "$FIX/c1-rocm/trn-node13-gpu7.nccl_trace_rank_0" > "$FR_TMP/c1-rocm-dump.txt" ||
  fail "fr-dump of a ROCm job's PyTorch dump failed"
grep -q '^nccl: *2\.22\.3$' "$FR_TMP/c1-rocm-dump.txt" ||
  fail "c1-rocm: RCCL's version not read from comm_lib_version: $(grep '^nccl:' "$FR_TMP/c1-rocm-dump.txt")"
check_case c2 "$FIX/c2.expected.json"
# the links carry PyTorch's p2p_seq_id of the pending op (2: each rank's second p2p op)
check_case c9 "$FIX/c9.expected.json"
check_case c10 "$FR_SRCDIR/tests/scenarios/c10-order-inversion.expected.json"
# PyTorch records neither the reduction op nor the root, so the fields that
# differ at C5's seq are op and count only; the rest is the scenario's verdict
check_case c5 "$FIX/c5.expected.json"

# fr-dump of a PyTorch dump says what it is, and leaves out what PyTorch does
# not record (no pid, host, local rank, recorder or ring size of ours)
"$FR_DUMP" "$FIX/c1/trn-node13-gpu7.nccl_trace_rank_0" > "$FR_TMP/c1-dump.txt" || fail "fr-dump of a PyTorch dump failed"
grep -q '^format:    PyTorch Flight Recorder pickle dump, format 2.10$' "$FR_TMP/c1-dump.txt" ||
  fail "fr-dump of a PyTorch dump: no format line saying so: $(head -3 "$FR_TMP/c1-dump.txt")"
grep -q '^process:   rank 0 of 8$' "$FR_TMP/c1-dump.txt" || fail "fr-dump of a PyTorch dump: process line"
! grep -Eq 'pid 0|ring of 0|^recorder:|monotonic|^trigger:   none' "$FR_TMP/c1-dump.txt" ||
  fail "fr-dump of a PyTorch dump: placeholder fields"
# PyTorch records no reduction op: its records' redop column says "-", not "none"
awk '$4 == "AllReduce" { n++; if ($8 != "-") bad++ } END { exit !(n > 0 && !bad) }' "$FR_TMP/c1-dump.txt" ||
  fail "fr-dump of a PyTorch dump: a reduction op shown where PyTorch records none"

# the same verdict when the format is named
"$FR_ANALYZE" --json --input-format=pytorch "$FIX/c1" > "$FR_TMP/c1-named.json"
"$FR_JSON_EXPECT" "$FIX/c1.expected.json" "$FR_TMP/c1-named.json" ||
  fail "c1 with --input-format=pytorch"
# frz only: every file is refused, nothing usable (exit 2)
"$FR_ANALYZE" --input-format=frz "$FIX/c1" > "$FR_TMP/frz-only.out" 2> "$FR_TMP/frz-only.err"
[ $? -eq 2 ] || fail "--input-format=frz on PyTorch dumps: expected exit 2"
grep -q "not a flightrec dump" "$FR_TMP/frz-only.err" || fail "--input-format=frz: no clear message"
"$FR_ANALYZE" --input-format=bogus "$FIX/c1" > /dev/null 2> "$FR_TMP/bogus.err"
[ $? -eq 2 ] || fail "--input-format=bogus: expected exit 2"
grep -q "invalid input format 'bogus'" "$FR_TMP/bogus.err" || fail "--input-format=bogus: message"

# a malformed pickle among good ones is a problem naming the file and the
# offset; the others are still diagnosed (rank 5's file cut short: its dump
# is missing, which is evidence too)
mkdir "$FR_TMP/cut"
cp "$FIX"/c1/* "$FR_TMP/cut/"
head -c 5000 "$FIX/c1/trn-node13-gpu7.nccl_trace_rank_5" > "$FR_TMP/cut/trn-node13-gpu7.nccl_trace_rank_5"
"$FR_ANALYZE" "$FR_TMP/cut" > "$FR_TMP/cut.out" 2>&1
[ $? -eq 1 ] || fail "a cut pickle among good ones: expected exit 1"
grep -q "trn-node13-gpu7.nccl_trace_rank_5: at byte [0-9]*: pickle truncated" "$FR_TMP/cut.out" ||
  fail "a cut pickle: no problem naming the file and the offset"
grep -q "ranks missing: 5" "$FR_TMP/cut.out" || fail "a cut pickle: rank 5 not missing"

# the real dump from PyTorch 2.11 on one H200 (format 2.10), both forms:
# 20 collectives, all completed
for f in torch-fr.pickle torch-fr.json; do
  "$FR_ANALYZE" --json "$FIX/h200-1rank/$f" > "$FR_TMP/real.json"
  rc=$?
  [ "$rc" -eq 0 ] || fail "$f: fr-analyze exited $rc, expected 0 (healthy)"
  cat > "$FR_TMP/real.expected.json" <<'JSON'
{ "input": { "world_size": 1, "ranks_found": [0], "problems": [] },
  "verdict": { "status": "healthy" },
  "comms": [ { "size": 1, "seq_lo": 1, "seq_hi": 20,
               "last_completed": { "seq": 20, "op": "ReduceScatter" } } ] }
JSON
  "$FR_JSON_EXPECT" "$FR_TMP/real.expected.json" "$FR_TMP/real.json" || fail "$f: analysis differs"
done

# real dumps of an all-reduce that could not start (its stream busy) on one
# H200: written by PyTorch's watchdog on its timeout (the real file name), and
# through the API: every rank joined, nothing completed: the device side
for d in h200-timeout h200-inflight; do
  "$FR_ANALYZE" --json "$FIX/$d" > "$FR_TMP/$d.json"
  rc=$?
  [ "$rc" -eq 1 ] || fail "$d: fr-analyze exited $rc, expected 1"
  cat > "$FR_TMP/$d.expected.json" <<'JSON'
{ "input": { "world_size": 1, "ranks_found": [0], "problems": [] },
  "verdict": { "status": "hang", "all_joined": true, "lagging_ranks": [],
               "last_completed": { "seq": 6, "op": "Broadcast" },
               "stuck": { "seq": 7, "op": "AllReduce", "count": 1048576, "dtype": "float32",
                          "waiting_ranks": [0], "missing_ranks": [] } } }
JSON
  "$FR_JSON_EXPECT" "$FR_TMP/$d.expected.json" "$FR_TMP/$d.json" || fail "$d: analysis differs"
done

# the committed fixtures are what the generator writes (when python3 is here)
if command -v python3 > /dev/null 2>&1; then
  python3 "$FR_SRCDIR/tests/gen-pytorch-fr.py" "$FR_TMP/gen" || fail "gen-pytorch-fr.py failed"
  for c in c1 c1-rocm c2 c5 c9 c10; do
    diff -r "$FIX/$c" "$FR_TMP/gen/$c" > /dev/null || fail "$c: committed fixtures differ from gen-pytorch-fr.py's output"
  done
else
  echo "python3 absent: generator output not compared (fixtures still checked)"
fi
echo "pytorch import: ok"
