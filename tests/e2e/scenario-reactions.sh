#!/bin/bash
# How jobs react to a hang (tests/scenarios/README.md, "The watchdog"): the
# job setting `watchdog MS [abort|destroy|none] [then=exit|crash|stay]
# [dump[=MS]] [ranks=SEL]` and the fault action `async-error[=N]`, checked on
# fr-dump's output of live runs, never on fr-analyze's verdict:
#  - every misuse is a FILE:LINE error (exit 2) before any rank starts;
#  - r-watchdog-abort: rank 2 stops before a world all-reduce; the others'
#    watchdog (500 ms) names the all-reduce, aborts half then world and
#    exits 1; every rank leaves a dump, the others' show both CommAborts;
#  - r-watchdog-destroy: the same with ncclCommDestroy, which blocks for
#    good behind the hung all-reduce (killed, in pncclCommDestroy);
#  - r-watchdog-stay: the same with then=stay: the ranks go on without the
#    comms (their later ops skipped), exit 0, and the abort's dump lands;
#  - r-async-error-crash: one rank's comm reports ncclRemoteError; its
#    watchdog aborts at its first poll and raises SIGABRT, the others time
#    out; without a watchdog, the next call on that comm fails at once.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir

# Refused scenarios, one a line: LINE#MESSAGE#SCENARIO (its lines separated
# by ';'): fr-scenario-job exits 2 with "FILE:LINE: MESSAGE"
nbad=0
while IFS='#' read -r want msg text; do
  nbad=$((nbad + 1))
  case_file="$FR_TMP/refused$nbad.scn"
  echo "$text" | tr ';' '\n' > "$case_file"
  if "$FR_JOB" --print-world "$case_file" > /dev/null 2> "$FR_TMP/refused.err"; then
    fail "refused$nbad.scn was accepted ($msg)"
  elif [ $? -ne 2 ] || ! grep -qxF "$case_file:$want: $msg" "$FR_TMP/refused.err"; then
    cat "$FR_TMP/refused.err" >&2
    fail "refused$nbad.scn: expected exit 2 and '$case_file:$want: $msg'"
  fi
done <<'EOF'
2#usage: watchdog MS [abort|destroy|none] [then=exit|crash|stay] [dump[=MS]] [ranks=SEL]#world 4;watchdog
2#usage: watchdog MS [abort|destroy|none] [then=exit|crash|stay] [dump[=MS]] [ranks=SEL]#world 4;watchdog then=exit
1#'world N' must come before 'watchdog'#watchdog 500;world 4
2#watchdog: '0' is not an integer in [1, 3600000]#world 4;watchdog 0
2#watchdog: '5s' is not an integer in [1, 3600000]#world 4;watchdog 5s
2#watchdog: 'abort' and 'destroy' both given#world 4;watchdog 500 abort destroy
2#watchdog: 'none' and 'none' both given#world 4;watchdog 500 none none
2#then=later: expected then=exit, then=crash or then=stay#world 4;watchdog 500 then=later
2#watchdog: unexpected 'kill' (abort, destroy, none, then=, dump, ranks=)#world 4;watchdog 500 kill
2#watchdog: unknown setting 'every' (then, dump, ranks)#world 4;watchdog 500 every=2
2#dump: '-1' is not an integer in [0, 3600000]#world 4;watchdog 500 dump=-1
2#ranks: '4' is not an integer in [0, 3]#world 4;watchdog 500 ranks=4
2#watchdog: 'none' with then=stay does nothing (the rank keeps its hung comms); use abort or destroy#world 4;watchdog 500 none then=stay
3#watchdog: rank 1 already has one (line 2)#world 4;watchdog 500 ranks=0-1;watchdog 900 ranks=odd
3#watchdog: rank 0 already has one (line 2)#world 4;watchdog 500;watchdog 900 destroy ranks=0
3#async-error: '7' is not an integer in [1, 6]#world 2;allreduce id=a;fault rank=0 step=1 op=a async-error=7
3#async-error: '0' is not an integer in [1, 6]#world 2;allreduce id=a;fault rank=0 step=1 op=a async-error=0
3#async-error: 'remote' is not an integer in [1, 6]#world 2;allreduce id=a;fault rank=0 step=1 op=a async-error=remote
3#op 1 (line 2) is 'sync': async-error needs a collective or p2p op#world 2;sync id=s;fault rank=0 step=1 op=s async-error
4#op 1 (line 3) is 'abort': async-error needs a collective or p2p op#world 2;comm a init;abort a id=x;fault rank=0 step=1 op=x async-error=2
EOF
good="$FR_TMP/good.scn"
printf '%s\n' 'world 4' 'watchdog 500 destroy then=crash dump=100 ranks=odd' 'watchdog 20 none ranks=0' \
  'watchdog 7 abort then=stay dump ranks=2' 'allreduce id=a' 'fault rank=1 step=1 op=a async-error=2' \
  'fault rank=3 step=1 op=a async-error sleep=5' > "$good"
