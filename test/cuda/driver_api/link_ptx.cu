#include <cuda.h>
#include <cstdio>
#include <cstring>
// The JIT linker: PTX in, an image cuModuleLoadData takes out, its logs and
// wall time written back; what it cannot link is an error, not a silent
// success.
const char* ptx = R"(
.version 9.0
.target sm_80
.address_size 64
.visible .entry twice(.param .u64 p, .param .u32 n)
{
  .reg .pred %p<2>; .reg .b32 %r<5>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p]; ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra DONE;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r3, [%rd3];
  shl.b32 %r4, %r3, 1;
  st.global.u32 [%rd3], %r4;
DONE:
  ret;
}
)";
#define C(x) do { CUresult r = (x); if (r) { const char* s; cuGetErrorName(r, &s); printf("%s: %s\n", #x, s); return 1; } } while (0)
int main() {
  C(cuInit(0)); CUdevice dev; C(cuDeviceGet(&dev, 0));
  CUcontext ctx; C(cuDevicePrimaryCtxRetain(&ctx, dev)); C(cuCtxSetCurrent(ctx));
  char info[256], error[256];
  memset(info, '?', sizeof info); memset(error, '?', sizeof error);
  float wall = -1.0f;
  CUjit_option opts[] = {CU_JIT_WALL_TIME, CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {nullptr, info, (void*)sizeof info, error, (void*)sizeof error};
  CUlinkState link; C(cuLinkCreate(5, opts, vals, &link));
  C(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void*)ptx, strlen(ptx) + 1, "twice.ptx", 0, nullptr, nullptr));
  void* image; size_t size = 0;
  C(cuLinkComplete(link, &image, &size));
  memcpy(&wall, &vals[0], sizeof wall);
  if (size == 0 || info[0] != '\0' || error[0] != '\0' || !(wall >= 0.0f)) {
    printf("link outputs: size %zu, info %d, error %d, wall %f\n", size, info[0], error[0], wall);
    return 1;
  }
  CUmodule mod; C(cuModuleLoadData(&mod, image));
  C(cuLinkDestroy(link));
  CUfunction f; C(cuModuleGetFunction(&f, mod, "twice"));
  unsigned h[64]; for (unsigned i = 0; i < 64; ++i) h[i] = i;
  CUdeviceptr d; C(cuMemAlloc(&d, sizeof h)); C(cuMemcpyHtoD(d, h, sizeof h));
  unsigned n = 64; void* args[] = {&d, &n};
  C(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
  C(cuMemcpyDtoH(h, d, sizeof h));
  for (unsigned i = 0; i < 64; ++i) if (h[i] != 2 * i) { printf("h[%u] = %u\n", i, h[i]); return 1; }
  // NVIDIA machine code does not link here, and says so.
  CUlinkState other; C(cuLinkCreate(0, nullptr, nullptr, &other));
  char elf[64] = "\x7f" "ELF";
  if (cuLinkAddData(other, CU_JIT_INPUT_CUBIN, elf, sizeof elf, "k.cubin", 0, nullptr, nullptr)
      != CUDA_ERROR_NOT_SUPPORTED) { printf("cubin input accepted\n"); return 1; }
  if (cuLinkComplete(other, &image, &size) != CUDA_ERROR_INVALID_VALUE) {
    printf("empty link completed\n"); return 1;
  }
  C(cuLinkDestroy(other));
  printf("PASS\n");
  return 0;
}
