"""pycuda on our driver: the scripts beside this file under `zmlir run`, in
a client virtualenv of their own (support.clients).

pycuda has no wheels: pip builds it from its sdist, which needs CUDA's
headers (cuda.h), a libcuda.so to link (ours) and, for curandom, cuRAND
(curand.h, libcurand.so): the nvidia-curand wheel's where the toolkit has
none. docs/python-hosts.md gives the same recipe for users."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from support import tool
from support.clients import client_venv, script_steps, zmlir_run

HERE = Path(__file__).resolve().parent
PYCUDA = "pycuda==2026.1"
CURAND = "nvidia-curand==10.4.5.25"


def _cuda_include() -> Path | None:
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and (Path(root) / "include" / "cuda.h").exists():
            return Path(root) / "include"
    return None


@pytest.fixture(scope="module")
def python(libdir: str) -> Path:
    pytest.importorskip("zmlir.runtime.backends.opencl.device")
    include = _cuda_include()
    if tool("nvcc") is None or include is None:
        pytest.skip("pycuda builds against CUDA's headers and runs nvcc: no CUDA toolkit")
    python = client_venv("numpy", CURAND)
    root = python.parent.parent
    if (root / ".pycuda-complete").exists():
        return python
    curand = next(root.glob("lib/python*/site-packages/nvidia/cu13"))
    links = root / "link"  # -lcurand wants libcurand.so; the wheel has libcurand.so.10
    links.mkdir(exist_ok=True)
    if not (links / "libcurand.so").exists():
        (links / "libcurand.so").symlink_to(curand / "lib" / "libcurand.so.10")
    env = dict(os.environ,
               CPATH=os.pathsep.join((str(include), str(curand / "include"))),
               LIBRARY_PATH=os.pathsep.join((libdir, str(links))),
               LDFLAGS="-Wl,-rpath,$ORIGIN/../nvidia/cu13/lib")
    install = subprocess.run([str(python), "-m", "pip", "install", "-q",
                              "--disable-pip-version-check", PYCUDA],
                             capture_output=True, text=True, timeout=1800, env=env)
    if install.returncode != 0:
        pytest.fail(f"pip install {PYCUDA} failed:\n{install.stderr[-4000:]}")
    (root / ".pycuda-complete").write_text(PYCUDA + "\n")
    return python


def _steps(python: Path, script: str, tmp_path: Path) -> dict[str, str]:
    """Runs `script`; its `step: ok|FAIL detail` lines by step. pycuda's
    compile cache is fresh: every SourceModule goes through nvcc --cubin."""
    cache = tmp_path / "pycuda-cache"
    cache.mkdir()
    env = dict(os.environ, PYCUDA_CACHE_DIR=str(cache))
    include = _cuda_include()
    libdirs = [] if include is None else [include.parent / d for d in ("lib64", "lib")]
    env["CUDA_LIBDIR"] = str(next((d for d in libdirs if (d / "libcudadevrt.a").exists()),
                                  "/usr/local/cuda/lib64"))
    result = zmlir_run(python, HERE / script, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    for bad in ("Traceback", "internal error", "unsupported CUDA driver API",
                "WARNING: a clean-up operation failed"):
        assert bad not in result.stdout + result.stderr, result.stdout + result.stderr
    steps = script_steps(result)
    failed = {step: out for step, out in steps.items() if not out.startswith("ok")}
    assert not failed, result.stdout
    return steps


def test_pycuda_basics(python: Path, tmp_path: Path) -> None:
    steps = _steps(python, "pycuda_basics.py", tmp_path)
    assert list(steps) == [
        "autoinit", "sourcemodule", "prepared_call", "legacy_launch_grid",
        "legacy_launch_grid_async", "get_global", "context_attach", "managed_attach",
        "gpuarray_arith", "gpuarray_sum", "gpuarray_max", "gpuarray_dot", "gpuarray_int",
        "gpuarray_astype", "memset_d2d16_async", "gpuarray_fill", "elementwise",
        "reduction_int", "reduction_float", "cumath", "dynamic_parallelism"]
    assert steps["autoinit"].endswith("sm_89")


def test_pycuda_curandom(python: Path, tmp_path: Path) -> None:
    steps = _steps(python, "pycuda_curandom.py", tmp_path)
    assert list(steps) == [
        "curand_version", "xorwow_generator0", "xorwow_distinct", "xorwow_uniform",
        "xorwow_normal", "xorwow_log_normal", "xorwow_uniform_double", "md5_rand"]
