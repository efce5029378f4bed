#!/bin/sh
# The recorder under hostile use (tests/unit/check_recorder_faults): what a
# call returns through the recorder is what NCCL returns, and the recorder
# neither crashes, blocks nor grows:
# - calls on a destroyed comm, zero and huge counts (0, 2^40, SIZE_MAX), a
#   4096-entry ring under 50,000 ops;
# - every wrapped function made to fail by tests/sim/libsimfault.so with a
#   chosen NCCL error: the same code comes back and is the record's result;
# - calls with no communicator before any init;
# - a fork and exec storm: 500 children of a process whose thread keeps
#   calling NCCL, some exec'ing a program without NCCL, some exec'ing one
#   with: only those dump, the parent's records are intact;
# - peak RSS the same after 20,000 and after 400,000 ops (the ring is the
#   recorder's only per-op memory).
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
prog="$FR_BUILDDIR/tests/unit/check_recorder_faults"
[ -x "$prog" ] || fail "$prog not built"
run() { # run DUMPDIR ARGS...: the program with the recorder preloaded
  dir=$1; shift
  RANK=0 WORLD_SIZE=1 FR_JOB_ID=faults FR_DUMP_DIR="$dir" FR_DUMP_SIGNAL=SIGUSR2 FR_POLL_MS=5 \
  FR_MAX_FRAMES=1000 FR_TIMEOUT_SEC=0 FR_TRIGGER_FILE=0 FR_BUFFER_ENTRIES=${FR_BUFFER_ENTRIES:-4096} \
  LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="${PRELOAD:-$FR_PRELOAD}" timeout 120 "$prog" "$@"
}

run "$FR_TMP/suite" || fail "destroyed comms, odd counts or the bounded ring"

fault="$FR_SIM_LIBDIR/libsimfault.so"
[ -f "$fault" ] || fail "$fault not built"
PRELOAD="$FR_PRELOAD:$fault" run "$FR_TMP/injected" --injected || fail "injected NCCL errors"

# A job that fails the way NCCL makes it fail: the same output and status
# with and without the recorder (the scenario job reports the failed call).
cat > "$FR_TMP/one.scn" <<'SCN'
world 1
steps 3
allreduce world count=64
broadcast world count=64
SCN
for rec in no yes; do
  pre=${FR_PRELOAD%"$FR_RECORDER"}$fault # a sanitizer runtime stays first
  [ $rec = yes ] && pre="$FR_PRELOAD:$fault"
  mkdir -p "$FR_TMP/boot.$rec"
  RANK=0 WORLD_SIZE=1 FR_SIM_FAIL=Broadcast:6 FR_DUMP_ON_EXIT=1 FR_DUMP_DIR="$FR_TMP/job.$rec" \
    FR_SIM_BOOTSTRAP_DIR="$FR_TMP/boot.$rec" \
    LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$pre" timeout 60 "$FR_JOB" "$FR_TMP/one.scn" \
    > "$FR_TMP/job.$rec.out" 2>&1
  echo "exit $?" >> "$FR_TMP/job.$rec.out"
done
grep -q 'exit 1' "$FR_TMP/job.no.out" || { cat "$FR_TMP/job.no.out"; fail "FR_SIM_FAIL did not fail the job"; }
cmp -s "$FR_TMP/job.no.out" "$FR_TMP/job.yes.out" ||
  { diff "$FR_TMP/job.no.out" "$FR_TMP/job.yes.out"; fail "the recorder changed how the job fails"; }
# its exit dump: the broadcast failed with ncclRemoteError (6)
"$FR_DUMP" "$FR_TMP"/job.yes/*.frz | grep -Eq ' Broadcast +failed .* 6 -$' ||
  fail "the failed broadcast is not in the dump with NCCL's result"

run "$FR_TMP/early" --before-init || fail "calls before any init"
[ "$(ls "$FR_TMP/early" 2>/dev/null)" = "" ] || fail "calls before init left a dump"

# The storm: FR_DUMP_ON_EXIT=1 in every child, so any that the recorder
# wrongly took for a recorded process would dump.
FR_DUMP_ON_EXIT=1 FR_BUFFER_ENTRIES=65536 run "$FR_TMP/storm" --storm 500 || fail "fork and exec storm"
for f in "$FR_TMP"/storm/*.frz; do
  case "$f" in
    */faults-r00000-f000[0-9].frz) ;;                       # the parent: its signal dumps, exit
    */faults-r01[0-4][0-9]0-f0000.frz) ;;                   # the exec'd children that use NCCL
    *) fail "unexpected dump $f: a child without NCCL dumped" ;;
  esac
  "$FR_DUMP" "$f" > /dev/null || fail "$f does not decode"
done
n=$(ls "$FR_TMP/storm" | grep -c 'r01...-f0000')
[ "$n" -eq 50 ] || fail "expected 50 dumps of exec'd NCCL children, found $n"

# (ASan would otherwise keep every freed block of the simulator in its
# quarantine, which grows with the ops)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
export ASAN_OPTIONS
small=$(FR_DUMP_ON_EXIT=0 run "$FR_TMP/hwm" --hwm 20000) || fail "--hwm 20000"
large=$(FR_DUMP_ON_EXIT=0 run "$FR_TMP/hwm" --hwm 400000) || fail "--hwm 400000"
echo "peak RSS: $small kB after 20,000 ops, $large kB after 400,000"
[ "$large" -le $((small + 1024)) ] || fail "memory grows with the number of ops ($small kB -> $large kB)"
echo "recorder faults: ok"