[ "$("$FR_JOB" --print-world "$good")" = 4 ] || fail "good.scn: a valid use of watchdog and async-error refused"
echo "parse errors: $nbad refused with FILE:LINE; every form accepted"

# facts DUMP: "trigger T", "comm NRANKS [FLAGS]" per comm, and "OP NRANKS
# STATE RESULT" per record (NRANKS of its comm), from fr-dump --json
facts() {
  "$FR_DUMP" --json "$1" > "$FR_TMP/dump.json" || fail "fr-dump --json $1"
  tr -d '\t",' < "$FR_TMP/dump.json" | awk -F: '
    $1 == "trigger" { print "trigger", $2 }
    $1 == "comms" { sec = "c" } $1 == "records" { sec = "r" } $1 == "proxy" { sec = "" }
    $1 == "comm_id" { id = $2 }
    sec == "c" && $1 == "nranks" { n[id] = $2 }
    sec == "c" && $1 == "flags" { print "comm", n[id], $2 }
    sec == "r" && $1 == "op" { op = $2 }
    sec == "r" && $1 == "state" { st = $2 }
    sec == "r" && $1 == "result" { print op, n[id], st, $2 }'
}
# rank_facts RUN R: the facts of every frame of rank R, "frame N" before each
rank_facts() {
  local f found=0
  for f in "$1/dumps/"*-r"$(printf %05d "$2")"-f*.frz; do
    [ -e "$f" ] || continue
    found=1
    echo "frame ${f##*-f}"
    facts "$f"
  done
  [ $found = 1 ] || fail "$1: rank $2 left no dump"
}
# last_frame FACTS: the facts of the latest frame of a rank_facts file
last_frame() {
  sed -n '/^frame/h;/^frame/!H;${x;p}' "$1"
}
# status RUN R WANT: rank R's status in launch.log is WANT, with a dump
status() {
  grep -qx "rank=$2 pid=[0-9]* status=$3 dump=yes" "$1/launch.log" ||
    { cat "$1/launch.log" >&2; fail "${1##*/}: rank $2: expected status=$3 with a dump"; }
}
# run NAME: run-scenario tests/scenarios/NAME.scn into $FR_TMP/NAME
run() {
  "$FR_RUN_SCENARIO" --no-analyze "$FR_SRCDIR/tests/scenarios/$1.scn" "$FR_TMP/$1" > /dev/null 2>"$FR_TMP/$1.err" ||
    { cat "$FR_TMP/$1.err" >&2; fail "run-scenario $1 failed"; }
}
# line NAME R TEXT: rank R's log has TEXT as a line
line() {
  grep -qxF -- "$3" "$FR_TMP/$1/rank-$2.log" ||
    { cat "$FR_TMP/$1/rank-$2.log" >&2; fail "$1: rank $2 did not print '$3'"; }
}
# main_stack NAME R FUNC...: rank R's latest frame has every FUNC in its
# main thread's stack
main_stack() {
  local d fn
  d=$(ls "$FR_TMP/$1/dumps/"*-r"$(printf %05d "$2")"-f*.frz | tail -1)
  "$FR_DUMP" "$d" | sed -n '/^  thread .* main/,/^  thread /p' > "$FR_TMP/main.txt" || fail "fr-dump $d"
  shift 2
  for fn in "$@"; do
    grep -qF "$fn+0x" "$FR_TMP/main.txt" || { cat "$FR_TMP/main.txt" >&2; fail "no $fn in the main stack"; }
  done
}

