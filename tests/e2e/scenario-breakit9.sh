#!/bin/sh
# Hang kinds a fresh helper wrote from public bug reports without seeing the
# analysis (tests/scenarios/k33-*.scn, each header names its report and the
# right verdict), and our variants (k33v-*.scn), each with the verdict
# fr-analyze gives in NAME.expected.json (where it falls short of the right
# one, the header says how).  Among them: a trainer that broadcasts one
# parameter more than its rollout workers receive (the workers, done by
# their own count, are not blamed); one member of each sequence-parallel
# group splitting its all-to-all otherwise (a culprit per group); a
# pipeline stage that sends no shape first (the receiving stage is not
# "ahead"); a metric all-reduce whose dtype differs while the job runs on
# (no hang).
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
case_check() { return 0; }
each_case "$FR_SRCDIR"/tests/scenarios/k33-*.scn "$FR_SRCDIR"/tests/scenarios/k33v-*.scn
