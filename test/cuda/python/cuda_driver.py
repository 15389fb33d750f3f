"""Our libcuda.so.1 through ctypes with the device's primary context
current: how each script beside this one starts (they run as
`zmlir run -- python SCRIPT`, which finds this module beside them)."""
import ctypes


def primary_context() -> ctypes.CDLL:
    cuda = ctypes.CDLL("libcuda.so.1")
    assert cuda.cuInit(0) == 0
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    assert cuda.cuCtxSetCurrent(ctx) == 0
    return cuda
