#!/bin/sh
# Hang kinds from the fourth break-it pass (2026-12-02: tests/scenarios/b4-*.scn, each once
# judged wrong, with its right verdict in NAME.expected.json) and our variants (b4v-*.scn):
# ranks that run a step more in one comm of a split while another comm of the split ends where
# their peer tore theirs down (nobody blamed: both readings), or where it ends later (the one
# that left early named); a rank alone in a p2p exchange or pipeline past the others' teardown
# (ahead), and the control where one rank ended early; a comm created only by a rank that ran
# a step more (ahead, not the others "never called"); a rank that came too late after the
# others' watchdogs ended their processes without tearing anything down; and a rank ahead in
# one group beside a fault in another (both named); and from the fifth pass (b5-*.scn): p2p
# ends compared pair by pair, late ranks that hid each other or waited for the late one, and
# the other groups of a split that show where the work ends (an empty dump there, or counts of
# their own); and from the sixth pass (b6v-*.scn): other groups of the split of another size
# that end where a rank tore its group down (nobody blamed), and the control where they end
# later (the one that left early named).
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
for scn in "$FR_SRCDIR"/tests/scenarios/b4-*.scn "$FR_SRCDIR"/tests/scenarios/b4v-*.scn \
  "$FR_SRCDIR"/tests/scenarios/b5-*.scn "$FR_SRCDIR"/tests/scenarios/b6v-*.scn; do
  name=$(basename "$scn" .scn)
  run_case "$name" >/dev/null
  text=$(tr '\n' ' ' < "$FR_TMP/run/verdict-full.txt" | tr -s ' ')
  case $name in
    b4-tp-extra-pair-w6|b4v-dp-extra-w8) # both readings are said
      echo "$text" | grep -q "the dumps cannot tell which" || fail "$name: the two readings are not said" ;;
    b4-p2p-ring-extra-w5) # ahead in p2p ops, not "entered CommDestroy"
      echo "$text" | grep -q "rank 2 is ahead: its p2p operations on comm [0-9a-f]* wait alone" ||
        fail "$name: the p2p ops ahead are not said" ;;
    b4-init-extra-uidmaker-w4) # the others never created the comm and ended
      echo "$text" | grep -q "ranks 1-3 never created the comm, ended their work" ||
        fail "$name: the others' end is not said" ;;
    b4-late-no-abort-crash-w4) # how they gave up
      echo "$text" | grep -q "had given up on it (ended after waiting): it came too late" ||
        fail "$name: the give-up is not said" ;;
  esac
  echo "$name: ok"
done
