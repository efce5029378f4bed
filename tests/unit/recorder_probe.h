/* recorder_probe.h — helpers of the tests that run with the recorder
 * preloaded on the simulator (check_recorder, check_recorder_faults): make
 * a communicator, ask for a dump with FR_DUMP_SIGNAL (SIGUSR2), find and
 * decode it, pick out a comm's records.
 */
#ifndef FR_RECORDER_PROBE_H
#define FR_RECORDER_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "fr_cuda.h"
#include "fr_nccl.h"
#include "frz.h"

/* FR_DUMP_DIR, and the stream the tests issue on (set up by main). */
extern const char *dump_dir;
extern CUstream stream;

/* A 1-rank communicator of its own (asserts success). */
ncclComm_t one_rank_comm(void);

/* Highest frame number among the dumps in dump_dir, its path in path[];
 * -1 when none. */
int newest_frame(char *path, size_t len);

/* Ask for a dump with the signal; wait for one that began after the request
 * (not one already being written) and decode it into *out.  Returns 0, or
 * -1 with the reason in why[]. */
int request_dump(frz_dump *out, char *why, size_t whylen);

/* request_dump, asserting success (inside a Check test). */
void dump_now(frz_dump *out);

/* The comm with flightrec id `id` in dump `d`; NULL when absent. */
const frz_comm *comm_in(const frz_dump *d, uint64_t id);

/* The newest comm entry of handle `c` in dump `d` (handles are reused). */
const frz_comm *comm_of(const frz_dump *d, ncclComm_t c);

/* The records of comm `id`, in order, into out[]; returns how many. */
uint32_t records_of(const frz_dump *d, uint64_t id, const frz_record **out, uint32_t max);

/* Peak resident set size of this process (VmHWM), in KiB; 0 unknown. */
long vm_hwm_kb(void);

#endif /* FR_RECORDER_PROBE_H */
