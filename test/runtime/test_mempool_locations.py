"""Memory pools by location and allocation type (cuMemGetMemPool, CUDA 13):
page-locked host pools and managed pools, as cuda.core's PinnedMemoryResource
and ManagedMemoryResource use them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_PROBE = r"""
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
class Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]
DEVICE, HOST, HOST_NUMA, PINNED, MANAGED = 1, 2, 3, 1, 2
r = {}
ctx, stream = ctypes.c_void_p(), ctypes.c_void_p()
assert lib.cuInit(0) == 0
assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
assert lib.cuCtxSetCurrent(ctx) == 0
assert lib.cuStreamCreate(ctypes.byref(stream), 0) == 0
def pool(location, kind, api=lib.cuMemGetMemPool):
    p = ctypes.c_void_p()
    code = api(ctypes.byref(p), ctypes.byref(location), kind)
    return code, p.value
def attributes(ptr):  # MEMORY_TYPE, IS_MANAGED, DEVICE_ORDINAL
    kind, managed, ordinal = ctypes.c_uint(), ctypes.c_int(), ctypes.c_int()
    attrs = (ctypes.c_int * 3)(2, 8, 9)
    data = (ctypes.c_void_p * 3)(*(ctypes.addressof(v) for v in (kind, managed, ordinal)))
    assert lib.cuPointerGetAttributes(3, attrs, data, ctypes.c_uint64(ptr)) == 0
    return [kind.value, managed.value, ordinal.value]
device_pool = ctypes.c_void_p()
assert lib.cuDeviceGetMemPool(ctypes.byref(device_pool), 0) == 0
r["pinned_device_is_device_pool"] = pool(Location(DEVICE, 0), PINNED) == (0, device_pool.value)
host_code, host = pool(Location(HOST, 0), PINNED)
r["host_numa_same_pool"] = pool(Location(HOST_NUMA, 0), PINNED) == (host_code, host)
r["host_default"] = pool(Location(HOST, 0), PINNED, lib.cuMemGetDefaultMemPool) == (0, host)
managed_code, managed = pool(Location(DEVICE, 0), MANAGED)
r["codes"] = [host_code, managed_code]
r["distinct"] = len({device_pool.value, host, managed}) == 3
r["bad_type"] = pool(Location(HOST, 0), 0)[0]
for name, p in (("host", host), ("managed", managed)):
    ptr = ctypes.c_uint64()
    assert lib.cuMemAllocFromPoolAsync(ctypes.byref(ptr), 4096, ctypes.c_void_p(p), stream) == 0
    ctypes.memset(ptr.value, 7, 4096)  # the host reaches both
    r[name] = attributes(ptr.value)
    r[name + "_free"] = lib.cuMemFreeAsync(ptr, stream)
managed_ptr = ctypes.c_uint64()
assert lib.cuMemAllocManaged(ctypes.byref(managed_ptr), 64, 1) == 0
r["alloc_managed"] = attributes(managed_ptr.value)
assert lib.cuMemFree_v2(managed_ptr) == 0
device_ptr = ctypes.c_uint64()
assert lib.cuMemAlloc_v2(ctypes.byref(device_ptr), 64) == 0
r["device"] = attributes(device_ptr.value)
# A host pool of one's own, made current for the host location.
class Props(ctypes.Structure):  # CUmemPoolProps
    _fields_ = [("allocType", ctypes.c_int), ("handleTypes", ctypes.c_int),
                ("location", Location), ("win32", ctypes.c_void_p), ("maxSize", ctypes.c_size_t),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 54)]
own = ctypes.c_void_p()
r["create_host"] = lib.cuMemPoolCreate(ctypes.byref(own), ctypes.byref(Props(PINNED, 0,
                                                                              Location(HOST, 0))))
r["set_host"] = lib.cuMemSetMemPool(ctypes.byref(Location(HOST, 0)), PINNED, own)
r["now_current"] = pool(Location(HOST, 0), PINNED) == (0, own.value)
r["set_wrong_kind"] = lib.cuMemSetMemPool(ctypes.byref(Location(DEVICE, 0)), MANAGED, own)
r["destroy"] = lib.cuMemPoolDestroy(own)
r["default_again"] = pool(Location(HOST, 0), PINNED) == (0, host)
attr = ctypes.c_int()
r["host_pools_attribute"] = [lib.cuDeviceGetAttribute(ctypes.byref(attr), 144, 0), attr.value]
print(json.dumps(r))
"""


def test_host_and_managed_pools(libdir: str) -> None:
    pytest.importorskip("zmlir.runtime.backends.opencl.device")
    result = subprocess.run([sys.executable, "-c", _PROBE, libdir], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    assert r["pinned_device_is_device_pool"] and r["codes"] == [0, 0] and r["distinct"]
    assert r["host_numa_same_pool"] and r["host_default"]
    assert r["bad_type"] == 1  # CUDA_ERROR_INVALID_VALUE
    assert r["host"] == [1, 0, 0] and r["host_free"] == 0  # CU_MEMORYTYPE_HOST
    assert r["managed"] == [2, 1, 0] and r["managed_free"] == 0  # device memory, managed
    assert r["alloc_managed"] == [2, 1, 0]
    assert r["device"] == [2, 0, 0]
    assert [r["create_host"], r["set_host"], r["set_wrong_kind"], r["destroy"]] == [0, 0, 1, 0]
    assert r["now_current"] and r["default_again"]
    assert r["host_pools_attribute"] == [0, 1]


def test_pool_reuses_a_block_freed_in_a_concurrent_stream_only_when_safe() -> None:
    # Under the passthrough a created stream's kernels run beside other
    # streams' (stream.py): a block freed in one is reused in that stream at
    # once, by another stream only once a synchronisation finds it done.
    from zmlir.runtime.cuda.mempool import MemoryPool

    bases = iter(range(0x1000, 0x100000, 0x1000))
    pool = MemoryPool(lambda n: next(bases), lambda base: None)
    pool.release_threshold = 1 << 30  # keeps free blocks at synchronisations
    first = pool.allocate(100, stream=7)
    pool.free(first, stream=7)
    assert pool.allocate(100, stream=8) != first  # stream 8 may run while 7 still reads it
    assert pool.allocate(100) != first  # the queue too: it needs no wait for stream 7
    assert pool.allocate(100, stream=7) == first  # stream order
    pool.free(first, stream=7)
    pool.settle(lambda stream: False)  # stream 7 still busy
    assert pool.allocate(100, stream=8) != first
    pool.settle(lambda stream: stream == 7)
    assert pool.allocate(100, stream=8) == first
    assert not pool.pending and pool.reserved == pool.used  # nothing pending or free left
    # A pool destroyed holds nothing back: its pending blocks go to the backend,
    # and so do blocks freed later, in any stream.
    freed: list[int] = []
    pool.free_backend = freed.append
    second = pool.allocate(100, stream=7)
    pool.free(second, stream=7)
    pool.destroy()
    assert freed == [second] and not pool.pending
    pool.free(first, stream=8)
    assert freed == [second, first]
