/* Compile-time check: our declarations of the PMIx client (fr_pmix.h)
 * against the real pmix.h.  Built only when configure finds it (pkg-config
 * pmix >= 4, e.g. Debian's libpmix-dev). */
#include <stddef.h>
#include <pmix.h>
#include "fr_pmix.h"

#define SAME_(a, b) _Static_assert((long long)(a) == (long long)(b), "pmix.h differs: " #a);
SAME_(FR_PMIX_MAX_NSLEN, PMIX_MAX_NSLEN)
SAME_(FR_PMIX_MAX_KEYLEN, PMIX_MAX_KEYLEN)
SAME_(FR_PMIX_SUCCESS, PMIX_SUCCESS)
SAME_(FR_PMIX_STRING, PMIX_STRING)
SAME_(FR_PMIX_RANGE_LOCAL, PMIX_RANGE_LOCAL)
SAME_(FR_PMIX_RANGE_NAMESPACE, PMIX_RANGE_NAMESPACE)
SAME_(FR_PMIX_EVENT_ACTION_COMPLETE, PMIX_EVENT_ACTION_COMPLETE)
SAME_(FR_PMIX_EXTERNAL_ERR_BASE, PMIX_EXTERNAL_ERR_BASE)

SAME_(sizeof(fr_pmix_status_t), sizeof(pmix_status_t))
SAME_(sizeof(fr_pmix_rank_t), sizeof(pmix_rank_t))
SAME_(sizeof(fr_pmix_data_type_t), sizeof(pmix_data_type_t))
SAME_(sizeof(fr_pmix_data_range_t), sizeof(pmix_data_range_t))
SAME_(sizeof(fr_pmix_proc_t), sizeof(pmix_proc_t))
SAME_(offsetof(fr_pmix_proc_t, rank), offsetof(pmix_proc_t, rank))
SAME_(sizeof(fr_pmix_value_t), sizeof(pmix_value_t))
SAME_(offsetof(fr_pmix_value_t, data), offsetof(pmix_value_t, data))
SAME_(offsetof(fr_pmix_value_t, data.string), offsetof(pmix_value_t, data.string))
SAME_(sizeof(fr_pmix_info_t), sizeof(pmix_info_t))
SAME_(offsetof(fr_pmix_info_t, flags), offsetof(pmix_info_t, flags))
SAME_(offsetof(fr_pmix_info_t, value), offsetof(pmix_info_t, value))

/* The calls: return types and parameter types, one by one. */
_Static_assert(__builtin_types_compatible_p(__typeof__(PMIx_Init(NULL, NULL, 0)), pmix_status_t), "PMIx_Init");
_Static_assert(__builtin_types_compatible_p(__typeof__(PMIx_Finalize(NULL, 0)), pmix_status_t), "PMIx_Finalize");
_Static_assert(__builtin_types_compatible_p(__typeof__(PMIx_Get_version()), const char *), "PMIx_Get_version");
_Static_assert(__builtin_types_compatible_p(__typeof__(PMIx_Register_event_handler(NULL, 0, NULL, 0, NULL, NULL, NULL)),
                                            pmix_status_t), "PMIx_Register_event_handler");
_Static_assert(__builtin_types_compatible_p(__typeof__(PMIx_Notify_event(0, NULL, 0, NULL, 0, NULL, NULL)),
                                            pmix_status_t), "PMIx_Notify_event");

int main(void) { return 0; }
