/* names.c — the words of scenario files: op kinds, datatypes, reduction
 * operators, and membership of rank/step selectors. */
#include "config.h"

#include <string.h>
#include <strings.h>

#include "scenario.h"

static const struct {
  const char *name;
  enum sc_kind kind;
} sc_kinds[] = {
  { "allreduce", SC_ALLREDUCE }, { "broadcast", SC_BROADCAST }, { "bcast", SC_BCAST },
  { "reduce", SC_REDUCE }, { "allgather", SC_ALLGATHER }, { "reducescatter", SC_REDUCESCATTER },
  { "alltoall", SC_ALLTOALL }, { "gather", SC_GATHER }, { "scatter", SC_SCATTER },
  { "alltoallv", SC_ALLTOALLV },
  { "send", SC_SEND }, { "recv", SC_RECV }, { "group", SC_GROUP_BEGIN },
  { "sync", SC_SYNC }, { "sleep", SC_SLEEP }, { "create", SC_CREATE }, { "destroy", SC_DESTROY },
  { "finalize", SC_FINALIZE }, { "abort", SC_ABORT },
};

int sc_kind_lookup(const char *s, enum sc_kind *out)
{
  for (size_t i = 0; i < sizeof sc_kinds / sizeof sc_kinds[0]; i++) {
    if (!strcmp(s, sc_kinds[i].name)) {
      *out = sc_kinds[i].kind;
      return 0;
    }
  }
  return -1;
}

const char *sc_kind_name(enum sc_kind kind)
{
  if (kind == SC_GROUP_END)
    return "group end";
  if (kind == SC_GROUP_BEGIN)
    return "group begin";
  for (size_t i = 0; i < sizeof sc_kinds / sizeof sc_kinds[0]; i++)
    if (sc_kinds[i].kind == kind)
      return sc_kinds[i].name;
  return "?";
}

int sc_kind_is_nccl(enum sc_kind kind)
{
  return kind <= SC_RECV;
}

int sc_kind_is_life(enum sc_kind kind)
{
  return kind >= SC_CREATE && kind <= SC_ABORT;
}

const char *sc_post_name(enum sc_post_action action)
{
  static const char *names[] = { "empty-dump", "remove-dump", "copy-dump", "rename-dump" };
  return (unsigned)action < sizeof names / sizeof names[0] ? names[action] : "?";
}

int sc_kind_has_root(enum sc_kind k)
{
  return k == SC_BROADCAST || k == SC_BCAST || k == SC_REDUCE || k == SC_GATHER || k == SC_SCATTER;
}

int sc_kind_has_redop(enum sc_kind k)
{
  return k == SC_ALLREDUCE || k == SC_REDUCE || k == SC_REDUCESCATTER;
}

int sc_kind_has_peer(enum sc_kind k)
{
  return k == SC_SEND || k == SC_RECV;
}

int sc_kind_has_algo(enum sc_kind k)
{
  return sc_kind_is_nccl(k) && !sc_kind_has_peer(k) && k != SC_ALLTOALLV;
}

static const char *sc_word_lookup(const char *const *words, size_t n, const char *s)
{
  for (size_t i = 0; i < n; i++)
    if (!strcasecmp(words[i], s))
      return words[i];
  return NULL;
}

const char *sc_algo_lookup(const char *s)
{
  static const char *const algos[] = { "Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT" };
  return sc_word_lookup(algos, sizeof algos / sizeof algos[0], s);
}

const char *sc_proto_lookup(const char *s)
{
  static const char *const protos[] = { "LL", "LL128", "Simple" };
  return sc_word_lookup(protos, sizeof protos / sizeof protos[0], s);
}

static const struct {
  const char *name;
  ncclDataType_t dtype;
} sc_dtypes[] = {
  { "int8", ncclInt8 }, { "char", ncclInt8 }, { "uint8", ncclUint8 }, { "int32", ncclInt32 },
  { "int", ncclInt32 }, { "uint32", ncclUint32 }, { "int64", ncclInt64 }, { "uint64", ncclUint64 },
  { "float16", ncclFloat16 }, { "half", ncclFloat16 }, { "fp16", ncclFloat16 },
  { "float32", ncclFloat32 }, { "float", ncclFloat32 }, { "fp32", ncclFloat32 },
  { "float64", ncclFloat64 }, { "double", ncclFloat64 }, { "fp64", ncclFloat64 },
  { "bfloat16", ncclBfloat16 }, { "bf16", ncclBfloat16 },
  { "float8e4m3", ncclFloat8e4m3 }, { "fp8e4m3", ncclFloat8e4m3 },
  { "float8e5m2", ncclFloat8e5m2 }, { "fp8e5m2", ncclFloat8e5m2 },
};

int sc_dtype_lookup(const char *s, ncclDataType_t *out)
{
  for (size_t i = 0; i < sizeof sc_dtypes / sizeof sc_dtypes[0]; i++) {
    if (!strcmp(s, sc_dtypes[i].name)) {
      *out = sc_dtypes[i].dtype;
      return 0;
    }
  }
  return -1;
}

size_t sc_dtype_size(ncclDataType_t dtype)
{
  switch (dtype) {
  case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
  case ncclFloat16: case ncclBfloat16: return 2;
  case ncclInt64: case ncclUint64: case ncclFloat64: return 8;
  default: return 4;
  }
}

int sc_redop_lookup(const char *s, ncclRedOp_t *out)
{
  static const char *names[] = { "sum", "prod", "max", "min", "avg" };
  for (int i = 0; i < 5; i++) {
    if (!strcmp(s, names[i])) {
      *out = (ncclRedOp_t)i;
      return 0;
    }
  }
  return -1;
}

int sc_set_has(const struct sc_set *s, long v)
{
  for (int i = 0; i < s->n; i++)
    if (v >= s->lo[i] && v <= s->hi[i] && (v - s->lo[i]) % s->stride[i] == 0)
      return 1;
  return 0;
}
