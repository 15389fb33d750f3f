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


def _function(llvm_ir: str, name: str) -> str:
    start = llvm_ir.index(f"@{name}(")
    return llvm_ir[start:llvm_ir.index("\n}\n", start)]


def test_negations_are_subtractions_only_where_work_items_synchronise() -> None:
    module = zmlir.compile_module(HEADER + NEGATIONS, "spirv", filename="negations.ptx",
                                  emit="llvm-ir")
    across = _function(module.stages["llvm-ir"], "negate_across_barrier")
    assert "fneg" not in across
    assert "load volatile float" in across
    assert across.count("fsub float %minus_zero") == 1
    assert "fsub double" in across
    assert "fneg float" in _function(module.stages["llvm-ir"], "sync_free")


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
