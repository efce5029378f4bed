/* pytorch_pg.c — the process groups of a PyTorch Flight Recorder dump:
 * pg_config, the groups its entries name, which pg_status entry belongs
 * to which group, and this process's rank. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pytorch_int.h"

frz_status pt_bad(pt_ctx *c, const char *what, const char *detail)
{
  return pv_fail(c->err, FRZ_E_CORRUPT, c->name, 0, "%s%s", what, detail);
}

frz_status pt_nomem(pt_ctx *c) { return pv_fail(c->err, FRZ_E_NOMEM, c->name, 0, "out of memory"); }

uint64_t pt_fnv(uint64_t h, const void *p, size_t n)
{
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) {
    h ^= s[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

static uint64_t name_hash(const char *name) { return pt_fnv(0xcbf29ce484222325ull, name, strlen(name)); }

/* Ranks from "[0, 1, 2]" (pg_config writes a string) or a list of ints;
 * anything else ("all", garbage) leaves them unknown. */
static int parse_ranks(const pv *v, pt_pg *g)
{
  g->nranks = -1;
  if (!v) return 0;
  uint32_t cap = 0, n = 0;
  int32_t *r = NULL;
  if (v->type == PV_LIST || v->type == PV_TUPLE) {
    cap = v->n;
    r = malloc((cap ? cap : 1) * sizeof *r);
    if (!r) return -1;
    for (uint32_t i = 0; i < v->n; i++) {
      int64_t x;
      if (pv_int(v->items[i], &x) || x < 0 || x > INT32_MAX) {
        free(r);
        return 0;
      }
      r[n++] = (int32_t)x;
    }
  } else if (v->type == PV_STR) {
    size_t i = 0;
    cap = (uint32_t)(v->slen / 2 + 1);
    r = malloc(cap * sizeof *r);
    if (!r) return -1;
    while (i < v->slen) {
      char ch = v->s[i];
      if (ch >= '0' && ch <= '9') {
        int64_t x = 0;
        while (i < v->slen && v->s[i] >= '0' && v->s[i] <= '9' && x <= INT32_MAX)
          x = x * 10 + (v->s[i++] - '0');
        if (x > INT32_MAX || n == cap) {
          free(r);
          return 0;
        }
        r[n++] = (int32_t)x;
      } else if (ch == '[' || ch == ']' || ch == ',' || ch == ' ') {
        i++;
      } else {
        free(r);
        return 0;
      }
    }
  } else {
    return 0;
  }
  g->ranks = r;
  g->nranks = n ? (int32_t)n : -1;
  return 0;
}

pt_pg *pt_find_pg(pt_ctx *c, const char *name)
{
  uint32_t pos = 0, i;
  uint64_t h = name_hash(name);
  while ((i = idmap_next(&c->pgmap, h, &pos)) != UINT32_MAX)
    if (strcmp(c->pgs[i].name, name) == 0) return &c->pgs[i];
  return NULL;
}

static pt_pg *add_pg(pt_ctx *c, const char *name)
{
  if (c->npgs == c->cappgs) {
    uint32_t ncap = c->cappgs ? c->cappgs * 2 : 8;
    pt_pg *p = ncap > c->cappgs ? realloc(c->pgs, (size_t)ncap * sizeof *p) : NULL;
    if (!p) return NULL;
    c->pgs = p;
    c->cappgs = ncap;
  }
  pt_pg *g = &c->pgs[c->npgs];
  memset(g, 0, sizeof *g);
  snprintf(g->name, sizeof g->name, "%s", name);
  g->nranks = g->self = g->comm = -1;
  g->pg_id = -1;
  if (idmap_put(&c->pgmap, name_hash(g->name), c->npgs)) return NULL;
  c->npgs++;
  return g;
}

