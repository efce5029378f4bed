/* host.c — the host a scenario rank says it runs on.
 *
 * The recorder writes each process's host into its dump from gethostname(2),
 * and the analysis counts configuration splits in hosts where their sides
 * are whole hosts.  A scenario puts ranks on hosts of their own with
 * "env rank=SEL FR_SCENARIO_HOST=NAME": this definition interposes on
 * libc's for the whole job process (the job is linked -export-dynamic, so
 * a preloaded librecorder.so binds to it).  Without the variable it
 * returns the machine's node name, as libc's does. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

int gethostname(char *name, size_t len)
{
  const char *h = getenv("FR_SCENARIO_HOST");
  struct utsname u;
  if (!h || !*h) {
    if (uname(&u) != 0) return -1;
    h = u.nodename;
  }
  size_t n = strlen(h);
  if (n >= len) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(name, h, n + 1);
  return 0;
}
