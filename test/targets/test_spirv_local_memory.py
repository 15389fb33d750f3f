"""`.local` memory and state spaces on SPIR-V, run on Intel's OpenCL CPU runtime (issue 14/15,
from numba-cuda's own tests):

- `.local` arrays aligned to 128 bytes or more (numba's `cuda.local.array(alignment=256)`):
  LLVM 22's SPIR-V backend wrote their alignment wrong and the runtime rejected the module;
  the fix-up `spirv-realign-allocas` aligns them itself.
- `isspacep.global/.local/.shared` (libcu++'s atomics ask `isspacep.local`), in kernels and in
  device functions, with and without a barrier (the runtime then moves a work-item's allocas
  to a buffer of the work-group's).
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


# Each thread stores the generic addresses of its arrays and a value it wrote through each;
# the first array's alignment and size are FIRST_ALIGN and FIRST_SIZE.
ALIGNED_LOCAL = """
.visible .entry aligned_local(.param .u64 out)
{
  .local .align FIRST_ALIGN .b8 first[FIRST_SIZE];
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
  mov.u64 %rd3, first;
  cvta.local.u64 %rd3, %rd3;
  st.global.u64 [%rd1], %rd3;
  mov.u64 %rd4, a256;
  cvta.local.u64 %rd4, %rd4;
  st.global.u64 [%rd1+8], %rd4;
  mov.u64 %rd5, a1k;
  cvta.local.u64 %rd5, %rd5;
  st.global.u64 [%rd1+16], %rd5;
  st.local.u32 [first+36], %r1;
  st.local.u32 [small], 7;
  st.local.u32 [a256+4], 5;
  st.local.u32 [a1k+12], 3;
  bar.sync 0;
  ld.local.u32 %r4, [first+36];
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


# With a barrier, Intel's runtime vectorizing 16 wide (AVX-512) computed the
# padding spirv-realign-allocas aligns an array with once for all lanes, not
# from each lane's copy: the first array was 64 bytes off its alignment (all
# lanes; every other lane where the copies are 320 bytes apart, as a padded
# 200-byte array's are). The fix-up reads the address back through a
# volatile load first. Vectorized only where the block is a multiple of 16.
@pytest.mark.parametrize("first_align, first_size", [(128, 40), (128, 200), (256, 40)])
def test_local_arrays_get_their_alignment(device, first_align: int, first_size: int) -> None:
    ptx = ALIGNED_LOCAL.replace("FIRST_ALIGN", str(first_align)).replace("FIRST_SIZE",
                                                                          str(first_size))
    got = _run(device, ptx, "aligned_local", 5)
    thread = np.arange(GRID * BLOCK, dtype=np.uint64)
    assert (got[:, 0] % first_align == 0).all(), got[:, 0] % first_align
    assert (got[:, 1] % 256 == 0).all(), got[:, 1] % 256
    assert (got[:, 2] % 1024 == 0).all(), got[:, 2] % 1024
    assert (got[:, 4] % 4 == 0).all()
    # Each thread's arrays are its own (blocks run one after another may
    # reuse them), and hold what it wrote.
    assert (got[:, 3] == thread + 15).all()
    for block in got.reshape(GRID, BLOCK, 5):
        for column in range(3):
            assert len(set(block[:, column].tolist())) == BLOCK


# Bits of a thread's answers: 1 isspacep.global, 2 .shared, 4 .local.
SPACES = """
.global .align 8 .b8 table[64];

.func (.param .b32 r) classify(.param .b64 a)
{
  .reg .b64 %rd<2>;
  .reg .pred %p<4>;
  .reg .b32 %r<4>;
  ld.param.b64 %rd1, [a];
  isspacep.global %p1, %rd1;
  isspacep.shared %p2, %rd1;
  isspacep.local %p3, %rd1;
  selp.u32 %r1, 1, 0, %p1;
  selp.u32 %r2, 2, 0, %p2;
  selp.u32 %r3, 4, 0, %p3;
  or.b32 %r1, %r1, %r2;
  or.b32 %r1, %r1, %r3;
  st.param.b32 [r], %r1;
  ret;
}

// The callee of a callee: its kernel's window reaches it too.
.func (.param .b32 r) classify_twice(.param .b64 a)
{
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.b64 %rd1, [a];
  {
    .param .b64 a0;
    .param .b32 r0;
    st.param.b64 [a0], %rd1;
    call (r0), classify, (a0);
    ld.param.b32 %r1, [r0];
  }
  st.param.b32 [r], %r1;
  ret;
}

.visible .entry KERNEL(.param .u64 out)
{
  .shared .align 8 .b8 sh[256];
  .local .align 8 .b8 loc[16];
  .reg .b64 %rd<16>;
  .reg .b32 %r<8>;
  .reg .pred %p<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %ntid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.u32 %r1, %r1, %r2, %r3;
  mul.wide.u32 %rd2, %r1, 64;
  add.u64 %rd10, %rd1, %rd2;
  BARRIER
  // The thread's addresses: its out slot (global), its word of sh (shared),
  // its .local array (local), the .global variable `table` (global).
  mov.u64 %rd3, %rd10;
  cvta.shared.u64 %rd4, sh;
  mul.wide.u32 %rd5, %r3, 4;
  add.u64 %rd4, %rd4, %rd5;
  mov.u64 %rd6, loc;
  cvta.local.u64 %rd6, %rd6;
  add.u64 %rd6, %rd6, 8;
  mov.u64 %rd7, table;
  cvta.global.u64 %rd7, %rd7;
  add.u64 %rd7, %rd7, 8;
  st.local.u32 [loc+8], %r1;
  st.shared.u32 [sh], %r1;
  isspacep.global %p1, %rd3;
  isspacep.shared %p2, %rd4;
  isspacep.local %p3, %rd6;
  selp.u32 %r4, 1, 0, %p1;
  selp.u32 %r5, 2, 0, %p2;
  selp.u32 %r6, 4, 0, %p3;
  or.b32 %r4, %r4, %r5;
  or.b32 %r4, %r4, %r6;
  isspacep.local %p1, %rd3;
  isspacep.global %p2, %rd4;
  isspacep.global %p3, %rd6;
  selp.u32 %r5, 8, 0, %p1;
  or.b32 %r4, %r4, %r5;
  selp.u32 %r5, 16, 0, %p2;
  or.b32 %r4, %r4, %r5;
  selp.u32 %r5, 32, 0, %p3;
  or.b32 %r4, %r4, %r5;
  cvt.u64.u32 %rd8, %r4;
  st.global.u64 [%rd10], %rd8;
  CLASSIFY(%rd3, 8)
  CLASSIFY(%rd4, 16)
  CLASSIFY(%rd6, 24)
  CLASSIFY(%rd7, 32)
  ret;
}
"""

CLASSIFY = """{
    .param .b64 a0;
    .param .b32 r0;
    st.param.b64 [a0], ADDR;
    call (r0), CALLEE, (a0);
    ld.param.b32 %r7, [r0];
    cvt.u64.u32 %rd9, %r7;
    st.global.u64 [%rd10+OFFSET], %rd9;
  }"""


def _spaces_ptx(kernel: str, barrier: bool, callee: str) -> str:
    text = SPACES.replace("KERNEL", kernel).replace("BARRIER", "bar.sync 0;" if barrier else "")
    for args, offset in (("%rd3, 8", 8), ("%rd4, 16", 16), ("%rd6, 24", 24), ("%rd7, 32", 32)):
        address = args.split(",")[0]
        call = CLASSIFY.replace("ADDR", address).replace("OFFSET", str(offset))
        text = text.replace(f"CLASSIFY({args})", call.replace("CALLEE", callee))
    return text


@pytest.mark.parametrize("barrier", [False, True], ids=["straight", "barrier"])
@pytest.mark.parametrize("callee", ["classify", "classify_twice"])
@pytest.mark.parametrize("dynamic", [0, 4096])
def test_isspacep_tells_the_spaces_apart(device, barrier: bool, callee: str,
                                         dynamic: int) -> None:
    got = _run(device, _spaces_ptx("spaces", barrier, callee), "spaces", 8,
               shared_bytes=dynamic)
    # In the kernel: global, shared and local each true of their own address,
    # and local/global false of the others'.
    assert (got[:, 0] == 1 | 2 | 4).all(), np.unique(got[:, 0])
    # In device functions: the out slot, the shared word, the .local array,
    # the .global variable.
    assert (got[:, 1] == 1).all(), np.unique(got[:, 1])
    assert (got[:, 2] == 2).all(), np.unique(got[:, 2])
    assert (got[:, 3] == 4).all(), np.unique(got[:, 3])
    assert (got[:, 4] == 1).all(), np.unique(got[:, 4])


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
