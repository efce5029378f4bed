#!/bin/bash
# run-bench.sh — `make bench`: measure what the recorder costs and print one
# table with the goal beside each figure (BENCHMARKS.md, "The recorder's cost").
# Run by `make bench` with tests/testenv.sh sourced (FR_BUILDDIR, FR_PRELOAD).
#
#  1. Added time per intercepted call: tests/bench/fr-bench times ncclX (the
#     recorder's wrapper when preloaded) against pncclX (straight into NCCL)
#     in the same process, alternating, REPS repetitions of ITERS calls; NCCL
#     is tests/bench's libnccl.so.2, whose calls return at once.  With
#     completion tracking off (FR_TRACK_COMPLETION=0) and on (the simulator's
#     libcuda events, two per call), with the events' timing (FR_GPU_TIMING,
#     the default) and without.  The same program without the preload
#     gives the cost of a bare call.  Also the cost of FR_BACKTRACE=8 (a
#     stack per record), tracking off; and of one clock_gettime
#     (CLOCK_MONOTONIC), which the recorder reads once per call, so that the
#     added cost reads as a ratio on any machine.  With FR_BENCH_BASELINE (a
#     librecorder.so built from another commit) the tracking-off calls go
#     through it and through this build, one after the other, and the ratio
#     of their added costs is printed (the A/B of issue #18).
#  1a. A CUDA graph launch: tests/bench/fr-bench graph captures N
#     ncclAllReduce calls (N = 1, 8) into one graph and times cuGraphLaunch
#     of it (the recorder's wrapper when preloaded: N records and one pair
#     of events per launch) against the driver's own cuGraphLaunch in the
#     same process, alternating; the driver is the simulator's, whose launch
#     of a graph of this NCCL's (empty) work costs nanoseconds, so the
#     difference is the recorder's.  Tracking on (capture is followed only
#     then).
#  1b. The ring file's cost: the same tracking-off AllReduce calls with the
#     ring in a ring file (FR_RING_DIR, a shared file mapping) and in private
#     memory (FR_RING_DIR=none), FR_BENCH_RING_ROUNDS runs of each,
#     alternating, in this run; the ratio of the median added costs.  The
#     ring files go to a scratch directory (FR_BENCH_RING_DIR; default a new
#     one in $TMPDIR or /tmp, removed after; its filesystem type is printed:
#     a tmpfs, like /dev/shm, is what jobs use).
#  2. Dump of a full ring: tests/bench/fr-bench-dump fills the default ring
#     (16,384 records) with a training-step mix of calls on three
#     communicators, then signals itself (SIGUSR2) and times until the dump
#     file is renamed into place (inotify); bytes per record from the file's
#     size and the records read back from it.
#  3. Peak memory: VmHWM of fr-bench after 20,480 calls (and, with the
#     recorder, one dump), without and with the preload.
#
# Knobs (environment): FR_BENCH_ITERS (calls per repetition, tracking off;
# default 2000000), FR_BENCH_TRACK_ITERS (tracking on, and FR_BACKTRACE;
# default 100000), FR_BENCH_REPS (default 11), FR_BENCH_DUMPS (dumps timed;
# default 7), FR_BENCH_BASELINE (see 1), FR_BENCH_RING_ROUNDS (default 5),
# FR_BENCH_RING_DIR (see 1b).
set -u

: "${FR_BUILDDIR:?run through make bench}"
bench="$FR_BUILDDIR/tests/bench"
out="$FR_BUILDDIR/bench-out"
iters=${FR_BENCH_ITERS:-2000000}
track_iters=${FR_BENCH_TRACK_ITERS:-100000}
reps=${FR_BENCH_REPS:-11}
ndumps=${FR_BENCH_DUMPS:-7}
nops=20480   # more than the default ring's 16,384 records: the ring is full
ring_rounds=${FR_BENCH_RING_ROUNDS:-5}

rm -rf "$out" && mkdir -p "$out" || exit 1
# Every run: no hang timeout and no trigger file (nothing but the measured
# dumps may write); the recorder's defaults otherwise.  The ring files of
# the runs go to a scratch directory, never to the host's /dev/shm.
ring_dir=${FR_BENCH_RING_DIR:-}
ring_tmp=""
if [ -z "$ring_dir" ]; then
  ring_tmp=$(mktemp -d "${TMPDIR:-/tmp}/fr-bench-ring.XXXXXX") || exit 1
  ring_dir=$ring_tmp
fi
trap '[ -z "$ring_tmp" ] || rm -rf "$ring_tmp"' EXIT
trap 'exit 130' INT TERM
export FR_TIMEOUT_SEC=0 FR_TRIGGER_FILE=0 FR_JOB_ID=bench FR_RING_DIR="$ring_dir"
unset FR_BUFFER_ENTRIES FR_POLL_MS FR_DISABLE FR_TRACK_COMPLETION