int pt_index_entries(pt_ctx *c)
{
  static const char *const keys[PK_N] = {
      [PK_RECORD_ID] = "record_id", [PK_PROFILING_NAME] = "profiling_name", [PK_IS_P2P] = "is_p2p",
      [PK_INPUT_SIZES] = "input_sizes", [PK_OUTPUT_SIZES] = "output_sizes",
      [PK_INPUT_DTYPES] = "input_dtypes", [PK_OUTPUT_DTYPES] = "output_dtypes",
      [PK_P2P_SEQ_ID] = "p2p_seq_id", [PK_COLLECTIVE_SEQ_ID] = "collective_seq_id", [PK_SEQ_ID] = "seq_id",
      [PK_STATE] = "state", [PK_TIME_CREATED_NS] = "time_created_ns",
      [PK_TIME_STARTED_NS] = "time_discovered_started_ns",
      [PK_TIME_COMPLETED_NS] = "time_discovered_completed_ns", [PK_PROCESS_GROUP] = "process_group",
      [PK_PG_ID] = "pg_id"};
  pv_keyset ks;
  pv_keyset_init(&ks, keys, PK_N);
  pv_layout *lay = calloc(1, sizeof *lay);
  c->ef = c->nentries ? malloc((size_t)c->nentries * sizeof *c->ef) : NULL;
  if (!lay || (c->nentries && !c->ef)) {
    free(lay);
    return -1;
  }
  char pn[PT_NAME_MAX];
  for (uint32_t i = 0; i < c->nentries; i++) {
    pt_entry *e = &c->ef[i];
    pv_fields_cached(c->entries->items[i], &ks, lay, e->f);
    e->pg = -1;
    const pv *nm = e->f[PK_PROFILING_NAME];
    pt_name_facts *nf = nm ? &c->names[pt_node_slot(nm)] : NULL;
    if (nf && nf->node == nm) {
      e->p2p_named = nf->p2p_named;
      e->p2p_self = nf->p2p_self;
      e->p2p_peer = nf->p2p_peer;
      continue;
    }
    pv_cstr(nm, pn, sizeof pn);
    e->p2p_self = e->p2p_peer = -1;
    e->p2p_named = pt_p2p_ranks(pn, &e->p2p_self, &e->p2p_peer) == 0;
    if (nf) *nf = (pt_name_facts){.node = nm, .p2p_self = e->p2p_self, .p2p_peer = e->p2p_peer,
                                  .p2p_named = e->p2p_named};
  }
  free(lay);
  return 0;
}

const char *pt_entry_pg_name(const pt_entry *e, char *buf, size_t size)
{
  const pv *g = e->f[PK_PROCESS_GROUP];
  int64_t id;
  buf[0] = '\0';
  if (g && (g->type == PV_TUPLE || g->type == PV_LIST) && g->n >= 1) pv_cstr(g->items[0], buf, size);
  else if (g && g->type == PV_STR) pv_cstr(g, buf, size);
  if (!buf[0] && pv_int(e->f[PK_PG_ID], &id) == 0) snprintf(buf, size, "%lld", (long long)id);
  return buf;
}

/* A decimal name ("41") as a number; -1 for any other name. */
static int64_t decimal(const char *s)
{
  int64_t v = 0;
  if (!*s || strlen(s) > 15) return -1;
  for (; *s; s++) {
    if (*s < '0' || *s > '9') return -1;
    v = v * 10 + (*s - '0');
  }
  return v;
}

typedef struct idname {
  int64_t key;   /* a pg_id, or a group name as a number */
  uint32_t pg;   /* index in pgs (names) */
} idname;

static int cmp_idname(const void *x, const void *y)
{
  const idname *a = x, *b = y;
  return (a->key > b->key) - (a->key < b->key);
}

/* Is pg_id `id` already some group's? */
static int id_taken(const pt_ctx *c, int64_t id)
{
  for (uint32_t i = 0; i < c->npgs; i++)
    if (c->pgs[i].pg_id == id) return 1;
  return 0;
}

/* pg_ids of the groups no entry names, from the order of pg_status's ids and
 * pg_config's names: PyTorch gives each ProcessGroupNCCL of a process the
 * next local id as it creates it, and default group names count the
 * new_group calls of the whole job, so both grow together.  Between two
 * groups whose ids the entries give (or before the first, after the last),
 * the unnamed ids and the unnamed decimal names of member groups are paired
 * in order when there are as many of each; else those groups stay without
 * a pg_id (their counters unknown). */
