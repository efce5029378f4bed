#!/bin/bash
# run-bench-analyze.sh — `make bench-analyze` (also run by `make bench`): how
# fast fr-analyze and fr-tui read a big hang's dumps, with the goal beside
# each figure (BENCHMARKS.md).  Run with tests/testenv.sh sourced.
#
#  1. tests/bench/fr-synth writes the dumps of a synthetic hung job
#     (tests/bench/synth.h: world, TP, PP and DP communicators, 16 calls per
#     training step, ranks x records; one rank never enters the last world
#     AllReduce) into a scratch directory — no simulator run.
#  2. fr-analyze on each size (text report), fr-tui --batch (the first
#     screen) on some; tests/bench/fr-measure gives wall time, CPU time (all
#     threads) and peak RSS; the verdict is checked (the culprit named).
#  3. The load phase alone (read, decompress, decode: fa_add_paths) by
#     tests/bench/fr-bench-load, on all cores and on one, in records/s; and
#     zstd's own speed on the same frames (fr-bench-load --zstd) as the
#     ceiling of any decoder of this format.
#  4. The other hang kinds (mismatch, deadlock cycle) at 1,024 ranks, and the
#     same lag job in PyTorch Flight Recorder pickle form read by our
#     importer; with PyTorch installed, torchfrtrace on those files too.
#  5. Issue #18's goals as ratios measured in the same run, since machines
#     here differ by 2x: fr-analyze and fr-tui against zstd alone on the
#     same frames (every size), the load per CPU second against zstd's
#     rate, and the PyTorch pickles against the same job in our own format
#     (CPU time per record: PyTorch entries against our records).
#
# Knobs (environment): FR_BENCH_SCRATCH (where the dumps go; default
# $TMPDIR or /tmp), FR_BENCH_SIZES (RANKSxRECORDS list; default the issue's:
# "1024x4096 4096x4096 16384x4096 1024x16384"), FR_BENCH_REPS (runs per
# size up to 4,096 ranks; default 3, median kept), FR_BENCH_BIG_REPS (runs
# at 16,384 ranks; default 1), FR_BENCH_PT (ranks x records of the PyTorch
# form; default 1024x1024; "none" skips it), FR_BENCH_KEEP=1 (keep the dumps),
# FR_BENCH_ANALYZE_BASELINE (another build's fr-analyze) or
# FR_BENCH_ANALYZE_REV (a git revision of this tree, built here into the
# scratch directory): that fr-analyze runs on the same dumps, alternating
# with this one, and the ratio of CPU times is printed (at 16,384 ranks,
# the goal: within 1.2x).
set -u

: "${FR_BUILDDIR:?run through make bench-analyze}"
bench="$FR_BUILDDIR/tests/bench"
out="$FR_BUILDDIR/bench-out/analyze"
sizes=${FR_BENCH_SIZES:-"1024x4096 4096x4096 16384x4096 1024x16384"}
reps=${FR_BENCH_REPS:-3}
big_reps=${FR_BENCH_BIG_REPS:-1}
pt_size=${FR_BENCH_PT:-1024x1024}
scratch_base=${FR_BENCH_SCRATCH:-${TMPDIR:-/tmp}}
scratch=$(mktemp -d "$scratch_base/fr-bench-analyze.XXXXXX") || exit 1
cleanup() { [ "${FR_BENCH_KEEP:-0}" = 1 ] || rm -rf "$scratch"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "run-bench-analyze: $*" >&2; exit 1; }
note() { echo "run-bench-analyze: $*" >&2; }
# field NAME LINE: the value of NAME=... in LINE.
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }

rm -rf "$out" && mkdir -p "$out" || exit 1
: >"$out/results.txt"

