/* fr-dump — decode flightrec dump files (and PyTorch Flight Recorder dumps)
 * as text, JSON or one Chrome trace; validate them (--check); or ask a live
 * job to dump (--trigger). */
#include "config.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "fr_dump.h"
#include "pytorch_fr.h"

enum { OUT_TEXT, OUT_JSON, OUT_TRACE, OUT_CHECK };

static void usage(FILE *o)
{
  fputs("Usage: fr-dump [--json | --format=FMT | --check] [--input-format=IN] [-o FILE] PATH...\n"
        "  or:  fr-dump --trigger DIR [--reason TEXT]\n"
        "  or:  fr-dump --salvage [--keep] [-o DIR] [RING...]\n"
        "  or:  fr-dump --snapshot PID|RING [-o DIR]\n"
        "Print flightrec dump files as text, JSON or a Chrome trace, check them, or\n"
        "ask every rank of a live job to dump by creating the trigger file DIR/TRIGGER.\n"
        "PATH is a dump file or a directory (every regular file in it is read);\n"
        "PyTorch Flight Recorder dumps (pickle or JSON) are read too.\n"
        "\n"
        "  -j, --json           print each dump as JSON (an array for several files)\n"
        "  -f, --format=FMT     text (default), json, or chrome-trace: every dump in\n"
        "                       one Trace Event Format document for Perfetto or\n"
        "                       chrome://tracing (one track per rank and communicator,\n"
        "                       wall-clock aligned; a rank's latest frame)\n"
        "  -c, --check          only validate: one line per file, exit status 1 if any\n"
        "                       file is not a usable dump\n"
        "      --input-format=IN  auto (default), frz, or pytorch\n"
        "  -o, --output=FILE    write to FILE instead of standard output\n"
        "  -t, --trigger=DIR    create DIR/TRIGGER (DIR is the job's FR_DUMP_DIR)\n"
        "  -r, --reason=TEXT    the reason written into the trigger file; a process\n"
        "                       whose watchdog cannot run (stopped) gets a snapshot\n"
        "      --salvage        make the ring files of processes that are gone\n"
        "                       (killed, torn down, crashed) into dumps, and remove\n"
        "                       them; RING is a ring file or a directory of them\n"
        "                       (default FR_RING_DIR, else /dev/shm); -o DIR: write\n"
        "                       the dumps there instead of each one's FR_DUMP_DIR\n"
        "      --keep           leave the ring files after --salvage\n"
        "      --snapshot=WHAT  a dump of a running process (pid or ring file) read\n"
        "                       from its ring file, without signalling it\n"
        "  -h, --help           display this help and exit\n"
        "  -V, --version        output version information and exit\n"
        "\n"
        "Times are in milliseconds relative to the trigger (or the frame).\n"
        "Exit status: 0 on success (also when a trigger file exists already),\n"
        "1 if --check found a bad file or --trigger found no recorder listening,\n"
        "2 on a usage error, or a file that cannot be read or decoded (with\n"
        "--check, only a file that cannot be opened).\n",
        o);
}

static int try_help(void)
{
  fputs("Try 'fr-dump --help' for more information.\n", stderr);
  return 2;
}

/* Print a codec error: it names the file and the byte offset. */
static void report(const frz_error *e, const char *path)
{
  char safe[1024];
  const char *m = e->msg[0] ? e->msg : frz_status_name(e->status);
  if (strncmp(m, path, strlen(path)) == 0) fprintf(stderr, "fr-dump: %s\n", fd_sanitize(m, strlen(m), safe, sizeof safe));
  else {
    char sp[512];
    fprintf(stderr, "fr-dump: %s: %s\n", fd_sanitize(path, strlen(path), sp, sizeof sp),
            fd_sanitize(m, strlen(m), safe, sizeof safe));
  }
}

