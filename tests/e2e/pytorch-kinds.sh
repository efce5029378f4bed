#!/bin/sh
# PyTorch Flight Recorder dumps of the kinds real jobs write, end to end:
# the cases k1 ... k9 of tests/fixtures/pytorch-fr/ (written by
# tests/gen-pytorch-kinds.py, which follows ProcessGroupNCCL: pg_id is not
# the group's name, pg_status is keyed by pg_id and counts p2p works, the
# members of coalesced groups stay scheduled, onlyActive dumps, JSON dumps
# without entries, all-to-all sizes per rank, newer format versions) get the
# verdicts of tests/fixtures/pytorch-fr/kN-*.expected.json (json-expect
# subsets) with the right exit status, and no verdict names an op "none" or a
# collective seq 0 (PyTorch's collective seqs start at 1).  Every case is
# checked and every failure reported before the script fails.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
FIX="$FR_SRCDIR/tests/fixtures/pytorch-fr"
nfail=0

# bad MESSAGE: a failed check; the script goes on and fails at the end.
bad() {
  echo "FAIL: $*" >&2
  nfail=$((nfail + 1))
}

# The verdict block of a text report (the lines before the first blank one)
# without what legitimately reads "none": a label whose whole value is none
# ("  mismatch:       none") and an empty rank set ("; missing none").
verdict_words() {
  sed '/^$/q' "$1" | grep -Ev '^ +[a-z][a-z ]*: +none$' |
    sed -E 's/(waiting|missing|lagging|passed|ahead|ranks?) none//g'
}

# kcase DIR RC: fr-analyze --json DIR exits with RC (0 healthy, 1 a problem
# found, 2 nothing usable) and contains DIR.expected.json; its text report
# names no op "none" and no collective seq 0.
kcase() {
  d=$1
  want=$2
  "$FR_ANALYZE" --json "$FIX/$d" > "$FR_TMP/$d.json" 2> "$FR_TMP/$d.err"
  rc=$?
  [ "$rc" -eq "$want" ] || bad "$d: fr-analyze exited $rc, expected $want"
  if ! "$FR_JSON_EXPECT" "$FIX/$d.expected.json" "$FR_TMP/$d.json" > "$FR_TMP/$d.diff" 2>&1; then
    sed "s|^|  $d: |" "$FR_TMP/$d.diff" >&2
    bad "$d: verdict differs from $d.expected.json"
  fi
  # the summary (one line in the JSON) names a real op and a real seq
  summary=$(grep -m1 '"summary":' "$FR_TMP/$d.json")
  if echo "$summary" | grep -qw none; then bad "$d: the summary says 'none': $summary"; fi
  if echo "$summary" | sed 's/p2p seq 0//g' | grep -Eq '(^|[^a-z])seq 0([^0-9]|$)'; then
    bad "$d: the summary names a seq 0: $summary"
  fi
  "$FR_ANALYZE" "$FIX/$d" > "$FR_TMP/$d.txt" 2>&1
  rc=$?
  [ "$rc" -eq "$want" ] || bad "$d: fr-analyze (text) exited $rc, expected $want"
  if grep -Eq 'collective seq 0([^0-9]|$)' "$FR_TMP/$d.txt"; then
    bad "$d: the text report names 'collective seq 0'"
  fi
  if verdict_words "$FR_TMP/$d.txt" | grep -qw none; then
    verdict_words "$FR_TMP/$d.txt" | grep -w none | sed "s|^|  $d: |" >&2
    bad "$d: the verdict names an op 'none'"
  fi
  if verdict_words "$FR_TMP/$d.txt" | sed 's/p2p seq 0//g' | grep -Eq '(^|[^a-z])seq 0([^0-9]|$)'; then
    bad "$d: the verdict names a seq 0"
  fi
  echo "$d: checked (exit $want expected)"
}

# healthy runs (exit 0)
for d in k1-pgid-healthy k2-coalesced-healthy k4-names \
  k5-alltoall-healthy k5-alltoall-v-healthy k8-no-entries-healthy k9-minor-2.11; do
  kcase "$d" 0
done
# problems found (exit 1)
for d in k1-pgid-hang k2-coalesced-hang k3-first-pending k4-unknown-mismatch \
  k6-coalesced-size-mismatch k6-output-mismatch k6-dtype-out k6-p2p-size \
  k7-gpu-error k7-two-faults k8-only-active k8-no-entries; do
  kcase "$d" 1
done
# nothing usable (exit 2); a group whose last op is a coalesced group,
# whose completion PyTorch does not record (inconclusive, exit 2)
kcase k9-major-3.0 2
kcase k2-coalesced-rs-healthy 2

