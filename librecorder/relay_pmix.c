/* relay_pmix.c — a hang passed as a PMIx event (relay.h).
 *
 * Under PMIx (the launcher put PMIX_NAMESPACE and PMIX_RANK in the
 * environment) the client library is used at run time: the copy already in
 * the process (an MPI library's) when there is one, else libpmix.so.2
 * (FR_PMIX_LIB).  A process that had not joined PMIx joins it (PMIx_Init)
 * and leaves at its clean exit (PMIx_Finalize): a launcher counts a process
 * that joined and exits without leaving as failed (Open MPI's mpirun:
 * "exiting improperly").  One handler is registered for our event code
 * FR_PMIX_EVENT; it copies the trigger line and wakes the watchdog, never
 * dumps.  A hang is sent with PMIx_Notify_event to the whole job
 * (PMIX_RANGE_NAMESPACE), or to this node's ranks only under Open MPI 4's
 * ORTE, which does not pass a client's event on to the other clients (seen
 * with Open MPI 4.1.4 and OpenPMIx 4.2.2: only the sender got it, and
 * mpirun then reported the job's exit as improper).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fr_pmix.h"
#include "recorder.h"
#include "relay.h"

/* Our event code: below PMIX_EXTERNAL_ERR_BASE, where codes are the user's
 * ("FR" in the low bits). */
#define FR_PMIX_EVENT (FR_PMIX_EXTERNAL_ERR_BASE - 0x4652)
#define FR_PMIX_KEY "flightrec.trigger"

#define DECLARE_(ret, name, params) static ret(*p_##name) params;
FR_PMIX_API(DECLARE_)

static int joined;  /* we called PMIx_Init: PMIx_Finalize at exit */
static int usable;  /* handler registered: notify may be sent */
static int forgotten;
static fr_pmix_data_range_t range = FR_PMIX_RANGE_NAMESPACE;
static fr_pmix_proc_t self;
static fr_pmix_info_t note; /* the event's one info: kept for PMIx to read after the call */
static char note_line[FRZ_TRIGGER_LINE_MAX];
static _Atomic int registered; /* 0 waiting, 1 done, -1 refused */
static int orte;               /* the range is local because of Open MPI 4's ORTE */


int fr_pmix_wanted(void) {
  if (!fr_g.cfg.trigger_pmix) return 0;
  const char *ns = getenv("PMIX_NAMESPACE"), *rk = getenv("PMIX_RANK");
  return ns && *ns && rk && *rk;
}

/* The PMIx client in this process already, else the one FR_PMIX_LIB names. */
static void *open_client(char *why, size_t len) {
  void *h = dlsym(RTLD_DEFAULT, "PMIx_Init") ? RTLD_DEFAULT : NULL;
  if (h) return h;
  /* an MPI library with a PMIx of its own inside (symbols renamed) is
   * there but invisible: a second client in one process is not safe */
  if (dlsym(RTLD_DEFAULT, "MPI_Init")) {
    snprintf(why, len, "the MPI library's own is hidden");
    return NULL;
  }
  const char *lib = getenv("FR_PMIX_LIB");
  const char *name = lib && *lib ? lib : "libpmix.so.2";
  h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = dlerror();
    snprintf(why, len, "%s%.200s: %.200s", lib && *lib ? "FR_PMIX_LIB=" : "", name, e ? e : "cannot be opened");
  }
  return h;
}

/* The handler: on PMIx's progress thread.  Copy the line, wake the
 * watchdog, end the chain (no default handler, e.g. an MPI library's, may
 * take our event for an error). */
static void on_event(size_t id, fr_pmix_status_t status, const fr_pmix_proc_t *source, fr_pmix_info_t info[],
                     size_t ninfo, fr_pmix_info_t results[], size_t nresults,
                     fr_pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
  (void)id;
  (void)source;
  (void)results;
  (void)nresults;
  if (status == FR_PMIX_EVENT && !forgotten)
    for (size_t i = 0; info && i < ninfo; i++)
      if (!strncmp(info[i].key, FR_PMIX_KEY, sizeof info[i].key) && info[i].value.type == FR_PMIX_STRING &&
          info[i].value.data.string) {
        const char *s = info[i].value.data.string;
        fr_relay_deliver(FRZ_TRIGGER_PMIX, s, strnlen(s, FRZ_TRIGGER_LINE_MAX));
        break;
      }
  if (cbfunc) cbfunc(FR_PMIX_EVENT_ACTION_COMPLETE, NULL, 0, NULL, NULL, cbdata);
}