static int do_trigger(const char *dir, const char *reason)
{
  char err[4200], safe[4200], sub[4096];
  int below = fd_listeners_below(dir, sub, sizeof sub);
  if (below > 0) { /* the parent of the dump directory: no stray TRIGGER here */
    char ss[4200];
    fd_sanitize(dir, strlen(dir), safe, sizeof safe);
    fd_sanitize(sub, strlen(sub), ss, sizeof ss);
    fprintf(stderr, "fr-dump: no recorder announced itself in %s, but %d did in %s: run fr-dump --trigger %s\n",
            safe, below, ss, ss);
    return 2;
  }
  char who[700];
  int gone = 0;
  fd_sanitize(dir, strlen(dir), safe, sizeof safe);
  /* a job whose every announced process is gone: no recorder would answer,
   * and its trigger file (the first rank's, naming the hang) is evidence */
  int n = fd_listeners(dir, who, sizeof who, &gone); /* (writing the trigger changes no announcement) */
  if (n == 0 && gone) {
    fprintf(stderr, "fr-dump: %s; %s/TRIGGER left as it was\n", who, safe);
    return 1;
  }
  int rc = fd_trigger(dir, reason ? reason : "requested with fr-dump --trigger", err, sizeof err);
  if (rc == FD_TRIGGER_CREATED || rc == FD_TRIGGER_EXISTS) {
    const char *did = rc == FD_TRIGGER_CREATED ? "created" : "replaced";
    const char *earlier = rc == FD_TRIGGER_CREATED ? "" : " (an earlier request)";
    if (n > 0) {
      printf("fr-dump: %s %s/TRIGGER%s: %s; each dumps within about a second\n", did, safe, earlier, who);
      fd_snapshot_stuck(dir); /* those that cannot answer: from outside */
      return 0;
    }
    printf("fr-dump: %s %s/TRIGGER%s\n", did, safe, earlier);
    fprintf(stderr, "fr-dump: %s\n", who);
    return 1;
  }
  fprintf(stderr, "fr-dump: cannot create the trigger file: %s\n", fd_sanitize(err, strlen(err), safe, sizeof safe));
  return 2;
}

/* Does any of paths[from, n) decode as a dump? */
static int any_dump(char **paths, size_t from, size_t n, frz_input_format inf)
{
  for (size_t i = from; i < n; i++) {
    frz_dump d;
    frz_error e;
    memset(&e, 0, sizeof e);
    if (frz_read_any_file(paths[i], inf, &d, &e) == FRZ_OK) {
      frz_dump_free(&d);
      return 1;
    }
  }
  return 0;
}

/* A directory none of whose files paths[from, n) is a dump: the files of
 * its subdirectories that hold dumps instead (a job's output directory, its
 * dumps in dumps/), said on standard error.  Left as it was otherwise. */
static void look_below(const char *dir, char ***paths, size_t from, size_t *n, frz_input_format inf)
{
  if (any_dump(*paths, from, *n, inf)) return;
  DIR *dp = opendir(dir);
  if (!dp) return;
  char **below = NULL, said[1024] = "";
  size_t nb = 0, used = 0;
  struct dirent *de;
  while ((de = readdir(dp)) != NULL) {
    if (de->d_name[0] == '.') continue;
    size_t len = strlen(dir) + strlen(de->d_name) + 2;
    char *sub = malloc(len);
    struct stat st;
    if (!sub) break;
    snprintf(sub, len, "%s/%s", dir, de->d_name);
    size_t at = nb;
    if (stat(sub, &st) == 0 && S_ISDIR(st.st_mode) && fd_list_dir(sub, &below, &nb) == 0 &&
        any_dump(below, at, nb, inf)) {
      char sp[512];
      if (used < sizeof said)
        used += (size_t)snprintf(said + used, sizeof said - used, "%s%s", used ? ", " : "",
                                 fd_sanitize(sub, strlen(sub), sp, sizeof sp));
    } else {
      for (size_t k = at; k < nb; k++) free(below[k]);
      nb = at;
    }
    free(sub);
  }
  closedir(dp);
  if (!nb) {
    free(below);
    return;
  }
  /* the directory's own files give way to the dumps below it (freed
   * before the array is resized: it may shrink) */
  for (size_t k = from; k < *n; k++) free((*paths)[k]);
  *n = from;
  char **np = realloc(*paths, (from + nb) * sizeof *np);
  if (!np) {
    for (size_t k = 0; k < nb; k++) free(below[k]);
    free(below);
    return;
  }
  memcpy(np + from, below, nb * sizeof *below);
  *paths = np;
  *n = from + nb;
  free(below);
  char sp[512];
  fprintf(stderr, "fr-dump: %s holds no dump; reading the dumps below it: %s\n",
          fd_sanitize(dir, strlen(dir), sp, sizeof sp), said);
}

