/* listdir.c — the files of a dump directory, in name order. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fr_dump.h"

static int cmp_str(const void *x, const void *y)
{
  return strcmp(*(char *const *)x, *(char *const *)y);
}

int fd_list_dir(const char *dir, char ***paths, size_t *n)
{
  DIR *dp = opendir(dir);
  if (!dp) return -1;
  size_t first = *n, dl = strlen(dir);
  int slash = dl && dir[dl - 1] == '/';
  struct dirent *de;
  while ((de = readdir(dp)) != NULL) {
    if (de->d_name[0] == '.' || strcmp(de->d_name, "TRIGGER") == 0) continue;
    size_t len = dl + strlen(de->d_name) + 2;
    char *p = malloc(len);
    if (!p) goto nomem;
    snprintf(p, len, "%s%s%s", dir, slash ? "" : "/", de->d_name);
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISREG(st.st_mode)) {
      free(p);
      continue;
    }
    char **np = realloc(*paths, (*n + 1) * sizeof *np);
    if (!np) {
      free(p);
      goto nomem;
    }
    *paths = np;
    np[(*n)++] = p;
  }
  closedir(dp);
  if (*n - first > 1) qsort(*paths + first, *n - first, sizeof **paths, cmp_str);
  return 0;
nomem:
  closedir(dp);
  errno = ENOMEM;
  return -1;
}
