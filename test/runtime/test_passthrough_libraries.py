"""What NVIDIA's libraries, running on our driver under the CUDA passthrough,
are told by it (docs/passthrough-cublas.md), over the stand-in NVIDIA driver
(test/cuda/driver_api/fake_nvidia_driver.c): the module loading mode NVIDIA's
driver answers, and, only when asked (ZMLIR_VENDOR_TABLES), the vendor's own
private table for one we do not know."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

_SCRIPT = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    assert lib.cuInit(0) == 0
    mode = ctypes.c_int(-1)
    r = {"mode": [lib.cuModuleGetLoadingMode(ctypes.byref(mode)), mode.value]}
    table = ctypes.c_void_p()
    code = lib.cuGetExportTable(ctypes.byref(table),
                                bytes.fromhex("f8cff95121468b4eb9e2fb469e7c0dd9"))
    r["table"] = [code, ctypes.cast(table, ctypes.POINTER(ctypes.c_uint64))[1]
                  if table.value else 0]
    print(json.dumps(r))
""")


def _run(libdir: str, env: dict[str, str]) -> dict:
    result = subprocess.run([sys.executable, "-c", _SCRIPT, libdir], capture_output=True,
                            text=True, timeout=120, env={**os.environ, **env})
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.splitlines()[-1])


@pytest.fixture
def passthrough(fake_nvidia_driver: Path) -> dict[str, str]:
    env = {"ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}
    for name in ("CUDA_MODULE_LOADING", "ZMLIR_VENDOR_TABLES"):
        env[name] = ""
    return env


def test_passthrough_loads_lazily_as_nvidias_driver_says(libdir: str,
                                                         passthrough: dict[str, str]) -> None:
    # Told eager, the runtime in NVIDIA's cuBLAS loaded its ~2800 images at
    # once (H200); NVIDIA's driver answers lazy but where asked for eager.
    assert _run(libdir, passthrough)["mode"] == [0, 2]  # CU_MODULE_LAZY_LOADING
    eager = {**passthrough, "CUDA_MODULE_LOADING": "EAGER"}
    assert _run(libdir, eager)["mode"] == [0, 1]


def test_vendor_tables_only_when_asked(libdir: str, passthrough: dict[str, str]) -> None:
    assert _run(libdir, passthrough)["table"] == [1, 0]  # CUDA_ERROR_INVALID_VALUE
    asked = {**passthrough, "ZMLIR_VENDOR_TABLES": "1"}
    assert _run(libdir, asked)["table"] == [0, 0xFA4E]  # the stand-in's own
