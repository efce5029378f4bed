#!/bin/sh
# One rank's hang reaches every rank without a shared dump directory.
#
# A 4-rank job on the simulator, each rank dumping into a directory of its
# own (as on node-local disks: the trigger file reaches nobody else); rank
# 2 stops outside NCCL before the all-reduce of step 5, so its own watchdog
# sees nothing.  The other ranks time out; the hang must reach rank 2 by
#   pmix:  Open MPI's mpirun starts the job; the PMIx event (FR_TRIGGER_PMIX)
#   store: a TCPStore test server (tests/store-server.py, PyTorch's wire
#          protocol) at MASTER_ADDR:MASTER_PORT; the key (FR_TRIGGER_STORE=1)
# Each time: every rank writes frame 0, rank 2's says it came by that
# mechanism from another rank with a latency, and fr-analyze over the four
# directories names rank 2 with its stack (job_stop_forever).
# And harmless when there is nothing to hang on ("clean"): a job without
# the fault, under mpirun, exits 0 and mpirun says nothing (a process that
# joined PMIx and left without PMIx_Finalize would be "exiting improperly");
# the same job with FR_TRIGGER_STORE=1 against a store that closes every
# connection exits 0, with one line on stderr about the store per rank.
#   trigger-relay.sh [pmix|store|clean]...   (default all; the mpirun parts
#                    are skipped, with a note, when mpirun is not installed)
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
which=${*:-pmix store clean}

cat > "$FR_TMP/job.scn" << 'EOF'
world 4
steps 12
allreduce world count=1024 dtype=float32 redop=sum
broadcast world count=1024 dtype=float32 root=0
fault rank=2 step=5 op=1 stop
EOF

rank_sh="$FR_SRCDIR/tests/relay-rank.sh"

# wait_dumps DIR: until every node directory holds a frame-0 dump (60 s)
wait_dumps() {
  i=0
  while [ $i -lt 600 ]; do
    n=0
    for r in 0 1 2 3; do ls "$1/node$r/"*-f0000.frz > /dev/null 2>&1 && n=$((n + 1)); done
    [ $n -eq 4 ] && return 0
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}

# stop_ranks DIR: kill the ranks (they hang by design)
stop_ranks() {
  for f in "$1"/rank-*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2> /dev/null; done
  return 0
}

# check_run MECHANISM DIR: the dumps and the verdict
check_run() {
  mech=$1 run=$2
  d2=$(ls "$run/node2/"*-f0000.frz)
  "$FR_DUMP" "$d2" > "$run/r2.txt" 2>&1 || fail "$mech: fr-dump $d2"
  grep -Eq "^trigger: +$mech by rank [013]:.*\\(it reached this rank [0-9.]+ ms after the trigger\\)" "$run/r2.txt" ||
    { head -n 12 "$run/r2.txt" >&2; fail "$mech: rank 2's frame 0 did not come by $mech from another rank"; }
  for r in 0 1 3; do
    [ -z "$(ls "$run/node2/" | grep -- "-r0000$r-")" ] || fail "$mech: rank $r wrote into rank 2's directory"
  done
  "$FR_ANALYZE" "$run/node0" "$run/node1" "$run/node2" "$run/node3" > "$run/verdict.txt" 2>&1
  [ $? -eq 1 ] || { cat "$run/verdict.txt" >&2; fail "$mech: fr-analyze over the four directories did not find the hang"; }
  grep -Eq "^  lagging rank: +2\\b|rank 2 never entered" "$run/verdict.txt" ||
    { cat "$run/verdict.txt" >&2; fail "$mech: the verdict does not name rank 2"; }
  mkdir -p "$FR_TMP/run" && cp "$run/verdict.txt" "$FR_TMP/run/verdict.txt"
  check_stack "$mech" 2 job_stop_forever
  latency=$(sed -n 's/.*(it reached this rank \([0-9.]*\) ms after the trigger).*/\1/p' "$run/r2.txt")
  echo "$mech: rank 2 dumped, $latency ms after the first rank's trigger; the verdict names it"
}

common_env() {
  export RUN="$1" WORLD=4 SCN="${SCN:-$FR_TMP/job.scn}" FR_SIM_LIBDIR FR_PRELOAD FR_JOB FR_TIMEOUT_SEC=2 FR_POLL_MS=20 FR_JOB_ID=relay \
    FR_SIM_BOOTSTRAP_DIR="$1/bootstrap"
  mkdir -p "$1/bootstrap"
}

