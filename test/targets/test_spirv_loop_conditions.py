"""A loop with barriers that branches on a value made before it, on Intel's
CPU runtime.

Persistent blocks take tickets from a counter in a loop: thread 0 takes one
and, past `bar.sync`, waits for the previous ticket's flag; past a second
`bar.sync` it sets its own and the block goes round again, until the tickets
run out (cuSOLVER's csrqr_leftLooking_cta_byLevels_core does this; cuda-samples'
cuSolverSp_LowlevelQR hung). Intel's compiler miscompiled the loop, which
branches on `%tid.x != 0` computed once before it: with 32 threads or more
the launch never ended, and so it did with the condition computed in the
loop, which Intel's LICM hoists. The fix-up spirv-opaque-loop-conditions
(SPIRVFixups.cpp) has such a branch read the values it depends on back in
the loop.
A hang would hang the test: the kernel runs in a process of its own, with
a timeout.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("zmlir.runtime.backends.opencl.device")

TICKETS = r"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry tickets(.param .u64 words, .param .u32 n)
{
  .shared .align 4 .b32 ticket;
  .reg .b32 %r<8>;
  .reg .b64 %rd<8>;
  .reg .pred %p<6>;
  ld.param.u64 %rd1, [words];
  ld.param.u32 %r1, [n];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r2, %tid.x;
  setp.ne.s32 %p1, %r2, 0;
TAKE:
  @%p1 bra TAKEN;
  atom.global.add.u32 %r3, [%rd2], 1;
  st.shared.u32 [ticket], %r3;
TAKEN:
  bar.sync 0;
  ld.shared.u32 %r4, [ticket];
  setp.ge.u32 %p2, %r4, %r1;
  @%p2 bra DONE;
  @%p1 bra WAITED;
  setp.eq.u32 %p3, %r4, 0;
  @%p3 bra WAITED;
  mul.wide.u32 %rd3, %r4, 4;
  add.s64 %rd4, %rd2, %rd3;
WAIT:
  ld.volatile.global.u32 %r5, [%rd4];
  setp.eq.u32 %p4, %r5, 0;
  @%p4 bra WAIT;
WAITED:
  membar.gl;
  bar.sync 0;
  @%p1 bra TAKE;
  mul.wide.u32 %rd5, %r4, 4;
  add.s64 %rd6, %rd2, %rd5;
  st.global.u32 [%rd6+4], 1;
  bra.uni TAKE;
DONE:
  ret;
}
"""

# words[0] is the counter, words[1 + t] ticket t's flag.
_PROGRAM = textwrap.dedent("""
    import ctypes, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    ptx, blocks, threads, n = sys.argv[2].encode() + b"\\0", *map(int, sys.argv[3:6])
    assert lib.cuInit(0) == 0
    ctx, module, kernel = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuCtxCreate_v2(ctypes.byref(ctx), 0, 0) == 0
    assert lib.cuModuleLoadData(ctypes.byref(module), ptx) == 0
    assert lib.cuModuleGetFunction(ctypes.byref(kernel), module, b"tickets") == 0
    size = 4 * (n + 2)
    words = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(words), size) == 0
    assert lib.cuMemsetD8_v2(words, 0, size) == 0
    args = [ctypes.c_uint64(words.value), ctypes.c_uint32(n)]
    params = (ctypes.c_void_p * 2)(*[ctypes.addressof(a) for a in args])
    assert lib.cuLaunchKernel(kernel, blocks, 1, 1, threads, 1, 1, 0, None, params, None) == 0
    assert lib.cuCtxSynchronize() == 0
    out = (ctypes.c_uint32 * (n + 2))()
    assert lib.cuMemcpyDtoH_v2(out, words, size) == 0
    print(out[0], sum(out[1:n + 1]), out[n + 1])
""")


# The same with `%tid.x != 0` computed in the loop, as nvcc leaves it
# (cuSOLVER's csrqr_solve_Qtb_cta_core): Intel's LICM hoists it.
TICKETS_IN_LOOP = TICKETS.replace("  setp.ne.s32 %p1, %r2, 0;\nTAKE:\n",
                                  "TAKE:\n  setp.ne.s32 %p1, %r2, 0;\n")
assert TICKETS_IN_LOOP != TICKETS


@pytest.mark.parametrize("source", [TICKETS, TICKETS_IN_LOOP], ids=["before", "in_loop"])
@pytest.mark.parametrize("blocks,threads", [(1, 32), (4, 256)])
def test_persistent_blocks_take_every_ticket(libdir: str, source: str, blocks: int,
                                             threads: int) -> None:
    n = 40
    result = subprocess.run([sys.executable, "-c", _PROGRAM, libdir, source, str(blocks),
                             str(threads), str(n)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    # Every block took one ticket past the last; tickets 0..n-1 each set
    # their flag, words[1 + t], which the next one waited for.
    assert result.stdout.split() == [str(n + blocks), str(n), "0"], result.stdout
