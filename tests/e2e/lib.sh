# Shared helpers of the end-to-end tests (sourced; tests/testenv.sh already
# exported the FR_* paths).
set -u

# A scratch directory removed at exit (kept with FR_KEEP=1 for debugging).
fr_tmpdir() {
  FR_TMP=$(mktemp -d "${TMPDIR:-/tmp}/fr-e2e.XXXXXX")
  if [ "${FR_KEEP:-0}" = 1 ]; then echo "keeping $FR_TMP" >&2; else trap 'rm -rf "$FR_TMP"' EXIT; fi
}

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# expect_exit WANT CMD...: run CMD, fail unless it exits with WANT.
expect_exit() {
  want=$1; shift
  "$@"; got=$?
  [ "$got" -eq "$want" ] || fail "$* exited $got, expected $want"
}

# run_case SCENARIO-NAME: run tests/scenarios/NAME.scn live and compare the
# analysis with NAME.expected.json.  Leaves the run in $FR_TMP/run.
run_case() {
  name=$1
  scn="$FR_SRCDIR/tests/scenarios/$name.scn"
  exp="$FR_SRCDIR/tests/scenarios/$name.expected.json"
  [ -f "$scn" ] || fail "missing $scn"
  [ -f "$exp" ] || fail "missing $exp"
  tries=1
  # In a sanitizer build (several times slower, beside the other tests of
  # make -j2) a live job's timing can leave another run than the one its
  # scenario means (a watchdog's poll landing before a rank's abort
  # finished): the verdict that differs is shown, and the job run once more.
  case "${FR_SAN_CFLAGS:-}" in *sanitize=*) tries=2 ;; esac
  while :; do
    "$FR_RUN_SCENARIO" "$scn" "$FR_TMP/run" > "$FR_TMP/stdout" 2> "$FR_TMP/stderr" ||
      { cat "$FR_TMP/stderr" >&2; fail "run-scenario $name failed"; }
    "$FR_JSON_EXPECT" "$exp" "$FR_TMP/run/analysis.json" > "$FR_TMP/expect.out" 2>&1 && break
    cat "$FR_TMP/expect.out" >&2
    sed '/^$/,$d' "$FR_TMP/run/verdict-full.txt" >&2
    tries=$((tries - 1))
    [ "$tries" -gt 0 ] || fail "$name: analysis differs from $exp"
    echo "$name: analysis differs from $exp in a sanitizer build; once more" >&2
  done
  cat "$FR_TMP/stdout"
}

# each_case SCN...: run_case every scenario file given, require that no root
# cause waits in NCCL itself, then call the script's own `case_check NAME
# TEXT` (TEXT: the text verdict on one line) and say NAME is ok.
each_case() {
  for scn; do
    name=$(basename "$scn" .scn)
    run_case "$name" >/dev/null
    "$FR_JSON_EXPECT" --no-waiting-roots "$FR_TMP/run/analysis.json" || fail "$name: a root cause waits in NCCL"
    case_check "$name" "$(tr '\n' ' ' < "$FR_TMP/run/verdict-full.txt" | tr -s ' ')"
    echo "$name: ok"
  done
}

# check_hang_case NAME NRANKS: run_case, then every rank dumped frame 0, the
# text verdict leads with the hang and fr-analyze exits 1 (problem found).
check_hang_case() {
  run_case "$1"
  n=$(ls "$FR_TMP/run/dumps" | grep -c -- '-f0000\.frz$')
  [ "$n" -eq "$2" ] || fail "expected $2 frame-0 dumps, found $n"
  grep -q '^verdict: hang' "$FR_TMP/run/verdict-full.txt" || fail "text verdict does not start with the hang"
  expect_exit 1 "$FR_ANALYZE" "$FR_TMP/run/dumps" >/dev/null
  echo "$1: ok"
}

# check_stack NAME RANKS FUNC: after run_case, the text verdict shows the
# stack of RANKS (a rank set as fr-analyze writes it) with FUNC among its
# frames, and the stack classes give exactly those ranks a class that holds
# FUNC, which no other class holds.
check_stack() {
  v="$FR_TMP/run/verdict-full.txt"
  grep -Eq "^  stack of $2: +(.* <- )?$3( <- |\$)" "$v" ||
    { cat "$v" >&2; fail "$1: the verdict shows no stack of rank(s) $2 with $3"; }
  sed -n '/^stack classes:/,/^$/p' "$v" > "$FR_TMP/classes"
  grep -Eq "^  [0-9]+ ranks? \\($2\\): (.* <- )?$3( <- |\$)" "$FR_TMP/classes" ||
    { cat "$v" >&2; fail "$1: no stack class of exactly rank(s) $2 with $3"; }
  ! grep -Ev "^  [0-9]+ ranks? \\($2\\):" "$FR_TMP/classes" | grep -Eq "$3" ||
    fail "$1: $3 is in the stack class of other ranks too"
  echo "$1: stack of $2 in $3, a class of its own"
}

