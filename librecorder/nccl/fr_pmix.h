/* fr_pmix.h — the few PMIx client calls, types and values the recorder
 * uses, declared here so that nothing needs PMIx to build: the client
 * library is opened at run time, like libnccl.so.2 and libcuda.so.1.
 *
 * Layouts and values are those of OpenPMIx 4.x and 5.x (PMIx standard
 * v4/v5; pmix_common.h).  tests/unit/check_pmix_decls.c checks them
 * against the real pmix.h where one is installed.  Older libraries (PMIx
 * 2.x/3.x) number some event statuses differently: the recorder uses PMIx
 * only when PMIx_Get_version() says 4 or later.
 */
#ifndef FR_PMIX_H
#define FR_PMIX_H

#include <stddef.h>
#include <stdint.h>

#define FR_PMIX_MAX_NSLEN 255  /* PMIX_MAX_NSLEN */
#define FR_PMIX_MAX_KEYLEN 511 /* PMIX_MAX_KEYLEN */

typedef int fr_pmix_status_t;          /* pmix_status_t */
typedef uint32_t fr_pmix_rank_t;       /* pmix_rank_t */
typedef uint16_t fr_pmix_data_type_t;  /* pmix_data_type_t */
typedef uint8_t fr_pmix_data_range_t;  /* pmix_data_range_t */

/* pmix_proc_t: a namespace (the job) and a rank in it. */
typedef struct fr_pmix_proc {
  char nspace[FR_PMIX_MAX_NSLEN + 1];
  fr_pmix_rank_t rank;
} fr_pmix_proc_t;

/* pmix_value_t: a type tag and a 24-byte union, of which we use only the
 * string member (type PMIX_STRING). */
typedef struct fr_pmix_value {
  fr_pmix_data_type_t type;
  union {
    char *string;
    unsigned char raw[24];
  } data;
} fr_pmix_value_t;

/* pmix_info_t: a key, directive flags and a value. */
typedef struct fr_pmix_info {
  char key[FR_PMIX_MAX_KEYLEN + 1];
  uint32_t flags;
  fr_pmix_value_t value;
} fr_pmix_info_t;

/* Values (pmix_common.h of PMIx 4/5) */
#define FR_PMIX_SUCCESS 0
#define FR_PMIX_STRING 3                 /* PMIX_STRING */
#define FR_PMIX_RANGE_LOCAL 2            /* PMIX_RANGE_LOCAL: this node's procs */
#define FR_PMIX_RANGE_NAMESPACE 3        /* PMIX_RANGE_NAMESPACE: the whole job */
#define FR_PMIX_EVENT_ACTION_COMPLETE (-334) /* PMIX_EVENT_ACTION_COMPLETE: stop the handler chain */
#define FR_PMIX_EXTERNAL_ERR_BASE (-3000)    /* PMIX_EXTERNAL_ERR_BASE: codes below are the user's */

/* pmix_op_cbfunc_t */
typedef void (*fr_pmix_op_cbfunc_t)(fr_pmix_status_t status, void *cbdata);
/* pmix_hdlr_reg_cbfunc_t */
typedef void (*fr_pmix_hdlr_reg_cbfunc_t)(fr_pmix_status_t status, size_t refid, void *cbdata);
/* pmix_event_notification_cbfunc_fn_t */
typedef void (*fr_pmix_event_notification_cbfunc_fn_t)(fr_pmix_status_t status, fr_pmix_info_t *results,
                                                       size_t nresults, fr_pmix_op_cbfunc_t cbfunc,
                                                       void *thiscbdata, void *notification_cbdata);
/* pmix_notification_fn_t */
typedef void (*fr_pmix_notification_fn_t)(size_t evhdlr_registration_id, fr_pmix_status_t status,
                                          const fr_pmix_proc_t *source, fr_pmix_info_t info[], size_t ninfo,
                                          fr_pmix_info_t results[], size_t nresults,
                                          fr_pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata);

/* The calls, by exported symbol name and parameters (return type first). */
#define FR_PMIX_API(X)                                                                            \
  X(fr_pmix_status_t, PMIx_Init, (fr_pmix_proc_t * proc, fr_pmix_info_t info[], size_t ninfo))     \
  X(fr_pmix_status_t, PMIx_Finalize, (const fr_pmix_info_t info[], size_t ninfo))                  \
  X(const char *, PMIx_Get_version, (void))                                                        \
  X(fr_pmix_status_t, PMIx_Register_event_handler,                                                 \
    (fr_pmix_status_t codes[], size_t ncodes, fr_pmix_info_t info[], size_t ninfo,                 \
     fr_pmix_notification_fn_t evhdlr, fr_pmix_hdlr_reg_cbfunc_t cbfunc, void *cbdata))           \
  X(fr_pmix_status_t, PMIx_Notify_event,                                                           \
    (fr_pmix_status_t status, const fr_pmix_proc_t *source, fr_pmix_data_range_t range,            \
     const fr_pmix_info_t info[], size_t ninfo, fr_pmix_op_cbfunc_t cbfunc, void *cbdata))

#endif /* FR_PMIX_H */
