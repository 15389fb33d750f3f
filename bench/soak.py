"""Soak benchmark: the driver's costs over a long life (bench/soak.c).

    python bench/soak.py [--streams N] [--modules N] [--allocations N] [--out FILE]
        Builds soak.c against our libcuda.so.1 and runs it under `zmlir run`
        on the default backend. Each phase's figures are printed as ratios to
        its first checkpoint, measured in the same run: flat lines (ratio ~1)
        are the goal. Results: bench/results/soak.json.

    python3 bench/soak.py --real-driver [--out FILE]
        The same program on NVIDIA's driver (the H200), for comparison.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# What each phase measures, and the figure whose growth matters.
FIGURES = {"streams": "launch_us", "modules": "rss_kib", "allocations": "alloc_free_us"}


def cuda_include() -> str:
    for root in ("/usr/local/cuda/include", "/usr/local/cuda-13.0/include"):
        if (Path(root) / "cuda.h").exists():
            return root
    raise SystemExit("cuda.h not found (/usr/local/cuda/include)")


def build(directory: Path, libdir: str | None) -> Path:
    exe = directory / "soak"
    link = [f"-L{libdir}"] if libdir else []
    subprocess.run([shutil.which("cc") or "gcc", "-O2", f"-I{cuda_include()}", str(HERE / "soak.c"),
                    "-o", str(exe), *link, "-lcuda"], check=True)
    return exe


def run(real_driver: bool, streams: int, modules: int, allocations: int) -> list[dict]:
    libdir = None if real_driver else subprocess.run(
        [sys.executable, "-m", "zmlir.cli", "libdir"], capture_output=True, text=True,
        check=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="zmlir-soak-") as tmp:
        exe = build(Path(tmp), libdir)
        cmd = [str(exe), str(streams), str(modules), str(allocations)]
        if not real_driver:
            cmd = [sys.executable, "-m", "zmlir.cli", "run", "--", *cmd]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if out.returncode != 0:
        raise SystemExit(f"soak failed ({out.returncode}):\n{out.stdout}\n{out.stderr}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def report(rows: list[dict]) -> None:
    for phase, figure in FIGURES.items():
        points = [r for r in rows if r["phase"] == phase]
        if not points:
            continue
        base = points[0][figure] or 1
        print(f"{phase}: {figure} against the count (ratio to the first checkpoint)")
        for p in points:
            print(f"  {p['count']:>8}  {p[figure]:>10.3f}  x{p[figure] / base:.2f}")
    for r in rows:
        if r["phase"] == "freed":
            print(f"all {r['count']} allocations freed: RSS {r['rss_kib']} KiB, "
                  f"{r['rss_kib'] - r['rss_before_kib']:+d} KiB since before they were made")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--real-driver", action="store_true")
    parser.add_argument("--streams", type=int, default=10000)
    parser.add_argument("--modules", type=int, default=100)
    parser.add_argument("--allocations", type=int, default=100000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    rows = run(args.real_driver, args.streams, args.modules, args.allocations)
    report(rows)
    out = args.out or REPO / "bench" / "results" / (
        "h200/soak_nvidia.json" if args.real_driver else "soak.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"driver": "nvidia" if args.real_driver else "zmlir",
                               "rows": rows}, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
