#!/bin/sh
# The recorder preloaded into a ROCm-style program on Debian's real HIP
# runtime (libamdhip64) with no GPU, its NCCL API served by the real
# libnccl.so.2 (Debian ships no RCCL): every HIP and NCCL result reaches the
# program unchanged, the recorder picks the HIP runtime (the one loaded),
# says once that it sees no GPU and tracks nothing, and still records the
# failed init.  SKIP where the real libamdhip64 or libnccl.so.2 is missing.
. "$FR_SRCDIR/tests/e2e/lib.sh"
prog="$FR_BUILDDIR/tests/e2e/real-hip-prog"
if [ ! -x "$prog" ]; then
  echo "SKIP: no real libamdhip64 and libnccl.so.2 here (scripts/setup.sh installs libamdhip64-dev; configure --with-hip, --with-cuda)"
  exit 77
fi
fr_tmpdir

"$prog" > "$FR_TMP/plain.out" 2> "$FR_TMP/plain.err" || fail "program failed without the recorder"
RANK=0 WORLD_SIZE=1 FR_DUMP_ON_EXIT=1 FR_DUMP_DIR="$FR_TMP/dumps" FR_JOB_ID=realhip \
  LD_PRELOAD="$FR_PRELOAD" "$prog" > "$FR_TMP/rec.out" 2> "$FR_TMP/rec.err" ||
  fail "program failed with the recorder"
cat "$FR_TMP/rec.out"
diff "$FR_TMP/plain.out" "$FR_TMP/rec.out" || fail "HIP or NCCL results differ with the recorder preloaded"
grep -q '^hipGetDeviceCount: [1-9]' "$FR_TMP/rec.out" || fail "hipGetDeviceCount succeeded (a GPU here?)"
grep -q '^ncclCommInitRank: [1-9]' "$FR_TMP/rec.out" || fail "ncclCommInitRank unexpectedly succeeded"

# the recorder's words: HIP chosen, no GPU, nothing tracked; said once
cat "$FR_TMP/rec.err"
n=$(grep -c 'HIP runtime libamdhip64\.so\.[0-9]* sees no GPU.*completion is not tracked' "$FR_TMP/rec.err")
[ "$n" -eq 1 ] || fail "expected one 'sees no GPU ... not tracked' line from the recorder, found $n"
! grep -q 'libcuda' "$FR_TMP/rec.err" || fail "the recorder went for CUDA in a HIP process"
[ "$(grep -c . "$FR_TMP/plain.err")" -eq 0 ] || fail "the program alone wrote to stderr"

dump="$FR_TMP/dumps/realhip-r00000-f0000.frz"
[ -f "$dump" ] || fail "no exit dump written"
"$FR_DUMP" "$dump" > "$FR_TMP/dump.txt" || fail "fr-dump could not read $dump"
init_rc=$(sed -n 's/^ncclCommInitRank: \([0-9]*\) .*/\1/p' "$FR_TMP/rec.out")
grep -Eq "CommInitRank +failed .* $init_rc( |\$)" "$FR_TMP/dump.txt" ||
  fail "the failed init (result $init_rc) is not recorded as failed"
echo "pass-through with the real libamdhip64: ok"