scn="$FR_SRCDIR/tests/scenarios"
# ar_line NAME: the watchdog's words for step 3's all-reduce on world (op 1)
# of NAME.scn
ar_line() {
  local n
  n=$(grep -n '^allreduce world ' "$scn/$1.scn" | cut -d: -f1)
  echo "allreduce on world ($scn/$1.scn:$n, op 1, step 3) not complete after 500 ms, waiting at the end of step 3"
}

# abort, then exit 1: the aborts of half (created last) then world, in
# some frame of each rank that timed out; rank 2 dumped on the trigger file
run r-watchdog-abort
for r in 0 1 3; do
  status "$FR_TMP/r-watchdog-abort" $r exit:1
  line r-watchdog-abort $r "fr-scenario-job: rank $r: watchdog: $(ar_line r-watchdog-abort); ncclCommAbort on 2 comms, then exit 1"
  rank_facts "$FR_TMP/r-watchdog-abort" $r > "$FR_TMP/f$r"
  # the latest frame (the exit dump) has both aborts, half's first, both flagged
  last_frame "$FR_TMP/f$r" > "$FR_TMP/last$r"
  [ "$(grep '^CommAbort ' "$FR_TMP/last$r" | tr '\n' ' ')" = "CommAbort 2 completed 0 CommAbort 4 completed 0 " ] ||
    { cat "$FR_TMP/last$r" >&2; fail "r-watchdog-abort: rank $r: expected CommAbort of half then of world"; }
  [ "$(grep -c '^comm [24] \[.*aborted' "$FR_TMP/last$r")" = 2 ] || fail "r-watchdog-abort: rank $r: comms not flagged aborted"
done
status "$FR_TMP/r-watchdog-abort" 2 killed
# the announcements (frz.md, "Announcements"): the three that exited removed
# theirs; rank 2, killed, left its own, with its pid; without rank 2's dumps
# fr-analyze says it was running and never exited cleanly
rwa="$FR_TMP/r-watchdog-abort"
pid2=$(sed -n 's/^rank=2 pid=\([0-9]*\) .*/\1/p' "$rwa/launch.log")
left=$(cd "$rwa/dumps" && ls -A | grep '^\.fr-alive-' | tr '\n' ' ')
case "$left" in
  ".fr-alive-"*"-r00002-p$pid2 ") ;;
  *) fail "r-watchdog-abort: expected rank 2's announcement alone, found: $left" ;;
esac
grep -q "^flightrec-alive v1 job=[^ ]* rank=2 world=4 local_rank=2 pid=$pid2 time_ns=[0-9]* trigger=1 host=" \
  "$rwa/dumps/${left% }" 2>/dev/null || fail "r-watchdog-abort: announcement: $(cat "$rwa/dumps/.fr-alive-"*)"
mkdir "$FR_TMP/no2" && cp "$rwa/dumps/"*.frz "$rwa/dumps/".fr-alive-* "$FR_TMP/no2/" && rm "$FR_TMP/no2/"*-r00002-f*.frz
"$FR_ANALYZE" "$FR_TMP/no2" > "$FR_TMP/no2.txt"
grep -q "rank 2 was running and never exited cleanly (pid $pid2 on host" "$FR_TMP/no2.txt" ||
  { cat "$FR_TMP/no2.txt" >&2; fail "r-watchdog-abort: the verdict without rank 2's dumps does not use its announcement"; }
rank_facts "$FR_TMP/r-watchdog-abort" 2 > "$FR_TMP/f2"
grep -qx 'trigger file' "$FR_TMP/f2" || { cat "$FR_TMP/f2" >&2; fail "r-watchdog-abort: rank 2 did not dump on the trigger file"; }
! grep -q '^Comm\(Abort\|Destroy\)' "$FR_TMP/f2" || fail "r-watchdog-abort: rank 2 ended a comm"
echo "r-watchdog-abort: 0, 1, 3 named the all-reduce, aborted half then world, exited 1; 2 dumped on the trigger: ok"

