/* config.c — the FR_* environment variables, validated once at load.
 * A bad value is reported in one line and replaced by its default; it never
 * stops the job.  librecorder(7) documents every variable. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "identity.h"
#include "recorder.h"

/* Parse FR_<name> as an unsigned integer in [lo, hi]; default on error. */
static uint32_t env_uint(const char *name, uint32_t def, uint32_t lo, uint32_t hi) {
  const char *v = getenv(name);
  if (!v || !*v) return def;
  char *end;
  errno = 0;
  unsigned long x = strtoul(v, &end, 10);
  if (errno || *end || v[0] == '-' || x < lo || x > hi) {
    fr_log("%s=\"%.40s\" is not a whole number from %u to %u; using %u", name, v, lo, hi, def);
    return def;
  }
  return (uint32_t)x;
}

/* FR_PROFILER_MASK: NCCL profiler event bits (decimal or 0x hex, < 2^16). */
static int env_mask(const char *name, int def) {
  const char *v = getenv(name);
  if (!v || !*v) return def;
  char *end;
  errno = 0;
  unsigned long x = strtoul(v, &end, 0);
  if (errno || *end || v[0] == '-' || x > 0xffff) {
    fr_log("%s=\"%.40s\" is not an event mask (a number below 0x10000); using 0x%x", name, v, def);
    return def;
  }
  return (int)x;
}

/* Parse FR_<name> as a boolean (1/0, yes/no, on/off, true/false). */
static int env_bool(const char *name, int def) {
  const char *v = getenv(name);
  if (!v || !*v) return def;
  if (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "on") || !strcasecmp(v, "true"))
    return 1;
  if (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "off") || !strcasecmp(v, "false"))
    return 0;
  fr_log("%s=\"%.40s\" is not a boolean (1/0); using %d", name, v, def ? 1 : 0);
  return def;
}

/* FR_DUMP_SIGNAL: a signal a job does not rely on for anything else: USR1,
 * USR2, URG, PWR, WINCH or a real-time signal, by name or number; "0" or
 * "none" turns it off.  TERM, INT, HUP and the like are refused: a launcher
 * (Slurm, torchrun) ends jobs with them, and catching them would keep the
 * job alive. */
static int env_signal(const char *name, int def, const char *defname) {
  static const struct { const char *n; int s; } names[] = {
      {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"URG", SIGURG}, {"PWR", SIGPWR}, {"WINCH", SIGWINCH}};
  const char *v = getenv(name);
  if (!v || !*v) return def;
  if (!strcasecmp(v, "none") || !strcmp(v, "0")) return 0;
  const char *s = strncasecmp(v, "SIG", 3) == 0 ? v + 3 : v;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcasecmp(s, names[i].n)) return names[i].s;
  char *end;
  long x = strtol(s, &end, 10);
  if (*end == '\0' && end != s) {
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
      if (x == names[i].s) return (int)x;
    if (x >= SIGRTMIN && x <= SIGRTMAX) return (int)x;
  }
  fr_log("%s=\"%.40s\" is not a signal the recorder may take (USR1, USR2, URG, PWR, WINCH, "
         "a real-time signal, or none); using %s", name, v, defname);
  return def;
}

void fr_config_load(fr_config *c) {
  memset(c, 0, sizeof *c);
  c->quiet = env_bool("FR_QUIET", 0);
  c->disable = env_bool("FR_DISABLE", 0);
  const char *d = getenv("FR_DUMP_DIR");
  if (d && *d && strlen(d) < sizeof c->dump_dir) {
    strcpy(c->dump_dir, d);
  } else {
    if (d && *d) fr_log("FR_DUMP_DIR is longer than %zu bytes; using ./flightrec-dumps",
                        sizeof c->dump_dir - 1);
    strcpy(c->dump_dir, "flightrec-dumps");
  }
  c->buffer_entries = env_uint("FR_BUFFER_ENTRIES", 16384, 16, 1u << 24);
  c->timeout_sec = env_uint("FR_TIMEOUT_SEC", 60, 0, 86400 * 7);
  c->poll_ms = env_uint("FR_POLL_MS", 100, 1, 60000);
  c->frame_interval_sec = env_uint("FR_FRAME_INTERVAL_SEC", 10, 1, 86400);
  c->max_frames = env_uint("FR_MAX_FRAMES", 3, 1, 1000);
  c->track_completion = env_bool("FR_TRACK_COMPLETION", 1);
  c->gpu_timing = env_bool("FR_GPU_TIMING", 1);
  c->dump_signal = env_signal("FR_DUMP_SIGNAL", SIGUSR2, "SIGUSR2");
  c->dump_on_exit = env_bool("FR_DUMP_ON_EXIT", 0);
  c->dump_on_crash = env_bool("FR_DUMP_ON_CRASH", 1);
  c->backtrace_depth = env_uint("FR_BACKTRACE", 0, 0, FRZ_BACKTRACE_MAX);
  c->trigger_file = env_bool("FR_TRIGGER_FILE", 1);
  c->trigger_pmix = env_bool("FR_TRIGGER_PMIX", 1);
  /* On by default under torchrun (TORCHELASTIC_RUN_ID is set by its agent
   * for every worker, beside MASTER_ADDR and MASTER_PORT); 2 marks that
   * default, which stays quiet when there is no store address. */
  const char *torchrun = getenv("TORCHELASTIC_RUN_ID");
  c->trigger_store = env_bool("FR_TRIGGER_STORE", torchrun && *torchrun ? 2 : 0);
  /* The whole job asks the store at most about 1000 times a second: one
   * query per rank per second up to 1000 ranks, then one per WORLD_SIZE ms. */
  int world = fr_env_world_size();
  c->store_poll_ms = env_uint("FR_TRIGGER_STORE_POLL_MS", world > 1000 ? (uint32_t)world : 1000, 10, 600000);
  c->profiler_mask = env_mask("FR_PROFILER_MASK", FR_PROFILER_DEFAULT_MASK);
  c->stacks = env_bool("FR_STACKS", 1);
  c->stack_signal = env_signal("FR_STACK_SIGNAL", SIGRTMAX - 2, "SIGRTMAX-2");
  c->stack_timeout_ms = env_uint("FR_STACK_TIMEOUT_MS", 100, 1, 10000);
  c->py_stacks = env_bool("FR_PY_STACKS", 0);
  if (!c->stack_signal) c->stacks = 0; /* FR_STACK_SIGNAL=none */
  if (c->stacks && c->stack_signal == c->dump_signal) {
    fr_log("FR_STACK_SIGNAL is FR_DUMP_SIGNAL (%d); no thread stacks in dumps", c->stack_signal);
    c->stacks = 0;
  }
  fr_env_job_id(c->job_id, sizeof c->job_id);
  const char *rd = getenv("FR_RING_DIR");
  if (!rd || !*rd) rd = "/dev/shm";
  if (!strcmp(rd, "none") || !strcmp(rd, "off") || !strcmp(rd, "0")) rd = "";
  if (strlen(rd) >= 400) {
    fr_log("FR_RING_DIR is longer than 399 bytes; the ring stays in private memory");
    rd = "";
  }
  strcpy(c->ring_dir, rd);
}