/* The paths named on the command line, directories expanded.  A directory
 * that cannot be listed is reported (*rc = 2). */
static char **expand(char **args, int nargs, size_t *n, int *rc, frz_input_format inf)
{
  char **paths = NULL;
  *n = 0;
  for (int i = 0; i < nargs; i++) {
    struct stat st;
    if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      size_t from = *n;
      if (fd_list_dir(args[i], &paths, n) != 0) {
        char sp[512];
        fprintf(stderr, "fr-dump: %s: cannot list the directory: %s\n",
                fd_sanitize(args[i], strlen(args[i]), sp, sizeof sp), strerror(errno));
        *rc = 2;
      } else {
        look_below(args[i], &paths, from, n, inf);
      }
      continue;
    }
    char **np = realloc(paths, (*n + 1) * sizeof *np);
    char *p = strdup(args[i]);
    if (!np || !p) {
      free(p);
      if (np) paths = np;
      fputs("fr-dump: out of memory\n", stderr);
      *rc = 2;
      break;
    }
    paths = np;
    paths[(*n)++] = p;
  }
  return paths;
}

/* --check of one file: "PATH: ok (...)" or "PATH: bad: why".  Returns 0
 * ok, 1 not a usable dump, 2 it cannot be read at all (unusable input). */
static int check_one(FILE *out, const char *path, frz_input_format inf)
{
  frz_dump d;
  frz_error e;
  char sp[512], m[1024];
  memset(&e, 0, sizeof e);
  fd_sanitize(path, strlen(path), sp, sizeof sp);
  if (frz_read_any_file(path, inf, &d, &e) != FRZ_OK) {
    const char *msg = e.msg[0] ? e.msg : frz_status_name(e.status);
    size_t pl = strlen(path);
    if (strncmp(msg, path, pl) == 0 && msg[pl] == ':' && msg[pl + 1] == ' ') msg += pl + 2;
    fprintf(out, "%s: bad: %s\n", sp, fd_sanitize(msg, strlen(msg), m, sizeof m));
    return e.status == FRZ_E_IO ? 2 : 1;
  }
  unsigned bad = fd_check(&d, m, sizeof m);
  char safe[1100];
  if (bad)
    fprintf(out, "%s: bad: %u problem(s); first: %s\n", sp, bad, fd_sanitize(m, strlen(m), safe, sizeof safe));
  else
    fprintf(out, "%s: ok (rank %d, %u comm(s), %llu record(s))\n", sp, d.process.global_rank, d.ncomms,
            (unsigned long long)d.nrecords);
  frz_dump_free(&d);
  return bad ? 1 : 0;
}

/* For a trace: keep one frame per rank (the latest); frees the others. */
static size_t latest_frames(fd_input *in, size_t n)
{
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    const frz_process *p = &in[i].dump.process;
    size_t j;
    for (j = 0; j < k; j++)
      if (p->global_rank >= 0 && in[j].dump.process.global_rank == p->global_rank) break;
    if (j == k) {
      in[k++] = in[i];
      continue;
    }
    const frz_process *q = &in[j].dump.process;
    if (p->frame > q->frame || (p->frame == q->frame && p->frame_time_ns > q->frame_time_ns)) {
      frz_dump_free(&in[j].dump);
      in[j] = in[i];
    } else {
      frz_dump_free(&in[i].dump);
    }
  }
  return k;
}

