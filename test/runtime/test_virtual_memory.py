"""CUDA's virtual memory management and pools' IPC under the CUDA
passthrough (zmlir/runtime/cuda/virtual_memory.py, mempool_ipc.py; here over
test/cuda/driver_api/fake_nvidia_driver.c) both are NVIDIA's: its calls,
handles and answers, shared with another process; we keep the ranges
copies may reach. On the CPU both work: test/cuda/driver_api/virtual_memory.cu,
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
    u64, size_t = ctypes.c_ulonglong, ctypes.c_size_t

    class Loc(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]

    class Prop(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("handle_types", ctypes.c_int), ("loc", Loc),
                    ("win32", ctypes.c_void_p), ("flags", ctypes.c_ulonglong)]

    class Access(ctypes.Structure):
        _fields_ = [("loc", Loc), ("flags", ctypes.c_int)]

    r = {}
    for attr in (102, 103, 107):
        value = ctypes.c_int(-1)
        assert lib.cuDeviceGetAttribute(ctypes.byref(value), attr, 0) == 0
        r[f"attr{attr}"] = value.value
    # No context: the calls need none.
    prop, g = Prop(1, 1, Loc(1, 0)), ctypes.c_size_t()
    r["granularity"] = lib.cuMemGetAllocationGranularity(ctypes.byref(g), ctypes.byref(prop), 0)
    g = g.value
    r["g"] = g
    base, one, handle, shared, got = u64(), u64(), u64(), u64(), u64()
    r["reserve"] = lib.cuMemAddressReserve(ctypes.byref(base), size_t(2 * g), size_t(0),
                                           u64(0), u64(0))
    r["reserve_odd"] = lib.cuMemAddressReserve(ctypes.byref(one), size_t(g + 4096),
                                               size_t(0), u64(0), u64(0))
    r["create"] = lib.cuMemCreate(ctypes.byref(handle), size_t(2 * g), ctypes.byref(prop),
                                  u64(0))
    back = Prop()
    r["props"] = [lib.cuMemGetAllocationPropertiesFromHandle(ctypes.byref(back), handle),
                  back.type, back.handle_types]
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    # Two mappings side by side, each given access: one range to copies.
    r["map"] = [lib.cuMemMap(u64(base.value + k * g), size_t(g), size_t(k * g), handle, u64(0))
                for k in range(2)]
    word = ctypes.c_uint32(7)
    r["copy_before_access"] = lib.cuMemcpyHtoD_v2(u64(base.value), ctypes.byref(word),
                                                  size_t(4))
    rw = Access(Loc(1, 0), 3)
    r["access"] = [lib.cuMemSetAccess(u64(base.value + k * g), size_t(g), ctypes.byref(rw),
                                      size_t(1)) for k in range(2)]
    flags = u64()
    r["get_access"] = [lib.cuMemGetAccess(ctypes.byref(flags), ctypes.byref(Loc(1, 0)),
                                          u64(base.value + g + 8)), flags.value]
    across = (ctypes.c_uint32 * 4)(1, 2, 3, 4)
    seen = (ctypes.c_uint32 * 4)()
    r["copy_across"] = [lib.cuMemcpyHtoD_v2(u64(base.value + g - 8), across, size_t(16)),
                        lib.cuMemcpyDtoH_v2(seen, u64(base.value + g - 8), size_t(16)),
                        list(seen)]
    start, size = u64(), size_t()
    r["range"] = [lib.cuMemGetAddressRange_v2(ctypes.byref(start), ctypes.byref(size),
                                              u64(base.value + g + 64)),
                  start.value - base.value, size.value]
    r["free_mapped"] = lib.cuMemFree_v2(u64(base.value))
    r["retain"] = lib.cuMemRetainAllocationHandle(ctypes.byref(got),
                                                  ctypes.c_void_p(base.value + g + 100))
    r["release_retained"] = lib.cuMemRelease(got)
    # The same memory at another address through its POSIX file descriptor.
    fd = ctypes.c_int(-1)
    r["export"] = lib.cuMemExportToShareableHandle(ctypes.byref(fd), handle, 1, u64(0))
    r["import"] = lib.cuMemImportFromShareableHandle(ctypes.byref(shared),
                                                     ctypes.c_void_p(fd.value), 1)
    r["reserve_other"] = lib.cuMemAddressReserve(ctypes.byref(one), size_t(g), size_t(0),
                                                 u64(0), u64(0))
    r["map_other"] = lib.cuMemMap(one, size_t(g), size_t(g), shared, u64(0))
    r["access_other"] = lib.cuMemSetAccess(one, size_t(g), ctypes.byref(rw), size_t(1))
    r["seen_other"] = [lib.cuMemcpyDtoH_v2(seen, one, size_t(8)), list(seen)[:2]]
    none = Access(Loc(1, 0), 0)
    r["revoke"] = lib.cuMemSetAccess(one, size_t(g), ctypes.byref(none), size_t(1))
    r["copy_revoked"] = lib.cuMemcpyDtoH_v2(seen, one, size_t(8))
    r["release"] = [lib.cuMemRelease(handle), lib.cuMemRelease(shared)]
    r["unmap"] = [lib.cuMemUnmap(u64(base.value + k * g), size_t(g)) for k in range(2)]
    r["copy_unmapped"] = lib.cuMemcpyHtoD_v2(u64(base.value), ctypes.byref(word), size_t(4))
    r["unmap_other"] = lib.cuMemUnmap(one, size_t(g))
    r["address_free"] = [lib.cuMemAddressFree(base, size_t(2 * g)),
                         lib.cuMemAddressFree(one, size_t(g))]
    print(json.dumps(r))
""")


