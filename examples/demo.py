"""zmlir demo (`make demo`).

1. Unmodified CUDA programs, built by NVIDIA's nvcc (static cudart), run on
   the CPU through zmlir's libcuda.so.1: `zmlir run -- ./program`. Our test
   programs (test/cuda/programs/: streams, graphs, textures, printf, ...), and
   programs linked with -lcublas, -lcublasLt and -lcufft that find our
   libraries (zmlir/libraries/) and check every call against a host reference
   (test/libraries/). nvcc builds them a few at a time while the ones built
   run, one after another.
2. Our CUDA kernels, compiled by nvcc to PTX, then by zmlir to SPIR-V, AMDGPU
   (HSACO), NVPTX and the host CPU (x86-64); each target's output validated by
   its own tool, then run against numpy twice on this CPU: the SPIR-V on
   Intel's OpenCL runtime, and the host target's library with its CUDA
   threads as fibers (no OpenCL underneath).

Every line comes from a run; a program that fails or a kernel that does not
match is counted, and either makes the exit status 1. The JIT cache is the
one `zmlir run` always uses (~/.cache/zmlir): a second demo reuses it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "test"))

from support.cuda_cases import CASES, compile_ptx, run_launch  # noqa: E402
from support.programs import CPU_PENDING, nvcc_arguments, programs  # noqa: E402

import zmlir  # noqa: E402
from zmlir.libraries.build import nvidia_wheel_dir  # noqa: E402
from zmlir.runtime.backends.opencl.device import Device  # noqa: E402
from zmlir.runtime.cuda.build import library_dir  # noqa: E402
from zmlir.targets.host.runner import HostDevice  # noqa: E402
from zmlir.toolchain import llvm_tool  # noqa: E402

TARGETS = ["spirv", "nvptx:sm_80", "amdgpu:gfx90a", "amdgpu:gfx942", "amdgpu:gfx1100", "host"]
LIBRARIES = REPO / "test" / "libraries"
# Library programs: source, the header that finds NVIDIA's wheel (its headers), link flags.
LIBRARY_PROGRAMS = [
    ("cublas/cublas_api.cu", "cublas_api.h", ["-lcublas", "-lcublasLt"]),
    ("cublas/cublas_level123.cu", "cublas_api.h", ["-lcublas", "-lcublasLt"]),
    ("cublas/cublaslt_matmul.cu", "cublas_api.h", ["-lcublas", "-lcublasLt"]),
    ("cufft/cufft_api.cu", "cufft.h", ["-lcufft"]),
]
# nvcc runs at a time: a few, not one per core, since the programs run meanwhile.
BUILD_JOBS = min(4, max(2, os.cpu_count() or 2))
RUN_TIMEOUT = 300


def _tool(name: str) -> str | None:
    return shutil.which(name) or llvm_tool(name)


@dataclass
class Build:
    name: str
    nvcc: list[str]  # nvcc's arguments but -o
    checks: bool = False  # prints a PASS/FAIL line per library call it checks
    skipped: str = ""  # why it is not built here


@dataclass
class Built:
    build: Build
    exe: Path
    seconds: float
    error: str = ""


def _builds() -> list[Build]:
    """Our test programs, as the tests build them (a folder's nvcc_flags,
    e.g. -rdc=true), then the library programs."""
    found = [Build(p.name, ["-arch=sm_80", *nvcc_arguments(p)]) for p in programs()]
    libdir = library_dir()
    for source, header, link in LIBRARY_PROGRAMS:
        path = LIBRARIES / source
        wheel = nvidia_wheel_dir(header)
        missing = [f"lib{flag[2:]}.so" for flag in link
                   if not list(libdir.glob(f"lib{flag[2:]}.so.*"))]
        why = ("NVIDIA's headers are not installed" if wheel is None
               else f"ours is not built ({', '.join(missing)})" if missing else "")
        found.append(Build(path.stem, ["-arch=sm_80", f"-I{wheel / 'include'}" if wheel else "",
                                       str(path), f"-L{libdir}", *link],
                           checks=True, skipped=why))
    return found


def _build(build: Build, nvcc: str, out: Path) -> Built:
    exe = out / build.name
    start = time.perf_counter()
    done = subprocess.run([nvcc, *filter(None, build.nvcc), "-o", str(exe)],
                          capture_output=True, text=True)
    error = "" if done.returncode == 0 else done.stderr.strip()[-200:]
    return Built(build, exe, time.perf_counter() - start, error)


def _outcome(built: Built) -> tuple[str, str]:
    """Runs the program under `zmlir run`: the line to print, and "passed",
    "waived", "pending" (a failure test/support/programs.py expects) or
    "failed"."""
    line, status = _run_outcome(built)
    pending = CPU_PENDING.get(built.build.name)
    if pending is None:
        return line, status
    if status == "failed":
        return f"failed as expected ({pending})", "pending"
    return f"{line}, but it is listed as failing ({pending})", "failed"


def _run_outcome(built: Built) -> tuple[str, str]:
    start = time.perf_counter()
    try:
        run = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(built.exe)],
                             capture_output=True, text=True, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return f"FAILED: still running after {RUN_TIMEOUT} s", "failed"
    seconds = time.perf_counter() - start
    if built.build.checks:
        passed = len(re.findall(r"^PASS ", run.stdout, re.M))
        failed = re.findall(r"^FAIL (.*)$", run.stdout, re.M)
        if run.returncode == 0 and passed and not failed:
            return f"PASS: {passed} calls checked ({seconds:.1f} s)", "passed"
        reason = failed[0] if failed else run.stderr.strip()[-200:]
        return f"FAILED (exit {run.returncode}, {len(failed)} of {passed + len(failed)} " \
               f"calls): {reason}", "failed"
    output = (run.stdout.strip().splitlines() or [""])[-1]
    if run.returncode == 0 and output == "PASS":
        return f"PASS ({seconds:.1f} s)", "passed"
    if run.returncode == 2 and output.startswith("WAIVED: "):
        return output, "waived"  # EXIT_WAIVED: the program found the CPU lacks what it needs
    reason = next((line for line in run.stderr.splitlines() if "error" in line),
                  run.stderr.strip()[-200:])
    return f"FAILED (exit {run.returncode}): {reason}", "failed"


def run_programs(tmp: Path) -> dict[str, int]:
    """Builds each program with plain nvcc and runs it under `zmlir run`:
    how many passed, were waived, failed."""
    nvcc = _tool("nvcc")
    builds = _builds()
    print(f"== {len(builds)} unmodified nvcc-built programs on the CPU "
          f"(zmlir run -- ./program; nvcc builds {BUILD_JOBS} at a time)")
    if nvcc is None:
        print("  nvcc is not installed: no programs")
        return {"failed": 1}
    width = max(len(b.name) for b in builds)
    counts = {"passed": 0, "waived": 0, "pending": 0, "failed": 0}
    start = time.perf_counter()
    build_seconds = run_seconds = 0.0
    with ThreadPoolExecutor(BUILD_JOBS) as pool:
        pending: list[tuple[Build, Future[Built] | None]] = [
            (b, None if b.skipped else pool.submit(_build, b, nvcc, tmp)) for b in builds]
        for build, future in pending:
            if future is None:
                print(f"  {build.name:{width}s}  not run: {build.skipped}")
                continue
            built = future.result()
            build_seconds += built.seconds
            if built.error:
                line, status = f"nvcc failed: {built.error}", "failed"
            else:
                began = time.perf_counter()
                line, status = _outcome(built)
                run_seconds += time.perf_counter() - began
            print(f"  {build.name:{width}s}  {line}")
            counts[status] += 1
    print(f"  {_said(counts)} in {time.perf_counter() - start:.0f} s: the runs "
          f"{run_seconds:.0f} s, beside them nvcc's builds ({build_seconds:.0f} s in all)\n")
    return counts


def _said(counts: dict[str, int]) -> str:
    said = {"pending": "known to fail"}
    return ", ".join(f"{n} {said.get(status, status)}" for status, n in counts.items()
                     if n or status not in ("waived", "pending"))


def _validate(target: str, binary: bytes, tmp: Path) -> str:
    """Runs the target's own validator; returns 'ok' or what failed."""
    path = tmp / "out.bin"
    path.write_bytes(binary)
    if target == "spirv":
        cmd = [_tool("spirv-val"), str(path)]
    elif target.startswith("nvptx"):
        if _tool("ptxas") is None:
            return "built"
        cmd = [_tool("ptxas"), f"-arch={target.split(':')[1]}", str(path), "-o",
               str(tmp / "out.cubin")]
    else:
        cmd = [_tool("llvm-readelf-22") or _tool("llvm-readelf"), "--notes", str(path)]
    result = subprocess.run(cmd, capture_output=True, text=True)
    return "ok" if result.returncode == 0 else f"FAILED: {result.stderr.strip()[:200]}"


