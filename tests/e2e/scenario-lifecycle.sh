#!/bin/bash
# Communicators as body ops (late comms, create, destroy, finalize, abort),
# shared unique ids, ncclCommInitAll with several devices per process,
# named call sites, dumps copied or renamed after the run
# (tests/scenarios/README.md):
#  - every misuse is a FILE:LINE error (exit 2) before any rank starts;
#  - healthy-lifecycle runs every step and the analysis says healthy, its
#    ops from job_site_1..3 carry those call sites;
#  - two pairs on one unique id work when the second is delayed, and share
#    the comm id; a dev= fault changes one device's call only; copy-dump and
#    rename-dump give a rank's dumps another rank's file name;
#  - a rank blocked in ncclCommFinalize shows it, and its call site, in its
#    main thread's stack.
. "$FR_SRCDIR/tests/e2e/lib.sh"
fr_tmpdir

# bad LINE MESSAGE SCENARIO: the scenario (lines separated by ';') is
# refused with FILE:LINE: MESSAGE and exit 2
nbad=0
bad() {
  nbad=$((nbad + 1))
  f="$FR_TMP/bad$nbad.scn"
  printf '%s\n' "$3" | tr ';' '\n' >"$f"
  "$FR_JOB" --print-world "$f" >/dev/null 2>"$FR_TMP/err"
  rc=$?
  [ $rc -eq 2 ] || fail "bad$nbad.scn: exit $rc, expected 2 ($2)"
  grep -qxF "$f:$1: $2" "$FR_TMP/err" || { cat "$FR_TMP/err" >&2; fail "bad$nbad.scn: expected '$f:$1: $2'"; }
}
bad 3 "create a: a is created before the loop (add 'late' to its comm line, line 2)" \
  'world 2;comm a init;create a'
bad 2 "create world: world is created before the loop, never late" \
  'world 2;create world'
bad 2 "unknown communicator 'zz'" \
  'world 2;destroy zz'
bad 2 "usage: finalize COMM [ranks=SEL] [id=NAME] [site=NAME]" \
  'world 2;finalize ranks=0'
bad 3 "'count' does not apply to create" \
  'world 2;comm a init late;create a count=5'
bad 3 "dev= applies to ops on an initall comm; op 1 (line 2) is 'allreduce' on world" \
  'world 2;allreduce id=x;fault rank=0 step=1 op=x dev=1 skip'
bad 4 "dev=: d has devices 0-1" \
  'world 2;comm d initall devices=2;allreduce d id=x;fault rank=0 step=1 op=x dev=2 skip'
bad 4 "dev= does not apply to create: d is made by one ncclCommInitAll call" \
  'world 2;comm d initall devices=2 late;create d id=x;fault rank=0 step=1 op=x dev=0 skip'
bad 5 "dev= does not apply to 'swap=': it moves the whole op, every device's call" \
  'world 2;comm d initall devices=2;allreduce d id=x;allreduce d id=y;fault rank=0 step=1 op=x dev=0 swap=y'
bad 2 "uid=foo: the only value is uid=shared (every instance uses one unique id)" \
  'world 2;comm a init uid=foo'
bad 2 "'uid' does not apply to a split comm" \
  'world 2;comm a split world color=0 uid=shared'
bad 2 "comm a shrink: exclude=SEL (comm ranks of world) is required" \
  'world 2;comm a shrink world late'
bad 2 "exclude=: the comm ranks of world are 0-1" \
  'world 2;comm a shrink world exclude=5'
bad 2 "exclude= leaves no rank of world (the instance of world rank 0)" \
  'world 2;comm a shrink world exclude=0-1'
bad 2 "comm a initall: devices=N is required" \
  'world 2;comm a initall late'
bad 2 "devices: '65' is not an integer in [1, 64]" \
  'world 2;comm a initall devices=65'
bad 2 "'color' does not apply to an initall comm" \
  'world 2;comm a initall devices=2 color=0'
bad 3 "comm b split: a is an initall comm (several devices per process); split and shrink take a comm of one device per process" \
  'world 2;comm a initall devices=2;comm b split a color=0'
bad 2 "'late' given twice" \
  'world 2;comm a init late late'
bad 10 "site=i: more than 8 call sites (job_site_1 .. job_site_8)" \
  'world 2;allreduce site=a;allreduce site=b;allreduce site=c;allreduce site=d;allreduce site=e;allreduce site=f;allreduce site=g;allreduce site=h;allreduce site=i'
bad 2 "'site' does not apply to sleep" \
  'world 2;sleep 5 site=a'
bad 2 "copy-dump needs as=R (the rank the file names are to say)" \
  'world 2;post rank=0 copy-dump'
bad 2 "copy-dump: rank=0-1 must select exactly one rank" \
  'world 3;post rank=0-1 copy-dump as=2'
bad 2 "rename-dump: rank 1 as=1 names the same rank" \
  'world 2;post rank=1 rename-dump as=1'
bad 4 "op 1 (line 3) is 'create': a stall needs a collective or p2p op" \
  'world 2;comm a init late;create a id=x;fault rank=0 step=1 op=x stall kernel'
bad 4 "op 1 (line 3) is 'destroy': only collectives and p2p take count/dtype/redop/root/peer/coll faults" \
  'world 2;comm a init;destroy a id=x;fault rank=0 step=1 op=x count=4'
echo "parse errors: $nbad refused with FILE:LINE"

# every rank ran every step and exited 0 with a dump
all_done() {
  n=$(grep -c 'status=exit:0 dump=yes' "$1/launch.log")
  [ "$n" -eq "$2" ] || { cat "$1/launch.log" >&2; fail "$3: $n of $2 ranks exited 0 with a dump"; }
}

