#!/usr/bin/env python3
"""Traces our CUDA test programs under NVIDIA's real driver (issue 6).

Runs on a machine with nvcc, the NVIDIA driver and python3 with cffi (and
Python's headers), WITHOUT our virtualenv or LLVM: only the tracing modules
of the package are imported (the interposer does not need the compiler).

    python3 tools/trace_on_cuda.py OUT_DIR [--programs a,b] [--arch sm_90]

For each test/cuda/programs/*.cu (static cudart; --cudart shared too) it
writes OUT_DIR/<program>.<cudart>.nvidia.jsonl (the interposer's trace), the
program's output (.log) and OUT_DIR/summary.json (per program: exit code,
PASS, calls, distinct APIs, first failure). If a program fails with the
export tables wrapped, it is run again with ZMLIR_TRACE_TABLES=off (tables
passed through, unlogged) and both results are recorded. Compare with zmlir's
own traces later:  zmlir report OUT_DIR/x.nvidia.jsonl --compare x.zmlir.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ROOT / "test" / "cuda" / "programs"


def _import_tracing() -> None:
    """Makes `zmlir.*` importable without running zmlir/__init__ (the compiler)."""
    sys.path.insert(0, str(ROOT))
    try:
        import zmlir  # noqa: F401
    except Exception:
        for name in [m for m in sys.modules if m == "zmlir" or m.startswith("zmlir.")]:
            del sys.modules[name]
        package = types.ModuleType("zmlir")
        package.__path__ = [str(ROOT / "zmlir")]
        sys.modules["zmlir"] = package


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="directory for the traces")
    parser.add_argument("--programs", help="comma-separated program names (default: all)")
    parser.add_argument("--arch", default="sm_80", help="nvcc -arch (default sm_80, as CI)")
    parser.add_argument("--cudart", default="static", help="static, shared or static,shared")
    parser.add_argument("--real-libcuda", help="NVIDIA's libcuda.so.1 (default: searched)")
    parser.add_argument("--timeout", type=int, default=120)
    args = parser.parse_args()

    _import_tracing()
    from zmlir.trace import interposer, report

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    real = args.real_libcuda or interposer.find_real_libcuda()
    if real is None:
        print("NVIDIA's libcuda.so.1 not found; pass --real-libcuda", file=sys.stderr)
        return 1
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    libdir = out / "interposer"
    lib = interposer.build(libdir)
    info = {"real_libcuda": real, "interposer": str(lib), "python": sys.version,
            "nvcc": subprocess.run([nvcc, "--version"], capture_output=True,
                                   text=True).stdout.strip().splitlines()[-1:],
            "nvidia_smi": _smi()}
    print(json.dumps(info, indent=1), flush=True)

    names = args.programs.split(",") if args.programs else sorted(
        p.stem for p in PROGRAMS.glob("*.cu"))
    bin_dir = out / "bin"
    bin_dir.mkdir(exist_ok=True)
    summary: dict[str, dict] = {"_info": info}
    for name in names:
        for cudart in args.cudart.split(","):
            exe = bin_dir / f"{name}.{cudart}"
            build = subprocess.run([nvcc, f"-arch={args.arch}", f"-cudart={cudart}",
                                    f"-I{PROGRAMS}", str(PROGRAMS / f"{name}.cu"), "-o",
                                    str(exe)], capture_output=True, text=True)
            key = f"{name}.{cudart}"
            if build.returncode != 0:
                summary[key] = {"build_error": build.stderr[-2000:]}
                print(f"{key}: nvcc failed", flush=True)
                continue
            entry = summary[key] = {}
            for mode in ("wrap", "off"):
                trace = out / (f"{key}.nvidia.jsonl" if mode == "wrap"
                               else f"{key}.nvidia.tables-off.jsonl")
                env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(
                    p for p in (str(libdir), os.environ.get("LD_LIBRARY_PATH", "")) if p),
                    ZMLIR_REAL_LIBCUDA=real, ZMLIR_TRACE_INTERPOSER=str(trace),
                    ZMLIR_TRACE_TABLES=mode)
                try:
                    run = subprocess.run([str(exe)], capture_output=True, text=True, env=env,
                                         timeout=args.timeout)
                    rc, text = run.returncode, run.stdout + run.stderr
                except subprocess.TimeoutExpired as err:
                    rc, text = "timeout", f"{err.stdout or ''}{err.stderr or ''}"
                (out / f"{trace.stem}.log").write_text(str(text))
                result = {"rc": rc, "pass": "PASS" in str(text)}
                if trace.exists():
                    s = report.summarize(report.load(trace))
                    result.update(calls=s.calls, distinct_apis=s.distinct_apis,
                                  first_failure=s.first_failure, not_supported=s.not_supported,
                                  malformed=len(s.malformed))
                entry[mode] = result
                print(f"{key} [{mode}]: {json.dumps(result)}", flush=True)
                if result["pass"] and rc == 0:
                    break
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    ok = all(v.get("wrap", {}).get("pass") for k, v in summary.items() if k != "_info")
    print(f"traces in {out}; all passed with tables wrapped: {ok}")
    return 0 if ok else 1


def _smi() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                               "--format=csv,noheader"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "nvidia-smi not available"


if __name__ == "__main__":
    sys.exit(main())
