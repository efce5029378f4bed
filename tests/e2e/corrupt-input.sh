#!/bin/bash
# Corrupted input: one rank's dump of a sample set, truncated at every
# section boundary (and inside each section), with bits flipped across the
# file, zero-length, with a wrong magic and with a future major version; the
# sets are C1 (frz 1.0, rank 5) and C11 (frz 1.2, rank 3 with every 1.2
# section: PROXY, KERNELCH, STACKS, PYFRAMES; tests/fuzz/regressions/frz).
# fr-analyze must never crash, must name the file in input.problems, and
# must still analyse the seven good dumps.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir

# u32/u64 little-endian at an offset of the original file
u32() { od -An -tu4 -j "$1" -N4 "$orig" | tr -d ' '; }
u64() { od -An -tu8 -j "$1" -N8 "$orig" | tr -d ' '; }

n=0
# check LABEL: analyse a copy of the sample with $FR_TMP/bad as the victim's dump
check() {
  rm -rf "$FR_TMP/d"
  mkdir "$FR_TMP/d"
  for f in "$src"/*.frz; do [ "$(basename "$f")" = "$victim" ] || cp "$f" "$FR_TMP/d/"; done
  cp "$FR_TMP/bad" "$FR_TMP/d/$victim"
  "$FR_ANALYZE" --json "$FR_TMP/d" >"$FR_TMP/out.json" 2>"$FR_TMP/err"
  rc=$?
  [ $rc -le 2 ] || fail "$1: fr-analyze exited $rc (crash?)"
  grep -q "\"file\":[[:space:]]*\"[^\"]*$victim\"" "$FR_TMP/out.json" || fail "$1: $victim not named in input.problems"
  grep -q "\"ranks_found\":[[:space:]]*\[$good\]" "$FR_TMP/out.json" || fail "$1: the good dumps were not analysed"
  n=$((n + 1))
}

# corrupt SRC RANK GOOD [ORIG]: every corruption of ORIG (default: the
# set's own dump) as rank RANK's dump of the set SRC, whose other ranks are
# GOOD (as the JSON lists them)
corrupt() {
  src=$1 good=$3
  victim=$(ls "$src" | grep -- "-r0000$2-f0000\.frz\$")
  [ -n "$victim" ] || fail "no rank-$2 dump in $src"
  orig=${4:-$src/$victim}
  size=$(stat -c %s "$orig")
  # truncations: inside the header, at its end, at every table entry, at the
  # table end and after its CRC, at each section's start, middle and end
  hsize=$(u32 12) count=$(u32 16) esize=$(u32 20)
  cuts="1 7 8 12 $((hsize - 1)) $hsize"
  for ((i = 0; i < count; i++)); do
    e=$((hsize + i * esize))
    off=$(u64 $((e + 8))) len=$(u64 $((e + 16)))
    cuts="$cuts $e $((e + 24)) $off $((off + len / 2)) $((off + len - 1))"
  done
  tend=$((hsize + count * esize))
  cuts="$cuts $tend $((tend + 2)) $((tend + 4)) $((size - 1))"
  for c in $cuts; do
    [ "$c" -lt "$size" ] || continue
    head -c "$c" "$orig" >"$FR_TMP/bad"
    check "truncated at $c"
  done

  # one bit flipped at offsets spread over the whole file
  for ((o = 0; o < size; o += size / 40 + 1)); do
    cp "$orig" "$FR_TMP/bad"
    b=$(od -An -tu1 -j $o -N1 "$orig" | tr -d ' ')
    printf "\\$(printf %03o $((b ^ 16)))" | dd of="$FR_TMP/bad" bs=1 seek=$o conv=notrunc status=none
    check "bit flipped at $o"
  done

  : >"$FR_TMP/bad"
  check "zero-length"
  cp "$orig" "$FR_TMP/bad"
  printf 'QQQQ' | dd of="$FR_TMP/bad" bs=1 seek=1 conv=notrunc status=none
  check "wrong magic"
  cp "$orig" "$FR_TMP/bad"
  printf '\x63\x00' | dd of="$FR_TMP/bad" bs=1 seek=8 conv=notrunc status=none
  check "future major version 99"
  grep -q 'version' "$FR_TMP/out.json" || fail "future version: the problem does not say so"
}

corrupt "$FR_SRCDIR/samples/c1-rank-stops" 5 "0, 1, 2, 3, 4, 6, 7"
corrupt "$FR_SRCDIR/samples/c11-link-stalls" 3 "0, 1, 2, 4, 5, 6, 7" \
  "$FR_SRCDIR/tests/fuzz/regressions/frz/all-1.2-sections-escapes.frz"
echo "corrupt-input: $n corrupted dumps, no crash, every one named"
