// Argument validation of the driver API: bad arguments return NVIDIA's
// error code (next to each check; all confirmed on an H200, 2026-12-02, but
// the two where NVIDIA's driver crashes), never crash the process. Built with
// nvcc, linked with -lcuda; the kernels are PTX loaded with cuModuleLoadData.
#include <cstdio>
#include <cstring>
#include <cuda.h>

#include "expect_cu.h"

// Every CUresult of CUDA 13's cuda.h: cuGetErrorName and cuGetErrorString know each.
#define CU_RESULTS(X) \
    X(CUDA_SUCCESS) X(CUDA_ERROR_INVALID_VALUE) X(CUDA_ERROR_OUT_OF_MEMORY) \
    X(CUDA_ERROR_NOT_INITIALIZED) X(CUDA_ERROR_DEINITIALIZED) X(CUDA_ERROR_PROFILER_DISABLED) \
    X(CUDA_ERROR_PROFILER_NOT_INITIALIZED) X(CUDA_ERROR_PROFILER_ALREADY_STARTED) \
    X(CUDA_ERROR_PROFILER_ALREADY_STOPPED) X(CUDA_ERROR_STUB_LIBRARY) \
    X(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER) X(CUDA_ERROR_DEVICE_UNAVAILABLE) \
    X(CUDA_ERROR_NO_DEVICE) X(CUDA_ERROR_INVALID_DEVICE) X(CUDA_ERROR_DEVICE_NOT_LICENSED) \
    X(CUDA_ERROR_INVALID_IMAGE) X(CUDA_ERROR_INVALID_CONTEXT) \
    X(CUDA_ERROR_CONTEXT_ALREADY_CURRENT) X(CUDA_ERROR_MAP_FAILED) X(CUDA_ERROR_UNMAP_FAILED) \
    X(CUDA_ERROR_ARRAY_IS_MAPPED) X(CUDA_ERROR_ALREADY_MAPPED) X(CUDA_ERROR_NO_BINARY_FOR_GPU) \
    X(CUDA_ERROR_ALREADY_ACQUIRED) X(CUDA_ERROR_NOT_MAPPED) X(CUDA_ERROR_NOT_MAPPED_AS_ARRAY) \
    X(CUDA_ERROR_NOT_MAPPED_AS_POINTER) X(CUDA_ERROR_ECC_UNCORRECTABLE) \
    X(CUDA_ERROR_UNSUPPORTED_LIMIT) X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE) \
    X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED) X(CUDA_ERROR_INVALID_PTX) \
    X(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT) X(CUDA_ERROR_NVLINK_UNCORRECTABLE) \
    X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND) X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION) \
    X(CUDA_ERROR_JIT_COMPILATION_DISABLED) X(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY) \
    X(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC) X(CUDA_ERROR_CONTAINED) X(CUDA_ERROR_INVALID_SOURCE) \
    X(CUDA_ERROR_FILE_NOT_FOUND) X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND) \
    X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED) X(CUDA_ERROR_OPERATING_SYSTEM) \
    X(CUDA_ERROR_INVALID_HANDLE) X(CUDA_ERROR_ILLEGAL_STATE) X(CUDA_ERROR_LOSSY_QUERY) \
    X(CUDA_ERROR_NOT_FOUND) X(CUDA_ERROR_NOT_READY) X(CUDA_ERROR_ILLEGAL_ADDRESS) \
    X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) X(CUDA_ERROR_LAUNCH_TIMEOUT) \
    X(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING) X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) \
    X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED) X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE) \
    X(CUDA_ERROR_CONTEXT_IS_DESTROYED) X(CUDA_ERROR_ASSERT) X(CUDA_ERROR_TOO_MANY_PEERS) \
    X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED) X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED) \
    X(CUDA_ERROR_HARDWARE_STACK_ERROR) X(CUDA_ERROR_ILLEGAL_INSTRUCTION) \
    X(CUDA_ERROR_MISALIGNED_ADDRESS) X(CUDA_ERROR_INVALID_ADDRESS_SPACE) \
    X(CUDA_ERROR_INVALID_PC) X(CUDA_ERROR_LAUNCH_FAILED) \
    X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) X(CUDA_ERROR_TENSOR_MEMORY_LEAK) \
    X(CUDA_ERROR_NOT_PERMITTED) X(CUDA_ERROR_NOT_SUPPORTED) X(CUDA_ERROR_SYSTEM_NOT_READY) \
    X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE) \
    X(CUDA_ERROR_MPS_CONNECTION_FAILED) X(CUDA_ERROR_MPS_RPC_FAILURE) \
    X(CUDA_ERROR_MPS_SERVER_NOT_READY) X(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED) \
    X(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED) X(CUDA_ERROR_MPS_CLIENT_TERMINATED) \
    X(CUDA_ERROR_CDP_NOT_SUPPORTED) X(CUDA_ERROR_CDP_VERSION_MISMATCH) \
    X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) \
    X(CUDA_ERROR_STREAM_CAPTURE_MERGE) X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED) \
    X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED) X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION) \
    X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT) X(CUDA_ERROR_CAPTURED_EVENT) \
    X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD) X(CUDA_ERROR_TIMEOUT) \
    X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) X(CUDA_ERROR_EXTERNAL_DEVICE) \
    X(CUDA_ERROR_INVALID_CLUSTER_SIZE) X(CUDA_ERROR_FUNCTION_NOT_LOADED) \
    X(CUDA_ERROR_INVALID_RESOURCE_TYPE) X(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION) \
    X(CUDA_ERROR_KEY_ROTATION) X(CUDA_ERROR_UNKNOWN)

