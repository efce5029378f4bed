#!/bin/sh
# tui.sh — fr-tui's command line and its batch screens: help and version,
# usage errors, golden screens of the committed C1 sample and of generated
# dump sets (C1, C1 in two frames, folded, another communicator, a
# mismatch, a deadlock cycle, a culprit without a dump), hostile
# strings sanitised and a corrupt file shown as a problem line.
#
# Run by `make check`.  FR_UPDATE_GOLDEN=1 rewrites the goldens in
# tests/golden/ instead of comparing; FR_KEEP=1 keeps the scratch directory.
set -u

if [ -z "${FR_TUI:-}" ] && [ -f tests/testenv.sh ]; then
  . ./tests/testenv.sh
fi
if [ -z "${FR_TUI:-}" ] || [ -z "${FR_SRCDIR:-}" ]; then
  echo "tui.sh: FR_TUI, FR_SRCDIR not set: run it with make check" >&2
  exit 99
fi
MKDUMPS="$FR_BUILDDIR/tests/unit/check_analyze"
GOLDEN="$FR_SRCDIR/tests/golden"
for p in "$FR_TUI" "$MKDUMPS"; do
  [ -x "$p" ] || { echo "tui.sh: $p is not built" >&2; exit 99; }
done

. "$FR_SRCDIR/tests/e2e/golden-lib.sh"

"$MKDUMPS" --mkdumps dumps >/dev/null || { echo "tui.sh: cannot generate the dumps" >&2; exit 99; }
cp -R "$FR_SRCDIR/samples/c1-rank-stops" sample-c1

# ---- help, version, usage errors ----------------------------------------------------
run help 0 "$FR_TUI" --help
golden fr-tui.help help.out
run version 0 "$FR_TUI" --version
contains version version.out "fr-tui (flightrec)"
run no-args 2 "$FR_TUI"
contains no-args no-args.err "Try 'fr-tui --help'"
run bad-option 2 "$FR_TUI" --no-such-option dumps/c1
run bad-frame 2 "$FR_TUI" --batch --frame x dumps/c1
run bad-cols 2 "$FR_TUI" --batch --cols 5 dumps/c1
run bad-comm 2 "$FR_TUI" --batch --comm 1234 dumps/c1
# a job's output directory: the dumps below it are read, and that is said
mkdir -p jobout && cp -R sample-c1 jobout/dumps
run tui-jobout 1 "$FR_TUI" --batch jobout
contains tui-jobout tui-jobout.err "fr-tui: note: jobout holds no dump; read the dumps below it: jobout/dumps"
contains bad-comm bad-comm.err "no communicator 0000000000001234"

# ---- exit status and input that cannot be shown --------------------------------------
# One contract for every tool: 0 nothing wrong, 1 a problem found (every
# batch screen below shows a hang, mismatch or deadlock), 2 unusable input
# or usage.  Without a terminal and without --batch: refused at once, never
# a screen that waits for input it cannot get (timeout(1) catches a spin).
run no-tty 2 timeout 10 "$FR_TUI" dumps/c1 </dev/null
contains no-tty no-tty.err "standard input is not a terminal; --batch prints one screen as text"
cp -R "$FR_SRCDIR/samples/h200-frames-callsites" sample-healthy
run healthy 0 "$FR_TUI" --batch sample-healthy
contains healthy healthy.out "HEALTHY"
run missing-path 2 timeout 10 "$FR_TUI" no-such-dir
contains missing-path missing-path.err "fr-tui: no-such-dir: cannot open"
contains missing-path-none missing-path.err "fr-tui: no usable dump in the input"
mkdir empty-dir
run empty-dir 2 timeout 10 "$FR_TUI" --batch empty-dir
contains empty-dir empty-dir.err "no usable dump in the input"

