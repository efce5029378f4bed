/* pytorch_io.c — the file side of the PyTorch Flight Recorder import:
 * reading a file, telling pickle from JSON, the rank in a file name. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frz_ring.h"
#include "pytorch_fr.h"
#include "pyval.h"

frz_pt_form frz_pytorch_sniff(const void *buf, size_t len)
{
  const unsigned char *p = buf;
  if (len >= 2 && p[0] == 0x80 && p[1] >= 2 && p[1] <= 5) return FRZ_PT_PICKLE;
  size_t i = 0;
  if (len >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) i = 3; /* UTF-8 BOM */
  while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++;
  return i < len && p[i] == '{' ? FRZ_PT_JSON : FRZ_PT_NONE;
}

long frz_pytorch_rank_from_name(const char *path)
{
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = strlen(base);
  const char *dot = strrchr(base, '.');
  if (dot && dot > base) { /* ".pickle", ".json": an extension has no digits */
    int digits = 0;
    for (const char *q = dot + 1; *q; q++)
      if (*q >= '0' && *q <= '9') digits = 1;
    if (!digits) n = (size_t)(dot - base);
  }
  size_t e = n;
  while (e > 0 && base[e - 1] >= '0' && base[e - 1] <= '9') e--;
  if (e == n || n - e > 9) return -1;
  long v = 0;
  for (size_t i = e; i < n; i++) v = v * 10 + (base[i] - '0');
  return v;
}

frz_status frz_slurp_file(const char *path, size_t max, void **buf, size_t *len, frz_error *err)
{
  *buf = NULL;
  *len = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return pv_fail(err, FRZ_E_IO, path, FRZ_NO_OFFSET, "cannot open: %s", strerror(errno));
  struct stat st;
  frz_status rc = FRZ_OK;
  if (fstat(fd, &st) != 0) {
    rc = pv_fail(err, FRZ_E_IO, path, FRZ_NO_OFFSET, "cannot stat: %s", strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    rc = pv_fail(err, FRZ_E_IO, path, FRZ_NO_OFFSET, "not a regular file");
  } else if ((uint64_t)st.st_size > max) {
    rc = pv_fail(err, FRZ_E_IO, path, FRZ_NO_OFFSET, "file too large (%lld bytes; at most %zu)",
                 (long long)st.st_size, max);
  } else {
    size_t size = (size_t)st.st_size, got = 0;
    uint8_t *b = malloc(size ? size : 1);
    if (!b) {
      rc = pv_fail(err, FRZ_E_NOMEM, path, 0, "out of memory reading %zu bytes", size);
    } else {
      while (got < size) {
        ssize_t k = read(fd, b + got, size - got);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
          rc = pv_fail(err, FRZ_E_IO, path, got, "read failed: %s", strerror(errno));
          break;
        }
        if (k == 0) break;
        got += (size_t)k;
      }
      if (rc) free(b);
      else {
        *buf = b;
        *len = got;
      }
    }
  }
  close(fd);
  return rc;
}

int frz_input_format_from_name(const char *name)
{
  if (strcmp(name, "auto") == 0) return FRZ_INPUT_AUTO;
  if (strcmp(name, "frz") == 0) return FRZ_INPUT_FRZ;
  if (strcmp(name, "pytorch") == 0) return FRZ_INPUT_PYTORCH;
  return -1;
}

/* Do the first bytes of path say PyTorch (a pickle or JSON, not frz's
 * magic)?  0 when they do not or cannot be read. */
static int looks_pytorch(const char *path)
{
  unsigned char head[64];
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return 0;
  struct stat st;
  ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, head, sizeof head, 0) : -1;
  close(fd);
  return n > 0 && head[0] != (unsigned char)FRZ_MAGIC[0] && frz_pytorch_sniff(head, (size_t)n) != FRZ_PT_NONE;
}

/* Does the file at path begin with a ring file's magic? */
static int looks_ring(const char *path)
{
  unsigned char head[8];
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) return 0;
  struct stat st;
  ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, head, sizeof head, 0) : -1;
  close(fd);
  return n == 8 && frz_ring_is_magic(head, 8);
}

frz_status frz_read_any_file(const char *path, frz_input_format f, frz_dump *out, frz_error *err)
{
  if (f == FRZ_INPUT_PYTORCH) return frz_import_pytorch_file(path, out, err);
  /* a ring file: its process's records as of now (salvaged or a snapshot) */
  if (looks_ring(path)) return frz_ring_read_file(path, out, NULL, NULL, err);
  /* a PyTorch file is read once, not first by frz_read_file to be refused
   * (its first byte is not frz's magic, so that could only say "bad magic") */
  if (f == FRZ_INPUT_AUTO && looks_pytorch(path)) {
    frz_status st = frz_import_pytorch_file(path, out, err);
    if (st != FRZ_E_MAGIC) return st;
    return frz_read_file(path, out, err); /* neither: "not a flightrec dump" */
  }
  frz_status st = frz_read_file(path, out, err);
  if (st != FRZ_E_MAGIC || f == FRZ_INPUT_FRZ) return st;
  frz_error e2;
  memset(&e2, 0, sizeof e2);
  frz_status st2 = frz_import_pytorch_file(path, out, &e2);
  if (st2 == FRZ_E_MAGIC) return st; /* neither: "not a flightrec dump" */
  if (err) *err = e2;
  return st2;
}
