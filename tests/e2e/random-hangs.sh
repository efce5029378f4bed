#!/bin/sh
# A fixed seed of random hung jobs with known answers (tests/random-hangs,
# rules in tests/random-hangs.md): every verdict right, no wrong culprit,
# no missed hang.  `make check-random` runs more (FR_RANDOM_HANGS_N, _SEED).
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
command -v python3 >/dev/null 2>&1 || { echo "no python3: skipped"; exit 77; }
# verdicts that rest on timing (a watchdog's 500 ms, an async error seen at
# a poll) are judged in the plain build; a sanitizer's slowdown changes them
case "${FR_SAN_CFLAGS:-}" in *sanitize=*) echo "SKIP: sanitizer build: timing-sensitive"; exit 77 ;; esac
# (every kind, the fault model's too; FR_RANDOM_HANGS_KINDS=classic or model
# draws one side only)
FR_RUN_SCENARIO="$FR_RUN_SCENARIO" python3 "$FR_SRCDIR/tests/random-hangs" -n "${FR_RANDOM_HANGS_N:-30}" \
  -s "${FR_RANDOM_HANGS_SEED:-7}" --world 12 --kinds "${FR_RANDOM_HANGS_KINDS:-all}" \
  --keep "$FR_TMP/failed" > "$FR_TMP/out" 2>&1
rc=$?
cat "$FR_TMP/out"
tail -1 "$FR_TMP/out" | grep -Eq '^[0-9]+ cases, [0-9]+ right, 0 wrong culprits, 0 missed hangs$' ||
  fail "random hung jobs: wrong verdicts (scenarios kept in $FR_TMP/failed)"
[ "$rc" -eq 0 ] || fail "random hung jobs: some verdict not right"
