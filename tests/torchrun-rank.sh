#!/bin/sh
# torchrun-rank.sh — one worker of the torchrun jobs (tests/e2e/torchrun.sh),
# started by torchrun --no_python: its rank, local rank, node (GROUP_RANK),
# world size and run id are torchrun's, left as they are.  It dumps into
# RUN/nodeRANK (a directory of its own, as on node-local disks), writes its
# pid into RUN/rank-RANK.pid, torchrun's variables into RUN/env-RANK.txt,
# and runs the scenario SCN with the recorder, output into RUN/rank-RANK.log.
export FR_DUMP_DIR="$RUN/node$RANK"
echo $$ > "$RUN/rank-$RANK.pid"
env | grep -E '^(RANK|LOCAL_RANK|GROUP_RANK|WORLD_SIZE|TORCHELASTIC_RUN_ID|MASTER_ADDR|MASTER_PORT)=' | sort > "$RUN/env-$RANK.txt"
LD_LIBRARY_PATH="$FR_SIM_LIBDIR" LD_PRELOAD="$FR_PRELOAD" exec "$FR_JOB" "$SCN" > "$RUN/rank-$RANK.log" 2>&1