fail() { echo "run-bench: $*" >&2; exit 1; }

# field NAME LINE: the value of NAME=... in LINE.
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }

preloaded() { env LD_PRELOAD="$FR_PRELOAD" "$@"; }

echo "run-bench: timing calls ($reps x $iters calls, tracking on: $reps x $track_iters) ..." >&2
declare -A res
for op in AllReduce Send; do
  res[$op.none]=$(env -u LD_PRELOAD "$bench/fr-bench" calls $op "$iters" "$reps") || fail "fr-bench calls $op"
  res[$op.off]=$(FR_DUMP_DIR="$out/dumps" FR_TRACK_COMPLETION=0 preloaded "$bench/fr-bench" calls $op "$iters" "$reps") ||
    fail "fr-bench calls $op (tracking off)"
  res[$op.on]=$(FR_DUMP_DIR="$out/dumps" FR_TRACK_COMPLETION=1 preloaded "$bench/fr-bench" calls $op "$track_iters" "$reps") ||
    fail "fr-bench calls $op (tracking on)"
  res[$op.on0]=$(FR_DUMP_DIR="$out/dumps" FR_TRACK_COMPLETION=1 FR_GPU_TIMING=0 preloaded "$bench/fr-bench" calls $op \
    "$track_iters" "$reps") || fail "fr-bench calls $op (tracking on, FR_GPU_TIMING=0)"
  for k in off on on0; do
    [ "$(field recorder "${res[$op.$k]}")" = 1 ] || fail "the recorder was not interposed (tracking $k)"
  done
done

# the HIP path (fr-bench-hip: HIP stand-in streams, HIP events), in this run
res[hip.on]=$(FR_DUMP_DIR="$out/dumps" FR_TRACK_COMPLETION=1 preloaded "$bench/fr-bench-hip" calls AllReduce \
  "$track_iters" "$reps") || fail "fr-bench-hip calls AllReduce (tracking on)"
[ "$(field recorder "${res[hip.on]}")" = 1 ] || fail "the recorder was not interposed (HIP)"

res[clock]=$("$bench/fr-bench" clock "$iters" "$reps") || fail "fr-bench clock"

echo "run-bench: graph launches ($reps x $track_iters launches, 1 and 8 captured ops) ..." >&2
for n in 1 8; do
  res[graph$n.none]=$(env -u LD_PRELOAD "$bench/fr-bench" graph $n "$track_iters" "$reps") || fail "fr-bench graph $n"
  res[graph$n.on]=$(FR_DUMP_DIR="$out/dumps" FR_TRACK_COMPLETION=1 preloaded "$bench/fr-bench" graph $n \
    "$track_iters" "$reps") || fail "fr-bench graph $n (recorder)"
  [ "$(field recorder "${res[graph$n.on]}")" = 1 ] || fail "the recorder was not interposed (graph $n)"
done

# 1b: ring file against private memory, alternating; the added cost of each
# run (wrapped - direct medians), then the median over the runs
echo "run-bench: ring file against private memory ($ring_rounds x 2 runs, alternating) ..." >&2
add_file="" add_priv=""
for ((k = 0; k < ring_rounds; k++)); do
  for rd in "$ring_dir" none; do
    l=$(FR_DUMP_DIR="$out/dumps" FR_TRACK_COMPLETION=0 FR_RING_DIR="$rd" preloaded "$bench/fr-bench" calls \
      AllReduce "$iters" "$reps") || fail "fr-bench calls AllReduce (FR_RING_DIR=$rd)"
    [ "$(field recorder "$l")" = 1 ] || fail "the recorder was not interposed (FR_RING_DIR=$rd)"
    echo "ring_dir=$rd $l" >>"$out/ring-ab.txt"
    a=$(awk -v w="$(field wrapped_med "$l")" -v d="$(field direct_med "$l")" 'BEGIN { printf "%.2f", w - d }')
    if [ "$rd" = none ]; then add_priv+="$a "; else add_file+="$a "; fi
  done
done
# the bench's ring files were removed at its clean exits
[ -z "$(find "$ring_dir" -name 'fr-*.ring' -print -quit)" ] || fail "$ring_dir: a ring file was left behind"
med() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
lo() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | head -n 1; }
hi() { tr ' ' '\n' <<<"$1" | sed '/^$/d' | sort -g | tail -n 1; }
ring_fs=$(stat -f -c %T "$ring_dir" 2>/dev/null || echo unknown)
# FR_BENCH_BASELINE=/path/to/librecorder.so (another build, e.g. of an
# earlier commit): the same tracking-off calls through it, in this run
if [ -n "${FR_BENCH_BASELINE:-}" ]; then
  [ -f "$FR_BENCH_BASELINE" ] || fail "FR_BENCH_BASELINE: no such file: $FR_BENCH_BASELINE"
  for op in AllReduce Send; do
    res[$op.base]=$(FR_DUMP_DIR="$out/dumps" FR_TRACK_COMPLETION=0 env LD_PRELOAD="$FR_BENCH_BASELINE" \
      "$bench/fr-bench" calls $op "$iters" "$reps") || fail "fr-bench calls $op (baseline recorder)"
    res[$op.off2]=$(FR_DUMP_DIR="$out/dumps" FR_TRACK_COMPLETION=0 preloaded "$bench/fr-bench" calls $op "$iters" \
      "$reps") || fail "fr-bench calls $op (tracking off, again)"
  done
