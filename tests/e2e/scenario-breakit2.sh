#!/bin/sh
# Hang kinds from the second and third break-it passes (2026-12-02:
# tests/scenarios/b2-*.scn, b3-*.scn, each once judged wrong, with its right
# verdict in NAME.expected.json) and our variants of the second pass's kinds
# (b2v-*.scn, b3v-*.scn): PyTorch's default watchdog (dump, then SIGABRT, no teardown)
# beside a stop, a kill, or a stalled p2p link; a kernel or link stopped
# inside a rooted collective (Broadcast, Reduce, Gather, Scatter); a rank
# that came too late while every rank has a watchdog, in a collective or a
# p2p op; a comm rank of a comm that never formed, placed by two points;
# cycles where one rank swapped its order, skipped an op of one comm for
# another's, called its op on the wrong comm, or sent to the wrong stage of
# a pipeline; a stalled p2p pair in a group with a collective.  Split from
# scenario-breakit.sh so that the two run side by side.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
for scn in "$FR_SRCDIR"/tests/scenarios/b2-*.scn "$FR_SRCDIR"/tests/scenarios/b2v-*.scn \
  "$FR_SRCDIR"/tests/scenarios/b3-*.scn "$FR_SRCDIR"/tests/scenarios/b3v-*.scn; do
  run_case "$(basename "$scn" .scn)" >/dev/null && echo "$(basename "$scn" .scn): ok"
done
