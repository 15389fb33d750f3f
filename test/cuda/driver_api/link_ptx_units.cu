#include <cuda.h>
#include <cstdio>
#include <cstring>
// The JIT linker with several PTX units, as numba and -rdc programs use it:
// an .extern function and variable resolved in another unit, a .weak
// function in both (one is kept), and a function without linkage of the
// same name in each unit, which stay apart. Two .visible definitions of one
// name do not link.
const char* kernel_ptx = R"(
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 r) scale(.param .b32 x);
.extern .global .align 4 .b32 bias;
.weak .func (.param .b32 r) square(.param .b32 x)
{
  .reg .b32 %v<3>;
  ld.param.b32 %v1, [x]; mul.lo.s32 %v2, %v1, %v1; st.param.b32 [r], %v2; ret;
}
.func (.param .b32 r) helper(.param .b32 x)
{
  .reg .b32 %v<3>;
  ld.param.b32 %v1, [x]; add.s32 %v2, %v1, 1; st.param.b32 [r], %v2; ret;
}
.visible .entry combine(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out]; mov.u32 %r1, %tid.x;
  { .param .b32 a; .param .b32 b; st.param.b32 [a], %r1; call.uni (b), square, (a); ld.param.b32 %r2, [b]; }
  { .param .b32 a; .param .b32 b; st.param.b32 [a], %r2; call.uni (b), scale, (a); ld.param.b32 %r3, [b]; }
  { .param .b32 a; .param .b32 b; st.param.b32 [a], %r1; call.uni (b), helper, (a); ld.param.b32 %r4, [b]; }
  ld.global.u32 %r5, [bias];
  add.s32 %r6, %r3, %r4; add.s32 %r7, %r6, %r5;
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2; st.global.u32 [%rd3], %r7;
  ret;
}
)";
const char* library_ptx = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .global .align 4 .b32 bias = 100;
.weak .func (.param .b32 r) square(.param .b32 x)
{
  .reg .b32 %v<3>;
  ld.param.b32 %v1, [x]; mul.lo.s32 %v2, %v1, %v1; st.param.b32 [r], %v2; ret;
}
.func (.param .b32 r) helper(.param .b32 x)
{
  .reg .b32 %v<3>;
  ld.param.b32 %v1, [x]; shl.b32 %v2, %v1, 1; st.param.b32 [r], %v2; ret;
}
.visible .func (.param .b32 r) scale(.param .b32 x)
{
  .reg .b32 %v<5>;
  ld.param.b32 %v1, [x];
  { .param .b32 a; .param .b32 b; st.param.b32 [a], %v1; call.uni (b), helper, (a); ld.param.b32 %v2, [b]; }
  add.s32 %v3, %v2, %v1; st.param.b32 [r], %v3; ret;
}
)";
#define C(x) do { CUresult r = (x); if (r) { const char* s; cuGetErrorName(r, &s); printf("%s: %s\n", #x, s); return 1; } } while (0)
int main() {
  C(cuInit(0)); CUdevice dev; C(cuDeviceGet(&dev, 0));
  CUcontext ctx; C(cuDevicePrimaryCtxRetain(&ctx, dev)); C(cuCtxSetCurrent(ctx));
  CUlinkState link; C(cuLinkCreate(0, nullptr, nullptr, &link));
  C(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void*)kernel_ptx, strlen(kernel_ptx) + 1, "kernel.ptx", 0, nullptr, nullptr));
  C(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void*)library_ptx, strlen(library_ptx) + 1, "library.ptx", 0, nullptr, nullptr));
  void* image; size_t size = 0;
  C(cuLinkComplete(link, &image, &size));
  CUmodule mod; C(cuModuleLoadData(&mod, image));
  C(cuLinkDestroy(link));
  CUfunction f; C(cuModuleGetFunction(&f, mod, "combine"));
  CUdeviceptr d; C(cuMemAlloc(&d, 64 * sizeof(int)));
  void* args[] = {&d};
  C(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
  int h[64]; C(cuMemcpyDtoH(h, d, sizeof h));
  for (int i = 0; i < 64; ++i) {
    // scale(i*i) = 3*i*i (its helper doubles), helper(i) = i + 1, bias 100.
    int want = 3 * i * i + i + 1 + 100;
    if (h[i] != want) { printf("out[%d] = %d, expected %d\n", i, h[i], want); return 1; }
  }
  // scale defined .visible twice: the second unit is refused as it is
  // added, and a call of a function no unit defines fails the link, both
  // with CUDA_ERROR_INVALID_SOURCE (NVIDIA's answers on an H200).
  CUlinkState twice; C(cuLinkCreate(0, nullptr, nullptr, &twice));
  C(cuLinkAddData(twice, CU_JIT_INPUT_PTX, (void*)library_ptx, strlen(library_ptx) + 1, "a.ptx", 0, nullptr, nullptr));
  CUresult r = cuLinkAddData(twice, CU_JIT_INPUT_PTX, (void*)library_ptx, strlen(library_ptx) + 1, "b.ptx", 0, nullptr, nullptr);
  if (r != CUDA_ERROR_INVALID_SOURCE) { printf("duplicate definition: %d\n", (int)r); return 1; }
  C(cuLinkDestroy(twice));
  char error[512] = "";
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {error, (void*)sizeof error};
  CUlinkState undefined; C(cuLinkCreate(2, opts, vals, &undefined));
  C(cuLinkAddData(undefined, CU_JIT_INPUT_PTX, (void*)kernel_ptx, strlen(kernel_ptx) + 1, "kernel.ptx", 0, nullptr, nullptr));
  r = cuLinkComplete(undefined, &image, &size);
  if (r != CUDA_ERROR_INVALID_SOURCE || !strstr(error, "Undefined reference to 'scale' in 'kernel.ptx'")) {
    printf("undefined reference: %d, log '%s'\n", (int)r, error);
    return 1;
  }
  C(cuLinkDestroy(undefined));
  printf("PASS\n");
  return 0;
}