fi

res[bt]=$(FR_DUMP_DIR="$out/dumps" FR_TRACK_COMPLETION=0 FR_BACKTRACE=8 \
  preloaded "$bench/fr-bench" calls AllReduce "$track_iters" "$reps") || fail "fr-bench calls AllReduce (FR_BACKTRACE=8)"

echo "run-bench: filling the ring and timing $ndumps dumps ..." >&2
mkdir -m 700 "$out/dumps" || exit 1
dumps=$(FR_DUMP_DIR="$out/dumps" FR_MAX_FRAMES=$ndumps FR_FRAME_INTERVAL_SEC=86400 \
  preloaded "$bench/fr-bench-dump" "$out/dumps" $nops "$ndumps") || fail "fr-bench-dump"
dsum=$(grep '^dumps ' <<<"$dumps")

echo "run-bench: peak memory ..." >&2
rss_none=$(env -u LD_PRELOAD "$bench/fr-bench" rss $nops) || fail "fr-bench rss"
mkdir -m 700 "$out/rss-off" "$out/rss-on" || exit 1
rss_off=$(FR_DUMP_DIR="$out/rss-off" FR_TRACK_COMPLETION=0 preloaded "$bench/fr-bench" rss $nops "$out/rss-off") ||
  fail "fr-bench rss (tracking off)"
rss_on=$(FR_DUMP_DIR="$out/rss-on" FR_TRACK_COMPLETION=1 preloaded "$bench/fr-bench" rss $nops "$out/rss-on") ||
  fail "fr-bench rss (tracking on)"

# ---- the table ----
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo
echo "Recorder overhead: ${cpu:-unknown CPU}, $(nproc) cores, $(uname -sr)"
case "${FR_SAN_CFLAGS-}" in
  *sanitize*) echo "WARNING: sanitizer build ($FR_SAN_CFLAGS): these figures do not describe a release build" ;;
esac
printf '%-56s %10s %10s   %s\n' "figure" "median" "min" "goal"
row() { # label median min goal verdict
  printf '%-56s %10s %10s   %s\n' "$1" "$2" "$3" "$4${5:+ ($5)}"
}
verdict() { # value limit
  awk -v v="$1" -v l="$2" 'BEGIN { print (v <= l) ? "met" : "MISSED" }'
}
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }
for op in AllReduce Send; do
  n=${res[$op.none]} f=${res[$op.off]} o=${res[$op.on]}
  row "nccl$op, no recorder (ns/call)" "$(field wrapped_med "$n")" "$(field wrapped_min "$n")" "-"
  add_med=$(sub "$(field wrapped_med "$f")" "$(field direct_med "$f")")
  add_min=$(sub "$(field wrapped_min "$f")" "$(field direct_min "$f")")
  row "nccl$op, added by the recorder, tracking off (ns)" "$add_med" "$add_min" "<= 50" "$(verdict "$add_med" 50)"
  add_med=$(sub "$(field wrapped_med "$o")" "$(field direct_med "$o")")
  add_min=$(sub "$(field wrapped_min "$o")" "$(field direct_min "$o")")
  row "nccl$op, added, tracking on, simulator events (ns)" "$add_med" "$add_min" "-"
  o=${res[$op.on0]}
  add_med=$(sub "$(field wrapped_med "$o")" "$(field direct_med "$o")")
  add_min=$(sub "$(field wrapped_min "$o")" "$(field direct_min "$o")")
  row "nccl$op, added, tracking on, FR_GPU_TIMING=0 (ns)" "$add_med" "$add_min" "-"
done
cm=$(sub "$(field wrapped_med "${res[AllReduce.on]}")" "$(field direct_med "${res[AllReduce.on]}")")
hm=$(sub "$(field wrapped_med "${res[hip.on]}")" "$(field direct_med "${res[hip.on]}")")
row "ncclAllReduce, added, tracking on, HIP events (ns)" "$hm" \
  "$(sub "$(field wrapped_min "${res[hip.on]}")" "$(field direct_min "${res[hip.on]}")")" "-"
