#!/usr/bin/env bash
# The one GPU check (run on a machine with a GPU and PyTorch; see README of
# tests/device).  Expects the recorder prebuilt at .devcarry/librecorder.so.
# Writes everything into $OUT/gpu-check.tar.gz.
set -u
OUT=${OUT:-/tmp/fr-gpu-out}
w=$(mktemp -d)
mkdir -p "$w/fr" "$w/torch"
exec > >(tee "$w/log.txt") 2>&1
echo "== machine"; nvidia-smi -L; python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
nccl_so=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
echo "wheel libnccl: $nccl_so"
nccl_h=$(dirname "$(dirname "$nccl_so")")/include/nccl.h
if [ -f "$nccl_h" ] && command -v gcc >/dev/null; then
  echo "== our declarations vs the wheel's nccl.h"
  cuda_inc=$(python3 -c 'import nvidia.cuda_runtime, os; print(os.path.join(list(nvidia.cuda_runtime.__path__)[0], "include"))' 2>/dev/null)
  gcc -std=gnu11 -fsyntax-only -isystem "$(dirname "$nccl_h")" ${cuda_inc:+-isystem $cuda_inc} -isystem /usr/local/cuda/include \
    -Iformats -Ilibrecorder/nccl tests/unit/check_nccl_decls.c && echo "declarations match $nccl_h"
fi
echo "== 1-rank PyTorch NCCL job with the recorder preloaded"
export LD_LIBRARY_PATH=$PWD/.devcarry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29533 \
FR_JOB_ID=h200 FR_DUMP_DIR="$w/fr" FR_TIMEOUT_SEC=5 FR_POLL_MS=50 FR_MAX_FRAMES=2 FR_FRAME_INTERVAL_SEC=2 \
FR_DUMP_ON_EXIT=1 FR_BACKTRACE=${FR_BACKTRACE:-0} TORCH_NCCL_TRACE_BUFFER_SIZE=2000 PYTHONUNBUFFERED=1 \
LD_PRELOAD=$PWD/.devcarry/librecorder.so timeout 300 python3 tests/device/torch_job.py "$w/torch"
echo "job exit: $?"
ls -la "$w/fr" "$w/torch"
tar -C "$w" -czf "$OUT/gpu-check.tar.gz" .
