/* A ROCm-style program without a GPU: Debian's real HIP runtime
 * (libamdhip64.so.N) is loaded and asked for devices and a stream before
 * any communicator, as a ROCm job does; then the NCCL API calls of
 * real-nccl-prog.c (on the real libnccl.so.2, standing in for RCCL, which
 * keeps that API).  Every result is printed so that a test can compare
 * runs with and without the recorder. */
#include <stdio.h>

#include "fr_hip.h"

int real_nccl_calls(void);
#define main real_nccl_calls
#include "real-nccl-prog.c"
#undef main

int main(void) {
  int n = -1, v = -1;
  hipError_t e = hipGetDeviceCount(&n);
  printf("hipGetDeviceCount: %d count=%d\n", (int)e, n);
  printf("hipRuntimeGetVersion: %d\n", (int)hipRuntimeGetVersion(&v));
  hipStream_t s = NULL;
  e = hipStreamCreateWithFlags(&s, hipStreamNonBlocking);
  printf("hipStreamCreateWithFlags: %d\n", (int)e);
  if (e == hipSuccess) hipStreamDestroy(s);
  return real_nccl_calls();
}
