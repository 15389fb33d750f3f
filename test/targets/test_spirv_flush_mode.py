"""SPIR-V: a fast-math program's `.ftz` is its build's f32 denormal mode.

nvcc's `--use_fast_math` PTX is `.ftz` throughout; flushing every operand
and result in software made llm.c's matmul_forward kernel 1 twice as slow
on Intel's OpenCL CPU runtime (6x in 8x8 blocks) as the same kernel without
fast math. Intel's runtime flushes a whole program's subnormals, f32 and
f64, when built with `-cl-denorms-are-zero`: a module whose f32 instructions
all allow it, and whose f64 ones do not depend on subnormals, gets the
program mode (F32FlushMode.cpp) and its SPIR-V a mark asking for the option
(targets/spirv/binary.py). Any other module keeps IEEE subnormals and
flushes `.ftz` values in software.
"""

from __future__ import annotations

import numpy as np
import pytest
from support import llvm_function

import zmlir
from zmlir.targets.spirv.binary import (
    FLUSH_SUBNORMALS_OPTION,
    build_options,
    flushes_subnormals,
    mark_flushing_subnormals,
)

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"

SUBNORMAL = np.float32(3e-39)
NORMAL = np.float32(1.5e-38)  # the smallest normal f32 is 1.18e-38

# out[i] from in = {SUBNORMAL, NORMAL, 0.5, 1.0, -SUBNORMAL}, each result one
# that keeping subnormals would change; out64 = (f64) SUBNORMAL.
FAST_MATH = """
.visible .entry fast_math(.param .u64 out, .param .u64 out64, .param .u64 in)
{
  .reg .f32 %f<20>; .reg .f64 %fd<2>; .reg .b64 %rd<4>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [out64];
  ld.param.u64 %rd3, [in];
  ld.global.f32 %f1, [%rd3];
  ld.global.f32 %f2, [%rd3+4];
  ld.global.f32 %f3, [%rd3+8];
  ld.global.f32 %f4, [%rd3+12];
  ld.global.f32 %f5, [%rd3+16];
  mul.rn.ftz.f32 %f6, %f2, %f3;
  st.global.f32 [%rd1], %f6;
  add.rn.ftz.f32 %f7, %f1, %f2;
  st.global.f32 [%rd1+4], %f7;
  fma.rn.ftz.f32 %f8, %f1, %f4, %f2;
  st.global.f32 [%rd1+8], %f8;
  setp.gt.ftz.f32 %p1, %f1, 0f00000000;
  selp.f32 %f9, 0f3F800000, 0f00000000, %p1;
  st.global.f32 [%rd1+12], %f9;
  neg.ftz.f32 %f10, %f1;
  st.global.f32 [%rd1+16], %f10;
  abs.ftz.f32 %f11, %f5;
  st.global.f32 [%rd1+20], %f11;
  div.rn.ftz.f32 %f12, %f2, 0f40800000;
  st.global.f32 [%rd1+24], %f12;
  sqrt.rn.ftz.f32 %f13, %f1;
  st.global.f32 [%rd1+28], %f13;
  max.ftz.f32 %f14, %f1, 0fBF800000;
  st.global.f32 [%rd1+32], %f14;
  cvt.ftz.f64.f32 %fd1, %f1;
  st.global.f64 [%rd2], %fd1;
  tanh.approx.f32 %f15, %f1;
  st.global.f32 [%rd1+36], %f15;
  copysign.f32 %f16, 0fBF800000, %f1;
  st.global.f32 [%rd1+40], %f16;
  ret;
}
"""
# What the H200 computes (PTX ISA: .ftz flushes subnormal inputs and results
# to zeros of their sign; tanh.approx.f32 and copysign, which have no .ftz,
# keep them: tanh(x) is x there, test/ptx's golden tanh_approx_f32).
FAST_MATH_RESULTS = [0.0, NORMAL, NORMAL, 0.0, -0.0, 0.0, 0.0, 0.0, 0.0, SUBNORMAL, -SUBNORMAL]

# An f64 add of subnormals beside the fast-math kernel: the program's mode
# would flush its result, so the module keeps IEEE subnormals.
F64_ADD = """
.visible .entry f64_add(.param .u64 out, .param .f64 a)
{
  .reg .f64 %fd<3>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.f64 %fd1, [a];
  add.rn.f64 %fd2, %fd1, %fd1;
  st.global.f64 [%rd1], %fd2;
  ret;
}
"""