# a rank killed (SIGKILL) 40 ms after its first comm, well inside the
# watchdog's first 100 ms poll, has announced itself all the same: the
# first comm wakes the watchdog; fr-analyze says it was running
cat > "$FR_TMP/crash-early.scn" <<'SCN'
world 4
env FR_TIMEOUT_SEC=1
time-limit 30
steps 2
allreduce world count=256 id=a
fault rank=1 step=1 op=a sleep=40
fault rank=1 step=1 op=a crash
SCN
"$FR_RUN_SCENARIO" "$FR_TMP/crash-early.scn" "$FR_TMP/ce" > /dev/null 2> "$FR_TMP/ce.err" ||
  { cat "$FR_TMP/ce.err" >&2; fail "run-scenario crash-early failed"; }
ls -A "$FR_TMP/ce/dumps" | grep -q '^\.fr-alive-.*-r00001-p' ||
  fail "crash-early: rank 1, killed 40 ms after its first comm, left no announcement: $(ls -A "$FR_TMP/ce/dumps")"
"$FR_ANALYZE" --full "$FR_TMP/ce/dumps" > "$FR_TMP/ce.txt"  # (the input in full: each announcement)
grep -q "rank 1: announced itself at .*; no clean exit, no dump" "$FR_TMP/ce.txt" ||
  { cat "$FR_TMP/ce.txt" >&2; fail "crash-early: fr-analyze does not say rank 1 was running"; }
echo "crash-early: a rank killed 40 ms after its first comm had announced itself: ok"

# destroy: blocked for good in ncclCommDestroy of half (behind the hung
# all-reduce of world); the recorder's timeout made every rank dump
run r-watchdog-destroy
for r in 0 1 2 3; do status "$FR_TMP/r-watchdog-destroy" $r killed; done
for r in 0 1 3; do
  line r-watchdog-destroy $r "fr-scenario-job: rank $r: watchdog: $(ar_line r-watchdog-destroy); ncclCommDestroy on 2 comms, then exit 1"
  rank_facts "$FR_TMP/r-watchdog-destroy" $r > "$FR_TMP/d$r"
  grep -qx 'CommDestroy 2 enqueued -1' "$FR_TMP/d$r" ||
    { cat "$FR_TMP/d$r" >&2; fail "r-watchdog-destroy: rank $r: no CommDestroy of half still in its call"; }
  ! grep -q '^CommDestroy 4\|^CommAbort' "$FR_TMP/d$r" || fail "r-watchdog-destroy: rank $r: world destroyed or aborted"
  main_stack r-watchdog-destroy $r 'libnccl.so.2!pncclCommDestroy' 'fr-scenario-job!job_watchdog_fire' \
    'fr-scenario-job!job_wait_streams' 'fr-scenario-job!job_step'
done
echo "r-watchdog-destroy: 0, 1, 3 blocked in ncclCommDestroy of half, from job_watchdog_fire: ok"

# then=stay: aborted, went on (their later ops skipped: 3 all-reduces on
# world, one per step 1-3), exited 0; a dump the abort asked for landed
run r-watchdog-stay
status "$FR_TMP/r-watchdog-stay" 2 killed
for r in 0 1 3; do
  status "$FR_TMP/r-watchdog-stay" $r exit:0
  line r-watchdog-stay $r "fr-scenario-job: rank $r: watchdog: $(ar_line r-watchdog-stay); ncclCommAbort on 2 comms, then the next step without them"
  rank_facts "$FR_TMP/r-watchdog-stay" $r > "$FR_TMP/s$r"
  grep -qx 'trigger abort' "$FR_TMP/s$r" || { cat "$FR_TMP/s$r" >&2; fail "r-watchdog-stay: rank $r: no dump of the abort"; }
  last_frame "$FR_TMP/s$r" > "$FR_TMP/last$r"
  [ "$(grep '^CommAbort ' "$FR_TMP/last$r" | tr '\n' ' ')" = "CommAbort 2 completed 0 CommAbort 4 completed 0 " ] ||
    { cat "$FR_TMP/last$r" >&2; fail "r-watchdog-stay: rank $r: expected CommAbort of half then of world"; }
  [ "$(grep -c '^AllReduce 4 ' "$FR_TMP/last$r")" = 3 ] ||
    { cat "$FR_TMP/last$r" >&2; fail "r-watchdog-stay: rank $r: ops on world after the abort"; }
