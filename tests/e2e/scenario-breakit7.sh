#!/bin/sh
# Hang kinds from the tenth break-it pass (2026-12-04: tests/scenarios/b10-*.scn, each once
# judged wrong, with its right verdict in NAME.expected.json) and our variants (b10v-*.scn).
# A rank of a pipeline leaves out a send or a receive its earlier rounds make and goes on into
# the next collective: its peer waits in the p2p op for it while it waits for the peer.  The
# rank that left the call out is the root, not the peer (the rule of a call left out, for a
# p2p op as for a collective), and the summary names the call.  And a rank that does not join
# a shrink of world (the rank left out exited, no dump) while the others wait in it: it alone
# is the root, not one of the ranks waiting in the shrink (the step that awaits it alone
# against the step that awaits several, a member without a dump among them).  And a stage that
# left out a receive while another stage stopped elsewhere (no cycle): a root beside the chain's
# end, though it waits in a later op (verdict.left_out_ranks).  Controls of the eleventh pass
# (b11-*.scn): a receive posted but queued behind a stuck op is not left out, nor are calls the
# whole job dropped, and a pair whose replicas changed as one side did blames neither alone.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
case_check() {
  case $1 in
    b11-pp-replicas-*) # the job changed: said, and nobody blamed alone by the rounds
      echo "$2" | grep -q "most ranks changed their round of ops (the job changed what it does)" ||
        fail "$1: the job-wide change is not said: $2" ;;
    b11-pp-eval-*) # the rank that kept its pattern (eval steps) is not named alone
      echo "$2" | grep -q "rank 1 changed what it does" || fail "$1: the rank that changed is not said: $2" ;;
    b11-*) ;;
    *omit-*) # beside a hang elsewhere: said beside the chain's end
      echo "$2" | grep -q "beside it, rank [0-9]*, by its rounds, left out the send or receive that a pending p2p op waits for" ||
        fail "$1: the rank that left out a p2p call is not said: $2" ;;
    *1f1b* | *-pp*)
      echo "$2" | grep -q "went astray: in each earlier round it called \(Recv from\|Send to\) rank [0-9]* on comm" ||
        fail "$1: the call left out is not said: $2" ;;
  esac
  return 0
}
each_case "$FR_SRCDIR"/tests/scenarios/b10-*.scn "$FR_SRCDIR"/tests/scenarios/b10v-*.scn \
  "$FR_SRCDIR"/tests/scenarios/b11-*.scn
