#!/bin/sh
# fr-analyze's report options on the committed C1 sample: the verdict block
# fits 80 columns and 15 lines, --color=auto|always|never, --comm and --rank
# filter the details, --exclude-list prints the ranks to evict.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
S="$FR_SRCDIR/samples/c1-rank-stops"
esc=$(printf '\033')

"$FR_ANALYZE" "$S" >"$FR_TMP/plain"
sed -n '1,/^$/p' "$FR_TMP/plain" >"$FR_TMP/block"
[ "$(wc -l <"$FR_TMP/block")" -le 16 ] || fail "verdict block longer than 15 lines"
! awk 'length > 80' "$FR_TMP/block" | grep -q . || fail "verdict block wider than 80 columns"
! grep -q "$esc" "$FR_TMP/plain" || fail "colour written to a pipe with --color=auto"
"$FR_ANALYZE" --color=always "$S" | head -1 | grep -q "$esc" || fail "--color=always wrote no colour"
! "$FR_ANALYZE" --color=never "$S" | grep -q "$esc" || fail "--color=never wrote colour"
expect_exit 2 "$FR_ANALYZE" --color=sometimes "$S" 2>/dev/null

comm=$(sed -n 's/^  comm \([0-9a-f]\{16\}\):.*/\1/p' "$FR_TMP/plain")
[ -n "$comm" ] || fail "no comm in the details"
"$FR_ANALYZE" --comm="$comm" "$S" | grep -q '^communicators: 1$' || fail "--comm=$comm hid its comm"
# a filter that matches nothing is said, exit 2 (not "0 shown")
"$FR_ANALYZE" --comm=00000000000000c1 "$S" >"$FR_TMP/comm" 2>"$FR_TMP/comm.err"
[ $? -eq 2 ] || fail "--comm of no comm: exit status not 2"
grep -q '^fr-analyze: no communicator 00000000000000c1 in the dumps$' "$FR_TMP/comm.err" || fail "--comm of no comm not said"
[ ! -s "$FR_TMP/comm" ] || fail "--comm of no comm printed a report"
"$FR_ANALYZE" --rank=3 "$S" | grep -q '^communicators: 1$' || fail "--rank=3 hid its comm"
"$FR_ANALYZE" --rank=99 "$S" 2>"$FR_TMP/rank.err" >/dev/null
[ $? -eq 2 ] || fail "--rank of no rank: exit status not 2"
grep -q "^fr-analyze: rank 99 is not in the dumps' job$" "$FR_TMP/rank.err" || fail "--rank of no rank not said"
expect_exit 2 "$FR_ANALYZE" --comm=xyz "$S" 2>/dev/null
# a short id is refused like fr-tui refuses it (not padded into another id)
expect_exit 2 "$FR_ANALYZE" --comm=1234 "$S" 2>"$FR_TMP/short.err"
grep -q "^fr-analyze: invalid communicator id '1234' (16 hex digits)$" "$FR_TMP/short.err" || fail "--comm=1234 not refused"
# --json and --exclude-list are two outputs: refused together
expect_exit 2 "$FR_ANALYZE" --json --exclude-list "$S" 2>"$FR_TMP/both.err"
grep -q "^fr-analyze: --json and --exclude-list exclude each other$" "$FR_TMP/both.err" || fail "--json --exclude-list not refused"
expect_exit 2 "$FR_ANALYZE" --rank=-1 "$S" 2>/dev/null

[ "$("$FR_ANALYZE" --exclude-list "$S")" = 5 ] || fail "--exclude-list: expected 5"
echo "analyze-options: ok"
