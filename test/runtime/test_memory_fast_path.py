"""cuMemAlloc_v2, cuMemFree_v2, cuMemsetD8/16/32 (_v2 and Async) and the
blocking copies (cuMemcpy, cuMemcpyHtoD/DtoH/DtoD_v2) on the C fast path (fastpath.c) under the CUDA passthrough, with a stand-in for
NVIDIA's driver (test/cuda/driver_api/fake_nvidia_driver.c): the calls go
to NVIDIA's functions without Python, the driver's map of allocations
(address ranges, pointer attributes, cuMemGetInfo) still knows every
allocation, and every answer is the Python path's (ZMLIR_FAST_LAUNCH=0)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

from support import run_probe

_PROBE = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    lib.zmlir_fast_memory_calls.restype = ctypes.c_ulonglong
    r = {"fast": {}}
    def counted(name, call):
        before = lib.zmlir_fast_memory_calls()
        r[name] = call()
        r["fast"][name] = lib.zmlir_fast_memory_calls() - before
    def read(d, ctype, n):
        out = (ctype * n)()
        assert lib.cuMemcpyDtoH_v2(out, d, ctypes.sizeof(out)) == 0
        return sorted(set(out))
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    free0, total = ctypes.c_size_t(), ctypes.c_size_t()
    assert lib.cuMemGetInfo_v2(ctypes.byref(free0), ctypes.byref(total)) == 0
    d, other = ctypes.c_uint64(), ctypes.c_uint64()
    counted("alloc", lambda: lib.cuMemAlloc_v2(ctypes.byref(d), 1000))
    counted("alloc_zero", lambda: lib.cuMemAlloc_v2(ctypes.byref(other), 0))
    counted("memset8", lambda: lib.cuMemsetD8_v2(d, 0x5a, 1000))
    r["bytes8"] = read(d, ctypes.c_uint8, 1000)
    counted("memset16", lambda: lib.cuMemsetD16_v2(d, 0x1234, 500))
    r["bytes16"] = read(d, ctypes.c_uint16, 500)
    counted("memset32_async", lambda: lib.cuMemsetD32Async(d, 0xdeadbeef, 250, None))
    r["bytes32"] = read(d, ctypes.c_uint32, 250)
    counted("memset8_async", lambda: lib.cuMemsetD8Async(d, 7, 100, None))
    counted("memset16_async", lambda: lib.cuMemsetD16Async(d, 7, 50, None))
    counted("memset32", lambda: lib.cuMemsetD32_v2(d, 7, 25))
    counted("memset_null", lambda: lib.cuMemsetD8_v2(0, 1, 16))
    # Blocking copies: host to device, device to device, device to host, unified.
    src, dst = (ctypes.c_uint32 * 8)(*range(8)), (ctypes.c_uint32 * 8)()
    counted("htod", lambda: lib.cuMemcpyHtoD_v2(d, src, 32))
    counted("dtod", lambda: lib.cuMemcpyDtoD_v2(ctypes.c_uint64(d.value + 64), d, 32))
    counted("dtoh", lambda: lib.cuMemcpyDtoH_v2(dst, ctypes.c_uint64(d.value + 64), 32))
    r["copied"] = list(dst)
    counted("unified", lambda: lib.cuMemcpy(ctypes.c_uint64(ctypes.addressof(dst)),
                                            ctypes.c_uint64(d.value + 4), 8))
    r["unified_copied"] = list(dst)[:2]
    counted("dtoh_null", lambda: lib.cuMemcpyDtoH_v2(dst, ctypes.c_uint64(0), 32))
    counted("memset_bad_stream", lambda: lib.cuMemsetD8Async(d, 1, 16, ctypes.c_void_p(0x999)))
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    code = lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size),
                                       ctypes.c_uint64(d.value + 10))
    r["range"] = [code, base.value == d.value, size.value]
    kind = ctypes.c_uint()
    r["memory_type"] = [lib.cuPointerGetAttribute(ctypes.byref(kind), 2, d), kind.value]
    free1 = ctypes.c_size_t()
    assert lib.cuMemGetInfo_v2(ctypes.byref(free1), ctypes.byref(total)) == 0
    r["used"] = free0.value - free1.value
    counted("free", lambda: lib.cuMemFree_v2(d))
    counted("double_free", lambda: lib.cuMemFree_v2(d))
    counted("free_inside", lambda: lib.cuMemFree_v2(ctypes.c_uint64(d.value + 8)))
    r["range_after_free"] = lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size),
                                                        d)
    before = lib.zmlir_fast_memory_calls()
    pointers = []
    for i in range(200):  # cudaMalloc, cudaMemset, cudaFree in a loop; 20 held at a time
        p = ctypes.c_uint64()
        assert lib.cuMemAlloc_v2(ctypes.byref(p), 4096 + i) == 0
        assert lib.cuMemsetD8_v2(p, i, 4096 + i) == 0
        pointers.append(p)
        if len(pointers) == 20:
            for q in pointers:
                assert lib.cuMemFree_v2(q) == 0
            pointers.clear()
    r["fast"]["cycles"] = lib.zmlir_fast_memory_calls() - before
    assert lib.cuMemGetInfo_v2(ctypes.byref(free1), ctypes.byref(total)) == 0
    r["used_after_cycles"] = free0.value - free1.value
    print(json.dumps(r))
""")