static void on_registered(fr_pmix_status_t status, size_t refid, void *cbdata) {
  (void)refid;
  (void)cbdata;
  atomic_store(&registered, status == FR_PMIX_SUCCESS ? 1 : -1);
}

int fr_pmix_open(void) {
  char why[480];
  void *h = open_client(why, sizeof why);
  if (!h) {
    fr_log("FR_TRIGGER_PMIX: no usable PMIx client library (%s); PMIx not used", why);
    return -1;
  }
#define RESOLVE_(ret, name, params) p_##name = (ret(*) params)dlsym(h, #name);
  FR_PMIX_API(RESOLVE_)
  if (!p_PMIx_Init || !p_PMIx_Finalize || !p_PMIx_Get_version ||
      !p_PMIx_Register_event_handler || !p_PMIx_Notify_event) {
    fr_log("FR_TRIGGER_PMIX: the library opened as PMIx lacks PMIx calls we need; PMIx not used");
    return -1;
  }
  const char *v = p_PMIx_Get_version();
  const char *num = v ? strpbrk(v, "0123456789") : NULL;
  if (!num || atoi(num) < 4) {
    fr_log("FR_TRIGGER_PMIX: PMIx %.40s is older than 4; PMIx not used", v ? v : "(unknown)");
    return -1;
  }
  /* joined already (MPI_Init) or not, PMIx counts joins: ours goes back
   * down at our exit */
  fr_pmix_status_t rc = p_PMIx_Init(&self, NULL, 0);
  if (rc != FR_PMIX_SUCCESS) {
    fr_log("FR_TRIGGER_PMIX: PMIx_Init failed (status %d); PMIx not used", rc);
    return -1;
  }
  joined = 1;
  fr_pmix_status_t code = FR_PMIX_EVENT;
  p_PMIx_Register_event_handler(&code, 1, NULL, 0, on_event, on_registered, NULL);
  for (int i = 0; i < 200 && atomic_load(&registered) == 0; i++) { /* up to 2 s */
    struct timespec ts = {0, 10 * 1000000L};
    nanosleep(&ts, NULL);
  }
  if (atomic_load(&registered) != 1) {
    fr_log("FR_TRIGGER_PMIX: the launcher did not register our event handler; PMIx not used");
    return -1;
  }
  const char *r = getenv("FR_TRIGGER_PMIX_RANGE");
  int under_orte = getenv("OMPI_MCA_orte_hnp_uri") != NULL; /* Open MPI 4's ORTE */
  if (r && *r && strcasecmp(r, "local") && strcasecmp(r, "namespace")) {
    fr_log("FR_TRIGGER_PMIX_RANGE=\"%.40s\" is neither local nor namespace; using the default", r);
    r = NULL;
  }
  if (r && *r && !strcasecmp(r, "local")) range = FR_PMIX_RANGE_LOCAL;
  else if (r && *r) range = FR_PMIX_RANGE_NAMESPACE;
  else if (under_orte) range = FR_PMIX_RANGE_LOCAL, orte = 1;
  if (under_orte && range == FR_PMIX_RANGE_NAMESPACE && fr_g.proc.local_rank <= 0)
    fr_log("FR_TRIGGER_PMIX_RANGE=namespace under Open MPI 4's ORTE: the event reaches no other rank "
           "(ORTE does not pass it on); the default, local, reaches this node's");
  usable = 1;
  return 0;
}

void fr_pmix_notify(const char *line) {
  if (!usable || forgotten) return;
  /* one event at a time: PMIx may read `note` after the call returns */
  snprintf(note_line, sizeof note_line, "%s", line);
  memset(&note, 0, sizeof note);
  snprintf(note.key, sizeof note.key, "%s", FR_PMIX_KEY);
  note.value.type = FR_PMIX_STRING;
  note.value.data.string = note_line;
  fr_pmix_status_t rc = p_PMIx_Notify_event(FR_PMIX_EVENT, &self, range, &note, 1, NULL, NULL);
  /* said when it matters, not in every healthy job */
  if (orte && rc == FR_PMIX_SUCCESS)
    fr_log("FR_TRIGGER_PMIX: under Open MPI 4's ORTE the hang reaches the ranks on this node only "
           "(others: the trigger file or FR_TRIGGER_STORE)");
  if (rc != FR_PMIX_SUCCESS) fr_log("FR_TRIGGER_PMIX: PMIx_Notify_event failed (status %d)", rc);
}

void fr_pmix_close(void) {
  if (!joined || forgotten) return;
  joined = usable = 0;
  p_PMIx_Finalize(NULL, 0);
}

void fr_pmix_forget(void) {
  forgotten = 1;
  joined = usable = 0;
}