static const char kPtx[] = R"(
.version 7.0
.target sm_75
.address_size 64
.visible .entry store(.param .u64 out) {
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  st.global.u32 [%rd1], 42;
  ret;
}
.extern .shared .align 4 .b8 dynamic[];
.visible .entry dyn(.param .u64 out) {
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, 7;
  st.shared.u32 [dynamic], %r1;
  ld.shared.u32 %r1, [dynamic];
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

static const char kFutureTargetPtx[] = ".version 7.0\n.target sm_9999\n.address_size 64\n"
                                       ".visible .entry empty() { ret; }\n";

int main() {
  CUdevice dev;
  CUcontext ctx;
  EXPECT_CU(cuInit(0), CUDA_SUCCESS);
  EXPECT_CU(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
  EXPECT_CU(cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
  EXPECT_CU(cuCtxSetCurrent(ctx), CUDA_SUCCESS);

  // Error names and strings.
  const char *text = nullptr;
#define CHECK_NAME(code)                                                                       \
  EXPECT_CU(cuGetErrorName(code, &text), CUDA_SUCCESS);                                        \
  EXPECT(text != nullptr && std::strcmp(text, #code) == 0);                                    \
  EXPECT_CU(cuGetErrorString(code, &text), CUDA_SUCCESS);
  CU_RESULTS(CHECK_NAME)
  EXPECT_CU(cuGetErrorName((CUresult)12345, &text), CUDA_ERROR_INVALID_VALUE);
  struct { CUresult code; const char *text; } strings[] = {
      {CUDA_ERROR_INVALID_VALUE, "invalid argument"},
      {CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"},
      {CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
       "the provided PTX was compiled with an unsupported toolchain."},
      {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing"},
  };
  for (auto &s : strings) {
    EXPECT_CU(cuGetErrorString(s.code, &text), CUDA_SUCCESS);
    EXPECT(text != nullptr && std::strcmp(text, s.text) == 0);
  }

  // NVIDIA's driver crashes on these two (SIGSEGV on an H200); ours answers.
  EXPECT_CU(cuGetErrorName(CUDA_SUCCESS, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuGetErrorString(CUDA_SUCCESS, nullptr), CUDA_ERROR_INVALID_VALUE);

  // NULL where an output is required.
  EXPECT_CU(cuDriverGetVersion(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuDeviceGetCount(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuDeviceGetUuid(nullptr, dev), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuDeviceGetPCIBusId(nullptr, 16, dev), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuMemAlloc(nullptr, 64), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuStreamCreate(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuEventCreate(nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuCtxGetCurrent(nullptr), CUDA_ERROR_INVALID_VALUE);

  // Devices.
  EXPECT_CU(cuDeviceGetName(nullptr, 256, dev), CUDA_ERROR_INVALID_VALUE);
  int value = 0;
  EXPECT_CU(cuDeviceGetAttribute(&value, (CUdevice_attribute)0, dev), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_MAX, dev), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuDeviceGetAttribute(&value, (CUdevice_attribute)100000, dev),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuDeviceGetAttribute(&value, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev), CUDA_SUCCESS);

  // Streams.
  CUstream stream;
  EXPECT_CU(cuStreamCreate(&stream, 0x10), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuStreamCreateWithPriority(&stream, 0x10, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  EXPECT_CU(cuStreamDestroy(stream), CUDA_SUCCESS);

  // Modules and functions.
  CUmodule module;
  CUfunction store, dyn;
  EXPECT_CU(cuModuleLoadData(&module, kFutureTargetPtx), CUDA_ERROR_INVALID_PTX);
  EXPECT_CU(cuModuleLoadData(&module, kPtx), CUDA_SUCCESS);
  EXPECT_CU(cuModuleGetFunction(&store, module, nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuModuleGetFunction(&store, module, "store"), CUDA_SUCCESS);
  EXPECT_CU(cuModuleGetFunction(&dyn, module, "dyn"), CUDA_SUCCESS);

  CUdeviceptr out;
  EXPECT_CU(cuMemAlloc(&out, 4), CUDA_SUCCESS);
  EXPECT_CU(cuPointerGetAttribute(nullptr, CU_POINTER_ATTRIBUTE_DEVICE_POINTER, out),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuFuncGetAttribute(nullptr, CU_FUNC_ATTRIBUTE_NUM_REGS, store),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuMemcpyHtoD(out, nullptr, 4), CUDA_ERROR_INVALID_VALUE);
  // 0 bytes copy nothing, to or from anywhere (numba-cuda copies a 0-sized
  // array to its null device pointer, asynchronously too).
  EXPECT_CU(cuMemcpyHtoD(0, &out, 0), CUDA_SUCCESS);
  EXPECT_CU(cuMemcpyHtoDAsync(0, &out, 0, nullptr), CUDA_SUCCESS);
  EXPECT_CU(cuMemcpyDtoH(&out, 0, 0), CUDA_SUCCESS);
  EXPECT_CU(cuLaunchKernel(store, 1, 1, 1, 1, 1, 1, 0, 0, nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE);  // a kernel with parameters, none given
  EXPECT_CU(cuLaunchKernelEx(nullptr, store, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);
  void *params[] = {&out};
  void *null_params[] = {nullptr};
  EXPECT_CU(cuLaunchKernel(store, 1, 1, 1, 1, 1, 1, 0, 0, null_params, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuLaunchKernel(store, 1, 65536, 1, 1, 1, 1, 0, 0, params, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuLaunchKernel(store, 1, 1, 65536, 1, 1, 1, 0, 0, params, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuLaunchKernel(store, 1, 1, 1, 1, 1, 1, 0, 0, params, nullptr), CUDA_SUCCESS);
  unsigned result = 0;
  EXPECT_CU(cuMemcpyDtoH(&result, out, 4), CUDA_SUCCESS);
  EXPECT(result == 42);

  // Dynamic shared memory: 48 KiB without the opt-in; up to the device's
  // opt-in maximum with it.
  int optin = 0;
  EXPECT_CU(cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                 dev),
            CUDA_SUCCESS);
  EXPECT_CU(cuLaunchKernel(dyn, 1, 1, 1, 1, 1, 1, 48 * 1024 + 4, 0, params, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuLaunchKernel(dyn, 1, 1, 1, 1, 1, 1, optin + 4, 0, params, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin + 4),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuFuncSetAttribute(dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin),
            CUDA_SUCCESS);
  EXPECT_CU(cuLaunchKernel(dyn, 1, 1, 1, 1, 1, 1, optin, 0, params, nullptr), CUDA_SUCCESS);
  EXPECT_CU(cuLaunchKernel(dyn, 1, 1, 1, 1, 1, 1, optin + 4, 0, params, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_CU(cuMemcpyDtoH(&result, out, 4), CUDA_SUCCESS);
  EXPECT(result == 7);

  // A function of an unloaded module.
  EXPECT_CU(cuModuleUnload(module), CUDA_SUCCESS);
  EXPECT_CU(cuLaunchKernel(store, 1, 1, 1, 1, 1, 1, 0, 0, params, nullptr),
            CUDA_ERROR_INVALID_HANDLE);

  // Contexts.
  CUcontext created;
  EXPECT_CU(cuCtxCreate(&created, nullptr, 0, dev), CUDA_SUCCESS);
  EXPECT_CU(cuCtxDestroy(created), CUDA_SUCCESS);
  EXPECT_CU(cuCtxDestroy(created), CUDA_ERROR_INVALID_CONTEXT);
  EXPECT_CU(cuCtxSetCurrent(ctx), CUDA_SUCCESS);

  EXPECT_CU(cuMemFree(out), CUDA_SUCCESS);
  if (failures)
    return 1;
  std::printf("PASS\n");
  return 0;
}
