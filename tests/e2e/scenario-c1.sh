#!/bin/sh
# Case C1, live: the scenario runs on the simulator with the
# recorder preloaded into every rank; fr-analyze's JSON must match the
# expected verdict, and every rank must have dumped frame 0.  The verdict
# shows where rank 5 is: its thread stack ends in the job's stop function,
# in a stack class of its own, and fr-dump --json lists that thread.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
check_hang_case c1-rank-stops 8
check_stack c1-rank-stops 5 job_stop_forever
# fr-dump --json carries the same threads: rank 5's latest frame has a thread
# whose frames name the stop function, and the document fits the schema
r5=$(ls "$FR_TMP/run/dumps/"*-r00005-f*.frz | sort | tail -n 1)
"$FR_DUMP" --json "$r5" > "$FR_TMP/r5.json" || fail "fr-dump --json $r5"
"$FR_BUILDDIR/tests/json-schema-check" "$FR_SRCDIR/formats/dump.schema.json" "$FR_TMP/r5.json" ||
  fail "fr-dump --json of a dump with threads against the schema"
grep -q '"name":[[:space:]]*"[^"]*job_stop_forever' "$FR_TMP/r5.json" ||
  fail "fr-dump --json: no frame of rank 5 names job_stop_forever"
check_tui_first c1-rank-stops " HANG: rank 5 never entered" ">         5 C C" "-- rank 5 (comm rank 5)"