# The A/B baseline: a given fr-analyze, or one built from a revision of the
# source tree (git archive: the checkout's own state is left alone).
base=${FR_BENCH_ANALYZE_BASELINE:-}
base_what=${FR_BENCH_ANALYZE_BASELINE:-}
if [ -z "$base" ] && [ -n "${FR_BENCH_ANALYZE_REV:-}" ]; then
  rev=$FR_BENCH_ANALYZE_REV
  git -C "$FR_SRCDIR" rev-parse -q --verify "$rev^{commit}" >/dev/null ||
    fail "FR_BENCH_ANALYZE_REV=$rev: not a commit of $FR_SRCDIR"
  bsrc="$scratch/baseline-src"
  note "building fr-analyze of $rev in $bsrc ..."
  mkdir -p "$bsrc" && git -C "$FR_SRCDIR" archive "$rev" | tar -x -C "$bsrc" || fail "git archive $rev"
  (cd "$bsrc" && autoreconf -fi && ./configure -q && make -j"$(nproc)" fr-analyze/fr-analyze) \
    >"$out/baseline-build.log" 2>&1 || fail "building $rev failed (see $out/baseline-build.log)"
  base="$bsrc/fr-analyze/fr-analyze"
  base_what=$(git -C "$FR_SRCDIR" rev-parse --short "$rev")
  [ "$base_what" = "$rev" ] || base_what="$rev ($base_what)"
fi
[ -z "$base" ] || [ -x "$base" ] || fail "$base: not an executable fr-analyze"

# Room for the largest set (about 19 bytes a record, pickles 123) plus margin.
need_kib=0
for s in $sizes; do
  r=$((${s%x*} * ${s#*x} * 24 / 1024))
  [ "$r" -gt "$need_kib" ] && need_kib=$r
done
avail=$(df -Pk "$scratch" | awk 'NR == 2 { print $4 }')
[ "${avail:-0}" -gt "$need_kib" ] ||
  fail "$scratch: $((avail / 1024)) MiB free, the largest dump set needs $((need_kib / 1024)) MiB (set FR_BENCH_SCRATCH)"

declare -a rows
# row LABEL WALL CPU RSS_MIB RATE GOAL VERDICT
row() { rows+=("$(printf '%-46s %8s %8s %9s %10s   %s' "$1" "$2" "$3" "$4" "$5" "$6${7:+ ($7)}")"); }
verdict() { # value limit
  awk -v v="$1" -v l="$2" 'BEGIN { print (v <= l) ? "met" : "MISSED" }'
}
verdict_ge() { awk -v v="$1" -v l="$2" 'BEGIN { print (v >= l) ? "met" : "MISSED" }'; }

# median of the measure lines in $1 by wall_s: the whole line
median_line() {
  sort -t= -k2 -g <<<"$1" | awk '{ l[NR] = $0 } END { print l[int((NR + 1) / 2)] }'
}

# measure_n N OUTFILE CMD...: run N times, print the median line
measure_n() {
  local n=$1 o=$2 lines="" m
  shift 2
  for ((k = 0; k < n; k++)); do
    m=$("$bench/fr-measure" -o "$o" "$@") || fail "cannot run $1"
    lines+="${lines:+$'\n'}${m#measure }"
  done
  echo "$lines" >>"$out/results.txt"
  median_line "$lines"
}

# gen DIR RANKS RECORDS [fr-synth options]
gen() {
  local d=$1 n=$2 m=$3 line
  shift 3
  note "writing $n ranks x $m records ($*) ..."
  line=$("$bench/fr-synth" -n "$n" -m "$m" "$@" "$d") || fail "fr-synth failed"
  echo "$line" >>"$out/results.txt"
  echo "$line"
}

# goals of fr-analyze by size (seconds), "-" none
analyze_goal() {
  case $1 in
    16384x4096) echo 30 ;;
    4096x4096) echo 8 ;;
    *) echo - ;;
  esac
}

