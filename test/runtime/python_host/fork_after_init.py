"""A child forked after cuInit has no driver, as on NVIDIA's: its calls,
cuInit included, answer CUDA_ERROR_NOT_INITIALIZED (numba's fork detection,
test_multiprocessing, reads this answer); the parent's driver goes on."""

import ctypes
import os

lib = ctypes.CDLL("libcuda.so.1")
assert lib.cuInit(0) == 0
ctx = ctypes.c_void_p()
assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
assert lib.cuCtxSetCurrent(ctx) == 0

NOT_INITIALIZED = 3
pid = os.fork()
if pid == 0:
    d = ctypes.c_uint64()
    got = (lib.cuMemAlloc_v2(ctypes.byref(d), ctypes.c_size_t(64)), lib.cuInit(0))
    os._exit(0 if got == (NOT_INITIALIZED, NOT_INITIALIZED) else 1)
_, status = os.waitpid(pid, 0)
assert os.waitstatus_to_exitcode(status) == 0, status
d = ctypes.c_uint64()
assert lib.cuMemAlloc_v2(ctypes.byref(d), ctypes.c_size_t(64)) == 0
assert lib.cuMemFree_v2(d) == 0
print("OK")