static frz_status infer_pg_ids(pt_ctx *c, const pv *status)
{
  uint32_t nst = status && status->type == PV_DICT ? status->n / 2 : 0;
  idname *ids = malloc((nst ? nst : 1) * sizeof *ids);
  idname *nms = malloc((c->npgs ? c->npgs : 1) * sizeof *nms);
  idname *anc = malloc((c->npgs + 2) * sizeof *anc);
  uint32_t ni = 0, nn = 0, na = 0;
  if (!ids || !nms || !anc) {
    free(ids);
    free(nms);
    free(anc);
    return pt_nomem(c);
  }
  char buf[32];
  /* the default group is the first ProcessGroupNCCL a process creates:
   * pg_id 0, in pg_status when it recorded anything */
  for (uint32_t i = 0; i < c->npgs; i++) {
    pt_pg *g = &c->pgs[i];
    if (g->pg_id >= 0 || strcmp(g->desc, "default_pg") != 0 || id_taken(c, 0) || !nst) continue;
    int listed = 0;
    for (uint32_t k = 0; k < nst; k++) listed |= decimal(pv_cstr(status->items[2 * k], buf, sizeof buf)) == 0;
    if (listed) {
      g->pg_id = 0;
      g->pg_id_inferred = 1;
    } else {
      g->never_recorded = 1;
    }
  }
  for (uint32_t k = 0; k < nst; k++) {
    int64_t id = decimal(pv_cstr(status->items[2 * k], buf, sizeof buf));
    if (id >= 0 && !id_taken(c, id)) ids[ni++] = (idname){id, 0};
  }
  anc[na++] = (idname){-1, UINT32_MAX}; /* key: the name; pg: the id (as a sentinel) */
  for (uint32_t i = 0; i < c->npgs; i++) {
    const pt_pg *g = &c->pgs[i];
    int64_t nm = decimal(g->name);
    if (nm < 0 || g->nranks < 0 || g->never_recorded || (g->self < 0 && g->nranks > 0 && !g->nentries))
      continue;
    if (g->pg_id >= 0) anc[na++] = (idname){nm, (uint32_t)i};
    else nms[nn++] = (idname){nm, i};
  }
  qsort(ids, ni, sizeof *ids, cmp_idname);
  qsort(nms, nn, sizeof *nms, cmp_idname);
  qsort(anc + 1, na - 1, sizeof *anc, cmp_idname);
  /* the anchors must agree: ids grow with names */
  int monotone = 1;
  for (uint32_t k = 2; k < na; k++)
    if (c->pgs[anc[k].pg].pg_id <= c->pgs[anc[k - 1].pg].pg_id) monotone = 0;
  for (uint32_t k = 0; monotone && k < na; k++) {
    int64_t nlo = anc[k].key, nhi = k + 1 < na ? anc[k + 1].key : INT64_MAX;
    int64_t ilo = k ? c->pgs[anc[k].pg].pg_id : -1;
    int64_t ihi = k + 1 < na ? c->pgs[anc[k + 1].pg].pg_id : INT64_MAX;
    uint32_t a0 = 0, a1, b0 = 0, b1;
    while (a0 < nn && nms[a0].key <= nlo) a0++;
    for (a1 = a0; a1 < nn && nms[a1].key < nhi; a1++) {}
    while (b0 < ni && ids[b0].key <= ilo) b0++;
    for (b1 = b0; b1 < ni && ids[b1].key < ihi; b1++) {}
    if (b1 == b0 && nst) { /* no pg_status id left between them: those groups recorded nothing */
      for (uint32_t j = a0; j < a1; j++) c->pgs[nms[j].pg].never_recorded = 1;
      continue;
    }
    if (a1 - a0 != b1 - b0) continue;
    for (uint32_t j = 0; j < a1 - a0; j++) {
      pt_pg *g = &c->pgs[nms[a0 + j].pg];
      g->pg_id = ids[b0 + j].key;
      g->pg_id_inferred = 1;
    }
  }
  /* PyTorch lists a group in pg_status from its first entry on: with every
   * id of pg_status taken, a member group without a pg_id recorded nothing */
  uint32_t left = 0;
  for (uint32_t k = 0; k < ni; k++)
    if (!id_taken(c, ids[k].key)) left++;
  for (uint32_t i = 0; status && status->type == PV_DICT && !left && i < c->npgs; i++) {
    pt_pg *g = &c->pgs[i];
    if (g->pg_id < 0 && g->self >= 0 && !g->nentries) g->never_recorded = 1;
  }
  free(ids);
  free(nms);
  free(anc);
  return FRZ_OK;
}

/* Groups of pg_config, then any group an entry names that pg_config lacks;
 * each group's pg_id from its entries. */