def test_virtual_memory_is_nvidias_under_the_passthrough(libdir: str,
                                                         fake_nvidia_driver: Path) -> None:
    # Every call is NVIDIA's (the stand-in's), its answers as they are
    # (CUDA_ERROR_INVALID_VALUE, 1, for a reservation not of whole granules);
    # we keep the accessible ranges: copies reach the two mappings as one
    # range, and refuse memory without access or unmapped.
    env = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}
    result = subprocess.run([sys.executable, "-c", _SCRIPT, libdir], capture_output=True,
                            text=True, timeout=120, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    r = json.loads(result.stdout.splitlines()[-1])
    g = 2 << 20
    assert r == {"attr102": 1, "attr103": 1, "attr107": 1, "granularity": 0, "g": g, "reserve": 0,
                 "reserve_odd": 1, "create": 0, "props": [0, 1, 1], "map": [0, 0],
                 "copy_before_access": 1, "access": [0, 0], "get_access": [0, 3],
                 "copy_across": [0, 0, [1, 2, 3, 4]], "range": [0, 0, 2 * g],
                 "free_mapped": 1, "retain": 0, "release_retained": 0, "export": 0,
                 "import": 0, "reserve_other": 0, "map_other": 0, "access_other": 0,
                 "seen_other": [0, [3, 4]], "revoke": 0, "copy_revoked": 1,
                 "release": [0, 0], "unmap": [0, 0], "copy_unmapped": 1,
                 "unmap_other": 0, "address_free": [0, 0]}
    assert "unsupported" not in result.stderr


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
    r["export_unshared"] = lib.cuMemPoolExportPointer(ctypes.byref(data), u64(big.value))
    fd = ctypes.c_int(-1)
    r["export"] = lib.cuMemPoolExportToShareableHandle(ctypes.byref(fd), pool, 1, u64(0))
    assert lib.cuMemPoolExportPointer(ctypes.byref(big_data), u64(big.value)) == 0
    assert lib.cuMemPoolExportPointer(ctypes.byref(small_data), u64(small.value)) == 0
    r["magic"] = bytes(big_data[:8]).rstrip(b"\\0").decode()  # whose data it is
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
    # export data of a pool not yet shared, of cuMemAlloc's memory and of nothing.
    env = {**os.environ, "ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}
    result = subprocess.run([sys.executable, "-c", _POOL_PARENT, libdir, _POOL_CHILD],
                            capture_output=True, text=True, timeout=240, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    r = json.loads(result.stdout.splitlines()[-1])
    # Export data only once the pool's handle was exported (an H200's
    # answer before: CUDA_ERROR_INVALID_VALUE, the stand-in's too).
    assert r["export_unshared"] == 1
    assert r["magic"] == "fakepool" and r["export"] == 0 and r["export_plain"] == 1
    assert r["child"] == {"import_pool": 0, "import_zeros": 1, "import_big": 0,
                          "import_small": 0, "alloc_imported": 1,
                          "big": [10, 11, 12, 13], "small": [20, 21, 22, 23],
                          "free": [0, 0], "sync": 0, "destroy": 0}
    assert r["after"] == [[11, 12, 13, 14], [22, 23, 24, 25]]
    assert r["free"] == [0, 0] and r["destroy"] == 0
