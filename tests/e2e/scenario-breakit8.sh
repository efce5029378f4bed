#!/bin/sh
# Hang kinds a fresh helper wrote from public bug reports without seeing the
# analysis (tests/scenarios/k32-*.scn, each header names its report), and our
# variants (k32v-*.scn), each with its right verdict in NAME.expected.json.
# Among them: a rank that called one collective more than the others, whose
# peers then exited cleanly (no dump, their announcements removed at exit):
# the rank alone is ahead, the ranks that finished their program are not the
# cause; a link stalled in a tensor-parallel group, whose data-parallel
# all-reduces wait behind it on the same streams (every wait explained by it).
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
case_check() {
  case $1 in
    k32-01-* | k32v-01-*)
      echo "$2" | grep -q "left no dump and no announcement: they exited cleanly" ||
        fail "$1: the clean exits are not said: $2" ;;
  esac
  return 0
}
each_case "$FR_SRCDIR"/tests/scenarios/k32-*.scn "$FR_SRCDIR"/tests/scenarios/k32v-*.scn