def _probe(libdir: str, **env: str) -> dict[str, Any]:
    return run_probe(_PROBE, libdir, **env)


def test_passthrough_memory_calls_take_the_c_path(libdir: str,
                                                  fake_nvidia_driver: Path) -> None:
    passthrough = {"ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}
    fast = _probe(libdir, **passthrough)
    # What NVIDIA's functions did: the fills, the range and attributes the
    # Python driver's map answers for an allocation it never saw made.
    assert fast["bytes8"] == [0x5a] and fast["bytes16"] == [0x1234]
    assert fast["bytes32"] == [0xdeadbeef]
    assert fast["range"] == [0, True, 1000]
    assert fast["memory_type"] == [0, 2]  # CU_MEMORYTYPE_DEVICE
    assert fast["used"] == 1000
    assert fast["range_after_free"] == 500  # CUDA_ERROR_NOT_FOUND
    assert fast["used_after_cycles"] == 0
    assert fast["copied"] == list(range(8)) and fast["unified_copied"] == [1, 2]
    taken = ("alloc", "memset8", "memset16", "memset32_async", "memset8_async",
             "memset16_async", "memset32", "free", "htod", "dtod", "dtoh", "unified")
    for name in taken:
        assert fast[name] == 0 and fast["fast"][name] == 1, name
    # Refused by the checks or by NVIDIA's function: the Python path answers.
    assert fast["alloc_zero"] == 1  # CUDA_ERROR_INVALID_VALUE
    assert fast["memset_null"] == 1
    assert fast["dtoh_null"] == 1  # CUDA_ERROR_INVALID_VALUE
    assert fast["memset_bad_stream"] == 400  # CUDA_ERROR_INVALID_HANDLE
    assert fast["double_free"] == 1 and fast["free_inside"] == 1
    assert all(fast["fast"][name] == 0 for name in fast["fast"]
               if name not in (*taken, "cycles"))
    assert fast["fast"]["cycles"] == 600
    python = _probe(libdir, **passthrough, ZMLIR_FAST_LAUNCH="0")
    assert set(python.pop("fast").values()) == {0}
    fast.pop("fast")
    assert python == fast


def test_opencl_memory_calls_stay_python(libdir: str) -> None:
    r = _probe(libdir, ZMLIR_BACKEND="opencl")
    assert set(r["fast"].values()) == {0} and r["bytes8"] == [0x5a] and r["bytes32"] == [0xdeadbeef]
    assert r["range"] == [0, True, 1000] and r["used_after_cycles"] == 0


# Stream-ordered allocation (cudaMallocAsync, cudaFreeAsync) from the device's
# default pool: NVIDIA's own under the passthrough (mempool.py:
# VendorDefaultPool), allocated and freed in C while it is the current pool.
_ASYNC_PROBE = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    lib.zmlir_fast_memory_calls.restype = ctypes.c_ulonglong
    r = {"fast": {}}
    def counted(name, call):
        before = lib.zmlir_fast_memory_calls()
        r[name] = call()
        r["fast"][name] = lib.zmlir_fast_memory_calls() - before
    class Props(ctypes.Structure):  # CUmemPoolProps
        _fields_ = [("allocType", ctypes.c_int), ("handleTypes", ctypes.c_int),
                    ("locationType", ctypes.c_int), ("locationId", ctypes.c_int),
                    ("win32", ctypes.c_void_p), ("maxSize", ctypes.c_size_t),
                    ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 54)]
    assert lib.cuInit(0) == 0
    ctx, stream = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    assert lib.cuStreamCreate(ctypes.byref(stream), 0) == 0
    pool, other = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuDeviceGetDefaultMemPool(ctypes.byref(pool), 0) == 0
    def used():
        v = ctypes.c_uint64()
        assert lib.cuMemPoolGetAttribute(pool, 7, ctypes.byref(v)) == 0  # USED_MEM_CURRENT
        return v.value
    a, b = ctypes.c_uint64(), ctypes.c_uint64()
    counted("alloc", lambda: lib.cuMemAllocAsync(ctypes.byref(a), 4096, stream))
    assert lib.cuMemsetD8Async(a, 0x5a, 4096, stream) == 0
    out = (ctypes.c_uint8 * 4096)()
    assert lib.cuMemcpyDtoH_v2(out, a, 4096) == 0
    r["bytes"] = sorted(set(out))
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    code = lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size),
                                       ctypes.c_uint64(a.value + 10))
    r["range"] = [code, base.value == a.value, size.value]
    r["used"] = used()
    counted("free", lambda: lib.cuMemFreeAsync(a, stream))
    assert lib.cuStreamSynchronize(stream) == 0
    r["used_after_free"] = used()
    counted("double_free", lambda: lib.cuMemFreeAsync(a, stream))
    counted("alloc_null_stream", lambda: lib.cuMemAllocAsync(ctypes.byref(b), 100, None))
    counted("free_sync", lambda: lib.cuMemFree_v2(b))  # a stream-ordered block: NVIDIA's cuMemFree
    threshold = ctypes.c_uint64(1 << 20)
    r["set_threshold"] = lib.cuMemPoolSetAttribute(pool, 4, ctypes.byref(threshold))
    threshold.value = 0
    assert lib.cuMemPoolGetAttribute(pool, 4, ctypes.byref(threshold)) == 0
    r["threshold"] = threshold.value
    # Another pool current: its allocations are ours (Python), then the default again.
    props = Props(allocType=1, locationType=1, locationId=0)
    assert lib.cuMemPoolCreate(ctypes.byref(other), ctypes.byref(props)) == 0
    assert lib.cuDeviceSetMemPool(0, other) == 0
    counted("alloc_other", lambda: lib.cuMemAllocAsync(ctypes.byref(b), 4096, stream))
    r["used_other"] = used()
    counted("free_other", lambda: lib.cuMemFreeAsync(b, stream))
    assert lib.cuDeviceSetMemPool(0, pool) == 0
    before = lib.zmlir_fast_memory_calls()
    for i in range(100):
        assert lib.cuMemAllocAsync(ctypes.byref(a), 1000 + i, stream) == 0
        assert lib.cuMemFreeAsync(a, stream) == 0
    assert lib.cuStreamSynchronize(stream) == 0
    r["fast"]["cycles"] = lib.zmlir_fast_memory_calls() - before
    r["used_after_cycles"] = used()
    print(json.dumps(r))
