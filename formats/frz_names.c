/* frz_names.c — names of the dump format's coded values, and back.
 *
 * Op names and kinds come from nccl_api.def (X-macros), so a new entry there
 * is named here without further edits.  Unknown values get a generated name
 * such as "op#77"; no function here returns NULL.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include "frz.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ---- generated names for unknown values ----------------------------------- */

#define UNKNOWN_SLOTS 8

/* "PREFIX#N" in one of a few per-thread buffers, so that several unknown
 * names can appear in one printf. */
static const char *unknown_name(const char *prefix, unsigned v)
{
  static _Thread_local char slots[UNKNOWN_SLOTS][32];
  static _Thread_local unsigned next;
  char *s = slots[next++ % UNKNOWN_SLOTS];
  snprintf(s, sizeof slots[0], "%s#%u", prefix, v);
  return s;
}

/* Index of `name` among the `n` entries of `names`, compared
 * case-insensitively; -1 if absent. */
static int find_name(const char *const *names, unsigned n, const char *name)
{
  for (unsigned i = 0; i < n; i++)
    if (strcasecmp(names[i], name) == 0)
      return (int)i;
  return -1;
}

/* ---- ops ----------------------------------------------------------------- */

const char *frz_op_name(unsigned op)
{
  switch (op) {
  case FRZ_OP_NONE: return "none";
#define FR_COLL(code, Name, rec, params, args, c, d, o, r) \
  case code: return #Name;
#define FR_P2P(code, Name, params, args, dir) \
  case code: return #Name;
#define FR_CALL(code, Name, params, args) \
  case code: return #Name;
#define FR_CALL_229(code, Name, params, args) \
  case code: return #Name;
#include "nccl_api.def"
  default: return unknown_name("op", op);
  }
}

frz_kind frz_op_kind(unsigned op)
{
  switch (op) {
#define FR_COLL(code, Name, rec, params, args, c, d, o, r) \
  case code: return FRZ_KIND_COLL;
#define FR_P2P(code, Name, params, args, dir) \
  case code: return FRZ_KIND_P2P;
#define FR_CALL(code, Name, params, args)                                       \
  case code:                                                                  \
    return (code == FRZ_OP_GroupStart || code == FRZ_OP_GroupEnd ||           \
            code == FRZ_OP_GroupSimulateEnd) ? FRZ_KIND_GROUP : FRZ_KIND_LIFE;
#define FR_CALL_229(code, Name, params, args) \
  case code: return FRZ_KIND_LIFE;
#include "nccl_api.def"
  default: return FRZ_KIND_NONE;
  }
}

/* Every op code of the table, for name lookups. */
static const unsigned op_codes[] = {
#define FR_COLL(code, Name, rec, params, args, c, d, o, r) code,
#define FR_P2P(code, Name, params, args, dir) code,
#define FR_CALL(code, Name, params, args) code,
#define FR_CALL_229(code, Name, params, args) code,
#include "nccl_api.def"
};

unsigned frz_op_from_name(const char *name)
{
  if (!name)
    return FRZ_OP_NONE;
  if (strncasecmp(name, "nccl", 4) == 0)
    name += 4;
  for (size_t i = 0; i < sizeof op_codes / sizeof op_codes[0]; i++)
    if (strcasecmp(frz_op_name(op_codes[i]), name) == 0)
      return op_codes[i];
  return FRZ_OP_NONE;
}

/* ---- data types ------------------------------------------------------------ */

#define NDTYPES 12
#define DTYPE_NONE 255

/* ncclDataType_t values 0..11 */
static const char *const dtype_names[NDTYPES] = {
    "int8",    "uint8",   "int32",   "uint32",   "int64",      "uint64",
    "float16", "float32", "float64", "bfloat16", "float8e4m3", "float8e5m2"};
static const unsigned char dtype_sizes[NDTYPES] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};

/* Other accepted spellings: short forms and NCCL's alias names. */
static const struct {
  const char *name;
  int dtype;
} dtype_aliases[] = {
    {"i8", 0},     {"char", 0},   {"u8", 1},    {"i32", 2},     {"int", 2},
    {"u32", 3},    {"i64", 4},    {"u64", 5},   {"f16", 6},     {"half", 6},
    {"f32", 7},    {"float", 7},  {"f64", 8},   {"double", 8},  {"bf16", 9},
    {"fp8e4m3", 10}, {"fp8e5m2", 11}, {"none", DTYPE_NONE},
};

const char *frz_dtype_name(unsigned dtype)
{
  if (dtype < NDTYPES)
    return dtype_names[dtype];
  if (dtype == DTYPE_NONE)
    return "none";
  return unknown_name("dtype", dtype);
}

int frz_dtype_from_name(const char *name)
{
  if (!name)
    return -1;
  if (strncasecmp(name, "nccl", 4) == 0)
    name += 4;
  int i = find_name(dtype_names, NDTYPES, name);
  if (i >= 0)
    return i;
  for (size_t k = 0; k < sizeof dtype_aliases / sizeof dtype_aliases[0]; k++)
    if (strcasecmp(dtype_aliases[k].name, name) == 0)
      return dtype_aliases[k].dtype;
  return -1;
}

size_t frz_dtype_size(unsigned dtype)
{
  return dtype < NDTYPES ? dtype_sizes[dtype] : 0;
}