static frz_status collect_pgs(pt_ctx *c)
{
  const pv *cfg = pv_get(c->root, "pg_config");
  char nm[PT_NAME_MAX];
  if (cfg && cfg->type == PV_DICT) {
    for (uint32_t k = 0; k + 1 < cfg->n; k += 2) {
      const pv *v = cfg->items[k + 1];
      pv_cstr(cfg->items[k], nm, sizeof nm);
      if (pv_get(v, "name")) pv_cstr(pv_get(v, "name"), nm, sizeof nm);
      if (pt_find_pg(c, nm)) continue;
      pt_pg *g = add_pg(c, nm);
      if (!g) return pt_nomem(c);
      pv_cstr(pv_get(v, "desc"), g->desc, sizeof g->desc);
      if (parse_ranks(pv_get(v, "ranks"), g)) return pt_nomem(c);
    }
  }
  /* each group by the string node of its name, in a small direct-mapped
   * cache: torch memoizes strings, so a group's entries share one node,
   * and a non-empty string names its group alone */
  enum { PG_CACHE = 32 };
  const pv *seen[PG_CACHE] = {NULL};
  uint32_t seen_pg[PG_CACHE];
  for (uint32_t i = 0; i < c->nentries; i++) {
    const pt_entry *e = &c->ef[i];
    const pv *t = e->f[PK_PROCESS_GROUP], *node = NULL;
    if (t && (t->type == PV_TUPLE || t->type == PV_LIST) && t->n >= 1 && t->items[0]->type == PV_STR &&
        t->items[0]->slen && t->items[0]->s[0])
      node = t->items[0];
    size_t slot = ((uintptr_t)node >> 5) % PG_CACHE;
    pt_pg *g = node && seen[slot] == node ? &c->pgs[seen_pg[slot]]
                                          : pt_find_pg(c, pt_entry_pg_name(e, nm, sizeof nm));
    if (!g && !(g = add_pg(c, nm))) return pt_nomem(c);
    seen[slot] = node;
    seen_pg[slot] = (uint32_t)(g - c->pgs);
    c->ef[i].pg = (int32_t)(g - c->pgs);
    g->nentries++;
    const pv *pg = e->f[PK_PROCESS_GROUP];
    if (!g->desc[0] && pg && (pg->type == PV_TUPLE || pg->type == PV_LIST) && pg->n >= 2)
      pv_cstr(pg->items[1], g->desc, sizeof g->desc);
    int64_t id;
    if (g->pg_id < 0 && pv_int(e->f[PK_PG_ID], &id) == 0 && id >= 0) g->pg_id = id;
  }
  return FRZ_OK;
}

/* Each group's pg_status entry, by its pg_id. */
static void attach_status(pt_ctx *c, const pv *status)
{
  if (!status || status->type != PV_DICT) return;
  char key[32], buf[32];
  for (uint32_t i = 0; i < c->npgs; i++) {
    pt_pg *g = &c->pgs[i];
    if (g->pg_id < 0) continue;
    snprintf(key, sizeof key, "%lld", (long long)g->pg_id);
    for (uint32_t k = 0; k + 1 < status->n; k += 2)
      if (strcmp(pv_cstr(status->items[k], buf, sizeof buf), key) == 0) g->status = status->items[k + 1];
  }
}

frz_status pt_load_pgs(pt_ctx *c)
{
  frz_status st = collect_pgs(c);
  if (st) return st;
  (void)pt_find_rank(c); /* each group's self rank, for the inference */
  const pv *status = pv_get(c->root, "pg_status");
  if ((st = infer_pg_ids(c, status))) return st;
  attach_status(c, status);
  return FRZ_OK;
}

int32_t pt_find_rank(pt_ctx *c)
{
  int64_t r;
  int32_t g = -1;
  if (pv_int(pv_get(c->root, "rank"), &r) == 0 && r >= 0 && r <= INT32_MAX) g = (int32_t)r;
  for (uint32_t i = 0; i < c->nentries; i++) {
    const pt_entry *e = &c->ef[i];
    if (!e->p2p_named) continue;
    int32_t self = e->p2p_self;
    pt_pg *p = e->pg >= 0 ? &c->pgs[e->pg] : NULL;
    if (p && p->self < 0) p->self = self;
    if (g < 0 && p && self < p->nranks) g = p->ranks[self];
  }
  for (uint32_t i = 0; g < 0 && i < c->npgs; i++)
    if (c->pgs[i].nranks == 1) g = c->pgs[i].ranks[0];
  if (g < 0) {
    long n = frz_pytorch_rank_from_name(c->name ? c->name : "");
    if (n >= 0 && n <= INT32_MAX) g = (int32_t)n;
  }
  for (uint32_t i = 0; g >= 0 && i < c->npgs; i++)
    for (int32_t k = 0; k < c->pgs[i].nranks; k++)
      if (c->pgs[i].ranks[k] == g) c->pgs[i].self = k;
  return g;
}

uint64_t pt_pg_comm_id(const pt_pg *g)
{
  uint64_t h = pt_fnv(0xcbf29ce484222325ull, "pytorch-pg:", 11);
  h = pt_fnv(h, g->name, strlen(g->name) + 1);
  for (int32_t i = 0; i < g->nranks; i++) h = pt_fnv(h, &g->ranks[i], sizeof g->ranks[i]);
  return h ? h : 1;
}
