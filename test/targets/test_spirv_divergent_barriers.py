"""Barriers that a block's threads reach apart, on Intel's CPU runtime.

PTX defines both kernels below. A thread that exits is no longer waited for
at barriers (PTX ISA, `exit`), so `if (i >= n) return;` before
`__syncthreads()` runs on NVIDIA's GPUs; and threads that skip `barrier.sync
0`s inside a branch meet the others at the next `barrier.sync 0` by count
(NVIDIA's cuFFT does this: half-precision R2C/C2R of 8 points, rows past the
batch, bench/results/nvidia_libraries_sweep.md). Intel's CPU runtime needs
every work-item at the same barrier: the early exit left every output
unwritten, the skipped barriers gave garbage. Such a kernel now takes turns
at one work-group collective (SPIRVSpinWaits.cpp, barriersMayDiverge); one
whose branches around barriers are the same for every thread keeps its
barriers.
"""

from __future__ import annotations

import numpy as np
import pytest

import zmlir

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"

# Threads t >= n return; the others store t, wait for each other, and read
# their neighbour's: out[t] = (t + 1) % n.
EARLY_EXIT = """
.visible .entry early_exit(.param .u64 out, .param .u32 n)
{
  .shared .align 4 .b32 s[256];
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p, %r2, %r1;
  @%p bra DONE;
  mov.u32 %r3, s;
  shl.b32 %r4, %r2, 2;
  add.u32 %r5, %r3, %r4;
  st.shared.u32 [%r5], %r2;
  bar.sync 0;
  add.u32 %r6, %r2, 1;
  rem.u32 %r6, %r6, %r1;
  shl.b32 %r6, %r6, 2;
  add.u32 %r6, %r3, %r6;
  ld.shared.u32 %r7, [%r6];
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
DONE:
  ret;
}
"""

# Threads t >= n skip two barrier.sync 0 and meet the others at a third;
# out[t] = (t + 1) % n for t < n, 0 for the others.
SKIPPED_BARRIERS = """
.visible .entry skipped_barriers(.param .u64 out, .param .u32 n)
{
  .shared .align 4 .b32 s[256];
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  .reg .pred %p;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, s;
  shl.b32 %r4, %r2, 2;
  add.u32 %r5, %r3, %r4;
  mov.u32 %r9, 0;
  setp.ge.u32 %p, %r2, %r1;
  @%p bra JOIN;
  st.shared.u32 [%r5], %r2;
  barrier.sync 0;
  add.u32 %r6, %r2, 1;
  rem.u32 %r6, %r6, %r1;
  shl.b32 %r6, %r6, 2;
  add.u32 %r6, %r3, %r6;
  ld.shared.u32 %r9, [%r6];
  barrier.sync 0;
  st.shared.u32 [%r5], %r9;
JOIN:
  barrier.sync 0;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r9;
  ret;
}
"""


# As SKIPPED_BARRIERS, but the block where the ways meet runs code before
# its barrier: threads t >= n reach it from the kernel's start, the others
# past their first barrier. Intel's barrier pass lost the later threads'
# values in such a block until every thread started at a turn.
SHARED_JOIN = """
.visible .entry shared_join(.param .u64 out, .param .u32 n)
{
  .shared .align 4 .b32 s[256];
  .shared .align 4 .b32 t[256];
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  .reg .pred %p;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  mov.u32 %r3, s;
  shl.b32 %r4, %r2, 2;
  add.u32 %r5, %r3, %r4;
  mov.u32 %r9, 0;
  setp.ge.u32 %p, %r2, %r1;
  @%p bra JOIN;
  st.shared.u32 [%r5], %r2;
  barrier.sync 0;
  add.u32 %r6, %r2, 1;
  rem.u32 %r6, %r6, %r1;
  shl.b32 %r6, %r6, 2;
  add.u32 %r6, %r3, %r6;
  ld.shared.u32 %r9, [%r6];
JOIN:
  add.u32 %r8, %r9, 1000;
  mov.u32 %r10, t;
  add.u32 %r10, %r10, %r4;
  st.shared.u32 [%r10], %r8;
  barrier.sync 0;
  ld.shared.u32 %r11, [%r10];
  sub.u32 %r11, %r11, 1000;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r11;
  ret;
}
"""


# As EARLY_EXIT, with the store to shared memory an atomic exchange (a
# kernel with atomics on shared memory but no poll of it takes turns too).
SHARED_ATOMIC = (EARLY_EXIT.replace("early_exit", "shared_atomic")
                 .replace(".reg .b32 %r<8>;", ".reg .b32 %r<9>;")
                 .replace("st.shared.u32 [%r5], %r2;", "atom.shared.exch.b32 %r8, [%r5], %r2;"))
assert "atom.shared.exch" in SHARED_ATOMIC and "%r<9>" in SHARED_ATOMIC


