#include <cuda.h>
#include <cstdio>
#include <cstring>
// Device-side launches through a cuLink* link with libcudadevrt.a (as
// pycuda's DynamicModule links), in PTX as nvcc writes it for
// `child<<<grid, block>>>(...)`: the child's address, then
// __cudaCDP2GetParameterBufferV2 and __cudaCDP2LaunchDeviceV2. Every thread
// of `spray` launches one grid of `mark`, which sets its word. Within the
// device runtime's 2048 pending launches all of them run; past them a
// launch gets no buffer, and zmlir fails the context loudly rather than
// leave words unset (NVIDIA's driver tells only the launching thread).

const char* ptx = R"(
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b64 r) __cudaCDP2GetParameterBufferV2(.param .b64 f, .param .align 4 .b8 g[12], .param .align 4 .b8 b[12], .param .b32 s);
.extern .func (.param .b32 r) __cudaCDP2LaunchDeviceV2(.param .b64 buf, .param .b64 stream);
.visible .entry mark(.param .u64 words, .param .u32 index)
{
  .reg .b32 %r<3>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [words]; ld.param.u32 %r1, [index];
  mul.wide.u32 %rd2, %r1, 4; add.s64 %rd3, %rd1, %rd2;
  add.u32 %r2, %r1, 1000; st.global.u32 [%rd3], %r2;
  ret;
}
.visible .entry spray(.param .u64 words)
{
  .reg .pred %p<2>; .reg .b32 %r<6>; .reg .b64 %rd<4>;
  mov.u64 %rd1, mark;
  { .param .b64 f; .param .align 4 .b8 g[12]; .param .align 4 .b8 b[12]; .param .b32 s; .param .b64 r;
    st.param.b64 [f], %rd1; st.param.b32 [g], 1; st.param.b32 [g+4], 1; st.param.b32 [g+8], 1;
    st.param.b32 [b], 1; st.param.b32 [b+4], 1; st.param.b32 [b+8], 1; st.param.b32 [s], 0;
    call.uni (r), __cudaCDP2GetParameterBufferV2, (f, g, b, s); ld.param.b64 %rd2, [r]; }
  setp.eq.u64 %p1, %rd2, 0;
  @%p1 bra $done;
  ld.param.u64 %rd3, [words]; st.u64 [%rd2], %rd3;
  mov.u32 %r1, %tid.x; mov.u32 %r2, %ctaid.x; mov.u32 %r3, %ntid.x; mad.lo.s32 %r4, %r2, %r3, %r1;
  st.u32 [%rd2+8], %r4;
  { .param .b64 buf; .param .b64 stream; .param .b32 r;
    st.param.b64 [buf], %rd2; st.param.b64 [stream], 0;
    call.uni (r), __cudaCDP2LaunchDeviceV2, (buf, stream); ld.param.b32 %r5, [r]; }
$done:
  ret;
}
)";

#define C(x) do { CUresult r = (x); if (r) { const char* s; cuGetErrorName(r, &s); printf("%s: %s\n", #x, s); return 1; } } while (0)

int main() {
  C(cuInit(0)); CUdevice dev; C(cuDeviceGet(&dev, 0));
  CUcontext ctx; C(cuDevicePrimaryCtxRetain(&ctx, dev)); C(cuCtxSetCurrent(ctx));
  CUlinkState link; C(cuLinkCreate(0, nullptr, nullptr, &link));
  C(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void*)ptx, strlen(ptx) + 1, "spray.ptx", 0, nullptr, nullptr));
  C(cuLinkAddData(link, CU_JIT_INPUT_LIBRARY, (void*)"not code", 8, "/usr/local/cuda/lib64/libcudadevrt.a", 0, nullptr, nullptr));
  void* image; size_t size = 0;
  C(cuLinkComplete(link, &image, &size));
  CUmodule mod; C(cuModuleLoadData(&mod, image));
  C(cuLinkDestroy(link));
  CUfunction spray; C(cuModuleGetFunction(&spray, mod, "spray"));

  const unsigned n = 2048;  // 8 blocks of 256 threads: every launch fits
  static unsigned words[2 * n];
  CUdeviceptr d; C(cuMemAlloc(&d, sizeof words));
  C(cuMemsetD32(d, 0, 2 * n));
  void* args[] = {&d};
  C(cuLaunchKernel(spray, 8, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  C(cuCtxSynchronize());
  C(cuMemcpyDtoH(words, d, sizeof words));
  for (unsigned i = 0; i < 2 * n; ++i)
    if (words[i] != (i < n ? i + 1000 : 0)) { printf("word %u = %u\n", i, words[i]); return 1; }

  // One block more: 256 launches past the device runtime's pending limit.
  C(cuLaunchKernel(spray, 9, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  CUresult r = cuCtxSynchronize();
  if (r != CUDA_ERROR_LAUNCH_FAILED) { printf("past the limit: %d, not 719\n", (int)r); return 1; }
  printf("PASS\n");
  return 0;
}
