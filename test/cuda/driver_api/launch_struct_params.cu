#include <cuda.h>
#include <cstdio>
#include <cstring>
// Driver API: a kernel taking a struct by value (`.param .align 8 .b8
// s[16]`) between scalars, launched with kernelParams and with a packed
// `extra` buffer laid out as cuFuncGetParamInfo says (the struct at its
// declared alignment).
const char* ptx = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry scale(.param .u32 n, .param .align 8 .b8 s[16], .param .u64 out)
{
  .reg .pred %p<2>; .reg .b32 %r<4>; .reg .f64 %fd<4>; .reg .b64 %rd<5>;
  ld.param.u32 %r1, [n]; ld.param.u32 %r2, [s]; ld.param.f64 %fd1, [s+8];
  ld.param.u64 %rd1, [out];
  mov.u32 %r3, %tid.x;
  setp.ge.u32 %p1, %r3, %r1;
  @%p1 bra DONE;
  mul.lo.s32 %r2, %r2, %r3;
  cvt.rn.f64.s32 %fd2, %r2;
  add.f64 %fd3, %fd2, %fd1;
  mul.wide.u32 %rd2, %r3, 8;
  add.s64 %rd3, %rd1, %rd2;
  st.global.f64 [%rd3], %fd3;
DONE:
  ret;
}
)";
#define C(x) do { CUresult r = (x); if (r) { const char* s; cuGetErrorName(r, &s); printf("%s: %s\n", #x, s); return 1; } } while (0)
struct S { int a; double b; };
static int check(CUdeviceptr d, unsigned n, S s) {
  double h[64];
  C(cuMemcpyDtoH(h, d, n * sizeof(double)));
  for (unsigned i = 0; i < n; ++i)
    if (h[i] != s.a * static_cast<int>(i) + s.b) { printf("FAIL %u: %g\n", i, h[i]); return 1; }
  return 0;
}
int main() {
  C(cuInit(0)); CUdevice dev; C(cuDeviceGet(&dev, 0));
  CUcontext ctx; C(cuDevicePrimaryCtxRetain(&ctx, dev)); C(cuCtxSetCurrent(ctx));
  CUmodule mod; C(cuModuleLoadData(&mod, ptx));
  CUfunction f; C(cuModuleGetFunction(&f, mod, "scale"));
  size_t offset[3], size[3];
  for (int i = 0; i < 3; ++i) C(cuFuncGetParamInfo(f, i, &offset[i], &size[i]));
  if (offset[0] != 0 || size[0] != 4 || offset[1] != 8 || size[1] != 16 || offset[2] != 24 ||
      size[2] != 8) {
    printf("FAIL param info: (%zu, %zu) (%zu, %zu) (%zu, %zu)\n", offset[0], size[0], offset[1],
           size[1], offset[2], size[2]);
    return 1;
  }
  const unsigned n = 50; CUdeviceptr d; C(cuMemAlloc(&d, n * sizeof(double)));
  S s = {-3, 0.5};
  void* params[] = {const_cast<unsigned*>(&n), &s, &d};
  C(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, 0, params, nullptr));
  C(cuCtxSynchronize());
  if (check(d, n, s)) return 1;
  unsigned char packed[32] = {};
  S t = {7, -1.25};
  memcpy(packed + offset[0], &n, sizeof n);
  memcpy(packed + offset[1], &t, sizeof t);
  memcpy(packed + offset[2], &d, sizeof d);
  size_t bytes = sizeof packed;
  void* extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &bytes,
                   CU_LAUNCH_PARAM_END};
  C(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, 0, nullptr, extra));
  C(cuCtxSynchronize());
  if (check(d, n, t)) return 1;
  printf("PASS\n");
}
