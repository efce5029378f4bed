#!/bin/sh
# A dump directory reused from an earlier job still holds its TRIGGER file:
# the new job must neither dump because of it nor be kept from triggering
# its own hang — every rank of the new hang dumps.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir
cd "$FR_TMP" || exit 1
cat > hang.scn <<'SCN'
world 2
steps 3
allreduce world count=64 dtype=float32 redop=sum
fault rank=1 step=2 op=1 stop
SCN
mkdir -m 700 dumps boot
echo "flightrec-trigger v1 rank=9 time_ns=1 reason=an old job" > dumps/TRIGGER
touch -d '-1 hour' dumps/TRIGGER
pids=""
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r FR_TIMEOUT_SEC=1 FR_POLL_MS=20 FR_DUMP_DIR="$FR_TMP/dumps" \
  FR_JOB_ID=stale FR_SIM_BOOTSTRAP_DIR="$FR_TMP/boot" LD_LIBRARY_PATH="$FR_SIM_LIBDIR" \
  LD_PRELOAD="$FR_PRELOAD" "$FR_JOB" hang.scn > "job$r.out" 2>&1 &
  pids="$pids $!"
done
trap 'kill -9 $pids 2>/dev/null; rm -rf "$FR_TMP"' EXIT
i=0
while [ $i -lt 150 ]; do
  [ -f dumps/stale-r00000-f0000.frz ] && [ -f dumps/stale-r00001-f0000.frz ] && break
  sleep 0.1; i=$((i + 1))
done
kill -9 $pids 2>/dev/null
[ -f dumps/stale-r00000-f0000.frz ] || fail "the waiting rank 0 did not dump"
[ -f dumps/stale-r00001-f0000.frz ] || fail "rank 1 did not dump on the new trigger (stale TRIGGER kept it out)"
grep -q 'rank=0 ' dumps/TRIGGER || { cat dumps/TRIGGER; fail "the stale TRIGGER was not replaced by the new hang's"; }
"$FR_DUMP" dumps/stale-r00001-f0000.frz | grep -q 'trigger: *file' || fail "rank 1's dump does not say the trigger file made it dump"
echo "stale trigger file: ok"
