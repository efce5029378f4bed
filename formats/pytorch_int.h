/* pytorch_int.h — private to the PyTorch Flight Recorder importer
 * (pytorch_fr.c: the driver and counters; pytorch_pg.c: process groups;
 * pytorch_ops.c: entries into records). */
#ifndef FR_PYTORCH_INT_H
#define FR_PYTORCH_INT_H

#include <stdint.h>

#include "idmap.h"
#include "pytorch_fr.h"
#include "pyval.h"

#define PT_NAME_MAX FRZ_PT_NAME_MAX
#define PT_NO_DTYPE 255

/* One process group: from pg_config, or named by an entry only. */
typedef struct pt_pg {
  char name[PT_NAME_MAX];
  char desc[PT_NAME_MAX];
  int32_t *ranks;        /* global ranks of the members, in group-rank order */
  int32_t nranks;        /* -1 unknown */
  int32_t self;          /* this process's rank in the group, -1 unknown */
  int32_t comm;          /* index in the dump's comm table, -1 none */
  int64_t pg_id;         /* ProcessGroupNCCL's local id, -1 unknown */
  uint8_t pg_id_inferred; /* pg_id from the order of ids and names, not from an entry */
  uint8_t never_recorded; /* no pg_status entry can be its: it recorded nothing yet */
  const pv *status;      /* its pg_status entry (keyed by pg_id), NULL none */
  uint32_t nentries;     /* retained entries of the group */
} pt_pg;

/* The fields of an entry the importer reads, looked up once per entry
 * (pt_index_entries) instead of once per use. */
enum {
  PK_RECORD_ID, PK_PROFILING_NAME, PK_IS_P2P, PK_INPUT_SIZES, PK_OUTPUT_SIZES, PK_INPUT_DTYPES,
  PK_OUTPUT_DTYPES, PK_P2P_SEQ_ID, PK_COLLECTIVE_SEQ_ID, PK_SEQ_ID, PK_STATE, PK_TIME_CREATED_NS,
  PK_TIME_STARTED_NS, PK_TIME_COMPLETED_NS, PK_PROCESS_GROUP, PK_PG_ID, PK_N
};
typedef struct pt_entry {
  const pv *f[PK_N]; /* NULL: the entry has no such key */
  int32_t pg;        /* index in pgs of its group (collect_pgs), -1 before */
  int32_t p2p_self;  /* "nccl:send A->B" / "nccl:recv A<-B": A and B, */
  int32_t p2p_peer;  /*   when p2p_named */
  uint8_t p2p_named; /* pt_p2p_ranks found A and B in its profiling name */
} pt_entry;

/* What the importer works out from one profiling-name or dtype string,
 * kept by the string's node: when the pickle memoizes strings, as torch's
 * writer does, each distinct name is one node that every entry refers to,
 * so the work is done once per name.  Direct-mapped by node address; a
 * slot holds one node's facts, and a node that misses is simply worked
 * out again (the facts depend only on the node's bytes). */
#define PT_NODE_SLOTS 64
typedef struct pt_name_facts {
  const pv *node;     /* the profiling-name node; NULL: an empty slot */
  int32_t p2p_self, p2p_peer;
  uint8_t p2p_named;  /* pt_p2p_ranks found them (pt_index_entries) */
  uint8_t has_op;     /* op, name and close are set (fill_one) */
  uint8_t close;      /* a coalesced group's closing name */
  uint16_t op;
  uint32_t name;      /* index in the dump's op names */
} pt_name_facts;
typedef struct pt_dtype_fact {
  const pv *node;     /* a dtype string node; NULL: an empty slot */
  uint8_t dtype;
} pt_dtype_fact;
/* The slot of node p in a direct-mapped table of PT_NODE_SLOTS. */
static inline uint32_t pt_node_slot(const void *p)
{
  return (uint32_t)(((uintptr_t)p >> 5) & (PT_NODE_SLOTS - 1));
}

typedef struct pt_ctx {
  const char *name;
  frz_error *err;
  const pv *root;
  const pv *entries;     /* the entries list; NULL when the dump has none */
  uint32_t nentries;
  pt_entry *ef;          /* ef[i]: the fields of entries->items[i] */
  pt_pg *pgs;
  uint32_t npgs, cappgs;
  idmap pgmap;           /* hash of a group's name -> index in pgs */
  pt_name_facts names[PT_NODE_SLOTS]; /* by profiling-name node */
  pt_dtype_fact dtypes[PT_NODE_SLOTS]; /* by dtype node */
} pt_ctx;

/* A content error: the file decoded, but is not a usable FR dump. */
frz_status pt_bad(pt_ctx *c, const char *what, const char *detail);
frz_status pt_nomem(pt_ctx *c);

/* FNV-1a, 64 bits, continuing from h (start 0xcbf29ce484222325). */
uint64_t pt_fnv(uint64_t h, const void *p, size_t n);

/* The group of pg_config or entries named `name`, or NULL. */
pt_pg *pt_find_pg(pt_ctx *c, const char *name);
/* Look every entry's fields up once (c->ef), with its p2p ranks; -1 out
 * of memory.  Each entry's pg is set later, by pt_load_pgs. */
int pt_index_entries(pt_ctx *c);
/* The group name of an entry: process_group[0], else its pg_id. */
const char *pt_entry_pg_name(const pt_entry *e, char *buf, size_t size);
/* Groups of pg_config and of the entries, each with its pg_id and its
 * pg_status entry where they can be told; every entry's pg (pytorch_pg.c). */
frz_status pt_load_pgs(pt_ctx *c);
/* This process's global rank (see pytorch_fr.h); fills each group's self. */
int32_t pt_find_rank(pt_ctx *c);
/* A comm id every member computes alike: the group's name and members. */
uint64_t pt_pg_comm_id(const pt_pg *g);

/* The op of a profiling name word ("all_reduce", "_all_gather_base");
 * FRZ_OP_NONE when PyTorch writes no such name (pytorch_ops.c). */
uint16_t pt_op_of_word(const char *w, size_t n);
/* "nccl:send 3->4" or "nccl:recv 4<-3": self and peer group ranks; 0 or -1. */
int pt_p2p_ranks(const char *pname, int32_t *self, int32_t *peer);
/* Every entry into a record of d (and d->pt->records), rec_comm[i] the comm
 * table index of record i; coalesced groups and p2p seqs resolved. */
frz_status pt_fill_records(pt_ctx *c, frz_dump *d, uint32_t *rec_comm);
/* Coalesced collective groups whose completion the dump does not show
 * (pytorch_coal.c): marked FRZ_RF_NO_TRACKING.  comp_of[g] and enq_of[g]
 * are pg_status's last completed and last enqueued collective of group g
 * where they count collectives, else -1; comm_pg maps comm to group.
 * 0, or -1 out of memory. */
int pt_coalesced_evidence(frz_dump *d, const uint32_t *rec_comm, const uint32_t *comm_pg,
                          const int64_t *comp_of, const int64_t *enq_of);

#endif /* FR_PYTORCH_INT_H */
