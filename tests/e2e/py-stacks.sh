#!/bin/sh
# Python stacks (FR_PY_STACKS=1) with a Python job that calls the
# simulator's libnccl through ctypes (tests/scenario/py_job.py):
# 1. stress: 200 dumps one after the other during a busy Python loop with 8
#    threads; every dump must arrive, the job must go on, and the dumps must
#    hold the workers' Python frames;
# 2. a 2-rank hang where rank 1 stops in its data loader: the verdict shows
#    rank 1's Python stack (load_batch <- train), a stack class of its own.
. "$FR_SRCDIR/tests/e2e/lib.sh"
skip_under_tsan "Python stacks"
fr_tmpdir
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
JOBPY="$FR_SRCDIR/tests/scenario/py_job.py"
base="$FR_TMP"
if [ -d /dev/shm ] && [ -w /dev/shm ]; then # no fsync cost: 200 dumps on a busy disk take minutes
  base=$(mktemp -d /dev/shm/fr-py.XXXXXX) || fail "mktemp"
  [ "${FR_KEEP:-0}" = 1 ] || trap 'rm -rf "$FR_TMP" "$base"' EXIT
fi
pyrun() { # pyrun DUMPDIR RANK SIZE ARGS...: python3 py_job.py ARGS, recorded
  # (PYEXEC=exec in a background job: its pid is python's, which kill reaches)
  d=$1 r=$2 s=$3; shift 3
  RANK=$r WORLD_SIZE=$s FR_JOB_ID=py FR_DUMP_DIR="$d" FR_DUMP_SIGNAL=SIGUSR2 FR_PY_STACKS=1 \
  FR_BUFFER_ENTRIES=1024 FR_POLL_MS=2 LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" \
  ${PYEXEC:-} python3 "$JOBPY" "$@"
}

# 1. stress
FR_MAX_FRAMES=1000 FR_TIMEOUT_SEC=0 FR_TRIGGER_FILE=0 pyrun "$base/stress" 0 1 stress 200 ||
  fail "Python stress run failed"
n=$(ls "$base/stress" | grep -c '\.frz$')
[ "$n" -ge 200 ] || fail "expected at least 200 dumps, found $n"
last=$(ls "$base/stress"/*.frz | tail -n 1)
"$FR_DUMP" "$last" > "$FR_TMP/last.txt" || fail "fr-dump $last"
w=$(grep -c '^    py0 .*busy_worker\|^    py1  busy_worker' "$FR_TMP/last.txt")
[ "$w" -ge 1 ] || { cat "$FR_TMP/last.txt" >&2; fail "no worker's Python frames in the last dump"; }
grep -q '^    py[0-9]* *stress (py_job.py\|^    py[0-9]* *stress (.*py_job.py' "$FR_TMP/last.txt" ||
  fail "no Python frame of the main thread in the last dump"

# 2. a 2-rank hang in Python
mkdir -p "$base/boot"
for r in 0 1; do
  FR_TIMEOUT_SEC=1 PYEXEC=exec pyrun "$base/hang" $r 2 hang "$base/boot" > "$FR_TMP/rank$r.log" 2>&1 &
  eval "pid$r=\$!"
done
i=0
while [ "$(ls "$base/hang" 2>/dev/null | grep -c -- '-f0000\.frz$')" -lt 2 ]; do
  i=$((i + 1))
  [ $i -lt 300 ] || { kill "$pid0" "$pid1"; cat "$FR_TMP"/rank*.log >&2; fail "no frame-0 dump of both ranks within 30 s"; }
  sleep 0.1
done
kill "$pid0" "$pid1" 2>/dev/null
wait
"$FR_ANALYZE" "$base/hang" > "$FR_TMP/run-verdict-full.txt"
[ $? -eq 1 ] || fail "fr-analyze did not find the hang"
mkdir -p "$FR_TMP/run" && cp "$FR_TMP/run-verdict-full.txt" "$FR_TMP/run/verdict-full.txt"
check_stack py-hang 1 'load_batch \(py_job\.py:[0-9]+\)'
echo "py-stacks: ok"
