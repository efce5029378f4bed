#!/bin/sh
# The default text report stays short at scale: on a synthetic hung job of
# 4,096 ranks and 1,024 records each (tests/bench/fr-synth; 1,569
# communicators, 1,568 of them idle) fr-analyze's report is under 60 lines,
# every line under 80 columns, and still names the culprit with its host and
# pid and a next step; --full keeps every communicator.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
SYNTH="$FR_BUILDDIR/tests/bench/fr-synth"
[ -x "$SYNTH" ] || { echo "report-scale: $SYNTH not built" >&2; exit 99; }
"$SYNTH" -n 4096 -m 1024 "$FR_TMP/d" >/dev/null || fail "fr-synth failed"
expect_exit 1 "$FR_ANALYZE" "$FR_TMP/d" >"$FR_TMP/out"
n=$(wc -l <"$FR_TMP/out")
[ "$n" -lt 60 ] || fail "default report of 4096 ranks: $n lines (want < 60)"
w=$(awk '{ if (length > m) m = length } END { print m + 0 }' "$FR_TMP/out")
[ "$w" -lt 80 ] || fail "default report of 4096 ranks: a line of $w columns (want < 80)"
grep -q '^  root cause:     2051$' "$FR_TMP/out" || fail "the culprit is not rank 2051"
grep -q '^  rank 2051: pid [0-9][0-9]* on host node[0-9]*' "$FR_TMP/out" || fail "no host and pid of rank 2051"
grep -q 'gdb -p [0-9]' "$FR_TMP/out" || fail "no next step for rank 2051"
grep -q '^communicators: 1569 (1 stuck, 1568 idle)$' "$FR_TMP/out" || fail "the communicators are not counted"
expect_exit 1 "$FR_ANALYZE" --full "$FR_TMP/d" >"$FR_TMP/full"
[ "$(grep -c '^  comm [0-9a-f]\{16\}' "$FR_TMP/full")" -eq 1569 ] || fail "--full does not list every communicator"
echo "report-scale: default report of 4096 ranks: $n lines, at most $w columns"

