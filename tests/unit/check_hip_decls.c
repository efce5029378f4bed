/* Compile-time check: our declarations of the HIP runtime calls (fr_hip.h)
 * against the real hip_runtime_api.h (Debian's libamdhip64-dev), as AMD's
 * platform sees it (__HIP_PLATFORM_AMD__).  Where configure found no such
 * header (FR_REAL_HIP_H unset) the test says SKIP. */
#include <stdio.h>
#ifndef FR_REAL_HIP_H
int main(void) {
  puts("SKIP: no hip/hip_runtime_api.h (Debian's libamdhip64-dev; configure --with-hip=DIR)");
  return 77;
}
#else
#include <stddef.h>
#include <hip/hip_runtime_api.h>
#define FR_HIP_TABLES_ONLY
#include "fr_hip.h"

#define CHECK_VALUE_(name, value) \
  _Static_assert((long long)(name) == (long long)(value), "hip_runtime_api.h value differs: " #name);
FR_HIP_RESULTS(CHECK_VALUE_)
FR_HIP_CONSTANTS(CHECK_VALUE_)

_Static_assert(__builtin_types_compatible_p(hipStream_t, struct ihipStream_t *), "hipStream_t");
_Static_assert(__builtin_types_compatible_p(hipEvent_t, struct ihipEvent_t *), "hipEvent_t");
_Static_assert(__builtin_types_compatible_p(hipGraph_t, struct ihipGraph *), "hipGraph_t");
_Static_assert(sizeof(hipError_t) == sizeof(int), "hipError_t size");
_Static_assert(sizeof(hipStreamCaptureStatus) == sizeof(int), "hipStreamCaptureStatus size");

/* Prototypes by exported symbol name */
#define CHECK_PROTO_(sym, params) \
  _Static_assert(__builtin_types_compatible_p(__typeof__(sym), hipError_t params), "prototype of " #sym);
FR_HIP_API(CHECK_PROTO_)
FR_HIP_JOB_API(CHECK_PROTO_)

int main(void) { return 0; }
#endif
