"""cuPointerGetAttributes (cudart's cudaPointerGetAttributes; CuPy asks it
whether host memory is page-locked on its first cupy.asarray): device memory,
page-locked and registered host memory, and memory the driver does not know,
which is no error but reads as zeros. Prints PASS."""
import ctypes

from cuda_driver import primary_context

cuda = primary_context()
ctx = ctypes.c_void_p()
assert cuda.cuCtxGetCurrent(ctypes.byref(ctx)) == 0
cuda.cuPointerGetAttributes.argtypes = [ctypes.c_uint, ctypes.c_void_p, ctypes.c_void_p,
                                        ctypes.c_uint64]

CONTEXT, MEMORY_TYPE, DEVICE_POINTER, HOST_POINTER, IS_MANAGED, DEVICE_ORDINAL = 1, 2, 3, 4, 8, 9
RANGE_START, RANGE_SIZE, MAPPED = 11, 12, 13
TYPES = {CONTEXT: ctypes.c_void_p, MEMORY_TYPE: ctypes.c_uint, DEVICE_POINTER: ctypes.c_uint64,
         HOST_POINTER: ctypes.c_void_p, IS_MANAGED: ctypes.c_bool, DEVICE_ORDINAL: ctypes.c_int,
         RANGE_START: ctypes.c_uint64, RANGE_SIZE: ctypes.c_size_t, MAPPED: ctypes.c_bool}


def attributes(address: int) -> dict[int, object]:
    # Each output starts as a pattern that the call must overwrite.
    values = {a: t(0x55) if t is not ctypes.c_bool else t(True) for a, t in TYPES.items()}
    ids = (ctypes.c_int * len(TYPES))(*TYPES)
    data = (ctypes.c_void_p * len(TYPES))(*[ctypes.addressof(v) for v in values.values()])
    assert cuda.cuPointerGetAttributes(len(TYPES), ids, data, address) == 0
    return {a: v.value for a, v in values.items()}


device = ctypes.c_uint64()
assert cuda.cuMemAlloc_v2(ctypes.byref(device), 1000) == 0
got = attributes(device.value + 10)
assert got == {CONTEXT: ctx.value, MEMORY_TYPE: 2, DEVICE_POINTER: device.value + 10,
               HOST_POINTER: None, IS_MANAGED: False, DEVICE_ORDINAL: 0,
               RANGE_START: device.value, RANGE_SIZE: 1000, MAPPED: True}, got

pinned = ctypes.c_void_p()
assert cuda.cuMemAllocHost_v2(ctypes.byref(pinned), 256) == 0
got = attributes(pinned.value)
assert got[MEMORY_TYPE] == 1 and got[HOST_POINTER] == pinned.value, got
assert got[DEVICE_POINTER] == pinned.value and got[RANGE_SIZE] == 256, got

plain = ctypes.create_string_buffer(4096)
unknown = attributes(ctypes.addressof(plain))
assert unknown == {CONTEXT: None, MEMORY_TYPE: 0, DEVICE_POINTER: 0, HOST_POINTER: None,
                   IS_MANAGED: False, DEVICE_ORDINAL: -2, RANGE_START: 0, RANGE_SIZE: 0,
                   MAPPED: False}, unknown
assert cuda.cuMemHostRegister_v2(ctypes.c_void_p(ctypes.addressof(plain)), 4096, 0) == 0
assert attributes(ctypes.addressof(plain) + 100)[MEMORY_TYPE] == 1
assert cuda.cuMemHostUnregister(ctypes.c_void_p(ctypes.addressof(plain))) == 0
assert attributes(ctypes.addressof(plain))[MEMORY_TYPE] == 0

# BUFFER_ID (NVIDIA's cuFFT asks its work area's): one per allocation,
# unique in the process, a new one for an allocation made again at the same
# address; no device allocation, no id.
BUFFER_ID = 7
cuda.cuPointerGetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64]


def buffer_id(address: int) -> int | None:
    value = ctypes.c_uint64(0x55)
    code = cuda.cuPointerGetAttribute(ctypes.byref(value), BUFFER_ID, address)
    return value.value if code == 0 else None


other = ctypes.c_uint64()
assert cuda.cuMemAlloc_v2(ctypes.byref(other), 1000) == 0
first = buffer_id(device.value)
assert first and buffer_id(device.value + 999) == first, (first, buffer_id(device.value + 999))
assert buffer_id(other.value) not in (None, first), (first, buffer_id(other.value))
assert buffer_id(ctypes.addressof(plain)) is None
assert cuda.cuMemFree_v2(device) == 0
again = ctypes.c_uint64()
assert cuda.cuMemAlloc_v2(ctypes.byref(again), 1000) == 0
assert buffer_id(again.value) not in (None, first, buffer_id(other.value))
assert cuda.cuMemFree_v2(again) == 0 and cuda.cuMemFree_v2(other) == 0

assert cuda.cuMemFreeHost(pinned) == 0
assert attributes(pinned.value)[MEMORY_TYPE] == 0
assert attributes(device.value)[MEMORY_TYPE] == 0
print("PASS", flush=True)