def run_compiler(tmp: Path) -> int:
    """Each kernel to every target, validated, run on this CPU twice against
    numpy: the number of failures."""
    start = time.perf_counter()
    print("== the compiler: each kernel to every target, run on this CPU against numpy")
    failures = 0
    device = Device.open()
    host = HostDevice()
    print(f"zmlir {zmlir.__version__}: CPU device '{device.name}'")
    print(f"targets: {', '.join(TARGETS)}  (validated by spirv-val, ptxas, llvm-readelf)\n")
    for case in CASES.values():
        ptx_path = compile_ptx(case, tmp)
        ptx = ptx_path.read_text()
        compiled = []
        modules = {}
        for target in TARGETS:
            began = time.perf_counter()
            module = zmlir.compile_module(ptx, target, filename=ptx_path.name)
            ms = (time.perf_counter() - began) * 1000
            status = _validate(target, module.binary, tmp)
            failures += status.startswith("FAILED")
            compiled.append(f"{target} {status} ({ms:.0f} ms)")
            modules[target] = module
        runs = {}
        for label, dev, program in (
                ("SPIR-V on OpenCL", device, device.load_spirv(modules["spirv"].binary)),
                ("host target", host, host.load(modules["host"].binary))):
            info = modules["spirv" if dev is device else "host"].kernels[case.kernel]
            results = []
            for size in case.sizes:
                launch = case.launch_for(size)
                try:
                    launch.check(run_launch(dev, program.kernel(case.kernel), launch,
                                            info.static_shared_bytes))
                    results.append(f"{size}: match")
                except AssertionError as err:
                    failures += 1
                    results.append(f"{size}: MISMATCH ({str(err).splitlines()[0]})")
            runs[label] = results
        print(f"{case.name} ({case.source.name}, kernel {case.kernel})")
        print(f"  compiled: {'; '.join(compiled)}")
        for label, results in runs.items():
            print(f"  {label} vs numpy: {', '.join(results)}")
    device.close()
    print(f"  ({time.perf_counter() - start:.0f} s)\n")
    return failures


def main() -> int:
    sys.stdout.reconfigure(line_buffering=True)  # progress shows in a log too
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="zmlir-demo-") as tmp_name:
        programs_run = run_programs(Path(tmp_name))
    with tempfile.TemporaryDirectory(prefix="zmlir-demo-") as tmp_name:
        failures = run_compiler(Path(tmp_name))
    minutes, seconds = divmod(round(time.perf_counter() - start), 60)
    print(f"kernels: {'all matched' if not failures else f'{failures} FAILURES'}; "
          f"programs: {_said(programs_run)}; "
          f"the demo took {minutes} min {seconds} s")
    return 1 if failures or programs_run.get("failed") else 0


if __name__ == "__main__":
    sys.exit(main())
