/* tests/fuzz/driver.c: the reproducer main() for a fuzz target.  Each
 * argument is a file or a directory (walked recursively; names starting with
 * '.' and README files are skipped); every file is passed once to
 * LLVMFuzzerTestOneInput.  Exit 0 when every input ran, 1 when an argument
 * could not be read, 2 when no input was found at all.  A crash is the
 * process dying, as under libFuzzer. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static unsigned long ran;
static int failed;

/* Read the file at `path` into an exact-size buffer and run the target on it. */
static void run_file(const char *path)
{
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    fprintf(stderr, "%s: %s\n", path, strerror(errno));
    failed = 1;
    return;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  while (buf) {
    len += fread(buf + len, 1, cap - len, fp);
    if (len < cap)
      break;
    uint8_t *p = realloc(buf, cap * 2);
    if (!p) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = p;
    cap *= 2;
  }
  int bad = ferror(fp);
  fclose(fp);
  if (!buf || bad) {
    fprintf(stderr, "%s: cannot read\n", path);
    free(buf);
    failed = 1;
    return;
  }
  /* An exact-size copy, so that ASan sees a read one past the end. */
  uint8_t *exact = malloc(len ? len : 1);
  if (!exact) {
    free(buf);
    failed = 1;
    return;
  }
  memcpy(exact, buf, len);
  free(buf);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  ran++;
}

/* Run every regular file under `path`, in directory order, recursing into
 * subdirectories. */
static void run_path(const char *path)
{
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "%s: %s\n", path, strerror(errno));
    failed = 1;
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    run_file(path);
    return;
  }
  DIR *dir = opendir(path);
  if (!dir) {
    fprintf(stderr, "%s: %s\n", path, strerror(errno));
    failed = 1;
    return;
  }
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (e->d_name[0] == '.' || strncmp(e->d_name, "README", 6) == 0)
      continue;
    size_t n = strlen(path) + strlen(e->d_name) + 2;
    char *child = malloc(n);
    if (!child) {
      failed = 1;
      break;
    }
    snprintf(child, n, "%s/%s", path, e->d_name);
    run_path(child);
    free(child);
  }
  closedir(dir);
}

int main(int argc, char **argv)
{
  for (int i = 1; i < argc; i++)
    run_path(argv[i]);
  printf("%s: %lu inputs ran\n", argv[0], ran);
  if (failed)
    return 1;
  return ran ? 0 : 2;
}
