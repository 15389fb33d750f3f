// The kernel the anisotropic probes (tools/aniso*_probe.cu) sample with:
// one tex.grad.2d lookup per thread, its point and gradients read from
// `params` (8 floats a thread), the lookup's first channel written to `out`.
#ifndef ZMLIR_TOOLS_PROBE_BY_GRADIENT_H
#define ZMLIR_TOOLS_PROBE_BY_GRADIENT_H

static const char *kPtx = R"PTX(
.version 7.0
.target sm_75
.address_size 64
// params per thread: u, v, dudx, dvdx, dudy, dvdy (normalized), padding
.visible .entry by_gradient(.param .u64 tex, .param .u64 out, .param .u64 params)
{
  .reg .b32 %r<3>; .reg .f32 %f<12>; .reg .b64 %rd<8>;
  ld.param.u64 %rd7, [tex]; ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [params];
  mov.u32 %r1, %ctaid.x; mov.u32 %r0, %ntid.x; mov.u32 %r2, %tid.x;
  mad.lo.u32 %r1, %r1, %r0, %r2;  // ptxas takes no special register in mad
  mul.wide.u32 %rd3, %r1, 32; add.s64 %rd4, %rd2, %rd3;
  ld.global.v4.f32 {%f1, %f2, %f7, %f8}, [%rd4];
  ld.global.v4.f32 {%f9, %f10, %f11, %f11}, [%rd4+16];
  tex.grad.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [%rd7, {%f1, %f2}], {%f7, %f8}, {%f9, %f10};
  mul.wide.u32 %rd5, %r1, 4; add.s64 %rd6, %rd1, %rd5;
  st.global.f32 [%rd6], %f3;
  ret;
}
)PTX";

#endif
