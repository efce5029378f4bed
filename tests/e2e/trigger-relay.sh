#!/bin/sh
# One rank's hang reaches every rank without a shared dump directory.
#
# A 4-rank job on the simulator, each rank dumping into a directory of its
# own (as on node-local disks: the trigger file reaches nobody else); rank
# 2 stops outside NCCL before the all-reduce of step 5, so its own watchdog
# sees nothing.  The other ranks time out; the hang must reach rank 2 by
#   pmix:  Open MPI's mpirun starts the job; the PMIx event (FR_TRIGGER_PMIX)
#   store: a TCPStore at MASTER_ADDR:MASTER_PORT; the key (FR_TRIGGER_STORE=1),
#          three times: the test server (tests/store-server.py) speaking the
#          current protocol (VALIDATE first), the same speaking the older
#          numbering, and a real PyTorch TCPStore (tests/torch-store.py;
#          Debian's python3-torch, 1.13: the older numbering).  The servers
#          are not upset: the current one closes no connection, the older
#          one closes one per rank at its greeting (as the real one does)
#          and takes nothing else amiss, the real one says nothing
# Each time: every rank writes frame 0, rank 2's says it came by that
# mechanism from another rank with a latency, the store's key is set once
# (the first rank's line stays), and fr-analyze over the four directories
# names rank 2 with its stack (job_stop_forever).
# The ways fail well:
#   recover: rank 2 only sleeps 4 s, rank 3 comes 1 s late: one episode per
#            rank (frame 0, frames, the recovery frame), none started again
#            after the recovery by a line of the same hang that came during
#            the episode (rank 3's) (store; pmix too)
#   preset:  the store holds a line dated an hour ahead before the job
#            starts: no rank takes it, and rank 2 still dumps the real hang
#   slow:    under mpirun, FR_TRIGGER_STORE=1 with a store that answers one
#            byte every 1.9 s: the PMIx event still reaches rank 2
#   clean:   a job without the fault, under mpirun, exits 0 and mpirun says
#            nothing (a process that joined PMIx and left without
#            PMIx_Finalize would be "exiting improperly"); the same job with
#            FR_TRIGGER_STORE=1 against a store that closes every
#            connection, and against one that never answers, exits 0, one
#            line on stderr about the store per rank, and the ranks stop
#            knocking (a server we do not understand is left alone)
#   trigger-relay.sh [pmix|store|recover|preset|slow|clean]...   (default
#            all, in a sanitizer build pmix, store and clean; the mpirun
#            parts are skipped, with a note, when mpirun is not installed)
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
# In a sanitizer build only the main ways and the clean runs: the failure
# cases are timing-heavy 4-rank jobs, and the suite runs two tests at once
# on two cores (a timing-sensitive neighbour flaked beside them)
case "${FR_SAN_CFLAGS:-}" in
  *sanitize=*) which=${*:-pmix store clean} ;;
  *) which=${*:-pmix store recover preset slow clean} ;;
esac
have_mpirun=0
command -v mpirun > /dev/null 2>&1 && have_mpirun=1

relay_job_scn > "$FR_TMP/job.scn"
# recover: rank 2 sleeps 4 s; rank 3 enters 1 s late, so it times out (and
# sends its line) during the others' episode
{ sed 's/ stop$/ sleep=4000/' "$FR_TMP/job.scn"; echo "fault rank=3 step=5 op=1 sleep=1000"; } > "$FR_TMP/recover.scn"
grep -v '^fault' "$FR_TMP/job.scn" > "$FR_TMP/clean.scn"
rank_sh="$FR_SRCDIR/tests/relay-rank.sh"

# stop_ranks DIR: kill the ranks (they hang by design)
stop_ranks() {
  for f in "$1"/rank-*.pid; do [ -f "$f" ] && kill -9 "$(cat "$f")" 2> /dev/null; done
  return 0
}

