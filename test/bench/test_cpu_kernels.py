"""bench/cpu_kernels.py: the OpenCL C launches take their sizes from the CUDA source."""

from __future__ import annotations

import re

from bench.cpu_kernels import CUDA_SOURCE, kernels, shortfall, sizes


def test_every_size_the_cuda_source_declares_is_read() -> None:
    declared = re.findall(r"constexpr int (k\w+)", CUDA_SOURCE.read_text())
    read = sizes()
    assert sorted(read) == sorted(declared)
    assert read["kVectorN"] == 1 << 24


def test_launches_match_the_cuda_grids() -> None:
    # The OpenCL C kernels run the CUDA program's grids: whole work-groups,
    # a block's shape as the local size.
    k = sizes()
    by_name = {spec.name: spec for spec in kernels(k)}
    assert set(by_name) == {"copy", "triad", "transpose", "reduce", "sgemm", "blackscholes"}
    for spec in by_name.values():
        assert all(g % local == 0 for g, local in zip(spec.global_size, spec.local_size,
                                                        strict=True)), spec
    assert by_name["transpose"].local_size == (k["kTile"], k["kTileRows"])
    assert by_name["reduce"].global_size == (k["kReduceGrid"] * k["kReduceBlock"],)


def test_a_goal_not_met_says_by_how_much() -> None:
    row = {"met": False, "kind": "memory", "zmlir_of_copy": 0.35}
    assert shortfall(row) == "NOT met: 35% of copy, 2.0x short"
    row = {"met": False, "kind": "compute", "zmlir_over_opencl_c": 0.45}
    assert shortfall(row) == "NOT met: 0.45x OpenCL C, 2.0x short"
