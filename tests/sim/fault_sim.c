/* fault_sim.c — libsimfault.so: NCCL errors on demand, for the recorder's
 * fault-injection tests (tests/e2e/recorder-faults.sh).
 *
 * Preloaded after the recorder (LD_PRELOAD=librecorder.so:libsimfault.so),
 * or alone for the same job without the recorder, it defines pnccl<Name> and
 * nccl<Name> for every function the recorder wraps (the FR_COLL, FR_P2P,
 * FR_CALL and FR_CALL_229 entries of nccl_api.def).  A call of a function
 * given a fault returns that ncclResult_t at once, without reaching NCCL
 * (as NCCL's argument checks do); every other call goes on to the next
 * definition, the simulator's libnccl.so.2 (ncclInvalidUsage when it has
 * none, as for a function an older NCCL lacks).
 *
 *   FR_SIM_FAIL=Name:CODE[,Name:CODE...]   e.g. FR_SIM_FAIL=AllReduce:3
 *
 * sets faults at load time (Name without the nccl prefix, CODE an
 * ncclResult_t value); sim_fault_set() changes them at run time.
 */
#include "config.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "fr_nccl.h"

/* The fault-injectable functions, numbered. */
enum {
#define FR_COLL(code, Name, rec, params, args, c, d, o, r) SF_##Name,
#define FR_P2P(code, Name, params, args, dir) SF_##Name,
#define FR_CALL(code, Name, params, args) SF_##Name,
#define FR_CALL_229(code, Name, params, args) SF_##Name,
#include "nccl_api.def"
  SF_COUNT
};

static const char *const sf_names[SF_COUNT] = {
#define FR_COLL(code, Name, rec, params, args, c, d, o, r) #Name,
#define FR_P2P(code, Name, params, args, dir) #Name,
#define FR_CALL(code, Name, params, args) #Name,
#define FR_CALL_229(code, Name, params, args) #Name,
#include "nccl_api.def"
};

static _Atomic int sf_fault[SF_COUNT]; /* the result to return; 0: none */

/* Test knob: make nccl<name> (name without the prefix, e.g. "AllReduce")
 * return `code` from now on without reaching NCCL; 0 removes the fault.
 * Returns 0, or -1 for a name that is not a wrapped function. */
int sim_fault_set(const char *name, int code);
int sim_fault_set(const char *name, int code)
{
  for (int i = 0; i < SF_COUNT; i++)
    if (strcmp(sf_names[i], name) == 0) {
      atomic_store(&sf_fault[i], code);
      return 0;
    }
  return -1;
}

/* FR_SIM_FAIL, read once at load time; malformed entries are ignored. */
__attribute__((constructor)) static void sf_load(void)
{
  const char *env = getenv("FR_SIM_FAIL");
  char name[64];
  while (env && *env) {
    size_t n = strcspn(env, ":,");
    if (env[n] == ':' && n < sizeof name) {
      memcpy(name, env, n);
      name[n] = '\0';
      sim_fault_set(name, atoi(env + n + 1));
    }
    env += strcspn(env, ",");
    if (*env == ',')
      env++;
  }
}

/* The next definition of pnccl<name> (else nccl<name>), or NULL. */
static void *sf_next(const char *pname)
{
  void *p = dlsym(RTLD_NEXT, pname);
  return p ? p : dlsym(RTLD_NEXT, pname + 1);
}

#define SF_WRAP_(Name, params, args)                                                   \
  typedef ncclResult_t (*sf_##Name##_fn) params;                                      \
  ncclResult_t pnccl##Name params;                                                     \
  ncclResult_t pnccl##Name params                                                      \
  {                                                                                    \
    static _Atomic(sf_##Name##_fn) next;                                               \
    int fault = atomic_load(&sf_fault[SF_##Name]);                                     \
    if (fault)                                                                         \
      return (ncclResult_t)fault;                                                      \
    sf_##Name##_fn f = atomic_load(&next);                                             \
    if (!f) {                                                                          \
      f = (sf_##Name##_fn)sf_next("pnccl" #Name);                                      \
      if (!f)                                                                          \
        return ncclInvalidUsage;                                                       \
      atomic_store(&next, f);                                                          \
    }                                                                                  \
    return f args;                                                                     \
  }                                                                                    \
  ncclResult_t nccl##Name params __attribute__((alias("pnccl" #Name)));
#define FR_COLL(code, Name, rec, params, args, c, d, o, r) SF_WRAP_(Name, params, args)
#define FR_P2P(code, Name, params, args, dir) SF_WRAP_(Name, params, args)
#define FR_CALL(code, Name, params, args) SF_WRAP_(Name, params, args)
#define FR_CALL_229(code, Name, params, args) SF_WRAP_(Name, params, args)
#include "nccl_api.def"