run_case healthy-lifecycle
all_done "$FR_TMP/run" 4 healthy-lifecycle
grep -q '^communicators: 11$' "$FR_TMP/run/verdict-full.txt" || fail "healthy-lifecycle: expected 11 communicators"
"$FR_DUMP" "$FR_TMP/run/dumps/"*-r00001-f0000.frz > "$FR_TMP/r1.txt" || fail "fr-dump"
for s in job_site_1 job_site_2 job_site_3 job_ncall; do
  grep -q "fr-scenario-job!$s+0x" "$FR_TMP/r1.txt" || fail "healthy-lifecycle: no call site in $s"
done
echo "healthy-lifecycle: ok (call sites job_site_1..3, job_ncall)"

# A shared unique id (the pair {2,3} delayed until {0,1} has its comm), a
# dev= fault changing device 1's count only, copy-dump and rename-dump.
cat > "$FR_TMP/more.scn" <<'EOF'
world 4
env FR_TIMEOUT_SEC=1
env FR_DUMP_ON_EXIT=1
time-limit 30
steps 2
comm q init color=rank/2 uid=shared late
comm dev initall devices=3
allreduce world count=64
create q id=mkq
allreduce q count=16
allreduce dev count=128 id=ar
fault rank=2,3 step=1 op=mkq sleep=500
fault rank=1 step=2 op=ar dev=1 count=8
post rank=3 copy-dump as=0
post rank=2 rename-dump as=3
EOF
"$FR_RUN_SCENARIO" --no-analyze "$FR_TMP/more.scn" "$FR_TMP/more" > /dev/null 2>"$FR_TMP/more.err" ||
  { cat "$FR_TMP/more.err" >&2; fail "run-scenario more.scn failed"; }
all_done "$FR_TMP/more" 4 more.scn
d="$FR_TMP/more/dumps"
! ls "$d" | grep -q -- '-r00002-' || fail "rename-dump left rank 2's file name"
for named in 0:3 1:1 3:2; do
  n=${named%:*} r=${named#*:}
  "$FR_DUMP" "$d"/*-r0000"$n"-f0000.frz > "$FR_TMP/d$n.txt" || fail "fr-dump of the file named rank $n"
  grep -q "^process: *rank $r of 4 " "$FR_TMP/d$n.txt" || fail "the file named rank $n is not rank $r's dump"
done
# comm q (the only 2-rank comm) of rank 1 (file 1), rank 2 (file 3) and
# rank 3 (file 0): one comm id for both pairs
# rows FILE HEAD KEY VALUE COL: column COL of the rows of fr-dump's table
# whose header starts with the words HEAD, where column KEY is VALUE
# (columns found by their header names)
rows() {
  awk -v head="$2" -v key="$3" -v val="$4" -v col="$5" '
    $1 " " $2 == head { for (i = 1; i <= NF; i++) ix[$i] = i; t = 1; next }
    t && (NF < 3 || /^[a-z]/) { t = 0 }
    t && $ix[key] == val { print $ix[col] }' "$1"
}
qid() { rows "$1" "comm_id nccl_hash" nranks 2 comm_id; }
q1=$(qid "$FR_TMP/d1.txt") q2=$(qid "$FR_TMP/d3.txt") q3=$(qid "$FR_TMP/d0.txt")
[ -n "$q1" ] && [ "$q1" = "$q2" ] && [ "$q2" = "$q3" ] ||
  fail "the pairs do not share comm q's id (rank 1 '$q1', rank 2 '$q2', rank 3 '$q3')"
# rank 1's all-reduces on its 3 devices: one of 8 elements, on device 1
small=$(rows "$FR_TMP/d1.txt" "id comm" count 8 dev)
[ "$small" = 1 ] || fail "dev=1 count=8: expected one 8-element AllReduce, on device 1 (got '$small')"
echo "shared uid, dev= fault, copy-dump, rename-dump: ok"

# rank 1 skips p01's all-reduce at step 2; rank 0's finalize (site fin)
# then waits for it for good: its main thread is in ncclCommFinalize,
# called from job_site_1
cat > "$FR_TMP/fin.scn" <<'EOF'
world 2
env FR_TIMEOUT_SEC=1
time-limit 20
steps 2
comm p01 init late
allreduce world count=64
allreduce p01 count=64 id=a
finalize p01 id=f site=fin
fault rank=1 step=2 op=a skip
fault rank=all step=1 op=f skip
EOF
"$FR_RUN_SCENARIO" --no-analyze "$FR_TMP/fin.scn" "$FR_TMP/fin" > /dev/null 2>"$FR_TMP/fin.err" ||
  { cat "$FR_TMP/fin.err" >&2; fail "run-scenario fin.scn failed"; }
grep -q '^rank=0 .*status=killed dump=yes' "$FR_TMP/fin/launch.log" || fail "fin.scn: rank 0 did not hang and dump"
"$FR_DUMP" "$FR_TMP/fin/dumps/"*-r00000-f0000.frz > "$FR_TMP/fin.txt" || fail "fr-dump fin"
sed -n '/^  thread .* main/,/^  thread /p' "$FR_TMP/fin.txt" > "$FR_TMP/fin-main.txt"
for fn in 'libnccl.so.2!pncclCommFinalize' 'fr-scenario-job!job_site_1' 'fr-scenario-job!job_run_op'; do
  grep -qF "$fn+0x" "$FR_TMP/fin-main.txt" || { cat "$FR_TMP/fin-main.txt" >&2; fail "fin.scn: no $fn in rank 0's stack"; }
done
echo "blocked finalize: in ncclCommFinalize <- job_site_1 <- job_run_op: ok"
