#!/bin/sh
# Hang kinds from the eighth break-it pass (2026-12-04: tests/scenarios/b8-*.scn, each once
# judged wrong, with its right verdict in NAME.expected.json) and our variants (b8v-*.scn).
# A pipeline stage whose stream a kernel that never ends holds (the simulator's busy-stream):
# its send was posted but never started, while its peer's receive started and waits; that
# stage is the root, and a peer whose own send is queued behind that receive only waits.  A
# rank that skips an all-to-all (or all-reduce) of its expert (tensor) group and goes on into
# the others' comms: of the ranks a step of the cycle awaits alone, the one that waits for
# several (it went on), not one that waits for it in turn.  A rank whose comm NCCL reported
# broken is not called slow for an op that completed after the error.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
case_check() {
  case $1 in
    *async-error*)
      echo "$2" | grep -q "slow, not hung" && fail "$1: a rank whose comm broke is called slow: $2" ;;
    *busy-stream*) # the held stage's posted op never started, not "never posted"
      echo "$2" | grep -q "Send never started" || fail "$1: the send that never started is not said: $2" ;;
  esac
  return 0
}
each_case "$FR_SRCDIR"/tests/scenarios/b8-*.scn "$FR_SRCDIR"/tests/scenarios/b8v-*.scn
