#!/bin/sh
# librecorder.so as NCCL's profiler plugin, outside a simulated job:
# - loaded the way NCCL 2.27/2.28 loads one (dlopen RTLD_LOCAL, dlsym
#   ncclProfiler_v5 / _v4), driven through a collective's events
#   (tests/e2e/profiler-load.c); NCCL_PROFILER_PLUGIN set to it when unset,
#   a user's value left alone (and said so), FR_PROFILER_MASK=0 honoured;
# - the numeric values of our ABI header against NVIDIA's profiler header
#   when one is installed (NCCL's packages ship none: that part is skipped
#   with the places looked at); the layout is checked at compile time
#   against the documented one (tests/unit/check_profiler_abi.c);
# - with the real libnccl.so.2 (no GPU here): a program preloaded with the
#   recorder runs with NCCL_PROFILER_PLUGIN pointing at it; NCCL loads a
#   profiler plugin only when a communicator is created, which needs a GPU,
#   so only what NCCL says about it is shown.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
load="$FR_BUILDDIR/tests/e2e/profiler-load"
[ -x "$load" ] || fail "$load not built"
export FR_DUMP_DIR="$FR_TMP/dumps"

env -u NCCL_PROFILER_PLUGIN "$load" "$FR_RECORDER" > "$FR_TMP/load.out" 2>&1 ||
  { cat "$FR_TMP/load.out"; fail "loading the recorder as NCCL does"; }
cat "$FR_TMP/load.out"

NCCL_PROFILER_PLUGIN=/opt/other/libnccl-profiler-other.so "$load" "$FR_RECORDER" > "$FR_TMP/user.out" 2>&1 ||
  { cat "$FR_TMP/user.out"; fail "with a user's NCCL_PROFILER_PLUGIN"; }
grep -q 'NCCL_PROFILER_PLUGIN=/opt/other/libnccl-profiler-other.so is set: left alone' "$FR_TMP/user.out" ||
  { cat "$FR_TMP/user.out"; fail "the recorder does not say it left the user's plugin alone"; }

env -u NCCL_PROFILER_PLUGIN FR_PROFILER_MASK=0 "$load" "$FR_RECORDER" > "$FR_TMP/off.out" 2>&1 ||
  { cat "$FR_TMP/off.out"; fail "FR_PROFILER_MASK=0"; }

# NVIDIA's header, where one is installed: the same numbers as ours
found=
for h in "$FR_REAL_NCCL_LIBDIR/../include/nccl_profiler.h" /usr/local/cuda/include/nccl_profiler.h \
         /usr/include/nccl_profiler.h /usr/local/cuda/include/profiler_v5.h; do
  [ -f "$h" ] && found="$h" && break
done
if [ -n "$found" ]; then
  for pair in ncclProfileColl:1.1 ncclProfileProxyStep:1.4 ncclProfileKernelCh:1.6 \
              ncclProfilerProxyStepSendGPUWait:8 ncclProfilerProxyStepSendPeerWait_v4:20 \
              ncclProfilerProxyStepRecvWait:10 ncclProfilerProxyStepRecvGPUWait:12; do
    name=${pair%%:*} value=${pair#*:}
    case $value in 1.*) pat="$name *= *(1 *<< *${value#1.})" ;; *) pat="$name *= *$value\\b" ;; esac
    grep -Eq "$pat" "$found" || fail "$found: $name is not $value as in fr_profiler.h"
  done
  echo "profiler header $found: values agree"
else
  echo "SKIP (part): no NVIDIA profiler header (nccl_profiler.h) installed beside nccl.h;" \
       "the layout was checked against the documented one at compile time"
fi

# the real NCCL, where there is one
prog="$FR_BUILDDIR/tests/e2e/real-nccl-prog"
if [ -x "$prog" ]; then
  env -u NCCL_PROFILER_PLUGIN NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV RANK=0 WORLD_SIZE=1 \
    LD_PRELOAD="$FR_PRELOAD" "$prog" > "$FR_TMP/real.out" 2>&1
  if grep -q 'PROFILER/Plugin' "$FR_TMP/real.out"; then
    grep 'PROFILER/Plugin' "$FR_TMP/real.out"
    grep -q 'PROFILER/Plugin.*[Ll]oaded' "$FR_TMP/real.out" || fail "the real NCCL did not load the recorder"
  else
    echo "real NCCL: no profiler plugin loading reported: its comm init stops without a GPU before" \
         "it loads one (the recorder was preloaded and had set NCCL_PROFILER_PLUGIN)"
  fi
else
  echo "SKIP (part): no real libnccl.so.2 (configure --with-cuda)"
fi
echo "profiler plugin: ok"
