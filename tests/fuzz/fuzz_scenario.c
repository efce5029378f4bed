/* tests/fuzz/fuzz_scenario.c: the scenario file parser (sc_load, which also
 * resolves faults and plans every comm) on arbitrary text.  sc_load reads a path, so each input is
 * written to an anonymous memory file and read back through /proc. */
#include "config.h"

#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "scenario.h"
#include "fuzz.h"

static int memfd = -1;
static char memfd_path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (memfd < 0) {
    memfd = memfd_create("fuzz.scn", 0);
    if (memfd < 0)
      return 0;
    snprintf(memfd_path, sizeof memfd_path, "/proc/self/fd/%d", memfd);
  }
  if (ftruncate(memfd, 0) != 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
    return 0;
  struct scenario sc;
  (void)sc_load(memfd_path, &sc);
  sc_free(&sc);
  return 0;
}
