"""mma.sync and ldmatrix on the CPU (SPIR-V), against numpy: kernels of our own that move
A and B into shared memory, load their fragments with ldmatrix (.x4 for A; .x2, plain for B
stored column-major or .trans for B stored row-major), multiply with mma.sync and store D
where PTX's fragment layout puts each lane's elements (PTX ISA 9.7.14.5). Each warp of a
block has its own matrices. Small integers are exact in every accumulation order; random
f16 inputs check the emulation's documented order (C, then k = 0, 1, ... by fused
multiply-adds in f32, each f16 product exact) bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

import zmlir

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
WARPS = 4


def _mma_kernel(mma: str, b_trans: bool) -> str:
    """k(d, a, b, c): per warp w, A at a + 512 w (16 rows of 32 bytes: 16 f16 or 8 tf32),
    B at b + 256 w (row-major 16 x 8 f16 where b_trans, else column-major: 8 rows of 32
    bytes), C and D (16 x 8 f32, row-major) at c + 512 w and d + 512 w."""
    b_load = ("and.b32 %r20, %r1, 15; shl.b32 %r20, %r20, 4; add.u32 %r20, %r20, %r11; "
              "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r30, %r31}, [%r20];"
              if b_trans else
              "and.b32 %r20, %r1, 7; shl.b32 %r20, %r20, 5; shr.u32 %r21, %r1, 3; "
              "and.b32 %r21, %r21, 1; shl.b32 %r21, %r21, 4; add.u32 %r20, %r20, %r21; "
              "add.u32 %r20, %r20, %r11; "
              "ldmatrix.sync.aligned.x2.m8n8.shared::cta.b16 {%r30, %r31}, [%r20];")
    return HEADER + f"""
