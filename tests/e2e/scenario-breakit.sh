#!/bin/sh
# Hang kinds from a break-it pass (tests/scenarios/b-*.scn, each with its
# right verdict at its top), every one a wrong verdict once, now fixed in the
# analysis: a live rank aborting or destroying a comm its peers still use; a
# rank stopping inside an open group (its grouped ops never launched); a
# rank exiting with an op in flight; a rank tearing a comm down early; two
# ranks both sending first (a deadlock through stream order); the majority
# blocked in host code while one rank enters the op (not "ahead"); devices
# of one process (CommInitAll) waiting behind another comm's op or aborting
# one device's comm; and every rank aborting at the end (healthy).  And the
# ways jobs react to a hang (tests/scenarios/r-*.scn: a watchdog that aborts
# or destroys the comms, then exits or stays; an async error, then SIGABRT):
# the verdict still names the rank that caused it.  And random hung jobs
# (tests/random-hangs) that were once judged wrong (x-random-SEED.scn).
# (The later break-it passes: scenario-breakit2.sh.)
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
for scn in "$FR_SRCDIR"/tests/scenarios/b-*.scn "$FR_SRCDIR"/tests/scenarios/r-*.scn \
  "$FR_SRCDIR"/tests/scenarios/x-random-*.scn; do
  name=$(basename "$scn" .scn)
  # an async error seen at a watchdog's poll, then SIGABRT: the crash
  # handler may skip its dump while another is written (a recorder race,
  # open); a sanitizer's slowdown makes it likely
  case "$name:${FR_SAN_CFLAGS:-}" in r-async-error-crash:*sanitize=*) echo "$name: skipped (sanitizer)"; continue ;; esac
  run_case "$name" >/dev/null
  case $name in
    x-random-77031231101) # the unreadable dump's alternative: rank 1, which skipped
      tr '\n' ' ' < "$FR_TMP/run/verdict-full.txt" | tr -s ' ' | grep -q "rank 1, which never entered it, is the cause instead" ||
        { cat "$FR_TMP/run/verdict-full.txt" >&2; fail "$name: the alternative to the unreadable dump is not said"; } ;;
    r-async-error-crash) # either reading of the race names the async error in the verdict's lead
      sed -n '1,/^  lagging ranks:/p' "$FR_TMP/run/verdict-full.txt" | tr '\n' ' ' | tr -s ' ' |
        grep -q "async error" || { cat "$FR_TMP/run/verdict-full.txt" >&2; fail "$name: the async error is not said"; } ;;
  esac
  echo "$name: ok"
done