""")


def _async_probe(libdir: str, **env: str) -> dict[str, Any]:
    return run_probe(_ASYNC_PROBE, libdir, **env)


def test_stream_ordered_allocation_is_nvidias_in_c(libdir: str,
                                                   fake_nvidia_driver: Path) -> None:
    passthrough = {"ZMLIR_BACKEND": "cuda", "ZMLIR_CUDA_DRIVER": str(fake_nvidia_driver)}
    fast = _async_probe(libdir, **passthrough)
    assert fast["bytes"] == [0x5a] and fast["range"] == [0, True, 4096]
    # The pool's amounts are NVIDIA's pool's: it saw the block made in C.
    assert fast["used"] == 4096 and fast["used_after_free"] == 0
    assert fast["used_after_cycles"] == 0 and fast["threshold"] == 1 << 20
    assert [fast[k] for k in ("alloc", "free", "alloc_null_stream", "free_sync",
                              "set_threshold", "alloc_other", "free_other")] == [0] * 7
    assert fast["double_free"] == 1  # CUDA_ERROR_INVALID_VALUE
    assert {k: v for k, v in fast["fast"].items() if v} == {
        "alloc": 1, "free": 1, "alloc_null_stream": 1, "free_sync": 1, "cycles": 200}
    assert fast["used_other"] == 0  # another pool's block: ours, not NVIDIA's default pool's
    python = _async_probe(libdir, **passthrough, ZMLIR_FAST_LAUNCH="0")
    assert set(python.pop("fast").values()) == {0}
    fast.pop("fast")
    assert python == fast


# Managed memory hints: NVIDIA's under the passthrough (its managed memory
# moves: a prefetch saves the kernels' page faults), from C where they can;
# nothing to do on the CPU.
_HINT_PROBE = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    hints = ctypes.CDLL(sys.argv[2]).fake_memory_hints if len(sys.argv) > 2 else None
    if hints is not None:
        hints.restype = ctypes.c_ulonglong
    class Location(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]
    assert lib.cuInit(0) == 0
    ctx, stream = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    assert lib.cuStreamCreate(ctypes.byref(stream), 0) == 0
    m = ctypes.c_uint64()
    assert lib.cuMemAllocManaged(ctypes.byref(m), 1 << 20, 1) == 0
    lib.zmlir_fast_memory_calls.restype = ctypes.c_ulonglong
    fast_before = lib.zmlir_fast_memory_calls()
    before = hints() if hints else 0
    r = {"to_device": lib.cuMemPrefetchAsync_v2(m, 1 << 20, Location(1, 0), 0, stream),
         "to_host": lib.cuMemPrefetchAsync(m, 4096, -1, None),
         "advise": lib.cuMemAdvise_v2(m, 1 << 20, 1, Location(1, 0)),
         "advise_v1": lib.cuMemAdvise(m, 4096, 5, 0),
         "bad_advice": lib.cuMemAdvise(m, 4096, 9, 0),
         "zero_bytes": lib.cuMemPrefetchAsync(m, 0, 0, None)}
    assert lib.cuStreamSynchronize(stream) == 0
    r["vendor_hints"] = hints() - before if hints else 0
    r["fast_hints"] = lib.zmlir_fast_memory_calls() - fast_before
    print(json.dumps(r))
""")


