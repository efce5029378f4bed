#!/bin/sh
# Ring files live on the simulator (4 ranks, FR_RING_DIR in the scratch
# directory):
# 1. the culprit (stopped before an all-reduce the others entered) SIGKILLed
#    while the others wait: they time out, dump, and add its salvaged dump;
#    the verdict names it, killed, in host code after its last op; and a
#    rank killed while busy (its ring's states a poll old) is a process
#    gone, not a device that stalled;
# 2. the launcher's teardown: one rank exits with status 1 (a rank that
#    raised), the others hang (no timeout of their own), 2 s later all are
#    SIGTERMed, then SIGKILLed; fr-dump --salvage makes every rank's dump
#    and the verdict names the rank that exited;
# 3. a rank stuck in host code, then SIGSTOPped (its watchdog cannot run):
#    fr-dump --trigger makes the others dump and snapshots the stopped one
#    from outside; the verdict names it;
# 3b. the whole job killed before its timeout: fr-analyze of its dump
#    directory (announcements alone) reads the ring files they point to, or
#    says where they are;
# 4. a ring directory where the file cannot be made: the job runs as
#    without the recorder, with one line saying so;
# 5. damaged ring files (truncated, bit-flipped, a future version, another
#    user's): every reader refuses each one by name and goes on.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
cd "$FR_TMP" || exit 1
cat > run.scn <<'SCN'
world 4
steps 100000
allreduce world count=256
sleep 2
SCN

# start NAME SCN [ENV...]: the 4 ranks, pids in $pids (rank order)
start() {
  name=$1 scn=$2
  shift 2
  mkdir -p "boot.$name" "ring.$name"
  pids=""
  for r in 0 1 2 3; do
    env RANK=$r WORLD_SIZE=4 LOCAL_RANK=$r FR_POLL_MS=10 FR_DUMP_DIR="$FR_TMP/$name" \
      FR_RING_DIR="$FR_TMP/ring.$name" FR_JOB_ID="$name" FR_SIM_BOOTSTRAP_DIR="$FR_TMP/boot.$name" \
      LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" "$@" "$FR_JOB" "$scn" > "$name.out.$r" 2>&1 &
    pids="$pids $!"
  done
}
rank_pid() { echo $pids | cut -d' ' -f$(($1 + 1)); }
# wait_for TEST SEC: poll TEST (a shell command) up to SEC seconds
wait_for() {
  i=0
  while ! eval "$1"; do
    i=$((i + 1))
    [ $i -lt $(($2 * 10)) ] || return 1
    sleep 0.1
  done
}
# says DIR TEXT: DIR's text verdict (wrapped lines joined) holds TEXT
says() { tr '\n' ' ' < "$1.txt" | tr -s ' ' | grep -qF -- "$2"; }
verdict_names() { # DIR RANK: the text verdict's root cause is RANK alone
  "$FR_ANALYZE" "$1" > "$1.txt"
  grep -Eq "^  root cause: +$2\$" "$1.txt" || { cat "$1.txt"; fail "$1: the verdict does not name rank $2"; }
}

# 1. the culprit SIGKILLed while the others wait
cat > kill.scn <<'SCN'
world 4
steps 100000
allreduce world count=256
sleep 2
fault rank=2 step=40 op=1 stop
SCN
start kill kill.scn FR_TIMEOUT_SEC=3
sleep 1.5
kill -KILL "$(rank_pid 2)"
wait_for '[ $(ls kill 2> /dev/null | grep -c "f0000.frz$") -ge 4 ]' 60 ||
  { ls kill ring.kill; fail "no four dumps after a rank was SIGKILLed"; }
kill -KILL $pids 2> /dev/null
wait
"$FR_DUMP" kill/kill-r00002-f0000.frz > k2.txt || fail "the salvaged dump does not decode"
grep -q '^trigger: *salvaged' k2.txt || { head k2.txt; fail "rank 2's dump is not marked salvaged"; }
grep -q 'killed, no exit seen' k2.txt || fail "the salvaged dump does not say how the process ended"
grep -q 'salvaged the ring file of rank 2' kill.out.* || fail "no survivor said it salvaged rank 2"
verdict_names kill 2
says kill "rank 2's process ended (its ring file, salvaged): killed" || { cat kill.txt; fail "the verdict does not say rank 2 was killed"; }
says kill "before the first of the others' dumps" || { cat kill.txt; fail "the verdict does not say when rank 2 died"; }
says kill "it was in host code: its last op, AllReduce seq 39" || { cat kill.txt; fail "the verdict does not say what rank 2 was doing"; }
echo "SIGKILLed culprit: ok"

