#!/bin/sh
# Frames and triggers of the recorder, on the simulator:
# - a rank waits 3.5 s for a late peer: the timeout (1 s) writes frame 0,
#   FR_FRAME_INTERVAL_SEC=1 adds frames while nothing moves, and when the
#   peer arrives a last frame says progress resumed;
# - a process dying of SIGABRT leaves a crash dump and still dies of SIGABRT;
# - call sites and FR_BACKTRACE stacks are symbolised in the dump.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
prog="$FR_BUILDDIR/tests/unit/check_recorder"
run() { # run JOB PROGRAM ARGS...: recorded, dumps in $FR_TMP/JOB
  job=$1; shift
  RANK=0 WORLD_SIZE=1 FR_JOB_ID=$job FR_DUMP_DIR="$FR_TMP/$job" FR_POLL_MS=20 FR_TRIGGER_FILE=0 \
  LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" "$@"
}
trigger_of() { "$FR_DUMP" "$1" | sed -n 's/^trigger: *\([a-z_]*\).*/\1/p'; }

FR_TIMEOUT_SEC=1 FR_FRAME_INTERVAL_SEC=1 FR_MAX_FRAMES=10 run late "$prog" --late 3500 \
  2> "$FR_TMP/late.err" || { cat "$FR_TMP/late.err"; fail "the late-peer job failed"; }
ls "$FR_TMP/late"
f0="$FR_TMP/late/late-r00000-f0000.frz"
[ -f "$f0" ] || fail "no frame 0"
[ "$(trigger_of "$f0")" = timeout ] || fail "frame 0 trigger is $(trigger_of "$f0"), expected timeout"
n=$(ls "$FR_TMP/late" | grep -c '\.frz$')
[ "$n" -ge 3 ] || fail "expected frame 0, at least one more frame and a recovery frame; found $n dumps"
last=$(ls "$FR_TMP/late"/*.frz | sort | tail -n 1)
[ "$(trigger_of "$last")" = recovery ] || fail "the last frame's trigger is $(trigger_of "$last"), expected recovery"
mid=$(ls "$FR_TMP/late"/*.frz | sort | sed -n 2p)
[ "$(trigger_of "$mid")" = frame ] || fail "frame 1's trigger is $(trigger_of "$mid"), expected frame"
grep -q 'hang: AllReduce seq 1' "$FR_TMP/late.err" || fail "no hang message on stderr"

run crash "$prog" --crash 2> "$FR_TMP/crash.err"
rc=$?
[ "$rc" -eq 134 ] || fail "the crashing job exited $rc, expected 134 (SIGABRT)"
dump=$(ls "$FR_TMP/crash"/*.frz 2>/dev/null | head -n 1)
[ -n "$dump" ] || fail "no crash dump"
[ "$(trigger_of "$dump")" = crash ] || fail "crash dump trigger is $(trigger_of "$dump")"
"$FR_DUMP" "$dump" | grep -q "fatal signal 6" || fail "the crash dump does not name the signal"
# a fast job never looks hung: ops enqueued while the watchdog scans
# (after it read the clock) must not count as having waited "negative" time
cat > "$FR_TMP/fast.scn" <<'SCN'
world 1
steps 30000
allreduce world count=4 dtype=float32 redop=sum
SCN
mkdir -p "$FR_TMP/boot"
RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 FR_JOB_ID=fast FR_DUMP_DIR="$FR_TMP/fast" FR_POLL_MS=1 \
  FR_TIMEOUT_SEC=1 FR_TRIGGER_FILE=0 FR_SIM_BOOTSTRAP_DIR="$FR_TMP/boot" \
  LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" "$FR_JOB" "$FR_TMP/fast.scn" \
  2> "$FR_TMP/fast.err" || fail "the fast job failed"
! grep -q 'hang:' "$FR_TMP/fast.err" || { cat "$FR_TMP/fast.err"; fail "a fast job was declared hung"; }
[ ! -e "$FR_TMP/fast" ] || fail "a fast job dumped"

# call sites and FR_BACKTRACE stacks, as fr-dump shows them
FR_BACKTRACE=3 run sites "$prog" --fill 5 300 2> /dev/null || fail "the backtrace job failed"
"$FR_DUMP" "$FR_TMP"/sites/*.frz > "$FR_TMP/sites.txt" || fail "fr-dump failed on the sites dump"
grep -q '^call sites: ' "$FR_TMP/sites.txt" || fail "no call sites in fr-dump's text"
grep -Eq '^  record [0-9]+: check_recorder!' "$FR_TMP/sites.txt" || fail "no symbolised backtrace"
echo "frames, recovery, crash dumps and call sites: ok"
