"""NVIDIA's machine code for our NVPTX, cached under the CUDA passthrough
(runtime/backends/machine_code_cache.py), with a stand-in for NVIDIA's
driver (test/cuda/driver_api/fake_nvidia_driver.c) whose linker's "cubin"
is its PTX behind a tag: the first load assembles the PTX with NVIDIA's
linker and keeps the cubin, a later process loads the cubin; another driver
or GPU is another key; a damaged or refused entry goes back to the PTX."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from support import ADD_SCALAR_PTX

from zmlir.runtime.backends import machine_code_cache

_PROBE = textwrap.dedent("""
    import ctypes, json, os, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    fake = ctypes.CDLL(os.environ["ZMLIR_CUDA_DRIVER"])
    for name in ("fake_ptx_loads", "fake_cubin_loads", "fake_links"):
        getattr(fake, name).restype = ctypes.c_ulonglong
    PTX = @ADD_SCALAR_PTX@
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    mod, f = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(mod), PTX) == 0
    assert lib.cuModuleGetFunction(ctypes.byref(f), mod, b"add_scalar") == 0
    d = ctypes.c_uint64()
    assert lib.cuMemAlloc_v2(ctypes.byref(d), 128) == 0
    assert lib.cuMemsetD32_v2(d, 1, 32) == 0
    value = ctypes.c_uint32(2)
    params = (ctypes.c_void_p * 2)(ctypes.addressof(d), ctypes.addressof(value))
    assert lib.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, None, params, None) == 0
    out = (ctypes.c_uint32 * 32)()
    assert lib.cuMemcpyDtoH_v2(out, d, 128) == 0
    print(json.dumps({"ptx": fake.fake_ptx_loads(), "cubin": fake.fake_cubin_loads(),
                      "links": fake.fake_links(), "sum": sum(out)}))
""").replace("@ADD_SCALAR_PTX@", repr(ADD_SCALAR_PTX))


def _load(libdir: str, fake: Path, cache: Path, **env: str) -> dict[str, Any]:
    environment = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake),
                   "ZMLIR_CACHE_DIR": str(cache), "ZMLIR_MACHINE_CODE_CACHE": "1", **env}
    result = subprocess.run([sys.executable, "-c", _PROBE, libdir], capture_output=True,
                            text=True, timeout=300, env=environment)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


COLD = {"ptx": 0, "cubin": 1, "links": 1, "sum": 96}  # assembled, its cubin loaded
WARM = {"ptx": 0, "cubin": 1, "links": 0, "sum": 96}  # the cached cubin loaded


def test_second_load_uses_the_cubin(libdir: str, fake_nvidia_driver: Path,
                                    tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _load(libdir, fake_nvidia_driver, cache) == COLD
    assert _load(libdir, fake_nvidia_driver, cache) == WARM
    # Another driver: another key, assembled again; then both are kept.
    assert _load(libdir, fake_nvidia_driver, cache, FAKE_DRIVER_VERSION="13010") == COLD
    assert _load(libdir, fake_nvidia_driver, cache, FAKE_DRIVER_VERSION="13010") == WARM
    assert _load(libdir, fake_nvidia_driver, cache) == WARM
    # Caches off, or this one not asked for: NVIDIA's JIT of the PTX.
    off = _load(libdir, fake_nvidia_driver, cache, ZMLIR_CACHE="0")
    assert off == {"ptx": 1, "cubin": 0, "links": 0, "sum": 96}
    assert _load(libdir, fake_nvidia_driver, cache, ZMLIR_MACHINE_CODE_CACHE="") == off


def test_damaged_or_refused_cubin_falls_back_to_the_ptx(libdir: str, fake_nvidia_driver: Path,
                                                        tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert _load(libdir, fake_nvidia_driver, cache) == COLD
    with sqlite3.connect(cache / "jit.sqlite") as db:  # every blob's bytes damaged
        db.execute("UPDATE blobs SET data = CAST('\x7fELFFAKE' || 'garbage' AS BLOB)")
    assert _load(libdir, fake_nvidia_driver, cache) == COLD  # checksum: assembled again
    assert _load(libdir, fake_nvidia_driver, cache) == WARM
    # A driver that refuses the cubin (and the one it assembles): the PTX.
    refused = _load(libdir, fake_nvidia_driver, cache, FAKE_REFUSE_CUBINS="1")
    assert refused == {"ptx": 1, "cubin": 0, "links": 1, "sum": 96}


def test_key_names_the_code_the_gpu_and_the_driver(tmp_path: Path) -> None:
    library = tmp_path / "libcuda.so.580.1"
    library.write_bytes(b"driver")
    driver = machine_code_cache.driver_identity(str(library), 13000)
    key = machine_code_cache.key(b"ptx", (9, 0), driver)
    assert key == machine_code_cache.key(b"ptx", (9, 0), driver)
    assert key != machine_code_cache.key(b"ptx2", (9, 0), driver)
    assert key != machine_code_cache.key(b"ptx", (10, 0), driver)
    assert key != machine_code_cache.key(b"ptx", (9, 0),
                                         machine_code_cache.driver_identity(str(library), 13010))
    library.write_bytes(b"another driver")  # upgraded in place
    assert key != machine_code_cache.key(b"ptx", (9, 0),
                                         machine_code_cache.driver_identity(str(library), 13000))
