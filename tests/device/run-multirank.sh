#!/usr/bin/env bash
# Real 4-rank PyTorch jobs on a machine with ONE GPU (tests/device/README.md):
# each rank its own NCCL_HOSTID, NCCL's socket transport on loopback, the
# flightrec recorder preloaded (expects it prebuilt at .devcarry/).  Three
# jobs, tests/device/torch_multirank.py's modes (JOBS, default: kinds
# a2a-hang coalesced-hang; also gpu-stall and pp-hang).  Per job: PyTorch's dumps (API kinds,
# and the watchdog's on timeout), the recorder's frz dumps, each rank's log,
# and PyTorch's own analyzer (fr_trace) on the dumps where it runs.
# Everything lands in $OUT/multirank.tar.gz, the log also in $OUT/log.txt.
set -u
OUT=${OUT:-/tmp/fr-multirank-out}
mkdir -p "$OUT"
w=$(mktemp -d)
exec > >(tee "$OUT/log.txt") 2>&1
py=python3
python3 -c 'import torch' 2>/dev/null || py=/opt/torch/.venv/bin/python3
echo "== machine"; nvidia-smi -L
$py -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'
export LD_LIBRARY_PATH=$PWD/.devcarry${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1 NCCL_NET=Socket NCCL_DEBUG=WARN NCCL_NVLS_ENABLE=0
export TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 PYTHONUNBUFFERED=1
export FR_TIMEOUT_SEC=5 FR_POLL_MS=50 FR_MAX_FRAMES=2 FR_FRAME_INTERVAL_SEC=2 FR_DUMP_ON_EXIT=1
port=29600
for job in ${JOBS:-kinds a2a-hang coalesced-hang}; do
  port=$((port + 1))
  d="$w/$job"; mkdir -p "$d/frz" "$d/timeout" "$d/logs"
  timing=0; case $job in a2a-hang|gpu-stall) timing=1 ;; esac
  echo "== $job (TORCH_NCCL_ENABLE_TIMING=$timing) $(date +%T)"
  pids=()
  for r in 0 1 2 3; do
    RANK=$r LOCAL_RANK=$r WORLD_SIZE=4 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    NCCL_HOSTID=fr-multirank-host-$r TORCH_NCCL_ENABLE_TIMING=$timing \
    TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$d/timeout/nccl_trace_rank_" \
    FR_JOB_ID=h200-$job FR_DUMP_DIR="$d/frz" LD_PRELOAD=$PWD/.devcarry/librecorder.so \
      timeout -s KILL 90 $py tests/device/torch_multirank.py "$d" "$job" > "$d/logs/rank-$r.log" 2>&1 &
    pids+=($!)
  done
  for i in 0 1 2 3; do wait "${pids[$i]}"; echo "rank $i exit $?"; done
  for r in 0 1 2 3; do echo "-- rank $r"; grep -v '^\s*$' "$d/logs/rank-$r.log" | tail -n 12; done
  ls -la "$d"/*/ | head -n 60
  if [ "$job" != kinds ]; then
    for k in timeout api-full; do
      echo "-- PyTorch's fr_trace on $job/$k"
      timeout 30 $py -m torch.distributed.flight_recorder.fr_trace "$d/$k" > "$d/logs/fr_trace-$k.txt" 2>&1
      echo "fr_trace exit $?"; tail -n 25 "$d/logs/fr_trace-$k.txt"
    done
  fi
done
tar -C "$w" -czf "$OUT/multirank.tar.gz" .
ls -la "$OUT"
