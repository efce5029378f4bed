/* fr-tui — browse a hang's dumps frame by frame in the terminal.
 * Thin: options, loading through the analyzer, then batch or interactive. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui.h"

static void usage(FILE *out)
{
  fprintf(out,
          "Usage: fr-tui [OPTION]... DIR|FILE...\n"
          "Browse the flightrec dumps of a hung job: one row per rank, one column per\n"
          "seq of a communicator, the verdict on top.  Press ? for the keys.\n"
          "\n"
          "  -b, --batch      render one screen as plain text to stdout and exit\n"
          "      --frame N    frame step to show (0 = first; default the latest)\n"
          "      --comm ID    communicator to show (hex id; default the verdict's)\n"
          "      --fold       start with identical rows folded together\n"
          "      --rank R     select global rank R (default the root-cause rank)\n"
          "      --stacks     start with the selected rank's stack pane (key t)\n"
          "      --stack-classes  start with the stack classes (key T)\n"
          "      --cols C     batch screen width (default 100)\n"
          "      --rows R     batch screen height, 20 or more (default 30)\n"
          "  -h, --help       display this help and exit\n"
          "  -V, --version    output version information and exit\n"
          "\n"
          "Exit status: 0 if no problem was found, 1 if a problem was diagnosed,\n"
          "2 if no dump could be used, on a usage error, or when the screen cannot be shown.\n");
}

/* A non-negative integer option, or -1. */
static long parse_num(const char *s, long max)
{
  char *end;
  errno = 0;
  long n = strtol(s, &end, 10);
  if (errno || end == s || *end || n < 0 || n > max)
    return -1;
  return n;
}

