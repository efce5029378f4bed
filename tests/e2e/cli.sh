#!/bin/sh
# cli.sh — the command lines of fr-analyze and fr-dump: help and version,
# exit statuses of usage errors and unusable files, and golden outputs on a
# deterministic dump set (written by `check_analyze --mkdumps`).
#
# Run by `make check` (tests/testenv.sh provides FR_ANALYZE, FR_DUMP, ...).
# FR_UPDATE_GOLDEN=1 rewrites the goldens in tests/golden/ instead of
# comparing (review the diff before committing it); FR_KEEP=1 keeps the
# scratch directory.
set -u

if [ -z "${FR_ANALYZE:-}" ] && [ -f tests/testenv.sh ]; then
  . ./tests/testenv.sh
fi
if [ -z "${FR_ANALYZE:-}" ] || [ -z "${FR_DUMP:-}" ] || [ -z "${FR_SRCDIR:-}" ]; then
  echo "cli.sh: FR_ANALYZE, FR_DUMP, FR_SRCDIR not set: run it with make check" >&2
  exit 99
fi
MKDUMPS="$FR_BUILDDIR/tests/unit/check_analyze"
GOLDEN="$FR_SRCDIR/tests/golden"
for p in "$FR_ANALYZE" "$FR_DUMP" "$FR_JSON_EXPECT" "$MKDUMPS"; do
  if [ ! -x "$p" ]; then
    echo "cli.sh: $p is not built" >&2
    exit 99
  fi
done

. "$FR_SRCDIR/tests/e2e/golden-lib.sh"

# ---- the dump sets ------------------------------------------------------------
"$MKDUMPS" --mkdumps dumps || { echo "cli.sh: cannot generate the dumps" >&2; exit 99; }
printf 'not a flightrec dump\n\033[2J' >garbage.frz

# ---- help and version -------------------------------------------------------------
run analyze-help 0 "$FR_ANALYZE" --help
golden fr-analyze.help analyze-help.out
run dump-help 0 "$FR_DUMP" --help
golden fr-dump.help dump-help.out
run analyze-version 0 "$FR_ANALYZE" --version
grep -Eq '^fr-analyze \(flightrec\) [0-9]+\.[0-9]+\.[0-9]+$' analyze-version.out ||
  fail "fr-analyze --version: $(cat analyze-version.out)"
run dump-version 0 "$FR_DUMP" --version
grep -Eq '^fr-dump \(flightrec\) [0-9]+\.[0-9]+\.[0-9]+$' dump-version.out ||
  fail "fr-dump --version: $(cat dump-version.out)"

# ---- usage errors: status 2 and a hint -----------------------------------------------
run analyze-noargs 2 "$FR_ANALYZE"
contains analyze-noargs analyze-noargs.err "fr-analyze: missing PATH"
run analyze-badopt 2 "$FR_ANALYZE" --bogus dumps/c1
contains analyze-badopt analyze-badopt.err "fr-analyze: unrecognized option '--bogus'"
contains analyze-badopt analyze-badopt.err "Try 'fr-analyze --help'"
run analyze-noarg-o 2 "$FR_ANALYZE" dumps/c1 -o
run dump-noargs 2 "$FR_DUMP"
contains dump-noargs dump-noargs.err "fr-dump: missing PATH"
run dump-badopt 2 "$FR_DUMP" -q dumps/c1/job-42-r00000-f0000.frz
contains dump-badopt dump-badopt.err "fr-dump: invalid option -- 'q'"
run dump-reason-alone 2 "$FR_DUMP" --reason why
run dump-trigger-and-file 2 "$FR_DUMP" --trigger . dumps/c1/job-42-r00000-f0000.frz

