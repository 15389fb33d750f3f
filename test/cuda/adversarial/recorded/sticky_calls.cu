// What each driver entry point answers after a kernel failed with a sticky
// error: `sticky_calls trap` (CUDA_ERROR_LAUNCH_FAILED, 719) or
// `sticky_calls illegal` (a wild store: CUDA_ERROR_ILLEGAL_ADDRESS, 700).
// One line "call = code" per call, in order. NVIDIA's answers, from an H200,
// are sticky_calls.<mode>.h200.txt beside this file;
// test_adversarial.py compares ours with them. Handles used after the trap
// were made before it. Built with nvcc, linked with -lcuda.
#include <cstdio>
#include <cstring>
#include <cuda.h>

static const char kPtx[] = ".version 7.0\n.target sm_75\n.address_size 64\n"
                           ".visible .entry trap_kernel() { trap; }\n"
                           ".visible .entry empty() { ret; }\n"
                           ".visible .entry illegal() {\n"
                           "  .reg .u64 %rd<2>;\n"
                           "  mov.u64 %rd1, 0x7ffffff00000;\n"
                           "  st.global.u32 [%rd1], 1;\n"
                           "  ret;\n"
                           "}\n"
                           ".visible .global .u32 counter;\n";

#define ANSWER(call) std::printf("%s = %d\n", #call, (int)(call))

