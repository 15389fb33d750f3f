"""Our libcufft.so.12 (zmlir/libraries/cufft/) on the CPU: our own CUDA
program (test/libraries/cufft/cufft_api.cu), built with nvcc against NVIDIA's
cufft.h and linked with -lcufft as any application is, checks every transform
against a direct DFT and prints PASS/FAIL per case; the route on a backend we
do not serve; the exports."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import tool

pytest.importorskip("zmlir.runtime.backends.opencl.device")

SOURCE = Path(__file__).resolve().parent / "cufft" / "cufft_api.cu"
SONAME = "libcufft.so.12"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, libdir: str) -> Path:
    from zmlir.libraries import build

    if tool("nvcc") is None:
        pytest.skip("nvcc is not installed")
    wheel = build.nvidia_wheel_dir("cufft.h")
    if wheel is None or not (Path(libdir) / SONAME).exists():
        pytest.skip("our cuFFT is not built (needs the nvidia-cufft wheel's headers)")
    exe = tmp_path_factory.mktemp("cufft") / SOURCE.stem
    subprocess.run([tool("nvcc"), "-arch=sm_80", f"-I{wheel / 'include'}", str(SOURCE), "-o",
                    str(exe), f"-L{libdir}", "-lcufft"], check=True, capture_output=True)
    return exe


def _run(exe: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe), *args],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env})


def test_cufft_transforms_match_the_direct_dft(built: Path) -> None:
    result = _run(built, "unsupported")
    passed = re.findall(r"^PASS (.+)$", result.stdout, re.M)
    failed = re.findall(r"^FAIL (.+)$", result.stdout, re.M)
    assert not failed and result.returncode == 0, result.stdout + result.stderr
    # Every case ran: 14 single, 5 double, the made plan, the stream, the graph,
    # 2 Xt, 6 statuses, 6 of cufftXtSetGPUs, the unsupported call.
    assert len(passed) >= 37, result.stdout
    for case in ("R2C 1-D n=16 batch 2 in place (padded)", "C2R 2-D 6x9 in place (padded)",
                 "R2C 2-D advanced embeds batch 2", "Z2D 3-D 4x6x8 in place (padded)",
                 "stream order: kernel, C2C, copy in one stream",
                 "graph: a captured C2C replayed twice", "cufftXtExec D2Z batched",
                 "cufftPlan1d nx=0 is CUFFT_INVALID_SIZE",
                 "cufftXtSetGPUs of one GPU is CUFFT_INVALID_VALUE",
                 "cufftXtSetGPUs of a device past the last is CUFFT_INVALID_DEVICE",
                 "unsupported: cufftXtSetGPUs is CUFFT_NOT_SUPPORTED"):
        assert case in passed
    # The plan we do not make was named once on stderr.
    assert result.stderr.count("cufftXtSetGPUs") == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_nvidias_cufft_runs_on_our_driver(built: Path, libdir: str) -> None:
    """NVIDIA's own libcufft.so.12 (the nvidia-cufft wheel's) on our driver on
    the CPU, as under the CUDA passthrough: it loads each kernel as a module
    of its PTX, which we compile. Its first plan answered
    CUFFT_INTERNAL_ERROR until our driver answered the table it finds a
    module's function with (MODULE_FUNCTIONS, 6e163fbe-...), TOOLS_CONTEXT's
    context id and CU_POINTER_ATTRIBUTE_BUFFER_ID."""
    from zmlir.libraries import build

    nvidia = build.nvidia_wheel_dir("cufft.h") / "lib"
    if not (nvidia / SONAME).exists():
        pytest.skip("NVIDIA's libcufft is not installed")
    # The program as linked (-lcufft), NVIDIA's library found first.
    result = subprocess.run([str(built)], capture_output=True, text=True, timeout=900,
                            env={**os.environ, "LD_LIBRARY_PATH": f"{nvidia}:{libdir}"})
    assert result.returncode == 0 and "ALL PASSED" in result.stdout, result.stdout + result.stderr
    assert not re.findall(r"^FAIL (.+)$", result.stdout, re.M), result.stdout
    assert len(re.findall(r"^PASS (.+)$", result.stdout, re.M)) >= 36, result.stdout
    # Its cufftXtSetGPUs answers are the ones ours gives.
    assert "PASS cufftXtSetGPUs of a device past the last is CUFFT_INVALID_DEVICE" in result.stdout


def test_other_backends_answer_not_supported(built: Path) -> None:
    """Level Zero (a device here or not): cuFFT answers CUFFT_NOT_SUPPORTED
    (16) and says why on stderr; the process neither crashes nor hangs."""
    result = _run(built, ZMLIR_BACKEND="level_zero")
    assert result.returncode != 0, result.stdout + result.stderr
    assert "cufftPlan1d(&first, 8, CUFFT_C2C, 1) -> 16" in result.stdout, result.stdout
    assert "CUFFT_NOT_SUPPORTED" in result.stderr and "Traceback" not in result.stderr


def test_exports_are_nvidias(libdir: str) -> None:
    """Every function NVIDIA's libcufft exports is exported, with NVIDIA's
    symbol version, and nothing else."""
    from zmlir.libraries import build

    library = next(lib for lib in build.LIBRARIES if lib.soname == SONAME)
    path = Path(libdir) / SONAME
    if not path.exists():
        pytest.skip("our cuFFT is not built")
    out = subprocess.run(["objdump", "-T", str(path)], capture_output=True, text=True,
                         check=True).stdout
    ours = {m.group(2): m.group(1) for m in
            re.finditer(r"\bDF \.text\s+\S+\s+(\S+)\s+(\w+)$", out, re.M)}
    assert set(ours) == set(build._exports(library))
    assert set(ours.values()) == {SONAME}
