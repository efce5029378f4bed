#!/bin/sh
# A dump that cannot be written never harms the job, and nothing partial
# ever lies under a final dump name:
# - a full disk (a 4 KiB tmpfs) and a read-only one: the write fails, one
#   line on stderr, the job's exit status is unchanged, no file is left;
# - a dump directory whose parent is not a directory;
# - a symlinked dump directory (not followed) and FR_DUMP_SIGNAL=15 (refused:
#   SIGTERM still ends the job);
# - kill -9 in the middle of dumping a large ring: every *.frz left decodes.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
prog="$FR_BUILDDIR/tests/unit/check_recorder"
run() { # run DIR ARGS...: the recorded program, dumping into DIR
  dir=$1; shift
  RANK=0 WORLD_SIZE=1 FR_JOB_ID=fail FR_DUMP_DIR="$dir" FR_POLL_MS=10 FR_TRIGGER_FILE=0 \
  FR_DUMP_ON_EXIT=1 LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" "$prog" "$@"
}

# 1. no room for the dump: a 4 KiB tmpfs (needs root), then a read-only one
if mkdir -p "$FR_TMP/full" && mount -t tmpfs -o size=4k tmpfs "$FR_TMP/full" 2>/dev/null; then
  trap 'umount "$FR_TMP/full" "$FR_TMP/ro" 2>/dev/null; rm -rf "$FR_TMP"' EXIT
  run "$FR_TMP/full/d" --fill 2000 300 2> "$FR_TMP/full.err"
  rc=$?
  [ "$rc" -eq 0 ] || { cat "$FR_TMP/full.err"; fail "the job exited $rc with a full disk, expected 0"; }
  grep -q 'dump failed' "$FR_TMP/full.err" || fail "no message about the failed dump (full disk)"
  [ "$(grep -c 'dump failed' "$FR_TMP/full.err")" -eq 1 ] || fail "more than one line about failed dumps"
  ! ls "$FR_TMP/full/d" 2>/dev/null | grep -q '^[^.].*\.frz$' || fail "a partial dump lies under a final name"
  ! ls -a "$FR_TMP/full/d" 2>/dev/null | grep -q 'tmp' || fail "a temporary file was left on the full disk"
  mkdir -p "$FR_TMP/ro" && mount -t tmpfs -o size=64k,ro tmpfs "$FR_TMP/ro"
  run "$FR_TMP/ro/d" --fill 100 100 2> "$FR_TMP/ro.err"
  [ $? -eq 0 ] || fail "the job failed with a read-only dump directory"
  grep -q 'dump failed' "$FR_TMP/ro.err" || fail "no message about the failed dump (read-only)"
else
  echo "note: cannot mount a small tmpfs here (not root?): full/read-only disk cases not run"
fi

# 2. an impossible dump directory
run /dev/null/dumps --fill 10 100 2> "$FR_TMP/notdir.err"
[ $? -eq 0 ] || fail "the job failed with an impossible dump directory"
grep -q 'cannot create or open the dump directory' "$FR_TMP/notdir.err" || fail "no clear message for the impossible directory"

# 2b. a symlink as the dump directory: not followed, said plainly
mkdir -p "$FR_TMP/real" && ln -s "$FR_TMP/real" "$FR_TMP/link"
run "$FR_TMP/link" --fill 10 100 2> "$FR_TMP/link.err"
[ $? -eq 0 ] || fail "the job failed with a symlinked dump directory"
grep -q 'symbolic link' "$FR_TMP/link.err" || { cat "$FR_TMP/link.err"; fail "no clear message for the symlinked directory"; }
[ -z "$(ls "$FR_TMP/real")" ] || fail "the recorder wrote through the symlink"

# 2c. FR_DUMP_SIGNAL=15 is refused: SIGTERM must still end the job
FR_DUMP_SIGNAL=15 run "$FR_TMP/term" --fill 10 20000 2> "$FR_TMP/term.err" &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
rc=$?
[ "$rc" -eq 143 ] || fail "SIGTERM did not end the job (exit $rc) with FR_DUMP_SIGNAL=15"
grep -q 'not a signal the recorder may take' "$FR_TMP/term.err" || fail "FR_DUMP_SIGNAL=15 was not refused"

# 3. kill -9 while a 131,072-record ring is being dumped
FR_BUFFER_ENTRIES=131072 run "$FR_TMP/killed" --fill 131072 5000 2> /dev/null &
pid=$!
i=0
while [ $i -lt 600 ] && ! ls -a "$FR_TMP/killed" 2>/dev/null | grep -q 'tmp'; do sleep 0.01; i=$((i + 1)); done
ls -a "$FR_TMP/killed" 2>/dev/null | grep -q tmp && echo "killed while the dump was being written"
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
for f in "$FR_TMP"/killed/*.frz; do
  [ -e "$f" ] || continue
  "$FR_DUMP" --json "$f" > /dev/null || fail "$f is under a final name but does not decode"
done
echo "dump failures leave the job alone: ok"