# 1b. killed within one watchdog poll (1 s) of its last ops completing: its
#     ring still shows them pending; a process gone, not its device side
cat > busy.scn <<'SCN'
world 4
steps 100000
allreduce world count=256
SCN
start busy busy.scn FR_TIMEOUT_SEC=3 FR_POLL_MS=1000
sleep 2.5
kill -KILL "$(rank_pid 2)"
wait_for '[ $(ls busy 2> /dev/null | grep -c "f0000.frz$") -ge 4 ]' 60 ||
  { ls busy ring.busy; fail "no four dumps after a busy rank was SIGKILLed"; }
kill -KILL $pids 2> /dev/null
wait
verdict_names busy 2
says busy "device side" && { cat busy.txt; fail "a killed rank read as its device side stalling"; }
says busy "rank 2's process ended (its ring file, salvaged): killed" || { cat busy.txt; fail "busy: rank 2 not said killed"; }
"$FR_ANALYZE" --json busy | grep -Eq '"kind":[[:space:]]*"gone"' || fail "busy: rank 2's fault is not 'gone'"
echo "SIGKILLed within a poll: ok"

# 2. teardown: rank 1 exits with status 1, the launcher ends the rest
cat > raise.scn <<'SCN'
world 4
steps 100000
allreduce world count=256
sleep 2
fault rank=1 step=40 op=1 exit
SCN
start teardown raise.scn FR_TIMEOUT_SEC=600 SC_EXIT_STATUS=1
p1=$(rank_pid 1)
wait_for '! kill -0 $p1 2> /dev/null' 60 || fail "rank 1 did not exit"
sleep 2
kill -TERM $pids 2> /dev/null
sleep 2
kill -KILL $pids 2> /dev/null
wait
[ -z "$(ls teardown 2> /dev/null | grep frz)" ] || fail "a rank dumped by itself before the teardown"
"$FR_DUMP" --salvage "ring.teardown" -o teardown > salvage.txt || { cat salvage.txt; fail "fr-dump --salvage failed"; }
[ $(ls teardown | grep -c 'f0000.frz$') -eq 4 ] || { cat salvage.txt; fail "not every rank salvaged"; }
grep -q 'exited with status 1' salvage.txt || fail "the rank that raised is not said to have exited 1"
[ -z "$(ls ring.teardown)" ] || fail "salvaged ring files left behind"
verdict_names teardown 1
says teardown "rank 1's process ended (its ring file, salvaged): exited with status 1" ||
  { cat teardown.txt; fail "the verdict does not say rank 1 exited 1"; }
echo "teardown: ok"

# 3. a SIGSTOPped rank, snapshotted from outside
start stop kill.scn FR_TIMEOUT_SEC=600
p2=$(rank_pid 2)
sleep 1.5
kill -STOP "$p2"
sleep 1
FR_RING_DIR="$FR_TMP/ring.stop" "$FR_DUMP" --trigger stop > trigger.txt || { cat trigger.txt; fail "fr-dump --trigger failed"; }
wait_for '[ $(ls stop 2> /dev/null | grep -c "f0000.frz$") -ge 4 ]' 30 ||
  { ls stop; cat trigger.txt; fail "no snapshot of the stopped rank"; }
kill -CONT "$p2"
kill -KILL $pids 2> /dev/null
wait
"$FR_DUMP" stop/stop-r00002-f0000.frz | grep -q '^trigger: *snapshot' || fail "rank 2's dump is not a snapshot"
verdict_names stop 2
says stop "rank 2's process is stopped (its watchdog thread cannot run" || { cat stop.txt; fail "rank 2 not said stopped"; }
echo "SIGSTOPped rank: ok"

# 3b. the whole job SIGKILLed before any timeout: its dump directory holds
#     only the announcements; fr-analyze reads the ring files they point to
#     (this host), or says where they are
start allkill kill.scn FR_TIMEOUT_SEC=600
sleep 2
kill -KILL $pids 2> /dev/null
wait
[ -z "$(ls allkill | grep frz)" ] || fail "a rank dumped before the kill"
ls -A allkill | grep -q '^\.fr-alive-' || fail "no announcements left by the killed job"
FR_RING_DIR="$FR_TMP/ring.allkill" verdict_names allkill 2
says allkill "rank 2's process ended (its ring file, salvaged): killed" || { cat allkill.txt; fail "allkill: rank 2 not said killed"; }
mkdir empty-rings
FR_RING_DIR="$FR_TMP/empty-rings" "$FR_ANALYZE" allkill > allkill-none.txt 2>&1
[ $? -eq 2 ] || { cat allkill-none.txt; fail "fr-analyze of announcements without ring files did not exit 2"; }
grep -q "holds no file" allkill-none.txt && { cat allkill-none.txt; fail "announcements alone read as an empty directory"; }
tr '\n' ' ' < allkill-none.txt | tr -s ' ' | grep -qF "the ring files of job allkill (ranks 0-3) are in FR_RING_DIR (default /dev/shm) on host $(hostname); run fr-dump --salvage -o allkill there" ||
  { cat allkill-none.txt; fail "no pointer to the ring files"; }
