"""CPU backend kernel speed against the machine (issue 17, "The CPU backend").

    python bench/cpu_kernels.py [--rounds N] [--reps N] [--kernels K,K] [--out FILE]

In one run, on this machine:

1. the machine's copy bandwidth, STREAM's copy and triad over the kernels'
   own arrays (kVectorN floats: 64 MiB each, against the last-level cache's
   size, which the report gives), on one thread and on as many as the CPU has
   (Intel's runtime runs work-groups on that many: the calling thread and
   TBB workers), best of REPS, bytes read + written as STREAM counts: numpy
   (its copy is glibc's memcpy, non-temporal stores at this size) and
   bench/cpu_stream.c (C loops, ordinary and non-temporal stores). The
   baseline is the best copy of them all;
2. bench/cpu_kernels.cu (nvcc -arch=sm_75) under `zmlir run`: copy, triad,
   a shared-memory tiled transpose, a block reduction (shared-memory tree,
   then warp shuffles), a shared-memory tiled SGEMM and BlackScholes, each
   timed with cudaEvents after a warm-up launch;
3. the same kernels as OpenCL C (bench/cpu_kernels.cl), built by the same
   Intel OpenCL CPU runtime (zmlir's ICD set-up and cffi loader) and launched
   with the same global and local sizes, timed with profiled markers as our
   events are (the end of a marker before and after the kernel).

Each round runs 1, 2 and 3 in turn; a kernel's figure is its best time over
all rounds. For the memory-bound kernels the OpenCL C side also times the
forms Intel's runtime runs best (bench/cpu_kernels.cl: a size_t index, a
contiguous chunk per work-item), the ceiling of that runtime on this machine.
`--kernels` measures a subset; the report keeps the other kernels' rows from
the previous report, saying so. Printed per kernel: GB/s (GFLOP/s for SGEMM, Goptions/s for
BlackScholes), the ratio to the copy bandwidth (memory-bound kernels) and to
the OpenCL C kernel (all). Goals (issue 17): memory-bound kernels at >= 70% of
the copy bandwidth, compute-bound ones at >= 0.9x OpenCL C. Results:
bench/results/cpu_kernels.json and .md (the .md's "Why" section is written by
hand and kept across runs).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
CUDA_SOURCE = HERE / "cpu_kernels.cu"
OPENCL_SOURCE = HERE / "cpu_kernels.cl"
STREAM_SOURCE = HERE / "cpu_stream.c"
NVCC_ARCH = "sm_75"
MEMORY_GOAL = 0.70  # of the copy bandwidth
COMPUTE_GOAL = 0.90  # of OpenCL C
STREAM_CHUNK = 1 << 16  # triad's temporary stays in L2


def sizes() -> dict[str, int]:
    """The sizes bench/cpu_kernels.cu declares (`constexpr int kName = ...;`)."""
    found: dict[str, int] = {}
    for name, value in re.findall(r"constexpr int (k\w+) = (\d+(?: << \d+)?);",
                                  CUDA_SOURCE.read_text()):
        base, _, shift = value.partition(" << ")
        found[name] = int(base) << int(shift or 0)
    return found


@dataclass(frozen=True)
class Kernel:
    name: str
    kind: str  # "memory" or "compute"
    work: float  # bytes (memory) or the unit of `unit`, per launch
    unit: str  # what `work` counts, per second: GB/s, GFLOP/s, Goptions/s
    global_size: tuple[int, ...]
    local_size: tuple[int, ...]


def kernels(k: dict[str, int]) -> list[Kernel]:
    n, t, g, o = k["kVectorN"], k["kTransposeN"], k["kGemmN"], k["kOptions"]
    return [
        Kernel("copy", "memory", 8 * n, "GB/s", (n,), (256,)),
        Kernel("triad", "memory", 12 * n, "GB/s", (n,), (256,)),
        Kernel("transpose", "memory", 8 * t * t, "GB/s", (t, t * k["kTileRows"] // k["kTile"]),
               (k["kTile"], k["kTileRows"])),
        Kernel("reduce", "memory", 4 * n, "GB/s", (k["kReduceGrid"] * k["kReduceBlock"],),
               (k["kReduceBlock"],)),
        Kernel("sgemm", "compute", 2 * g**3, "GFLOP/s", (g, g), (k["kGemmTile"], k["kGemmTile"])),
        Kernel("blackscholes", "compute", o, "Goptions/s", (o,), (128,)),
    ]


# --- 1. the machine's copy bandwidth -----------------------------------------------------------


def _threaded(threads: int, n: int, body: Callable[[slice], None]) -> None:
    bounds = [n * i // threads for i in range(threads + 1)]
    parts = [slice(bounds[i], bounds[i + 1]) for i in range(threads)]
    if threads == 1:
        body(parts[0])
        return
    workers = [threading.Thread(target=body, args=(part,)) for part in parts]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()


def stream(n: int, reps: int, threads: int) -> dict[str, float]:
    """STREAM copy (a = b) and triad (a = b + s*c) GB/s, best of `reps`."""
    a, b, c = (np.full(n, v, np.float32) for v in (0.0, 1.0, 2.0))
    scalar = np.float32(3.0)

    def copy(part: slice) -> None:
        np.copyto(a[part], b[part])

    def triad(part: slice) -> None:
        tmp = np.empty(STREAM_CHUNK, np.float32)
        for start in range(part.start, part.stop, STREAM_CHUNK):
            chunk = slice(start, min(start + STREAM_CHUNK, part.stop))
            np.multiply(c[chunk], scalar, out=tmp[: chunk.stop - chunk.start])
            np.add(b[chunk], tmp[: chunk.stop - chunk.start], out=a[chunk])

    figures = {}
    for name, body, nbytes in (("copy", copy, 8 * n), ("triad", triad, 12 * n)):
        best = float("inf")
        for _ in range(reps + 1):  # the first touches the pages
            start = time.perf_counter()
            _threaded(threads, n, body)
            best = min(best, time.perf_counter() - start)
        figures[name] = nbytes / best / 1e9
    assert a[0] == 1.0 + 3.0 * 2.0
    return figures


def build_c_stream(directory: Path) -> Path:
    """bench/cpu_stream.c, vectorized for this CPU; loops stay loops (no memcpy idiom)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise SystemExit("no C compiler (cc, gcc) for bench/cpu_stream.c")
    exe = directory / "cpu_stream"
    subprocess.run([cc, "-O3", "-march=native", "-fno-tree-loop-distribute-patterns", "-fopenmp",
                    str(STREAM_SOURCE), "-o", str(exe)], check=True, capture_output=True)
    return exe


