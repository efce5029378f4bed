#!/bin/bash
# run-bench-stacks.sh — part of `make bench`: the cost of one collection of
# every thread's stack (FR_STACKS, at each dump), with 8 and 64 threads
# waiting on a condition variable, and the time it adds to a dump.  One small
# table with the goal beside each figure (BENCHMARKS.md, "The recorder's cost").
set -u
: "${FR_BUILDDIR:?run through make bench}"
bench="$FR_BUILDDIR/tests/bench"
reps=${FR_BENCH_STACK_REPS:-51}
fail() { echo "run-bench-stacks: $*" >&2; exit 1; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
verdict() { awk -v v="$1" -v l="$2" 'BEGIN { print (v <= l) ? "met" : "MISSED" }'; }
row() { printf '%-56s %10s %10s   %s\n' "$1" "$2" "$3" "$4${5:+ ($5)}"; }
echo "run-bench-stacks: timing $reps stack collections ..." >&2
declare -A res
for n in 8 64; do
  res[$n]=$("$bench/fr-bench-stacks" "$n" "$reps") || fail "fr-bench-stacks $n"
done
echo
echo "Thread stacks at dump time (FR_STACKS=1): one collection, $reps times"
printf '%-56s %10s %10s   %s\n' "figure" "median" "min" "goal"
for n in 8 64; do
  r=${res[$n]} goal=$((n == 8 ? 1000 : 5000))
  row "stacks of $((n + 1)) threads, one collection (us)" "$(field us_med "$r")" "$(field us_min "$r")" \
    "<= $goal" "$(verdict "$(field us_med "$r")" $goal)"
  row "  per thread (us)" "$(awk -v a="$(field us_med "$r")" -v n=$((n + 1)) 'BEGIN { printf "%.1f", a / n }')" "" "-"
done
