"""zmlir demo.

1. Unmodified CUDA programs, built by NVIDIA's nvcc (static cudart), run on
   the CPU through zmlir's libcuda.so.1: `zmlir run -- ./program`.
2. Our CUDA kernels, compiled by nvcc to PTX, then by zmlir to SPIR-V, AMDGPU
   (HSACO), NVPTX and the host CPU (x86-64); each target's output validated by
   its own tool, then run against numpy twice on this CPU: the SPIR-V on
   Intel's OpenCL runtime, and the host target's library with its CUDA
   threads as fibers (no OpenCL underneath)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "test"))

from support.cuda_cases import CASES, compile_ptx, run_launch  # noqa: E402
from support.programs import nvcc_arguments, programs  # noqa: E402

import zmlir  # noqa: E402
from zmlir.runtime.backends.opencl.device import Device  # noqa: E402
from zmlir.targets.host.runner import HostDevice  # noqa: E402
from zmlir.toolchain import llvm_tool  # noqa: E402

TARGETS = ["spirv", "nvptx:sm_80", "amdgpu:gfx90a", "amdgpu:gfx942", "amdgpu:gfx1100", "host"]


def _tool(name: str) -> str | None:
    return shutil.which(name) or llvm_tool(name)


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


def run_programs(tmp: Path) -> int:
    """Builds each test program with plain nvcc and runs it under `zmlir run`."""
    failures = 0
    print("== unmodified nvcc-built programs on the CPU (zmlir run -- ./program)")
    # Built as the tests build them (a folder's nvcc_flags, e.g. -rdc=true).
    for program in programs():
        exe = tmp / program.name
        build = subprocess.run([_tool("nvcc") or "nvcc", "-arch=sm_80",
                                *nvcc_arguments(program), "-o", str(exe)],
                               capture_output=True, text=True)
        if build.returncode != 0:
            print(f"  {program.name:18s} nvcc failed: {build.stderr.strip()[:200]}")
            failures += 1
            continue
        start = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                             capture_output=True, text=True, timeout=600)
        seconds = time.perf_counter() - start
        output = (run.stdout.strip().splitlines() or [""])[-1]
        if run.returncode == 0 and output == "PASS":
            print(f"  {program.name:18s} PASS ({seconds:.1f} s)")
        elif run.returncode == 2 and output.startswith("WAIVED: "):
            # EXIT_WAIVED: the program found the CPU lacks what it needs.
            print(f"  {program.name:18s} {output}")
        else:
            reason = next((line for line in run.stderr.splitlines() if "error" in line),
                          run.stderr.strip()[-200:])
            print(f"  {program.name:18s} FAILED (exit {run.returncode}): {reason}")
            failures += 1
    print()
    return failures


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="zmlir-demo-") as tmp_name:
        program_failures = run_programs(Path(tmp_name))
    print("== the compiler: each kernel to every target, run on this CPU against numpy")
    failures = 0
    device = Device.open()
    host = HostDevice()
    print(f"zmlir {zmlir.__version__}: CPU device '{device.name}'")
    print(f"targets: {', '.join(TARGETS)}  (validated by spirv-val, ptxas, llvm-readelf)\n")
    with tempfile.TemporaryDirectory(prefix="zmlir-demo-") as tmp_name:
        tmp = Path(tmp_name)
        for case in CASES.values():
            ptx_path = compile_ptx(case, tmp)
            ptx = ptx_path.read_text()
            compiled = []
            modules = {}
            for target in TARGETS:
                start = time.perf_counter()
                module = zmlir.compile_module(ptx, target, filename=ptx_path.name)
                ms = (time.perf_counter() - start) * 1000
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
    print(f"\nkernels: {'all matched' if not failures else f'{failures} FAILURES'}; "
          f"programs: {'all passed' if not program_failures else f'{program_failures} failed'}")
    # A program waiting on a compiler feature is reported above, not fatal.
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