def c_stream(exe: Path, n: int, reps: int) -> dict[str, dict[str, float]]:
    """bench/cpu_stream.c's GB/s: {"copy regular": {"1": ..., "2": ...}, ...}."""
    out = subprocess.run([str(exe), str(n), str(reps)], capture_output=True, text=True,
                         timeout=600, check=True)
    figures: dict[str, dict[str, float]] = {}
    for line in out.stdout.splitlines():
        fields = line.split()
        if fields[:1] == ["STREAM"]:
            kernel, stores, threads, gbs = fields[1:]
            figures.setdefault(f"{kernel} {stores}", {})[threads] = float(gbs)
    return figures


def last_level_cache() -> int:
    """The largest cache's size in bytes (sysfs), 0 if unknown."""
    size = 0
    for entry in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        text = entry.read_text().strip()
        scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
        size = max(size, int(text.rstrip("KM")) * scale)
    return size


# --- 2. the CUDA kernels under zmlir -----------------------------------------------------------


def nvcc() -> str:
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).exists():
            return candidate
    raise SystemExit("nvcc not found (PATH or /usr/local/cuda/bin)")


def build_cuda(directory: Path) -> Path:
    exe = directory / "cpu_kernels"
    subprocess.run([nvcc(), f"-arch={NVCC_ARCH}", "-O3", str(CUDA_SOURCE), "-o", str(exe)],
                   check=True, capture_output=True)
    return exe


