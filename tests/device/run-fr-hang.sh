#!/usr/bin/env bash
# Real PyTorch Flight Recorder dumps of an op that cannot start (one GPU):
# through the API (pickle + JSON) and written by the watchdog on timeout.
# Results in $OUT/api/ and $OUT/timeout/, the log in $OUT/log.txt.
set -u
OUT=${OUT:-/tmp/fr-hang-out}
exec > >(tee "$OUT/log.txt") 2>&1
py=python3
python3 -c 'import torch' 2>/dev/null || py=/opt/torch/.venv/bin/python3
$py -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
mkdir -p "$OUT/api" "$OUT/timeout"
export MASTER_ADDR=127.0.0.1 MASTER_PORT=29541 TORCH_NCCL_TRACE_BUFFER_SIZE=2000 PYTHONUNBUFFERED=1
echo "== api"
timeout 120 $py tests/device/torch_fr_hang.py "$OUT/api" api; echo "exit $?"
echo "== timeout"
MASTER_PORT=29542 TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_NCCL_ENABLE_TIMING=1 \
TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$OUT/timeout/nccl_trace_rank_" \
  timeout 150 $py tests/device/torch_fr_hang.py "$OUT/timeout" timeout; echo "exit $?"
ls -la "$OUT/api" "$OUT/timeout"
