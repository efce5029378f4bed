/* fr-analyze — merge the dumps of every rank of a job and say why it hangs.
 * A thin front end over libanalyze (fr-analyze/libanalyze/analyze.h). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libanalyze/analyze.h"
#include "libanalyze/input.h"

static void usage(FILE *o)
{
  fputs("Usage: fr-analyze [--json | --exclude-list] [--full] [--why] [-o FILE]\n"
        "                  [--input-format=FMT] [--comm=ID] [--rank=R] [--color=WHEN] PATH...\n"
        "Merge the flightrec dumps of every rank of a job and diagnose the hang.\n"
        "\n"
        "PATH is a dump directory (every regular file in it is read) or a dump\n"
        "file; several may be given.  A directory without dumps whose\n"
        "subdirectories hold some (a job's output directory) is read one level\n"
        "down.  PyTorch Flight Recorder dumps (pickle or JSON) are read too.\n"
        "\n"
        "      --full      every communicator, member and input problem (the default\n"
        "                  report is bounded: the verdict, what to do, a summary)\n"
        "      --why       the rules that decided the verdict, with the records read\n"
        "  -j, --json      print the analysis as JSON (its fields: analysis-json.md,\n"
        "                  installed with the documentation)\n"
        "  -o, --output=FILE  write the report to FILE instead of standard output\n"
        "      --input-format=FMT  auto (default: flightrec dumps, and PyTorch Flight\n"
        "                  Recorder dumps for other files), frz, or pytorch\n"
        "      --comm=ID   details only for this communicator (16 hex digits)\n"
        "      --rank=R    details only for the communicators of global rank R\n"
        "      --color=WHEN  colour the verdict: auto (on a terminal), always, never\n"
        "      --exclude-list  print only the ranks an orchestrator could evict\n"
        "                  (stragglers; the root-cause ranks of a hang), one a line\n"
        "  -h, --help      display this help and exit\n"
        "  -V, --version   output version information and exit\n"
        "\n"
        "Exit status: 0 if no problem was found, 1 if a problem was diagnosed,\n"
        "2 if no dump could be used, nothing could be analysed (an inconclusive\n"
        "verdict), or on a usage error.\n",
        o);
}

static int try_help(void)
{
  fputs("Try 'fr-analyze --help' for more information.\n", stderr);
  return 2;
}

/* getopt's own messages name the program by its path; ours by its name. */
static void bad_option(const char *arg)
{
  if (optopt && strncmp(arg, "--", 2) != 0) fprintf(stderr, "fr-analyze: invalid option -- '%c'\n", optopt);
  else fprintf(stderr, "fr-analyze: unrecognized option '%s'\n", arg);
}

/* --comm, --rank and --color into the report options; 0 or -1 (said why). */
static int filter_option(int c, const char *arg, fa_text_opts *t, int *color)
{
  char *end;
  errno = 0;
  if (c == 'C') {
    unsigned long long id = strtoull(arg, &end, 16);
    if (strlen(arg) != 16 || *end || errno) { /* as fr-tui: the id as the reports print it */
      fprintf(stderr, "fr-analyze: invalid communicator id '%s' (16 hex digits)\n", arg);
      return -1;
    }
    t->has_comm = 1;
    t->comm = id;
  } else if (c == 'R') {
    long r = strtol(arg, &end, 10);
    if (!*arg || *end || errno || r < 0 || r > INT32_MAX) {
      fprintf(stderr, "fr-analyze: invalid rank '%s'\n", arg);
      return -1;
    }
    t->rank = (int32_t)r;
  } else if (!strcmp(arg, "always")) {
    *color = 1;
  } else if (!strcmp(arg, "never")) {
    *color = 0;
  } else if (!strcmp(arg, "auto")) {
    *color = -1;
  } else {
    fprintf(stderr, "fr-analyze: invalid --color '%s' (auto, always or never)\n", arg);
    return -1;
  }
  return 0;
}

/* --exclude-list: one global rank a line. */
static int print_exclude_list(const fa_analysis *a, FILE *out)
{
  fa_ranks r;
  if (fa_exclude_list(a, &r)) return -1;
  for (uint32_t i = 0; i < r.n; i++) fprintf(out, "%d\n", r.v[i]);
  fa_ranks_free(&r);
  return 0;
}

