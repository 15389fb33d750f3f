"""A negation made before a barrier and used after it, on Intel's CPU runtime.

Intel's OpenCL CPU compiler keeps a value that lives across a barrier once
per work-item only where it finds the value depends on the work-item, and
that analysis has no case for `fneg`: each work-item read another's negation
(NVIDIA's cuFFT, 2048-point R2C and C2R in batches of 2048: half of a round
trip's values wrong). The spirv-opaque-negations fix-up
(SPIRVFixups.cpp) writes such negations as subtractions from an opaque -0.0.
"""

from __future__ import annotations

import numpy as np
from support import llvm_function

import zmlir

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"

# out32[t] = -in[t] and out64[t] = -(double)in[t], both negated before the
# block's barrier and stored after it; and `sync_free`, which has no barrier.
NEGATIONS = """
.visible .entry negate_across_barrier(.param .u64 out32, .param .u64 out64, .param .u64 in)
{
  .reg .f32 %f<3>;
  .reg .f64 %fd<3>;
  .reg .b32 %r<2>;
  .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [out32];
  ld.param.u64 %rd2, [out64];
  ld.param.u64 %rd3, [in];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd4, %r1, 4;
  add.s64 %rd5, %rd3, %rd4;
  ld.global.f32 %f1, [%rd5];
  neg.f32 %f2, %f1;
  cvt.f64.f32 %fd1, %f1;
  neg.f64 %fd2, %fd1;
  bar.sync 0;
  add.s64 %rd6, %rd1, %rd4;
  st.global.f32 [%rd6], %f2;
  mul.wide.u32 %rd7, %r1, 8;
  add.s64 %rd8, %rd2, %rd7;
  st.global.f64 [%rd8], %fd2;
  ret;
}

.visible .entry sync_free(.param .u64 out, .param .u64 in)
{
  .reg .f32 %f<3>;
  .reg .b32 %r<2>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  neg.f32 %f2, %f1;
  add.s64 %rd5, %rd1, %rd3;
  st.global.f32 [%rd5], %f2;
  ret;
}
"""


def test_negations_are_subtractions_only_where_work_items_synchronise() -> None:
    module = zmlir.compile_module(HEADER + NEGATIONS, "spirv", filename="negations.ptx",
                                  emit="llvm-ir")
    across = llvm_function(module.stages["llvm-ir"], "negate_across_barrier")
    assert "fneg" not in across
    assert "load volatile float" in across
    assert across.count("fsub float %minus_zero") == 1
    assert "fsub double" in across
    assert "fneg float" in llvm_function(module.stages["llvm-ir"], "sync_free")


def test_every_work_item_reads_its_own_negation(device) -> None:
    from zmlir.runtime.backends.opencl.backend import OpenCLBackend
    from zmlir.runtime.backends.opencl.device import KernelArg

    backend = OpenCLBackend(device)
    module = zmlir.compile_module(HEADER + NEGATIONS, "spirv", filename="negations.ptx")
    kernel = backend.kernel(device.load_spirv(module.binary), "negate_across_barrier")
    threads = 128
    values = np.arange(1, threads + 1, dtype=np.float32)
    # Signed zeros and a subnormal: a negation flips the sign bit alone.
    values[:3] = [0.0, -0.0, np.float32(1e-40)]
    addresses = [device.alloc(4 * threads), device.alloc(8 * threads), device.alloc(4 * threads)]
    try:
        device.copy_to_device(addresses[2], values)
        backend.launch(kernel, module.kernels["negate_across_barrier"], (1, 1, 1),
                       (threads, 1, 1), [KernelArg.ptr(a) for a in addresses], 0)
        got32 = device.copy_into(addresses[0], np.empty(threads, np.float32))
        got64 = device.copy_into(addresses[1], np.empty(threads, np.float64))
    finally:
        for address in addresses:
            device.free(address)
    np.testing.assert_array_equal(got32.view(np.uint32), (-values).view(np.uint32))
    np.testing.assert_array_equal(got64.view(np.uint64),
                                  (-values.astype(np.float64)).view(np.uint64))