def run_cuda(exe: Path, reps: int, only: list[str]) -> dict[str, float]:
    """Each kernel's best time in ms under `zmlir run`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    out = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe), str(reps),
                          *only], capture_output=True, text=True, env=env, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"zmlir run {exe.name}: exit {out.returncode}: "
                           f"{(out.stderr or out.stdout).strip()[-600:]}")
    times = {}
    for line in out.stdout.splitlines():
        fields = line.split()
        if fields[:1] == ["KERNEL"]:
            name, best, _median, verdict = fields[1:]
            if verdict != "ok":
                raise RuntimeError(f"zmlir: kernel {name} computed a wrong result")
            times[name] = float(best)
    return times


# --- 3. the same kernels as OpenCL C -----------------------------------------------------------

_EXTRA_CDEF = """
cl_program clCreateProgramWithSource(cl_context context, cl_uint count, const char **strings,
                                     const size_t *lengths, cl_int *errcode_ret);
typedef cl_int (*clSetKernelArgMemPointerINTEL_fn)(cl_kernel kernel, cl_uint arg_index,
                                                   const void *arg_value);
"""
CL_PROFILING_COMMAND_END = 0x1283


class OpenCLKernels:
    """bench/cpu_kernels.cl on the device zmlir's OpenCL backend opens (same runtime, context
    kind, in-order profiled queue and USM device allocations)."""

    def __init__(self) -> None:
        from zmlir.runtime.backends.opencl import api, device

        self.api = api
        self.ffi = api.ffi
        self.ffi.cdef(_EXTRA_CDEF)  # beside api.py's declarations, for this one process
        self.device = device.Device.open()
        self.lib = api.loader()
        address = self.lib.clGetExtensionFunctionAddressForPlatform(
            self.device.platform_id, b"clSetKernelArgMemPointerINTEL")
        self.set_pointer = self.ffi.cast("clSetKernelArgMemPointerINTEL_fn", address)
        err = self.ffi.new("cl_int *")
        source = self.ffi.new("char[]", OPENCL_SOURCE.read_bytes())
        strings = self.ffi.new("const char *[1]", [source])
        program = self.lib.clCreateProgramWithSource(self.device.context, 1, strings,
                                                     self.ffi.NULL, err)
        api.check("clCreateProgramWithSource", err[0])
        devices = self.ffi.new("cl_device_id[1]", [self.device.device_id])
        code = self.lib.clBuildProgram(program, 1, devices, b"", self.ffi.NULL, self.ffi.NULL)
        api.check("clBuildProgram", code, self.device._build_log(program))
        self.program = program

    def array(self, values: np.ndarray) -> int:
        address = self.device.alloc(values.nbytes)
        self.device.copy_to_device(address, values)
        return address

    def empty(self, count: int) -> int:
        return self.device.alloc(4 * count)

    def read(self, address: int, count: int) -> np.ndarray:
        return self.device.copy_into(address, np.empty(count, np.float32))

    def time(self, name: str, spec: Kernel, args: list[object], reps: int) -> float:
        """Best ms of `reps` launches, each between two profiled markers, after one untimed."""
        ffi, lib, api = self.ffi, self.lib, self.api
        err = ffi.new("cl_int *")
        kernel = lib.clCreateKernel(self.program, f"{name}_kernel".encode(), err)
        api.check("clCreateKernel", err[0])
        for index, arg in enumerate(args):
            if isinstance(arg, Pointer):
                code = self.set_pointer(kernel, index, ffi.cast("void *", arg.address))
            else:
                value = np.asarray(arg).tobytes()
                code = lib.clSetKernelArg(kernel, index, len(value), ffi.from_buffer(value))
            api.check("clSetKernelArg", code, f"{name} argument {index}")
        dims = len(spec.global_size)
        global_size = ffi.new("size_t[]", list(spec.global_size))
        local_size = ffi.new("size_t[]", list(spec.local_size))
        best = float("inf")
        for rep in range(reps + 1):
            start = self.device.marker()
            api.check("clEnqueueNDRangeKernel", lib.clEnqueueNDRangeKernel(
                self.device.queue, kernel, dims, ffi.NULL, global_size, local_size, 0, ffi.NULL,
                ffi.NULL))
            stop = self.device.marker()
            self.device.wait_marker(stop)
            elapsed = (self.device.marker_ns(stop) - self.device.marker_ns(start)) / 1e6
            self.device.release_marker(start)
            self.device.release_marker(stop)
            if rep:
                best = min(best, elapsed)
        lib.clReleaseKernel(kernel)
        return best


@dataclass(frozen=True)
class Pointer:
    address: int


def pattern(count: int, seed: int, low: float, high: float) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(low, high, count).astype(np.float32)


# The forms of copy and triad Intel's runtime runs best (bench/cpu_kernels.cl): name ->
# (kernel, the kernel whose work it does, global size, local size); the chunk kernel's
# work-items each copy a contiguous 1/64 of the array.
OPENCL_FORMS = {
    "copy, size_t index": ("copy_gid", "copy", None, None),
    "triad, size_t index": ("triad_gid", "triad", None, None),
    "copy, a chunk per work-item": ("copy_chunk", "copy", (64,), (1,)),
}


def run_opencl(cl: OpenCLKernels, k: dict[str, int], specs: list[Kernel], reps: int,
               only: list[str]) -> dict[str, float]:
    """Each OpenCL C kernel's best time in ms (and the forms' of OPENCL_FORMS, with the
    copy or triad measured); every result is checked."""
    by_name = {spec.name: spec for spec in specs}
    wanted = set(only or by_name)
    times: dict[str, float] = {}
    n = k["kVectorN"]
    b, c = pattern(n, 1, -1, 1), pattern(n, 2, -1, 1)
    db, dc, da = cl.array(b), cl.array(c), cl.empty(n)
    s = np.float32(3.0)
    vector_args = {"copy": [Pointer(da), Pointer(db), np.int32(n)],
                   "triad": [Pointer(da), Pointer(db), Pointer(dc), s, np.int32(n)]}
    vector_want = {"copy": b, "triad": b + s * c}
    for name in ("copy", "triad"):
        if name not in wanted:
            continue
        times[name] = cl.time(name, by_name[name], vector_args[name], reps)
        assert np.allclose(cl.read(da, n), vector_want[name], rtol=1e-6, atol=1e-6), name
        for form, (kernel, work, global_size, local_size) in OPENCL_FORMS.items():
            if work != name:
                continue
            spec = by_name[name]
            if global_size is not None:
                spec = Kernel(form, spec.kind, spec.work, spec.unit, global_size, local_size)
            cl.device.memset(da, 0, 4 * n)
            times[form] = cl.time(kernel, spec, vector_args[name], reps)
            assert np.allclose(cl.read(da, n), vector_want[name], rtol=1e-6, atol=1e-6), form
    if "reduce" in wanted:
        partial = cl.empty(k["kReduceGrid"])
        ones = np.abs(b)
        cl.device.copy_to_device(db, ones)
        times["reduce"] = cl.time("reduce", by_name["reduce"], [Pointer(partial), Pointer(db),
                                                                np.int32(n)], reps)
        got = cl.read(partial, k["kReduceGrid"]).sum(dtype=np.float64)
        want = ones.sum(dtype=np.float64)
        assert abs(got - want) <= 1e-4 * want, f"OpenCL C reduce {got} != {want}"
        cl.device.free(partial)
    for address in (da, db, dc):
        cl.device.free(address)

    if "transpose" in wanted:
        t = k["kTransposeN"]
        matrix = pattern(t * t, 3, -1, 1)
        din, dout = cl.array(matrix), cl.empty(t * t)
        times["transpose"] = cl.time("transpose", by_name["transpose"],
                                     [Pointer(dout), Pointer(din), np.int32(t)], reps)
        assert np.array_equal(cl.read(dout, t * t).reshape(t, t), matrix.reshape(t, t).T)
        cl.device.free(din)
        cl.device.free(dout)
    if "sgemm" in wanted:
        run_opencl_sgemm(cl, k, by_name, reps, times)
    if "blackscholes" in wanted:
        run_opencl_blackscholes(cl, k, by_name, reps, times)
    return times


def run_opencl_sgemm(cl: OpenCLKernels, k: dict[str, int], by_name: dict[str, Kernel],
                     reps: int, times: dict[str, float]) -> None:
    g = k["kGemmN"]
    a, bm = pattern(g * g, 4, -1, 1), pattern(g * g, 5, -1, 1)
    dga, dgb, dgc = cl.array(a), cl.array(bm), cl.empty(g * g)
    times["sgemm"] = cl.time("sgemm", by_name["sgemm"],
                             [Pointer(dgc), Pointer(dga), Pointer(dgb), np.int32(g)], reps)
    want_c = a.reshape(g, g).astype(np.float64) @ bm.reshape(g, g).astype(np.float64)
    assert np.allclose(cl.read(dgc, g * g).reshape(g, g), want_c, atol=1e-3), "OpenCL C sgemm"
    for address in (dga, dgb, dgc):
        cl.device.free(address)


def run_opencl_blackscholes(cl: OpenCLKernels, k: dict[str, int], by_name: dict[str, Kernel],
                            reps: int, times: dict[str, float]) -> None:
    o = k["kOptions"]
    inputs = [cl.array(pattern(o, 6, 5, 30)), cl.array(pattern(o, 7, 1, 100)),
              cl.array(pattern(o, 8, 0.25, 10))]
    outputs = [cl.empty(o), cl.empty(o)]
    times["blackscholes"] = cl.time(
        "blackscholes", by_name["blackscholes"],
        [*(Pointer(p) for p in outputs + inputs), np.float32(0.02), np.float32(0.30),
         np.int32(o)], reps)
    assert np.isfinite(cl.read(outputs[0], o)).all(), "OpenCL C blackscholes"
    for address in inputs + outputs:
        cl.device.free(address)


# --- the report --------------------------------------------------------------------------------


def rate(spec: Kernel, ms: float) -> float:
    return spec.work / (ms / 1e3) / 1e9


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def evaluate(specs: list[Kernel], ours: dict[str, float], theirs: dict[str, float],
             copy_bandwidth: float) -> list[dict[str, object]]:
    rows = []
    for spec in specs:
        row: dict[str, object] = {
            "kernel": spec.name, "kind": spec.kind, "unit": spec.unit,
            "global_size": spec.global_size, "local_size": spec.local_size,
            "zmlir_ms": ours[spec.name], "opencl_c_ms": theirs[spec.name],
            "zmlir_rate": rate(spec, ours[spec.name]),
            "opencl_c_rate": rate(spec, theirs[spec.name]),
            "zmlir_over_opencl_c": theirs[spec.name] / ours[spec.name],
        }
        if spec.kind == "memory":
            row["zmlir_of_copy"] = row["zmlir_rate"] / copy_bandwidth
            row["opencl_c_of_copy"] = row["opencl_c_rate"] / copy_bandwidth
            row["goal"] = f">= {MEMORY_GOAL:.0%} of copy"
            row["met"] = row["zmlir_of_copy"] >= MEMORY_GOAL
        else:
            row["goal"] = f">= {COMPUTE_GOAL}x OpenCL C"
            row["met"] = row["zmlir_over_opencl_c"] >= COMPUTE_GOAL
        rows.append(row)
    return rows


def shortfall(row: dict[str, object]) -> str:
    if row["met"]:
        return "met"
    if row["kind"] == "memory":
        have = float(row["zmlir_of_copy"])  # type: ignore[arg-type]
        return f"NOT met: {have:.0%} of copy, {MEMORY_GOAL / have:.1f}x short"
    have = float(row["zmlir_over_opencl_c"])  # type: ignore[arg-type]
    return f"NOT met: {have:.2f}x OpenCL C, {COMPUTE_GOAL / have:.1f}x short"


def print_rows(rows: list[dict[str, object]], copy_bandwidth: float) -> None:
    print(f"\nmachine copy bandwidth {copy_bandwidth:.1f} GB/s (best STREAM copy)")
    for row in rows:
        of_copy = (f"; {row['zmlir_of_copy']:.0%} of copy (OpenCL C {row['opencl_c_of_copy']:.0%})"
                   if row["kind"] == "memory" else "")
        print(f"{row['kernel']:>12}: zmlir {row['zmlir_rate']:7.2f} {row['unit']} "
              f"({row['zmlir_ms']:.2f} ms), OpenCL C {row['opencl_c_rate']:7.2f} "
              f"({row['opencl_c_ms']:.2f} ms); zmlir/OpenCL C {row['zmlir_over_opencl_c']:.2f}"
              f"{of_copy} -- goal {row['goal']}: {shortfall(row)}")


def baseline(numpy_figures: dict[str, dict[str, float]],
             c_figures: dict[str, dict[str, float]]) -> tuple[float, str]:
    """The best copy GB/s of every STREAM measurement, and which it was."""
    candidates = [(v["copy"], f"numpy copy, {threads} thread(s)")
                  for threads, v in numpy_figures.items()]
    candidates += [(gbs, f"C {kind.replace('nontemporal', 'non-temporal')} stores, "
                         f"{threads} thread(s)")
                   for kind, by_threads in c_figures.items() if kind.startswith("copy")
                   for threads, gbs in by_threads.items()]
    return max(candidates)


WHY_MARKER = "## Why"
TABLE_HEAD = "| kernel | zmlir | OpenCL C | zmlir / OpenCL C | zmlir of copy bw | goal | |"


def kept_rows(old: str, names: list[str]) -> dict[str, str]:
    """The previous report's table line of each kernel in `names`."""
    found = {}
    for line in old.splitlines():
        cells = line.split("|")
        if len(cells) > 2 and cells[1].strip() in names:
            found[cells[1].strip()] = line
    return found


