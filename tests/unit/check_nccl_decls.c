/* Compile-time check: our declarations of the NCCL 2.28 API (fr_nccl.h and
 * nccl_api.def) against NVIDIA's real nccl.h.  Built only when configure
 * finds nccl.h (--with-cuda); a mismatch is a compile error naming the item.
 * The program itself does nothing: compiling it is the test. */
#include <stddef.h>
#include <nccl.h>
#define FR_NCCL_TABLES_ONLY
#include "fr_nccl.h"

#define CHECK_VALUE_(name, value) \
  _Static_assert((long long)(name) == (long long)(value), "nccl.h value differs: " #name);
FR_NCCL_RESULTS(CHECK_VALUE_)
FR_NCCL_REDOPS(CHECK_VALUE_)
FR_NCCL_DTYPES(CHECK_VALUE_)
FR_NCCL_DTYPE_ALIASES(CHECK_VALUE_)
FR_NCCL_SCALAR_RESIDENCE(CHECK_VALUE_)
FR_NCCL_CONSTANTS(CHECK_VALUE_)

/* Types the API uses: same sizes as ours. */
_Static_assert(sizeof(ncclResult_t) == sizeof(int), "ncclResult_t size");
_Static_assert(sizeof(ncclDataType_t) == sizeof(int), "ncclDataType_t size");
_Static_assert(sizeof(ncclRedOp_t) == sizeof(int), "ncclRedOp_t size");
_Static_assert(sizeof(ncclUniqueId) == 128, "ncclUniqueId size");
_Static_assert(sizeof(ncclComm_t) == sizeof(void *), "ncclComm_t size");
_Static_assert(__builtin_types_compatible_p(cudaStream_t, struct CUstream_st *), "cudaStream_t");

/* Struct layouts: our field list, rebuilt under another tag, must have the
 * same size and every field at the same offset with a compatible type. */
#define OUR_FIELD_(type, name) type name;
struct our_config { FR_NCCL_CONFIG_FIELDS(OUR_FIELD_) };
struct our_siminfo { FR_NCCL_SIMINFO_FIELDS(OUR_FIELD_) };
_Static_assert(sizeof(struct our_config) == sizeof(ncclConfig_t), "ncclConfig_t size");
_Static_assert(sizeof(struct our_siminfo) == sizeof(ncclSimInfo_t), "ncclSimInfo_t size");
#define CHECK_CONFIG_FIELD_(type, name) \
  _Static_assert(offsetof(struct our_config, name) == offsetof(ncclConfig_t, name), "ncclConfig_t." #name " offset"); \
  _Static_assert(__builtin_types_compatible_p(type, __typeof__(((ncclConfig_t *)0)->name)), "ncclConfig_t." #name " type");
FR_NCCL_CONFIG_FIELDS(CHECK_CONFIG_FIELD_)
#define CHECK_SIMINFO_FIELD_(type, name) \
  _Static_assert(offsetof(struct our_siminfo, name) == offsetof(ncclSimInfo_t, name), "ncclSimInfo_t." #name " offset"); \
  _Static_assert(__builtin_types_compatible_p(type, __typeof__(((ncclSimInfo_t *)0)->name)), "ncclSimInfo_t." #name " type");
FR_NCCL_SIMINFO_FIELDS(CHECK_SIMINFO_FIELD_)

/* Every prototype, in both exported spellings. */
#define CHECK_PROTO_(ret, Name, params) \
  _Static_assert(__builtin_types_compatible_p(__typeof__(nccl##Name), ret params), "prototype of nccl" #Name); \
  _Static_assert(__builtin_types_compatible_p(__typeof__(pnccl##Name), ret params), "prototype of pnccl" #Name);
#define FR_COLL(code, Name, rec, params, args, c, d, o, r) CHECK_PROTO_(ncclResult_t, Name, params)
#define FR_P2P(code, Name, params, args, dir) CHECK_PROTO_(ncclResult_t, Name, params)
#define FR_CALL(code, Name, params, args) CHECK_PROTO_(ncclResult_t, Name, params)
#define FR_PASS(ret, Name, params) CHECK_PROTO_(ret, Name, params)
#if NCCL_VERSION_CODE >= 22900 /* functions NCCL 2.29 added */
#define FR_CALL_229(code, Name, params, args) CHECK_PROTO_(ncclResult_t, Name, params)
#endif
#include "nccl_api.def"

int main(void) { return 0; }
