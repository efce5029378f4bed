#!/bin/sh
# Hang kinds from the seventh break-it pass (2026-12-03: tests/scenarios/b7-*.scn) and our
# variants (b7v-*.scn): a pipeline rank that posts the wrong p2p op (a recv where it sends, a
# send where it receives, an extra one), runs fewer micro-batches, skips a periodic evaluation
# op, or swaps two comms' ops, closing a deadlock cycle.  The cycle's ranks are named (one of
# them is at fault), but for a rank whose round left out calls (a short batch: the rule of a
# call left out); the rounds of fr-analyze(1) say which rank changed what it does where
# its records show a period, never blaming it alone: in b7v-last-step-extra-op-w3 the rank
# that changed is the innocent one (its peer left out the last step's extra call).  And
# (b7n-*.scn) ranks without a dump in a rooted collective's chain: killed in it, or waiting
# behind another op with an empty dump, which the dumps cannot tell apart; the summary says
# where the data stopped, the rank is not blamed.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
# Does rank $1 wait in the stuck broadcast of the last run's analysis?
waits_in_broadcast() {
  python3 -c 'import json,sys
a = json.load(open(sys.argv[1]))
sys.exit(0 if any(c.get("stuck") and c["stuck"]["op"] == "Broadcast" and int(sys.argv[2]) in c["stuck"]["waiting_ranks"]
                  for c in a["comms"]) else 1)' "$FR_TMP/run/analysis.json" "$1"
}
for scn in "$FR_SRCDIR"/tests/scenarios/b7n-*.scn; do
  name=$(basename "$scn" .scn)
  run_case "$name" >/dev/null
  text=$(tr '\n' ' ' < "$FR_TMP/run/verdict-full.txt" | tr -s ' ')
  case $name in
    b7n-crash-two-*) where=2
      # rank 5 always; rank 2 too when rank 4 happened to reach the broadcast
      # (then nobody with a dump lags there, and its members without one are awaited)
      roots=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"]["root_cause_ranks"])' \
        "$FR_TMP/run/analysis.json")
      case $roots in "[5]"|"[2, 5]") ;; *) fail "$name: root causes $roots, expected [5] or [2, 5]" ;; esac
      # where the data stopped at 2, only when rank 3 still waits in the
      # broadcast: the kill races with the broadcast rank 2 queued before it,
      # and where that completed, rank 3 completed it too (nothing stopped)
      waits_in_broadcast 3 || where= ;;
    b7n-crash-and-stop-*) where=3
      # (the same race: where rank 3 forwarded the data before the kill,
      # rank 4 completed the broadcast and rank 7 waits for rank 6 alone)
      if waits_in_broadcast 4; then
        echo "$text" | grep -q "the data stopped at rank 3: rank 4 waits in RecvWait for it, while rank 2, which sends to it, completed the op" ||
          fail "$name: the summary does not say where the data stopped: $text"
      else
        where=
      fi ;;
    *) where= ;;
  esac
  if [ -n "$where" ]; then
    # said in the summary when the verdict's comm is the broadcast's, and
    # as the link in that comm's details either way
    echo "$text" | grep -q "$where->[0-9]* channel [0-9]* (RecvWait for" ||
      fail "$name: where the data stopped is not named: $text"
  fi
  echo "$name: ok"
done
for scn in "$FR_SRCDIR"/tests/scenarios/b7-*.scn "$FR_SRCDIR"/tests/scenarios/b7v-*.scn; do
  name=$(basename "$scn" .scn)
  run_case "$name" >/dev/null
  text=$(tr '\n' ' ' < "$FR_TMP/run/verdict-full.txt" | tr -s ' ')
  # the rank the rounds say changed (its header: "the summary says rank N changed"), or none
  want=$(sed -n 's/^# *//p' "$scn" | tr '\n' ' ' | tr -s ' ' | sed -n 's/.*the summary says rank \([0-9]*\) changed.*/\1/p')
  case $name in
    b7v-last-step-extra-op-w3) want=0 ;; # the innocent one: said, not blamed alone
    b7-pipe-microbatch-short-w4 | b7v-eval-every-third-skipped-w3 | b7v-microbatch-short-late-w6 | \
    b7v-tp-pp-short-batch-w4) # calls left out: that rule
      echo "$text" | grep -q "rank [0-9] went astray: in each earlier round it called \(Recv from\|Send to\) rank [0-9]" ||
        fail "$name: the call left out is not said: $text" ;;
  esac
  if [ -n "$want" ]; then
    echo "$text" | grep -q "rank $want changed what it does: its ops since its latest collective" ||
      fail "$name: the summary does not say rank $want changed what it does: $text"
  elif echo "$text" | grep -q "changed what it does"; then
    fail "$name: the rounds said a change where none is known: $text"
  fi
  echo "$name: ok"
done
