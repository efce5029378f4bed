/* tests/fuzz/fuzz_analyze.c: fr-analyze's whole path on arbitrary bytes.
 * The input is cut at every FUZZ_SPLIT marker into up to 64 files; each is
 * read as fa_read_dump_file does in auto mode (frz, else a PyTorch FR dump
 * when it looks like one), added with fa_add_dump or as a problem, then
 * fa_run and every report: text (plain, coloured, filtered), JSON and the
 * exclude list. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "frz.h"
#include "pytorch_fr.h"
#include "fuzz.h"

#define FUZZ_SPLIT "\n--fr-fuzz-split--\n"
#define FUZZ_MAX_FILES 64

static FILE *sink;

/* Decode one file image like the tools' auto mode and add it to `a`. */
static void add_one(fa_analysis *a, const uint8_t *p, size_t n, unsigned idx)
{
  char name[48];
  snprintf(name, sizeof name, "fuzz-rank%u.frz", idx);
  frz_dump d;
  frz_error err;
  frz_status st = frz_decode(p, n, name, &d, &err);
  if (st == FRZ_E_MAGIC && frz_pytorch_sniff(p, n) != FRZ_PT_NONE)
    st = frz_import_pytorch(p, n, name, &d, &err);
  if (st == FRZ_OK)
    (void)fa_add_dump(a, &d, name);
  else
    (void)fa_add_problem(a, name, 0, 0, frz_status_name(st));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (!sink)
    sink = fopen("/dev/null", "w");
  if (!sink)
    return 0;
  fa_analysis *a = fa_new();
  if (!a)
    return 0;
  const size_t mlen = sizeof FUZZ_SPLIT - 1;
  size_t start = 0;
  unsigned nfiles = 0;
  for (size_t i = 0; nfiles + 1 < FUZZ_MAX_FILES && i + mlen <= size; i++)
    if (memcmp(data + i, FUZZ_SPLIT, mlen) == 0) {
      add_one(a, data + start, i - start, nfiles++);
      start = i + mlen;
      i = start - 1;
    }
  add_one(a, data + start, size - start, nfiles);
  if (fa_run(a) == 0) {
    (void)fa_report_text(a, sink);
    fa_text_opts opts = { 1, 0, 0, -1, 0, 1 }; /* the bounded report, with --why */
    (void)fa_report_text_opts(a, sink, &opts);
    if (a->ncomms > 0) {
      fa_text_opts one = { 0, 1, a->comms[0].id, 0, 0, 0 };
      (void)fa_report_text_opts(a, sink, &one);
    }
    char *json = fa_report_json(a);
    if (json)
      fputs(json, sink);
    free(json);
    fa_ranks ex;
    if (fa_exclude_list(a, &ex) == 0)
      fa_ranks_free(&ex);
    (void)fa_exit_status(a);
  }
  fa_free(a);
  return 0;
}