def test_managed_memory_hints_are_nvidias(libdir: str, fake_nvidia_driver: Path) -> None:
    def probe(*extra: str, **env: str) -> dict[str, Any]:
        return run_probe(_HINT_PROBE, libdir, *extra, **env)

    ours = probe(str(fake_nvidia_driver), ZMLIR_BACKEND="cuda",
                 ZMLIR_CUDA_DRIVER=str(fake_nvidia_driver))
    assert [ours[k] for k in ("to_device", "to_host", "advise", "advise_v1")] == [0] * 4
    assert (ours["bad_advice"], ours["zero_bytes"]) == (1, 1)  # ours, before NVIDIA's
    assert ours.pop("vendor_hints") == 4
    assert ours.pop("fast_hints") == 4  # from C (fastpath.c), all four
    python = probe(str(fake_nvidia_driver), ZMLIR_BACKEND="cuda",
                   ZMLIR_CUDA_DRIVER=str(fake_nvidia_driver), ZMLIR_FAST_LAUNCH="0")
    assert (python.pop("vendor_hints"), python.pop("fast_hints")) == (4, 0) and python == ours
    cpu = probe(ZMLIR_BACKEND="opencl")
    assert (cpu.pop("vendor_hints"), cpu.pop("fast_hints")) == (0, 0) and cpu == ours
