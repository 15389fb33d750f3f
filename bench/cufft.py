"""cuFFT throughput on this CPU: oneMKL's DFTI called directly, and through
our libcufft (cufftExec* under `zmlir run`), with the ratio between the two.

  python bench/cufft.py [--reps 10] [--rounds 3] [--processes 3] [--fftw]
      [--sequential] [--json bench/results/cufft.json]

Both run the transforms of cufft_cases.h (single precision, out of place,
forward), `reps` back to back, best of `rounds`; each program is run
--processes times alternately (direct, ours, direct, ...) and the best kept:
on a shared machine a run during another job's burst does not decide. Ours is
cufft_exec.cu, built with nvcc and linked with -lcufft, its device memory host
memory on the OpenCL CPU backend; the direct one is host_fft.c. --fftw also
measures FFTW3 (libfftw3-dev: ESTIMATE and MEASURE plans), the comparison
zmlir/libraries/build.py's choice of host FFT rests on; --sequential runs
oneMKL on one thread (MKL_THREADING_LAYER=SEQUENTIAL), as FFTW runs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _build(tmp: Path, fftw: bool) -> tuple[Path, Path]:
    from zmlir.libraries.build import mkl_dirs, nvidia_wheel_dir

    wheel, mkl = nvidia_wheel_dir("cufft.h"), mkl_dirs()
    if wheel is None or mkl is None:
        sys.exit("bench/cufft.py needs the nvidia-cufft wheel and oneMKL (make bootstrap)")
    libdir = subprocess.run([sys.executable, "-m", "zmlir.cli", "libdir"], check=True,
                            capture_output=True, text=True).stdout.strip()
    ours, direct = tmp / "cufft_exec", tmp / "host_fft"
    subprocess.run(["nvcc", "-O2", "-arch=sm_80", f"-I{wheel / 'include'}", f"-I{HERE}",
                    str(HERE / "cufft_exec.cu"), "-o", str(ours), f"-L{libdir}", "-lcufft"],
                   check=True)
    include, lib = mkl
    subprocess.run(["cc", "-O2", f"-I{include}", str(HERE / "host_fft.c"), "-o", str(direct),
                    str(lib / "libmkl_rt.so.3"), "-Wl,--no-as-needed", str(lib / "libtbb.so.12"),
                    f"-Wl,-rpath,{lib}",
                    *(["-DWITH_FFTW", "-lfftw3f"] if fftw else []), "-lm"], check=True)
    return ours, direct


def _rows(command: list[str]) -> list[list[str]]:
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return [line.split() for line in out.splitlines() if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--fftw", action="store_true", help="also measure FFTW3")
    parser.add_argument("--sequential", action="store_true", help="oneMKL on one thread")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    # Ours threads through TBB (zmlir/libraries/cufft/cufft.c); so does the direct call.
    os.environ["MKL_THREADING_LAYER"] = "SEQUENTIAL" if args.sequential else "TBB"
    best: dict[tuple[str, str], dict[str, float]] = {}

    def keep(library: str, case: str, plan_ms: str, exec_ms: str) -> None:
        row = best.setdefault((library, case), {"plan_ms": 1e30, "ms": 1e30})
        row["plan_ms"] = min(row["plan_ms"], float(plan_ms))
        row["ms"] = min(row["ms"], float(exec_ms))

    with tempfile.TemporaryDirectory(prefix="zmlir-cufft-") as tmp:
        ours, direct = _build(Path(tmp), args.fftw)
        reps = [str(args.reps), str(args.rounds)]
        for _ in range(args.processes):
            for library, case, plan_ms, exec_ms in _rows([str(direct), *reps]):
                keep(library, case, plan_ms, exec_ms)
            for case, plan_ms, exec_ms in _rows([sys.executable, "-m", "zmlir.cli", "run", "--",
                                                 str(ours), *reps]):
                keep("cufft_ours", case, plan_ms, exec_ms)
    cases = sorted({case for _, case in best}, key=lambda c: list(best).index(("mkl", c)))
    results = []
    for case in cases:
        row: dict[str, str | float] = {"case": case}
        for (library, c), v in best.items():
            if c == case:
                row[f"{library}_ms"] = round(v["ms"], 3)
                row[f"{library}_plan_ms"] = round(v["plan_ms"], 2)
        row["ratio"] = round(best[("mkl", case)]["ms"] / best[("cufft_ours", case)]["ms"], 3)
        results.append(row)
        print("  ".join(f"{k} {v}" for k, v in row.items()), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"cpus": os.cpu_count(), "threading": os.environ["MKL_THREADING_LAYER"],
             "reps": args.reps, "rounds": args.rounds, "processes": args.processes,
             "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
