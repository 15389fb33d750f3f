#include <cuda.h>
#include <cstdio>
// cuStreamAttachMemAsync (cudaStreamAttachMemAsync, pycuda's
// ManagedAllocation.attach): whole managed allocations, to one stream or all.
const char* ptx = R"(
.version 9.0
.target sm_80
.address_size 64
.visible .entry inc(.param .u64 p)
{
  .reg .b32 %r<3>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r2, [%rd3];
  add.s32 %r2, %r2, 1;
  st.global.u32 [%rd3], %r2;
  ret;
}
)";
#define C(x) do { CUresult r = (x); if (r) { const char* s; cuGetErrorName(r, &s); printf("%s: %s\n", #x, s); return 1; } } while (0)
#define EXPECT(x, code) do { CUresult r = (x); if (r != (code)) { printf("%s: %d, not %d\n", #x, r, (code)); return 1; } } while (0)
int main() {
  C(cuInit(0)); CUdevice dev; C(cuDeviceGet(&dev, 0));
  CUcontext ctx; C(cuDevicePrimaryCtxRetain(&ctx, dev)); C(cuCtxSetCurrent(ctx));
  CUmodule mod; C(cuModuleLoadData(&mod, ptx));
  CUfunction f; C(cuModuleGetFunction(&f, mod, "inc"));
  CUstream s; C(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  const unsigned n = 64;
  CUdeviceptr d; C(cuMemAllocManaged(&d, n * 4, CU_MEM_ATTACH_GLOBAL));
  C(cuStreamAttachMemAsync(s, d, 0, CU_MEM_ATTACH_HOST));
  C(cuStreamSynchronize(s));
  unsigned* h = (unsigned*)d;
  for (unsigned i = 0; i < n; ++i) h[i] = i;
  C(cuStreamAttachMemAsync(s, d, n * 4, CU_MEM_ATTACH_SINGLE));
  void* args[] = {&d};
  C(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, s, args, nullptr));
  C(cuStreamSynchronize(s));
  for (unsigned i = 0; i < n; ++i) if (h[i] != i + 1) { printf("FAIL %u: %u\n", i, h[i]); return 1; }
  C(cuStreamAttachMemAsync(s, d, 0, CU_MEM_ATTACH_GLOBAL));
  EXPECT(cuStreamAttachMemAsync(s, d, 8, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
  EXPECT(cuStreamAttachMemAsync(s, d + 4, 0, CU_MEM_ATTACH_GLOBAL), CUDA_ERROR_INVALID_VALUE);
  EXPECT(cuStreamAttachMemAsync(s, d, 0, 3), CUDA_ERROR_INVALID_VALUE);
  EXPECT(cuStreamAttachMemAsync(nullptr, d, 0, CU_MEM_ATTACH_SINGLE), CUDA_ERROR_INVALID_VALUE);
  C(cuStreamDestroy(s));
  C(cuMemFree(d));
  printf("PASS\n");
}
