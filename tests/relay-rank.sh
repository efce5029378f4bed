#!/bin/sh
# relay-rank.sh — one rank of the trigger-relay jobs (tests/e2e/trigger-relay.sh,
# tests/bench/run-bench-trigger.sh), from the launcher's environment to the
# scenario job: the rank from OMPI_COMM_WORLD_RANK (mpirun) or RANK; the
# world size WORLD; the dump directory RUN/nodeR, or RUN/dumps with
# SHARED=1; the scenario SCN; the pid into RUN/rank-R.pid and the output
# into RUN/rank-R.log.
r=${OMPI_COMM_WORLD_RANK:-$RANK}
d="$RUN/node$r"
[ "${SHARED:-0}" = 1 ] && d="$RUN/dumps"
export RANK=$r WORLD_SIZE=$WORLD LOCAL_RANK=$r FR_DUMP_DIR="$d"
echo $$ > "$RUN/rank-$r.pid"
LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" exec "$FR_JOB" "$SCN" > "$RUN/rank-$r.log" 2>&1
