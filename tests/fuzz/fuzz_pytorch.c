/* tests/fuzz/fuzz_pytorch.c: the PyTorch Flight Recorder importers (pickle
 * and JSON, picked by frz_pytorch_sniff as the tools do) on arbitrary bytes,
 * and what they build: the records, and the PyTorch side info (groups, op
 * names, sizes, coalesced groups, p2p seqs) walked whole so that a bad index
 * or an unterminated name shows. */
#include "config.h"

#include <string.h>

#include "frz.h"
#include "pytorch_fr.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  frz_dump d;
  frz_error err;
  (void)frz_pytorch_sniff(data, size);
  if (frz_import_pytorch(data, size, "host3-rank5.pickle", &d, &err) != FRZ_OK)
    return 0;
  for (uint64_t r = 0; r < d.nrecords; r++)
    (void)frz_find_callsite(&d, d.records[r].call_site);
  volatile size_t sink = 0;
  if (d.pt) {
    for (uint32_t i = 0; i < d.pt->nnames; i++) sink += strlen(d.pt->names[i]);
    for (uint64_t r = 0; r < d.nrecords; r++) {
      const frz_pt_record *p = &d.pt->records[r];
      if (p->name >= d.pt->nnames) __builtin_trap(); /* every record names its op */
      if (p->coalesced > FRZ_PT_COALESCED_OPEN) __builtin_trap();
      sink += p->in_numel + p->out_numel + p->in_dtype + p->out_dtype;
    }
    for (uint32_t c = 0; c < d.ncomms; c++) {
      const frz_pt_comm *pc = &d.pt->comms[c];
      sink += strlen(pc->name) + strlen(pc->desc) + pc->counters;
      if (pc->counters > FRZ_PT_CTR_UNKNOWN || memchr(pc->name, 0, sizeof pc->name) == NULL)
        __builtin_trap();
      if (d.comms[c].last_completed_seq > d.comms[c].last_enqueued_seq) __builtin_trap();
    }
  }
  (void)sink;
  frz_dump_free(&d);
  return 0;
}
