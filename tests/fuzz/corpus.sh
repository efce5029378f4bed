#!/bin/bash
# The fuzz targets' reproducer programs (tests/fuzz/driver.c) over their seed
# corpora and tests/fuzz/regressions/TARGET/: every input must run to the end
# (a crash, a sanitizer report in a sanitizer build, or a hang fails the
# test), and each target must have run the inputs its seeds hold.
. "$FR_SRCDIR/tests/e2e/lib.sh"
. "$FR_SRCDIR/tests/fuzz/seeds.sh"
fr_tmpdir
fuzz_seeds_analyze "$FR_SRCDIR" "$FR_TMP/seeds-analyze" || fail "cannot write the joined seeds"
for t in frz pytorch scenario analyze ring; do
  mapfile -t seeds < <(fuzz_seed_dirs "$FR_SRCDIR" "$t")
  [ "$t" = analyze ] && seeds+=("$FR_TMP/seeds-analyze")
  prog="$FR_BUILDDIR/tests/fuzz/fuzz_$t"
  timeout 300 "$prog" "${seeds[@]}" >"$FR_TMP/$t.out" 2>"$FR_TMP/$t.err"
  rc=$?
  cat "$FR_TMP/$t.out"
  [ $rc -eq 0 ] || { tail -n 40 "$FR_TMP/$t.err" >&2; fail "fuzz_$t exited $rc"; }
  ran=$(sed -n 's/.*: \([0-9]*\) inputs ran$/\1/p' "$FR_TMP/$t.out")
  # Fewer inputs than seed files would mean a corpus went missing.
  want=$(find "${seeds[@]}" -type f ! -name 'README*' ! -name '.*' | wc -l)
  [ "$ran" = "$want" ] || fail "fuzz_$t ran ${ran:-no} inputs, the seeds hold $want"
done
echo "PASS: every fuzz target ran its seeds and regressions"
