#include <cuda.h>
#include <cstdio>
#include <cstring>
// Driver API directly: module from PTX text, launch with packed 'extra' params.
const char* ptx = R"(
.version 9.0
.target sm_80
.address_size 64
.visible .entry add_scalar(.param .u64 p, .param .u32 v, .param .u32 n)
{
  .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [v]; ld.param.u32 %r2, [n];
  mov.u32 %r3, %tid.x;
  setp.ge.u32 %p1, %r3, %r2;
  @%p1 bra DONE;
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r4, [%rd3];
  add.s32 %r5, %r4, %r1;
  st.global.u32 [%rd3], %r5;
DONE:
  ret;
}
)";
#define C(x) do { CUresult r = (x); if (r) { const char* s; cuGetErrorName(r, &s); printf("%s: %s\n", #x, s); return 1; } } while (0)
int main() {
  C(cuInit(0)); CUdevice dev; C(cuDeviceGet(&dev, 0));
  CUcontext ctx; C(cuDevicePrimaryCtxRetain(&ctx, dev)); C(cuCtxSetCurrent(ctx));
  CUmodule mod; C(cuModuleLoadData(&mod, ptx));
  CUfunction f; C(cuModuleGetFunction(&f, mod, "add_scalar"));
  const unsigned n = 100; CUdeviceptr d; C(cuMemAlloc(&d, n * 4));
  unsigned h[n]; for (unsigned i = 0; i < n; ++i) h[i] = i;
  C(cuMemcpyHtoD(d, h, sizeof h));
  struct { CUdeviceptr p; unsigned v; unsigned n; } args = {d, 7, n};
  size_t size = sizeof args;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &args, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
  C(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, 0, nullptr, extra));
  C(cuCtxSynchronize());
  C(cuMemcpyDtoH(h, d, sizeof h));
  for (unsigned i = 0; i < n; ++i) if (h[i] != i + 7) { printf("FAIL %u: %u\n", i, h[i]); return 1; }
  printf("PASS\n");
}
