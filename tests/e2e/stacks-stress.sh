#!/bin/sh
# The thread-stack collection under stress: tests/unit/stacks-stress, with
# the recorder preloaded on the simulator, runs ~60 threads (busy loops,
# blocked in read(2), blocking every signal, sleepers, inside NCCL calls,
# threads starting and exiting all the time) and takes 300 dumps one after
# the other; every dump must arrive, every worker must keep going, and the
# last dump must show the blocked threads sampled and the masked ones
# reported as masked.  Then the same with FR_STACKS=0: no stacks at all.
FR_E2E_LOCK=-x # alone: no other end-to-end test beside it (lib.sh)
. "$FR_SRCDIR/tests/e2e/lib.sh"
skip_under_tsan "stack collection under stress"
fr_tmpdir
prog="$FR_BUILDDIR/tests/unit/stacks-stress"
[ -x "$prog" ] || fail "$prog not built"
# dumps go to tmpfs when there is one: 300 fsyncs on a busy disk take minutes
base="$FR_TMP"
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
  base=$(mktemp -d /dev/shm/fr-stress.XXXXXX) || fail "mktemp"
  [ "${FR_KEEP:-0}" = 1 ] || trap 'rm -rf "$FR_TMP" "$base"' EXIT
fi
run() { # run DUMPDIR DUMPS
  RANK=0 FR_BUFFER_ENTRIES=1024 WORLD_SIZE=1 FR_JOB_ID=stress FR_DUMP_DIR="$1" FR_DUMP_SIGNAL=SIGUSR2 \
  FR_POLL_MS=2 FR_MAX_FRAMES=1000 FR_TIMEOUT_SEC=0 FR_TRIGGER_FILE=0 FR_STACK_TIMEOUT_MS=1000 \
  LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" "$prog" "$2"
}
run "$base/dumps" 300 || fail "stack collection under stress failed"
# one dump per signal, and a recovery frame when the job went on meanwhile
n=$(ls "$base/dumps" | grep -c '\.frz$')
[ "$n" -ge 300 ] || fail "expected at least 300 dumps, found $n"
"$FR_DUMP" --check "$base/dumps" >/dev/null || fail "a dump under stress does not decode"
# FR_STACKS=0: no stacks section at all
mkdir "$base/off"
FR_STACKS=0 run "$base/off" 3 > "$FR_TMP/off.out" 2>&1 && fail "FR_STACKS=0 still wrote stacks"
grep -q "threads missing from the last dump" "$FR_TMP/off.out" || { cat "$FR_TMP/off.out" >&2; fail "FR_STACKS=0 run failed otherwise"; }
echo "stacks-stress: ok"