declare -a lin
for s in $sizes; do
  n=${s%x*} m=${s#*x}
  d="$scratch/lag-$s"
  g=$(gen "$d" "$n" "$m" -f lag)
  culprit=$(field culprit "$g")
  recs=$(field records "$g")
  k=$reps
  [ "$n" -ge 16384 ] && k=$big_reps
  # zstd alone on the same frames, one thread: the reference of goal 4
  # (issue #18: the whole analysis within 2x of it)
  note "zstd alone on $s ..."
  zl=$("$bench/fr-bench-load" --zstd "$d" "$k") || fail "fr-bench-load --zstd"
  echo "$zl" >>"$out/results.txt"
  zw=$(field wall_s_med "$zl")
  note "fr-analyze on $s ($k runs) ..."
  r=$(measure_n "$k" "$out/analyze-$s.txt" "$FR_ANALYZE" "$d")
  [ "$(field rc "$r")" = 1 ] || fail "fr-analyze on $s: exit status $(field rc "$r"), not 1 (hang)"
  grep -q "rank $culprit never entered" "$out/analyze-$s.txt" || fail "fr-analyze on $s: culprit $culprit not named"
  w=$(field wall_s "$r") c=$(field cpu_s "$r") kib=$(field peak_kib "$r")
  goal=$(analyze_goal "$s")
  ns=$(calc %.0f "$w * 1e9 / $recs")
  lin+=("$(printf '%-14s %12s %10s %9s' "$s" "$recs" "$ns" "$(calc %.0f "$kib * 1024 / $recs")")")
  if [ "$goal" = - ]; then
    row "fr-analyze, $n ranks x $m records" "$w" "$c" "$((kib / 1024))" "$ns" "-"
  else
    row "fr-analyze, $n ranks x $m records" "$w" "$c" "$((kib / 1024))" "$ns" "<= $goal s" \
      "$(verdict "$w" "$goal")"
  fi
  if [ "$s" = 16384x4096 ]; then
    row "  peak RSS of that run (MiB)" "" "" "$((kib / 1024))" "" "<= 8192 MiB" "$(verdict "$((kib / 1024))" 8192)"
  fi
  zx=$(calc %.2f "$w / $zw")
  row "  zstd alone on the same frames, one thread" "$zw" "" "" "$(calc %.0f "$zw * 1e9 / $recs")" "-"
  if [ "$s" = 16384x4096 ]; then
    row "  fr-analyze / zstd alone, wall (x)" "" "" "" "$zx" "<= 2 (#18)" "$(verdict "$zx" 2)"
  else
    row "  fr-analyze / zstd alone, wall (x)" "" "" "" "$zx" "-"
  fi
  if [ -n "$base" ]; then
    # A/B: this build and the baseline one after the other, k times each
    note "A/B against $base_what on $s ($k runs each) ..."
    la="" lb=""
    for ((j = 0; j < k; j++)); do
      ma=$("$bench/fr-measure" -o "$out/analyze-ab-$s.txt" "$FR_ANALYZE" "$d") || fail "cannot run fr-analyze"
      mb=$("$bench/fr-measure" -o "$out/analyze-base-$s.txt" "$base" "$d") || fail "cannot run $base"
      la+="${la:+$'\n'}${ma#measure }" lb+="${lb:+$'\n'}${mb#measure }"
    done
    printf '%s\n' "$la" "$lb" >>"$out/results.txt"
    grep -q "rank $culprit" "$out/analyze-base-$s.txt" || note "the baseline did not name rank $culprit on $s"
    ra=$(median_line "$la") rb=$(median_line "$lb")
    ca=$(field cpu_s "$ra") cb=$(field cpu_s "$rb")
    row "  this build again (A/B)" "$(field wall_s "$ra")" "$ca" "$(($(field peak_kib "$ra") / 1024))" "" "-"
    row "  baseline $base_what (A/B)" "$(field wall_s "$rb")" "$cb" "$(($(field peak_kib "$rb") / 1024))" "" "-"
    abx=$(calc %.2f "$ca / $cb")
    if [ "$s" = 16384x4096 ]; then
      row "  this build / baseline, CPU (x)" "" "" "" "$abx" "<= 1.2" "$(verdict "$abx" 1.2)"
    else
      row "  this build / baseline, CPU (x)" "" "" "" "$abx" "-"
    fi
  fi
  case $s in
    1024x4096 | 16384x4096 | 1024x16384)
      note "fr-tui --batch on $s ..."
      r=$(measure_n "$k" "$out/tui-$s.txt" "$FR_TUI" --batch "$d")
      # fr-tui's exit status is fr-analyze's: 1, a hang diagnosed
      [ "$(field rc "$r")" = 1 ] || fail "fr-tui --batch on $s: exit status $(field rc "$r"), not 1 (hang)"
      grep -q "rank $culprit never entered" "$out/tui-$s.txt" || fail "fr-tui on $s: culprit $culprit not named"
      w=$(field wall_s "$r")
      tgoal=- tverdict=""
      if [ "$n" -le 1024 ]; then # issue #6: the first screen of 1,024 ranks in under a second
        tgoal="< 1 s" tverdict=$(verdict "$w" 1)
      fi
      row "fr-tui --batch first screen, $n x $m" "$w" "$(field cpu_s "$r")" "$(($(field peak_kib "$r") / 1024))" \
        "$(calc %.0f "$w * 1e9 / $recs")" "$tgoal" "$tverdict"
      tx=$(calc %.2f "$w / $zw")
      if [ "$s" = 1024x16384 ]; then
        row "  fr-tui first screen / zstd alone, wall (x)" "" "" "" "$tx" "<= 2 (#18)" "$(verdict "$tx" 2)"
      else
        row "  fr-tui first screen / zstd alone, wall (x)" "" "" "" "$tx" "-"
      fi
      ;;
  esac
  if [ "$s" = 1024x4096 ] || [ "$s" = 4096x4096 ]; then
    note "load phase on $s ..."
    l2=$("$bench/fr-bench-load" "$d" "$reps") || fail "fr-bench-load"
    l1=$(FR_ANALYZE_THREADS=1 "$bench/fr-bench-load" "$d" "$reps") || fail "fr-bench-load"
    z=$("$bench/fr-bench-load" --zstd "$d" "$reps") || fail "fr-bench-load --zstd"
    printf '%s\n' "$l2" "$l1" "$z" >>"$out/results.txt"
    rate2=$(calc %.1f "$(field rec_per_s "$l2") / 1e6")
    rate1=$(calc %.1f "$(field rec_per_s "$l1") / 1e6")
    percpu=$(calc %.1f "$(field rec_per_cpu_s "$l2") / 1e6")
    zr=$(calc %.1f "$(field rec_per_s "$z") / 1e6")
    row "load alone, $s, all cores (M rec/s)" "$(field wall_s_med "$l2")" "$(field cpu_s_med "$l2")" "" "$rate2" "-"
    row "load alone, $s, per core (M rec/CPU s)" "" "" "" "$percpu" "-"
    row "load alone, $s, one thread (M rec/s)" "$(field wall_s_med "$l1")" "$(field cpu_s_med "$l1")" "" "$rate1" "-"
    row "  zstd alone on the same frames (M rec/s)" "$(field wall_s_med "$z")" "" "" "$zr" "-"
    # goal 3 of issue #18: the load per CPU second at >= 80 % of zstd's rate
    lz=$(calc %.0f "100 * $(field rec_per_cpu_s "$l2") / $(field rec_per_cpu_s "$z")")
    row "  load per CPU s / zstd's rate (%)" "" "" "" "$lz" ">= 80 (#18)" "$(verdict_ge "$lz" 80)"
  fi
  if [ "$s" = 1024x4096 ]; then
    for f in mismatch cycle; do
      fd="$scratch/$f-$s"
      gen "$fd" "$n" "$m" -f "$f" >/dev/null
      r=$(measure_n "$reps" "$out/analyze-$f-$s.txt" "$FR_ANALYZE" "$fd")
      want=$([ "$f" = cycle ] && echo deadlock || echo mismatch)
      grep -q "^verdict: $want" "$out/analyze-$f-$s.txt" || fail "fr-analyze on the $f job: no $want verdict"
      row "fr-analyze, $f, $n x $m" "$(field wall_s "$r")" "$(field cpu_s "$r")" \
        "$(($(field peak_kib "$r") / 1024))" "$(calc %.0f "$(field wall_s "$r") * 1e9 / $recs")" "-"
      rm -rf "$fd"
    done
  fi
  rm -rf "$d"