row "ncclAllReduce, added, tracking on, HIP / CUDA path" "$(awk -v a="$hm" -v b="$cm" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')" "" "-"
for n in 1 8; do
  g=${res[graph$n.none]} o=${res[graph$n.on]}
  row "cuGraphLaunch, $n captured op(s), no recorder (ns/launch)" "$(field wrapped_med "$g")" "$(field wrapped_min "$g")" "-"
  row "cuGraphLaunch, $n captured op(s), added, tracking on (ns)" \
    "$(sub "$(field wrapped_med "$o")" "$(field direct_med "$o")")" "$(sub "$(field wrapped_min "$o")" "$(field direct_min "$o")")" "-"
done
row "clock_gettime(CLOCK_MONOTONIC), one read (ns)" "$(field med "${res[clock]}")" "$(field min "${res[clock]}")" "-"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
f=${res[AllReduce.off]}
row "ncclAllReduce, added, tracking off, in clock reads" \
  "$(ratio "$(sub "$(field wrapped_med "$f")" "$(field direct_med "$f")")" "$(field med "${res[clock]}")")" "" "-"
if [ -n "${FR_BENCH_BASELINE:-}" ]; then
  for op in AllReduce Send; do
    b=${res[$op.base]} f=${res[$op.off2]}
    bm=$(sub "$(field wrapped_med "$b")" "$(field direct_med "$b")")
    fm=$(sub "$(field wrapped_med "$f")" "$(field direct_med "$f")")
    row "nccl$op, added, tracking off, baseline build (ns)" "$bm" \
      "$(sub "$(field wrapped_min "$b")" "$(field direct_min "$b")")" "-"
    row "nccl$op, added, tracking off, this build (ns)" "$fm" \
      "$(sub "$(field wrapped_min "$f")" "$(field direct_min "$f")")" "-"
    row "nccl$op, added, this build / baseline build" "$(ratio "$fm" "$bm")" "" "<= 0.5" \
      "$(verdict "$(ratio "$fm" "$bm")" 0.5)"
  done
fi
mf=$(med "$add_file") mp=$(med "$add_priv")
row "ncclAllReduce, added, ring in private memory (ns)" "$mp" "$(lo "$add_priv")" "-"
row "ncclAllReduce, added, ring in a ring file, $ring_fs (ns)" "$mf" "$(lo "$add_file")" "-"
rr=$(awk -v a="$mf" -v b="$mp" 'BEGIN { printf "%.2f", (b > 0) ? a / b : 0 }')
row "ncclAllReduce, added, ring file / private memory" "$rr" "" "<= 1.10" "$(verdict "$rr" 1.10)"
add_med=$(sub "$(field wrapped_med "${res[bt]}")" "$(field direct_med "${res[bt]}")")
add_min=$(sub "$(field wrapped_min "${res[bt]}")" "$(field direct_min "${res[bt]}")")
row "ncclAllReduce, added, tracking off, FR_BACKTRACE=8 (ns)" "$add_med" "$add_min" "-"
rec=$(field records "$dsum")
ms_med=$(field ms_med "$dsum")
row "dump of $rec records, signal to file in place (ms)" "$ms_med" "$(field ms_min "$dsum")" "<= 20" \
  "$(verdict "$ms_med" 20)"
bpr=$(field bytes_per_record "$dsum")
row "dump size, bytes per record ($(field bytes "$dsum") bytes)" "$bpr" "" "<= 16" "$(verdict "$bpr" 16)"
pn=$(field peak_kib "$rss_none") pf=$(field peak_kib "$rss_off") po=$(field peak_kib "$rss_on")
row "peak RSS, no recorder (KiB)" "$pn" "" "-"
row "peak RSS added, tracking off, ring full + dump (KiB)" "$((pf - pn))" "" "-"
row "peak RSS added, tracking on, ring full + dump (KiB)" "$((po - pn))" "" "-"
echo
echo "calls: $reps repetitions of $iters calls ($track_iters with tracking on); dumps: $ndumps, the first is frame 0"
echo "slowest dump: $(field ms_max "$dsum") ms; raw results in $out"
echo "ring file A/B: $ring_rounds runs of each, alternating; added cost per run (ns): ring file $add_file(max $(hi "$add_file")), private memory $add_priv(max $(hi "$add_priv"))"
{
  for op in AllReduce Send; do printf '%s\n' "${res[$op.none]}" "${res[$op.off]}" "${res[$op.on]}" "${res[$op.on0]}"; done
  printf '%s\n' "${res[hip.on]}"
  printf '%s\n' "${res[graph1.none]}" "${res[graph1.on]}" "${res[graph8.none]}" "${res[graph8.on]}"
  printf '%s\n' "${res[clock]}" "${res[bt]}" "$dumps" "$rss_none" "$rss_off" "$rss_on"
} >"$out/results.txt"
