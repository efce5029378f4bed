#!/bin/sh
# A rank blocked in a system call, live on the simulator: rank 1 blocks in
# read(2) on an empty pipe; it lags, and its thread stack in the dump shows
# read <- job_block_in_read, a stack class of its own.
. "$FR_SRCDIR/tests/e2e/lib.sh"
skip_under_tsan "stacks of a rank blocked in read(2)"
fr_tmpdir
check_hang_case v-blocked-read 4
check_stack v-blocked-read 1 job_block_in_read
# read(2), then job_block_in_read (an ASan build's read interceptor between)
in_read='(__libc_)?read (<- libasan\.so\+0x[0-9a-f]+ )?<- job_block_in_read'
grep -Eq "^  stack of 1: +$in_read" "$FR_TMP/run/verdict-full.txt" ||
  fail "the stack of rank 1 does not start in read(2)"
# fr-tui: the stack pane of the selected rank (the culprit, rank 1) and the
# stack classes
tui_batch --stacks "$FR_TMP/run/dumps" > "$FR_TMP/tui-stack.out" || fail "fr-tui --stacks"
grep -q '^-- stack of rank 1: thread [0-9]* "fr-scenario-job" (main), ok' "$FR_TMP/tui-stack.out" &&
  grep -Eq '^  #[12]  fr-scenario-job!job_block_in_read\+0x' "$FR_TMP/tui-stack.out" ||
  { cat "$FR_TMP/tui-stack.out" >&2; fail "fr-tui's stack pane does not show rank 1 in job_block_in_read"; }
tui_batch --stack-classes --cols 120 "$FR_TMP/run/dumps" > "$FR_TMP/tui-classes.out" || fail "fr-tui --stack-classes"
grep -Eq "^  1 rank \\(1\\): $in_read" "$FR_TMP/tui-classes.out" &&
  grep -q '^  3 ranks (0,2-3): ' "$FR_TMP/tui-classes.out" ||
  { cat "$FR_TMP/tui-classes.out" >&2; fail "fr-tui's stack classes do not set rank 1 apart"; }
echo "v-blocked-read: fr-tui stack pane and classes ok"
