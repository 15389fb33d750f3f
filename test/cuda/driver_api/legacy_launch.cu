#include <cuda.h>
#include <cstdio>
#include <cstring>
#include <unistd.h>
// The legacy (pre-CUDA 4) calls pycuda still makes: cuFuncSetBlockShape,
// cuFuncSetSharedSize, cuParamSet*, cuLaunch/cuLaunchGrid(Async);
// cuCtxAttach/cuCtxDetach usage counts; cuModuleLoad from a file.
const char* ptx = R"(
.version 9.0
.target sm_80
.address_size 64
.visible .entry axpb(.param .u64 p, .param .f32 a, .param .u32 b, .param .u32 n)
{
  .reg .pred %p<2>; .reg .b32 %r<12>; .reg .f32 %f<5>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p]; ld.param.f32 %f1, [a]; ld.param.u32 %r1, [b]; ld.param.u32 %r2, [n];
  mov.u32 %r3, %ctaid.y; mov.u32 %r4, %nctaid.x; mov.u32 %r5, %ctaid.x;
  mad.lo.u32 %r6, %r3, %r4, %r5;
  mov.u32 %r7, %ntid.x; mov.u32 %r8, %tid.x;
  mad.lo.u32 %r9, %r6, %r7, %r8;
  setp.ge.u32 %p1, %r9, %r2;
  @%p1 bra DONE;
  mul.wide.u32 %rd2, %r9, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.f32 %f2, [%rd3];
  cvt.rn.f32.u32 %f3, %r1;
  fma.rn.f32 %f4, %f1, %f2, %f3;
  st.global.f32 [%rd3], %f4;
DONE:
  ret;
}
)";
#define C(x) do { CUresult r = (x); if (r) { const char* s; cuGetErrorName(r, &s); printf("%s: %s\n", #x, s); return 1; } } while (0)
#define EXPECT(x, code) do { CUresult r = (x); if (r != (code)) { printf("%s: %d, not %d\n", #x, r, (code)); return 1; } } while (0)
const unsigned n = 200;

static int check(const float* h, int times, unsigned upto) {
  for (unsigned i = 0; i < n; ++i) {
    float want = float(i);
    for (int t = 0; t < times && i < upto; ++t) want = 0.5f * want + 3.0f;
    if (h[i] != want) { printf("FAIL %u: %g, not %g\n", i, h[i], want); return 1; }
  }
  return 0;
}

int main() {
  C(cuInit(0)); CUdevice dev; C(cuDeviceGet(&dev, 0));
  CUcontext ctx; C(cuCtxCreate(&ctx, nullptr, 0, dev));
  char path[] = "/tmp/zmlir_legacy_launch_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0 || write(fd, ptx, strlen(ptx)) != (ssize_t)strlen(ptx)) { printf("mkstemp\n"); return 1; }
  close(fd);
  CUmodule mod; C(cuModuleLoad(&mod, path));
  unlink(path);
  EXPECT(cuModuleLoad(&mod, path), CUDA_ERROR_FILE_NOT_FOUND);
  CUfunction f; C(cuModuleGetFunction(&f, mod, "axpb"));
  CUdeviceptr d; C(cuMemAlloc(&d, n * 4));
  float h[n]; for (unsigned i = 0; i < n; ++i) h[i] = float(i);
  C(cuMemcpyHtoD(d, h, sizeof h));

  // Parameters as CUDA 2's programs set them: offsets by hand, size last.
  C(cuFuncSetBlockShape(f, 64, 1, 1));
  C(cuFuncSetSharedSize(f, 256));
  C(cuParamSetv(f, 0, &d, sizeof d));
  C(cuParamSetf(f, 8, 0.5f));
  C(cuParamSeti(f, 12, 3));
  C(cuParamSeti(f, 16, n));
  C(cuParamSetSize(f, 20));
  EXPECT(cuFuncSetBlockShape(f, 0, 1, 1), CUDA_ERROR_INVALID_VALUE);
  C(cuLaunchGrid(f, 2, 2));  // 4 blocks of 64 (the grid's height is blockIdx.y)
  C(cuCtxSynchronize());
  C(cuMemcpyDtoH(h, d, sizeof h));
  if (check(h, 1, n)) return 1;
  CUstream s; C(cuStreamCreate(&s, 0));
  C(cuLaunchGridAsync(f, 4, 1, s));  // the same parameters, again
  C(cuStreamSynchronize(s));
  C(cuMemcpyDtoH(h, d, sizeof h));
  if (check(h, 2, n)) return 1;
  C(cuLaunch(f));  // one block: the first 64 elements
  C(cuCtxSynchronize());
  C(cuMemcpyDtoH(h, d, sizeof h));
  for (unsigned i = 0; i < n; ++i) {
    float want = float(i);
    for (int t = 0; t < (i < 64 ? 3 : 2); ++t) want = 0.5f * want + 3.0f;
    if (h[i] != want) { printf("FAIL cuLaunch %u: %g, not %g\n", i, h[i], want); return 1; }
  }
  C(cuStreamDestroy(s));
  C(cuMemFree(d));
  C(cuModuleUnload(mod));

  // cuCtxAttach counts one more use of the current context; each cuCtxDetach
  // one less, and the last destroys it.
  CUcontext attached = nullptr;
  EXPECT(cuCtxAttach(&attached, 1), CUDA_ERROR_INVALID_VALUE);
  C(cuCtxAttach(&attached, 0));
  if (attached != ctx) { printf("FAIL attach: another context\n"); return 1; }
  C(cuCtxDetach(ctx));
  CUcontext current = nullptr; C(cuCtxGetCurrent(&current));
  unsigned version = 0;
  if (current != ctx || cuCtxGetApiVersion(ctx, &version)) { printf("FAIL detach: gone\n"); return 1; }
  C(cuCtxDetach(ctx));
  C(cuCtxGetCurrent(&current));
  if (current != nullptr) { printf("FAIL detach: still current\n"); return 1; }
  if (cuCtxGetApiVersion(ctx, &version) == CUDA_SUCCESS) { printf("FAIL detach: not destroyed\n"); return 1; }
  EXPECT(cuCtxAttach(&attached, 0), CUDA_ERROR_INVALID_CONTEXT);
  printf("PASS\n");
}
