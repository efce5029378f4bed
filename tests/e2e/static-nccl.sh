#!/bin/sh
# Static-NCCL mode: the scenario job with the simulated NCCL linked into the
# program (tests/scenario/fr-scenario-job-static), so the recorder's
# interposer sees no call at all; NCCL loads the recorder as its profiler
# plugin (the preloaded recorder points NCCL_PROFILER_PLUGIN at itself) and
# the records come from its Coll/P2p/API events.  C1 gets C1's verdict,
# exact links included; C11 through the NCCL 2.27 interface (v4: no API
# events, records made at launch) still names link 3->4 on channel 1.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
FR_JOB="$FR_BUILDDIR/tests/scenario/fr-scenario-job-static"
export FR_JOB
[ -x "$FR_JOB" ] || fail "$FR_JOB not built"

check_hang_case c1-rank-stops 8
d0=$(ls "$FR_TMP"/run/dumps/*-r00000-f0000.frz)
"$FR_DUMP" "$d0" > "$FR_TMP/d0.txt" || fail "fr-dump $d0"
grep -q '^profiler:  loaded by NCCL as its profiler plugin' "$FR_TMP/d0.txt" ||
  fail "rank 0's dump does not say NCCL loaded the plugin"
grep -Eq '^ +[0-9]+ [0-9a-f]{16} +0 CommInitRank .*profiler' "$FR_TMP/d0.txt" ||
  fail "no init record made by the plugin (seq 0)"
# every record came through the plugin: none without its flag, no call site
if grep -E '^ +[0-9]+ [0-9a-f]{16} +[0-9]+ [A-Za-z]+ ' "$FR_TMP/d0.txt" | grep -v profiler | grep -q .; then
  fail "a record did not come from the profiler plugin (was the interposer used?)"
fi
# (the dump's call-site table is not empty: it symbolises the thread stacks)
"$FR_DUMP" --json "$d0" > "$FR_TMP/d0.json" || fail "fr-dump --json $d0"
grep -q '"call_site":[[:space:]]*"0*[1-9a-f]' "$FR_TMP/d0.json" && fail "a record has a call site: the interposer saw calls"
grep -q '"call_site":[[:space:]]*"0000000000000000"' "$FR_TMP/d0.json" || fail "no record with an empty call site in the JSON"

FR_SIM_PROFILER_VERSION=4
export FR_SIM_PROFILER_VERSION
check_hang_case c11-link-stalls 8
grep -q 'missing links:  3->4 channel 1 (SendPeerWait' "$FR_TMP/run/verdict-full.txt" ||
  fail "v4: link 3->4 on channel 1 not named"
echo "static NCCL: ok"
