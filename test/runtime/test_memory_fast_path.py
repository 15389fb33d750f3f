"""cuMemAlloc_v2, cuMemFree_v2, cuMemsetD8/16/32 (_v2 and Async) and the
blocking copies (cuMemcpy, cuMemcpyHtoD/DtoH/DtoD_v2) on the C fast path (fastpath.c) under the CUDA passthrough, with a stand-in for
NVIDIA's driver (test/cuda/driver_api/fake_nvidia_driver.c): the calls go
to NVIDIA's functions without Python, the driver's map of allocations
(address ranges, pointer attributes, cuMemGetInfo) still knows every
allocation, and every answer is the Python path's (ZMLIR_FAST_LAUNCH=0)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

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
    result = subprocess.run([sys.executable, "-c", _PROBE, libdir], capture_output=True,
                            text=True, timeout=300, env={**os.environ, **env})
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


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
