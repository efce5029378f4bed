/* identity.h — names that every rank computes alike, without communicating.
 *
 * comm_id (u64, never 0): for CommInitRank/InitRankConfig the hash of the
 * 128 ncclUniqueId bytes and nranks; for CommSplit the hash of (parent
 * comm_id, index of this split among the parent's splits, color).  Every
 * member of a comm gets the same value because they hash the same inputs.
 * Process identity comes from the launcher's environment.
 */
#ifndef FR_IDENTITY_H
#define FR_IDENTITY_H

#include <stddef.h>
#include <stdint.h>

/* 64-bit hash of `len` bytes continuing from `h` (start with FR_HASH_SEED). */
#define FR_HASH_SEED UINT64_C(0xcbf29ce484222325)
uint64_t fr_hash_bytes(uint64_t h, const void *p, size_t len);
uint64_t fr_hash_u64(uint64_t h, uint64_t v);
/* Final mixing; never returns 0. */
uint64_t fr_hash_finish(uint64_t h);

/* comm_id of a comm made by CommInitRank(Config) from `id` (128 bytes). */
uint64_t fr_comm_id_from_unique(const void *unique_id, size_t len, int nranks);
/* comm_id of the child made by the `split_index`-th CommSplit of `parent`. */
uint64_t fr_comm_id_from_split(uint64_t parent, uint64_t split_index, int color);

/* comm_id of a comm made by CommInitRankScalable from `n` unique ids. */
uint64_t fr_comm_id_from_uniques(const void *ids, size_t id_len, int n, int nranks);
/* comm_id of the child made by the `index`-th CommShrink of `parent` that
 * excluded the `nexcl` comm ranks in `excl` (any order). */
uint64_t fr_comm_id_from_shrink(uint64_t parent, uint64_t index, const int *excl, int nexcl);
/* comm_id of the `index`-th CommInitAll clique of one process (all its
 * members live in that process, so host and pid make it unique). */
uint64_t fr_comm_id_from_clique(const char *host, uint32_t pid, uint64_t index, int ndev);

/* Global rank from RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK,
 * SLURM_PROCID (first one set and valid); -1 when none. */
int fr_env_global_rank(void);
/* World size from WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS; -1. */
int fr_env_world_size(void);
/* Local rank from LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID; -1. */
int fr_env_local_rank(void);
/* Job id into buf (FR_JOB_ID, SLURM_JOB_ID, TORCHELASTIC_RUN_ID but for
 * torchrun's default "none"); "" when none.  Characters outside
 * [A-Za-z0-9._-] become '_'. */
void fr_env_job_id(char *buf, size_t len);
/* Make `s` safe for a file name in place: [A-Za-z0-9._-], others '_'. */
void fr_sanitize_name(char *s);

#endif /* FR_IDENTITY_H */