for mech in $which; do
  case $mech in
  pmix)
    if ! command -v mpirun > /dev/null 2>&1; then
      echo "note: pmix: mpirun not installed (scripts/setup.sh installs Open MPI); not run"
      continue
    fi
    run="$FR_TMP/pmix"
    mkdir -p "$run"
    ( common_env "$run"
      export FR_TRIGGER_STORE=0
      exec timeout -s KILL 120 mpirun --allow-run-as-root --oversubscribe -n 4 \
        -x RUN -x WORLD -x SCN -x FR_SIM_LIBDIR -x FR_PRELOAD -x FR_JOB -x FR_TIMEOUT_SEC -x FR_POLL_MS -x FR_JOB_ID \
        -x FR_SIM_BOOTSTRAP_DIR -x FR_TRIGGER_STORE ${TSAN_OPTIONS:+-x TSAN_OPTIONS} \
        ${ASAN_OPTIONS:+-x ASAN_OPTIONS} "$rank_sh" ) > "$run/mpirun.log" 2>&1 &
    mpid=$!
    ok=0
    wait_dumps "$run" && ok=1
    stop_ranks "$run"
    kill -9 $mpid 2> /dev/null
    wait $mpid 2> /dev/null
    [ $ok -eq 1 ] || { tail -n 20 "$run/mpirun.log" "$run"/rank-*.log >&2; ls -R "$run" >&2; fail "pmix: not every rank dumped"; }
    check_run pmix "$run"
    ;;
  store)
    run="$FR_TMP/store"
    mkdir -p "$run"
    python3 "$FR_SRCDIR/tests/store-server.py" --port-file "$run/port" > "$run/server.log" 2>&1 &
    spid=$!
    i=0
    while [ ! -s "$run/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    [ -s "$run/port" ] || { kill $spid; fail "store: the test server did not start"; }
    pids=""
    for r in 0 1 2 3; do
      ( common_env "$run"
        export RANK=$r FR_TRIGGER_STORE=1 FR_TRIGGER_PMIX=0 MASTER_ADDR=127.0.0.1 MASTER_PORT="$(cat "$run/port")"
        exec timeout -s KILL 120 "$rank_sh" ) &
      pids="$pids $!"
    done
    ok=0
    wait_dumps "$run" && ok=1
    stop_ranks "$run"
    for p in $pids; do wait "$p" 2> /dev/null; done
    kill $spid 2> /dev/null
    wait $spid 2> /dev/null
    [ $ok -eq 1 ] || { cat "$run"/rank-*.log "$run/server.log" >&2; fail "store: not every rank dumped"; }
    grep -q "SET /flightrec/trigger/relay" "$run/server.log" || fail "store: no rank set the key"
    check_run store "$run"
    ;;
  clean)
    run="$FR_TMP/clean"
    mkdir -p "$run"
    grep -v '^fault' "$FR_TMP/job.scn" > "$FR_TMP/clean.scn"
    if command -v mpirun > /dev/null 2>&1; then
      ( common_env "$run"
        exec timeout -s KILL 120 mpirun --allow-run-as-root --oversubscribe -n 4 -x RUN -x WORLD -x FR_SIM_LIBDIR \
          -x FR_PRELOAD -x FR_JOB -x FR_JOB_ID -x FR_SIM_BOOTSTRAP_DIR -x SCN="$FR_TMP/clean.scn" \
          ${TSAN_OPTIONS:+-x TSAN_OPTIONS} ${ASAN_OPTIONS:+-x ASAN_OPTIONS} "$rank_sh" ) > "$run/mpirun.log" 2>&1
      st=$?
      ! grep -q 'FR_TRIGGER_PMIX' "$run"/rank-*.log || [ -n "$(grep -l 'ORTE' "$run"/rank-*.log)" ] ||
        { cat "$run"/rank-*.log >&2; fail "clean: a rank could not use PMIx"; }
      [ $st -eq 0 ] && [ ! -s "$run/mpirun.log" ] ||
        { cat "$run/mpirun.log" "$run"/rank-*.log >&2; fail "clean: the job under mpirun exited $st or mpirun complained"; }
      echo "clean: a job without a hang under mpirun exits 0, mpirun silent"
    fi
    run="$FR_TMP/clean-store" # a bootstrap directory of its own
    mkdir -p "$run"
    python3 "$FR_SRCDIR/tests/store-server.py" --refuse --port-file "$run/port" > "$run/server.log" 2>&1 &
    spid=$!
    i=0
    while [ ! -s "$run/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    pids=""
    for r in 0 1 2 3; do
      ( common_env "$run"
        export RANK=$r FR_TRIGGER_STORE=1 FR_TRIGGER_PMIX=0 MASTER_ADDR=127.0.0.1 \
          MASTER_PORT="$(cat "$run/port")" SCN="$FR_TMP/clean.scn"
        exec timeout -s KILL 120 "$rank_sh" ) &
      pids="$pids $!"
    done
    st=0
    for p in $pids; do wait "$p" || st=1; done
    kill $spid 2> /dev/null
    wait $spid 2> /dev/null
    [ $st -eq 0 ] || { cat "$run"/rank-*.log >&2; fail "clean: a rank failed against a refusing store"; }
    said=0
    for r in 0 1 2 3; do
      n=$(grep -c 'FR_TRIGGER_STORE' "$run/rank-$r.log")
      [ "$n" -le 1 ] || { cat "$run/rank-$r.log" >&2; fail "clean: rank $r said $n lines about the store"; }
      said=$((said + n))
    done
    [ $said -ge 1 ] || fail "clean: no rank noticed that the store refuses it"
    echo "clean: a refusing store: every rank exits 0, at most one line each"
    ;;
  *) fail "unknown mechanism $mech" ;;
  esac
done