/* Text or JSON of each file, or one trace of them all. */
static int render(FILE *out, int mode, char **paths, size_t n, frz_input_format inf)
{
  int rc = 0, first = 1;
  cJSON *all = NULL;
  fd_input *in = NULL;
  size_t nin = 0;
  if (mode == OUT_JSON && n > 1 && !(all = cJSON_CreateArray())) return 2;
  if (mode == OUT_TRACE && !(in = calloc(n ? n : 1, sizeof *in))) return 2;
  for (size_t i = 0; i < n; i++) {
    frz_dump d;
    frz_error e;
    memset(&e, 0, sizeof e);
    if (frz_read_any_file(paths[i], inf, &d, &e) != FRZ_OK) {
      report(&e, paths[i]);
      rc = 2;
      continue;
    }
    if (mode == OUT_TRACE) {
      in[nin].name = paths[i];
      in[nin++].dump = d;
      continue;
    }
    if (mode == OUT_JSON) {
      cJSON *o = fd_dump_json(paths[i], &d);
      if (!o) {
        fputs("fr-dump: out of memory\n", stderr);
        rc = 2;
      } else if (all) {
        cJSON_AddItemToArray(all, o);
      } else {
        char *s = cJSON_Print(o);
        if (s) fprintf(out, "%s\n", s);
        else rc = 2;
        cJSON_free(s);
        cJSON_Delete(o);
      }
    } else {
      if (!first) fputc('\n', out);
      first = 0;
      if (fd_print_text(out, paths[i], &d)) rc = 2;
    }
    frz_dump_free(&d);
  }
  if (all) {
    char *s = cJSON_Print(all);
    if (s) fprintf(out, "%s\n", s);
    else rc = 2;
    cJSON_free(s);
    cJSON_Delete(all);
  }
  if (in && nin == 0) { /* nothing readable: no empty trace either */
    free(in);
    in = NULL;
  }
  if (in) {
    nin = latest_frames(in, nin);
    if (fd_chrome_trace(out, in, nin)) rc = 2;
    for (size_t i = 0; i < nin; i++) frz_dump_free(&in[i].dump);
    free(in);
  }
  return rc;
}

