"""bench/cpu_kernels.py: the OpenCL C launches take their sizes from the CUDA source."""

from __future__ import annotations

import re

from bench.cpu_kernels import (
    CUDA_SOURCE,
    baseline,
    build_c_stream,
    c_stream,
    kept_rows,
    kernels,
    previous_run,
    shortfall,
    sizes,
)


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


def test_the_baseline_is_the_best_copy_of_every_measurement() -> None:
    # numpy's copy and the C loops' (ordinary and non-temporal stores, 1 and
    # N threads) all compete; triads never count.
    numpy_figures = {"1": {"copy": 45.0, "triad": 90.0}, "2": {"copy": 39.0, "triad": 30.0}}
    c_figures = {"copy regular": {"1": 40.5, "2": 17.3},
                 "copy nontemporal": {"1": 54.8, "2": 54.3},
                 "triad regular": {"1": 99.0, "2": 25.4}}
    assert baseline(numpy_figures, c_figures) == (54.8, "C copy non-temporal stores, 1 thread(s)")
    assert baseline(numpy_figures, {"copy regular": {"2": 12.0}}) == (
        45.0, "numpy copy, 1 thread(s)")


def test_a_partial_run_keeps_the_other_kernels_rows() -> None:
    old = "\n".join([
        "Run 2026-12-03T19:24:38Z on AMD EPYC (2 cores, shared), ...",
        "| kernel | zmlir | OpenCL C | zmlir / OpenCL C | zmlir of copy bw | goal | |",
        "| copy | 11.38 GB/s (11.8 ms) | 11.50 (11.7 ms) | 0.99 | 25% | x | y |",
        "| sgemm | 57.84 GFLOP/s (15.7 ms) | 86.01 (10.5 ms) | 0.67 |  | x | y |",
    ])
    kept = kept_rows(old, ["sgemm", "blackscholes"])
    assert kept == {"sgemm": old.splitlines()[3]}
    assert previous_run(old) == "2026-12-03T19:24:38Z"


def test_the_stream_loops_build_and_count_as_stream_does(tmp_path) -> None:
    exe = build_c_stream(tmp_path)
    figures = c_stream(exe, 1 << 16, 1)
    assert sorted(figures) == ["copy nontemporal", "copy regular", "triad nontemporal",
                               "triad regular"]
    assert all(gbs > 0 for by_threads in figures.values() for gbs in by_threads.values())
    assert "1" in figures["copy regular"]