/* ---- reduction ops, states, triggers, statuses ------------------------------ */

static const char *const redop_names[] = {"sum", "prod", "max", "min", "avg"};

const char *frz_redop_name(unsigned redop)
{
  if (redop < sizeof redop_names / sizeof redop_names[0])
    return redop_names[redop];
  if (redop == 255)
    return "none";
  return unknown_name("redop", redop);
}

static const char *const state_names[] = {"enqueued", "started", "completed", "failed"};

const char *frz_state_name(unsigned state)
{
  if (state < sizeof state_names / sizeof state_names[0])
    return state_names[state];
  return unknown_name("state", state);
}

static const char *const trigger_names[] = {"none",  "timeout",     "file", "signal", "abort",
                                            "async_error", "exit", "frame", "crash", "recovery", "pmix", "store",
                                            "salvaged", "snapshot"};

const char *frz_trigger_name(unsigned trigger)
{
  if (trigger < sizeof trigger_names / sizeof trigger_names[0])
    return trigger_names[trigger];
  return unknown_name("trigger", trigger);
}

static const char *const stack_status_names[] = {"ok", "no_answer", "masked", "gone", "skipped"};

const char *frz_stack_status_name(unsigned status)
{
  if (status < sizeof stack_status_names / sizeof stack_status_names[0])
    return stack_status_names[status];
  return unknown_name("stack_status", status);
}

static const char *const status_names[] = {
    "ok",        "io_error", "empty",     "bad_magic",       "unsupported_version",
    "truncated", "corrupt",  "no_memory", "invalid_argument"};

const char *frz_status_name(frz_status s)
{
  if ((unsigned)s < sizeof status_names / sizeof status_names[0])
    return status_names[s];
  return unknown_name("status", (unsigned)s);
}

/* NCCL's names (NCCL_ALGO_* / NCCL_PROTO_* order), as the profiler spells them. */
static const char *const algo_names[] = {"Tree", "Ring", "CollNetDirect", "CollNetChain",
                                         "NVLS", "NVLSTree", "PAT"};
static const char *const proto_names[] = {"LL", "LL128", "Simple"};

const char *frz_algo_name(unsigned algo)
{
  if (algo < sizeof algo_names / sizeof algo_names[0])
    return algo_names[algo];
  return algo == FRZ_ALGO_UNKNOWN ? "unknown" : unknown_name("algo", algo);
}

const char *frz_proto_name(unsigned proto)
{
  if (proto < sizeof proto_names / sizeof proto_names[0])
    return proto_names[proto];
  return proto == FRZ_PROTO_UNKNOWN ? "unknown" : unknown_name("proto", proto);
}

unsigned frz_algo_from_name(const char *name)
{
  int i = name ? find_name(algo_names, sizeof algo_names / sizeof algo_names[0], name) : -1;
  return i < 0 ? FRZ_ALGO_UNKNOWN : (unsigned)i;
}

unsigned frz_proto_from_name(const char *name)
{
  int i = name ? find_name(proto_names, sizeof proto_names / sizeof proto_names[0], name) : -1;
  return i < 0 ? FRZ_PROTO_UNKNOWN : (unsigned)i;
}

/* ncclProfilerEventState_t values 8..24 (NCCL's profiler interface). */
static const char *const proxy_state_names[] = {
    "SendGPUWait", "SendWait", "RecvWait", "RecvFlushWait", "RecvGPUWait", "CtrlIdle",
    "CtrlActive", "CtrlSleep", "CtrlWakeup", "CtrlAppend", "CtrlAppendEnd", "OpInProgress",
    "SendPeerWait", "NetPluginUpdate", "KernelChStop", "EndGroupApiStart", "BeginGroupApiEnd"};

const char *frz_proxy_state_name(unsigned state)
{
  if (state >= 8 && state - 8 < sizeof proxy_state_names / sizeof proxy_state_names[0])
    return proxy_state_names[state - 8];
  return unknown_name("state", state);
}

/* ---- file naming (frz.md, "File naming") ------------------------------------ */

/* Is c allowed as is in the job part of a dump file name? */
static int job_char_ok(char c)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '.' || c == '_' || c == '+' || c == '-';
}

int frz_dump_filename(char *buf, size_t size, const char *job_id, int32_t global_rank,
                      uint32_t pid, uint32_t frame)
{
  if (!buf || size == 0)
    return -1;
  char job[FRZ_JOB_MAX];
  size_t n = 0;
  for (; job_id && job_id[n] && n < FRZ_JOB_MAX - 1; n++)
    job[n] = job_char_ok(job_id[n]) ? job_id[n] : '_';
  job[n] = '\0';
  if (n == 0)
    strcpy(job, "job");
  if (job[0] == '.')
    job[0] = '_';
  int len = global_rank >= 0
                ? snprintf(buf, size, "%s-r%05d-f%04u.frz", job, (int)global_rank, frame)
                : snprintf(buf, size, "%s-p%u-f%04u.frz", job, pid, frame);
  if (len < 0 || (size_t)len >= size)
    return -1;
  return len;
}

const char *frz_dir_arrow(unsigned dir)
{
  return dir == FRZ_DIR_SEND ? "send->" : dir == FRZ_DIR_RECV ? "recv<-" : "?dir ";
}
