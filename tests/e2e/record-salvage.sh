#!/bin/sh
# fr-record stays in front of its command: one rank on the simulator, run
# through fr-record with its ring file in the scratch directory:
# 1. the rank SIGKILLed: fr-record salvages its ring file into the dump
#    directory (trigger salvaged, naming SIGKILL) and ends by the
#    same signal (137 in a shell);
# 2. SIGTERM sent to fr-record reaches the rank (whose ring file then says
#    how it died), and fr-record ends as it did (143), with its dump;
# 3. an exit status passes through unchanged, and a command that does not
#    exist gives 127, as in a shell.
. "$FR_SRCDIR/tests/e2e/lib.sh"
case "${FR_SAN_CFLAGS:-}" in
  *sanitize=*) echo "SKIP: a sanitizer build's recorder cannot be preloaded into the simulator job by fr-record"; exit 77 ;;
esac
fr_tmpdir
cd "$FR_TMP" || exit 1
FR_RECORD="$FR_BUILDDIR/librecorder/fr-record"
cat > run.scn <<'SCN'
world 1
steps 100000
allreduce world count=256
sleep 2
SCN

# record NAME: the rank through fr-record, in the background; sets $rec
# (fr-record's pid) and, once its ring file is there, $rank (the rank's pid)
record() {
  mkdir -p "ring.$1" "boot.$1"
  env RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 FR_TIMEOUT_SEC=0 FR_JOB_ID="$1" FR_RING_DIR="$FR_TMP/ring.$1" \
    FR_SIM_BOOTSTRAP_DIR="$FR_TMP/boot.$1" LD_LIBRARY_PATH="$FR_SIM_LIBDIR" FR_RECORDER_LIB="$FR_RECORDER" \
    "$FR_RECORD" -d "$FR_TMP/$1" "$FR_JOB" run.scn > "$1.out" 2> "$1.err" &
  rec=$!
  i=0
  while [ -z "$(ls "ring.$1")" ]; do
    i=$((i + 1))
    [ $i -lt 300 ] || { cat "$1.err"; fail "$1: no ring file after 30 s"; }
    sleep 0.1
  done
  rank=$(ls "ring.$1" | sed -n 's/.*-p\([0-9]*\)@.*/\1/p')
  [ -n "$rank" ] && [ "$rank" != "$rec" ] || fail "$1: the rank's pid ($rank) is not a child of fr-record ($rec)"
  sleep 0.5 # some steps recorded
}
# salvaged NAME HOW: NAME's dump directory holds the rank's salvaged dump,
# which says HOW it ended; the ring file is gone
salvaged() {
  d=$(ls "$1"/*.frz 2> /dev/null | head -n 1)
  [ -n "$d" ] || { ls -la "$1" "ring.$1"; cat "$1.err"; fail "$1: no dump in the dump directory"; }
  "$FR_DUMP" "$d" > "$1.txt" || fail "$1: the salvaged dump does not decode"
  grep -q '^trigger: *salvaged' "$1.txt" || { head "$1.txt"; fail "$1: the dump is not marked salvaged"; }
  grep -qF -- "$2" "$1.txt" || { head "$1.txt"; fail "$1: the dump does not say '$2'"; }
  grep -q 'AllReduce' "$1.txt" || fail "$1: the salvaged dump holds no AllReduce record"
  grep -q "salvaged into $FR_TMP/$1/" "$1.err" || { cat "$1.err"; fail "$1: fr-record did not say where"; }
  [ -z "$(ls "ring.$1")" ] || fail "$1: the ring file was left after its salvage"
}

# 1. the rank SIGKILLed
record kill
kill -KILL "$rank"
wait "$rec"
rc=$?
[ "$rc" = 137 ] || { cat kill.err; fail "fr-record exited $rc after its command was SIGKILLed, expected 137"; }
salvaged kill "killed by signal 9 (SIGKILL), seen by its parent"

# 2. SIGTERM to fr-record reaches the rank
record term
kill -TERM "$rec"
wait "$rec"
rc=$?
[ "$rc" = 143 ] || { cat term.err; fail "fr-record exited $rc after a SIGTERM, expected 143"; }
kill -0 "$rank" 2> /dev/null && fail "the rank still runs after fr-record was SIGTERMed"
salvaged term "killed by signal 15 (SIGTERM)"

# 3. exit statuses as a shell gives them
expect_exit 3 env FR_RECORDER_LIB="$FR_RECORDER" FR_RING_DIR="$FR_TMP/ring.exit" "$FR_RECORD" sh -c 'exit 3'
expect_exit 0 env FR_RECORDER_LIB="$FR_RECORDER" "$FR_RECORD" true
expect_exit 127 env FR_RECORDER_LIB="$FR_RECORDER" "$FR_RECORD" "$FR_TMP/no-such-command"
[ ! -e "$FR_TMP/ring.exit" ] || [ -z "$(ls "$FR_TMP/ring.exit")" ] || fail "a process that used no NCCL left a ring file"
exit 0
