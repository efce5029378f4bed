#!/bin/bash
# run-fuzz.sh SRCDIR FUZZDIR TARGET...: run each libFuzzer build FUZZDIR/lf-TARGET
# for FUZZ_SECONDS seconds (default 60) on its seed corpora, keeping new
# inputs in FUZZDIR/corpus-TARGET and any crash in FUZZDIR/crash-TARGET-*;
# print one line per target with its executions and executions per second.
# Exit 1 when a target crashed (or did not run), 0 otherwise.
src=$1 dir=$2
shift 2
secs=${FUZZ_SECONDS:-60}
. "$src/tests/fuzz/seeds.sh"
fuzz_seeds_analyze "$src" "$dir/seeds-analyze" || exit 1
status=0
for t in "$@"; do
  mapfile -t seeds < <(fuzz_seed_dirs "$src" "$t")
  [ "$t" = analyze ] && seeds+=("$dir/seeds-analyze")
  mkdir -p "$dir/corpus-$t"
  log="$dir/fuzz-$t.log"
  # -close_fd_mask=3: the readers' own diagnostics would swamp the log
  # (libFuzzer still prints its statistics and crash reports).
  "$dir/lf-$t" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=30 -max_len=262144 \
    -print_final_stats=1 -close_fd_mask=3 -artifact_prefix="$dir/crash-$t-" \
    "$dir/corpus-$t" "${seeds[@]}" > "$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
  [ "${took:-0}" -ge 1 ] 2>/dev/null || took=1
  if [ $rc -ne 0 ] || [ -z "$runs" ]; then
    echo "fuzz $t: FAILED (exit $rc), see $log"
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -n 5
    status=1
  else
    echo "fuzz $t: $runs executions in $took s ($(( runs / took ))/s), corpus $(ls "$dir/corpus-$t" | wc -l) new"
  fi
done
exit $status
