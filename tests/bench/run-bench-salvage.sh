#!/bin/bash
# run-bench-salvage.sh — `make bench-salvage` (also run by `make bench`): how
# long fr-dump --salvage takes to make the ring files of a killed job into
# dumps, against fr-analyze reading the same records as dumps, side by side
# in one run (BENCHMARKS.md, "Salvage of ring files").  Run with
# tests/testenv.sh sourced.
#
#  1. tests/bench/fr-synth writes the synthetic hung job (synth.h) twice
#     into a scratch directory: as the ring files its killed recorders
#     would have left (--ring: the recorder's layout, 16,384-slot rings,
#     every process gone) and as the dumps its recorders would have written.
#  2. fr-dump --salvage --keep -o OUT RINGDIR (decode every ring file,
#     encode and write its dump, fsync'd, as the salvage of a real job
#     does) and fr-analyze DUMPDIR, alternating, FR_BENCH_REPS times each
#     (a fresh OUT every time); tests/bench/fr-measure gives wall time, CPU
#     time and peak RSS.  Every ring file must give a dump, and fr-analyze
#     on the salvaged dumps must name the same culprit as on the dumps.
#  3. The ratio of the median wall times: the goal is under 2.
#
# Knobs (environment): FR_BENCH_SCRATCH (default $TMPDIR or /tmp; never
# /dev/shm: the ring files take about 3 MiB each), FR_BENCH_SALVAGE_SIZE
# (RANKSxRECORDS; default 1024x16384), FR_BENCH_REPS (default 3),
# FR_BENCH_KEEP=1 (keep the files).
set -u

: "${FR_BUILDDIR:?run through make bench-salvage}"
bench="$FR_BUILDDIR/tests/bench"
out="$FR_BUILDDIR/bench-out/salvage"
size=${FR_BENCH_SALVAGE_SIZE:-1024x16384}
reps=${FR_BENCH_REPS:-3}
n=${size%x*} m=${size#*x}
scratch=$(mktemp -d "${FR_BENCH_SCRATCH:-${TMPDIR:-/tmp}}/fr-bench-salvage.XXXXXX") || exit 1
cleanup() { [ "${FR_BENCH_KEEP:-0}" = 1 ] || rm -rf "$scratch"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() { echo "run-bench-salvage: $*" >&2; exit 1; }
note() { echo "run-bench-salvage: $*" >&2; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

rm -rf "$out" && mkdir -p "$out" || exit 1
# ring files (about 3 MiB each, written whole), the dumps (about 20 bytes a
# record) and the salvaged dumps
need_kib=$((n * 3200 + n * m * 48 / 1024))
avail=$(df -Pk "$scratch" | awk 'NR == 2 { print $4 }')
[ "${avail:-0}" -gt "$need_kib" ] ||
  fail "$scratch: $((avail / 1024)) MiB free, the benchmark needs $((need_kib / 1024)) MiB (set FR_BENCH_SCRATCH)"

note "writing $n ring files of $m records, and the same job as dumps ..."
rg=$("$bench/fr-synth" -n "$n" -m "$m" -f lag --ring "$scratch/rings") || fail "fr-synth --ring failed"
dg=$("$bench/fr-synth" -n "$n" -m "$m" -f lag "$scratch/dumps") || fail "fr-synth failed"
printf '%s\n' "$rg" "$dg" >>"$out/results.txt"
culprit=$(field culprit "$dg")
recs=$(field records "$dg")
[ "$(field records "$rg")" = "$recs" ] || fail "the ring files and the dumps hold different records"

sw="" aw="" sc="" ac="" srss="" arss=""
for ((k = 0; k < reps; k++)); do
  note "fr-dump --salvage, run $((k + 1)) of $reps ..."
  rm -rf "$scratch/salvaged"
  r=$("$bench/fr-measure" -o "$out/salvage.txt" "$FR_DUMP" --salvage --keep -o "$scratch/salvaged" \
    "$scratch/rings") || fail "cannot run fr-dump"
  echo "salvage ${r#measure }" >>"$out/results.txt"
  [ "$(field rc "$r")" = 0 ] || fail "fr-dump --salvage: exit status $(field rc "$r") ($out/salvage.txt)"
  got=$(find "$scratch/salvaged" -name '*.frz' | wc -l)
  [ "$got" = "$n" ] || fail "fr-dump --salvage made $got dumps of $n ring files"
  sw+="$(field wall_s "$r") " sc+="$(field cpu_s "$r") " srss+="$(field peak_kib "$r") "
  note "fr-analyze on the dumps, run $((k + 1)) of $reps ..."
  r=$("$bench/fr-measure" -o "$out/analyze.txt" "$FR_ANALYZE" "$scratch/dumps") || fail "cannot run fr-analyze"
  echo "analyze ${r#measure }" >>"$out/results.txt"
  [ "$(field rc "$r")" = 1 ] || fail "fr-analyze: exit status $(field rc "$r"), not 1 (hang)"
  aw+="$(field wall_s "$r") " ac+="$(field cpu_s "$r") " arss+="$(field peak_kib "$r") "
done
grep -q "rank $culprit never entered" "$out/analyze.txt" || fail "fr-analyze on the dumps: culprit $culprit not named"
note "fr-analyze on the salvaged dumps ..."
"$FR_ANALYZE" "$scratch/salvaged" >"$out/analyze-salvaged.txt" 2>&1
grep -q "rank $culprit never entered" "$out/analyze-salvaged.txt" ||
  fail "fr-analyze on the salvaged dumps: culprit $culprit not named ($out/analyze-salvaged.txt)"

med_of() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | median; }
s_w=$(med_of "$sw") a_w=$(med_of "$aw")
x=$(calc %.2f "$s_w / $a_w")
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo
echo "Salvage of ring files: ${cpu:-unknown CPU}, $(nproc) cores, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "scratch: $scratch ($(stat -f -c %T "$scratch" 2>/dev/null || echo unknown))"
printf '%-52s %8s %8s %9s %10s   %s\n' "figure" "wall s" "CPU s" "peak MiB" "ns/record" "goal"
row() { printf '%-52s %8s %8s %9s %10s   %s\n' "$@"; }
row "fr-dump --salvage, $n ring files x $m records" "$s_w" "$(med_of "$sc")" "$(($(med_of "$srss") / 1024))" \
  "$(calc %.0f "$s_w * 1e9 / $recs")" "-"
row "fr-analyze, the same records as dumps" "$a_w" "$(med_of "$ac")" "$(($(med_of "$arss") / 1024))" \
  "$(calc %.0f "$a_w * 1e9 / $recs")" "-"
row "  salvage / fr-analyze, wall (x)" "" "" "" "$x" \
  "< 2 ($(awk -v v="$x" 'BEGIN { print (v < 2) ? "met" : "MISSED" }'))"
echo
echo "median of $reps runs each, alternating; wall s per run: salvage $sw/ fr-analyze $aw"
echo "ring files: $(field bytes "$rg") bytes; dumps: $(field bytes "$dg") bytes; raw results in $out"
