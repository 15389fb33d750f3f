// What the driver-API probes (tools/*_probe.cu) share: checking calls,
// printing an API's answer, the primary context, host rows into a CUDA array.
#ifndef ZMLIR_TOOLS_PROBE_COMMON_H
#define ZMLIR_TOOLS_PROBE_COMMON_H

#include <cuda.h>
#include <stdio.h>
#include <string.h>

// Returns 1 from the calling function, saying which call failed, unless `x`
// is CUDA_SUCCESS.
#define CK(x)                                                                                      \
  do {                                                                                             \
    CUresult r_ = (x);                                                                             \
    if (r_ != CUDA_SUCCESS) {                                                                      \
      printf("FAIL %s = %d (line %d)\n", #x, (int)r_, __LINE__);                                   \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)
// Prints an answer the probe records rather than requires: "api NAME STATUS".
#define RC(name, x) printf("api %s %d\n", name, (int)(x))

// Device 0's primary context, made current; 1 (having said why) on failure.
static int probe_context(void) {
  CUdevice dev;
  CUcontext ctx;
  CK(cuInit(0));
  CK(cuDeviceGet(&dev, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  return 0;
}

// `height` rows of `row_bytes` bytes, packed in `host`, into the 2D array `dst`.
static CUresult copy_to_array(CUarray dst, const void *host, size_t row_bytes, size_t height) {
  CUDA_MEMCPY2D c;
  memset(&c, 0, sizeof c);
  c.srcMemoryType = CU_MEMORYTYPE_HOST;
  c.srcHost = host;
  c.srcPitch = row_bytes;
  c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
  c.dstArray = dst;
  c.WidthInBytes = row_bytes;
  c.Height = height;
  return cuMemcpy2D(&c);
}

#endif
