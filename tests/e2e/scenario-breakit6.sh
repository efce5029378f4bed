#!/bin/sh
# Hang kinds from the ninth break-it pass (2026-12-04: tests/scenarios/b9-*.scn, each once judged
# wrong, with its right verdict in NAME.expected.json) and our variants (b9v-*.scn).  Ranks that
# skip a collective of one comm and go on into another's: the rank of the cycle whose rounds show
# that call left out (and every other rank of the cycle keeping to its rounds) is the root, and
# beside it every rank that left out a stuck op's call the same way.  A rank that made a call more
# is not said to have left one out.  The ranks of a lazily created comm that wait outside NCCL
# for its unique id from a maker that stopped are not named beside it.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
case_check() {
  case $1 in
    *extra*)
      echo "$2" | grep -q "without having called the first\|past a stuck op" &&
        fail "$1: a call more is said to be a call left out: $2" ;;
    *two-skip* | *three-skip*) # one in the cycle, the others beside it
      echo "$2" | grep -q "also waits\{0,1\} past a stuck op" || fail "$1: the other ranks that skipped are not said: $2" ;;
    *late-uid-maker-stops*) # the others wait outside NCCL for the unique id
      echo "$2" | grep -q "outside NCCL for another rank" || fail "$1: the ranks waiting for the id are not said: $2" ;;
  esac
  return 0
}
each_case "$FR_SRCDIR"/tests/scenarios/b9-*.scn "$FR_SRCDIR"/tests/scenarios/b9v-*.scn