def previous_run(old: str) -> str:
    for line in old.splitlines():
        if line.startswith("Run "):
            return line.split(" on ", 1)[0].removeprefix("Run ")
    return "an earlier run"


def write_markdown(path: Path, results: dict[str, object]) -> None:
    rows: list[dict[str, object]] = results["kernels"]  # type: ignore[assignment]
    numpy_figures: dict[str, dict[str, float]] = results["stream"]  # type: ignore[assignment]
    c_figures: dict[str, dict[str, float]] = results["c_stream"]  # type: ignore[assignment]
    forms: list[dict[str, object]] = results["opencl_c_forms"]  # type: ignore[assignment]
    threads = sorted(numpy_figures, key=int)
    copy_bandwidth = float(results["copy_bandwidth"])  # type: ignore[arg-type]
    regular = max(c_figures["copy regular"].values())
    old = path.read_text() if path.exists() else ""
    measured = [str(row["kernel"]) for row in rows]
    others = [str(name) for name in results["all_kernels"]  # type: ignore[attr-defined]
              if name not in measured]
    kept = kept_rows(old, others)
    lines = [
        "# CPU backend kernels against the machine (bench/cpu_kernels.py)",
        "",
        f"Run {results['when']} on {results['cpu']} ({results['cores']} cores, shared), "
        f"zmlir built from {results['built_from']}, "
        f"{results['rounds']} rounds x {results['reps']} timed launches per kernel, best time. "
        f"Load: before `{results['load_before']}`, after `{results['load_after']}`.",
        "",
        f"Machine copy bandwidth, STREAM counting (bytes read + written) over the kernels' "
        f"arrays ({results['array_bytes'] >> 20} MiB each; last-level cache "  # type: ignore[operator]
        f"{results['llc_bytes'] >> 20} MiB), best of the rounds, GB/s:",  # type: ignore[operator]
        "",
        "| | " + " | ".join(f"{t} thread(s)" for t in threads) + " |",
        "|---|" + "---|" * len(threads),
        "| numpy copy (glibc memcpy: non-temporal stores) | "
        + " | ".join(f"{numpy_figures[t]['copy']:.1f}" for t in threads) + " |",
        "| numpy triad | " + " | ".join(f"{numpy_figures[t]['triad']:.1f}" for t in threads)
        + " |",
    ]
    for kind, by_threads in c_figures.items():
        kernel, stores = kind.split()
        stores = {"regular": "ordinary", "nontemporal": "non-temporal"}[stores]
        lines.append(f"| C {kernel}, {stores} stores (bench/cpu_stream.c) | "
                     + " | ".join(f"{by_threads.get(t, 0.0):.1f}" for t in threads) + " |")
    lines += [
        "",
        f"The baseline is the best copy: **{copy_bandwidth:.1f} GB/s** "
        f"({results['copy_bandwidth_source']}). A CUDA kernel's `dst[i] = src[i]` stores are "
        f"ordinary ones, which read each destination line before writing it: the best "
        f"ordinary-store copy is {regular:.1f} GB/s ({regular / copy_bandwidth:.0%} of the "
        "baseline).",
        "",
        "zmlir: bench/cpu_kernels.cu (nvcc -arch=sm_75) under `zmlir run`, cudaEvents. "
        "OpenCL C: bench/cpu_kernels.cl, same runtime, same global/local sizes, "
        "profiled markers.",
        "",
        TABLE_HEAD,
        "|---|---|---|---|---|---|---|",
    ]
    for name in results["all_kernels"]:  # type: ignore[attr-defined]
        row = next((r for r in rows if r["kernel"] == name), None)
        if row is None:
            if name in kept:
                lines.append(kept[name])
            continue
        of_copy = (f"{row['zmlir_of_copy']:.0%} (OpenCL C {row['opencl_c_of_copy']:.0%})"
                   if row["kind"] == "memory" else "")
        lines.append(
            f"| {row['kernel']} | {row['zmlir_rate']:.2f} {row['unit']} ({row['zmlir_ms']:.1f} ms)"
            f" | {row['opencl_c_rate']:.2f} ({row['opencl_c_ms']:.1f} ms) | "
            f"{row['zmlir_over_opencl_c']:.2f} | {of_copy} | {row['goal']} | {shortfall(row)} |")
    if kept:
        lines += ["", f"Rows of {', '.join(kept)}: from the run of {previous_run(old)}, "
                      "not re-measured in this one (`--kernels`)."]
    if forms:
        lines += [
            "",
            "Intel's runtime's ceiling on this machine: the same copy and triad as OpenCL C in "
            "the forms it runs best (bench/cpu_kernels.cl), same run:",
            "",
            "| OpenCL C form | GB/s | of copy bw | against the kernel of CUDA's form |",
            "|---|---|---|---|",
        ]
        for form in forms:
            lines.append(f"| {form['form']} | {form['rate']:.2f} ({form['ms']:.1f} ms) | "
                         f"{form['of_copy']:.0%} | {form['speedup']:.2f}x |")
    why = old[old.index(WHY_MARKER):] if WHY_MARKER in old else f"{WHY_MARKER}\n\n(to write)\n"
    path.write_text("\n".join(lines) + "\n\n" + why)


