#include <cstdio>
#include <cuda.h>
// What cuFuncGetAttribute says of a kernel's resources, and a launch above
// its `.maxntid` refused (numba's launch_bounds, its const and local
// arrays): MAX_THREADS_PER_BLOCK from .maxntid, LOCAL_SIZE_BYTES at least
// its .local depot, CONST_SIZE_BYTES at least the .const table it reads.
const char *ptx = R"(
.version 8.0
.target sm_80
.address_size 64
.const .align 4 .b8 table[4000];
.visible .entry bounded(.param .u64 out, .param .u32 i)
.maxntid 128, 1, 1
{
  .local .align 8 .b8 depot[400];
  .reg .b32 %r<6>; .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [i];
  mov.u32 %r2, %tid.x;
  mov.u64 %rd2, depot;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.local.u32 [%rd4], %r2;
  ld.local.u32 %r3, [%rd2+396];
  mov.u64 %rd5, table;
  add.s64 %rd6, %rd5, %rd3;
  ld.const.u32 %r4, [%rd6];
  add.u32 %r5, %r3, %r4;
  cvta.to.global.u64 %rd7, %rd1;
  st.global.u32 [%rd7], %r5;
  ret;
}
)";
#define C(x)                                                                                   \
  do {                                                                                         \
    CUresult r = (x);                                                                          \
    if (r) {                                                                                   \
      printf("%s: %d\n", #x, r);                                                               \
      return 1;                                                                                \
    }                                                                                          \
  } while (0)

int main() {
  CUdevice dev;
  CUcontext ctx;
  CUmodule module;
  CUfunction f;
  CUdeviceptr out;
  C(cuInit(0));
  C(cuDeviceGet(&dev, 0));
  C(cuCtxCreate(&ctx, nullptr, 0, dev));
  C(cuModuleLoadData(&module, ptx));
  C(cuModuleGetFunction(&f, module, "bounded"));
  int threads = 0, local = 0, constant = 0;
  C(cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f));
  C(cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f));
  C(cuFuncGetAttribute(&constant, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, f));
  printf("max threads %d, local %d, const %d\n", threads, local, constant);
  if (threads != 128 || local < 400 || constant < 4000) {
    printf("FAIL\n");
    return 1;
  }
  C(cuMemAlloc(&out, 4));
  unsigned index = 99;
  void *args[] = {&out, &index};
  CUresult above = cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr);
  if (above != CUDA_ERROR_INVALID_VALUE) {
    printf("FAIL: 256 threads over .maxntid 128 gave %d\n", above);
    return 1;
  }
  for (int i = 0; i < 2; ++i) // the second launch takes the fast path where there is one
    C(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr));
  C(cuCtxSynchronize());
  above = cuLaunchKernel(f, 1, 1, 1, 129, 1, 1, 0, nullptr, args, nullptr);
  if (above != CUDA_ERROR_INVALID_VALUE) {
    printf("FAIL: 129 threads after fast launches gave %d\n", above);
    return 1;
  }
  printf("PASS\n");
  return 0;
}