.visible .entry k(.param .u64 d, .param .u64 a, .param .u64 b, .param .u64 c)
{{
  .reg .b32 %r<40>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<20>;
  .shared .align 16 .b8 sh[{WARPS * 768}];
  mov.u32 %r0, %tid.x;
  and.b32 %r1, %r0, 31;
  shr.u32 %r2, %r0, 5;
  mov.u32 %r3, sh;
  mad.lo.u32 %r10, %r2, 768, %r3;
  add.u32 %r11, %r10, 512;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [b];
  mul.wide.u32 %rd3, %r2, 512;
  add.s64 %rd1, %rd1, %rd3;
  mul.wide.u32 %rd4, %r2, 256;
  add.s64 %rd2, %rd2, %rd4;
  // A: 128 words, 4 a lane; B: 64 words, 2 a lane.
  mul.wide.u32 %rd5, %r1, 4;
  add.s64 %rd6, %rd1, %rd5;
  shl.b32 %r4, %r1, 2;
  add.u32 %r5, %r10, %r4;
  ld.global.u32 %r6, [%rd6];
  st.shared.u32 [%r5], %r6;
  ld.global.u32 %r6, [%rd6+128];
  st.shared.u32 [%r5+128], %r6;
  ld.global.u32 %r6, [%rd6+256];
  st.shared.u32 [%r5+256], %r6;
  ld.global.u32 %r6, [%rd6+384];
  st.shared.u32 [%r5+384], %r6;
  add.s64 %rd7, %rd2, %rd5;
  add.u32 %r5, %r11, %r4;
  ld.global.u32 %r6, [%rd7];
  st.shared.u32 [%r5], %r6;
  ld.global.u32 %r6, [%rd7+128];
  st.shared.u32 [%r5+128], %r6;
  bar.sync 0;
  // A's four 8 x 8 matrices: rows 0-7 and 8-15 of columns 0-7, then of 8-15.
  and.b32 %r12, %r1, 7;
  shr.u32 %r13, %r1, 3;
  and.b32 %r13, %r13, 1;
  shl.b32 %r13, %r13, 3;
  add.u32 %r12, %r12, %r13;
  shl.b32 %r12, %r12, 5;
  shr.u32 %r13, %r1, 4;
  shl.b32 %r13, %r13, 4;
  add.u32 %r12, %r12, %r13;
  add.u32 %r12, %r12, %r10;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r22, %r23, %r24, %r25}}, [%r12];
  {b_load}
  // C and D: register i is (g + 8 (i / 2), 2 t + i % 2).
  ld.param.u64 %rd8, [c];
  ld.param.u64 %rd9, [d];
  shr.u32 %r14, %r1, 2;
  and.b32 %r15, %r1, 3;
  shl.b32 %r16, %r14, 3;
  shl.b32 %r17, %r15, 1;
  add.u32 %r16, %r16, %r17;
  mad.lo.u32 %r16, %r2, 128, %r16;
  mul.wide.u32 %rd10, %r16, 4;
  add.s64 %rd11, %rd8, %rd10;
  add.s64 %rd12, %rd9, %rd10;
  ld.global.v2.f32 {{%f0, %f1}}, [%rd11];
  ld.global.v2.f32 {{%f2, %f3}}, [%rd11+256];
  {mma} {{%f4, %f5, %f6, %f7}}, {{%r22, %r23, %r24, %r25}}, {{%r30, %r31}}, {{%f0, %f1, %f2, %f3}};
  st.global.v2.f32 [%rd12], {{%f4, %f5}};
  st.global.v2.f32 [%rd12+256], {{%f6, %f7}};
  ret;
}}
"""


# m8n8k4.f64 has no ldmatrix: each lane loads its elements, a = A[g][t], b = B[t][g],
# c_i = C[g][2 t + i].
F64_KERNEL = HEADER + """
.visible .entry k(.param .u64 d, .param .u64 a, .param .u64 b, .param .u64 c)
{
  .reg .b32 %r<20>;
  .reg .f64 %fd<8>;
  .reg .b64 %rd<20>;
  mov.u32 %r0, %tid.x;
  and.b32 %r1, %r0, 31;
  shr.u32 %r2, %r0, 5;
  shr.u32 %r3, %r1, 2;
  and.b32 %r4, %r1, 3;
  ld.param.u64 %rd1, [a];
  ld.param.u64 %rd2, [b];
  ld.param.u64 %rd3, [c];
  ld.param.u64 %rd4, [d];
  shl.b32 %r5, %r2, 5;
  mad.lo.u32 %r6, %r3, 4, %r4;
  add.u32 %r6, %r6, %r5;
  mul.wide.u32 %rd5, %r6, 8;
  add.s64 %rd5, %rd1, %rd5;
  ld.global.f64 %fd0, [%rd5];
  mad.lo.u32 %r7, %r4, 8, %r3;
  add.u32 %r7, %r7, %r5;
  mul.wide.u32 %rd6, %r7, 8;
  add.s64 %rd6, %rd2, %rd6;
  ld.global.f64 %fd1, [%rd6];
  shl.b32 %r8, %r2, 6;
  shl.b32 %r9, %r3, 3;
  add.u32 %r8, %r8, %r9;
  shl.b32 %r9, %r4, 1;
  add.u32 %r8, %r8, %r9;
  mul.wide.u32 %rd7, %r8, 8;
  add.s64 %rd8, %rd3, %rd7;
  add.s64 %rd9, %rd4, %rd7;
  ld.global.v2.f64 {%fd2, %fd3}, [%rd8];
  mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd4, %fd5}, {%fd0}, {%fd1}, {%fd2, %fd3};
  st.global.v2.f64 [%rd9], {%fd4, %fd5};
  ret;
}
"""


# F64_KERNEL with a barrier some lanes might skip (a NaN in A): the branch
# looks divergent, so the kernel may take turns (SPIRVSpinWaits.cpp), as
# NVIDIA's cuBLAS's d884 tensor-op DGEMM does; its products were wrong
# while the emulation's function read the lane itself (aef123d).
F64_GUARDED = (F64_KERNEL.replace(".reg .b64 %rd<20>;", ".reg .b64 %rd<20>;\n  .reg .pred %p;")
               .replace("  mma.sync", "  setp.nan.f64 %p, %fd0, %fd0;\n  @%p bra SKIP;\n"
                        "  bar.sync 0;\nSKIP:\n  mma.sync"))
assert "bar.sync 0" in F64_GUARDED and ".reg .pred %p;" in F64_GUARDED

def _run(device, ptx: str, d_shape: tuple[int, ...], d_dtype, *inputs: np.ndarray) -> np.ndarray:
    from zmlir.runtime.backends.opencl.backend import OpenCLBackend
    from zmlir.runtime.backends.opencl.device import KernelArg

    backend = OpenCLBackend(device)
    module = zmlir.compile_module(ptx, "spirv", filename="mma.ptx")
    kernel = backend.kernel(device.load_spirv(module.binary), "k")
    out = np.zeros(d_shape, d_dtype)
    addresses = []
    try:
        for array in (out, *inputs):
            address = device.alloc(array.nbytes)
            device.copy_to_device(address, np.ascontiguousarray(array))
            addresses.append(address)
        backend.launch(kernel, module.kernels["k"], (1, 1, 1), (32 * WARPS, 1, 1),
                       [KernelArg.ptr(x) for x in addresses], 0)
        return device.copy_into(addresses[0], out)
    finally:
        for address in addresses:
            device.free(address)


def _bf16(x: np.ndarray) -> np.ndarray:
    """Small integers (exact in bf16) as bf16 bits."""
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _sequential(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """D = A B + C as the emulation sums: from C, k = 0, 1, ... in f32, each product exact."""
    acc = c.astype(np.float32).copy()
    for k in range(a.shape[-1]):
        acc = (acc + a[..., :, k:k + 1].astype(np.float32) * b[..., k:k + 1, :].astype(np.float32)
               ).astype(np.float32)
    return acc


@pytest.mark.parametrize("atype", ["f16", "bf16"])
@pytest.mark.parametrize("b_trans", [True, False], ids=["b_trans", "b_col"])
def test_m16n8k16_small_integers(device, atype: str, b_trans: bool) -> None:
    rng = np.random.default_rng(16)
    a = rng.integers(-8, 9, (WARPS, 16, 16)).astype(np.float32)
    b = rng.integers(-8, 9, (WARPS, 16, 8)).astype(np.float32)
    c = rng.integers(-100, 101, (WARPS, 16, 8)).astype(np.float32)
    bits = (lambda x: x.astype(np.float16).view(np.uint16)) if atype == "f16" else _bf16
    b_mem = b if b_trans else b.transpose(0, 2, 1)
    mma = f"mma.sync.aligned.m16n8k16.row.col.f32.{atype}.{atype}.f32"
    got = _run(device, _mma_kernel(mma, b_trans), (WARPS, 16, 8), np.float32, bits(a),
               bits(np.ascontiguousarray(b_mem)), c)
    np.testing.assert_array_equal(got, a @ b + c)


def test_m16n8k16_f16_random_bits_for_bits(device) -> None:
    rng = np.random.default_rng(17)
    a = rng.standard_normal((WARPS, 16, 16)).astype(np.float16)
    b = rng.standard_normal((WARPS, 16, 8)).astype(np.float16)
    c = rng.standard_normal((WARPS, 16, 8)).astype(np.float32)
    mma = "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
    got = _run(device, _mma_kernel(mma, True), (WARPS, 16, 8), np.float32, a.view(np.uint16),
               b.view(np.uint16), c)
    np.testing.assert_array_equal(got.view(np.uint32), _sequential(a, b, c).view(np.uint32))


def _f16_accumulator_kernel() -> str:
    """_mma_kernel (B transposed) with f16 C and D (16 x 8 row-major per warp, at c + 256 w
    and d + 256 w): register 0 holds a lane's pair of adjacent elements in row g, register
    1 in row g + 8."""
    ptx = _mma_kernel("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", True)
    for f32_form, f16_form in (
            ("mul.wide.u32 %rd10, %r16, 4;", "mul.wide.u32 %rd10, %r16, 2;"),
            ("ld.global.v2.f32 {%f0, %f1}, [%rd11];\n  ld.global.v2.f32 {%f2, %f3}, [%rd11+256];",
             "ld.global.u32 %r26, [%rd11];\n  ld.global.u32 %r27, [%rd11+128];"),
            ("st.global.v2.f32 [%rd12], {%f4, %f5};\n  st.global.v2.f32 [%rd12+256], {%f6, %f7};",
             "st.global.u32 [%rd12], %r28;\n  st.global.u32 [%rd12+128], %r29;"),
            ("{%f4, %f5, %f6, %f7}, {%r22", "{%r28, %r29}, {%r22"),
            ("{%r30, %r31}, {%f0, %f1, %f2, %f3}", "{%r30, %r31}, {%r26, %r27}")):
        assert f32_form in ptx
        ptx = ptx.replace(f32_form, f16_form)
    return ptx


def test_m16n8k16_f16_accumulators(device) -> None:
    # Small integers: every sum exact in f16 (|D| <= 16 * 64 + 100).
    rng = np.random.default_rng(18)
    a = rng.integers(-8, 9, (WARPS, 16, 16)).astype(np.float16)
    b = rng.integers(-8, 9, (WARPS, 16, 8)).astype(np.float16)
    c = rng.integers(-100, 101, (WARPS, 16, 8)).astype(np.float16)
    got = _run(device, _f16_accumulator_kernel(), (WARPS, 16, 8), np.float16,
               a.view(np.uint16), b.view(np.uint16), c)
    np.testing.assert_array_equal(got, a.astype(np.float32) @ b.astype(np.float32) + c)


def test_m16n8k16_f16_accumulators_round_once(device) -> None:
    # Random f16: the sum as the f32 form's (from C widened), then rounded to f16 once.
    rng = np.random.default_rng(19)
    a = rng.standard_normal((WARPS, 16, 16)).astype(np.float16)
    b = rng.standard_normal((WARPS, 16, 8)).astype(np.float16)
    c = rng.standard_normal((WARPS, 16, 8)).astype(np.float16)
    got = _run(device, _f16_accumulator_kernel(), (WARPS, 16, 8), np.float16,
               a.view(np.uint16), b.view(np.uint16), c)
    want = _sequential(a, b, c).astype(np.float16)
    np.testing.assert_array_equal(got.view(np.uint16), want.view(np.uint16))


def test_m16n8k16_f16_accumulators_on_nvptx() -> None:
    # The tensor cores' own form: C and D as <2 x half> pairs (ptxas takes it).
    module = zmlir.compile_module(_f16_accumulator_kernel(), "nvptx:sm_80", filename="mma.ptx",
                                  emit="llvm-ir")
    assert "@llvm.nvvm.mma.m16n8k16.row.col.f16.f16(" in module.stages["llvm-ir"]


def test_m16n8k8_tf32(device) -> None:
    """tf32 in .b32 registers, loaded with ldmatrix as pairs of b16; the low 13 bits of
    each input are ignored (1 + 2^-20 multiplies as 1)."""
    rng = np.random.default_rng(8)
    a = rng.integers(-8, 9, (WARPS, 16, 8)).astype(np.float32)
    b = rng.integers(-8, 9, (WARPS, 8, 8)).astype(np.float32)
    c = rng.integers(-100, 101, (WARPS, 16, 8)).astype(np.float32)
    a_bits = a.view(np.uint32) | np.uint32(0x1000) * (a != 0)  # below tf32's mantissa
    mma = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"
    got = _run(device, _mma_kernel(mma, False), (WARPS, 16, 8), np.float32, a_bits,
               np.ascontiguousarray(b.transpose(0, 2, 1)), c)
    np.testing.assert_array_equal(got, a @ b + c)


def test_m8n8k4_f64(device) -> None:
    rng = np.random.default_rng(4)
    a = rng.standard_normal((WARPS, 8, 4))
    b = rng.standard_normal((WARPS, 4, 8))
    c = rng.standard_normal((WARPS, 8, 8))
    got = _run(device, F64_KERNEL, (WARPS, 8, 8), np.float64, a, b, c)
    want = c
    for k in range(4):  # fused multiply-adds from C, k = 0 .. 3
        want = _fma(a[..., :, k:k + 1], b[..., k:k + 1, :], want)
    np.testing.assert_array_equal(got, want)


def _fma(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    """x * y + z rounded once (exactly, in fractions), broadcasting."""
    from fractions import Fraction

    x, y, z = np.broadcast_arrays(x, y, z)
    return np.array([float(Fraction(float(p)) * Fraction(float(q)) + Fraction(float(r)))
                     for p, q, r in zip(x.ravel(), y.ravel(), z.ravel(), strict=True)]
                    ).reshape(x.shape)


def _ldmatrix_kernel(count: int, trans: bool, generic: bool) -> str:
    """k(out, rows): per warp w, 32 rows of 16 bytes from rows + 512 w into shared memory;
    lane l gives the address of row (5 l + 3) % 32, so row r of matrix i is that row of
    lane 8 i + r; lane l writes its `count` registers to out + 16 (32 w + l)."""
    regs = ", ".join(f"%r{20 + i}" for i in range(count))
    space = "" if generic else ".shared"
    addr = "%rd10" if generic else "%r12"
    stores = "\n".join(f"  st.global.u32 [%rd5+{4 * i}], %r{20 + i};" for i in range(count))
    return HEADER + f"""
