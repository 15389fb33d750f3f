"""Our libcublas's SYCL route (ZMLIR_LIBRARY_ROUTE=sycl; docs/library-backends.md):
f32 GEMMs on oneMKL's SYCL BLAS, on the OpenCL CPU device in our driver's own
context. Needs Intel's SYCL runtime and oneMKL's SYCL BLAS laid out by
tools/sycl_root.sh: `make bootstrap` puts them in .sycl (ZMLIR_SYCL_ROOT
names another place); skipped where they are not.
The host route's own tests (test_cublas.py) run the same program without it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import cublas_wheel, tool

pytest.importorskip("zmlir.runtime.backends.opencl.device")

PROGRAM = Path(__file__).resolve().parent / "cublas" / "cublas_api.cu"


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory, libdir: str) -> Path:
    wheel = cublas_wheel(libdir)
    exe = tmp_path_factory.mktemp("sycl_route") / "cublas_api"
    subprocess.run([tool("nvcc"), "-arch=sm_80", f"-I{wheel / 'include'}", str(PROGRAM), "-o",
                    str(exe), f"-L{libdir}", "-lcublas", "-lcublasLt"], check=True,
                   capture_output=True)
    return exe


@pytest.fixture(scope="module")
def plugin(libdir: str) -> Path:
    from zmlir.libraries import build

    if build.sycl_root() is None:
        pytest.skip("no SYCL runtime and oneMKL SYCL BLAS: set ZMLIR_SYCL_ROOT "
                    "(tools/sycl_root.sh DIR)")
    return build.build_sycl_plugin(Path(libdir))


def _run(exe: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "zmlir.cli", "run", "--", str(exe)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env})


def test_sgemms_on_onemkl_sycl_match_the_host_reference(program: Path, plugin: Path) -> None:
    result = _run(program, ZMLIR_LIBRARY_ROUTE="sycl", ZMLIR_LOG="1")
    passed = re.findall(r"^PASS (.+)$", result.stdout, re.M)
    failed = re.findall(r"^FAIL (.+)$", result.stdout, re.M)
    assert not failed and result.returncode == 0, result.stdout + result.stderr
    assert len(passed) >= 81, result.stdout
    # Sgemm's 9 transposes, strided batches and stream order, all on SYCL:
    # opened in the backend's context, and none fell back to the host BLAS.
    assert "f32 GEMMs on oneMKL's SYCL BLAS" in result.stderr, result.stderr
    assert "opencl backend's context" in result.stderr, result.stderr
    assert "ran on the host BLAS" not in result.stderr, result.stderr
    assert {"Sgemm op(1,2)", "device scalars, stream order"} <= set(passed), result.stdout
    assert "Traceback" not in result.stderr


def test_an_unknown_route_is_said_and_the_host_route_answers(program: Path) -> None:
    result = _run(program, ZMLIR_LIBRARY_ROUTE="oneapi")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ZMLIR_LIBRARY_ROUTE=oneapi: not a route (host, sycl)" in result.stderr
    assert not re.findall(r"^FAIL (.+)$", result.stdout, re.M), result.stdout
