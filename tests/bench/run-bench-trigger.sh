#!/bin/bash
# run-bench-trigger.sh — part of `make bench`: how long one rank's hang
# takes to reach every rank, for each way it can travel (librecorder(7),
# "How a hang reaches every rank"):
#   file   one dump directory every rank sees (DIR/TRIGGER, polled once a second)
#   pmix   a directory per rank; Open MPI's mpirun, the PMIx event
#   store  a directory per rank; a TCPStore (tests/store-server.py), polled
#          every FR_TRIGGER_STORE_POLL_MS (1000)
# An 8-rank job on the simulator; rank 5 stops outside NCCL before step 5's
# all-reduce, the others time out (FR_TIMEOUT_SEC=2).  The figure: from the
# first rank's trigger (its own timeout, wall clock) to the last frame-0
# dump's rename (the file's mtime), the median of FR_BENCH_TRIGGER_REPS runs
# (default 3).  Same host, so the wall clocks agree.
set -u
: "${FR_BUILDDIR:?run through make bench}"
reps=${FR_BENCH_TRIGGER_REPS:-3}
nranks=8
out="$FR_BUILDDIR/bench-out/trigger"
fail() { echo "run-bench-trigger: $*" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out" || fail "cannot make $out"
cat > "$out/job.scn" << 'EOF'
world 8
steps 12
allreduce world count=1024 dtype=float32 redop=sum
broadcast world count=1024 dtype=float32 root=0
fault rank=5 step=5 op=1 stop
EOF
rank_sh="$FR_SRCDIR/tests/relay-rank.sh"
export WORLD=$nranks SCN="$out/job.scn" FR_SIM_LIBDIR FR_PRELOAD FR_JOB FR_TIMEOUT_SEC=2 FR_POLL_MS=20 FR_JOB_ID=bench

# frame-0 dumps of a run
frames() { find "$1" -name '*-f0000.frz' 2> /dev/null; }
wait_dumps() {
  for _ in $(seq 600); do [ "$(frames "$1" | wc -l)" -ge $nranks ] && return 0; sleep 0.1; done
  return 1
}
stop_ranks() { for f in "$1"/rank-*.pid; do kill -9 "$(cat "$f")" 2> /dev/null; done; return 0; }

# ms from the first timeout (wall clock) to the last frame-0 rename
spread() {
  frames "$1" | while read -r f; do
    "$FR_DUMP" --json "$f" | python3 -c '
import json, os, sys
p = json.load(sys.stdin)["process"]
t = p["anchor_realtime_ns"] - p["anchor_monotonic_ns"] + p["trigger_time_ns"]
print(p["trigger"], t, os.stat(sys.argv[1]).st_mtime_ns)' "$f"
  done | awk '$1 == "timeout" && (first == "" || $2 < first) { first = $2 }
              $3 > last { last = $3 }
              END { if (first == "") exit 1; printf "%.1f\n", (last - first) / 1e6 }'
}

run_once() { # MECH RUNDIR
  local mech=$1 run=$2 pids="" spid=""
  mkdir -p "$run/bootstrap"
  export RUN="$run" FR_SIM_BOOTSTRAP_DIR="$run/bootstrap"
  case $mech in
  file)
    for r in $(seq 0 $((nranks - 1))); do
      RANK=$r SHARED=1 FR_TRIGGER_PMIX=0 timeout -s KILL 60 "$rank_sh" & pids="$pids $!"
    done ;;
  pmix)
    FR_TRIGGER_STORE=0 timeout -s KILL 60 mpirun --allow-run-as-root --oversubscribe -n $nranks -x RUN -x WORLD -x SCN \
      -x FR_SIM_LIBDIR -x FR_PRELOAD -x FR_JOB -x FR_TIMEOUT_SEC -x FR_POLL_MS -x FR_JOB_ID \
      -x FR_SIM_BOOTSTRAP_DIR -x FR_TRIGGER_STORE "$rank_sh" > "$run/mpirun.log" 2>&1 &
    pids=$! ;;
  store)
    python3 "$FR_SRCDIR/tests/store-server.py" --port-file "$run/port" > "$run/server.log" 2>&1 &
    spid=$!
    for _ in $(seq 100); do [ -s "$run/port" ] && break; sleep 0.1; done
    for r in $(seq 0 $((nranks - 1))); do
      RANK=$r FR_TRIGGER_STORE=1 FR_TRIGGER_PMIX=0 MASTER_ADDR=127.0.0.1 MASTER_PORT="$(cat "$run/port")" \
        timeout -s KILL 60 "$rank_sh" & pids="$pids $!"
    done ;;
  esac
  local ok=0
  wait_dumps "$run" && ok=1
  stop_ranks "$run"
  for p in $pids; do kill -9 "$p" 2> /dev/null; wait "$p" 2> /dev/null; done
  [ -n "$spid" ] && { kill "$spid"; wait "$spid" 2> /dev/null; }
  [ $ok -eq 1 ] || return 1
  spread "$run"
}

mechs="file store"
if command -v mpirun > /dev/null 2>&1; then mechs="file pmix store"; else
  echo "run-bench-trigger: mpirun not installed: no pmix row" >&2; fi
echo "run-bench-trigger: $reps runs of an $nranks-rank hang per mechanism ..." >&2
echo
echo "How long a hang takes to reach every rank ($nranks ranks, one stopped outside NCCL; median of $reps)"
printf '%-52s %10s %10s %10s   %s\n' "mechanism" "median ms" "min ms" "max ms" "expected"
for m in $mechs; do
  vals=""
  for i in $(seq "$reps"); do
    v=$(run_once "$m" "$out/$m-$i") || fail "$m: run $i: not every rank dumped (see $out/$m-$i)"
    vals="$vals $v"
  done
  read -r med min max < <(tr ' ' '\n' <<< "$vals" | grep . | sort -n |
    awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)], a[1], a[NR] }')
  case $m in
    file) what="shared directory, DIR/TRIGGER" exp="<= 1000 + a dump" ;;
    pmix) what="a directory per rank, PMIx event (mpirun)" exp="a few ms + a dump" ;;
    store) what="a directory per rank, TCPStore key" exp="<= 1000 + a dump" ;;
  esac
  printf '%-52s %10s %10s %10s   %s\n' "$what" "$med" "$min" "$max" "$exp"
done
