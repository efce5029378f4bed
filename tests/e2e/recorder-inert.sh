#!/bin/sh
# The recorder in processes that never use NCCL: no output, no thread, no
# files, the program's own output and status unchanged; FR_DISABLE=1 turns
# it off in a job that does use NCCL.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
cd "$FR_TMP" || exit 1

# A plain program with the recorder preloaded, with bad FR_* values too.
plain=$(sh -c 'echo hello; ls /proc/$$/task | wc -l; exit 3' 2>&1)
plain_rc=$?
pre=$(LD_PRELOAD="$FR_PRELOAD" FR_TIMEOUT_SEC=banana FR_DUMP_DIR="$FR_TMP/d" \
      sh -c 'echo hello; ls /proc/$$/task | wc -l; exit 3' 2>&1)
pre_rc=$?
[ "$plain" = "$pre" ] || fail "output changed by the recorder: '$plain' vs '$pre'"
[ "$plain_rc" -eq "$pre_rc" ] || fail "exit status changed: $plain_rc vs $pre_rc"
[ ! -e "$FR_TMP/d" ] || fail "a dump directory was created by a process without NCCL"
[ ! -e "$FR_TMP/flightrec-dumps" ] || fail "default dump directory created"

# A scenario job that uses NCCL, with FR_DISABLE=1: runs through, no dumps.
cat > ok.scn <<'SCN'
world 2
steps 3
allreduce world count=64 dtype=float32 redop=sum
SCN
mkdir -p boot
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r FR_DISABLE=1 FR_DUMP_ON_EXIT=1 FR_DUMP_DIR="$FR_TMP/off" \
  FR_SIM_BOOTSTRAP_DIR="$FR_TMP/boot" LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" \
    "$FR_JOB" ok.scn > "job$r.out" 2>&1 &
done
wait || true
for r in 0 1; do [ ! -s "job$r.out" ] || { cat "job$r.out"; fail "FR_DISABLE job printed something"; }; done
[ ! -e "$FR_TMP/off" ] || fail "FR_DISABLE=1 still wrote dumps"

# The same job recorded, dumping at exit: one dump per rank, no messages.
rm -rf boot; mkdir -p boot
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r FR_DUMP_ON_EXIT=1 FR_DUMP_DIR="$FR_TMP/on" FR_JOB_ID=inert \
  FR_SIM_BOOTSTRAP_DIR="$FR_TMP/boot" LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" \
    "$FR_JOB" ok.scn > "rec$r.out" 2>&1 &
done
wait || true
for r in 0 1; do
  [ ! -s "rec$r.out" ] || { cat "rec$r.out"; fail "recorded job printed something"; }
  [ -f "$FR_TMP/on/inert-r0000$r-f0000.frz" ] || fail "no exit dump for rank $r"
done
perm=$(stat -c %a "$FR_TMP/on")
[ "$perm" = 700 ] || fail "dump directory mode $perm, expected 700"
perm=$(stat -c %a "$FR_TMP/on/inert-r00000-f0000.frz")
[ "$perm" = 600 ] || fail "dump file mode $perm, expected 600"
ls -a "$FR_TMP/on" | grep -q '^\.' && ls -a "$FR_TMP/on" | grep -v '^\.\.\?$' | grep -q '^\.' &&
  fail "temporary files left in the dump directory"
echo "recorder inert where it should be: ok"
