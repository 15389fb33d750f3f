"""CUDA's virtual memory management and pools' IPC under the CUDA
passthrough (zmlir/runtime/cuda/virtual_memory.py, mempool_ipc.py; here over
test/cuda/driver_api/fake_nvidia_driver.c): VMM answers
CUDA_ERROR_NOT_SUPPORTED, naming itself on stderr, and the device attributes
say so; pools with IPC handle types are NVIDIA's, shared with another
process. On the CPU both work: test/cuda/driver_api/virtual_memory.cu,
virtual_memory_ipc.cu, test/cuda/programs/mempool_ipc.cu."""

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
    # MEMPOOL_SUPPORTED_HANDLE_TYPES: the stand-in's 0x9 less fabric handles.
    assert r == {"attr102": 0, "attr103": 0, "attr119": 1, "granularity": 801,
                 "reserve": 801, "create": 801, "ipc_pool": 0}
    for name in ("cuMemGetAllocationGranularity", "cuMemAddressReserve", "cuMemCreate"):
        assert f"unsupported CUDA driver API: {name}" in result.stderr


_POOL_COMMON = textwrap.dedent("""
    import ctypes, json, subprocess, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    u64, size_t, vp = ctypes.c_ulonglong, ctypes.c_size_t, ctypes.c_void_p

    class Loc(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]

    class PoolProps(ctypes.Structure):
        _fields_ = [("alloc_type", ctypes.c_int), ("handle_types", ctypes.c_int),
                    ("loc", Loc), ("win32", vp), ("max_size", size_t),
                    ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 54)]

    Export = ctypes.c_ubyte * 64

    def read(ptr, n):
        out = (ctypes.c_uint32 * n)()
        assert lib.cuMemcpyDtoH_v2(out, u64(ptr), size_t(4 * n)) == 0
        return list(out)

    def write(ptr, values):
        data = (ctypes.c_uint32 * len(values))(*values)
        assert lib.cuMemcpyHtoD_v2(u64(ptr), data, size_t(4 * len(values))) == 0
""")

_POOL_CHILD = _POOL_COMMON + textwrap.dedent("""
    fd, big_data, small_data = int(sys.argv[2]), bytes.fromhex(sys.argv[3]), \\
        bytes.fromhex(sys.argv[4])
    r, pool = {}, vp()
    r["import_pool"] = lib.cuMemPoolImportFromShareableHandle(ctypes.byref(pool), vp(fd), 1,
                                                              u64(0))
    big, small, again, bad, extra = u64(), u64(), u64(), u64(), u64()
    r["import_zeros"] = lib.cuMemPoolImportPointer(ctypes.byref(bad), pool,
                                                   ctypes.byref(Export()))
    r["import_big"] = lib.cuMemPoolImportPointer(ctypes.byref(big), pool,
                                                 ctypes.byref(Export(*big_data)))
    r["import_small"] = lib.cuMemPoolImportPointer(ctypes.byref(small), pool,
                                                   ctypes.byref(Export(*small_data)))
    r["alloc_imported"] = lib.cuMemAllocFromPoolAsync(ctypes.byref(extra), size_t(4096), pool,
                                                      vp())
    r["big"], r["small"] = read(big.value, 4), read(small.value, 4)
    write(big.value, [v + 1 for v in r["big"]])
    write(small.value, [v + 2 for v in r["small"]])
    r["free"] = [lib.cuMemFree_v2(u64(big.value)), lib.cuMemFreeAsync(u64(small.value), vp())]
    r["sync"] = lib.cuCtxSynchronize()
    r["destroy"] = lib.cuMemPoolDestroy(pool)
    print(json.dumps(r))
""")

_POOL_PARENT = _POOL_COMMON + textwrap.dedent("""
    r, pool = {}, vp()
    assert lib.cuMemPoolCreate(ctypes.byref(pool), ctypes.byref(PoolProps(1, 1, Loc(1, 0)))) == 0
    big, small, plain = u64(), u64(), u64()
    assert lib.cuMemAllocFromPoolAsync(ctypes.byref(big), size_t(1 << 20), pool, vp()) == 0
    assert lib.cuMemAllocFromPoolAsync(ctypes.byref(small), size_t(400), pool, vp()) == 0
    write(big.value, [10, 11, 12, 13])
    write(small.value, [20, 21, 22, 23])
    big_data, small_data, data = Export(), Export(), Export()
    assert lib.cuMemPoolExportPointer(ctypes.byref(big_data), u64(big.value)) == 0
    assert lib.cuMemPoolExportPointer(ctypes.byref(small_data), u64(small.value)) == 0
    r["magic"] = bytes(big_data[:8]).rstrip(b"\\0").decode()  # whose data it is
    fd = ctypes.c_int(-1)
    r["export"] = lib.cuMemPoolExportToShareableHandle(ctypes.byref(fd), pool, 1, u64(0))
    assert lib.cuMemAlloc_v2(ctypes.byref(plain), size_t(4096)) == 0
    r["export_plain"] = lib.cuMemPoolExportPointer(ctypes.byref(data), u64(plain.value))
    child = subprocess.run([sys.executable, "-c", sys.argv[2], sys.argv[1], str(fd.value),
                            bytes(big_data).hex(), bytes(small_data).hex()],
                           pass_fds=(fd.value,), capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stdout + child.stderr
    r["child"] = json.loads(child.stdout.splitlines()[-1])
    r["after"] = read(big.value, 4), read(small.value, 4)
    r["free"] = [lib.cuMemFreeAsync(u64(big.value), vp()), lib.cuMemFree_v2(u64(small.value))]
    r["destroy"] = lib.cuMemPoolDestroy(pool)
    print(json.dumps(r))
""")


def test_ipc_pools_are_nvidias_under_the_passthrough(libdir: str,
                                                     fake_nvidia_driver: Path) -> None:
    # A pool with POSIX file descriptor handles is NVIDIA's (the stand-in's
    # "fakepool" export data): another process imports it and two of its
    # blocks, reads what the parent wrote and writes back; NVIDIA's codes for
    # export data of cuMemAlloc's memory and of nothing.
    env = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}
    result = subprocess.run([sys.executable, "-c", _POOL_PARENT, libdir, _POOL_CHILD],
                            capture_output=True, text=True, timeout=240, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    r = json.loads(result.stdout.splitlines()[-1])
    assert r["magic"] == "fakepool" and r["export"] == 0 and r["export_plain"] == 1
    assert r["child"] == {"import_pool": 0, "import_zeros": 1, "import_big": 0,
                          "import_small": 0, "alloc_imported": 1,
                          "big": [10, 11, 12, 13], "small": [20, 21, 22, 23],
                          "free": [0, 0], "sync": 0, "destroy": 0}
    assert r["after"] == [[11, 12, 13, 14], [22, 23, 24, 25]]
    assert r["free"] == [0, 0] and r["destroy"] == 0
