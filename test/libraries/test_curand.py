"""NVIDIA's own libcurand.so.10 (the nvidia-curand wheel) on our CPU backend,
unmodified: libcurand keeps its kernels as SASS-only images per architecture
and its PTX apart, and `zmlir run` tells it an architecture it has no SASS
for, so that it loads its PTX (runtime/cuda/arch_preload.c). Our program
(curand/curand_host.cu) runs every generator and distribution of the host
API and the device API; it checks statistics, repeatability and the host
API's XORWOW against the device API's itself, and its whole output is
compared with an H200's where one is recorded (curand/curand_host.h200.txt)."""

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
RECORDED = SOURCES / "curand_host.h200.txt"


@pytest.fixture(scope="module")
def wheel() -> Path:
    from zmlir.libraries import build

    folder = build.nvidia_wheel_dir("curand.h")
    if folder is None or not (folder / "lib" / "libcurand.so.10").exists():
        pytest.skip("NVIDIA's libcurand is not installed (the nvidia-curand wheel)")
    return folder


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory, wheel: Path,
           libdir: str) -> subprocess.CompletedProcess[str]:
    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    exe = tmp_path_factory.mktemp("curand") / "curand_host"
    subprocess.run([tool("nvcc"), "-arch=sm_75", f"-I{wheel / 'include'}", str(PROGRAM),
                    "-o", str(exe), f"-L{wheel / 'lib'}", "-l:libcurand.so.10"],
                   check=True, capture_output=True)
    library_path = os.pathsep.join(p for p in (str(wheel / "lib"),
                                               os.environ.get("LD_LIBRARY_PATH", "")) if p)
    return subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
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
    assert re.search(r"libcurand\.so\.10 keeps sm_80 machine code in images without PTX .*"
                     r"told compute capability 8\.1", result.stderr), result.stderr[-4000:]


def test_output_is_the_h200s(result: subprocess.CompletedProcess[str]) -> None:
    if not RECORDED.exists():
        pytest.skip("no H200 output recorded yet (curand/curand_host.h200.txt)")
    # libcurand's version line aside (the H200's toolkit may carry another).
    def lines(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith("cuRAND ")]

    assert lines(result.stdout) == lines(RECORDED.read_text())
