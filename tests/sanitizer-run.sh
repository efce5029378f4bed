#!/bin/bash
# sanitizer-run.sh TEST [ARGS...] — how `make check` runs each test in a
# sanitizer build (./configure --enable-sanitizers[=thread]; tests/local.mk
# makes it the LOG_COMPILER there).  Every process the test starts writes
# its sanitizer reports into tests/sanitizer-reports/<test>/ of the build
# tree instead of stderr, where a rank's report would be lost with the
# test's scratch directory (or hidden in a killed rank's log); the reports
# are then printed into the test's log, and a test that passed or skipped
# with a report fails.  The report files stay for a closer look.
t=$1
name=${t##*tests/}

# Tests that cannot run in one of these builds: skipped there only (77),
# with the reason.
case "${FR_SAN_CFLAGS-}:$name" in
  *thread*:e2e/scenario-c5.sh)
    echo "SKIP under ThreadSanitizer: C5 needs its 2,106,881-element all-reduces to finish well within" \
         "FR_TIMEOUT_SEC=1; TSan slows the simulator's data movement so much that the timeout fires" \
         "at an earlier all-reduce that is still moving, before the mismatch at seq 5"
    exit 77 ;;
  *thread*:e2e/scenario-c7.sh)
    # its 409,600-element all-reduces, slowed down by TSan on a busy
    # machine, took over the scenario's FR_TIMEOUT_SEC=1 and were dumped
    # as a hang (a false one: the next frame says progress resumed) before
    # the real hang at seq 9
    export FR_TIMEOUT_SEC_MIN=5 ;;
esac

dir="${FR_BUILDDIR:-.}/tests/sanitizer-reports/$name"
rm -rf "$dir" && mkdir -p "$dir" || exit 99
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$dir/asan"
UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$dir/ubsan:print_stacktrace=1"
TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}log_path=$dir/tsan"
export ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS
"$@"
rc=$?
n=0
for f in "$dir"/*; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  echo "== sanitizer report ${f#"${FR_BUILDDIR:-.}"/}"
  cat "$f"
done
if [ $n -gt 0 ]; then
  echo "sanitizer-run: $n sanitizer report file(s) from $t"
  if [ $rc -eq 0 ] || [ $rc -eq 77 ]; then rc=1; fi
fi
exit $rc
