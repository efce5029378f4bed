#!/bin/sh
# The recorder preloaded into a program linked with the real libnccl.so.2
# (no GPU here): every NCCL result reaches the program unchanged, and the
# failed ncclCommInitRank is recorded (state failed, NCCL's own error).
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
prog="$FR_BUILDDIR/tests/e2e/real-nccl-prog"
[ -x "$prog" ] || fail "$prog not built"

"$prog" > "$FR_TMP/plain.out" 2> "$FR_TMP/plain.err" || fail "program failed without the recorder"
RANK=0 WORLD_SIZE=1 FR_DUMP_ON_EXIT=1 FR_DUMP_DIR="$FR_TMP/dumps" FR_JOB_ID=real \
  LD_PRELOAD="$FR_PRELOAD" "$prog" > "$FR_TMP/rec.out" 2> "$FR_TMP/rec.err" ||
  fail "program failed with the recorder"
cat "$FR_TMP/rec.out"
diff "$FR_TMP/plain.out" "$FR_TMP/rec.out" || fail "NCCL results differ with the recorder preloaded"
grep -q '^ncclGetVersion: 0 version=2' "$FR_TMP/rec.out" || fail "ncclGetVersion did not succeed"
grep -q '^ncclCommInitRank: [1-9]' "$FR_TMP/rec.out" || fail "ncclCommInitRank unexpectedly succeeded (a GPU here?)"
init_rc=$(sed -n 's/^ncclCommInitRank: \([0-9]*\) .*/\1/p' "$FR_TMP/rec.out")

dump="$FR_TMP/dumps/real-r00000-f0000.frz"
[ -f "$dump" ] || fail "no exit dump written"
"$FR_DUMP" "$dump" > "$FR_TMP/dump.txt" || fail "fr-dump could not read $dump"
cat "$FR_TMP/dump.txt"
grep -Eq "CommInitRank +failed .* $init_rc( |$)" "$FR_TMP/dump.txt" ||
  fail "the failed init (result $init_rc) is not recorded as failed"
grep -q 'nccl: *2\.' "$FR_TMP/dump.txt" || fail "NCCL version not in the dump header"
echo "pass-through with the real libnccl: ok"
