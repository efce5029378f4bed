# Sourced by corpus.sh and run-fuzz.sh: the seed corpora of each fuzz target,
# all referenced in place (samples/, tests/fixtures/, tests/scenarios/) plus
# the regression inputs, and fuzz_seeds_analyze DIR, which writes the
# multi-file seeds of the analyze target (each dump set joined with the
# target's split marker) into DIR.
# fuzz_seed_dirs SRCDIR TARGET: print the target's seed paths, one a line.
fuzz_seed_dirs() {
  case "$2" in
    frz)      printf '%s\n' "$1/samples/c1-rank-stops" "$1/samples/h200-busy-stream" \
                "$1/samples/c11-link-stalls" ;;
    pytorch)  printf '%s\n' "$1/tests/fixtures/pytorch-fr" "$1/tests/fixtures/nvrx" ;;
    scenario) printf '%s\n' "$1/tests/scenarios" ;;
    analyze)  printf '%s\n' "$1/samples/c1-rank-stops" "$1/samples/h200-busy-stream" \
                "$1/samples/c11-link-stalls" "$1/tests/fixtures/pytorch-fr" "$1/tests/fixtures/nvrx" ;;
  esac
  [ -d "$1/tests/fuzz/regressions/$2" ] && printf '%s\n' "$1/tests/fuzz/regressions/$2"
  return 0
}

# fuzz_seeds_analyze SRCDIR OUTDIR: one joined seed per dump directory.
fuzz_seeds_analyze() {
  mkdir -p "$2" || return 1
  local d n f first
  # (every fixture directory, nested ones too: a directory's own files make its seed)
  for d in "$1"/samples/c1-rank-stops "$1"/samples/h200-busy-stream "$1"/samples/c11-link-stalls \
           $(find "$1"/tests/fixtures/pytorch-fr "$1"/tests/fixtures/nvrx -mindepth 1 -type d | sort); do
    d=${d%/}
    case "$d" in */tests/fixtures/*) n=$(echo "${d#*/tests/fixtures/}" | tr '/' '-') ;; *) n=$(basename "$d") ;; esac
    first=1
    : > "$2/joined-$n" || return 1
    for f in "$d"/*; do
      [ -f "$f" ] || continue
      case "$(basename "$f")" in README*|.*|*.log|LICENSE*) continue ;; esac
      [ $first = 1 ] || printf '\n--fr-fuzz-split--\n' >> "$2/joined-$n"
      cat "$f" >> "$2/joined-$n"
      first=0
    done
    [ $first = 0 ] || rm -f "$2/joined-$n" # (a directory of directories only)
  done
}
