#!/bin/sh
# Every committed sample directory gives its expected verdict and exit
# status (hang: 1, healthy: 0), and frame 0 of the H200 sample alone shows
# the device-side hang the watchdog saw.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
n=0
for exp in "$FR_SRCDIR"/samples/*.expected.json; do
  dir=${exp%.expected.json}
  name=$(basename "$dir")
  "$FR_ANALYZE" --json "$dir" > "$FR_TMP/$name.json"
  rc=$?
  case $(grep -o '"status": *"[a-z]*"' "$exp" | head -1) in
    *healthy*) want=0 ;;
    *) want=1 ;;
  esac
  [ "$rc" -eq "$want" ] || fail "$name: fr-analyze exited $rc, expected $want"
  "$FR_JSON_EXPECT" "$exp" "$FR_TMP/$name.json" || fail "$name: verdict differs from $exp"
  n=$((n + 1))
done
[ "$n" -ge 2 ] || fail "only $n samples found"

mkdir -p "$FR_TMP/f0"
cp "$FR_SRCDIR"/samples/h200-busy-stream/*-f0000.frz "$FR_TMP/f0/"
"$FR_ANALYZE" --json "$FR_TMP/f0" > "$FR_TMP/f0.json"
[ $? -eq 1 ] || fail "frame 0 of the H200 sample: expected exit 1"
cat > "$FR_TMP/f0.expected.json" <<'JSON'
{ "verdict": { "status": "hang", "all_joined": true, "lagging_ranks": [],
               "stuck": { "seq": 16, "op": "AllReduce", "waiting_ranks": [0], "missing_ranks": [] } } }
JSON
"$FR_JSON_EXPECT" "$FR_TMP/f0.expected.json" "$FR_TMP/f0.json" || fail "frame 0 of the H200 sample"
echo "$n samples: ok"
