"""Host threads, 8 at a time, twice (threads that end, then new ones), each
making the primary context current and copying through device memory: the
driver's interpreter keeps a thread state per host thread, in the key table
it shares with the host (runtime/cuda/namespace.c)."""

import ctypes
import sys
import threading


def main() -> int:
    lib = ctypes.CDLL("libcuda.so.1")
    assert lib.cuInit(0) == 0
    ctx = ctypes.c_void_p()
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    errors: list[str] = []

    def work(k: int) -> None:
        for _ in range(50):
            if lib.cuCtxSetCurrent(ctx) != 0:
                errors.append("cuCtxSetCurrent")
            d = ctypes.c_uint64()
            if lib.cuMemAlloc_v2(ctypes.byref(d), ctypes.c_size_t(4096)) != 0:
                errors.append("cuMemAlloc")
                return
            data = (ctypes.c_uint8 * 4096)(*([k] * 4096))
            out = (ctypes.c_uint8 * 4096)()
            lib.cuMemcpyHtoD_v2(d, data, ctypes.c_size_t(4096))
            lib.cuMemcpyDtoH_v2(out, d, ctypes.c_size_t(4096))
            if bytes(out) != bytes(data):
                errors.append(f"thread {k}: wrong data")
            lib.cuMemFree_v2(d)

    for _ in range(2):
        threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    print("OK" if not errors else errors[:5])
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
