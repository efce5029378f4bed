/* identity.c — comm identity hashing and the process's identity from the
 * launcher's environment (see identity.h). */
#include "identity.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FNV_PRIME UINT64_C(0x100000001b3)

uint64_t fr_hash_bytes(uint64_t h, const void *p, size_t len) {
  const unsigned char *b = p;
  for (size_t i = 0; i < len; i++) {
    h ^= b[i];
    h *= FNV_PRIME;
  }
  return h;
}

uint64_t fr_hash_u64(uint64_t h, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++) b[i] = (unsigned char)(v >> (8 * i));
  return fr_hash_bytes(h, b, sizeof b);
}

/* splitmix64's finaliser: spreads FNV's weak high bits. */
uint64_t fr_hash_finish(uint64_t h) {
  h ^= h >> 30;
  h *= UINT64_C(0xbf58476d1ce4e5b9);
  h ^= h >> 27;
  h *= UINT64_C(0x94d049bb133111eb);
  h ^= h >> 31;
  return h ? h : 1;
}

uint64_t fr_comm_id_from_unique(const void *unique_id, size_t len, int nranks) {
  uint64_t h = fr_hash_bytes(FR_HASH_SEED, "init", 4);
  h = fr_hash_bytes(h, unique_id, len);
  h = fr_hash_u64(h, (uint64_t)(int64_t)nranks);
  return fr_hash_finish(h);
}

uint64_t fr_comm_id_from_split(uint64_t parent, uint64_t split_index, int color) {
  uint64_t h = fr_hash_bytes(FR_HASH_SEED, "split", 5);
  h = fr_hash_u64(h, parent);
  h = fr_hash_u64(h, split_index);
  h = fr_hash_u64(h, (uint64_t)(int64_t)color);
  return fr_hash_finish(h);
}

uint64_t fr_comm_id_from_uniques(const void *ids, size_t id_len, int n, int nranks) {
  uint64_t h = fr_hash_bytes(FR_HASH_SEED, "scalable", 8);
  for (int i = 0; i < n; i++) h = fr_hash_bytes(h, (const char *)ids + (size_t)i * id_len, id_len);
  h = fr_hash_u64(h, (uint64_t)(int64_t)n);
  h = fr_hash_u64(h, (uint64_t)(int64_t)nranks);
  return fr_hash_finish(h);
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

uint64_t fr_comm_id_from_shrink(uint64_t parent, uint64_t index, const int *excl, int nexcl) {
  uint64_t h = fr_hash_bytes(FR_HASH_SEED, "shrink", 6);
  h = fr_hash_u64(h, parent);
  h = fr_hash_u64(h, index);
  /* the set, not the order the caller listed it in: hash it sorted */
  int small[64], *v = nexcl <= 64 ? small : malloc((size_t)nexcl * sizeof *v);
  if (v && nexcl > 0) {
    memcpy(v, excl, (size_t)nexcl * sizeof *v);
    qsort(v, (size_t)nexcl, sizeof *v, cmp_int);
    for (int i = 0; i < nexcl; i++) h = fr_hash_u64(h, (uint64_t)(int64_t)v[i]);
  }
  if (v != small) free(v);
  h = fr_hash_u64(h, (uint64_t)(int64_t)nexcl);
  return fr_hash_finish(h);
}

uint64_t fr_comm_id_from_clique(const char *host, uint32_t pid, uint64_t index, int ndev) {
  uint64_t h = fr_hash_bytes(FR_HASH_SEED, "initall", 7);
  h = fr_hash_bytes(h, host, strlen(host));
  h = fr_hash_u64(h, pid);
  h = fr_hash_u64(h, index);
  h = fr_hash_u64(h, (uint64_t)(int64_t)ndev);
  return fr_hash_finish(h);
}

/* First variable of `names` holding a whole non-negative int, else -1. */
static int env_int(const char *const *names) {
  for (; *names; names++) {
    const char *v = getenv(*names);
    if (!v || !*v) continue;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno == 0 && *end == '\0' && x >= 0 && x <= 0x7fffffff) return (int)x;
  }
  return -1;
}

int fr_env_global_rank(void) {
  static const char *const n[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                  "SLURM_PROCID", NULL};
  return env_int(n);
}

int fr_env_world_size(void) {
  static const char *const n[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                  "SLURM_NTASKS", NULL};
  return env_int(n);
}

int fr_env_local_rank(void) {
  static const char *const n[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                  "SLURM_LOCALID", NULL};
  return env_int(n);
}

void fr_sanitize_name(char *s) {
  for (; *s; s++) {
    char c = *s;
    int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '.' || c == '_' || c == '-';
    if (!ok) *s = '_';
  }
}

void fr_env_job_id(char *buf, size_t len) {
  static const char *const n[] = {"FR_JOB_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID", NULL};
  buf[0] = '\0';
  for (const char *const *p = n; *p; p++) {
    const char *v = getenv(*p);
    /* torchrun's run id is "none" unless --rdzv_id is given: every such job
     * would share it, so it is no job id (the first comm's id is used) */
    if (v && !strcmp(*p, "TORCHELASTIC_RUN_ID") && !strcmp(v, "none")) continue;
    if (v && *v) {
      size_t l = strlen(v);
      if (l >= len) l = len - 1;
      memcpy(buf, v, l);
      buf[l] = '\0';
      if (buf[0] == '.') buf[0] = '_';
      fr_sanitize_name(buf);
      return;
    }
  }
}
