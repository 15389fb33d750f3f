"""A Python host driving libcuda.so.1 through ctypes alone (nothing installed):
cuInit, a PTX module, memory, a launch whose kernel printfs, the result
checked. Run by test_python_hosts.py under `zmlir run`, with any CPython.

    python client.py KERNEL.ptx [--capsule-first]

--capsule-first reads an attribute of a capsule before the first CUDA call,
as `import torch` does (it gives PyCapsule_Type a version tag, on which
cffi's embedding start-up used to wait forever in the host's interpreter).
"""

import ctypes
import sys


def main() -> int:
    with open(sys.argv[1], "rb") as file:
        ptx = file.read() + b"\0"
    if "--capsule-first" in sys.argv:
        import _datetime  # a standard C module that exports a capsule

        getattr(_datetime.datetime_CAPI, "__name__", None)
    libc = ctypes.CDLL(None)
    lib = ctypes.CDLL("libcuda.so.1")

    def check(code: int, what: str) -> None:
        if code != 0:
            print(f"{what} failed: {code}", flush=True)
            sys.exit(1)

    check(lib.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    check(lib.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev), "cuCtxCreate")
    # cuGetProcAddress answers with the library's exported function.
    pfn, status = ctypes.c_void_p(), ctypes.c_int(-1)
    check(lib.cuGetProcAddress_v2(b"cuLaunchKernel", ctypes.byref(pfn), 12000,
                                  ctypes.c_ulonglong(0), ctypes.byref(status)),
          "cuGetProcAddress_v2")
    exported = ctypes.cast(lib.cuLaunchKernel, ctypes.c_void_p).value
    print("proc address", "exported" if pfn.value == exported else "OTHER", status.value)
    n = 1000
    host = (ctypes.c_float * n)(*range(n))
    dptr = ctypes.c_uint64()
    check(lib.cuMemAlloc_v2(ctypes.byref(dptr), ctypes.c_size_t(4 * n)), "cuMemAlloc")
    check(lib.cuMemcpyHtoD_v2(dptr, host, ctypes.c_size_t(4 * n)), "cuMemcpyHtoD")
    mod = ctypes.c_void_p()
    check(lib.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(ptx)), "cuModuleLoadData")
    fn = ctypes.c_void_p()
    check(lib.cuModuleGetFunction(ctypes.byref(fn), mod, b"add_one"), "cuModuleGetFunction")
    count = ctypes.c_uint32(n)
    params = (ctypes.c_void_p * 2)(ctypes.addressof(dptr), ctypes.addressof(count))
    lib.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
        ctypes.c_void_p] * 3
    # The host's C stdout (a pipe: fully buffered) and the device's printf,
    # which the synchronisation writes through that same stdout, stay in order.
    libc.printf(b"host: launching\n")
    check(lib.cuLaunchKernel(fn, 8, 1, 1, 128, 1, 1, 0, None, params, None), "cuLaunchKernel")
    check(lib.cuCtxSynchronize(), "cuCtxSynchronize")
    libc.printf(b"host: synchronized\n")
    libc.fflush(None)
    out = (ctypes.c_float * n)()
    check(lib.cuMemcpyDtoH_v2(out, dptr, ctypes.c_size_t(4 * n)), "cuMemcpyDtoH")
    bad = [i for i in range(n) if out[i] != i + 1]
    check(lib.cuMemFree_v2(dptr), "cuMemFree")
    check(lib.cuCtxDestroy_v2(ctx), "cuCtxDestroy")
    print("OK" if not bad else f"WRONG at {bad[:5]}", flush=True)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
