#!/bin/sh
# Runs tests/unit/check_recorder with the recorder preloaded on the
# simulator: every wrapper, groups, lifecycle records, errors passed through,
# 32 threads on 32 comms, a forked child.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
prog="$FR_BUILDDIR/tests/unit/check_recorder"
[ -x "$prog" ] || fail "$prog not built"
RANK=0 WORLD_SIZE=1 FR_JOB_ID=api FR_DUMP_DIR="$FR_TMP/dumps" FR_DUMP_SIGNAL=SIGUSR2 \
FR_POLL_MS=5 FR_MAX_FRAMES=1000 FR_TIMEOUT_SEC=0 FR_TRIGGER_FILE=0 FR_BUFFER_ENTRIES=65536 \
LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" "$prog"
