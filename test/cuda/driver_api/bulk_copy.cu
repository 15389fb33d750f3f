#include <cuda.h>
#include <cstdio>
// cp.async.bulk (sm_90) into shared memory with its mbarrier's complete_tx,
// each form and size kind: an immediate 16 bytes with expect_tx after it
// (nvcc's cuda::memcpy_async order), 240 bytes in a register, and a size
// from a parameter after mbarrier.arrive.expect_tx (CUTLASS's order); a
// shared::cta to shared::cluster copy whose mbarrier phase must wait for
// all of the bytes it expects (test_wait false after 16 of 32); and
// shared to global bulk_group copies with their commit and waits; the
// fences that go with them (mbarrier_init, proxy.async). Every
// thread of the block waits at the same waits. Checked against the input.
const char* ptx = R"(
.version 8.6
.target sm_90
.address_size 64
.visible .entry bulk(.param .u64 in, .param .u64 out, .param .u32 n)
{
  .shared .align 16 .b8 buf[1024];
  .shared .align 16 .b8 copy[32];
  .shared .align 8 .b64 bar;
  .shared .align 8 .b64 bar2;
  .reg .b32 %r<12>; .reg .b64 %rd<12>; .reg .pred %p<8>;
  ld.param.u64 %rd1, [in]; ld.param.u64 %rd2, [out]; ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x; mov.u32 %r3, %ntid.x;
  setp.eq.u32 %p1, %r2, 0;
  @%p1 mbarrier.init.shared::cta.b64 [bar], %r3;
  @%p1 mbarrier.init.shared::cta.b64 [bar2], 1;
  @%p1 fence.mbarrier_init.release.cluster;
  bar.sync 0;
  setp.eq.u32 %p2, %r2, 1;
  setp.eq.u32 %p3, %r2, 2;
  @%p3 bra THIRD;
  @%p2 bra SECOND;
  @!%p1 bra ARRIVE;
  mov.u32 %r4, 16;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [buf], [%rd1], 16, [bar];
  mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], %r4;
  bra.uni ARRIVE;
SECOND:
  mov.u32 %r5, 240;
  mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [bar], %r5;
  cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [buf+16], [%rd1+16], %r5, [bar];
ARRIVE:
  mbarrier.arrive.shared::cta.b64 %rd3, [bar];
  bra.uni WAIT0;
THIRD:
  mbarrier.arrive.expect_tx.shared::cta.b64 %rd3, [bar], %r1;
  add.u64 %rd4, %rd1, 256;
  mov.u32 %r6, buf;
  add.u32 %r6, %r6, 256;
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r6], [%rd4], %r1, [bar];
WAIT0:
  mbarrier.try_wait.parity.shared::cta.b64 %p4, [bar], 0;
  @!%p4 bra WAIT0;
  // out[0, 1024): the buffer, 16 bytes a thread.
  mul.lo.u32 %r7, %r2, 16;
  mov.u32 %r8, buf;
  add.u32 %r8, %r8, %r7;
  ld.shared.v4.u32 {%r9, %r10, %r11, %r4}, [%r8];
  cvt.u64.u32 %rd5, %r7;
  add.u64 %rd6, %rd2, %rd5;
  st.global.v4.u32 [%rd6], {%r9, %r10, %r11, %r4};
  // 32 bytes expected on bar2, 16 of them copied: the phase is incomplete.
  @%p1 mbarrier.arrive.expect_tx.shared::cta.b64 %rd7, [bar2], 32;
  @%p1 cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [copy], [buf], 16, [bar2];
  mbarrier.test_wait.parity.shared::cta.b64 %p5, [bar2], 0;
  selp.u32 %r9, 1, 0, %p5;
  mul.lo.u32 %r10, %r2, 4;
  cvt.u64.u32 %rd5, %r10;
  add.u64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6+1024], %r9;
  bar.sync 0;  // every thread has looked before the rest is copied
  @%p1 cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [copy+16], [buf+16], 16, [bar2];
WAIT1:
  mbarrier.try_wait.parity.shared::cta.b64 %p6, [bar2], 0;
  @!%p6 bra WAIT1;
  // out[1280, 1312): the second copy.
  setp.lt.u32 %p7, %r2, 2;
  @!%p7 bra STORE;
  mov.u32 %r8, copy;
  add.u32 %r8, %r8, %r7;
  ld.shared.v4.u32 {%r9, %r10, %r11, %r4}, [%r8];
  cvt.u64.u32 %rd5, %r7;
  add.u64 %rd6, %rd2, %rd5;
  st.global.v4.u32 [%rd6+1280], {%r9, %r10, %r11, %r4};
  // out[2048, 3072): the buffer again, two bulk_group copies of 512 bytes.
  mul.lo.u32 %r7, %r2, 512;
  mov.u32 %r8, buf;
  add.u32 %r8, %r8, %r7;
  cvt.u64.u32 %rd5, %r7;
  add.u64 %rd6, %rd2, %rd5;
  add.u64 %rd6, %rd6, 2048;
  fence.proxy.async.shared::cta;
  cp.async.bulk.global.shared::cta.bulk_group [%rd6], [%r8], 512;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group.read 0;
  cp.async.bulk.wait_group 0;
STORE:
  ret;
}
)";
#define C(x) do { CUresult r = (x); if (r) { const char* s; cuGetErrorName(r, &s); printf("%s: %s\n", #x, s); return 1; } } while (0)
int main() {
  C(cuInit(0)); CUdevice dev; C(cuDeviceGet(&dev, 0));
  CUcontext ctx; C(cuDevicePrimaryCtxRetain(&ctx, dev)); C(cuCtxSetCurrent(ctx));
  CUmodule mod; C(cuModuleLoadData(&mod, ptx));
  CUfunction f; C(cuModuleGetFunction(&f, mod, "bulk"));
  unsigned char in[1024], out[3072];
  for (int i = 0; i < 1024; ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  CUdeviceptr d_in, d_out;
  C(cuMemAlloc(&d_in, sizeof in)); C(cuMemAlloc(&d_out, sizeof out));
  C(cuMemcpyHtoD(d_in, in, sizeof in)); C(cuMemsetD8(d_out, 0xee, sizeof out));
  unsigned n = 768;
  void* args[] = {&d_in, &d_out, &n};
  C(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr));
  C(cuCtxSynchronize());
  C(cuMemcpyDtoH(out, d_out, sizeof out));
  int bad = 0;
  for (int i = 0; i < 1024; ++i) {
    if (out[i] != in[i] || out[2048 + i] != in[i]) {
      if (bad++ < 4) printf("byte %d: %d, %d, expected %d\n", i, out[i], out[2048 + i], in[i]);
    }
  }
  for (int t = 0; t < 64; ++t) {
    if (out[1024 + 4 * t] != 0) {
      if (bad++ < 8) printf("thread %d saw the phase complete with 16 bytes pending\n", t);
    }
  }
  for (int i = 0; i < 32; ++i) {
    if (out[1280 + i] != in[i]) {
      if (bad++ < 12) printf("shared copy byte %d: %d, expected %d\n", i, out[1280 + i], in[i]);
    }
  }
  if (bad) { printf("FAIL: %d wrong\n", bad); return 1; }
  printf("PASS\n");
}