.visible .entry k(.param .u64 out, .param .u64 rows)
{{
  .reg .b32 %r<30>;
  .reg .b64 %rd<12>;
  .shared .align 16 .b8 sh[{WARPS * 512}];
  mov.u32 %r0, %tid.x;
  and.b32 %r1, %r0, 31;
  shr.u32 %r2, %r0, 5;
  mov.u32 %r3, sh;
  mad.lo.u32 %r10, %r2, 512, %r3;
  ld.param.u64 %rd1, [rows];
  mul.wide.u32 %rd2, %r0, 16;
  add.s64 %rd2, %rd1, %rd2;
  ld.global.v4.u32 {{%r4, %r5, %r6, %r7}}, [%rd2];
  shl.b32 %r8, %r1, 4;
  add.u32 %r8, %r8, %r10;
  st.shared.v4.u32 [%r8], {{%r4, %r5, %r6, %r7}};
  bar.sync 0;
  mad.lo.u32 %r11, %r1, 5, 3;
  and.b32 %r11, %r11, 31;
  shl.b32 %r11, %r11, 4;
  add.u32 %r12, %r11, %r10;
  cvt.u64.u32 %rd9, %r12;
  cvta.shared.u64 %rd10, %rd9;
  ldmatrix.sync.aligned.m8n8.x{count}{".trans" if trans else ""}{space}.b16 {{{regs}}}, [{addr}];
  ld.param.u64 %rd3, [out];
  mul.wide.u32 %rd4, %r0, 16;
  add.s64 %rd5, %rd3, %rd4;
{stores}
  ret;
}}
"""


def _ldmatrix_reference(rows: np.ndarray, count: int, trans: bool) -> np.ndarray:
    """What each lane gets (PTX ISA 9.7.14.5.15), from rows (warps x 32 rows x 8 b16)."""
    out = np.zeros((WARPS, 32, 4), np.uint32)
    for w in range(WARPS):
        for i in range(count):
            m = np.array([rows[w, ((8 * i + r) * 5 + 3) % 32] for r in range(8)])
            if trans:
                m = m.T
            for t in range(32):
                lo, hi = m[t // 4, 2 * (t % 4)], m[t // 4, 2 * (t % 4) + 1]
                out[w, t, i] = int(lo) | int(hi) << 16
    return out


@pytest.mark.parametrize("count", [1, 2, 4])
@pytest.mark.parametrize("trans", [False, True], ids=["rows", "trans"])
@pytest.mark.parametrize("generic", [False, True], ids=["shared", "generic"])
def test_ldmatrix(device, count: int, trans: bool, generic: bool) -> None:
    rng = np.random.default_rng(count * 4 + trans * 2 + generic)
    rows = rng.integers(0, 1 << 16, (WARPS, 32, 8), dtype=np.uint64).astype(np.uint16)
    got = _run(device, _ldmatrix_kernel(count, trans, generic), (WARPS, 32, 4), np.uint32, rows)
    np.testing.assert_array_equal(got[..., :count], _ldmatrix_reference(rows, count, trans)[
        ..., :count])


def test_m8n8k4_f64_behind_a_guarded_barrier(device) -> None:
    rng = np.random.default_rng(5)
    a = rng.integers(-4, 5, (WARPS, 8, 4)).astype(np.float64)
    b = rng.integers(-4, 5, (WARPS, 4, 8)).astype(np.float64)
    c = rng.integers(-4, 5, (WARPS, 8, 8)).astype(np.float64)
    got = _run(device, F64_GUARDED, (WARPS, 8, 8), np.float64, a, b, c)
    np.testing.assert_array_equal(got, a @ b + c)
