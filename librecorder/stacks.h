/* stacks.h — thread stacks at dump time (stacks.c) and the Python frames of
 * the interpreter hosted by the process (pystacks.c).  Internal to
 * librecorder.so. */
#ifndef FR_STACKS_H
#define FR_STACKS_H

#include <stdint.h>

#include "frz.h"

#define FR_STACK_THREADS 512                  /* threads asked per dump at most */
#define FR_STACK_OUT (FR_STACK_THREADS + 64)  /* threads listed (the rest as "skipped") */

/* Install the FR_STACK_SIGNAL handler, allocate the slots and prime the
 * unwinder (FR_STACKS=1).  Called once, at the first communicator.  0 ok;
 * -1 when stacks stay off (the signal has a handler already, no memory). */
int fr_stacks_init(void);

/* Every thread's stack now (the recorder's own thread left out), waiting at
 * most FR_STACK_TIMEOUT_MS for the threads to answer.  Returns the threads
 * (*n of them, a buffer reused by the next call), NULL when off.  Call with
 * the dump lock held. */
frz_stack *fr_stacks_collect(uint32_t *n);

/* Flag the threads inside an NCCL call (the newest record of theirs still
 * IN_CALL) and the thread of the newest record, from a ring snapshot in id
 * order. */
void fr_stacks_mark(frz_stack *t, uint32_t n, const frz_record *recs, uint64_t nrec);

/* FR_PY_STACKS=1: the Python frames of every thread of the interpreter
 * hosted by this process, through the interpreter's own traceback dumper
 * (the one faulthandler uses), found at run time.  Threads are tied to
 * t[0..nt) by their pthread handle.  Returns the frames (*n, a reused
 * buffer), NULL when there is no interpreter or it is off. */
frz_pyframe *fr_pystacks_collect(const frz_stack *t, uint32_t nt, uint32_t *n);

#endif /* FR_STACKS_H */
