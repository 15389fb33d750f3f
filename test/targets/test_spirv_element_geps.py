"""The fix-up `spirv-typed-element-geps` on Intel's OpenCL CPU runtime: byte-offset accesses
to the shared window become element GEPs of their own type (Intel's vectorizer loads
consecutive floats through them instead of gathering), and each still reaches its byte.
"""

from __future__ import annotations

import numpy as np
import pytest

import zmlir

opencl = pytest.importorskip("zmlir.runtime.backends.opencl.device")

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"

# dct8x8's shape (CUDAkernelShortDCT): each thread stores a pair of shorts as one u32 at
# short index 34 * tid.y + 2 * tid.x, so the u32's byte offset is (34 * tid.y + 2 * tid.x)
# << 1, a shift by less than the access's 2; after the barrier it loads the short at
# 34 * tid.y + tid.x. The u32 index is 17 * tid.y + tid.x: abee743 divided the shift's
# operand and shifted it again, storing at twice the offset (dct8x8 and MC_EstimatePiP
# faulted, lineOfSight too).
PAIRS = """
.visible .entry pairs(.param .u64 out)
{
  .reg .b32 %r<16>;
  .reg .b64 %rd<4>;
  .reg .b16 %h<2>;
  .shared .align 4 .b8 buf[544];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  shl.b32 %r3, %r1, 1;
  mad.lo.s32 %r4, %r2, 34, %r3;
  shl.b32 %r5, %r4, 1;
  mov.u32 %r6, buf;
  add.s32 %r7, %r6, %r5;
  mad.lo.s32 %r8, %r2, 16, %r1;
  mul.lo.s32 %r9, %r8, 65537;
  st.shared.u32 [%r7], %r9;
  bar.sync 0;
  mad.lo.s32 %r10, %r2, 34, %r1;
  shl.b32 %r11, %r10, 1;
  add.s32 %r12, %r6, %r11;
  ld.shared.u16 %h1, [%r12];
  cvt.u32.u16 %r13, %h1;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mul.wide.u32 %rd2, %r8, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r13;
  ret;
}
"""


def test_pairs_of_shorts_land_at_their_bytes(device) -> None:
    module = zmlir.compile_module(HEADER + PAIRS, "spirv", filename="pairs.ptx", emit="llvm-ir")
    assert "getelementptr i32, ptr addrspace(3)" in module.stages["llvm-ir"]  # rewritten
    module = zmlir.compile_module(HEADER + PAIRS, "spirv", filename="pairs.ptx")
    program = device.load_spirv(module.binary)
    out = np.full(16 * 4, 0xFFFFFFFF, dtype=np.uint32)
    address = device.alloc(out.nbytes)
    try:
        device.copy_to_device(address, out)
        device.launch(program.kernel("pairs"), grid=(1, 1, 1), block=(16, 4, 1),
                      args=[opencl.KernelArg.ptr(address)], shared_bytes=0,
                      shared_window=module.kernels["pairs"].static_shared_bytes)
        got = device.copy_into(address, out).reshape(4, 16)
    finally:
        device.free(address)
    y, x = np.mgrid[0:4, 0:16]
    # The short at 34 y + x is the low half of the pair thread (y, x // 2) stored.
    np.testing.assert_array_equal(got, 16 * y + x // 2)