int main(int argc, char **argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0); // every answer, should a later call abort
  const char *kernel = argc > 1 && std::strcmp(argv[1], "illegal") == 0 ? "illegal" : "trap_kernel";
  CUdevice dev;
  CUcontext ctx, other, popped;
  CUmodule module, module2, module3;
  CUfunction trap, empty;
  CUdeviceptr p1, p2, global;
  size_t global_size, free_bytes, total;
  void *host1, *host2;
  CUstream s1, s2, s3;
  CUevent e1, e2, e3;
  int value = 0;
  unsigned flags = 0;
  float ms = 0;
  char name[128];
  const char *text = nullptr;
  CUdevice ctx_dev;
  CUuuid uuid;
  size_t limit = 0;
  if (cuInit(0) || cuDeviceGet(&dev, 0) || cuCtxCreate(&other, nullptr, 0, dev) ||
      cuCtxCreate(&ctx, nullptr, 0, dev) || cuModuleLoadData(&module, kPtx) ||
      cuModuleLoadData(&module2, kPtx) || cuModuleGetFunction(&trap, module, kernel) ||
      cuModuleGetFunction(&empty, module, "empty") || cuMemAlloc(&p1, 256) ||
      cuMemAlloc(&p2, 256) || cuMemAllocHost(&host1, 256) || cuMemAllocHost(&host2, 256) ||
      cuStreamCreate(&s1, 0) || cuStreamCreate(&s2, 0) || cuStreamCreate(&s3, 0) ||
      cuEventCreate(&e1, 0) || cuEventCreate(&e2, 0) || cuEventRecord(e1, nullptr) ||
      cuCtxSynchronize()) {
    std::printf("setup failed\n");
    return 1;
  }
  void *no_args[] = {nullptr};
  ANSWER(cuLaunchKernel(trap, 1, 1, 1, 1, 1, 1, 0, nullptr, no_args, nullptr));
  ANSWER(cuCtxSynchronize());
  // No context work.
  ANSWER(cuInit(0));
  ANSWER(cuDriverGetVersion(&value));
  ANSWER(cuGetErrorName(CUDA_ERROR_LAUNCH_FAILED, &text));
  ANSWER(cuGetErrorString(CUDA_ERROR_LAUNCH_FAILED, &text));
  ANSWER(cuDeviceGet(&ctx_dev, 0));
  ANSWER(cuDeviceGetCount(&value));
  ANSWER(cuDeviceGetName(name, sizeof name, dev));
  ANSWER(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
  ANSWER(cuDeviceTotalMem(&total, dev));
  ANSWER(cuDeviceGetUuid(&uuid, dev));
  ANSWER(cuDevicePrimaryCtxGetState(dev, &flags, &value));
  ANSWER(cuModuleGetLoadingMode((CUmoduleLoadingMode *)&value));
  // The context and its stack.
  ANSWER(cuCtxGetCurrent(&popped));
  ANSWER(cuCtxGetDevice(&ctx_dev));
  ANSWER(cuCtxGetApiVersion(ctx, &flags));
  ANSWER(cuCtxGetFlags(&flags));
  ANSWER(cuCtxGetLimit(&limit, CU_LIMIT_STACK_SIZE));
  ANSWER(cuCtxSetLimit(CU_LIMIT_STACK_SIZE, limit));
  ANSWER(cuCtxGetCacheConfig((CUfunc_cache *)&value));
  ANSWER(cuCtxGetStreamPriorityRange(&value, &value));
  ANSWER(cuCtxPopCurrent(&popped));
  ANSWER(cuCtxPushCurrent(ctx));
  ANSWER(cuCtxSetCurrent(ctx));
  // Memory.
  ANSWER(cuMemGetInfo(&free_bytes, &total));
  ANSWER(cuMemAlloc(&global, 256));
  ANSWER(cuMemFree(p2));
  ANSWER(cuMemAllocHost(&host2, 256));
  ANSWER(cuMemFreeHost(host2));
  ANSWER(cuMemcpyHtoD(p1, host1, 16));
  ANSWER(cuMemcpyDtoH(host1, p1, 16));
  ANSWER(cuMemcpyHtoDAsync(p1, host1, 16, s1));
  ANSWER(cuMemsetD8(p1, 0, 16));
  ANSWER(cuMemGetAddressRange(&global, &global_size, p1));
  ANSWER(cuPointerGetAttribute(&value, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p1));
  // Streams and events.
  ANSWER(cuStreamCreate(&s2, 0));
  std::printf("s2 after the failed create is NULL: %d\n", s2 == nullptr);
  ANSWER(cuStreamQuery(s1));
  ANSWER(cuStreamSynchronize(s1));
  ANSWER(cuStreamGetFlags(s1, &flags));
  ANSWER(cuStreamDestroy(s3));
  ANSWER(cuEventCreate(&e3, 0));
  ANSWER(cuEventRecord(e1, s1));
  ANSWER(cuEventQuery(e1));
  ANSWER(cuEventSynchronize(e1));
  ANSWER(cuEventElapsedTime(&ms, e1, e1));
  ANSWER(cuEventDestroy(e2));
  // Modules and functions.
  ANSWER(cuModuleLoadData(&module3, kPtx));
  ANSWER(cuModuleGetFunction(&empty, module, "empty"));
  ANSWER(cuModuleGetGlobal(&global, &global_size, module, "counter"));
  ANSWER(cuFuncGetAttribute(&value, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, empty));
  ANSWER(cuFuncSetCacheConfig(empty, CU_FUNC_CACHE_PREFER_NONE));
  ANSWER(cuOccupancyMaxActiveBlocksPerMultiprocessor(&value, empty, 32, 0));
  ANSWER(cuLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, nullptr, no_args, nullptr));
  ANSWER(cuModuleUnload(module2));
  // Another context, made before the failure, and a new one.
  ANSWER(cuCtxSetCurrent(other));
  ANSWER(cuMemAlloc(&global, 256));
  ANSWER(cuCtxSynchronize());
  ANSWER(cuCtxCreate(&popped, nullptr, 0, dev));
  std::printf("the failed create's context is NULL: %d\n", popped == nullptr);
  ANSWER(cuMemAlloc(&global, 256));
  ANSWER(cuCtxDestroy(popped));
  // Destroying the failed context, then a fresh one.
  ANSWER(cuCtxDestroy(ctx));
  ANSWER(cuCtxCreate(&ctx, nullptr, 0, dev));
  ANSWER(cuMemAlloc(&global, 256));
  ANSWER(cuModuleLoadData(&module3, kPtx));
  ANSWER(cuCtxSynchronize());
  // The primary context, reset.
  ANSWER(cuDevicePrimaryCtxRetain(&ctx, dev));
  ANSWER(cuDevicePrimaryCtxReset(dev));
  ANSWER(cuDevicePrimaryCtxRetain(&ctx, dev));
  ANSWER(cuCtxSetCurrent(ctx));
  ANSWER(cuMemAlloc(&global, 256));
  ANSWER(cuDevicePrimaryCtxRelease(dev));
  return 0;
}
