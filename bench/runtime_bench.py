"""Runtime benchmark: launch overhead (µs per cuLaunchKernel of an empty
kernel, bench/launch_overhead.cu), allocation overhead (µs per cudaMalloc,
cudaMemset and cudaFree of 64 KiB, bench/alloc_overhead.cu), a program's
first launch (bench/first_launch.cu; on the NVIDIA machine with NVIDIA's
JIT cache cold and warm), graph overhead (µs per iteration of a small
kernel's stream launches, of a graph launch after new kernel parameters, of
a stream capture and cudaGraphExecUpdate: bench/graph_overhead.cu), on the
NVIDIA machine a created stream's launch + synchronisation after a call of
our Python driver (bench/stream_sync.cu), warm-cache module load time
(cuModuleLoadData of test/cuda/matmul_tiled.cu's PTX) and, on the NVIDIA
machine, a small kernel timed with events (bench/event_timing.cu: the
event-measured time and the host's wall time per timed launch), on zmlir's
driver.

    python bench/runtime_bench.py [--out FILE]
        Here, on the default backend (the CPU through OpenCL). The C launch
        fast path is measured against the Python launch path
        (ZMLIR_FAST_LAUNCH=0) in the same run, and so are the allocations.
        Results: bench/results/runtime.json.

    python bench/runtime_bench.py prepare DIR
        Here (nvcc + zmlir with LLVM): builds the benchmark program into DIR,
        extracts the PTX our driver will pick and precompiles it to NVPTX
        (sm_90: the H200) into DIR/nvptx, as tools/run_programs_passthrough.py
        does for the test programs; the module-load PTX likewise.

    python3 bench/runtime_bench.py --real-driver DIR [--out FILE]
        On the NVIDIA machine (nvcc, NVIDIA's driver, our libcuda.so.1 built
        there; no LLVM needed): the program of DIR runs on NVIDIA's driver and
        through zmlir's CUDA passthrough (ZMLIR_BACKEND=cuda,
        ZMLIR_NVPTX_CACHE=DIR/nvptx), alternating, ROUNDS times each; prints
        the medians in µs/launch and µs/allocation cycle and their ratios, and
        the passthrough's warm module load. Results: bench/results/h200/runtime_passthrough.json.

Every figure is the median of ROUNDS fresh processes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LAUNCHES = 2000
ALLOCATIONS = 1000
GRAPH_ITERATIONS = 2000
GRAPH_WAYS = ("stream", "set_params", "capture", "set_params_sync")  # graph_overhead.cu's
EVENT_ROUNDS = 500
ROUNDS = 5
NVCC_ARCH = "sm_80"  # PTX our driver picks (the newest up to its compute capability, 8.9)
MODULE_SOURCE = REPO / "test" / "cuda" / "matmul_tiled.cu"


def nvcc() -> str:
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).exists():
            return candidate
    raise SystemExit("nvcc not found (PATH or /usr/local/cuda/bin)")


def build_programs(directory: Path) -> tuple[Path, Path]:
    """(the launch-overhead executable, the module PTX) in `directory`, and
    the event-timing executable beside them."""
    directory.mkdir(parents=True, exist_ok=True)
    exe, ptx = directory / "launch_overhead", directory / "module.ptx"
    for program in ("launch_overhead", "event_timing", "alloc_overhead", "first_launch",
                    "graph_overhead", "stream_sync"):
        # The first launch natively is NVIDIA's driver loading nvcc's machine
        # code for the H200 (sm_90), not its JIT of older PTX.
        arch = "sm_90" if program == "first_launch" else NVCC_ARCH
        subprocess.run([nvcc(), f"-arch={arch}", str(HERE / f"{program}.cu"), "-o",
                        str(directory / program)], check=True, capture_output=True)
    subprocess.run([nvcc(), "-ptx", f"-arch={NVCC_ARCH}", str(MODULE_SOURCE), "-o", str(ptx)],
                   check=True, capture_output=True)
    return exe, ptx


def zmlir_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ, **(extra or {}))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return env


ZMLIR_RUN = [sys.executable, "-m", "zmlir.cli", "run", "--"]


def launch_overhead(exe: Path, env: dict[str, str], runner: list[str]) -> float:
    """µs per launch, from one fresh process."""
    return program_figures(exe, env, runner, LAUNCHES)[0]


def program_figures(exe: Path, env: dict[str, str], runner: list[str],
                    count: int) -> list[float]:
    """The figures a benchmark program prints on its last line."""
    out = subprocess.run([*runner, str(exe), str(count)], capture_output=True, text=True,
                         env=env, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(runner)} {exe}: exit {out.returncode}: "
                           f"{(out.stderr or out.stdout).strip()[-600:]}")
    return [float(v) for v in out.stdout.strip().splitlines()[-1].split()]


_LOAD = """
import ctypes, sys, time
lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
assert lib.cuInit(0) == 0
ctx = ctypes.c_void_p()
assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
assert lib.cuCtxSetCurrent(ctx) == 0
ptx = open(sys.argv[2], "rb").read() + b"\\0"
mod = ctypes.c_void_p()
start = time.perf_counter()
code = lib.cuModuleLoadData(ctypes.byref(mod), ptx)
elapsed = (time.perf_counter() - start) * 1000
assert code == 0, code
print(elapsed)
"""


def module_load_ms(libdir: str, ptx: Path, env: dict[str, str]) -> float:
    out = subprocess.run([sys.executable, "-c", _LOAD, libdir, str(ptx)], env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"module load: exit {out.returncode}: "
                           f"{(out.stderr + out.stdout).strip()[-600:]}")
    return float(out.stdout.strip().splitlines()[-1])


def our_libdir() -> str:
    return subprocess.run([sys.executable, "-m", "zmlir.cli", "libdir"], capture_output=True,
                          text=True, check=True, env=zmlir_env()).stdout.strip()


def write(results: dict[str, object], out: Path) -> None:
    results["when"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1) + "\n")
    print(f"written to {out}")


def median(values: list[float]) -> float:
    return statistics.median(values)


def c_and_python_paths(exe: Path, count: int) -> tuple[float, float]:
    """The medians of `exe`'s first figure over ROUNDS runs on our C path,
    then over ROUNDS on the Python path (ZMLIR_FAST_LAUNCH=0)."""
    fast = [program_figures(exe, zmlir_env(), ZMLIR_RUN, count)[0] for _ in range(ROUNDS)]
    python = [program_figures(exe, zmlir_env({"ZMLIR_FAST_LAUNCH": "0"}), ZMLIR_RUN, count)[0]
              for _ in range(ROUNDS)]
    return median(fast), median(python)


def native_and_passthrough(exe: Path, passthrough: dict[str, str],
                           count: int) -> tuple[list[list[float]], list[list[float]]]:
    """`exe`'s figures from ROUNDS runs on NVIDIA's driver and as many
    through the passthrough, alternating, so both see the same machine state."""
    real, ours = [], []
    for _ in range(ROUNDS):
        real.append(program_figures(exe, dict(os.environ), [], count))
        ours.append(program_figures(exe, passthrough, ZMLIR_RUN, count))
    return real, ours


def here(out: Path) -> int:
    results: dict[str, object] = {"launches": LAUNCHES, "rounds": ROUNDS}
    with tempfile.TemporaryDirectory(prefix="zmlir-bench-") as tmp_name:
        tmp = Path(tmp_name)
        exe, ptx = build_programs(tmp)
        fast, python = [], []
        for _ in range(ROUNDS):
            fast.append(launch_overhead(exe, zmlir_env(), ZMLIR_RUN))
            python.append(launch_overhead(exe, zmlir_env({"ZMLIR_FAST_LAUNCH": "0"}), ZMLIR_RUN))
        results.update(zmlir_default_backend_us_per_launch=median(fast),
                       python_launch_path_us_per_launch=median(python),
                       fast_over_python=median(fast) / median(python))
        print(f"launch overhead, zmlir (default backend): C fast path {median(fast):.1f} "
              f"µs/launch, Python path {median(python):.1f} µs/launch; ratio "
              f"{median(fast) / median(python):.2f}")
        fast_allocs, python_allocs = c_and_python_paths(tmp / "alloc_overhead", ALLOCATIONS)
        results.update(zmlir_default_backend_us_per_alloc_cycle=fast_allocs,
                       python_path_us_per_alloc_cycle=python_allocs)
        print(f"cudaMalloc + cudaMemset + cudaFree, zmlir (default backend): "
              f"{fast_allocs:.1f} µs/cycle (ZMLIR_FAST_LAUNCH=0: {python_allocs:.1f})")
        graphs = tmp / "graph_overhead"
        fast = [program_figures(graphs, zmlir_env(), ZMLIR_RUN, GRAPH_ITERATIONS)
                for _ in range(ROUNDS)]
        figures = {way: median([f[i] for f in fast]) for i, way in enumerate(GRAPH_WAYS)}
        results["zmlir_default_backend_graph_us_per_iteration"] = figures
        print("graph overhead, zmlir (default backend), µs per iteration: " +
              ", ".join(f"{way} {us:.1f}" for way, us in figures.items()))
        fast_syncs, python_syncs = c_and_python_paths(tmp / "stream_sync", LAUNCHES)
        results.update(zmlir_default_backend_stream_sync_us=fast_syncs,
                       python_path_stream_sync_us=python_syncs)
        print(f"launch + cudaStreamSynchronize of a created stream, zmlir (default backend): "
              f"{fast_syncs:.1f} µs/iteration (ZMLIR_FAST_LAUNCH=0: {python_syncs:.1f})")
        env = zmlir_env({"ZMLIR_CACHE_DIR": str(tmp / "cache")})
        libdir = our_libdir()
        cold = module_load_ms(libdir, ptx, env)
        warm = median([module_load_ms(libdir, ptx, env) for _ in range(ROUNDS)])
        results.update(module_load_cold_ms=cold, module_load_warm_ms=warm)
        print(f"cuModuleLoadData of matmul_tiled: cold {cold:.1f} ms, warm cache {warm:.2f} ms")
    write(results, out)
    return 0


def prepare(directory: Path, archs: list[str]) -> int:
    import zmlir
    from zmlir.runtime.backends import nvptx_cache
    from zmlir.runtime.cuda.module import keyed_ptx

    sys.path.insert(0, str(REPO))
    from tools.run_programs_passthrough import driver_ptx_texts

    exe, ptx = build_programs(directory)
    texts = [*driver_ptx_texts(exe), *driver_ptx_texts(directory / "event_timing"),
             *driver_ptx_texts(directory / "graph_overhead"),
             *driver_ptx_texts(directory / "stream_sync"),
             *driver_ptx_texts(directory / "first_launch", gpu_sm=90), ptx.read_text()]
    for index, text in enumerate(texts):
        text, key = keyed_ptx(text)
        for arch in archs:
            compiled = zmlir.compile_module(text, f"nvptx:{arch}", filename=f"bench.{index}.ptx")
            nvptx_cache.store(directory / "nvptx", key, compiled, source=f"bench.{index}")
            print(f"module {index} {arch}: {key[:16]}…")
    print(f"prepared {directory}: {exe.name}, {ptx.name}, nvptx/")
    return 0


def real_driver(directory: Path, out: Path) -> int:
    exe, ptx = directory / "launch_overhead", directory / "module.ptx"
    cache = directory / "nvptx"
    if not cache.is_dir():
        raise SystemExit(f"{cache} does not exist: run `prepare {directory}` here first")
    passthrough = zmlir_env({"ZMLIR_BACKEND": "cuda", "ZMLIR_NVPTX_CACHE": str(cache)})
    real, ours = [], []
    for _ in range(ROUNDS):  # alternating, so both see the same machine state
        real.append(launch_overhead(exe, dict(os.environ), []))
        ours.append(launch_overhead(exe, passthrough, ZMLIR_RUN))
    python = median([launch_overhead(exe, {**passthrough, "ZMLIR_FAST_LAUNCH": "0"}, ZMLIR_RUN)
                     for _ in range(ROUNDS)])
    ratio = median(ours) / median(real)
    results: dict[str, object] = {
        "launches": LAUNCHES, "rounds": ROUNDS,
        "real_driver_us_per_launch": median(real), "passthrough_us_per_launch": median(ours),
        "passthrough_over_real": ratio, "passthrough_python_path_us_per_launch": python,
        "real_driver_rounds": real, "passthrough_rounds": ours,
    }
    print(f"launch overhead: NVIDIA driver {median(real):.2f} µs/launch; zmlir passthrough "
          f"{median(ours):.2f} µs/launch (C fast path; Python path {python:.2f}); "
          f"ratio {ratio:.2f} (goal <= 1.2)")
    # The events' C fast path (fastpath.c) against their Python path, as launches.
    timing = directory / "event_timing"
    real_events, our_events, python_events = [], [], []
    for _ in range(ROUNDS):
        real_events.append(program_figures(timing, dict(os.environ), [], EVENT_ROUNDS))
        our_events.append(program_figures(timing, passthrough, ZMLIR_RUN, EVENT_ROUNDS))
        python_events.append(program_figures(timing, {**passthrough, "ZMLIR_FAST_LAUNCH": "0"},
                                             ZMLIR_RUN, EVENT_ROUNDS))
    (real_dev, real_wall), (our_dev, our_wall), (python_dev, python_wall) = (
        [median([r[i] for r in runs]) for i in (0, 1)]
        for runs in (real_events, our_events, python_events))
    results.update(real_driver_event_us=real_dev, passthrough_event_us=our_dev,
                   real_driver_timed_launch_wall_us=real_wall,
                   passthrough_timed_launch_wall_us=our_wall,
                   event_native_over_zmlir=real_dev / our_dev,
                   passthrough_python_path_event_us=python_dev,
                   passthrough_python_path_timed_launch_wall_us=python_wall)
    print(f"a small kernel timed with events: NVIDIA driver {real_dev:.2f} µs by its events "
          f"({real_wall:.1f} µs wall per timed launch); zmlir passthrough {our_dev:.2f} µs "
          f"({our_wall:.1f} µs wall; Python path {python_dev:.2f} µs, {python_wall:.1f} µs "
          f"wall); native/zmlir {real_dev / our_dev:.2f} (goal >= 0.97)")
    # cudaMalloc, cudaMemset and cudaFree (llm.c's layernorm_backward times
    # them): the C path (fastpath.c) against NVIDIA's driver and the Python path.
    allocs = directory / "alloc_overhead"
    real_runs, our_runs = native_and_passthrough(allocs, passthrough, ALLOCATIONS)
    real_allocs, our_allocs = [r[0] for r in real_runs], [r[0] for r in our_runs]
    python_allocs = median([program_figures(allocs, {**passthrough, "ZMLIR_FAST_LAUNCH": "0"},
                                            ZMLIR_RUN, ALLOCATIONS)[0] for _ in range(ROUNDS)])
    results.update(real_driver_us_per_alloc_cycle=median(real_allocs),
                   passthrough_us_per_alloc_cycle=median(our_allocs),
                   passthrough_python_path_us_per_alloc_cycle=python_allocs,
                   alloc_native_over_zmlir=median(real_allocs) / median(our_allocs))
    print(f"cudaMalloc + cudaMemset + cudaFree: NVIDIA driver {median(real_allocs):.2f} "
          f"µs/cycle; zmlir passthrough {median(our_allocs):.2f} µs/cycle (C path; Python "
          f"path {python_allocs:.2f}); native/zmlir "
          f"{median(real_allocs) / median(our_allocs):.2f} (goal >= 0.9)")
    # Graphs: jacobiCudaGraphs' three ways of driving a small kernel.
    real_graphs, our_graphs = native_and_passthrough(directory / "graph_overhead", passthrough,
                                                     GRAPH_ITERATIONS)
    real_fig, our_fig = ({way: median([r[i] for r in runs]) for i, way in enumerate(GRAPH_WAYS)}
                         for runs in (real_graphs, our_graphs))
    results.update(real_driver_graph_us_per_iteration=real_fig,
                   passthrough_graph_us_per_iteration=our_fig,
                   graph_native_over_zmlir={w: real_fig[w] / our_fig[w] for w in GRAPH_WAYS})
    print("graph overhead, µs per iteration, NVIDIA driver / zmlir passthrough (native/zmlir): "
          + ", ".join(f"{w} {real_fig[w]:.1f} / {our_fig[w]:.1f} ({real_fig[w] / our_fig[w]:.2f})"
                      for w in GRAPH_WAYS))
    # A created stream's launch + synchronisation, the loop right after a
    # Python-path call of ours and after a device synchronisation.
    real_syncs, our_syncs = native_and_passthrough(directory / "stream_sync", passthrough,
                                                   LAUNCHES)
    (real_call, real_device), (our_call, our_device) = (
        [median([r[i] for r in runs]) for i in (0, 1)] for runs in (real_syncs, our_syncs))
    results.update(real_driver_stream_sync_us=real_call,
                   passthrough_stream_sync_after_python_call_us=our_call,
                   passthrough_stream_sync_after_device_sync_us=our_device,
                   stream_sync_native_over_zmlir=real_call / our_call)
    print(f"launch + cudaStreamSynchronize of a created stream: NVIDIA driver {real_call:.2f} "
          f"µs/iteration ({real_device:.2f} after a device synchronisation); zmlir "
          f"passthrough {our_call:.2f} after a call in Python, {our_device:.2f} after a device "
          f"synchronisation; native/zmlir {real_call / our_call:.2f}")
    # A program's first launch: NVIDIA's driver loads nvcc's machine code; the
    # passthrough has NVIDIA's JIT assemble our NVPTX (its JIT cache fresh:
    # cold) or take it from NVIDIA's JIT cache (warm).
    first = directory / "first_launch"
    with tempfile.TemporaryDirectory(prefix="zmlir-bench-cache-") as cache:
        cached = {**passthrough, "ZMLIR_CACHE_DIR": cache, "CUDA_CACHE_PATH": cache}
        real_first = median([program_figures(first, dict(os.environ), [], 0)[0]
                             for _ in range(ROUNDS)])
        cold_first = program_figures(first, cached, ZMLIR_RUN, 0)[0]
        warm_first = median([program_figures(first, cached, ZMLIR_RUN, 0)[0]
                             for _ in range(ROUNDS)])
    results.update(real_driver_first_launch_ms=real_first,
                   passthrough_first_launch_cold_ms=cold_first,
                   passthrough_first_launch_warm_ms=warm_first)
    print(f"a program's first launch: NVIDIA driver {real_first:.2f} ms; zmlir passthrough "
          f"{cold_first:.2f} ms with NVIDIA's JIT cache cold, {warm_first:.2f} ms warm")
    libdir = our_libdir()
    module_load_ms(libdir, ptx, passthrough)  # NVIDIA's own JIT cache warms too
    warm = median([module_load_ms(libdir, ptx, passthrough) for _ in range(ROUNDS)])
    results["passthrough_module_load_warm_ms"] = warm
    print(f"cuModuleLoadData of matmul_tiled through the passthrough, warm: {warm:.2f} ms "
          "(goal <= 2)")
    write(results, out)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", nargs="?", choices=["prepare"])
    parser.add_argument("directory", nargs="?", type=Path)
    parser.add_argument("--real-driver", type=Path, metavar="DIR",
                        help="on the NVIDIA machine: DIR from `prepare`")
    parser.add_argument("--arch", action="append", help="prepare: NVPTX arch (default sm_90)")
    parser.add_argument("--out", type=Path, help="result file")
    args = parser.parse_args()
    if args.command == "prepare":
        if args.directory is None:
            parser.error("prepare needs a directory")
        return prepare(args.directory.resolve(), args.arch or ["sm_90"])
    if args.real_driver is not None:
        return real_driver(args.real_driver.resolve(), args.out or
                           HERE / "results" / "h200" / "runtime_passthrough.json")
    return here(args.out or HERE / "results" / "runtime.json")


if __name__ == "__main__":
    sys.exit(main())
