#!/bin/sh
# A TRIGGER file planted by someone else cannot block, crash or inject:
# - a FIFO at TRIGGER (fresh, so not a stale one): opening it does not block
#   the watchdog, it is not a trigger; the job runs through with its own
#   output and exit status, no dump;
# - at the same time, in other dump directories: a FIFO that a writer holds
#   open with a valid trigger line in it (opened, fstat'd, refused: the line
#   is still in the FIFO afterwards), a directory, a symlink to a valid
#   trigger file (not followed) and, where python3 can make one, a Unix
#   socket: no dump, the job unchanged;
# - a 1 MiB TRIGGER of control characters and escape sequences: read only up
#   to its 512-byte cap; garbage is still a trigger, so every rank dumps, the
#   job is unaffected, and what fr-dump prints of it carries no control
#   character.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
cd "$FR_TMP" || exit 1
cat > ok.scn <<'SCN'
world 2
steps 2000
allreduce world count=64 dtype=float32 redop=sum
SCN

# job DUMPDIR: run the 2-rank job (bounded by timeout), outputs in DUMPDIR.out.R
job() {
  rm -rf "boot.$1" && mkdir "boot.$1"
  pids=""
  for r in 0 1; do
    RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r FR_POLL_MS=10 FR_DUMP_DIR="$FR_TMP/$1" FR_JOB_ID=hostile \
    FR_SIM_BOOTSTRAP_DIR="$FR_TMP/boot.$1" LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" \
      timeout 60 "$FR_JOB" ok.scn > "$1.out.$r" 2>&1 &
    pids="$pids $!"
  done
  rc=0
  for p in $pids; do wait "$p" || rc=$?; done
  return $rc
}

# The job's own output and status without the recorder, for comparison.
rm -rf boot && mkdir boot
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r FR_SIM_BOOTSTRAP_DIR="$FR_TMP/boot" \
    LD_LIBRARY_PATH="$FR_SIM_LIBDIR" "$FR_JOB" ok.scn > "plain.out.$r" 2>&1 &
done
wait || fail "the job fails without the recorder"

# 1. a FIFO at TRIGGER
mkdir -m 700 fifo && mkfifo fifo/TRIGGER && touch -d '+1 hour' fifo/TRIGGER
job fifo || fail "the job failed (exit $rc) with a FIFO at TRIGGER"
for r in 0 1; do
  cmp -s "plain.out.$r" "fifo.out.$r" || { cat "fifo.out.$r"; fail "rank $r's output changed by a FIFO TRIGGER"; }
done
[ -p fifo/TRIGGER ] || fail "the FIFO at TRIGGER was replaced"
ls fifo | grep -q '\.frz$' && fail "a FIFO at TRIGGER made a rank dump"

# unchanged DIR: the job's output in DIR and no dump there
unchanged() {
  for r in 0 1; do
    cmp -s "plain.out.$r" "$1.out.$r" || { cat "$1.out.$r"; fail "rank $r's output changed ($1 at TRIGGER)"; }
  done
  ! ls "$1" | grep -q '\.frz$' || fail "$1 at TRIGGER made a rank dump"
}

# 1b. other things that are not regular files, all at once
line='flightrec-trigger v1 rank=1 time_ns=1 reason=planted'
mkdir -m 700 wfifo dir link sock
mkfifo wfifo/TRIGGER && touch -d '+1 hour' wfifo/TRIGGER
exec 3<> wfifo/TRIGGER              # a writer (and reader) that keeps it open
echo "$line" >&3
mkdir dir/TRIGGER && touch -d '+1 hour' dir/TRIGGER
echo "$line" > target && touch -d '+1 hour' target
ln -s ../target link/TRIGGER
kinds="wfifo dir link"
if command -v python3 > /dev/null &&
   python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' sock/TRIGGER 2> /dev/null; then
  kinds="$kinds sock"
else
  echo "note: no python3 to make a Unix socket: the socket case is not run"
fi
bg=""
for k in $kinds; do job "$k" & bg="$bg $!"; done
for p in $bg; do wait "$p" || fail "the job failed with a non-regular TRIGGER"; done
for k in $kinds; do unchanged "$k"; done
got=$(dd if=wfifo/TRIGGER iflag=nonblock bs=512 count=1 2> /dev/null)
exec 3>&-
[ "$got" = "$line" ] || fail "the recorder read from a FIFO at TRIGGER (left: '$got')"
[ "$(cat target)" = "$line" ] || fail "the symlink's target changed"

# 2. a huge TRIGGER full of control characters, newer than the job
mkdir -m 700 huge
{ printf 'flightrec-trigger v1 rank=0 time_ns=1 reason=\033[2J\033]0;owned\007\r\n'
  head -c 1048576 /dev/zero | tr '\0' '\033'; } > huge/TRIGGER
touch -d '+1 hour' huge/TRIGGER
job huge || fail "the job failed (exit $rc) with a huge TRIGGER"
for r in 0 1; do
  cmp -s "plain.out.$r" "huge.out.$r" || { cat "huge.out.$r"; fail "rank $r's output changed by a huge TRIGGER"; }
  f=huge/hostile-r0000$r-f0000.frz
  [ -f "$f" ] || fail "rank $r did not dump on the planted TRIGGER"
  "$FR_DUMP" "$f" > "dump$r.txt" || fail "rank $r's dump does not decode"
  grep -q 'trigger: *file' "dump$r.txt" || fail "rank $r's dump does not name the trigger file"
  LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "dump$r.txt" &&
    fail "a control character from TRIGGER reached fr-dump's output"
done
echo "hostile trigger files: ok"