# start_store DIR [ARGS]: the test store, its pid in $spid, port in DIR/port
start_store() {
  d=$1
  shift
  python3 "$FR_SRCDIR/tests/store-server.py" --port-file "$d/port" "$@" > "$d/server.log" 2>&1 &
  spid=$!
  i=0
  while [ ! -s "$d/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
  [ -s "$d/port" ] || { kill $spid; fail "the test store did not start"; }
}
stop_store() { kill $spid 2> /dev/null; wait $spid 2> /dev/null; }

# start_torch_store DIR: a real PyTorch TCPStore instead ($spid, DIR/port)
start_torch_store() {
  "$FR_TORCH_PY" "$FR_SRCDIR/tests/torch-store.py" serve --port-file "$1/port" > "$1/server.log" 2>&1 &
  spid=$!
  i=0
  while [ ! -s "$1/port" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
  [ -s "$1/port" ] || { kill $spid; cat "$1/server.log" >&2; fail "the PyTorch TCPStore did not start"; }
}

# clean_against WHAT SCENARIO SERVER-OPTION: the job without a hang, with
# FR_TRIGGER_STORE=1, against the test server started with that option in
# $run; every rank must exit 0
clean_against() {
  mkdir -p "$run"
  start_store "$run" "$3"
  ( export FR_TRIGGER_STORE=1 FR_TRIGGER_PMIX=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(cat "$run/port")
    launch_ranks "$run" "$2"
    st=0
    for p in $lpids; do wait "$p" || st=1; done
    exit $st ) || { cat "$run"/rank-*.log >&2; fail "clean: a rank failed against a $1 store"; }
  stop_store
}

# store_run SERVER: the hanging job relayed by the store; SERVER validate or
# older (the test server speaking that protocol) or torch (PyTorch's own)
store_run() {
  run="$FR_TMP/store-$1"
  mkdir -p "$run"
  closed="nothing it said"
  case $1 in
  torch) start_torch_store "$run" ;;
  *) start_store "$run" --protocol "$1" ;;
  esac
  port=$(cat "$run/port")
  FR_TRIGGER_STORE=1 FR_TRIGGER_PMIX=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
    hang_run store "$run" launch_ranks
  ! grep -h 'FR_TRIGGER_STORE' "$run"/rank-*.log || fail "store ($1): a rank complained about the store"
  case $1 in
  torch)
    "$FR_TORCH_PY" "$FR_SRCDIR/tests/torch-store.py" get --port "$port" flightrec/trigger/relay > "$run/key.txt" ||
      fail "store (torch): the key flightrec/trigger/relay is not in PyTorch's store"
    stop_store
    # the key holds the line of the rank that rank 2 was told of
    from=$(sed -n 's/^trigger: *store by rank \([0-9]*\):.*/\1/p' "$run/r2.txt")
    grep -Eq "^flightrec-trigger v1 rank=$from " "$run/key.txt" ||
      { cat "$run/key.txt" "$run/r2.txt" >&2; fail "store (torch): the key is not the line rank 2 took"; }
    [ ! -s "$run/server.log" ] || { cat "$run/server.log" >&2; fail "store (torch): PyTorch's store said something"; }
    ;;
  *)
    stop_store
    grep -Eq "^COMPARE_SET /flightrec/trigger/relay .* \\(set\\)$" "$run/server.log" || fail "store ($1): no rank set the key"
    [ "$(grep -c ' (set)$' "$run/server.log")" -eq 1 ] ||
      { cat "$run/server.log" >&2; fail "store ($1): the key was set more than once for one hang"; }
    closed=$(grep '^closed: ' "$run/server.log" | sort | uniq -c | sed 's/^ *//')
    case $1 in
    validate) want="" ;;
    older) want="4 closed: key or value length 506381210764048334" ;; # 0x070707073C85F7CE: the greeting
    esac
    [ "$closed" = "$want" ] ||
      { cat "$run/server.log" >&2; fail "store ($1): the server closed '$closed', expected '$want'"; }
    ;;
  esac
  echo "store ($1): the key reached rank 2; the server closed: ${closed:-no connection}"
}

# The environment of every rank: RUN, the scenario, the recorder
RANK_VARS="RUN WORLD SCN FR_SIM_LIBDIR FR_PRELOAD FR_JOB FR_TIMEOUT_SEC FR_POLL_MS FR_JOB_ID FR_SIM_BOOTSTRAP_DIR
  FR_TRIGGER_STORE FR_TRIGGER_PMIX FR_FRAME_INTERVAL_SEC FR_MAX_FRAMES MASTER_ADDR MASTER_PORT TSAN_OPTIONS ASAN_OPTIONS"
common_env() { # DIR SCENARIO
  export RUN="$1" WORLD=4 SCN="$2" FR_SIM_LIBDIR FR_PRELOAD FR_JOB FR_TIMEOUT_SEC=2 FR_POLL_MS=20 \
    FR_JOB_ID=relay FR_SIM_BOOTSTRAP_DIR="$1/bootstrap" FR_FRAME_INTERVAL_SEC=${FR_FRAME_INTERVAL_SEC:-10} FR_MAX_FRAMES=3 \
    FR_TRIGGER_STORE=${FR_TRIGGER_STORE:-0} FR_TRIGGER_PMIX=${FR_TRIGGER_PMIX:-1} MASTER_ADDR=${MASTER_ADDR:-} \
    MASTER_PORT=${MASTER_PORT:-}
  mkdir -p "$1/bootstrap"
}

