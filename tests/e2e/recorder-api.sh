#!/bin/sh
# Runs tests/unit/check_recorder with the recorder preloaded on the
# simulator: every wrapper, groups, lifecycle records, errors passed through,
# 64 threads on 64 comms, a forked child; then all of it again with
# FR_BACKTRACE=4.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
prog="$FR_BUILDDIR/tests/unit/check_recorder"
[ -x "$prog" ] || fail "$prog not built"
run() { # run DUMPDIR: the whole suite, recorded
  RANK=0 WORLD_SIZE=1 FR_JOB_ID=api FR_DUMP_DIR="$1" FR_DUMP_SIGNAL=SIGUSR2 \
  FR_POLL_MS=5 FR_MAX_FRAMES=1000 FR_TIMEOUT_SEC=0 FR_TRIGGER_FILE=0 FR_BUFFER_ENTRIES=65536 \
  LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" "$prog"
}
run "$FR_TMP/dumps" || fail "recorder suite failed"
# again with a short backtrace per record (FR_BACKTRACE)
FR_BACKTRACE=4 run "$FR_TMP/dumps-bt" || fail "recorder suite failed with FR_BACKTRACE=4"