int main(int argc, char **argv)
{
  enum { O_FRAME = 256, O_COMM, O_COLS, O_ROWS, O_FOLD, O_STACKS, O_CLASSES, O_RANK };
  static const struct option opts[] = {
    {"batch", no_argument, NULL, 'b'},     {"frame", required_argument, NULL, O_FRAME},
    {"comm", required_argument, NULL, O_COMM}, {"cols", required_argument, NULL, O_COLS},
    {"rows", required_argument, NULL, O_ROWS}, {"fold", no_argument, NULL, O_FOLD}, {"help", no_argument, NULL, 'h'},
    {"stacks", no_argument, NULL, O_STACKS}, {"rank", required_argument, NULL, O_RANK}, {"stack-classes", no_argument, NULL, O_CLASSES},
    {"version", no_argument, NULL, 'V'},   {NULL, 0, NULL, 0},
  };
  int batch = 0, has_comm = 0, fold = 0, stacks = 0;
  long sel_rank = -1;
  long frame = -1, cols = 100, rows = 30;
  uint64_t comm_id = 0;
  int c;
  opterr = 0; /* our own messages, named "fr-tui" like the other tools' */
  while ((c = getopt_long(argc, argv, "bhV", opts, NULL)) != -1) {
    switch (c) {
    case 'b': batch = 1; break;
    case O_FOLD: fold = 1; break;
    case O_STACKS: stacks = 1; break;
    case O_CLASSES: stacks = 2; break;
    case O_RANK:
      if ((sel_rank = parse_num(optarg, INT32_MAX)) < 0) {
        fprintf(stderr, "fr-tui: invalid rank '%s'\n", optarg);
        return 2;
      }
      break;
    case O_FRAME:
      if ((frame = parse_num(optarg, 1000000)) < 0) {
        fprintf(stderr, "fr-tui: invalid frame '%s'\n", optarg);
        return 2;
      }
      break;
    case O_COMM: {
      char *end;
      errno = 0;
      comm_id = strtoull(optarg, &end, 16);
      if (errno || end == optarg || *end) {
        fprintf(stderr, "fr-tui: invalid communicator id '%s'\n", optarg);
        return 2;
      }
      has_comm = 1;
      break;
    }
    case O_COLS:
    case O_ROWS: {
      long n = parse_num(optarg, 10000);
      if (n < 20) {
        fprintf(stderr, "fr-tui: invalid %s '%s' (20 to 10000)\n", c == O_COLS ? "width" : "height", optarg);
        return 2;
      }
      *(c == O_COLS ? &cols : &rows) = n;
      break;
    }
    case 'h': usage(stdout); return 0;
    case 'V': printf("fr-tui (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION); return 0;
    default:
      if (!optopt) fprintf(stderr, "fr-tui: unrecognized option '%s'\n", argv[optind - 1]);
      else if (optopt < 128 && strchr("bhV", optopt) == NULL) fprintf(stderr, "fr-tui: invalid option -- '%c'\n", optopt);
      else fprintf(stderr, "fr-tui: option '%s' needs a value\n", argv[optind - 1]);
      fprintf(stderr, "Try 'fr-tui --help' for more information.\n");
      return 2;
    }
  }
  if (optind >= argc) {
    fprintf(stderr, "fr-tui: no dump directory or file given\n"
                    "Try 'fr-tui --help' for more information.\n");
    return 2;
  }
  fa_analysis *a = fa_new();
  if (!a) {
    fprintf(stderr, "fr-tui: out of memory\n");
    return 2;
  }
  if (fa_add_paths(a, (const char *const *)argv + optind, (uint32_t)(argc - optind)) < 0)
    goto nomem;
  a->stragglers_if_needed = 1; /* the screen shows no straggler table */
  if (fa_run(a) < 0)
    goto nomem;
  if (a->note && a->nframes) /* (a job's output directory: the dumps below it were read) */
    fprintf(stderr, "fr-tui: note: %s\n", a->note);
  if (!a->nframes) { /* nothing to show: said before any screen starts */
    for (uint32_t i = 0; i < a->nproblems; i++) {
      const fa_problem *p = &a->problems[i];
      if (p->file && p->has_offset)
        fprintf(stderr, "fr-tui: %s: at byte %" PRIu64 ": %s\n", p->file, p->offset, p->message);
      else if (p->file)
        fprintf(stderr, "fr-tui: %s: %s\n", p->file, p->message);
      else
        fprintf(stderr, "fr-tui: %s\n", p->message);
    }
    fprintf(stderr, "fr-tui: no usable dump in the input\n");
    fa_free(a);
    return 2;
  }
  if (!batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
    fprintf(stderr, "fr-tui: standard %s is not a terminal; --batch prints one screen as text\n",
            isatty(STDIN_FILENO) ? "output" : "input");
    fa_free(a);
    return 2;
  }
  view v;
  if (view_init(&v, a) < 0)
    goto nomem;
  int rc = 0;
  if (has_comm) {
    int32_t ci = fa_find_comm(a, comm_id);
    if (ci < 0) {
      fprintf(stderr, "fr-tui: no communicator %016" PRIx64 " in the dumps\n", comm_id);
      rc = 2;
      goto out;
    }
    int32_t keep = view_sel_rank(&v);
    view_set_comm(&v, ci);
    view_rebuild(&v);
    if (keep >= 0)
      view_select_rank(&v, keep);
  }
  if (frame >= 0 && (uint32_t)frame >= (v.nframes ? v.nframes : 1)) {
    if (v.nframes > 1)
      fprintf(stderr, "fr-tui: no frame %ld: the dumps hold frames 0-%u\n", frame, v.nframes - 1);
    else
      fprintf(stderr, "fr-tui: no frame %ld: the dumps hold frame 0 only\n", frame);
    rc = 2;
    goto out;
  }
  if (frame >= 0 || fold) {
    if (frame >= 0)
      v.frame = (uint32_t)frame;
    v.fold = fold;
    view_rebuild(&v);
  }
  if (sel_rank >= 0) {
    int32_t ri = view_find(&v, (int32_t)sel_rank);
    if (ri < 0 || view_select_rank(&v, ri) < 0) {
      fprintf(stderr, "fr-tui: rank %ld is not in the dumps' job\n", sel_rank);
      rc = 2;
      goto out;
    }
  }
  /* A culprit that is not one rank is shown on the first screen too: a
   * deadlock's cycle, or the links when no rank is to blame. */
  const fa_verdict *vd = &a->verdict;
  if (vd->ncycle)
    keys_show_waitfor(&v);
  else if (vd->nlinks && !vd->root_cause.n && !vd->lagging.n)
    keys_show_links(&v);
  v.msg[0] = 0;
  v.stacks = stacks;
  if (batch) {
    tgrid g;
    if (grid_init(&g, (int)rows, (int)cols) < 0)
      goto nomem_view;
    render(&v, &g);
    grid_print(&g, stdout);
    grid_free(&g);
    /* ferror: a write that failed earlier leaves the flag set while a
     * later fflush may return 0 */
    if (fflush(stdout) != 0 || ferror(stdout)) {
      fprintf(stderr, "fr-tui: cannot write the output: %s\n", errno ? strerror(errno) : "write error");
      rc = 2;
    }
  } else {
    rc = term_run(&v);
  }
  if (rc == 0) /* the one contract: 0 nothing wrong, 1 a problem found, 2 unusable input */
    rc = fa_exit_status(a);
out:
  view_free(&v);
  fa_free(a);
  return rc;
nomem_view:
  view_free(&v);
nomem:
  fa_free(a);
  fprintf(stderr, "fr-tui: out of memory\n");
  return 2;
}
