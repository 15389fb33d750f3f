"""`.local` memory on SPIR-V, run on Intel's OpenCL CPU runtime (issue 14/15, from numba-cuda's
own tests):

- `.local` arrays aligned to 128 bytes or more (numba's `cuda.local.array(alignment=256)`):
  LLVM 22's SPIR-V backend wrote their alignment wrong and the runtime rejected the module;
  the fix-up `spirv-realign-allocas` aligns them itself.
- device functions whose parameters and return value are `.reg`, not `.param`.
"""

from __future__ import annotations

import numpy as np
import pytest

import zmlir

opencl = pytest.importorskip("zmlir.runtime.backends.opencl.device")

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"
GRID, BLOCK = 4, 64


def _run(device, ptx: str, kernel: str, words: int, *, shared_bytes: int = 0) -> np.ndarray:
    """`kernel(out)` over GRID x BLOCK threads; `out` holds `words` u64 per thread."""
    module = zmlir.compile_module(HEADER + ptx, "spirv", filename=f"{kernel}.ptx")
    program = device.load_spirv(module.binary)
    out = np.zeros(GRID * BLOCK * words, dtype=np.uint64)
    address = device.alloc(out.nbytes)
    try:
        device.copy_to_device(address, out)
        device.launch(program.kernel(kernel), grid=(GRID, 1, 1), block=(BLOCK, 1, 1),
                      args=[opencl.KernelArg.ptr(address)], shared_bytes=shared_bytes,
                      shared_window=module.kernels[kernel].static_shared_bytes)
        return device.copy_into(address, out).reshape(GRID * BLOCK, words)
    finally:
        device.free(address)


# Each thread stores the generic addresses of its arrays and a value it wrote through each.
ALIGNED_LOCAL = """
.visible .entry aligned_local(.param .u64 out)
{
  .local .align 128 .b8 a128[40];
  .local .align 4 .b8 small[4];
  .local .align 256 .b8 a256[8];
  .local .align 1024 .b8 a1k[16];
  .reg .b64 %rd<12>;
  .reg .b32 %r<8>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ntid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.u32 %r1, %r1, %r2, %r3;
  mul.wide.u32 %rd2, %r1, 40;
  add.u64 %rd1, %rd1, %rd2;
  mov.u64 %rd3, a128;
  cvta.local.u64 %rd3, %rd3;
  st.global.u64 [%rd1], %rd3;
  mov.u64 %rd4, a256;
  cvta.local.u64 %rd4, %rd4;
  st.global.u64 [%rd1+8], %rd4;
  mov.u64 %rd5, a1k;
  cvta.local.u64 %rd5, %rd5;
  st.global.u64 [%rd1+16], %rd5;
  st.local.u32 [a128+36], %r1;
  st.local.u32 [small], 7;
  st.local.u32 [a256+4], 5;
  st.local.u32 [a1k+12], 3;
  bar.sync 0;
  ld.local.u32 %r4, [a128+36];
  ld.local.u32 %r5, [small];
  ld.local.u32 %r6, [a256+4];
  ld.local.u32 %r7, [a1k+12];
  add.u32 %r4, %r4, %r5;
  add.u32 %r4, %r4, %r6;
  add.u32 %r4, %r4, %r7;
  cvt.u64.u32 %rd6, %r4;
  st.global.u64 [%rd1+24], %rd6;
  mov.u64 %rd7, small;
  cvta.local.u64 %rd7, %rd7;
  st.global.u64 [%rd1+32], %rd7;
  ret;
}
"""


def test_local_arrays_get_their_alignment(device) -> None:
    got = _run(device, ALIGNED_LOCAL, "aligned_local", 5)
    thread = np.arange(GRID * BLOCK, dtype=np.uint64)
    assert (got[:, 0] % 128 == 0).all(), got[:, 0] % 128
    assert (got[:, 1] % 256 == 0).all(), got[:, 1] % 256
    assert (got[:, 2] % 1024 == 0).all(), got[:, 2] % 1024
    assert (got[:, 4] % 4 == 0).all()
    # Each thread's arrays are its own (blocks run one after another may
    # reuse them), and hold what it wrote.
    assert (got[:, 3] == thread + 15).all()
    for block in got.reshape(GRID, BLOCK, 5):
        for column in range(3):
            assert len(set(block[:, column].tolist())) == BLOCK


REG_PARAMS = """
.func (.reg .b32 %r) load_add(.reg .b64 %a, .reg .b32 %b)
{
  .reg .b32 %t;
  ld.global.u32 %t, [%a];
  add.u32 %r, %t, %b;
  ret;
}

// Plain names (no `%`) and a 64-bit result.
.func (.reg .b64 wide) pick(.reg .b32 which, .reg .b64 x, .reg .b64 y)
{
  .reg .pred p;
  setp.ne.u32 p, which, 0;
  selp.b64 wide, x, y, p;
  ret;
}

.visible .entry reg_params(.param .u64 out)
{
  .reg .b64 %rd<8>;
  .reg .b32 %x<8>;
  .reg .pred %p<2>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %x1, %ntid.x;
  mov.u32 %x2, %ctaid.x;
  mov.u32 %x3, %tid.x;
  mad.lo.u32 %x1, %x1, %x2, %x3;
  mul.wide.u32 %rd2, %x1, 16;
  add.u64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %x1;
  call (%x4), load_add, (%rd1, 1000);
  cvt.u64.u32 %rd3, %x4;
  setp.eq.u32 %p1, %x3, 0;
  selp.u32 %x5, 1, 0, %p1;
  call.uni (%rd4), pick, (%x5, 7, %rd3);
  st.global.u64 [%rd1+8], %rd4;
  ret;
}
"""


def test_reg_parameters(device) -> None:
    got = _run(device, REG_PARAMS, "reg_params", 2)
    thread = np.arange(GRID * BLOCK, dtype=np.uint64)
    assert (got[:, 1] == np.where(thread % BLOCK == 0, 7, thread + 1000)).all()
