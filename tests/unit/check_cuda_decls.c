/* Compile-time check: our declarations of the CUDA driver calls (fr_cuda.h)
 * against the real cuda.h.  Built only when configure finds cuda.h. */
#include <stddef.h>
#include <cuda.h>
#define FR_CUDA_TABLES_ONLY
#include "fr_cuda.h"

#define CHECK_VALUE_(name, value) \
  _Static_assert((long long)(name) == (long long)(value), "cuda.h value differs: " #name);
FR_CUDA_RESULTS(CHECK_VALUE_)
FR_CUDA_CONSTANTS(CHECK_VALUE_)

_Static_assert(sizeof(CUdeviceptr) == sizeof(unsigned long long), "CUdeviceptr size");
_Static_assert(__builtin_types_compatible_p(CUdeviceptr, unsigned long long), "CUdeviceptr type");
_Static_assert(__builtin_types_compatible_p(CUstream, struct CUstream_st *), "CUstream");
_Static_assert(__builtin_types_compatible_p(CUevent, struct CUevent_st *), "CUevent");
_Static_assert(__builtin_types_compatible_p(CUcontext, struct CUctx_st *), "CUcontext");

/* Prototypes by exported symbol name; cuda.h maps e.g. cuEventRecord to a
 * per-thread-stream variant only when asked to, which we do not. */
#define CHECK_PROTO_(sym, params) \
  _Static_assert(__builtin_types_compatible_p(__typeof__(sym), CUresult params), "prototype of " #sym);
FR_CUDA_API(CHECK_PROTO_)

int main(void) { return 0; }