# launch_mpi DIR SCENARIO: under mpirun, in the background ($lpid)
launch_mpi() {
  ( common_env "$1" "$2"
    xs=""
    for v in $RANK_VARS; do eval "[ -n \"\${$v+x}\" ]" && xs="$xs -x $v"; done
    exec timeout -s KILL 120 mpirun --allow-run-as-root --oversubscribe -n 4 $xs "$rank_sh" ) \
    > "$1/mpirun.log" 2>&1 &
  lpid=$!
}

# launch_ranks DIR SCENARIO: four ranks started by hand, in the background ($lpids)
launch_ranks() {
  lpids=""
  for r in 0 1 2 3; do
    ( common_env "$1" "$2"
      export RANK=$r
      exec timeout -s KILL 120 "$rank_sh" ) &
    lpids="$lpids $!"
  done
}

# finish DIR: kill what is left of the job's processes and wait for them
finish() {
  stop_ranks "$1"
  for p in ${lpid:-} ${lpids:-}; do kill -9 "$p" 2> /dev/null; wait "$p" 2> /dev/null; done
  lpid="" lpids=""
}

# check_run MECHANISM DIR: the dumps and the verdict
check_run() {
  mech=$1 run=$2
  d2=$(ls "$run/node2/"*-f0000.frz)
  "$FR_DUMP" "$d2" > "$run/r2.txt" 2>&1 || fail "$mech: fr-dump $d2"
  grep -Eq "^trigger: +$mech by rank [013]:.*\\(it took [0-9.]+ ms to reach this rank\\)" "$run/r2.txt" ||
    { head -n 12 "$run/r2.txt" >&2; fail "$mech: rank 2's frame 0 did not come by $mech from another rank"; }
  for r in 0 1 3; do
    [ -z "$(ls "$run/node2/" | grep -- "-r0000$r-")" ] || fail "$mech: rank $r wrote into rank 2's directory"
  done
  "$FR_ANALYZE" "$run/node0" "$run/node1" "$run/node2" "$run/node3" > "$run/verdict-full.txt" 2>&1
  [ $? -eq 1 ] || { cat "$run/verdict-full.txt" >&2; fail "$mech: fr-analyze over the four directories did not find the hang"; }
  grep -Eq "^  lagging rank: +2\\b|rank 2 never entered" "$run/verdict-full.txt" ||
    { cat "$run/verdict-full.txt" >&2; fail "$mech: the verdict does not name rank 2"; }
  mkdir -p "$FR_TMP/run" && cp "$run/verdict-full.txt" "$FR_TMP/run/verdict-full.txt"
  check_stack "$mech" 2 job_stop_forever
  latency=$(sed -n 's/.*(it took \([0-9.]*\) ms to reach this rank).*/\1/p' "$run/r2.txt")
  echo "$mech: rank 2 dumped, $latency ms after the first rank's trigger; the verdict names it"
}

# hang_run MECHANISM DIR LAUNCHER: run the hanging job, check it
hang_run() {
  $3 "$2" "$FR_TMP/job.scn"
  ok=0
  wait_dumps "$2" && ok=1
  finish "$2"
  [ $ok -eq 1 ] || { tail -n 20 "$2"/*.log >&2; fail "$1: not every rank dumped"; }
  check_run "$1" "$2"
}

# episodes DIR: per rank, its dumps' triggers other than frame and recovery
episodes() {
  for r in 0 1 2 3; do
    printf 'rank %s:' $r
    for f in "$1/node$r/"*.frz; do
      [ -f "$f" ] || continue
      t=$("$FR_DUMP" "$f" | sed -n 's/^trigger: *\([a-z_]*\).*/\1/p')
      case $t in frame|recovery) ;; *) printf ' %s' "$t" ;; esac
    done
    echo
  done
}

# recover_run MECHANISM DIR LAUNCHER: the hang resolves; one episode each
recover_run() {
  mkdir -p "$2"
  FR_FRAME_INTERVAL_SEC=1 $3 "$2" "$FR_TMP/recover.scn"
  i=0
  while [ $i -lt 600 ]; do # the job ends by itself: until then, at most 60 s
    alive=0
    for p in ${lpid:-} ${lpids:-}; do kill -0 "$p" 2> /dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
    i=$((i + 1))
  done
  finish "$2"
  episodes "$2" > "$2/episodes.txt"
  grep -Eq "^rank 2: $1\$" "$2/episodes.txt" ||
    { cat "$2/episodes.txt" >&2; fail "recover: rank 2's one episode did not come by $1"; }
  ! grep -Ev "^rank [0-9]: [a-z_]+\$" "$2/episodes.txt" ||
    { cat "$2/episodes.txt" >&2; fail "recover ($1): a rank dumped one resolved hang as more than one episode"; }
  echo "recover ($1): one episode per rank: $(tr '\n' ' ' < "$2/episodes.txt")"
}