# Other ways to a negation that Intel's instcombine turns into an `fneg`,
# each made before the block's barrier and stored after it, out[t] = the
# result as an integer: a barrier-free `.func` that negates (inlined into the
# kernel by Intel), a float's sign bit flipped or set through its bits (f32,
# f64), PTX's neg.f16 (a sign-bit xor in our lowering), copysign with a
# negative constant and a sign chosen per work-item as select(-1.0, 1.0)
# times x. Before the fix-ups the values were wrong (garbage or another
# work-item's), or Intel's compiler crashed (neg.f16, the select).
SIGN_FLIPS = {
    "callee_fneg": ("  call (%f2), negate, (%f1);", lambda t: -t),
    "xor_sign_f32": ("  mov.b32 %r3, %f1;\n  xor.b32 %r4, %r3, -2147483648;\n  mov.b32 %f2, %r4;",
                     lambda t: -t),
    "or_sign_f32": ("  mov.b32 %r3, %f1;\n  or.b32 %r4, %r3, -2147483648;\n  mov.b32 %f2, %r4;",
                    lambda t: -t),
    "xor_sign_f64": ("  cvt.f64.f32 %fd1, %f1;\n  mov.b64 %rd6, %fd1;\n"
                     "  xor.b64 %rd7, %rd6, -9223372036854775808;\n  mov.b64 %fd2, %rd7;\n"
                     "  cvt.rn.f32.f64 %f2, %fd2;", lambda t: -t),
    "neg_f16": ("  cvt.rn.f16.f32 %h1, %f1;\n  neg.f16 %h2, %h1;\n  cvt.f32.f16 %f2, %h2;",
                lambda t: -t),
    "copysign_negative": ("  copysign.f32 %f2, 0fBF800000, %f1;", lambda t: -t),
    "select_sign_times": ("  and.b32 %r3, %r1, 1;\n  setp.eq.u32 %p1, %r3, 1;\n"
                          "  selp.f32 %f3, 0fBF800000, 0f3F800000, %p1;\n  mul.f32 %f2, %f3, %f1;",
                          lambda t: -t if t % 2 else t),
}


def _sign_flip_kernel(name: str, body: str) -> str:
    return f"""
.func (.reg .f32 %ret) negate(.reg .f32 %x)
{{
  neg.f32 %ret, %x;
  ret;
}}

.visible .entry {name}(.param .u64 out)
{{
  .reg .b32 %r<6>;
  .reg .b64 %rd<8>;
  .reg .pred %p<2>;
  .reg .f32 %f<4>;
  .reg .f64 %fd<3>;
  .reg .f16 %h<3>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  cvt.rn.f32.u32 %f1, %r1;
{body}
  bar.sync 0;
  cvt.rzi.s32.f32 %r2, %f2;
  st.global.u32 [%rd3], %r2;
  ret;
}}
"""


def test_sign_flips_become_no_constant_negation() -> None:
    for name, (body, _) in SIGN_FLIPS.items():
        module = zmlir.compile_module(HEADER + _sign_flip_kernel(name, body), "spirv",
                                      filename=f"{name}.ptx", emit="llvm-ir")
        llvm_ir = module.stages["llvm-ir"]
        llvm_ir = llvm_function(llvm_ir, "negate" if name == "callee_fneg" else name)
        assert "= fneg" not in llvm_ir, name
        assert "load volatile float" in llvm_ir, name
        for constant in ("-2147483648", "-9223372036854775808", "-32768", "-1.000000e+00"):
            assert f", {constant}" not in llvm_ir and f"float {constant}" not in llvm_ir, (
                name, constant)


def test_every_work_item_reads_its_own_sign_flip(device) -> None:
    from zmlir.runtime.backends.opencl.backend import OpenCLBackend
    from zmlir.runtime.backends.opencl.device import KernelArg

    backend = OpenCLBackend(device)
    threads = 128
    expected = {name: np.array([f(t) for t in range(threads)], np.int32)
                for name, (_, f) in SIGN_FLIPS.items()}
    got = {}
    for name, (body, _) in SIGN_FLIPS.items():
        module = zmlir.compile_module(HEADER + _sign_flip_kernel(name, body), "spirv",
                                      filename=f"{name}.ptx")
        kernel = backend.kernel(device.load_spirv(module.binary), name)
        out = device.alloc(4 * threads)
        try:
            backend.launch(kernel, module.kernels[name], (1, 1, 1), (threads, 1, 1),
                           [KernelArg.ptr(out)], 0)
            got[name] = device.copy_into(out, np.empty(threads, np.int32))
        finally:
            device.free(out)
    for name in SIGN_FLIPS:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)
