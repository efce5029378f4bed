#!/bin/sh
# The handed cases C1-C13 on the RCCL/HIP flavour of the simulator: the
# same scenario job built on librccl.so.1 and the HIP runtime stand-in
# libamdhip64.so.6 (no libcuda, no libnccl in the process), the recorder
# preloaded as on a ROCm job.  Each verdict must match the case's expected
# one, as on the CUDA flavour; the recorder must have tracked completion
# with HIP events (GPU-timed records, no word about libcuda).  Then an
# all-to-all case, whose all-to-all goes through RCCL's own ncclAllToAll:
# recorded as AlltoAll, never paired with a profiler Coll event (RCCL runs
# it as grouped p2p), and the verdict as expected.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
FR_JOB="$FR_BUILDDIR/tests/scenario/fr-scenario-job-hip"
export FR_JOB
[ -x "$FR_JOB" ] || fail "$FR_JOB not built"
deps=$(ldd "$FR_JOB") || fail "ldd $FR_JOB"
echo "$deps" | grep -q 'librccl\.so\.1' || fail "the HIP job does not load librccl.so.1"
echo "$deps" | grep -q 'libamdhip64\.so\.6' || fail "the HIP job does not load libamdhip64.so.6"
! echo "$deps" | grep -Eq 'libcuda\.so|libnccl\.so' || fail "the HIP job loads libcuda or libnccl"
# the ranks' library path (fr-launch puts FR_SIM_LIBDIR first) holds the
# RCCL flavour only: a recorder that went for CUDA would find no libcuda.so.1
mkdir "$FR_TMP/rocm-libs"
ln -s "$FR_SIM_LIBDIR/librccl.so.1" "$FR_SIM_LIBDIR/libamdhip64.so.6" "$FR_TMP/rocm-libs/" || fail "ln -s"
FR_SIM_LIBDIR="$FR_TMP/rocm-libs"
export FR_SIM_LIBDIR

hip_tracked() { # NAME: the run's dumps hold GPU-timed records; no rank spoke of libcuda
  ! grep -l 'libcuda\|not tracked' "$FR_TMP/run/"rank-*.log > /dev/null 2>&1 ||
    fail "$1: a rank's recorder fell back from HIP: $(grep -h 'libcuda\|not tracked' "$FR_TMP/run/"rank-*.log | head -n 1)"
  d=$(ls "$FR_TMP/run/dumps/"*-r00000-f*.frz | head -n 1)
  "$FR_DUMP" "$d" > "$FR_TMP/d0.txt" || fail "$1: fr-dump $d"
  grep -q 'gpu_timed' "$FR_TMP/d0.txt" || fail "$1: no record of rank 0 was timed with HIP events"
}

for c in c1-rank-stops:8 c2-majority-lags:8 c4-rank-leaves-loop:4 c11-link-stalls:8; do
  name=${c%:*} n=${c#*:}
  if [ "$n" -gt 0 ]; then check_hang_case "$name" "$n"; else run_case "$name" > /dev/null; fi
  hip_tracked "$name"
  echo "$name (HIP): ok"
done
for name in c3-rank-ahead c5-coll-mismatch c6-dtype-split c7-size-mismatch-completes c8-rank-dies \
  c9-p2p-no-peer c10-order-inversion c12-partial-evidence c13-straggler; do
  run_case "$name" > /dev/null
  echo "$name (HIP): ok"
done

run_case b-alltoall-skip-cycle-w8 > /dev/null
hip_tracked b-alltoall-skip-cycle-w8
grep -q ' AlltoAll ' "$FR_TMP/d0.txt" || fail "no AlltoAll record from ncclAllToAll"
! grep ' AlltoAll ' "$FR_TMP/d0.txt" | grep -q 'profiler' ||
  fail "an ncclAllToAll record was paired with a profiler Coll event"
echo "b-alltoall-skip-cycle-w8 (HIP, RCCL's ncclAllToAll): ok"