# ---- golden screens -------------------------------------------------------------------
# The committed C1 sample: the first screen shows the culprit, rank 5,
# selected, at the stuck op, with its detail pane.
run sample-c1 1 "$FR_TUI" --batch sample-c1
golden fr-tui-sample-c1.txt sample-c1.out
contains sample-c1-selected sample-c1.out ">         5 C C"
contains sample-c1-detail sample-c1.out "-- rank 5 (comm rank 5), seq 73"
contains sample-c1-never sample-c1.out "never reached: last enqueued seq 72"
contains sample-c1-others sample-c1.out "the others called AllReduce  count 1024  float32  sum there"
contains sample-c1-legend sample-c1.out "C completed S started E enqueued . never reached ! mismatch"
contains sample-c1-verdict sample-c1.out " HANG: rank 5 never entered AllReduce seq 73"

# The committed C11 sample (frz 1.2, proxy progress from the profiler
# plugin): no rank to blame, so the first screen shows the missing link; the
# detail pane has NCCL's own seq/algorithm and the rank's proxy progress.
cp -R "$FR_SRCDIR/samples/c11-link-stalls" sample-c11
run sample-c11 1 "$FR_TUI" --batch --cols 120 --rows 30 sample-c11
golden fr-tui-sample-c11.txt sample-c11.out
contains sample-c11-verdict sample-c11.out " HANG: all joined, not completed"
contains sample-c11-link sample-c11.out "missing link 3 -> 4  comm fdec26a2727da2e4 seq 5 channel 1 stopped in SendPeerWait"
contains sample-c11-nccl sample-c11.out "NCCL seq 4 Ring/Simple 2 channels"
contains sample-c11-proxy sample-c11.out "proxy: ch 0 recv<-7 RecvWait for 1.1 s (60/61 steps)"
# rank 3, the sender of the stalled link: its channel 1 send waits for rank 4
run sample-c11-r3 1 "$FR_TUI" --batch --cols 160 --rows 30 --rank 3 sample-c11
contains sample-c11-r3-proxy sample-c11-r3.out "ch 1 send->4 SendPeerWait"

run c1 1 "$FR_TUI" --batch --cols 100 --rows 24 dumps/c1
golden fr-tui-c1.txt c1.out
run c1-narrow 1 "$FR_TUI" --batch --cols 60 --rows 20 dumps/c1
golden fr-tui-c1-narrow.txt c1-narrow.out

# Two frames: frame 0 shows the waiting ranks enqueued (E), frame 1 started (S).
run frame0 1 "$FR_TUI" --batch --rows 24 --frame 0 dumps/frames
golden fr-tui-frames-f0.txt frame0.out
contains frame0-state frame0.out "          0 C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C E"
run frame1 1 "$FR_TUI" --batch --rows 24 dumps/frames
golden fr-tui-frames-f1.txt frame1.out
contains frame1-state frame1.out "          0 C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C S"
contains frame1-latest frame1.out "frame 1 (latest) at +2.005 s"
contains frame0-of frame0.out "frame 0 of 0-1"

# Folding: the seven waiting ranks collapse into one row, rank 5 stays alone.
run fold 1 "$FR_TUI" --batch --rows 24 --fold dumps/c1
golden fr-tui-c1-fold.txt fold.out
contains fold-waiting fold.out "    0-4,6-7 C"

# Another communicator: one of the split comms, nothing stuck there.
run split 1 "$FR_TUI" --batch --rows 24 --comm 3f1e6a0b94c2d701 dumps/c1
golden fr-tui-c1-split.txt split.out
contains split-comm split.out "comm 3f1e6a0b94c2d701 (2/3)  4 ranks"

# A mismatch: rank 7, the minority, selected at seq 10, marked '!'.
run mismatch 1 "$FR_TUI" --batch --rows 24 dumps/mismatch
golden fr-tui-mismatch.txt mismatch.out
contains mismatch-cell mismatch.out ">         7 C C C C C C C C C C ! C"
contains mismatch-detail mismatch.out "AllReduce  count 409598  float32"

# A deadlock: the cycle is on the first screen.
run cycle 1 "$FR_TUI" --batch --rows 24 dumps/cycle
golden fr-tui-cycle.txt cycle.out
contains cycle-info cycle.out "  rank 1 waits in comm 000000000000000c seq 0 for rank 0"

