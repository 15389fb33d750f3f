"""AMDGPU: `.ftz` add, sub, mul, fma and div are the function's f32 denormal
mode, not software flushing.

A kernel whose f32 instructions are all `.ftz` runs with the FP32 denormal
mode flushing inputs and outputs (the kernel descriptor's
`.amdhsa_float_denorm_mode_32` 0), and its arithmetic carries no subnormal
tests; what the mode is not known to flush here (comparisons, max) keeps
them. A kernel that mixes `.ftz` and plain f32 arithmetic keeps IEEE
subnormals (mode 3) and flushes in software. Compiled only: no AMD GPU here.
"""

from __future__ import annotations

import re

import zmlir

HEADER = ".version 8.0\n.target sm_90\n.address_size 64\n"

# out = ((a * b + c) * a - b) / c, all .ftz.
ARITHMETIC = HEADER + """
.visible .entry arithmetic(.param .u64 out, .param .f32 a, .param .f32 b, .param .f32 c)
{
  .reg .f32 %f<8>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.f32 %f1, [a];
  ld.param.f32 %f2, [b];
  ld.param.f32 %f3, [c];
  fma.rn.ftz.f32 %f4, %f1, %f2, %f3;
  mul.rn.ftz.f32 %f5, %f4, %f1;
  sub.rn.ftz.f32 %f6, %f5, %f2;
  div.rn.ftz.f32 %f7, %f6, %f3;
  st.global.f32 [%rd1], %f7;
  ret;
}
"""

EXPONENT_MASK = "0x7f800000"


def amdgpu(ptx: str) -> str:
    return zmlir.compile_module(ptx, "amdgpu:gfx90a", emit="asm").stages["asm"].decode()


def denorm_mode_32(asm: str) -> int:
    modes = re.findall(r"\.amdhsa_float_denorm_mode_32\s+(\d+)", asm)
    assert len(modes) == 1, asm
    return int(modes[0])


def test_all_ftz_arithmetic_runs_in_the_flush_mode() -> None:
    asm = amdgpu(ARITHMETIC)
    assert denorm_mode_32(asm) == 0
    assert EXPONENT_MASK not in asm


def test_a_mixed_kernel_keeps_ieee_subnormals_and_flushes_in_software() -> None:
    asm = amdgpu(ARITHMETIC.replace("mul.rn.ftz.f32", "mul.rn.f32"))
    assert denorm_mode_32(asm) == 3
    assert EXPONENT_MASK in asm
