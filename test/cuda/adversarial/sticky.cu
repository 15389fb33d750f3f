// Sticky errors: after a kernel traps (`./sticky trap`: 719) or fails an
// assert (`./sticky assert`: 710), every later call on the context returns
// that error, in the runtime and in the driver API, on every thread; a
// launch from another thread does not run. NVIDIA's answers are next to
// each check. Built with nvcc, linked with -lcuda.
#include <atomic>
#include <cassert>
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <thread>

#include "check.h"

__global__ void write_flag(volatile int *flag, int value) { *flag = value; }
__global__ void trap_kernel() { asm volatile("trap;"); }
__global__ void assert_kernel(int x) { assert(x == 0); }

static const char kPtx[] = ".version 7.0\n.target sm_75\n.address_size 64\n"
                           ".visible .entry empty() { ret; }\n";

#define EXPECT_CU(call, want)                                                                \
  do {                                                                                       \
    CUresult r_ = (call);                                                                    \
    EXPECT(r_ == (want), "%s returned %d, NVIDIA returns %d", #call, (int)r_, (int)(want)); \
  } while (0)
#define EXPECT_RT(call, want)                                                                \
  do {                                                                                       \
    cudaError_t r_ = (call);                                                                 \
    EXPECT(r_ == (want), "%s returned %d, NVIDIA returns %d", #call, (int)r_, (int)(want)); \
  } while (0)

int main(int argc, char **argv) {
  bool assert_mode = argc > 1 && std::strcmp(argv[1], "assert") == 0;
  const int sticky = assert_mode ? 710 : 719;  // CUDA_ERROR_ASSERT, CUDA_ERROR_LAUNCH_FAILED
  int *flag = nullptr, *dflag = nullptr;
  CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
  CHECK(cudaHostGetDevicePointer(&dflag, flag, 0));
  *flag = 0;

  // Another thread, its context current and its kernel launched once
  // before the failure, launches again after it.
  std::atomic<int> stage{0};
  int other_launch = -1, other_flag = -1;
  std::thread other([&] {
    write_flag<<<1, 1>>>(dflag, 1);
    cudaDeviceSynchronize();
    stage = 1;
    while (stage != 2)
      std::this_thread::yield();
    write_flag<<<1, 1>>>(dflag, 2);
    other_launch = cudaGetLastError();
    other_flag = *flag;
  });
  while (stage != 1)
    std::this_thread::yield();
  EXPECT(*flag == 1, "the other thread's first launch did not run");

  if (assert_mode)
    assert_kernel<<<1, 1>>>(1);
  else
    trap_kernel<<<1, 1>>>();
  EXPECT_RT(cudaDeviceSynchronize(), sticky);
  stage = 2;
  other.join();
  EXPECT(other_launch == sticky, "another thread's launch returned %d, NVIDIA returns %d",
         other_launch, sticky);
  EXPECT(other_flag == 1, "another thread's launch ran after the sticky error");

  // The driver API on the same (primary) context.
  CUdeviceptr p;
  CUstream s;
  CUevent e;
  CUmodule m;
  EXPECT_CU(cuMemAlloc(&p, 256), sticky);
  EXPECT_CU(cuStreamCreate(&s, 0), sticky);
  EXPECT_CU(cuEventCreate(&e, 0), sticky);
  EXPECT_CU(cuModuleLoadData(&m, kPtx), sticky);
  EXPECT_CU(cuStreamQuery(0), sticky);
  EXPECT_CU(cuCtxSynchronize(), sticky);
  int buffer[4];
  EXPECT_CU(cuMemcpyHtoD((CUdeviceptr)dflag, buffer, sizeof(int)), sticky);
  // The runtime, again.
  void *q;
  EXPECT_RT(cudaMalloc(&q, 256), sticky);
  write_flag<<<1, 1>>>(dflag, 3);
  EXPECT_RT(cudaGetLastError(), sticky);
  EXPECT(*flag == 1, "a launch ran after the sticky error");
  // Still answered: no context work, or the current context itself.
  CUcontext ctx = nullptr;
  EXPECT_CU(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
  EXPECT(ctx != nullptr, "no current context");
  int value = 0;
  EXPECT_CU(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 0), CUDA_SUCCESS);
  const char *name = nullptr;
  EXPECT_CU(cuGetErrorName((CUresult)sticky, &name), CUDA_SUCCESS);
  std::printf("PASS\n");
  return 0;
}