done
echo "r-watchdog-stay: 0, 1, 3 aborted at step 3, went on without the comms and exited 0: ok"

# async-error + watchdog then=crash: rank 1 saw ncclRemoteError (6) at its
# first poll and aborted; the others timed out; all raised SIGABRT
run r-async-error-crash
for r in 0 1 2 3; do
  status "$FR_TMP/r-async-error-crash" $r signal:ABRT
  rank_facts "$FR_TMP/r-async-error-crash" $r > "$FR_TMP/a$r"
done
line r-async-error-crash 1 "fr-scenario-job: rank 1: watchdog: ncclCommGetAsyncError on world says 6 (remote process exited or there was a network error), waiting at the end of step 2; ncclCommAbort on 1 comm, then SIGABRT"
grep -qx 'CommGetAsyncError 4 failed 6' "$FR_TMP/a1" ||
  { cat "$FR_TMP/a1" >&2; fail "r-async-error-crash: rank 1: no failed CommGetAsyncError record of 6"; }
grep -q '^comm 4 \[.*async_error' "$FR_TMP/a1" || fail "r-async-error-crash: rank 1: world not flagged async_error"
grep -qx 'trigger async_error' "$FR_TMP/a1" || fail "r-async-error-crash: rank 1: no dump of the async error"
for r in 0 2 3; do
  grep -q "^fr-scenario-job: rank $r: watchdog: .* not complete after 500 ms, waiting at the end of step 2; ncclCommAbort on 1 comm, then SIGABRT\$" \
    "$FR_TMP/r-async-error-crash/rank-$r.log" || { cat "$FR_TMP/r-async-error-crash/rank-$r.log" >&2; fail "rank $r did not time out"; }
  grep -q '^CommAbort 4 ' "$FR_TMP/a$r" || { cat "$FR_TMP/a$r" >&2; fail "r-async-error-crash: rank $r: no CommAbort"; }
  ! grep -q '^CommGetAsyncError' "$FR_TMP/a$r" || fail "r-async-error-crash: rank $r: an async error of its own"
done
echo "r-async-error-crash: rank 1 aborted on its async error, 0, 2, 3 on their timeout, all SIGABRT: ok"

# async-error without a watchdog: the rank's next call on the comm fails at
# once with the error (NCCL's ncclCommEnsureReady), recorded as failed
cat > "$FR_TMP/later.scn" <<'EOF'
world 2
env FR_TIMEOUT_SEC=1
env FR_DUMP_ON_EXIT=1
time-limit 20
steps 3
step-sync off
allreduce world count=1024 id=ar
fault rank=0 step=1 op=ar async-error=2
EOF
"$FR_RUN_SCENARIO" --no-analyze "$FR_TMP/later.scn" "$FR_TMP/later" > /dev/null 2>"$FR_TMP/later.err" ||
  { cat "$FR_TMP/later.err" >&2; fail "run-scenario later.scn failed"; }
grep -qx "fr-scenario-job: rank 0: allreduce on world ($FR_TMP/later.scn:7) failed: unhandled system error (run with NCCL_DEBUG=INFO for details)" \
  "$FR_TMP/later/rank-0.log" || { cat "$FR_TMP/later/rank-0.log" >&2; fail "later.scn: rank 0's second all-reduce did not fail"; }
status "$FR_TMP/later" 0 exit:1
rank_facts "$FR_TMP/later" 0 > "$FR_TMP/l0"
[ "$(grep '^AllReduce ' "$FR_TMP/l0" | sed -n '$p')" = 'AllReduce 2 failed 2' ] ||
  { cat "$FR_TMP/l0" >&2; fail "later.scn: rank 0's failed all-reduce is not recorded as failed with 2"; }
echo "async-error without a watchdog: the next call fails with it: ok"
