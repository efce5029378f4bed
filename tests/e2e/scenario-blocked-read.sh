#!/bin/sh
# A rank blocked in a system call, live on the simulator: rank 1 blocks in
# read(2) on an empty pipe; it lags, and its thread stack in the dump shows
# read <- job_block_in_read, a stack class of its own.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
check_hang_case v-blocked-read 4
check_stack v-blocked-read 1 job_block_in_read
grep -Eq '^  stack of 1: +(__libc_)?read <- job_block_in_read' "$FR_TMP/run/verdict.txt" ||
  fail "the stack of rank 1 does not start in read(2)"