# ---- unusable input: status 2, the file named ------------------------------------------
run analyze-missing 2 "$FR_ANALYZE" no-such-dir
contains analyze-missing analyze-missing.err "no-such-dir"
# a job's output directory: logs beside dumps/ (and other subdirectories):
# the logs are not dumps, the dumps one level down are read, and said so
mkdir -p job-out/dumps job-out/bootstrap
cp dumps/c1/*.frz job-out/dumps/
printf 'rank 0 log\n' > job-out/rank-0.log
printf 'id\n' > job-out/bootstrap/world.0.id
run analyze-parent 1 "$FR_ANALYZE" job-out
contains analyze-parent analyze-parent.out "note:          job-out holds no dump; read the dumps below it: job-out/dumps"
contains analyze-parent-problems analyze-parent.out "problems:      none"
contains analyze-parent-verdict analyze-parent.out "root cause:     5"
checks=$((checks + 1))
if grep -q "bad magic" analyze-parent.out; then fail "analyze-parent: the logs were read as dumps"; fi
run dump-parent 0 "$FR_DUMP" --check job-out
contains dump-parent dump-parent.err "fr-dump: job-out holds no dump; reading the dumps below it: job-out/dumps"
contains dump-parent-ok dump-parent.out "job-out/dumps/job-42-r00005-f0000.frz: ok"
# fr-record takes -V like the other tools, and runs from the build tree
# before `make install` (the library built beside it)
FR_RECORD="$FR_BUILDDIR/librecorder/fr-record"
run record-V 0 "$FR_RECORD" -V
contains record-V record-V.out "fr-record (flightrec)"
installed=$(sed -n 's/^lib="${FR_RECORDER_LIB:-\(.*\)}"$/\1/p' "$FR_RECORD")
# (an installed library comes first; a sanitizer build's library cannot be
# preloaded into a plain program, so the run is checked in the plain build)
plain=1
case "${FR_SAN_CFLAGS:-}" in *sanitize=*) plain=0 ;; esac
if [ "$plain" = 1 ] && [ ! -f "$installed" ]; then
  run record-build-tree 0 env -u FR_RECORDER_LIB "$FR_RECORD" sh -c 'echo "$LD_PRELOAD"'
  contains record-build-tree record-build-tree.out "librecorder/.libs/librecorder.so"
fi
# a directory without files: said, exit 2 (unusable input), [] with --json
mkdir -p empty-dir2
run dump-empty 2 "$FR_DUMP" empty-dir2
contains dump-empty dump-empty.err "fr-dump: empty-dir2: no file to read in the directory"
run dump-empty-json 2 "$FR_DUMP" --json empty-dir2
contains dump-empty-json dump-empty-json.out "[]"
run dump-empty-check 2 "$FR_DUMP" --check empty-dir2
contains dump-empty-check dump-empty-check.err "no file to read"
# the culprit's dump truncated: the verdict says so, not "left no dump"
mkdir -p trunc
cp dumps/c1/*.frz trunc/
head -c 300 dumps/c1/job-42-r00005-f0000.frz > trunc/job-42-r00005-f0000.frz
run analyze-trunc 1 "$FR_ANALYZE" trunc
contains analyze-trunc analyze-trunc.out "whose dump could not be read"
run analyze-garbage 2 "$FR_ANALYZE" garbage.frz
contains analyze-garbage analyze-garbage.err "garbage.frz: at byte 0:"
contains analyze-garbage analyze-garbage.out "verdict: inconclusive"
run dump-missing 2 "$FR_DUMP" no-such-file.frz
contains dump-missing dump-missing.err "fr-dump: no-such-file.frz: cannot open: No such file or directory"
checks=$((checks + 1))
! grep -q "at byte" dump-missing.err || fail "dump-missing: a file that cannot be opened has no byte offset: $(cat dump-missing.err)"
# --check of a path that cannot be read: unusable input (2), said on its line
run dump-check-missing 2 "$FR_DUMP" --check no-such-file.frz
contains dump-check-missing dump-check-missing.out "no-such-file.frz: bad: cannot open: No such file or directory"
# -o FILE of a run with nothing to write leaves an existing FILE as it was
echo keep > kept.json
run dump-o-keep 2 "$FR_DUMP" --format=chrome-trace -o kept.json no-such-file.frz
checks=$((checks + 1))
[ "$(cat kept.json)" = keep ] || fail "dump-o-keep: a failed run emptied -o's file"
contains dump-o-keep dump-o-keep.err "fr-dump: nothing to write; kept.json left as it was"
# a job's output directory with more files of its own than dumps below it
mkdir -p jobout/dumps
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "a log line" > jobout/rank-$i.log; done
cp dumps/c1/job-42-r00000-f0000.frz dumps/c1/job-42-r00001-f0000.frz jobout/dumps/
run dump-jobout 0 "$FR_DUMP" --check jobout
contains dump-jobout dump-jobout.err "fr-dump: jobout holds no dump; reading the dumps below it: jobout/dumps"
contains dump-jobout dump-jobout.out "jobout/dumps/job-42-r00001-f0000.frz: ok"
# a Chrome trace of nothing readable: no (empty) trace on standard output
run dump-trace-missing 2 "$FR_DUMP" --format=chrome-trace no-such-file.frz
checks=$((checks + 1))
[ ! -s dump-trace-missing.out ] || fail "dump-trace-missing: a trace of nothing: $(cat dump-trace-missing.out)"
run dump-garbage 2 "$FR_DUMP" garbage.frz
contains dump-garbage dump-garbage.err "fr-dump: garbage.frz: at byte 0:"
run dump-good-and-garbage 2 "$FR_DUMP" dumps/c1/job-42-r00000-f0000.frz garbage.frz
contains dump-good-and-garbage dump-good-and-garbage.out "process:   rank 0 of 8"
mkdir empty-dir
run analyze-empty-dir 2 "$FR_ANALYZE" empty-dir
contains analyze-empty-dir analyze-empty-dir.out "empty-dir: the directory holds no file"
# a trigger file alone: a dump was asked for, none written yet; said so
mkdir trigger-only-dir && echo "reason=test" > trigger-only-dir/TRIGGER
run analyze-trigger-only 2 "$FR_ANALYZE" trigger-only-dir
contains analyze-trigger-only analyze-trigger-only.err "trigger-only-dir: the directory holds no file but TRIGGER (a dump was asked for"

# a directory holding only the announcements of running processes: who
# was running (rank, pid, host) and what would help, not "no file"
mkdir alive-only
printf 'flightrec-alive v1 job=job-9 rank=3 world=4 local_rank=3 pid=4711 time_ns=1700000000000000000 trigger=1 host=node07\n' \
  > alive-only/.fr-alive-job-9-r00003-p4711
printf 'flightrec-alive v1 job=job-9 rank=1 world=4 local_rank=1 pid=4709 time_ns=1700000000000000000 trigger=1 host=node05\n' \
  > alive-only/.fr-alive-job-9-r00001-p4709
run analyze-alive-only 2 "$FR_ANALYZE" alive-only
tr '\n' ' ' < analyze-alive-only.out | tr -s ' ' > alive-only.flat
contains analyze-alive-only alive-only.flat "rank 3 as pid 4711 on host node07"
contains analyze-alive-only alive-only.flat "rank 1 as pid 4709 on host node05"
contains analyze-alive-only alive-only.flat "fr-dump --trigger alive-only"
grep -q "holds no file" analyze-alive-only.out analyze-alive-only.err &&
  fail "analyze-alive-only: said the directory holds no file"

# one file of a complete run analysed alone: the other ranks' dumps lie
# beside it, outside the inputs (not ranks that left no dump), and no
# trigger is suggested for a job that is over
# (rank 5 alone: it is idle, nothing to tell; rank 0 alone: it waits for
# ranks whose dumps were not given)
run analyze-one-file 2 "$FR_ANALYZE" dumps/c1/job-42-r00005-f0000.frz
tr '\n' ' ' < analyze-one-file.out | tr -s ' ' > one-file.flat
contains analyze-one-file one-file.flat "ranks 0-4,6-7 are outside the inputs"
contains analyze-one-file one-file.flat "fr-analyze dumps/c1"
run analyze-one-waiter 1 "$FR_ANALYZE" dumps/c1/job-42-r00000-f0000.frz
tr '\n' ' ' < analyze-one-waiter.out | tr -s ' ' > one-waiter.flat
contains analyze-one-waiter one-waiter.flat "ranks 1-7, outside the inputs"
for f in analyze-one-file.out analyze-one-waiter.out; do
  grep -q "left no dump\|--trigger" $f && fail "$f: ranks said to leave no dump, or a trigger suggested"
done
run dump-trigger-only 2 "$FR_DUMP" trigger-only-dir
contains dump-trigger-only dump-trigger-only.err "fr-dump: trigger-only-dir: no file to read in the directory (only a trigger file: a dump was asked for"
run dump-empty-dir 2 "$FR_DUMP" empty-dir # no file: said on stderr, nothing on stdout (and no qsort of NULL)
[ ! -s dump-empty-dir.out ] || fail "dump-empty-dir: printed $(head -3 dump-empty-dir.out)"

# ---- golden outputs ---------------------------------------------------------------------------
run dump-text 0 "$FR_DUMP" dumps/c1/job-42-r00005-f0000.frz
golden fr-dump-rank05.txt dump-text.out
run dump-json 0 "$FR_DUMP" --json dumps/c1/job-42-r00005-f0000.frz
checks=$((checks + 1))
"$FR_JSON_EXPECT" "$GOLDEN/fr-dump-rank05.expected.json" dump-json.out || fail "fr-dump --json"
# each record says which comm rank of the process made it, on which device (frz 1.3)
contains dump-json dump-json.out '"comm_rank":	5,'
contains dump-json dump-json.out '"cuda_device":	1,'
run dump-json-two 0 "$FR_DUMP" --json dumps/c1/job-42-r00004-f0000.frz dumps/c1/job-42-r00005-f0000.frz
contains dump-json-two dump-json-two.out '"global_rank":	4'
run analyze-text 1 "$FR_ANALYZE" dumps/c1
golden fr-analyze-c1.txt analyze-text.out
run analyze-json 1 "$FR_ANALYZE" --json dumps/c1
golden fr-analyze-c1.json analyze-json.out
run analyze-json-o 1 "$FR_ANALYZE" --json -o report.json dumps/c1
checks=$((checks + 1))
cmp -s report.json analyze-json.out || fail "fr-analyze -o: the file differs from standard output"
[ -s analyze-json-o.out ] && fail "fr-analyze -o: wrote to standard output too"
checks=$((checks + 1))
"$FR_JSON_EXPECT" "$GOLDEN/c1.expected.json" analyze-json.out || fail "C1 verdict"

# a garbage file among good ones is a problem; the rest is analysed
run analyze-mixed 1 "$FR_ANALYZE" dumps/c1 garbage.frz
contains analyze-mixed analyze-mixed.out "lagging ranks:  5"
contains analyze-mixed analyze-mixed.out "garbage.frz: at byte 0: "

# ---- strings from dumps never reach the terminal raw --------------------------------------------
run dump-hostile 0 "$FR_DUMP" dumps/hostile/*
run dump-hostile-json 0 "$FR_DUMP" --json dumps/hostile/*
run analyze-hostile 0 "$FR_ANALYZE" dumps/hostile
run analyze-hostile-json 0 "$FR_ANALYZE" --json dumps/hostile
for f in dump-hostile.out dump-hostile-json.out analyze-hostile.out analyze-hostile-json.out; do
  checks=$((checks + 1))
  if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$f"; then
    fail "$f: a control character from the dump reached the output"
  fi
  if LC_ALL=C grep -q "$(printf '\342\200\256')" "$f"; then
    fail "$f: a bidirectional override (U+202E) from the dump reached the output"
  fi
done
contains dump-hostile dump-hostile.out 'host "node?]0;owned?"'

# ---- the trigger file ---------------------------------------------------------------------------
mkdir live
# nobody listens in an empty directory: the file is made, exit 1, and why
run trigger 1 "$FR_DUMP" --trigger live --reason "$(printf 'stuck at step 37\nreally\033[1m')"
contains trigger trigger.out "created live/TRIGGER"
contains trigger trigger.err "fr-dump: no recorder has announced itself in this directory"
checks=$((checks + 1))
if [ ! -f live/TRIGGER ]; then
  fail "no live/TRIGGER"
else
  LC_ALL=C grep -Eq '^flightrec-trigger v1 rank=-1 time_ns=[0-9]+ reason=stuck at step 37 really\[1m$' live/TRIGGER ||
    fail "trigger content: $(cat live/TRIGGER)"
  [ "$(wc -l <live/TRIGGER)" -eq 1 ] || fail "trigger file is not one line"
  case $(ls -l live/TRIGGER) in -rw-------*) ;; *) fail "trigger mode: $(ls -l live/TRIGGER)" ;; esac
  [ "$(ls -A live | wc -l)" -eq 1 ] || fail "temporary files left: $(ls -A live)"
fi
# announcements (frz.md, "Announcements"): ALIVE JOB RANK WORLD PID HOST
alive() {
  printf 'flightrec-alive v1 job=%s rank=%s world=%s local_rank=0 pid=%s time_ns=%s000000000 trigger=1 host=%s\n' \
    "$1" "$2" "$3" "$4" "$2" "$5" > "live/.fr-alive-$1-r0000$2-p$4"
}
sh -c 'exit 0' & dead=$!
wait $dead
here=$(hostname)
alive jobA 0 4 "$dead" "$here"
cp live/TRIGGER gone-before
run trigger-gone 1 "$FR_DUMP" --trigger live
contains trigger-gone trigger-gone.err "no recorder listens: the one process that announced itself here is no longer running"
# a job that died: its trigger file (the first rank's, naming the hang) is not replaced
contains trigger-gone trigger-gone.err "live/TRIGGER left as it was"
checks=$((checks + 1))
cmp -s gone-before live/TRIGGER || fail "trigger-gone: the trigger file of a job that died was replaced"
alive jobB 0 4 $$ "$here"
alive jobB 1 4 $$ "$here"
alive jobB 3 4 123 other-host
printf 'flightrec-alive v2 garbage\n' > live/.fr-alive-junk
run trigger-listeners 0 "$FR_DUMP" --trigger live
contains trigger-listeners trigger-listeners.out "3 of the 4 ranks of job jobB watch this directory (ranks 0-1,3, on 2 hosts; rank 2 has not announced itself); older announcements of 1 other job; each dumps within about a second"
alive jobB 2 4 "$dead" "$here"
run trigger-gone-rank 0 "$FR_DUMP" --trigger live
contains trigger-gone-rank trigger-gone-rank.out "3 of the 4 ranks of job jobB watch this directory (ranks 0-1,3, on 2 hosts); rank 2 announced itself on this host but is no longer running"
alive jobB 2 4 $$ "$here"
run trigger-all 0 "$FR_DUMP" --trigger live
contains trigger-all trigger-all.out "all 4 ranks of job jobB watch this directory (ranks 0-3, on 2 hosts)"
# the parent of a watched directory: refused (no stray TRIGGER), pointed below
mkdir -p parent/dumps
cp live/.fr-alive-jobB-r00000-p$$ parent/dumps/
run trigger-parent 2 "$FR_DUMP" --trigger parent
contains trigger-parent trigger-parent.err "fr-dump: no recorder announced itself in parent, but 1 did in parent/dumps: run fr-dump --trigger parent/dumps"
checks=$((checks + 1))
[ ! -e parent/TRIGGER ] || fail "trigger-parent: a TRIGGER was made in the parent directory"
rm -f live/.fr-alive-*
cp live/TRIGGER before
run trigger-again 1 "$FR_DUMP" --trigger live
contains trigger-again trigger-again.out "replaced live/TRIGGER"
checks=$((checks + 1))
! cmp -s before live/TRIGGER || fail "an existing trigger file was not replaced (a new request must be newer)"
ln -s "$PWD/before" live/TRIGGER.link && mv live/TRIGGER.link live/TRIGGER
run trigger-symlink 2 "$FR_DUMP" --trigger live
contains trigger-symlink trigger-symlink.err "not a plain file"
[ "$(cat before)" = "$(cat live/TRIGGER)" ] || fail "the symlink's target changed"
rm -f live/TRIGGER
run trigger-nodir 2 "$FR_DUMP" --trigger no-such-dir
contains trigger-nodir trigger-nodir.err "no-such-dir"

# --why: the rules that decided each kind of verdict the tests cover, by
# the names fr-analyze(1) defines, with the records they read (one golden
# per kind); every line of the default report within 80 columns
cp -r "$FR_SRCDIR/samples/c11-link-stalls" c11 && chmod -R u+w c11
cp -r "$FR_SRCDIR/tests/fixtures/nvrx/gpu_error_1st" gpu-error && chmod -R u+w gpu-error
rm -f gpu-error/*.txt gpu-error/LICENSE* 2>/dev/null
for k in lagging:1:dumps/c1 deadlock:1:dumps/cycle mismatch:1:dumps/mismatch nodump:1:dumps/nodump \
  healthy:0:dumps/hostile link-stopped:1:c11 unfinished:1:gpu-error no-usable-dump:2:alive-only \
  outside-inputs:2:dumps/c1/job-42-r00005-f0000.frz; do
  kind=${k%%:*} rest=${k#*:}
  run why-$kind "${rest%%:*}" "$FR_ANALYZE" --why "${rest#*:}"
  sed -n '/^why (/,/^$/p' why-$kind.out > why-$kind.txt
  golden why-$kind.txt why-$kind.txt
  checks=$((checks + 1))
  awk 'length > 80 { bad = 1 } END { exit bad }' why-$kind.out || fail "why-$kind: a line wider than 80 columns"
  # every rule it names is defined in fr-analyze(1), RULES
  for r in $(sed -n 's/^  \([a-z0-9-]*\): .*/\1/p' why-$kind.txt); do
    checks=$((checks + 1))
    sed -n '/^\.SH RULES/,/^\.SH /p' "$FR_SRCDIR/man/fr-analyze.1" | grep -qx "\.B $r" ||
      fail "why-$kind: rule $r is not defined in fr-analyze(1), RULES"
  done
done

# a full disk: every tool's output that cannot be written is exit 2 and one
# line saying so (a file-size limit of 1 KiB, SIGXFSZ ignored, makes the
# writes fail with EFBIG, as a full disk fails them with ENOSPC)
for tool in "analyze:$FR_ANALYZE --full" "analyze-json:$FR_ANALYZE --json" "dump:$FR_DUMP" "dump-json:$FR_DUMP --json" \
  "tui:$FR_TUI --batch"; do
  checks=$((checks + 1))
  name=${tool%%:*}
  rc=0
  (trap '' XFSZ; ulimit -f 2; exec ${tool#*:} dumps/c1 > full-$name.out 2> full-$name.err) || rc=$?
  case $name in tui) want="fr-tui: cannot write the output" ;; dump*) want="fr-dump: cannot write the output" ;;
    *) want="fr-analyze: cannot write the report" ;; esac
  if [ "$rc" -ne 2 ] || ! grep -q "^$want: " full-$name.err; then
    failures=$((failures + 1))
    echo "FAIL: $name to a full disk: exit $rc, stderr: $(cat full-$name.err)" >&2
  fi
done

echo "cli.sh: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