# tui_batch ARGS...: fr-tui --batch ARGS; true when it showed the screen
# (exit 0 nothing wrong, 1 a problem found), false on 2 (unusable input).
tui_batch() {
  "$FR_TUI" --batch "$@"
  [ $? -le 1 ]
}

# check_tui_first NAME TEXT...: after run_case, fr-tui's first screen of the
# run's dumps (batch, 120 x 30, no key pressed) shows every TEXT (fixed
# strings): the culprit is on it.
check_tui_first() {
  name=$1
  shift
  tui_batch --cols 120 --rows 30 "$FR_TMP/run/dumps" > "$FR_TMP/tui-first.out" ||
    fail "$name: fr-tui --batch failed"
  for t in "$@"; do
    grep -qF -- "$t" "$FR_TMP/tui-first.out" ||
      { cat "$FR_TMP/tui-first.out" >&2; fail "$name: fr-tui's first screen lacks '$t'"; }
  done
  echo "$name: fr-tui's first screen shows the culprit"
}

# relay_job_scn: the 4-rank job of the relay tests, rank 2 stopped outside
# NCCL before the all-reduce of step 5, on stdout
relay_job_scn() {
  printf '%s\n' 'world 4' 'steps 12' 'allreduce world count=1024 dtype=float32 redop=sum' \
    'broadcast world count=1024 dtype=float32 root=0' 'fault rank=2 step=5 op=1 stop'
}

# wait_dumps DIR: until every node directory DIR/node0..3 holds a frame-0
# dump (60 s); 1 when one does not
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

# fr_torch_python: a Python that imports torch.distributed (Debian's
# python3-torch, which scripts/setup.sh installs) into FR_TORCH_PY; returns
# 1 when there is none.  python3 first, then the system's /usr/bin/python3
# (a python3 of pyenv or a virtualenv first on PATH does not see Debian's).
fr_torch_python() {
  for FR_TORCH_PY in python3 /usr/bin/python3; do
    "$FR_TORCH_PY" -c 'import torch.distributed.run' > /dev/null 2>&1 && return 0
  done
  FR_TORCH_PY=""
  return 1
}

# skip_under_tsan WHAT: exit 77 (skipped) in a ThreadSanitizer build, whose
# signal interception delivers the stack signal late, from its own frames
# (a thread blocked in a system call answers only when the call returns):
# thread stacks sampled there say nothing about the program.
skip_under_tsan() {
  case "${FR_SAN_CFLAGS:-}" in
    *sanitize=thread*)
      echo "SKIP: $1: ThreadSanitizer defers and wraps the stack signal"
      exit 77 ;;
  esac
}

# make -j2 check runs two tests at once on two cores.  stacks-stress.sh
# loads the machine on purpose (busy threads, 300 dumps): beside it a
# scenario's time limit ran out before any rank dumped, and beside a
# scenario suite its own dump deadline did.  So it runs alone: every
# end-to-end test holds $FR_BUILDDIR/tests/.e2e.lock shared for its life,
# and a test that sets FR_E2E_LOCK=-x before sourcing this file holds it
# exclusively.  The lock is held by a flock(1) process of its own (not a
# child of the test's shell) that ends with that shell, so no rank or
# server the test leaves behind keeps it.  Without flock(1), nothing is locked.
fr_hold_lock() {
  command -v flock > /dev/null 2>&1 && [ -n "${FR_BUILDDIR:-}" ] && [ -d "$FR_BUILDDIR/tests" ] || return 0
  _ready=$(mktemp "${TMPDIR:-/tmp}/fr-lock.XXXXXX") || return 0
  # in a subshell of its own, so that it is no child of the test's shell:
  # a test's bare `wait` would wait for it
  ( flock -o "${FR_E2E_LOCK:--s}" "$FR_BUILDDIR/tests/.e2e.lock" \
      sh -c 'echo locked > "$1"; while kill -0 "$2" 2> /dev/null; do sleep 0.2; done' sh "$_ready" $$ \
      < /dev/null > /dev/null 2>&1 &
    echo $! > "$_ready.pid" )
  # until it holds the lock; a flock(1) that fails or dies: on without it
  while [ ! -s "$_ready" ] && kill -0 "$(cat "$_ready.pid" 2> /dev/null)" 2> /dev/null; do sleep 0.05; done
  rm -f "$_ready" "$_ready.pid"
}
fr_hold_lock