done

pt_cmd=""
if [ "$pt_size" != none ]; then
  n=${pt_size%x*} m=${pt_size#*x}
  pd="$scratch/pytorch-$pt_size"
  g=$(gen "$pd" "$n" "$m" -f lag --pytorch)
  culprit=$(field culprit "$g")
  recs=$(field records "$g")
  # lag_run DIR NAME WHAT: fr-analyze on DIR ($reps runs), the culprit
  # checked, a row for it; sets r (the median line)
  lag_run() {
    note "fr-analyze on $3 ..."
    r=$(measure_n "$reps" "$out/analyze-$2-$pt_size.txt" "$FR_ANALYZE" "$1")
    grep -q "rank $culprit never entered" "$out/analyze-$2-$pt_size.txt" ||
      fail "fr-analyze on $3: culprit $culprit not named"
  }
  lag_run "$pd" pytorch "the PyTorch pickles"
  entries=$(field entries "$g")
  ptc=$(field cpu_s "$r")
  row "fr-analyze, PyTorch FR pickles, $n x $m" "$(field wall_s "$r")" "$ptc" \
    "$(($(field peak_kib "$r") / 1024))" "$(calc %.0f "$(field wall_s "$r") * 1e9 / $recs")" "-"
  # goal 1 of issue #18: per record at least half as fast as our own
  # format on the same job (CPU time: fr-analyze uses every core)
  od="$scratch/own-$pt_size"
  og=$(gen "$od" "$n" "$m" -f lag)
  orecs=$(field records "$og")
  lag_run "$od" own "the same job in our own format"
  oc=$(field cpu_s "$r")
  row "fr-analyze, own format, the same job" "$(field wall_s "$r")" "$oc" \
    "$(($(field peak_kib "$r") / 1024))" "$(calc %.0f "$(field wall_s "$r") * 1e9 / $orecs")" "-"
  prx=$(calc %.2f "($ptc / $entries) / ($oc / $orecs)")
  row "  PyTorch / own, CPU per record (x)" "" "" "" "$prx" "<= 2 (#18)" "$(verdict "$prx" 2)"
  row "  PyTorch / own, CPU per job (x)" "" "" "" "$(calc %.2f "$ptc / $oc")" "-"
  rm -rf "$od"
  pt_cmd="$bench/fr-synth -n $n -m $m -f lag --pytorch DIR && time torchfrtrace DIR --prefix nccl_trace_rank_"
  if command -v torchfrtrace >/dev/null 2>&1; then
    note "torchfrtrace on the same pickles ..."
    r=$(measure_n 1 "$out/torchfrtrace-$pt_size.txt" torchfrtrace "$pd" --prefix nccl_trace_rank_)
    row "torchfrtrace (PyTorch), same pickles" "$(field wall_s "$r")" "$(field cpu_s "$r")" \
      "$(($(field peak_kib "$r") / 1024))" "$(calc %.0f "$(field wall_s "$r") * 1e9 / $recs")" "-"
  fi
  [ "${FR_BENCH_KEEP:-0}" = 1 ] || rm -rf "$pd"
fi

# ---- the tables ----
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo
echo "Analyzer speed: ${cpu:-unknown CPU}, $(nproc) cores, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"
case "${FR_SAN_CFLAGS-}" in
  *sanitize*) echo "WARNING: sanitizer build ($FR_SAN_CFLAGS): these figures do not describe a release build" ;;
esac
printf '%-46s %8s %8s %9s %10s   %s\n' "figure" "wall s" "CPU s" "peak MiB" "ns/record" "goal"
printf '%s\n' "${rows[@]}"
echo
echo "Linear in ranks x records (fr-analyze, lag job): wall time and peak RSS per record"
printf '%-14s %12s %10s %9s\n' "ranks x recs" "records" "ns/record" "B/record"
printf '%s\n' "${lin[@]}"
echo
echo "median of $reps runs ($big_reps at 16,384 ranks); load: median of $reps; raw results in $out"
if [ -n "$pt_cmd" ] && ! command -v torchfrtrace >/dev/null 2>&1; then
  echo "PyTorch's analyzer (torchfrtrace) is not installed here; with PyTorch, time it on the same files:"
  echo "  $pt_cmd"
fi
