"""NVPTX: `.ftz` is the function's f32 denormal mode, not software flushing.

nvcc's fast-math kernels (llm.c's gelu_forward: bf16 in, mul.ftz / fma.rn.ftz
/ tanh.approx, bf16 out) were emitted with every f32 operand and result
flushed by an exponent mask and a select, doubling their SASS. A kernel
whose f32 instructions are all .ftz must come out with NVIDIA's .ftz
instructions and no exponent tests; one that mixes .ftz and plain f32
arithmetic keeps the plain instruction IEEE and flushes the other in
software."""

from __future__ import annotations

import re

import zmlir

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"

GELU = HEADER + """
.visible .entry gelu(.param .u64 out, .param .u64 inp)
{
  .reg .b16 %rs<3>; .reg .f32 %f<10>; .reg .b64 %rd<5>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [inp];
  ld.global.u16 %rs1, [%rd2];
  { cvt.f32.bf16 %f1, %rs1;}
  mul.ftz.f32 %f3, %f1, 0f3D372713;
  mul.ftz.f32 %f4, %f1, %f3;
  mul.ftz.f32 %f5, %f1, 0f3F000000;
  fma.rn.ftz.f32 %f6, %f1, %f4, %f1;
  mul.ftz.f32 %f7, %f6, 0f3F4C4229;
  tanh.approx.f32 %f8, %f7;
  add.ftz.f32 %f9, %f8, 0f3F800000;
  max.ftz.f32 %f9, %f9, %f5;
  setp.lt.ftz.f32 %p1, %f9, %f5;
  @%p1 mul.ftz.f32 %f9, %f9, %f9;
  { cvt.rn.bf16.f32 %rs2, %f9;}
  st.global.u16 [%rd1], %rs2;
  ret;
}
"""

MIXED = HEADER + """
.visible .entry mixed(.param .u64 out, .param .f32 a, .param .f32 b)
{
  .reg .f32 %f<5>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.f32 %f1, [a];
  ld.param.f32 %f2, [b];
  add.ftz.f32 %f3, %f1, %f2;
  mul.rn.f32 %f4, %f3, %f2;
  st.global.f32 [%rd1], %f4;
  ret;
}
"""

EXPONENT_MASK = "2139095040"  # 0x7f800000: a subnormal test


def nvptx(ptx: str) -> str:
    return zmlir.compile_module(ptx, "nvptx:sm_90").binary.decode()


def test_all_ftz_kernel_uses_ftz_instructions() -> None:
    out = nvptx(GELU)
    assert EXPONENT_MASK not in out
    for inst in ("mul", "fma.rn", "add", "max", "setp.lt"):
        assert re.search(rf"\b{re.escape(inst)}(\.rn)?\.ftz\.f32\b", out), (inst, out)
    assert "tanh.approx.f32" in out


def test_mixed_kernel_flushes_in_software() -> None:
    out = nvptx(MIXED)
    assert EXPONENT_MASK in out
    assert re.search(r"\bmul\.rn\.f32\b", out), out
    assert ".ftz." not in out
