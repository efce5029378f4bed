#!/bin/sh
# Hang kinds the PyTorch import was not tuned on (tests/gen-pytorch-hard.py
# and gen-pytorch-hard2.py: two break-it passes' cases, each with its ground
# truth): fr-analyze gives the
# expected status and exactly the expected root-cause ranks (or the
# acceptable alternative the truth names), and the expected lagging ranks
# where the truth gives them.  Never a wrong culprit.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
command -v python3 > /dev/null 2>&1 || { echo "SKIP: no python3 to generate the cases"; exit 77; }
for gen in gen-pytorch-hard gen-pytorch-hard2; do
cases="$FR_TMP/$gen"
python3 "$FR_SRCDIR/tests/$gen.py" "$cases" > /dev/null || fail "$gen.py failed"
for d in "$cases"/*/; do
  "$FR_ANALYZE" --json "$d" > "$d/../$(basename "$d").json" 2> /dev/null
  "$FR_JSON_EXPECT" --no-waiting-roots "$d/../$(basename "$d").json" ||
    fail "$gen: $(basename "$d"): a root cause waits inside an NCCL call"
done
python3 - "$cases" "$gen" <<'PY' || fail "$gen: some verdicts differ from the truth (above)"
import json, os, sys
root, gen = sys.argv[1], sys.argv[2]
truth = json.load(open(os.path.join(root, "truth.json")))
bad = 0
for name, t in sorted(truth.items()):
    v = json.load(open(os.path.join(root, name + ".json")))["verdict"]
    st, rc, lag = v["status"], v["root_cause_ranks"], v["lagging_ranks"]
    ok_root = rc == t["root"] or (t["alt_root"] is not None and rc == sorted(t["alt_root"]))
    want = t["status"]
    # a healthy job may read as a hang that blames nobody (a dump in flight),
    # a straggler as a hang that blames the straggler alone
    if want == "healthy":
        ok_st = st == "healthy" or (st == "hang" and not rc)
    elif want == "straggler":
        ok_st = st == "straggler" or (st == "hang" and rc == t["root"])
    else:
        ok_st = want == "any" or st == want
    ok_lag = t["lag"] is None or lag == t["lag"]
    # never a wrong culprit: every root cause named is one the truth names
    wrong = [r for r in rc if r not in t["root"] and r not in (t["alt_root"] or [])]
    if not (ok_root and ok_st and ok_lag) or wrong:
        bad += 1
        print("FAIL: %s: %s: expected %s %s (lagging %s), got %s %s (lagging %s)%s" %
              (gen, name, want, t["root"], t["lag"], st, rc, lag,
               "; wrong culprits %s" % wrong if wrong else ""))
print("%s: %d cases, %d right, %d wrong" % (gen, len(truth), len(truth) - bad, bad))
sys.exit(1 if bad else 0)
PY
done
