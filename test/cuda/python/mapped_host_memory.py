"""Page-locked host memory as a device pointer (unified addressing: the
device reaches it at its host address): cuMemsetD8/D32, cuMemcpyDtoH and
cuMemcpyDtoD take it, and cuMemGetAddressRange knows its range (numba's
mapped arrays and memhostalloc(mapped=True); before, INVALID_VALUE and
NOT_FOUND). Memory the driver does not know still fails. Prints PASS."""
import ctypes

from cuda_driver import primary_context

cuda = primary_context()
for name in ("cuMemsetD8_v2", "cuMemsetD32_v2"):
    getattr(cuda, name).argtypes = [ctypes.c_uint64, ctypes.c_uint, ctypes.c_size_t]
cuda.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t]
cuda.cuMemcpyDtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t]
cuda.cuMemGetAddressRange_v2.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64]

DEVICEMAP = 2
host = ctypes.c_void_p()
assert cuda.cuMemHostAlloc(ctypes.byref(host), 64, DEVICEMAP) == 0
dptr = ctypes.c_uint64()
assert cuda.cuMemHostGetDevicePointer_v2(ctypes.byref(dptr), host, 0) == 0
view = (ctypes.c_uint8 * 64).from_address(host.value)

assert cuda.cuMemsetD8_v2(dptr.value, 0xAB, 64) == 0
assert bytes(view) == b"\xab" * 64, bytes(view)
assert cuda.cuMemsetD32_v2(dptr.value + 8, 0x01020304, 2) == 0
assert bytes(view[8:16]) == bytes([4, 3, 2, 1]) * 2, bytes(view)

view[0:4] = (ctypes.c_uint8 * 4)(1, 2, 3, 4)
received = (ctypes.c_uint8 * 4)()
assert cuda.cuMemcpyDtoH_v2(received, dptr.value, 4) == 0
assert list(received) == [1, 2, 3, 4], list(received)

device = ctypes.c_uint64()
assert cuda.cuMemAlloc_v2(ctypes.byref(device), 64) == 0
assert cuda.cuMemcpyDtoD_v2(device.value, dptr.value, 64) == 0
assert cuda.cuMemcpyDtoH_v2(received, device.value + 4, 4) == 0
assert list(received) == [0xAB] * 4, list(received)

base, size = ctypes.c_uint64(), ctypes.c_size_t()
assert cuda.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), dptr.value + 10) == 0
assert (base.value, size.value) == (dptr.value, 64), (base.value, size.value)

# Past the end of the page-locked range, and plain host memory: still errors.
INVALID_VALUE, NOT_FOUND = 1, 500
assert cuda.cuMemsetD8_v2(dptr.value + 60, 0, 8) == INVALID_VALUE
plain = ctypes.create_string_buffer(64)
assert cuda.cuMemsetD8_v2(ctypes.addressof(plain), 0, 8) == INVALID_VALUE
assert cuda.cuMemGetAddressRange_v2(None, None, ctypes.addressof(plain)) == NOT_FOUND

assert cuda.cuMemFreeHost(host) == 0
assert cuda.cuMemFree_v2(device) == 0
print("PASS", flush=True)
