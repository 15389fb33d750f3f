"""NVIDIA's own libcurand.so.10 (the nvidia-curand wheel) on our CPU backend,
unmodified: libcurand keeps its kernels as SASS-only images per architecture
and its PTX apart, and `zmlir run` tells it an architecture it has no SASS
for, so that it loads its PTX (runtime/cuda/arch_preload.c). Our program
(curand/curand_host.cu) runs every generator and distribution of the host
API and the device API; it checks statistics, repeatability and the host
API's XORWOW against the device API's itself, and its whole output is
compared with an H200's (curand/curand_host.h200.txt): raw bits, uniform,
Poisson and the device API's uniform and bits bit for bit; normal and
log-normal within 1e-5 (.approx instructions, docs/driver-differences.md)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import tool

pytest.importorskip("zmlir.runtime.backends.opencl.device")

SOURCES = Path(__file__).resolve().parent / "curand"
PROGRAM = SOURCES / "curand_host.cu"
RECORDED = SOURCES / "curand_host.h200.txt"  # H200, CUDA 13.0's libcurand, 2026-12-02


@pytest.fixture(scope="module")
def wheel() -> Path:
    from zmlir.libraries import build

    folder = build.nvidia_wheel_dir("curand.h")
    if folder is None or not (folder / "lib" / "libcurand.so.10").exists():
        pytest.skip("NVIDIA's libcurand is not installed (the nvidia-curand wheel)")
    return folder


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    exe = tmp_path_factory.mktemp("curand") / "curand_host"
    subprocess.run([tool("nvcc"), "-arch=sm_75", f"-I{wheel / 'include'}", str(PROGRAM),
                    "-o", str(exe), f"-L{wheel / 'lib'}", "-l:libcurand.so.10"],
                   check=True, capture_output=True)
    return exe


@pytest.fixture(scope="module")
def result(program: Path, wheel: Path) -> subprocess.CompletedProcess[str]:
    library_path = os.pathsep.join(p for p in (str(wheel / "lib"),
                                               os.environ.get("LD_LIBRARY_PATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(program)],
                          capture_output=True, text=True, timeout=1200,
                          env={**os.environ, "LD_LIBRARY_PATH": library_path, "ZMLIR_LOG": "1"})


def test_every_generator_runs_and_checks_out(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0 and result.stdout.endswith("PASSED\n"), \
        result.stdout + result.stderr[-4000:]
    assert not re.search(r"^FAIL", result.stdout, re.M)
    for generator in ("XORWOW", "PHILOX4_32_10", "MRG32K3A", "MTGP32", "SOBOL32",
                      "device XORWOW", "device PHILOX"):
        assert re.search(rf"^{generator}$", result.stdout, re.M), generator
    # Every distribution and precision of every generator printed its checksum.
    assert len(re.findall(r"^  \S.* fnv [0-9a-f]{16}", result.stdout, re.M)) == 5 * 8 + 4 + 2 * 3
    assert "Traceback" not in result.stderr


def test_libcurand_is_told_an_architecture_it_has_no_sass_for(
        result: subprocess.CompletedProcess[str]) -> None:
    assert re.search(r"libcurand\.so\.10 keeps machine code an sm_89 device runs in images "
                     r"without PTX .*told compute capability 8\.1", result.stderr), \
        result.stderr[-4000:]


def test_without_zmlir_run_libcurand_fails_and_says_why(program: Path, wheel: Path,
                                                        libdir: str) -> None:
    """Our libcuda.so.1 alone: libcurand loads its sm_80 SASS, which has no
    kernel we run; curandCreateGenerator fails (203, as NVIDIA's library
    answers) and the driver says once what `zmlir run` would change."""
    env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join((libdir, str(wheel / "lib"))))
    env.pop("LD_PRELOAD", None)
    alone = subprocess.run([str(program)], capture_output=True, text=True, timeout=600, env=env)
    assert alone.returncode != 0
    assert "FAIL XORWOW: no generator" in alone.stdout, alone.stdout
    assert alone.stderr.count("NVIDIA machine code only") == 1, alone.stderr
    assert "loads its PTX when the program runs under `zmlir run`" in alone.stderr


# Kinds whose values go through .approx instructions (sin/cos/lg2.approx.f32
# in Box-Muller; in double, log's division starts from rcp.approx.ftz.f64):
# ours are within the PTX ISA's bounds, not the H200's MUFU bit for bit
# (docs/fidelity.md), so their samples compare within a tolerance and their
# checksums not at all.
APPROXIMATE = {"normal", "lognormal", "normal double", "lognormal dbl", "curand_normal"}
SAMPLE = re.compile(r"^  (\S+(?: \S+)?)\s+fnv ([0-9a-f]{16})  (.*)$")


def test_output_is_the_h200s(result: subprocess.CompletedProcess[str]) -> None:
    """Every line equal to the H200's (libcurand's version line aside: the
    H200's toolkit carries 10.4.0), but the samples of the kinds in
    APPROXIMATE, which agree to 1e-5."""
    ours = [line for line in result.stdout.splitlines() if not line.startswith("cuRAND ")]
    theirs = [line for line in RECORDED.read_text().splitlines()
              if not line.startswith("cuRAND ")]
    assert len(ours) == len(theirs), result.stdout
    approximate = 0
    for mine, h200 in zip(ours, theirs, strict=True):
        a, b = SAMPLE.match(mine), SAMPLE.match(h200)
        if a and b and a.group(1) == b.group(1) and a.group(1) in APPROXIMATE:
            approximate += 1
            for x, y in zip(map(float, a.group(3).split()), map(float, b.group(3).split()),
                            strict=True):
                assert abs(x - y) <= 1e-5 * max(1.0, abs(y)), (mine, h200)
        else:
            assert mine == h200
    assert approximate == 5 * 4 + 2