# A plain f32 add beside the fast-math kernel: it keeps subnormals.
PLAIN_ADD = """
.visible .entry plain_add(.param .u64 out, .param .f32 a)
{
  .reg .f32 %f<3>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.f32 %f1, [a];
  add.rn.f32 %f2, %f1, %f1;
  st.global.f32 [%rd1], %f2;
  ret;
}
"""

EXPONENT_MASK = "2139095040"  # 0x7f800000: a software flush's subnormal test


def test_only_a_module_all_of_whose_arithmetic_allows_it_is_marked() -> None:
    fast = zmlir.compile_module(HEADER + FAST_MATH, "spirv", filename="fast.ptx")
    assert flushes_subnormals(fast.binary)
    for beside in (F64_ADD, PLAIN_ADD):
        mixed = zmlir.compile_module(HEADER + FAST_MATH + beside, "spirv", filename="mixed.ptx")
        assert not flushes_subnormals(mixed.binary)


def test_the_program_mode_flushes_neg_and_abs_alone_in_software() -> None:
    ir = zmlir.compile_module(HEADER + FAST_MATH, "spirv", filename="fast.ptx",
                              emit="llvm-ir").stages["llvm-ir"]
    kernel = llvm_function(ir, "fast_math")
    # Flushes of neg's operand and result, of abs's, and of max's operands
    # (it selects one's bits, Arith.cpp): six subnormal tests, where
    # flushing every .ftz operand and result made 19.
    tests = kernel.count(f", {EXPONENT_MASK}")
    assert tests == 6, kernel
    mixed = zmlir.compile_module(HEADER + FAST_MATH + PLAIN_ADD, "spirv", filename="mixed.ptx",
                                 emit="llvm-ir").stages["llvm-ir"]
    assert llvm_function(mixed, "fast_math").count(f", {EXPONENT_MASK}") > 4


def test_the_mark_is_the_build_option() -> None:
    plain = zmlir.compile_module(HEADER + PLAIN_ADD, "spirv", filename="plain.ptx").binary
    assert not flushes_subnormals(plain)
    assert build_options(plain, "-cl-mad-enable") == "-cl-mad-enable"
    marked = mark_flushing_subnormals(plain)
    assert flushes_subnormals(marked) and len(marked) > len(plain)
    assert build_options(marked) == FLUSH_SUBNORMALS_OPTION
    assert build_options(marked, FLUSH_SUBNORMALS_OPTION) == FLUSH_SUBNORMALS_OPTION
    with pytest.raises(ValueError):
        mark_flushing_subnormals(b"\0" * 20)


class _OneThread:
    """The module of `ptx` on the OpenCL device, its kernels launched as one
    thread each."""

    def __init__(self, device, ptx: str) -> None:
        from zmlir.runtime.backends.opencl.backend import OpenCLBackend

        self.backend = OpenCLBackend(device)
        self.module = zmlir.compile_module(HEADER + ptx, "spirv", filename="flush.ptx")
        self.program = self.backend.load(self.module)

    def launch(self, name: str, args: list) -> None:
        self.backend.launch(self.backend.kernel(self.program, name), self.module.kernels[name],
                            (1, 1, 1), (1, 1, 1), args, 0)


def _run(device, ptx: str, names: list[str]) -> dict[str, np.ndarray]:
    from zmlir.runtime.backends.opencl.device import KernelArg

    kernels = _OneThread(device, ptx)
    inputs = np.array([SUBNORMAL, NORMAL, 0.5, 1.0, -SUBNORMAL], np.float32)
    addresses = [device.alloc(64), device.alloc(8), device.alloc(inputs.nbytes)]
    got = {}
    try:
        device.copy_to_device(addresses[2], inputs)
        for name in names:
            out = KernelArg.ptr(addresses[0])
            if name == "fast_math":
                kernels.launch(name, [out, KernelArg.ptr(addresses[1]), KernelArg.ptr(addresses[2])])
                got[name] = device.copy_into(addresses[0], np.empty(11, np.float32))
                got["fast_math64"] = device.copy_into(addresses[1], np.empty(1, np.float64))
            elif name == "f64_add":
                kernels.launch(name, [out, np.float64(1e-310)])
                got[name] = device.copy_into(addresses[0], np.empty(1, np.float64))
            else:
                kernels.launch(name, [out, SUBNORMAL])
                got[name] = device.copy_into(addresses[0], np.empty(1, np.float32))
    finally:
        for address in addresses:
            device.free(address)
    return got


