#!/bin/sh
# The dump directory changes under a recording process that dumps a full
# 131,072-record ring every 100 ms while a thread keeps calling NCCL
# (check_recorder_faults --dumps); for 2 s, every 30 ms, the directory is
# 1. removed (rm -rf), 2. renamed away, or 3. made read-only and writable
#    again (as an ordinary user: root writes anyway),
# so dumps meet it at every stage.  Each time: the process's output and
# exit status are unchanged, the recorder says at most one line about failed
# dumps, every file under a final name decodes, no temporary file is left
# behind in cases 1 and 2 (a dump in progress at exit is finished), and
# once the directory is left alone the next dump lands in it again
# (recreated 0700 after a removal).
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
cd "$FR_TMP" || exit 1
chmod 755 "$FR_TMP"
prog="$FR_BUILDDIR/tests/unit/check_recorder_faults"
as_user=""
if [ "$(id -u)" -eq 0 ]; then
  if command -v setpriv > /dev/null; then
    as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
  else
    echo "note: root without setpriv: the read-only case is not run"
  fi
  # the ordinary user must reach the build tree (not so under a 0700 home)
  if [ -n "$as_user" ] && ! $as_user sh -c 'test -x "$1" && test -r "$2" && test -r "$3/libnccl.so.2"' \
       sh "$prog" "$FR_PRELOAD" "$FR_SIM_LIBDIR" 2> /dev/null; then
    echo "note: uid 65534 cannot reach the build tree: the read-only case is not run"
    as_user=""
  fi
fi

# job NAME [RUNNER]: the dumping process, dump directory $FR_TMP/NAME
job() {
  RANK=0 WORLD_SIZE=1 FR_JOB_ID=dir FR_DUMP_DIR="$FR_TMP/$1" FR_DUMP_SIGNAL=SIGUSR2 FR_POLL_MS=5 \
  FR_MAX_FRAMES=1000 FR_TIMEOUT_SEC=0 FR_TRIGGER_FILE=0 FR_BUFFER_ENTRIES=131072 \
  LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" timeout 120 ${2:-} "$prog" \
    --dumps "$FR_TMP/$1.stop" 100 > "$1.out" 2> "$1.err"
  echo "exit $?" >> "$1.out"
}

# meddle NAME ACTION: for 2 s, every 30 ms, do ACTION to $FR_TMP/NAME;
# then tell the job to stop
meddle() {
  i=0
  while [ $i -lt 66 ]; do
    case $2 in
      remove) rm -rf "$1" 2> /dev/null ;;
      rename) mv "$1" "$1.moved.$i" 2> /dev/null ;;
      readonly) chmod 500 "$1" 2> /dev/null; sleep 0.015; chmod 700 "$1" 2> /dev/null ;;
    esac
    sleep 0.03
    i=$((i + 1))
  done
  touch "$1.stop"
}

cases="remove rename"
{ [ "$(id -u)" -ne 0 ] || [ -n "$as_user" ]; } && cases="$cases readonly"
if [ -n "$as_user" ]; then # the ordinary user's own dump directory
  mkdir -m 700 readonly && chown 65534:65534 readonly
fi
for c in $cases; do
  runner=""
  [ $c = readonly ] && runner=$as_user
  ( job $c "$runner" ) &
  ( sleep 0.3; meddle $c $c ) &
done
wait

for c in $cases; do
  [ "$(cat $c.out)" = "$(printf 'dumps: the last one read back\nexit 0')" ] ||
    { cat $c.out $c.err; fail "$c: the process's output or status changed"; }
  n=$(grep -c 'dump failed' $c.err)
  [ "$n" -le 1 ] || fail "$c: $n lines about failed dumps"
  ! grep -v '^flightrec\[' $c.err | grep -q . || { cat $c.err; fail "$c: unexpected output on stderr"; }
  for f in $c/*.frz $c.moved.*/*.frz; do
    [ -e "$f" ] || continue
    "$FR_DUMP" --check "$f" > /dev/null || fail "$c: $f is under a final name but does not decode"
  done
  [ -d $c ] && [ "$(stat -c %a $c)" = 700 ] || fail "$c: the dump directory is not there (0700) after the job"
  last=$(ls $c | grep -c '\.frz$')
  [ "$last" -ge 1 ] || fail "$c: no dump landed once the directory was left alone"
  echo "$c: $(ls $c $c.moved.* 2> /dev/null | grep -c '\.frz$') dumps written, $n failure line(s)"
done
for c in remove rename; do
  ! ls -a $c $c.moved.* 2> /dev/null | grep -q '\.tmp\.' || fail "$c: a temporary file was left behind"
done
echo "dump directory changes: ok"
