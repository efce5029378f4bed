#!/bin/sh
# Case C9, live on the simulator: a 3-rank pipeline whose middle rank exits: two unmatched p2p links.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
run_case c9-p2p-no-peer
echo "c9-p2p-no-peer: ok"
