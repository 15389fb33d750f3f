"""`[r+imm]` of a 32-bit address register: the sum is a 32-bit address,
which wraps. NVIDIA's cuBLAS (scal_kernel, under its TRSM) reads shared
memory at `[r+128]` with r = As - 120: As + 8. Extending r first and adding
the offset in 64 bits made it As + 2^32 + 8 on the CPU: a page fault."""

from __future__ import annotations

import numpy as np

import zmlir

# Thread t stores 3t at s[t]; after a barrier, threads t < 62 read s[t + 2]
# through r = s + 4t - 120, at [r+128]: negative for t < 30 before the offset.
WRAPPED = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry wrapped(.param .u64 out)
{
  .shared .align 4 .b32 s[64];
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, s;
  shl.b32 %r3, %r1, 2;
  add.u32 %r4, %r2, %r3;
  mul.lo.u32 %r5, %r1, 3;
  st.shared.u32 [%r4], %r5;
  bar.sync 0;
  setp.ge.u32 %p, %r1, 62;
  @%p bra DONE;
  sub.u32 %r6, %r4, 120;
  ld.shared.u32 %r7, [%r6+128];
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
DONE:
  ret;
}
"""


def test_a_32_bit_address_plus_offset_wraps(device) -> None:
    from zmlir.runtime.backends.opencl.backend import OpenCLBackend
    from zmlir.runtime.backends.opencl.device import KernelArg

    backend = OpenCLBackend(device)
    module = zmlir.compile_module(WRAPPED, "spirv", filename="wrapped.ptx")
    kernel = backend.kernel(device.load_spirv(module.binary), "wrapped")
    out = device.alloc(4 * 64)
    try:
        device.memset(out, 0, 4 * 64)
        backend.launch(kernel, module.kernels["wrapped"], (1, 1, 1), (64, 1, 1),
                       [KernelArg.ptr(out)], 0)
        got = device.copy_into(out, np.empty(64, np.uint32))
    finally:
        device.free(out)
    want = np.array([3 * (t + 2) if t < 62 else 0 for t in range(64)], np.uint32)
    np.testing.assert_array_equal(got, want)

