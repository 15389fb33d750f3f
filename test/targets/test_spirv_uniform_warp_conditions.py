"""Tests of a thread's warp made uniform across SPIR-V sub-groups
(zmlir-warp-uniform-conditions): a kernel whose warps are 32-wide sub-groups
and which branches on `%tid.x > 31` tests (x - lane) & 992 instead, which
Intel's CPU vectorizer sees as one answer per sub-group. That equals x & ~31
because such a kernel's sub-groups are CUDA's warps in every block shape (the
launcher runs a block whose warps are not rows as a one-dimensional
work-group). test/cuda/programs/warp_uniform_conditions.cu checks the
branches taken, test/cuda/programs/warp_block_shapes.cu the warps.
"""

from __future__ import annotations

import numpy as np
import pytest
from support import llvm_function

import zmlir

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"

# nvcc's `if (threadIdx.x < 32) { sum += __shfl_down_sync(~0u, sum, 16); if
# (threadIdx.x == 0) *out = sum; }` (bench/cpu_kernels.cu's reduce_kernel).
WARP_SUM = """
.visible .entry warp_sum(.param .u64 out, .param .f32 value)
{
  .reg .pred %p<4>;
  .reg .b32 %r<4>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  ld.param.f32 %f1, [value];
  mov.u32 %r1, %tid.x;
  setp.gt.u32 %p1, %r1, 31;
  @%p1 bra DONE;
  mov.b32 %r2, %f1;
  shfl.sync.down.b32 %r3|%p2, %r2, 16, 31, -1;
  mov.b32 %f2, %r3;
  add.f32 %f3, %f1, %f2;
  setp.ne.u32 %p3, %r1, 0;
  @%p3 bra DONE;
  st.global.f32 [%rd1], %f3;
DONE:
  ret;
}
"""

# Each thread's %laneid and %tid.x, at its linear index.
LANES = """
.visible .entry lanes(.param .u64 out)
{
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %tid.y;
  mov.u32 %r3, %tid.z;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %ntid.y;
  mad.lo.u32 %r6, %r3, %r5, %r2;
  mad.lo.u32 %r7, %r6, %r4, %r1;
  mov.u32 %r8, %laneid;
  mul.wide.u32 %rd2, %r7, 8;
  add.s64 %rd3, %rd1, %rd2;
  st.global.v2.u32 [%rd3], {%r8, %r1};
  ret;
}
"""


def test_a_branch_on_the_warp_tests_the_sub_group() -> None:
    module = zmlir.compile_module(HEADER + WARP_SUM, "spirv", filename="warp_sum.ptx",
                                  emit="llvm-ir")
    kernel = llvm_function(module.stages["llvm-ir"], "warp_sum")
    entry = kernel[:kernel.index("\n\n")]
    # The entry computes w = (x - lane) & 992.
    assert "_Z22get_sub_group_local_id" in entry
    assert ", 992" in entry
    # One body: it reads %tid.x alone, so it has no copy for blocks launched
    # as one-dimensional work-groups (the launcher refuses it such blocks).
    assert "_Z17get_global_offsetj(i32 1)" not in kernel
    assert kernel.count("_Z17sub_group_shuffleij") == 1


@pytest.mark.parametrize("block", [(48, 2, 1), (16, 16, 1), (33, 3, 1), (100, 1, 1), (64, 2, 2),
                                   (40, 3, 2), (16, 2, 1), (5, 7, 3)])
def test_sub_groups_are_cuda_warps_in_every_block_shape(device,
                                                        block: tuple[int, int, int]) -> None:
    """CUDA's warps are 32 consecutive linear thread ids; Intel's CPU runtime
    forms sub-groups of consecutive work-items along x, in every block
    shape. A kernel whose warps are sub-groups gets CUDA's anyway."""
    from zmlir.runtime.backends.opencl.backend import OpenCLBackend
    from zmlir.runtime.backends.opencl.device import KernelArg

    backend = OpenCLBackend(device)
    module = zmlir.compile_module(HEADER + LANES, "spirv", filename="lanes.ptx")
    kernel = backend.kernel(device.load_spirv(module.binary), "lanes")
    threads = block[0] * block[1] * block[2]
    address = device.alloc(8 * threads)
    try:
        backend.launch(kernel, module.kernels["lanes"], (1, 1, 1), block,
                       [KernelArg.ptr(address)], 0)
        got = device.copy_into(address, np.empty((threads, 2), np.uint32))
    finally:
        device.free(address)
    lane, x = got[:, 0], got[:, 1]
    np.testing.assert_array_equal(x, np.arange(threads) % block[0])
    np.testing.assert_array_equal(lane, np.arange(threads) % 32)