int main(int argc, char **argv)
{
  static const struct option opts[] = {
      {"json", no_argument, NULL, 'j'},       {"format", required_argument, NULL, 'f'},
      {"check", no_argument, NULL, 'c'},      {"input-format", required_argument, NULL, 'I'},
      {"output", required_argument, NULL, 'o'}, {"trigger", required_argument, NULL, 't'},
      {"reason", required_argument, NULL, 'r'}, {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},    {"salvage", no_argument, NULL, 'S'},
      {"keep", no_argument, NULL, 'K'},       {"snapshot", required_argument, NULL, 'P'},
      {NULL, 0, NULL, 0}};
  int mode = OUT_TEXT, modes = 0, c, inf = FRZ_INPUT_AUTO;
  const char *trigger = NULL, *reason = NULL, *out_path = NULL, *snapshot = NULL;
  int salvage = 0, keep = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":jf:co:t:r:hV", opts, NULL)) != -1) {
    switch (c) {
    case 'j': mode = OUT_JSON; modes++; break;
    case 'c': mode = OUT_CHECK; modes++; break;
    case 'f':
      modes++;
      if (strcmp(optarg, "text") == 0) mode = OUT_TEXT;
      else if (strcmp(optarg, "json") == 0) mode = OUT_JSON;
      else if (strcmp(optarg, "chrome-trace") == 0) mode = OUT_TRACE;
      else {
        fprintf(stderr, "fr-dump: invalid format '%s' (text, json or chrome-trace)\n", optarg);
        return try_help();
      }
      break;
    case 'I':
      if ((inf = frz_input_format_from_name(optarg)) < 0) {
        fprintf(stderr, "fr-dump: invalid input format '%s' (auto, frz or pytorch)\n", optarg);
        return try_help();
      }
      break;
    case 'o': out_path = optarg; break;
    case 't': trigger = optarg; break;
    case 'r': reason = optarg; break;
    case 'S': salvage = 1; break;
    case 'K': keep = 1; break;
    case 'P': snapshot = optarg; break;
    case 'h': usage(stdout); return 0;
    case 'V': printf("fr-dump (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION); return 0;
    case ':':
      fprintf(stderr, "fr-dump: option '%s' requires an argument\n", argv[optind - 1]);
      return try_help();
    default:
      if (optopt && strncmp(argv[optind - 1], "--", 2) != 0)
        fprintf(stderr, "fr-dump: invalid option -- '%c'\n", optopt);
      else
        fprintf(stderr, "fr-dump: unrecognized option '%s'\n", argv[optind - 1]);
      return try_help();
    }
  }
  if ((salvage || snapshot) && (trigger || modes || reason || (salvage && snapshot))) {
    fputs("fr-dump: --salvage and --snapshot take no other mode\n", stderr);
    return try_help();
  }
  if (salvage) return fd_salvage(argv + optind, argc - optind, out_path, keep);
  if (snapshot) {
    char w[4300];
    if (optind < argc) {
      fputs("fr-dump: --snapshot takes no PATH\n", stderr);
      return try_help();
    }
    return fd_snapshot(snapshot, out_path, w, sizeof w);
  }
  if (keep) {
    fputs("fr-dump: --keep needs --salvage\n", stderr);
    return try_help();
  }
  if (trigger) {
    if (optind < argc || modes || out_path) {
      fputs("fr-dump: --trigger takes no FILE and no --json\n", stderr);
      return try_help();
    }
    return do_trigger(trigger, reason);
  }
  if (reason) {
    fputs("fr-dump: --reason needs --trigger\n", stderr);
    return try_help();
  }
  if (modes > 1) {
    fputs("fr-dump: --json, --format and --check exclude each other\n", stderr);
    return try_help();
  }
  if (optind >= argc) {
    fputs("fr-dump: missing PATH\n", stderr);
    return try_help();
  }
  /* -o FILE: written under a temporary name beside it and renamed once
   * something was written, so that a run with nothing to show never
   * empties an existing FILE */
  FILE *out = stdout;
  char tmp_path[4200] = "";
  if (out_path) {
    if (snprintf(tmp_path, sizeof tmp_path, "%s.tmp.%ld", out_path, (long)getpid()) >= (int)sizeof tmp_path ||
        !(out = fopen(tmp_path, "w"))) {
      fprintf(stderr, "fr-dump: %s: %s\n", out_path, errno ? strerror(errno) : "path too long");
      return 2;
    }
  }
  int rc = 0;
  size_t n;
  char **paths = expand(argv + optind, argc - optind, &n, &rc, (frz_input_format)inf);
  if (n == 0 && rc == 0) { /* directories without a file: unusable input, said */
    int trig = 0; /* (a trigger file alone: a dump was asked for, none written yet) */
    for (int i = optind; i < argc && !trig; i++) {
      char t[4200];
      struct stat st;
      trig = snprintf(t, sizeof t, "%s/TRIGGER", argv[i]) < (int)sizeof t && stat(t, &st) == 0;
    }
    for (int i = optind; i < argc; i++) /* (each path named, as every other error does) */
      fprintf(stderr, "fr-dump: %s: no file to read in the directory%s\n", argv[i],
              trig ? " (only a trigger file: a dump was asked for; no rank has written one there)" : "");
    if (mode == OUT_JSON) fputs("[]\n", out);
    rc = 2;
  } else if (mode == OUT_CHECK) {
    for (size_t i = 0; i < n; i++) {
      int r = check_one(out, paths[i], (frz_input_format)inf);
      if (r > rc) rc = r;
    }
  } else {
    int r = render(out, mode, paths, n, (frz_input_format)inf);
    if (r) rc = r;
  }
  for (size_t i = 0; i < n; i++) free(paths[i]);
  free(paths);
  long written = out != stdout ? ftell(out) : 0;
  /* ferror: a write that failed earlier (a full disk) leaves the flag set
   * while a later fflush may return 0 */
  int werr = fflush(out) != 0 || ferror(out);
  if (out != stdout && fclose(out) != 0) werr = 1;
  if (werr) {
    fprintf(stderr, "fr-dump: cannot write the output: %s\n", errno ? strerror(errno) : "write error");
    rc = 2;
    written = 0;
  }
  if (tmp_path[0] && written > 0 && rename(tmp_path, out_path) != 0) {
    fprintf(stderr, "fr-dump: %s: %s\n", out_path, strerror(errno));
    unlink(tmp_path);
    rc = 2;
  } else if (tmp_path[0] && written <= 0) {
    unlink(tmp_path);
    fprintf(stderr, "fr-dump: nothing to write; %s left as it was\n", out_path);
  }
  return rc;
}