static void version(void)
{
  printf("fr-analyze (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
}

int main(int argc, char **argv)
{
  static const struct option opts[] = {
      {"json", no_argument, NULL, 'j'},     {"output", required_argument, NULL, 'o'},
      {"input-format", required_argument, NULL, 'I'},
      {"comm", required_argument, NULL, 'C'},   {"rank", required_argument, NULL, 'R'},
      {"color", required_argument, NULL, 'K'},  {"colour", required_argument, NULL, 'K'},
      {"exclude-list", no_argument, NULL, 'X'},
      {"full", no_argument, NULL, 'F'},     {"why", no_argument, NULL, 'W'},
      {"help", no_argument, NULL, 'h'},     {"version", no_argument, NULL, 'V'},
      {NULL, 0, NULL, 0}};
  int json = 0, c, color = -1, exclude = 0;
  fa_text_opts topt = {0, 0, 0, -1, 0, 0};
  const char *out_path = NULL;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":jo:hV", opts, NULL)) != -1) {
    switch (c) {
    case 'j': json = 1; break;
    case 'I': {
      int f = frz_input_format_from_name(optarg);
      if (f < 0) {
        fprintf(stderr, "fr-analyze: invalid input format '%s' (auto, frz or pytorch)\n", optarg);
        return try_help();
      }
      fa_set_input_format((frz_input_format)f);
      break;
    }
    case 'o': out_path = optarg; break;
    case 'C':
    case 'R':
    case 'K':
      if (filter_option(c, optarg, &topt, &color)) return try_help();
      break;
    case 'X': exclude = 1; break;
    case 'F': topt.full = 1; break;
    case 'W': topt.why = 1; break;
    case 'h': usage(stdout); return 0;
    case 'V': version(); return 0;
    case ':':
      fprintf(stderr, "fr-analyze: option '%s' requires an argument\n", argv[optind - 1]);
      return try_help();
    default:
      bad_option(argv[optind - 1]);
      return try_help();
    }
  }
  if (json && exclude) {
    fputs("fr-analyze: --json and --exclude-list exclude each other\n", stderr);
    return try_help();
  }
  if (optind >= argc) {
    fputs("fr-analyze: missing PATH\n", stderr);
    return try_help();
  }
  fa_analysis *a = fa_new();
  if (!a) {
    fputs("fr-analyze: out of memory\n", stderr);
    return 2;
  }
  if (fa_add_paths(a, (const char *const *)argv + optind, (uint32_t)(argc - optind))) {
    fputs("fr-analyze: out of memory\n", stderr);
    fa_free(a);
    return 2;
  }
  if (fa_run(a)) {
    fputs("fr-analyze: out of memory\n", stderr);
    fa_free(a);
    return 2;
  }
  /* files that could not be used are named on stderr too, like diff(1) does
   * with its troubles, so they are seen even with --json or -o */
  for (uint32_t i = 0; i < a->nproblems && !a->nframes; i++) {
    const fa_problem *p = &a->problems[i];
    char f[1024], m[1024];
    fprintf(stderr, "fr-analyze: %s%s", p->file ? fa_sanitize(p->file, f, sizeof f) : "",
            p->file ? ": " : "");
    if (p->has_offset) fprintf(stderr, "at byte %llu: ", (unsigned long long)p->offset);
    fprintf(stderr, "%s\n", fa_sanitize(p->message, m, sizeof m));
  }
  /* a filter that matches nothing is a usage error, said (not "0 shown") */
  if (a->nframes && topt.has_comm && fa_find_comm(a, topt.comm) < 0) {
    fprintf(stderr, "fr-analyze: no communicator %016llx in the dumps\n", (unsigned long long)topt.comm);
    fa_free(a);
    return 2;
  }
  if (a->nframes && topt.rank >= 0 && fa_find_rank(a, (int32_t)topt.rank) < 0 &&
      (a->world_size < 0 || topt.rank >= a->world_size)) {
    fprintf(stderr, "fr-analyze: rank %ld is not in the dumps' job\n", (long)topt.rank);
    fa_free(a);
    return 2;
  }
  FILE *out = stdout;
  if (out_path && !(out = fopen(out_path, "w"))) {
    fprintf(stderr, "fr-analyze: %s: %s\n", out_path, strerror(errno));
    fa_free(a);
    return 2;
  }
  int werr = 0;
  if (json) {
    char *text = fa_report_json(a);
    if (!text) werr = -1;
    else if (fputs(text, out) < 0) werr = -1;
    free(text);
  } else if (exclude) {
    werr = print_exclude_list(a, out);
  } else {
    topt.color = color == 1 || (color < 0 && !out_path && isatty(fileno(out)));
    werr = fa_report_text_opts(a, out, &topt);
  }
  /* a write that failed earlier (a full disk) leaves the stream's error
   * flag set while a later fflush may return 0 */
  if (fflush(out) != 0 || ferror(out)) werr = -1;
  if (out != stdout && fclose(out) != 0) werr = -1;
  int rc = fa_exit_status(a);
  fa_free(a);
  if (werr) {
    fprintf(stderr, "fr-analyze: cannot write the report: %s\n", strerror(errno));
    return 2;
  }
  return rc;
}