# The culprit left no dump: its row is still there, selected, marked '?'.
run nodump 1 "$FR_TUI" --batch --rows 24 dumps/nodump
golden fr-tui-nodump.txt nodump.out
contains nodump-row nodump.out ">         5 ? ? ?"
contains nodump-detail nodump.out "no dump from this rank: comm rank 5, member: no_dump"

# ---- safety -----------------------------------------------------------------------------
run hostile 0 "$FR_TUI" --batch --rows 24 dumps/hostile
checks=$((checks + 1))
if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" hostile.out; then
  fail "hostile: a control character reached the screen"
fi
contains hostile-host hostile.out "host node?]0;owned?"

mkdir corrupt
cp dumps/c1/*.frz corrupt/
printf 'not a flightrec dump\n\033[2J' >corrupt/job-42-r00009-f0000.frz
head -c 100 dumps/c1/job-42-r00003-f0000.frz >corrupt/job-42-r00003-f0000.frz
run corrupt 1 "$FR_TUI" --batch --rows 24 corrupt
contains corrupt-problem corrupt.out "problem: corrupt/job-42-r00009-f0000.frz:"
contains corrupt-truncated corrupt.out "problem: corrupt/job-42-r00003-f0000.frz:"
checks=$((checks + 1))
if LC_ALL=C grep -q "$(printf '\033')" corrupt.out; then
  fail "corrupt: an escape reached the screen"
fi

# Text cut at the screen's edge ends at a word, with " ...", never mid-word
# (the detail pane's trigger and proxy lines, the problems, the info lines)
run narrow-words 1 "$FR_TUI" --batch --cols 60 --rows 20 dumps/c1
checks=$((checks + 1))
grep -q '^last enqueued 36  started 36  completed 36  retained \.\.\.$' narrow-words.out ||
  fail "narrow-words: the detail line is not cut at a word: $(grep '^last enqueued' narrow-words.out)"
checks=$((checks + 1))
grep -q '^comm 00000000000000c1 (1/3)  8 ranks  seqs 0..37  stuck \.\.\.$' narrow-words.out ||
  fail "narrow-words: the comm line is not cut at a word: $(grep '^comm' narrow-words.out)"

# The stack pane (key t) takes the rows the timeline leaves empty: with room
# for them, every frame of the rank's stack, no "... more frames" line; on a
# short screen, its 8 lines end in that line.  A live job (the simulator),
# whose dumps carry the threads' stacks.
if [ -n "${FR_RUN_SCENARIO:-}" ] && "$FR_RUN_SCENARIO" --no-analyze \
     "$FR_SRCDIR/tests/scenarios/r-watchdog-destroy.scn" live-stacks >/dev/null 2>&1; then
  last=$(ls live-stacks/dumps/*-r00002-f*.frz | tail -1)
  nfr=$("$FR_DUMP" "$last" | sed -n '/^  thread .* main/,/^  thread /p' | grep -c '^    #')
  run stacks-tall 1 "$FR_TUI" --batch --stacks --rank 2 --rows 50 live-stacks/dumps
  checks=$((checks + 1))
  got=$(grep -c '^  #' stacks-tall.out)
  if [ "$nfr" -le 30 ]; then
    [ "$got" = "$nfr" ] && ! grep -q 'more frames' stacks-tall.out ||
      fail "stacks-tall: $got of the $nfr frames shown: $(cat stacks-tall.out)"
  fi
  run stacks-short 1 "$FR_TUI" --batch --stacks --rank 2 --rows 24 live-stacks/dumps
  checks=$((checks + 1))
  if [ "$nfr" -gt 7 ]; then
    grep -q "^  \.\.\. $((nfr - 6)) more frames" stacks-short.out ||
      fail "stacks-short: no '... $((nfr - 6)) more frames' in $(cat stacks-short.out)"
  fi
else
  fail "run-scenario r-watchdog-destroy failed"
fi

echo "tui.sh: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
