"""End to end on the CPU: our CUDA kernels, compiled by nvcc to PTX, by zmlir
to SPIR-V, run on Intel's OpenCL CPU runtime and compared with numpy."""

from __future__ import annotations

import pytest
from support.cuda_cases import CASES, case_id, case_sizes, run_launch

import zmlir

launcher = pytest.importorskip("zmlir.runtime.backends.opencl.device")


@pytest.fixture(scope="module")
def programs(device, nvcc_ptx):
    """case name -> (compiled module, loaded program), built once per case."""
    cache: dict[str, tuple[zmlir.CompiledModule, object]] = {}

    def get(name: str):
        if name not in cache:
            case = CASES[name]
            module = zmlir.compile_module(nvcc_ptx(case.source.name), "spirv",
                                          filename=case.source.name)
            cache[name] = (module, device.load_spirv(module.binary))
        return cache[name]

    return get


@pytest.mark.parametrize("case, size", case_sizes(),
                         ids=[case_id(c, s) for c, s in case_sizes()])
def test_kernel_matches_numpy(case, size, device, programs) -> None:
    module, program = programs(case.name)
    info = module.kernels[case.kernel]
    # The compiler's shared-memory layout agrees with the kernel's own
    # __shared__ declarations.
    assert info.static_shared_bytes == case.static_shared_bytes
    launch = case.launch_for(size)
    outputs = run_launch(device, program.kernel(case.kernel), launch,
                         shared_window=info.static_shared_bytes)
    launch.check(outputs)


def test_only_warp_kernels_require_32_wide_sub_groups(programs) -> None:
    # A kernel with warp shuffles needs sub-groups that are warps; one without leaves the width
    # to the runtime, which vectorizes it at its own: forced to 32, Intel's CPU runtime ran a
    # shared-memory tiled SGEMM 4.6x slower (bench/results/cpu_kernels.md).
    _, shuffling = programs("block_reduce")
    assert shuffling.kernel("block_reduce").compile_sub_group_size() == 32
    _, tiled = programs("matmul_tiled")
    assert tiled.kernel("matmul_tiled").compile_sub_group_size() == 0