# The rest of the comms array (its order follows comm ids): with python3.
if command -v python3 > /dev/null 2>&1; then
  # stuck_comms DIR WANT: WANT communicators have a stuck collective
  stuck_comms() {
    n=$(python3 -c 'import json, sys
print(sum(1 for c in json.load(open(sys.argv[1]))["comms"] if c.get("stuck")))' "$FR_TMP/$1.json" 2>&1)
    [ "$n" = "$2" ] || bad "$1: $n communicators stuck, expected $2"
  }
  # member_seqs DIR: each used communicator as its members' global ranks and
  # last completed seqs (sorted), against stdin
  member_seqs() {
    python3 -c 'import json, sys
out = []
for c in json.load(open(sys.argv[1]))["comms"]:
    ms = c["members"]
    done = [m.get("last_completed_seq") for m in ms]
    if all(x is None or x < 1 for x in done):
        continue  # never used
    out.append("ranks=%s done=%s" % (",".join(str(m.get("global_rank")) for m in ms),
                                     ",".join(str(x) for x in done)))
print("\n".join(sorted(out)))' "$FR_TMP/$1.json" > "$FR_TMP/$1.seqs" 2>&1
    cat > "$FR_TMP/$1.seqs.want"
    diff "$FR_TMP/$1.seqs.want" "$FR_TMP/$1.seqs" > "$FR_TMP/$1.seqs.diff" ||
      { sed "s|^|  $1: |" "$FR_TMP/$1.seqs.diff" >&2; bad "$1: communicators' completed seqs differ"; }
  }
  # only TP group [0-3] is stuck; the idle groups (some without entries on
  # some ranks, one never used) are not; in k8-only-active the pipeline
  # groups' p2p counters in pg_status are no collective seqs to wait for
  stuck_comms k1-pgid-hang 1
  stuck_comms k8-only-active 1
  # the world's seq 3 is in pg_status only on ranks 0 and 7 (pg_id 0), in
  # entries elsewhere; pg_status's other keys are pg_ids, not names
  member_seqs k1-pgid-healthy <<'EOF'
ranks=0,1,2,3 done=100,100,100,100
ranks=0,1,2,3,4,5,6,7 done=3,3,3,3,3,3,3,3
ranks=0,4 done=25,25
ranks=0,7 done=25,25
ranks=1,5 done=25,25
ranks=2,6 done=25,25
ranks=3,7 done=25,25
ranks=4,5,6,7 done=100,100,100,100
EOF
  member_seqs k1-pgid-hang <<'EOF'
ranks=0,1,2,3 done=96,96,96,96
ranks=0,1,2,3,4,5,6,7 done=3,3,3,3,3,3,3,3
ranks=0,4 done=24,24
ranks=0,7 done=24,24
ranks=1,5 done=24,24
ranks=2,6 done=24,24
ranks=3,7 done=24,24
ranks=4,5,6,7 done=100,100,100,100
EOF
fi

# a newer minor version is read and noted (the message names the version);
# a newer major one is refused, naming it
grep '"message":' "$FR_TMP/k9-minor-2.11.json" | grep -qF '2.11' ||
  bad "k9-minor-2.11: no input problem mentions version 2.11"
sed -n '/^input:/,$p' "$FR_TMP/k9-minor-2.11.txt" | grep -qF '2.11' ||
  bad "k9-minor-2.11: the text report's input section does not mention 2.11"
grep '"message":' "$FR_TMP/k9-major-3.0.json" | grep -qF '3.0' ||
  bad "k9-major-3.0: no input problem mentions version 3.0"

# the committed fixtures are what the generator writes (when python3 is here)
if command -v python3 > /dev/null 2>&1; then
  if python3 "$FR_SRCDIR/tests/gen-pytorch-kinds.py" "$FR_TMP/gen"; then
    for d in "$FR_TMP"/gen/*; do
      c=${d##*/}
      diff -r "$FIX/$c" "$d" > /dev/null ||
        bad "$c: committed fixtures differ from gen-pytorch-kinds.py's output"
    done
    for d in "$FIX"/k[0-9]-*/; do
      c=${d%/}
      c=${c##*/}
      [ -d "$FR_TMP/gen/$c" ] || bad "$c: committed, but gen-pytorch-kinds.py does not write it"
    done
  else
    bad "gen-pytorch-kinds.py failed"
  fi
else
  echo "python3 absent: generator output not compared (fixtures still checked)"
fi

# every kind's verdict: no root cause of a hang waits inside an NCCL call
for d in "$FIX"/k[0-9]-*/; do
  "$FR_ANALYZE" --json "$d" > "$FR_TMP/roots.json" 2> /dev/null
  "$FR_JSON_EXPECT" --no-waiting-roots "$FR_TMP/roots.json" || {
    echo "FAIL: $(basename "$d"): a root cause waits inside an NCCL call"
    nfail=$((nfail + 1))
  }
done

[ "$nfail" -eq 0 ] || fail "$nfail check(s) failed"
echo "pytorch kinds: ok"