for mech in $which; do
  run="$FR_TMP/$mech"
  mkdir -p "$run"
  case $mech in
  pmix)
    [ $have_mpirun = 1 ] || { echo "note: pmix: mpirun not installed (scripts/setup.sh installs Open MPI); not run"; continue; }
    hang_run pmix "$run" launch_mpi
    ;;
  store)
    store_run validate
    store_run older
    if fr_torch_python; then
      store_run torch
    else
      echo "note: store: no Python with PyTorch (scripts/setup.sh installs python3-torch); not run against PyTorch's TCPStore"
    fi
    ;;
  recover)
    start_store "$run"
    FR_TRIGGER_STORE=1 FR_TRIGGER_PMIX=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(cat "$run/port") \
      recover_run store "$run/store" launch_ranks
    stop_store
    [ $have_mpirun = 1 ] && recover_run pmix "$run/pmix" launch_mpi
    ;;
  preset)
    ahead=$(( $(date +%s) + 3600 ))000000000
    start_store "$run" --preset "/flightrec/trigger/relay=flightrec-trigger v1 rank=1 time_ns=$ahead reason=clock ahead"
    FR_TRIGGER_STORE=1 FR_TRIGGER_PMIX=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(cat "$run/port") \
      hang_run store "$run" launch_ranks
    stop_store
    ! grep -l "clock ahead" "$run"/node*/*.frz > /dev/null 2>&1 || fail "preset: a rank took a line dated an hour ahead"
    echo "preset: a line dated an hour ahead is not taken; the real hang still reaches rank 2"
    ;;
  slow)
    [ $have_mpirun = 1 ] || { echo "note: slow: mpirun not installed; not run"; continue; }
    start_store "$run" --dribble
    FR_TRIGGER_STORE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(cat "$run/port") hang_run pmix "$run" launch_mpi
    stop_store
    echo "slow: a store that answers a byte every 1.9 s does not hold up the PMIx event"
    ;;
  clean)
    if [ $have_mpirun = 1 ]; then
      FR_TRIGGER_STORE=0 launch_mpi "$run" "$FR_TMP/clean.scn"
      wait $lpid
      st=$?
      lpid=""
      ! grep -q 'FR_TRIGGER_PMIX' "$run"/rank-*.log ||
        { cat "$run"/rank-*.log >&2; fail "clean: a rank said something about PMIx in a healthy job"; }
      [ $st -eq 0 ] && [ ! -s "$run/mpirun.log" ] ||
        { cat "$run/mpirun.log" "$run"/rank-*.log >&2; fail "clean: the job under mpirun exited $st or mpirun complained"; }
      echo "clean: a job without a hang under mpirun exits 0, nothing said"
    fi
    run="$FR_TMP/clean-store" # a bootstrap directory of its own
    clean_against refusing "$FR_TMP/clean.scn" --refuse
    said=0
    for r in 0 1 2 3; do
      n=$(grep -c 'FR_TRIGGER_STORE' "$run/rank-$r.log")
      [ "$n" -le 1 ] || { cat "$run/rank-$r.log" >&2; fail "clean: rank $r said $n lines about the store"; }
      said=$((said + n))
    done
    [ $said -ge 1 ] || fail "clean: no rank noticed that the store refuses it"
    echo "clean: a refusing store: every rank exits 0, at most one line each"
    # A server that never answers: every rank sleeps 11 s at its first
    # step, time for 3 greetings (2 s each, 1 s and 2 s apart); then each
    # says one line and knocks no more
    run="$FR_TMP/clean-mute"
    { cat "$FR_TMP/clean.scn"; for r in 0 1 2 3; do echo "fault rank=$r step=1 op=1 sleep=11000"; done; } > "$FR_TMP/mute.scn"
    clean_against mute "$FR_TMP/mute.scn" --mute
    for r in 0 1 2 3; do
      grep 'FR_TRIGGER_STORE' "$run/rank-$r.log" > "$run/said-$r.txt"
      [ "$(wc -l < "$run/said-$r.txt")" -eq 1 ] && grep -q 'did not answer a TCPStore greeting 3 times' "$run/said-$r.txt" ||
        { cat "$run/rank-$r.log" >&2; fail "clean: rank $r did not say one line about the mute server"; }
    done
    n=$(grep -c '^connection$' "$run/server.log")
    [ "$n" -eq 12 ] || { cat "$run/server.log" >&2; fail "clean: the mute server saw $n connections, not 3 per rank"; }
    echo "clean: a server that never answers: 3 greetings per rank, then one line each and no more"
    ;;
  *) fail "unknown mechanism $mech" ;;
  esac
done
