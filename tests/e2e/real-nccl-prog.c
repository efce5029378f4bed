/* A minimal NCCL program built against NVIDIA's real nccl.h and linked with
 * the real libnccl.so.2.  Without a GPU: ncclGetVersion and ncclGetUniqueId
 * succeed, ncclCommInitRank fails with a CUDA error.  It prints each call's
 * result so a test can compare runs with and without the recorder. */
#include <stdio.h>
#include <string.h>

#include <nccl.h>

int main(void) {
  int version = 0;
  ncclResult_t r = ncclGetVersion(&version);
  printf("ncclGetVersion: %d version=%d\n", (int)r, version);
  ncclUniqueId id;
  memset(&id, 0, sizeof id);
  r = ncclGetUniqueId(&id);
  printf("ncclGetUniqueId: %d\n", (int)r);
  ncclComm_t comm = NULL;
  r = ncclCommInitRank(&comm, 1, id, 0);
  printf("ncclCommInitRank: %d (%s)\n", (int)r, ncclGetErrorString(r));
  if (r == ncclSuccess) {
    printf("ncclCommDestroy: %d\n", (int)ncclCommDestroy(comm));
  } else {
    /* A call on a comm that never came to be: NCCL's own error comes back. */
    float x = 1.0f;
    r = ncclAllReduce(&x, &x, 1, ncclFloat, ncclSum, NULL, NULL);
    printf("ncclAllReduce(NULL comm): %d\n", (int)r);
  }
  return 0;
}
