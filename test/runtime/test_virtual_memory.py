"""CUDA's virtual memory management and pools' IPC where the backend has
none (zmlir/runtime/cuda/virtual_memory.py, mempool_ipc.py): under the CUDA
passthrough (here over test/cuda/driver_api/fake_nvidia_driver.c) every call
answers CUDA_ERROR_NOT_SUPPORTED, naming itself on stderr, and the device
attributes say so. On the CPU they work: test/cuda/driver_api/
virtual_memory.cu, virtual_memory_ipc.cu, test/cuda/programs/mempool_ipc.cu."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

_SCRIPT = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    assert lib.cuInit(0) == 0

    class Loc(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]

    class Prop(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("handle_types", ctypes.c_int), ("loc", Loc),
                    ("win32", ctypes.c_void_p), ("flags", ctypes.c_ulonglong)]

    class PoolProps(ctypes.Structure):
        _fields_ = [("alloc_type", ctypes.c_int), ("handle_types", ctypes.c_int),
                    ("loc", Loc), ("win32", ctypes.c_void_p), ("max_size", ctypes.c_size_t),
                    ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 54)]

    r = {}
    for attr in (102, 103, 119):
        value = ctypes.c_int(-1)
        assert lib.cuDeviceGetAttribute(ctypes.byref(value), attr, 0) == 0
        r[f"attr{attr}"] = value.value
    prop = Prop(1, 1, Loc(1, 0))
    size, handle, ptr = ctypes.c_size_t(), ctypes.c_ulonglong(), ctypes.c_ulonglong()
    r["granularity"] = lib.cuMemGetAllocationGranularity(ctypes.byref(size),
                                                         ctypes.byref(prop), 0)
    r["reserve"] = lib.cuMemAddressReserve(ctypes.byref(ptr), ctypes.c_size_t(1 << 21),
                                           ctypes.c_size_t(0), ctypes.c_ulonglong(0),
                                           ctypes.c_ulonglong(0))
    r["create"] = lib.cuMemCreate(ctypes.byref(handle), ctypes.c_size_t(1 << 21),
                                  ctypes.byref(prop), ctypes.c_ulonglong(0))
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    pool = ctypes.c_void_p()
    r["ipc_pool"] = lib.cuMemPoolCreate(ctypes.byref(pool),
                                        ctypes.byref(PoolProps(1, 1, Loc(1, 0))))
    print(json.dumps(r))
""")


def test_not_supported_without_virtual_memory(libdir: str, fake_nvidia_driver: Path) -> None:
    env = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}
    result = subprocess.run([sys.executable, "-c", _SCRIPT, libdir], capture_output=True,
                            text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    r = json.loads(result.stdout.splitlines()[-1])
    assert r == {"attr102": 0, "attr103": 0, "attr119": 0, "granularity": 801,
                 "reserve": 801, "create": 801, "ipc_pool": 801}
    for name in ("cuMemGetAllocationGranularity", "cuMemAddressReserve", "cuMemCreate",
                 "cuMemPoolCreate"):
        assert f"unsupported CUDA driver API: {name}" in result.stderr
