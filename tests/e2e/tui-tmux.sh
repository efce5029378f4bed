#!/bin/sh
# tui-tmux.sh — fr-tui interactive, driven under tmux: open the committed C1
# sample, check that the first screen shows the culprit (rank 5), move away,
# step to the next frame (`]`), jump to the root cause (`r`) and check that
# rank 5 is selected again and in the detail pane; then find a rank (`/`),
# Home/End/PgDn/`g`, fold (`f`), show the help (`?`), the links (`l`), resize, quit (`q`);
# then step through the frames of a generated two-frame set (`[`, `]`) and
# choose communicators from the list (`c`).
#
# Run by `make check`; skipped (77) when tmux is not installed.
set -u

if [ -z "${FR_TUI:-}" ] && [ -f tests/testenv.sh ]; then
  . ./tests/testenv.sh
fi
if [ -z "${FR_TUI:-}" ] || [ -z "${FR_SRCDIR:-}" ]; then
  echo "tui-tmux.sh: FR_TUI, FR_SRCDIR not set: run it with make check" >&2
  exit 99
fi
if ! command -v tmux >/dev/null 2>&1; then
  echo "tui-tmux.sh: SKIP: tmux is not installed"
  exit 77
fi
[ -x "$FR_TUI" ] || { echo "tui-tmux.sh: $FR_TUI is not built" >&2; exit 99; }

tmp=$(mktemp -d) || exit 99
sock="fr-tui-test-$$"
cleanup() {
  tmux -L "$sock" kill-server >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
cd "$tmp" || exit 99
cp -R "$FR_SRCDIR/samples/c1-rank-stops" c1

failures=0
checks=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

screen() {
  tmux -L "$sock" capture-pane -p -t frtui >screen.txt 2>/dev/null
}

# expect NAME TEXT: within 10 s (slow sanitizer builds) the screen shows TEXT (a fixed string).
expect() {
  checks=$((checks + 1))
  i=0
  while [ $i -lt 100 ]; do
    screen
    if grep -qF -- "$2" screen.txt; then return 0; fi
    sleep 0.1
    i=$((i + 1))
  done
  fail "$1: '$2' not on the screen:"
  sed 's/^/  | /' screen.txt
}

# gone NAME TEXT: within 10 s the screen no longer shows TEXT.
gone() {
  checks=$((checks + 1))
  i=0
  while [ $i -lt 100 ]; do
    screen
    if ! grep -qF -- "$2" screen.txt; then return 0; fi
    sleep 0.1
    i=$((i + 1))
  done
  fail "$1: '$2' still on the screen:"
  sed 's/^/  | /' screen.txt
}

# absent NAME TEXT: the screen (as now) does not show TEXT.
absent() {
  checks=$((checks + 1))
  screen
  if grep -qF -- "$2" screen.txt; then
    fail "$1: '$2' still on the screen"
  fi
}

keys() {
  tmux -L "$sock" send-keys -t frtui "$@"
}

tmux -L "$sock" -f /dev/null new-session -d -s frtui -x 100 -y 30 \
  "LC_ALL=C '$FR_TUI' c1; echo fr-tui-exit=\$?; sleep 30" || {
  echo "tui-tmux.sh: cannot start tmux" >&2
  exit 99
}

# The first screen: verdict, and rank 5 selected with its detail, no key pressed.
expect verdict " HANG: rank 5 never entered AllReduce seq 73"
expect first-selected ">         5 C C"
expect first-detail "-- rank 5 (comm rank 5), seq 73"

# Move down twice (rank 7), then next frame and root cause.
keys Down j
expect moved "-- rank 7 (comm rank 7), seq 73"
absent moved-away ">         5 C C"
keys ']'
expect next-frame "frame 0 is the latest"
keys r
expect root-msg "root cause: rank 5"
expect root-selected ">         5 C C"
expect root-detail "-- rank 5 (comm rank 5), seq 73"
expect root-never "never reached: last enqueued seq 72"

# Find rank 2.
keys / 2 Enter
expect find-detail "-- rank 2 (comm rank 2), seq 73"
expect find-row ">         2 C C"
# A step left shows rank 2's record at seq 72.
keys Left
expect left "Broadcast  count"
# Fold: the waiting ranks become one row.
keys f
expect fold "   0-4,6-7 C C"
expect fold-detail "(folded with the same cells: 0-4,6-7)"
keys f
expect unfold "unfolded: 8 rows"
# Home, End (the last seq, right of the stuck one), PgDn, and back to the stuck op.
keys Home
expect home "  rank      0         5         10"
keys End
expect end "* v"
keys NPage
expect pgdn ">         7 C"
keys g
expect stuck "stuck op: seq 73"
# Missing links, wait-for chain.
keys l
expect links "missing link 4 -> 5"
keys w
expect waitfor "wait-for chain: ranks 0-4,6-7 wait in comm ecfe1a86ae6548ad seq 73 for rank 5"
# Help, closed by any key.
keys '?'
expect help "-- keys (any key closes this help)"
keys x
expect help-closed "|  ? keys  q quit"
# The terminal shrinks (SIGWINCH): the verdict wraps onto a second row.
tmux -L "$sock" resize-window -t frtui -x 70 -y 24
expect resized "   ranks 0-4,6-7 wait in it."
# Quit.
keys q
expect quit "fr-tui-exit=1"
tmux -L "$sock" kill-session -t frtui

# Frames: C1 in two frames; the view opens on the latest (the waiting ranks
# started seq 37), `[` shows frame 0 (they had only enqueued it), `]` again
# the latest.
"$FR_BUILDDIR/tests/unit/check_analyze" --mkdumps dumps >/dev/null || {
  echo "tui-tmux.sh: cannot generate the dumps" >&2
  exit 99
}
tmux -L "$sock" -f /dev/null new-session -d -s frtui -x 100 -y 30 \
  "LC_ALL=C '$FR_TUI' dumps/frames; echo fr-tui-exit=\$?; sleep 30" || exit 99
expect frames-latest "frame 1 (latest) at +2.005 s"
expect frames-started "          0 C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C S"
keys '['
expect frames-first "frame 0 of 0-1 at +0.005 s"
expect frames-enqueued "          0 C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C C E"
keys '['
expect frames-at-first "already at the first frame"
keys ']'
expect frames-back "frame 1 (latest)"
# The communicator chooser: `c` lists the three comms, Down and Enter show
# the second; `c` then Esc keeps it; `c`, Home, Enter goes back to the first.
keys c
expect chooser "-- choose a communicator (3)"
expect chooser-sel ">  1  comm 00000000000000c1"
keys Down
expect chooser-down ">  2  comm 3f1e6a0b94c2d701"
keys Enter
gone chooser-closed "-- choose a communicator"
expect next-comm "comm 3f1e6a0b94c2d701 (2/3)"
keys g
expect not-stuck "this communicator is not stuck"
keys c
expect chooser-again "-- choose a communicator (3)"
keys Escape
gone chooser-esc-closed "-- choose a communicator"
expect chooser-esc "comm 3f1e6a0b94c2d701 (2/3)"
keys c
expect chooser-third "-- choose a communicator (3)"
keys Home Enter
expect back-comm "comm 00000000000000c1 (1/3)"
keys q
expect frames-quit "fr-tui-exit=1"

echo "tui-tmux.sh: $checks checks, $failures failed"
[ "$failures" -eq 0 ]
