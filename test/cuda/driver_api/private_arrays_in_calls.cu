#include <cuda.h>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
// A kernel's .local array filled by device functions that stay calls, each
// writing through generic pointers into it (as a grid group's rank and size
// come from the device runtime), with a conditional return between the
// calls: on a module variable, or the check the compiler puts after every
// call in a module that has a trap. Every thread must see every write.

// store_size(size, blocks, unused): the block's size and the grid's blocks;
// store_rank(rank, in_block, unused): the thread's rank in the grid and in
// its block. A null pointer is skipped.
const char* functions = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .func (.param .b32 r) store_size(.param .b64 a, .param .b64 b, .param .b64 c)
{
  .reg .pred %p<3>; .reg .b32 %r<10>; .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b];
  setp.eq.u64 %p1, %rd1, 0;
  @%p1 bra BLOCKS;
  mov.u32 %r1, %ntid.x; mov.u32 %r2, %ntid.y; mov.u32 %r3, %ntid.z;
  mul.lo.s32 %r4, %r1, %r2; mul.lo.s32 %r4, %r4, %r3;
  st.u32 [%rd1], %r4;
BLOCKS:
  setp.eq.u64 %p2, %rd2, 0;
  @%p2 bra DONE;
  mov.u32 %r5, %nctaid.x; mov.u32 %r6, %nctaid.y; mov.u32 %r7, %nctaid.z;
  mul.lo.s32 %r8, %r5, %r6; mul.lo.s32 %r8, %r8, %r7;
  st.u32 [%rd2], %r8;
DONE:
  st.param.b32 [r], 0;
  ret;
}
.visible .func (.param .b32 r) store_rank(.param .b64 a, .param .b64 b, .param .b64 c)
{
  .reg .pred %p<3>; .reg .b32 %r<24>; .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [a]; ld.param.u64 %rd2, [b];
  setp.eq.u64 %p1, %rd1, 0;
  @%p1 bra IN_BLOCK;
  mov.u32 %r1, %ntid.x; mov.u32 %r2, %ntid.y; mov.u32 %r3, %ntid.z;
  mov.u32 %r4, %tid.x; mov.u32 %r5, %tid.y; mov.u32 %r6, %tid.z;
  mad.lo.s32 %r7, %r6, %r2, %r5; mad.lo.s32 %r8, %r7, %r1, %r4;
  mov.u32 %r9, %nctaid.x; mov.u32 %r10, %nctaid.y;
  mov.u32 %r11, %ctaid.x; mov.u32 %r12, %ctaid.y; mov.u32 %r13, %ctaid.z;
  mad.lo.s32 %r14, %r13, %r10, %r12; mad.lo.s32 %r15, %r14, %r9, %r11;
  mul.lo.s32 %r16, %r1, %r2; mul.lo.s32 %r16, %r16, %r3;
  mad.lo.s32 %r17, %r15, %r16, %r8;
  st.u32 [%rd1], %r17;
IN_BLOCK:
  setp.eq.u64 %p2, %rd2, 0;
  @%p2 bra DONE;
  mov.u32 %r18, %ntid.x; mov.u32 %r19, %ntid.y;
  mov.u32 %r20, %tid.x; mov.u32 %r21, %tid.y; mov.u32 %r22, %tid.z;
  mad.lo.s32 %r23, %r22, %r19, %r21; mad.lo.s32 %r23, %r23, %r18, %r20;
  st.u32 [%rd2], %r23;
DONE:
  st.param.b32 [r], 0;
  ret;
}
)";

// describe(out): words[4] = {rank, in_block, size, blocks} from the two
// calls, then out[4 * rank + i] = words[i]. RETURN is what may return
// between the calls.
const char* kernel = R"(
.visible .entry describe(.param .u64 out)
{
  .local .align 4 .b8 words[16];
  .reg .pred %p<2>; .reg .b32 %r<8>; .reg .b64 %rd<12>;
  ld.param.u64 %rd1, [out];
  mov.u64 %rd2, words; cvta.local.u64 %rd2, %rd2;
  add.s64 %rd3, %rd2, 4; add.s64 %rd4, %rd2, 8; add.s64 %rd5, %rd2, 12;
  mov.u64 %rd6, 0;
  { .param .b64 a; .param .b64 b; .param .b64 c; .param .b32 e;
    st.param.b64 [a], %rd4; st.param.b64 [b], %rd5; st.param.b64 [c], %rd6;
    call.uni (e), store_size, (a, b, c); ld.param.b32 %r1, [e]; }
  RETURN
  { .param .b64 a; .param .b64 b; .param .b64 c; .param .b32 e;
    st.param.b64 [a], %rd2; st.param.b64 [b], %rd3; st.param.b64 [c], %rd6;
    call.uni (e), store_rank, (a, b, c); ld.param.b32 %r1, [e]; }
  ld.u32 %r2, [%rd2]; ld.u32 %r3, [%rd3]; ld.u32 %r4, [%rd4]; ld.u32 %r5, [%rd5];
  mul.wide.u32 %rd7, %r2, 16; add.s64 %rd8, %rd1, %rd7;
  st.global.v4.u32 [%rd8], {%r2, %r3, %r4, %r5};
  ret;
}
)";

#define C(x) do { CUresult r = (x); if (r) { const char* s; cuGetErrorName(r, &s); printf("%s: %s\n", #x, s); return 1; } } while (0)

static int run(const char* name, const std::string& ptx) {
  CUmodule mod; C(cuModuleLoadData(&mod, ptx.c_str()));
  CUfunction f; C(cuModuleGetFunction(&f, mod, "describe"));
  const unsigned blocks = 4, threads = 64, n = blocks * threads;
  CUdeviceptr out; C(cuMemAlloc(&out, n * 16));
  C(cuMemsetD32(out, 0xffffffff, n * 4));
  void* args[] = {&out};
  C(cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, 0, nullptr, args, nullptr));
  std::vector<unsigned> got(n * 4);
  C(cuMemcpyDtoH(got.data(), out, n * 16));
  for (unsigned rank = 0; rank < n; ++rank) {
    const unsigned* w = &got[4 * rank];
    if (w[0] != rank || w[1] != rank % threads || w[2] != threads || w[3] != blocks) {
      printf("%s: out[%u] = %u %u %u %u, expected %u %u %u %u\n", name, rank, w[0], w[1], w[2],
             w[3], rank, rank % threads, threads, blocks);
      return 1;
    }
  }
  C(cuMemFree(out));
  C(cuModuleUnload(mod));
  return 0;
}

static std::string with_return(const char* check, const char* extra) {
  std::string k = kernel;
  k.replace(k.find("RETURN"), 6, check);
  return std::string(functions) + extra + k;
}

int main() {
  C(cuInit(0)); CUdevice dev; C(cuDeviceGet(&dev, 0));
  CUcontext ctx; C(cuDevicePrimaryCtxRetain(&ctx, dev)); C(cuCtxSetCurrent(ctx));
  // A return on a module variable (zero: never taken).
  if (run("early return", with_return("ld.global.u32 %r6, [flag]; setp.ne.u32 %p1, %r6, 0; @%p1 ret;",
                                      ".global .align 4 .u32 flag;\n")))
    return 1;
  // A trap anywhere in the module (here in a function nothing calls).
  if (run("trap in the module", with_return("", ".func boom() { trap; ret; }\n")))
    return 1;
  printf("PASS\n");
  return 0;
}