echo "announcements alone: ok"

# 4. no ring file can be made: the job runs unchanged
cat > short.scn <<'SCN'
world 4
steps 50
allreduce world count=256
SCN
start plain short.scn FR_RING_DIR=none
wait
start noroom short.scn FR_RING_DIR=/proc/no-such-dir
wait
for r in 0 1 2 3; do
  grep -v '^flightrec\[' "noroom.out.$r" | cmp -s - "plain.out.$r" || fail "rank $r's output changed"
  grep -q 'ring file .* private memory' "noroom.out.$r" || fail "rank $r did not say it has no ring file"
done
# a tmpfs too small for the ring, when this system lets us mount one
if unshare -rm true 2> /dev/null; then
  mkdir small
  cat > small.sh <<SH
mount -t tmpfs -o size=256k tmpfs "$FR_TMP/small" || exit 77
FR_RING_DIR="$FR_TMP/small" RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 FR_DUMP_DIR="$FR_TMP/small-dumps" \
  FR_SIM_BOOTSTRAP_DIR="$FR_TMP/boot.small" LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" \
  "$FR_JOB" "$FR_TMP/one.scn" > "$FR_TMP/small.out" 2>&1
SH
  printf 'world 1\nsteps 50\nallreduce world count=256\n' > one.scn
  mkdir boot.small
  unshare -rm sh small.sh; rc=$?
  if [ $rc -ne 77 ]; then
    [ $rc -eq 0 ] || { cat small.out; fail "the job failed with a full tmpfs"; }
    grep -q 'no room for its pages' small.out || { cat small.out; fail "no line about the full tmpfs"; }
    echo "full tmpfs: ok"
  fi
fi
echo "no ring file: ok"

# 5. damaged ring files: refused by name, the rest read
mkdir bad
start good short.scn FR_TIMEOUT_SEC=600
wait
cp "$FR_TMP/kill/kill-r00000-f0000.frz" bad/ 2> /dev/null
# a ring file of a process that is gone, kept: copy one made by a killed job
start src run.scn FR_TIMEOUT_SEC=600
sleep 1.5
kill -KILL $pids
wait
set -- ring.src/*.ring
[ -f "$1" ] || fail "no ring file left by a killed job"
cp "$1" bad/fr-t-r00001-p1@h.ring
head -c 3000 "$1" > bad/fr-t-r00002-p2@h.ring                        # truncated
cp "$1" bad/fr-t-r00003-p3@h.ring
printf '\001' | dd of=bad/fr-t-r00003-p3@h.ring bs=1 seek=300 conv=notrunc 2> /dev/null # bit flip
cp "$1" bad/fr-t-r00004-p4@h.ring
printf '\002' | dd of=bad/fr-t-r00004-p4@h.ring bs=1 seek=8 conv=notrunc 2> /dev/null   # version 2
other=""
if [ "$(id -u)" = 0 ] && cp "$1" bad/fr-t-r00005-p5@h.ring && chown 65534 bad/fr-t-r00005-p5@h.ring; then
  other=1
fi
"$FR_DUMP" --salvage --keep bad -o bad-out > bad.out 2> bad.err
[ $? -eq 2 ] || fail "fr-dump --salvage did not exit 2 with damaged ring files"
[ -f bad-out/src-r00000-f0000.frz ] || [ "$(ls bad-out | wc -l)" -ge 1 ] || fail "the good ring file was not salvaged"
grep -q 'r00002.*truncated' bad.err || { cat bad.err; fail "the truncated file is not named"; }
grep -q 'r00003.*checksum' bad.err || { cat bad.err; fail "the bit-flipped file is not named"; }
grep -q 'r00004.*version 2' bad.err || { cat bad.err; fail "the future version is not named"; }
[ -z "$other" ] || grep -q 'r00005.*owned by uid' bad.err || { cat bad.err; fail "another user's file is not refused"; }
"$FR_ANALYZE" bad > bad-analyze.txt 2>&1
for k in 2 3 4; do
  grep -q "fr-t-r0000$k" bad-analyze.txt || { cat bad-analyze.txt; fail "fr-analyze does not name the damaged file $k"; }
done
echo "damaged ring files: ok"
