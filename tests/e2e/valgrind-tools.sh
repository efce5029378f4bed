#!/bin/sh
# The tools are memcheck-clean on whole dump sets: fr-analyze (text, JSON),
# fr-dump (text, JSON, Chrome trace, --check, --trigger) and fr-tui --batch
# run under valgrind --leak-check=full on every committed sample (the C1
# dumps of a live 8-rank scenario run, the H200 job's frames with call sites
# and backtraces, a busy stream) and on PyTorch Flight Recorder dumps; any
# memcheck error or leak fails the test, and each tool's output must be
# the same as without valgrind.  Skipped without valgrind (scripts/setup.sh
# installs it) and in sanitizer builds (valgrind cannot run them).
. "$FR_SRCDIR/tests/e2e/lib.sh"
if ! command -v valgrind > /dev/null; then
  echo "SKIP: valgrind is not installed (scripts/setup.sh installs it)"
  exit 77
fi
if [ -n "$FR_SAN_CFLAGS" ]; then
  echo "SKIP: a sanitizer build ($FR_SAN_CFLAGS) does not run under valgrind"
  exit 77
fi
fr_tmpdir
n=0
# memcheck NAME TOOL ARGS...: TOOL ARGS under memcheck, stdout into NAME.vg,
# failing on any memcheck error or leak; its exit status in $got.
memcheck() {
  name=$1; shift
  valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible \
    --errors-for-leak-kinds=definite,indirect,possible \
    "$@" > "$FR_TMP/$name.vg" 2> "$FR_TMP/$name.err"
  got=$?
  [ "$got" -ne 99 ] && ! grep -q '^==[0-9]*==' "$FR_TMP/$name.err" ||
    { cat "$FR_TMP/$name.err" >&2; fail "memcheck found errors in: $*"; }
  n=$((n + 1))
}

# vg NAME TOOL ARGS...: memcheck, and the same stdout and exit status as a
# plain run.
vg() {
  name=$1; shift
  "$@" > "$FR_TMP/$name.plain" 2> /dev/null
  want=$?
  memcheck "$name" "$@"
  [ "$got" -eq "$want" ] || fail "$* exited $got under valgrind, $want without"
  cmp -s "$FR_TMP/$name.plain" "$FR_TMP/$name.vg" || fail "$* printed something else under valgrind"
}

py="$FR_SRCDIR/tests/fixtures/pytorch-fr"
for s in "$FR_SRCDIR"/samples/*/; do
  s=${s%/}
  b=$(basename "$s")
  vg "$b.analyze" "$FR_ANALYZE" "$s"
  vg "$b.analyze-json" "$FR_ANALYZE" --json "$s"
  vg "$b.dump" "$FR_DUMP" "$s"
  vg "$b.dump-json" "$FR_DUMP" --json "$s"
  vg "$b.trace" "$FR_DUMP" --format=chrome-trace "$s"
  vg "$b.check" "$FR_DUMP" --check "$s"
  vg "$b.tui" "$FR_TUI" --batch --cols 120 --rows 40 "$s"
  vg "$b.tui-fold" "$FR_TUI" --batch --fold --frame 0 "$s"
done
for s in "$py"/c1 "$py"/c5 "$py"/h200-timeout; do
  b=pytorch-$(basename "$s")
  vg "$b.analyze" "$FR_ANALYZE" --json "$s"
  vg "$b.dump" "$FR_DUMP" "$s"
  vg "$b.tui" "$FR_TUI" --batch "$s"
done
mkdir -m 700 "$FR_TMP/live"
# one announcement of a live process (this shell), so that somebody listens
printf 'flightrec-alive v1 job=vg rank=0 world=1 local_rank=0 pid=%s time_ns=1 trigger=1 host=%s\n' \
  $$ "$(hostname)" > "$FR_TMP/live/.fr-alive-vg-r00000-p$$"
memcheck trigger "$FR_DUMP" --trigger "$FR_TMP/live" --reason "valgrind"
[ "$got" -eq 0 ] && [ -f "$FR_TMP/live/TRIGGER" ] || fail "fr-dump --trigger made no trigger file under valgrind"
echo "valgrind: $n tool runs memcheck-clean"
