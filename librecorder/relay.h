/* relay.h — how one rank's hang reaches the ranks that did not see it,
 * besides the trigger file in the dump directory (which needs a filesystem
 * every rank sees):
 *   - PMIx events through the job's launcher (relay_pmix.c), when the
 *     process runs under PMIx (mpirun, PRRTE, srun --mpi=pmix);
 *   - a key in the job's TCPStore (relay_store.c), when asked for
 *     (FR_TRIGGER_STORE=1) and the store's address is known.
 * Each has a thread of its own ("fr-relay-pmix", "fr-relay-store"): the
 * watchdog never waits on a launcher or a network, nor one on the other.  Both carry the trigger line of the trigger file
 * ("flightrec-trigger v1 rank=R time_ns=T reason=TEXT"), so a receiver
 * knows the first rank and, from its wall clock, how long the way took.
 * Any failure is one line on stderr; the trigger file goes on working.
 */
#ifndef FR_RELAY_H
#define FR_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include "frz.h"

/* A trigger that came from another rank. */
typedef struct fr_relay_trigger {
  int trigger;          /* FRZ_TRIGGER_PMIX or FRZ_TRIGGER_STORE */
  int rank;             /* the rank that saw the hang, -1 unknown */
  uint64_t latency_us;  /* its trigger to our seeing it (wall clocks), 0 unknown */
  char text[FRZ_TEXT_MAX];
} fr_relay_trigger;

/* Start the relay threads of the mechanisms that are on and usable (first
 * comm, before the watchdog; idempotent).  Returns 0, or -1 when nothing
 * is relayed. */
int fr_relay_start(void);
/* This process saw a hang at wall-clock time_ns: tell the job (never
 * blocks: the relay threads send it).  `reason` is the trigger's text. */
void fr_relay_post(const char *reason, uint64_t time_ns);
/* Has a trigger from another rank arrived since the last call?  1 and *t
 * filled, else 0 (watchdog thread; cheap). */
int fr_relay_take(fr_relay_trigger *t);
/* An episode began (from whatever trigger): what arrived before `now_ns`
 * (wall clock) is acted on already. */
void fr_relay_handled(uint64_t now_ns);
/* At a clean exit: stop the thread and leave PMIx if we joined it. */
void fr_relay_stop(void);
/* In a forked child: never touch the parent's PMIx or store connection. */
void fr_relay_forget(void);

/* ---- between relay.c and its mechanisms ------------------------------- */
/* Hand a received trigger line to the watchdog (any thread; `via` is
 * FRZ_TRIGGER_PMIX or FRZ_TRIGGER_STORE).  Lines from this process, stale
 * lines (before this process started) and lines already acted on are
 * dropped. */
void fr_relay_deliver(int via, const char *line, size_t len);

/* PMIx (relay_pmix.c), called on fr-relay-pmix (close: at exit). */
int fr_pmix_wanted(void);                 /* the environment says PMIx, and it is not switched off */
int fr_pmix_open(void);                   /* load, join, register the handler: 0 or -1 (logged) */
void fr_pmix_notify(const char *line);    /* tell the job (best effort) */
void fr_pmix_close(void);                 /* leave PMIx if we joined it */
void fr_pmix_forget(void);                /* fork child: never call PMIx */

/* The TCPStore (relay_store.c), called on fr-relay-store (close: at exit). */
int fr_store_wanted(void);                /* FR_TRIGGER_STORE=1 and an address */
void fr_store_poll(uint64_t now_ns);      /* connect if need be; look at the key */
void fr_store_publish(const char *line);  /* set the key */
void fr_store_interrupt(void);            /* any thread, at exit: end a send or receive in progress */
void fr_store_close(void);

#endif /* FR_RELAY_H */
