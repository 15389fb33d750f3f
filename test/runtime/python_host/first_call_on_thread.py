"""The driver loaded on the main thread, its first call (cuInit: our
interpreter starts) on a thread started after that, as numba's
test_reset_device does: that thread never ran our C library's thread set-up
(runtime/cuda/namespace.c), and the interpreter's setlocale crashed there."""

import ctypes
import threading

lib = ctypes.CDLL("libcuda.so.1")
results: list[int] = []


def first_calls() -> None:
    results.append(lib.cuInit(0))
    count = ctypes.c_int()
    results.append(lib.cuDeviceGetCount(ctypes.byref(count)))
    results.append(count.value)


thread = threading.Thread(target=first_calls)
thread.start()
thread.join()
assert results == [0, 0, 1], results
print("OK")
