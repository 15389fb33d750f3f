"""Grid variants on Intel's OpenCL CPU runtime (zmlir-index-no-wrap's
`grid-variants`): a kernel whose CUDA index `%ctaid.x * %ntid.x + %tid.x` may
wrap gets a copy compiled for grids of at most 2^21 - 1 blocks in x, where it
cannot, with the index in 64 bits; the backend launches the copy for such
grids and the kernel itself for larger ones, whose index wraps as CUDA's.
"""

from __future__ import annotations

import numpy as np
import pytest

import zmlir
from zmlir.targets.spirv import GRID_VARIANT_SUFFIX, GRID_VARIANT_X

opencl = pytest.importorskip("zmlir.runtime.backends.opencl.device")

HEADER = ".version 8.0\n.target sm_80\n.address_size 64\n"

# nvcc's `int i = blockIdx.x * 1024 + threadIdx.x; if (blockIdx.x >= first)
# out[i + shift] = blockIdx.x;` (test/cuda/programs/wrapping_global_index.cu).
STORE_BLOCK = """
.visible .entry store_block(.param .u64 out, .param .u64 shift, .param .u32 first)
{
  .reg .pred %p<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [shift];
  ld.param.u32 %r2, [first];
  mov.u32 %r1, %ctaid.x;
  setp.lt.u32 %p1, %r1, %r2;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd3, %rd1;
  mov.u32 %r3, %tid.x;
  shl.b32 %r4, %r1, 10;
  add.s32 %r5, %r4, %r3;
  cvt.s64.s32 %rd4, %r5;
  add.s64 %rd5, %rd4, %rd2;
  shl.b64 %rd6, %rd5, 2;
  add.s64 %rd7, %rd3, %rd6;
  st.global.u32 [%rd7], %r1;
DONE:
  ret;
}
"""

# Its index from the thread alone, proven in the kernel itself: no variant.
THREAD_ONLY = """
.visible .entry thread_only(.param .u64 out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.s32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
"""


def _variant_body(llvm_ir: str, name: str) -> str:
    start = llvm_ir.index(f"@{name}{GRID_VARIANT_SUFFIX}(")
    return llvm_ir[start:llvm_ir.index("\n}\n", start)]


def test_only_a_kernel_whose_index_may_wrap_gets_a_variant() -> None:
    module = zmlir.compile_module(HEADER + STORE_BLOCK + THREAD_ONLY, "spirv",
                                  filename="variants.ptx", emit="llvm-ir")
    llvm_ir = module.stages["llvm-ir"]
    # The variant is no CUDA function of the module.
    assert set(module.kernels) == {"store_block", "thread_only"}
    assert f"@thread_only{GRID_VARIANT_SUFFIX}(" not in llvm_ir
    # The kernel extends the 32-bit index that may wrap; its variant computes
    # it in 64 bits from the group id.
    kernel = llvm_ir[llvm_ir.index("@store_block("):]
    assert "sext i32" in kernel[:kernel.index("\n}\n")]
    variant = _variant_body(llvm_ir, "store_block")
    assert "sext i32" not in variant
    assert "shl nsw i64" in variant


@pytest.fixture()
def backend(device):
    from zmlir.runtime.backends.opencl.backend import OpenCLBackend

    return OpenCLBackend(device)


@pytest.mark.parametrize("blocks, shift", [
    # 2^21 + 4 blocks: the last four have i = -2^31 + 1024 k (wrapped), which
    # `shift` puts at out[1024 k]; an index that did not wrap would land 16
    # GiB past `out`.
    ((1 << 21) + 4, 1 << 31),
    # The variant's largest grid: i = 2^31 - 5120 + 1024 k, no wrap.
    (GRID_VARIANT_X, -((1 << 31) - 5120)),
])
def test_launch_runs_the_kernel_whose_index_wraps_as_cuda(backend, blocks: int,
                                                         shift: int) -> None:
    assert GRID_VARIANT_X == (1 << 21) - 1  # IndexNoWrap.cpp's kGridVariantX
    module = zmlir.compile_module(HEADER + STORE_BLOCK, "spirv", filename="store_block.ptx")
    info = module.kernels["store_block"]
    kernel = backend.kernel(backend.device.load_spirv(module.binary), "store_block")
    assert kernel.variant is not None and kernel.variant_grid_x == GRID_VARIANT_X
    expected_kernel = kernel.variant if blocks <= GRID_VARIANT_X else kernel
    assert kernel.for_grid((blocks, 1, 1)) is expected_kernel
    out = np.full(4096, -1, dtype=np.int32)
    address = backend.device.alloc(out.nbytes)
    try:
        backend.device.copy_to_device(address, out)
        backend.launch(kernel, info, (blocks, 1, 1), (1, 1, 1),
                       [opencl.KernelArg.ptr(address), np.int64(shift), np.uint32(blocks - 4)],
                       0)
        got = backend.device.copy_into(address, out)
    finally:
        backend.device.free(address)
    np.testing.assert_array_equal(got[::1024], [blocks - 4 + k for k in range(4)])
    assert (np.delete(got, np.arange(0, 4096, 1024)) == -1).all()
