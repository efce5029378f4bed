/* sim_reduce.c — element types and reduction operators of the simulator.
 *
 * Integer and float32/float64 types are reduced natively.  float16,
 * bfloat16 and the two fp8 types are converted to float, reduced, and
 * rounded back to nearest-even (overflow saturates to the type's largest
 * finite value for float8e4m3, which has no infinity).  ncclAvg sums during
 * the transfer and divides once at the end (integer division for integer
 * types).
 */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sim_nccl.h"

size_t sim_dtype_size(ncclDataType_t dtype)
{
  switch (dtype) {
  case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2:
    return 1;
  case ncclFloat16: case ncclBfloat16:
    return 2;
  case ncclInt32: case ncclUint32: case ncclFloat32:
    return 4;
  case ncclInt64: case ncclUint64: case ncclFloat64:
    return 8;
  default:
    return 0;
  }
}

static float sim_bits_to_float(uint32_t b)
{
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

static uint32_t sim_float_to_bits(float f)
{
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

static float sim_bf16_to_float(uint16_t h)
{
  return sim_bits_to_float((uint32_t)h << 16);
}

static uint16_t sim_float_to_bf16(float f)
{
  uint32_t b = sim_float_to_bits(f);
  if (isnan(f))
    return (uint16_t)((b >> 16) | 0x40);
  b += 0x7fff + ((b >> 16) & 1); /* round to nearest even */
  return (uint16_t)(b >> 16);
}

/* Decodes a small float with `eb` exponent and `mb` mantissa bits (sign in
 * the top bit of the eb+mb+1 bits).  ieee: all-ones exponent is inf/NaN;
 * otherwise (e4m3) only all-ones exponent and mantissa is NaN. */
static float sim_minifloat_decode(uint32_t v, int eb, int mb, int ieee)
{
  int bias = (1 << (eb - 1)) - 1;
  uint32_t sign = v >> (eb + mb);
  uint32_t e = (v >> mb) & ((1u << eb) - 1);
  uint32_t m = v & ((1u << mb) - 1);
  float r;
  if (e == (1u << eb) - 1 && (ieee || m == (1u << mb) - 1))
    r = (ieee && m == 0) ? INFINITY : NAN;
  else if (e == 0)
    r = ldexpf((float)m, 1 - bias - mb);
  else
    r = ldexpf((float)(m | (1u << mb)), (int)e - bias - mb);
  return sign ? -r : r;
}

/* Rounds a float to the nearest representable small float (ties to even). */
static uint32_t sim_minifloat_encode(float f, int eb, int mb, int ieee)
{
  int bias = (1 << (eb - 1)) - 1;
  uint32_t sign = signbit(f) ? 1u << (eb + mb) : 0;
  uint32_t emax = ieee ? (1u << eb) - 2 : (1u << eb) - 1;
  uint32_t mmax_top = ieee ? (1u << mb) - 1 : (1u << mb) - 2;
  uint32_t max_finite = (emax << mb) | mmax_top;
  if (isnan(f))
    return sign | (((1u << eb) - 1) << mb) | ((1u << mb) - 1);
  float a = fabsf(f);
  if (a == 0.0f)
    return sign;
  int exp;
  frexpf(a, &exp);              /* a = frac * 2^exp, frac in [0.5, 1) */
  int e = exp - 1 + bias;       /* biased exponent of a */
  int scale = e >= 1 ? exp - 1 - mb : 1 - bias - mb; /* weight of the last mantissa bit */
  float q = ldexpf(a, -scale);  /* value in units of the last bit */
  float r = rintf(q);           /* nearest, ties to even (default mode) */
  uint32_t units = r > 4294967040.0f ? UINT32_MAX : (uint32_t)r;
  uint32_t out;
  if (e < 1) {                  /* subnormal range; may round up to the smallest normal */
    out = units;
  } else {
    if (units >= (2u << mb)) {  /* mantissa overflowed into the next binade */
      units >>= 1;
      e++;
    }
    out = ((uint32_t)e << mb) | (units & ((1u << mb) - 1));
    if ((uint32_t)e > emax || out > max_finite)
      out = ieee ? ((emax + 1) << mb) : max_finite; /* inf, or saturate */
  }
  return sign | out;
}

/* Loads element i of a buffer of a converted type as float. */
static float sim_load_small(const void *p, size_t i, ncclDataType_t dt)
{
  switch (dt) {
  case ncclFloat16: {
    uint16_t h;
    memcpy(&h, (const unsigned char *)p + 2 * i, 2);
    return sim_minifloat_decode(h, 5, 10, 1);
  }
  case ncclBfloat16: {
    uint16_t h;
    memcpy(&h, (const unsigned char *)p + 2 * i, 2);
    return sim_bf16_to_float(h);
  }
  case ncclFloat8e4m3:
    return sim_minifloat_decode(((const uint8_t *)p)[i], 4, 3, 0);
  default:
    return sim_minifloat_decode(((const uint8_t *)p)[i], 5, 2, 1);
  }
}

static void sim_store_small(void *p, size_t i, ncclDataType_t dt, float f)
{
  switch (dt) {
  case ncclFloat16: {
    uint16_t h = (uint16_t)sim_minifloat_encode(f, 5, 10, 1);
    memcpy((unsigned char *)p + 2 * i, &h, 2);
    break;
  }
  case ncclBfloat16: {
    uint16_t h = sim_float_to_bf16(f);
    memcpy((unsigned char *)p + 2 * i, &h, 2);
    break;
  }
  case ncclFloat8e4m3:
    ((uint8_t *)p)[i] = (uint8_t)sim_minifloat_encode(f, 4, 3, 0);
    break;
  default:
    ((uint8_t *)p)[i] = (uint8_t)sim_minifloat_encode(f, 5, 2, 1);
    break;
  }
}

#define SIM_APPLY(a, b, op) \
  ((op) == ncclProd ? (a) * (b) : (op) == ncclMax ? ((a) > (b) ? (a) : (b)) \
   : (op) == ncclMin ? ((a) < (b) ? (a) : (b)) : (a) + (b))

/* Element-wise reduction in type T; sums and products are computed in U
 * (the unsigned counterpart for integers, so that overflow wraps). */
#define SIM_REDUCE_NATIVE(T, U) do { \
    T *d = acc; const T *s = in; \
    for (size_t i = 0; i < n; i++) { \
      T a, b, r; memcpy(&a, d + i, sizeof a); memcpy(&b, s + i, sizeof b); \
      if (op == ncclMax || op == ncclMin) r = SIM_APPLY(a, b, op); \
      else r = (T)SIM_APPLY((U)a, (U)b, op); \
      memcpy(d + i, &r, sizeof r); \
    } \
  } while (0)

void sim_reduce(void *acc, const void *in, size_t n, ncclDataType_t dtype, ncclRedOp_t op)
{
  switch (dtype) {
  case ncclInt8: SIM_REDUCE_NATIVE(int8_t, uint32_t); break;
  case ncclUint8: SIM_REDUCE_NATIVE(uint8_t, uint32_t); break;
  case ncclInt32: SIM_REDUCE_NATIVE(int32_t, uint32_t); break;
  case ncclUint32: SIM_REDUCE_NATIVE(uint32_t, uint32_t); break;
  case ncclInt64: SIM_REDUCE_NATIVE(int64_t, uint64_t); break;
  case ncclUint64: SIM_REDUCE_NATIVE(uint64_t, uint64_t); break;
  case ncclFloat32: SIM_REDUCE_NATIVE(float, float); break;
  case ncclFloat64: SIM_REDUCE_NATIVE(double, double); break;
  case ncclFloat16: case ncclBfloat16: case ncclFloat8e4m3: case ncclFloat8e5m2:
    for (size_t i = 0; i < n; i++) {
      float a = sim_load_small(acc, i, dtype), b = sim_load_small(in, i, dtype);
      sim_store_small(acc, i, dtype, SIM_APPLY(a, b, op));
    }
    break;
  default:
    break;
  }
}

/* Divides in the wide type W so that nranks never overflows T. */
#define SIM_DIVIDE_NATIVE(T, W) do { \
    T *d = buf; \
    for (size_t i = 0; i < n; i++) { \
      T a; memcpy(&a, d + i, sizeof a); a = (T)((W)a / (W)nranks); memcpy(d + i, &a, sizeof a); \
    } \
  } while (0)

void sim_avg_finish(void *buf, size_t n, ncclDataType_t dtype, int nranks)
{
  switch (dtype) {
  case ncclInt8: SIM_DIVIDE_NATIVE(int8_t, int64_t); break;
  case ncclUint8: SIM_DIVIDE_NATIVE(uint8_t, uint64_t); break;
  case ncclInt32: SIM_DIVIDE_NATIVE(int32_t, int64_t); break;
  case ncclUint32: SIM_DIVIDE_NATIVE(uint32_t, uint64_t); break;
  case ncclInt64: SIM_DIVIDE_NATIVE(int64_t, int64_t); break;
  case ncclUint64: SIM_DIVIDE_NATIVE(uint64_t, uint64_t); break;
  case ncclFloat32: SIM_DIVIDE_NATIVE(float, float); break;
  case ncclFloat64: SIM_DIVIDE_NATIVE(double, double); break;
  case ncclFloat16: case ncclBfloat16: case ncclFloat8e4m3: case ncclFloat8e5m2:
    for (size_t i = 0; i < n; i++)
      sim_store_small(buf, i, dtype, sim_load_small(buf, i, dtype) / (float)nranks);
    break;
  default:
    break;
  }
}