def _check_fast_math(got: dict[str, np.ndarray]) -> None:
    expected = np.array(FAST_MATH_RESULTS, np.float32)
    np.testing.assert_array_equal(got["fast_math"].view(np.uint32), expected.view(np.uint32))
    assert got["fast_math64"].view(np.uint64)[0] == 0


@pytest.mark.parametrize("beside", ["", "f64_add", "plain_add"])
def test_ftz_results_are_the_h200s_in_either_mode(device, beside: str) -> None:
    ptx = FAST_MATH + {"": "", "f64_add": F64_ADD, "plain_add": PLAIN_ADD}[beside]
    got = _run(device, ptx, ["fast_math"] + ([beside] if beside else []))
    _check_fast_math(got)
    if beside == "f64_add":
        assert got["f64_add"][0] == 2e-310
    if beside == "plain_add":
        assert got["plain_add"][0] == SUBNORMAL * 2
    # The program's mode is its own: the host's arithmetic keeps subnormals.
    assert np.float32(NORMAL) * np.float32(0.5) != 0


# Results at the edge of f32's normal range, out[i] from the bits in[]:
# NVIDIA's GPUs flush a result that is tiny after rounding with an unbounded
# exponent, though rounding to the subnormal format would give 2^-126 (an
# H100, .device/s40/tininess*.cu: mul.rn.ftz 1 - 2^-24 by 2^-126 is 0; by
# the next values up it rounds to 2^-126 and stays; div.rn.ftz 2^-125 -
# 2^-149 by 2 is 0; fma.rn.ftz as mul; rcp.rn.ftz of 2^126 is 2^-126). The
# MXCSR's FTZ decides the same way; the software flush had kept 2^-126.
TINY_RESULTS = """
.visible .entry tiny_results(.param .u64 out, .param .u64 in)
{
  .reg .f32 %f<16>; .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  ld.global.f32 %f1, [%rd2];
  ld.global.f32 %f2, [%rd2+4];
  ld.global.f32 %f3, [%rd2+8];
  ld.global.f32 %f4, [%rd2+12];
  ld.global.f32 %f5, [%rd2+16];
  ld.global.f32 %f6, [%rd2+20];
  ld.global.f32 %f7, [%rd2+24];
  mul.rn.ftz.f32 %f8, %f1, %f2;
  st.global.f32 [%rd1], %f8;
  mul.rn.ftz.f32 %f9, %f3, %f4;
  st.global.f32 [%rd1+4], %f9;
  fma.rn.ftz.f32 %f10, %f1, %f2, 0f80000000;
  st.global.f32 [%rd1+8], %f10;
  div.rn.ftz.f32 %f11, %f5, %f6;
  st.global.f32 [%rd1+12], %f11;
  rcp.rn.ftz.f32 %f12, %f7;
  st.global.f32 [%rd1+16], %f12;
  ret;
}
"""
TINY_INPUTS = [0x3F7FFFFF, 0x00800000, 0x3F7FFFFE, 0x00800001, 0x00FFFFFF, 0x40000000, 0x7E800000]
TINY_EXPECTED = [0x00000000, 0x00800000, 0x00000000, 0x00000000, 0x00800000]


@pytest.mark.parametrize("beside", ["", "plain_add"])
def test_tiny_results_are_flushed_as_the_h100_does(device, beside: str) -> None:
    from zmlir.runtime.backends.opencl.device import KernelArg

    kernels = _OneThread(device, TINY_RESULTS + (PLAIN_ADD if beside else ""))
    assert flushes_subnormals(kernels.module.binary) == (not beside)
    inputs = np.array(TINY_INPUTS, np.uint32)
    addresses = [device.alloc(4 * len(TINY_EXPECTED)), device.alloc(inputs.nbytes)]
    try:
        device.copy_to_device(addresses[1], inputs)
        kernels.launch("tiny_results", [KernelArg.ptr(a) for a in addresses])
        got = device.copy_into(addresses[0], np.empty(len(TINY_EXPECTED), np.uint32))
    finally:
        for address in addresses:
            device.free(address)
    assert [hex(v) for v in got] == [hex(v) for v in TINY_EXPECTED]