def _run(device, source: str, name: str, block: int, n: int) -> np.ndarray:
    from zmlir.runtime.backends.opencl.backend import OpenCLBackend
    from zmlir.runtime.backends.opencl.device import KernelArg

    backend = OpenCLBackend(device)
    module = zmlir.compile_module(HEADER + source, "spirv", filename=f"{name}.ptx")
    kernel = backend.kernel(device.load_spirv(module.binary), name)
    out = device.alloc(4 * block)
    try:
        device.memset(out, 0, 4 * block)
        backend.launch(kernel, module.kernels[name], (1, 1, 1), (block, 1, 1),
                       [KernelArg.ptr(out), np.uint32(n)], 0)
        return device.copy_into(out, np.empty(block, np.uint32))
    finally:
        device.free(out)


def _expected(block: int, n: int) -> np.ndarray:
    return np.array([(t + 1) % n if t < n else 0 for t in range(block)], np.uint32)


@pytest.mark.parametrize("source,name", [(EARLY_EXIT, "early_exit"),
                                         (SKIPPED_BARRIERS, "skipped_barriers"),
                                         (SHARED_JOIN, "shared_join"),
                                         (SHARED_ATOMIC, "shared_atomic")])
def test_barriers_every_thread_reaches_are_right(device, source: str, name: str) -> None:
    """The same kernels where no thread diverges: right today."""
    np.testing.assert_array_equal(_run(device, source, name, 64, 64), _expected(64, 64))


# A guard every thread of the block takes alike (the block's id) around a
# barrier, and one on the thread's id with no barrier inside: no turns.
UNIFORM = """
.visible .entry uniform(.param .u64 out, .param .u32 n)
{
  .shared .align 4 .b32 s[256];
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p<3>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  mov.u32 %r7, %ctaid.x;
  mov.u32 %r3, s;
  shl.b32 %r4, %r2, 2;
  add.u32 %r5, %r3, %r4;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra STORED;
  st.shared.u32 [%r5], %r2;
STORED:
  setp.ne.u32 %p2, %r7, 0;
  @%p2 bra DONE;
  bar.sync 0;
  ld.shared.u32 %r6, [%r5];
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r6;
DONE:
  ret;
}
"""


@pytest.mark.parametrize("source,name,turns", [(EARLY_EXIT, "early_exit", True),
                                               (SKIPPED_BARRIERS, "skipped_barriers", True),
                                               (UNIFORM, "uniform", False)])
def test_only_kernels_whose_barriers_may_diverge_take_turns(source: str, name: str,
                                                            turns: bool) -> None:
    module = zmlir.compile_module(HEADER + source, "spirv", filename=f"{name}.ptx",
                                  emit="llvm-ir")
    assert ("zmlir.turn" in module.stages["llvm-ir"]) == turns


@pytest.mark.parametrize("source,name", [(EARLY_EXIT, "early_exit"),
                                         (SKIPPED_BARRIERS, "skipped_barriers"),
                                         (SHARED_JOIN, "shared_join"),
                                         (SHARED_ATOMIC, "shared_atomic")])
@pytest.mark.parametrize("block,n", [(64, 40), (128, 100), (64, 3), (256, 255)])
def test_threads_that_exit_or_skip_barriers(device, source: str, name: str, block: int,
                                            n: int) -> None:
    np.testing.assert_array_equal(_run(device, source, name, block, n), _expected(block, n))


# bar.red (__syncthreads_count, _and) after `if (t >= n) return;`: the
# counts and the .and take the threads that did not exit, as NVIDIA's
# barrier does: out[t] = 2 * popc(t odd) + and(t < n) for t < n. Its counter
# reads are no polls (Control.cpp), so it takes turns; before, Intel's
# runtime left every output of a block of 64 with n = 17 unwritten.
BAR_RED = """
.visible .entry bar_red(.param .u64 out, .param .u32 n)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  .reg .pred %p<5>;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p1, %r2, %r1;
  @%p1 bra DONE;
  and.b32 %r3, %r2, 1;
  setp.ne.u32 %p2, %r3, 0;
  bar.red.popc.u32 %r4, 0, %p2;
  setp.lt.u32 %p3, %r2, %r1;
  bar.red.and.pred %p4, 0, %p3;
  selp.u32 %r5, 1, 0, %p4;
  mad.lo.u32 %r4, %r4, 2, %r5;
  mul.wide.u32 %rd2, %r2, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r4;
DONE:
  ret;
}
"""


@pytest.mark.parametrize("block,n", [(64, 64), (64, 17), (64, 1), (128, 100), (256, 255)])
def test_bar_red_counts_the_threads_that_did_not_exit(device, block: int, n: int) -> None:
    want = np.array([2 * (n // 2) + 1 if t < n else 0 for t in range(block)], np.uint32)
    np.testing.assert_array_equal(_run(device, BAR_RED, "bar_red", block, n), want)
