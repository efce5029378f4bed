/* tests/fuzz/fuzz_pytorch.c: the PyTorch Flight Recorder importers (pickle
 * and JSON, picked by frz_pytorch_sniff as the tools do) on arbitrary bytes. */
#include "config.h"

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
  frz_dump_free(&d);
  return 0;
}
