#!/bin/sh
# Hang kinds from the seventh break-it pass (2026-12-03: tests/scenarios/b7-*.scn, each once
# judged wrong: every rank of the deadlock cycle was blamed) and our variants (b7v-*.scn): a
# pipeline rank that posts the wrong p2p op (a recv where it sends, a send where it receives,
# an extra send or recv) or runs fewer micro-batches than every other step, on one comm or on
# pipeline and data-parallel comms of their own.  The rounds rule of fr-analyze(1) names the
# one rank whose ops since its latest collective are not what it did in each of the two rounds
# before, while the other ranks of the cycle repeat theirs; its summary says so.  And
# (b7n-*.scn) a rank killed inside a rooted collective whose chain runs through it, beside a
# rank that never entered (both named: the data stopped at the killed one, as the proxy
# progress shows), with the controls where a rank that only waits leaves an empty dump (not
# named).
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
for scn in "$FR_SRCDIR"/tests/scenarios/b7n-*.scn; do
  name=$(basename "$scn" .scn)
  run_case "$name" >/dev/null
  text=$(tr '\n' ' ' < "$FR_TMP/run/verdict.txt" | tr -s ' ')
  case $name in
    b7n-crash-*) # the link where the data stopped is named
      echo "$text" | grep -q "channel [0-9]* (RecvWait for" || fail "$name: the stopped link is not named: $text" ;;
  esac
  echo "$name: ok"
done
for scn in "$FR_SRCDIR"/tests/scenarios/b7-*.scn "$FR_SRCDIR"/tests/scenarios/b7v-*.scn; do
  name=$(basename "$scn" .scn)
  run_case "$name" >/dev/null
  text=$(tr '\n' ' ' < "$FR_TMP/run/verdict.txt" | tr -s ' ')
  echo "$text" | grep -q "went astray: its ops since its latest collective differ from what it did in each of the two rounds before" ||
    fail "$name: the summary does not say which rank changed its round: $text"
  echo "$name: ok"
done