def built_from() -> str:
    """The checkout the run measured: its commit, and whether the tree had changes."""
    out = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                         capture_output=True, text=True)
    described = out.stdout.strip() or "unknown"
    return (described.removesuffix("-dirty") + " plus uncommitted changes"
            if described.endswith("-dirty") else described)


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=5, help="timed launches per kernel")
    parser.add_argument("--kernels", default="",
                        help="comma-separated kernels to measure (default: all)")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "cpu_kernels.json")
    args = parser.parse_args()
    k = sizes()
    specs = kernels(k)
    only = [name for name in args.kernels.split(",") if name]
    unknown = set(only) - {spec.name for spec in specs}
    if unknown:
        parser.error(f"unknown kernels {sorted(unknown)}")
    measured = [spec for spec in specs if not only or spec.name in only]
    cores = os.cpu_count() or 1
    before = load()
    print(f"load: {before}")
    cl = OpenCLKernels()
    streams: dict[str, dict[str, float]] = {}
    c_streams: dict[str, dict[str, float]] = {}
    ours: dict[str, list[float]] = {}
    theirs: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="zmlir-cpu-kernels-") as tmp:
        exe = build_cuda(Path(tmp))
        stream_exe = build_c_stream(Path(tmp))
        for round_index in range(args.rounds):
            for threads in sorted({1, cores}):
                figures = stream(k["kVectorN"], args.reps, threads)
                best = streams.setdefault(str(threads), {"copy": 0.0, "triad": 0.0})
                for key, value in figures.items():
                    best[key] = max(best[key], value)
            for kind, by_threads in c_stream(stream_exe, k["kVectorN"], args.reps).items():
                for threads_key, gbs in by_threads.items():
                    kept = c_streams.setdefault(kind, {})
                    kept[threads_key] = max(kept.get(threads_key, 0.0), gbs)
            for name, ms in run_cuda(exe, args.reps, only).items():
                ours.setdefault(name, []).append(ms)
            for name, ms in run_opencl(cl, k, specs, args.reps, only).items():
                theirs.setdefault(name, []).append(ms)
            print(f"round {round_index + 1}: " + ", ".join(
                f"{name} {ours[name][-1]:.1f}/{theirs[name][-1]:.1f} ms" for name in ours))
    copy_bandwidth, source = baseline(streams, c_streams)
    rows = evaluate(measured, {n: min(v) for n, v in ours.items()},
                    {n: min(v) for n, v in theirs.items()}, copy_bandwidth)
    for row in rows:
        row["zmlir_ms_rounds"] = ours[str(row["kernel"])]
        row["opencl_c_ms_rounds"] = theirs[str(row["kernel"])]
        row["zmlir_ms_spread"] = (max(ours[str(row["kernel"])]) / min(ours[str(row["kernel"])])
                                  if ours[str(row["kernel"])] else 0.0)
    by_name = {spec.name: spec for spec in specs}
    forms = []
    for form, (_kernel, work, _global, _local) in OPENCL_FORMS.items():
        if form in theirs:
            ms = min(theirs[form])
            forms.append({"form": form, "ms": ms, "rate": rate(by_name[work], ms),
                          "of_copy": rate(by_name[work], ms) / copy_bandwidth,
                          "speedup": min(theirs[work]) / ms, "ms_rounds": theirs[form]})
    print_rows(rows, copy_bandwidth)
    for form in forms:
        print(f"OpenCL C {form['form']}: {form['rate']:.2f} GB/s ({form['ms']:.2f} ms), "
              f"{form['of_copy']:.0%} of copy")
    after = load()
    print(f"load: {after}")
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    old_rows = []
    if only and args.out.exists():  # the kernels not measured keep their previous figures
        previous = json.loads(args.out.read_text())
        old_rows = [dict(row, measured=row.get("measured", previous.get("when")))
                    for row in previous.get("kernels", []) if row["kernel"] not in only]
    results: dict[str, object] = {
        "when": when, "cpu": cpu_name(), "built_from": built_from(),
        "cores": cores, "rounds": args.rounds, "reps": args.reps,
        "load_before": before, "load_after": after, "sizes": k,
        "array_bytes": 4 * k["kVectorN"], "llc_bytes": last_level_cache(),
        "stream": streams, "c_stream": c_streams,
        "copy_bandwidth": copy_bandwidth, "copy_bandwidth_source": source,
        "all_kernels": [spec.name for spec in specs],
        "kernels": sorted([dict(row, measured=when) for row in rows] + old_rows,
                          key=lambda row: [spec.name for spec in specs].index(row["kernel"])),
        "opencl_c_forms": forms,
        "median_round_ratio": {n: statistics.median(theirs[n][i] / ours[n][i]
                                                     for i in range(len(ours[n])))
                               for n in ours},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    write_markdown(args.out.with_suffix(".md"), dict(results, kernels=rows))
    print(f"written to {args.out} and {args.out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
