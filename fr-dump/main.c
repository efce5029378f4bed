/* fr-dump — decode flightrec dump files (text or JSON), or ask a live job
 * to dump (--trigger). */
#include "config.h"

#include <cJSON.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_dump.h"

static void usage(FILE *o)
{
  fputs("Usage: fr-dump [--json] FILE...\n"
        "  or:  fr-dump --trigger DIR [--reason TEXT]\n"
        "Print flightrec dump files as text or JSON, or ask every rank of a live job\n"
        "to dump by creating the trigger file DIR/TRIGGER.\n"
        "\n"
        "  -j, --json           print each dump as JSON (an array for several files)\n"
        "  -t, --trigger=DIR    create DIR/TRIGGER (DIR is the job's FR_DUMP_DIR)\n"
        "  -r, --reason=TEXT    the reason written into the trigger file\n"
        "  -h, --help           display this help and exit\n"
        "  -V, --version        output version information and exit\n"
        "\n"
        "Times are in milliseconds relative to the trigger (or the frame).\n"
        "Exit status: 0 on success (also when a trigger file exists already),\n"
        "2 on a usage error or a file that cannot be read or decoded.\n",
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
  char err[4200], safe[4200];
  int rc = fd_trigger(dir, reason ? reason : "requested with fr-dump --trigger", err, sizeof err);
  fd_sanitize(dir, strlen(dir), safe, sizeof safe);
  switch (rc) {
  case FD_TRIGGER_CREATED:
    printf("fr-dump: created %s/TRIGGER: every rank of the job will dump\n", safe);
    return 0;
  case FD_TRIGGER_EXISTS:
    printf("fr-dump: replaced %s/TRIGGER (an earlier request): every rank of the job will dump\n", safe);
    return 0;
  default:
    fprintf(stderr, "fr-dump: cannot create the trigger file: %s\n",
            fd_sanitize(err, strlen(err), safe, sizeof safe));
    return 2;
  }
}

int main(int argc, char **argv)
{
  static const struct option opts[] = {
      {"json", no_argument, NULL, 'j'},       {"trigger", required_argument, NULL, 't'},
      {"reason", required_argument, NULL, 'r'}, {"help", no_argument, NULL, 'h'},
      {"version", no_argument, NULL, 'V'},    {NULL, 0, NULL, 0}};
  int json = 0, c;
  const char *trigger = NULL, *reason = NULL;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":jt:r:hV", opts, NULL)) != -1) {
    switch (c) {
    case 'j': json = 1; break;
    case 't': trigger = optarg; break;
    case 'r': reason = optarg; break;
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
  if (trigger) {
    if (optind < argc || json) {
      fputs("fr-dump: --trigger takes no FILE and no --json\n", stderr);
      return try_help();
    }
    return do_trigger(trigger, reason);
  }
  if (reason) {
    fputs("fr-dump: --reason needs --trigger\n", stderr);
    return try_help();
  }
  if (optind >= argc) {
    fputs("fr-dump: missing FILE\n", stderr);
    return try_help();
  }
  int rc = 0, nfiles = argc - optind, first = 1;
  cJSON *all = NULL;
  if (json && nfiles > 1 && !(all = cJSON_CreateArray())) {
    fputs("fr-dump: out of memory\n", stderr);
    return 2;
  }
  for (int i = optind; i < argc; i++) {
    frz_dump d;
    frz_error e;
    memset(&d, 0, sizeof d);
    memset(&e, 0, sizeof e);
    if (frz_read_file(argv[i], &d, &e) != FRZ_OK) {
      report(&e, argv[i]);
      rc = 2;
      continue;
    }
    if (json) {
      cJSON *o = fd_dump_json(argv[i], &d);
      if (!o) {
        fputs("fr-dump: out of memory\n", stderr);
        rc = 2;
      } else if (all) {
        cJSON_AddItemToArray(all, o);
      } else {
        char *s = cJSON_Print(o);
        if (s) printf("%s\n", s);
        else rc = 2;
        cJSON_free(s);
        cJSON_Delete(o);
      }
    } else {
      if (!first) putchar('\n');
      first = 0;
      if (fd_print_text(stdout, argv[i], &d)) rc = 2;
    }
    frz_dump_free(&d);
  }
  if (all) {
    char *s = cJSON_Print(all);
    if (s) printf("%s\n", s);
    else rc = 2;
    cJSON_free(s);
    cJSON_Delete(all);
  }
  if (fflush(stdout) != 0) {
    perror("fr-dump: standard output");
    rc = 2;
  }
  return rc;
}
