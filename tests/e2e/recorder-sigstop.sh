#!/bin/sh
# SIGSTOP/SIGCONT of a live 4-rank job (FR_TIMEOUT_SEC=1):
# 1. one rank stopped for 2.5 s: the others wait for it, declare the hang
#    and dump; the stopped rank dumps on their trigger file once continued
#    (no timeout of its own, no crash dump), and its last frame shows the
#    stop as a gap of 2 s or more between two consecutive calls; every rank
#    finishes with the output and status of a run without the recorder, and
#    fr-analyze finds the job progressing (no rank dead or hung);
# 2. the whole job stopped for 2.5 s (a scheduler's suspend) and continued:
#    no rank declares a hang (the watchdog does not count time in which it
#    did not run itself).
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
cd "$FR_TMP" || exit 1
cat > stop.scn <<'SCN'
world 4
steps 400
allreduce world count=256
sleep 10
SCN
cat > busy.scn <<'SCN'
world 4
steps 1000000
allreduce world count=65536
SCN

# start NAME SCN [no]: start the 4 ranks (with the recorder unless "no"),
# outputs in NAME.out.R, pids in $pids
start() {
  mkdir "boot.$1"
  pids=""
  for r in 0 1 2 3; do
    if [ "${3:-}" = no ]; then pre=""; else pre=$FR_PRELOAD; fi
    RANK=$r WORLD_SIZE=4 LOCAL_RANK=$r FR_TIMEOUT_SEC=1 FR_POLL_MS=10 FR_DUMP_DIR="$FR_TMP/$1" \
    FR_JOB_ID=stop FR_SIM_BOOTSTRAP_DIR="$FR_TMP/boot.$1" LD_LIBRARY_PATH="$FR_SIM_LIBDIR" \
    LD_PRELOAD="$pre" "$FR_JOB" "$2" > "$1.out.$r" 2>&1 &
    pids="$pids $!"
  done
}
# finish: wait for $pids (at most 90 s), 1 if any failed
finish() {
  ( sleep 90; kill -KILL $pids 2> /dev/null ) & guard=$!
  rc=0
  for p in $pids; do wait "$p" || rc=1; done
  kill $guard 2> /dev/null
  return $rc
}

# 1. one rank stopped, beside the same job without the recorder
start plain stop.scn no
plain=$pids
start one stop.scn
stopped=$(echo $pids | cut -d' ' -f3)
sleep 0.8
kill -STOP "$stopped"
sleep 2.5
kill -CONT "$stopped"
finish || fail "the job failed with a rank stopped and continued"
pids=$plain
finish || fail "the job failed without the recorder"
for r in 0 1 2 3; do
  # the recorder's own lines on stderr aside, the same output
  grep -v '^flightrec\[' "one.out.$r" | cmp -s - "plain.out.$r" ||
    { cat "one.out.$r"; fail "rank $r's output changed"; }
done
for f in one/*.frz; do
  "$FR_DUMP" "$f" > "$f.txt" || fail "$f does not decode"
  ! grep -q '^trigger: *crash' "$f.txt" || fail "$f: a crash dump of a stopped rank"
done
last=$(ls one/stop-r00002-f*.frz | tail -1)
[ -n "$last" ] || fail "the stopped rank never dumped"
grep -q '^trigger: *timeout' one/stop-r00002-f0000.frz.txt && fail "the stopped rank blamed its own op"
# the largest gap between consecutive enqueue times (ms) in its last frame
# (the column by its header, "enqueue")
gap=$(awk '$1 == "id" && $2 == "comm" { for (i = 1; i <= NF; i++) if ($i == "enqueue") col = i }
           col && $4 == "AllReduce" { if (n++ && $col - prev > max) max = $col - prev; prev = $col }
           END { printf "%d", max }' "$last.txt")
echo "the stopped rank's last frame: a gap of $gap ms between two calls"
[ "$gap" -ge 2000 ] || fail "no gap of 2 s in the stopped rank's records (largest $gap ms)"
"$FR_ANALYZE" --json one > one.json
rc=$?
[ $rc -eq 0 ] || { "$FR_ANALYZE" one; fail "fr-analyze exited $rc: it found a problem in a job that only paused"; }

# 2. the whole job stopped and continued: no hang
start all busy.scn
sleep 1
kill -STOP $pids
sleep 2.5
kill -CONT $pids
sleep 1.5
found=$(ls all 2> /dev/null)
kill -KILL $pids 2> /dev/null
wait
[ -z "$found" ] || fail "a job stopped and continued as a whole was declared hung: $found"
echo "SIGSTOP/SIGCONT: ok"
