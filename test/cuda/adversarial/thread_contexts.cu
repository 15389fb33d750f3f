// The current context is per host thread (driver API): a new thread has
// none until it sets one, and what one thread pushes, pops or sets is not
// another's. NVIDIA's answers are next to each check. Built with nvcc,
// linked with -lcuda.
#include <atomic>
#include <cstdio>
#include <cuda.h>
#include <thread>

#include "expect_cu.h"

int main() {
  CUdevice dev;
  CUcontext primary, created, current;
  CUdeviceptr p;
  EXPECT_CU(cuInit(0), CUDA_SUCCESS);
  EXPECT_CU(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  EXPECT_CU(cuDevicePrimaryCtxRetain(&primary, dev), CUDA_SUCCESS);
  EXPECT_CU(cuCtxSetCurrent(primary), CUDA_SUCCESS);
  EXPECT_CU(cuCtxCreate(&created, nullptr, 0, dev), CUDA_SUCCESS);  // pushed: current here

  std::thread([&] {
    // A new thread: no current context.
    CUcontext mine = primary;
    EXPECT_CU(cuCtxGetCurrent(&mine), CUDA_SUCCESS);
    EXPECT(mine == nullptr);
    CUdeviceptr q;
    EXPECT_CU(cuMemAlloc(&q, 64), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT_CU(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
    CUstream s;
    EXPECT_CU(cuStreamCreate(&s, 0), CUDA_ERROR_INVALID_CONTEXT);
    EXPECT_CU(cuCtxPopCurrent(&mine), CUDA_ERROR_INVALID_CONTEXT);
    // Its own stack.
    EXPECT_CU(cuCtxPushCurrent(primary), CUDA_SUCCESS);
    EXPECT_CU(cuMemAlloc(&q, 64), CUDA_SUCCESS);
    EXPECT_CU(cuMemFree(q), CUDA_SUCCESS);
    EXPECT_CU(cuCtxPopCurrent(&mine), CUDA_SUCCESS);
    EXPECT(mine == primary);
    EXPECT_CU(cuCtxGetCurrent(&mine), CUDA_SUCCESS);
    EXPECT(mine == nullptr);
  }).join();

  // A context destroyed while current on another thread: that thread's
  // calls return CUDA_ERROR_CONTEXT_IS_DESTROYED.
  CUcontext doomed;
  EXPECT_CU(cuCtxCreate(&doomed, nullptr, 0, dev), CUDA_SUCCESS);
  EXPECT_CU(cuCtxPopCurrent(&current), CUDA_SUCCESS);
  EXPECT(current == doomed);
  std::atomic<int> stage{0};
  std::thread other([&] {
    EXPECT_CU(cuCtxSetCurrent(doomed), CUDA_SUCCESS);
    stage = 1;
    while (stage != 2)
      std::this_thread::yield();
    CUdeviceptr q;
    EXPECT_CU(cuMemAlloc(&q, 64), CUDA_ERROR_CONTEXT_IS_DESTROYED);
    EXPECT_CU(cuCtxSynchronize(), CUDA_ERROR_CONTEXT_IS_DESTROYED);
  });
  while (stage != 1)
    std::this_thread::yield();
  EXPECT_CU(cuCtxDestroy(doomed), CUDA_SUCCESS);
  stage = 2;
  other.join();

  // This thread's context is still the one it created.
  EXPECT_CU(cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT(current == created);
  EXPECT_CU(cuMemAlloc(&p, 64), CUDA_SUCCESS);
  EXPECT_CU(cuMemFree(p), CUDA_SUCCESS);
  EXPECT_CU(cuCtxDestroy(created), CUDA_SUCCESS);
  EXPECT_CU(cuCtxGetCurrent(&current), CUDA_SUCCESS);
  EXPECT(current == primary);  // destroying the pushed context pops it
  EXPECT_CU(cuDevicePrimaryCtxRelease(dev), CUDA_SUCCESS);
  if (failures)
    return 1;
  std::printf("PASS\n");
  return 0;
}
