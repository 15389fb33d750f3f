"""2D and 3D copies (cuMemcpy2D/3D_v2 and their Async forms) between host
and pitched device memory, and 2D fills (cuMemsetD2D*): under the
passthrough one call of NVIDIA's each (Backend.copy_pitched, fill_pitched;
the stand-in driver counts them), in the stream's order; on the CPU one
wait, then a memmove per row (a fill a row at a time). Both give the same
bytes, and both refuse rows past the end of a device allocation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support import run_probe

_PROBE = r"""
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
counted = ctypes.CDLL(sys.argv[2]).fake_pitched_copies if len(sys.argv) > 2 else None
if counted is not None:
    counted.restype = ctypes.c_ulonglong
c_size_t, c_void_p, c_int, c_u64 = ctypes.c_size_t, ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64
class Copy2D(ctypes.Structure):  # CUDA_MEMCPY2D
    _fields_ = [("srcXInBytes", c_size_t), ("srcY", c_size_t), ("srcMemoryType", c_int),
                ("srcHost", c_void_p), ("srcDevice", c_u64), ("srcArray", c_void_p),
                ("srcPitch", c_size_t),
                ("dstXInBytes", c_size_t), ("dstY", c_size_t), ("dstMemoryType", c_int),
                ("dstHost", c_void_p), ("dstDevice", c_u64), ("dstArray", c_void_p),
                ("dstPitch", c_size_t), ("WidthInBytes", c_size_t), ("Height", c_size_t)]
class Copy3D(ctypes.Structure):  # CUDA_MEMCPY3D
    _fields_ = [("srcXInBytes", c_size_t), ("srcY", c_size_t), ("srcZ", c_size_t),
                ("srcLOD", c_size_t), ("srcMemoryType", c_int), ("srcHost", c_void_p),
                ("srcDevice", c_u64), ("srcArray", c_void_p), ("reserved0", c_void_p),
                ("srcPitch", c_size_t), ("srcHeight", c_size_t),
                ("dstXInBytes", c_size_t), ("dstY", c_size_t), ("dstZ", c_size_t),
                ("dstLOD", c_size_t), ("dstMemoryType", c_int), ("dstHost", c_void_p),
                ("dstDevice", c_u64), ("dstArray", c_void_p), ("reserved1", c_void_p),
                ("dstPitch", c_size_t), ("dstHeight", c_size_t),
                ("WidthInBytes", c_size_t), ("Height", c_size_t), ("Depth", c_size_t)]
HOST, DEVICE = 1, 2
assert lib.cuInit(0) == 0
ctx, stream = c_void_p(), c_void_p()
assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
assert lib.cuCtxSetCurrent(ctx) == 0
assert lib.cuStreamCreate(ctypes.byref(stream), 0) == 0
r = {"calls": []}
def call(name, fn, *args):
    before = counted() if counted else 0
    r[name] = fn(*args)
    r["calls"].append(counted() - before if counted else 0)
# A 96 x 40 byte image into a device buffer of pitch 128, rows 3.. of it.
width, height, pitch = 96, 40, 128
image = (ctypes.c_ubyte * (width * height))(*[(i * 7 + i // width) % 251 for i in range(width * height)])
dev = c_u64()
assert lib.cuMemAlloc_v2(ctypes.byref(dev), pitch * (height + 8)) == 0
assert lib.cuMemsetD8_v2(dev, 0xEE, pitch * (height + 8)) == 0
up = Copy2D(srcMemoryType=HOST, srcHost=ctypes.addressof(image), srcPitch=width,
            dstMemoryType=DEVICE, dstDevice=dev.value, dstY=3, dstXInBytes=16, dstPitch=pitch,
            WidthInBytes=width - 16, Height=height)
call("up", lib.cuMemcpy2D_v2, ctypes.byref(up))
whole = (ctypes.c_ubyte * (pitch * (height + 8)))()
assert lib.cuMemcpyDtoH_v2(whole, dev, len(whole)) == 0
r["device_bytes"] = sum(b * (i % 97 + 1) for i, b in enumerate(whole)) % 1000003
back = (ctypes.c_ubyte * (width * height))()
down = Copy2D(srcMemoryType=DEVICE, srcDevice=dev.value, srcY=3, srcXInBytes=16, srcPitch=pitch,
              dstMemoryType=HOST, dstHost=ctypes.addressof(back), dstPitch=width,
              WidthInBytes=width - 16, Height=height)
call("down_async", lib.cuMemcpy2DAsync_v2, ctypes.byref(down), stream)
assert lib.cuStreamSynchronize(stream) == 0
r["round_trip"] = all(back[y * width + x] == image[y * width + x]
                      for y in range(height) for x in range(width - 16))
# 3D: 4 slices of 8 rows of 24 bytes, from a packed host block into device slices of
# 10 rows of pitch 32, and back with the async form.
block = (ctypes.c_ubyte * (4 * 8 * 24))(*[(i * 13) % 256 for i in range(4 * 8 * 24)])
vol = c_u64()
assert lib.cuMemAlloc_v2(ctypes.byref(vol), 32 * 10 * 5) == 0
c3 = Copy3D(srcMemoryType=HOST, srcHost=ctypes.addressof(block), srcPitch=24, srcHeight=8,
            dstMemoryType=DEVICE, dstDevice=vol.value, dstPitch=32, dstHeight=10, dstZ=1,
            WidthInBytes=24, Height=8, Depth=4)
call("up_3d", lib.cuMemcpy3D_v2, ctypes.byref(c3))
again = (ctypes.c_ubyte * len(block))()
d3 = Copy3D(srcMemoryType=DEVICE, srcDevice=vol.value, srcPitch=32, srcHeight=10, srcZ=1,
            dstMemoryType=HOST, dstHost=ctypes.addressof(again), dstPitch=24, dstHeight=8,
            WidthInBytes=24, Height=8, Depth=4)
call("down_3d_async", lib.cuMemcpy3DAsync_v2, ctypes.byref(d3), stream)
assert lib.cuStreamSynchronize(stream) == 0
r["round_trip_3d"] = bytes(again) == bytes(block)
# 2D fills: 16-bit words over 10 rows of 40 bytes of the image's rows 3..,
# blocking and in the stream.
fills = ctypes.CDLL(sys.argv[2]).fake_pitched_fills if counted else None
def filled(name, call):
    before = fills() if fills else 0
    r[name] = call()
    r[name + "_fills"] = fills() - before if fills else 0
filled("fill16", lambda: lib.cuMemsetD2D16_v2(ctypes.c_uint64(dev.value + 3 * pitch), pitch,
                                               0xBEEF, 20, 10))
filled("fill32_async", lambda: lib.cuMemsetD2D32Async(ctypes.c_uint64(dev.value + 20 * pitch),
                                                       pitch, 0x12345678, 8, 5, stream))
assert lib.cuStreamSynchronize(stream) == 0
assert lib.cuMemcpyDtoH_v2(whole, dev, len(whole)) == 0
r["filled_bytes"] = sum(b * (i % 89 + 1) for i, b in enumerate(whole)) % 1000003
# Rows that run past the device allocation: refused before anything moves.
past = Copy2D(srcMemoryType=HOST, srcHost=ctypes.addressof(image), srcPitch=width,
              dstMemoryType=DEVICE, dstDevice=dev.value, dstY=height, dstPitch=pitch,
              WidthInBytes=width, Height=10)
call("past_the_end", lib.cuMemcpy2D_v2, ctypes.byref(past))
call("past_the_end_async", lib.cuMemcpy2DAsync_v2, ctypes.byref(past), stream)
bad = Copy2D(srcMemoryType=HOST, srcHost=ctypes.addressof(image), srcPitch=8,
             dstMemoryType=DEVICE, dstDevice=dev.value, dstPitch=pitch, WidthInBytes=16, Height=2)
call("width_over_pitch", lib.cuMemcpy2D_v2, ctypes.byref(bad))
print(json.dumps(r))
"""


def _probe(libdir: str, *extra: str, **env: str) -> dict[str, Any]:
    return run_probe(_PROBE, libdir, *extra, **env)


def test_pitched_copies_are_one_call_of_nvidias(libdir: str, fake_nvidia_driver: Path) -> None:
    ours = _probe(libdir, str(fake_nvidia_driver), ZMLIR_BACKEND="cuda",
                  ZMLIR_CUDA_DRIVER=str(fake_nvidia_driver))
    assert ours["round_trip"] and ours["round_trip_3d"]
    assert [ours[k] for k in ("up", "down_async", "up_3d", "down_3d_async")] == [0] * 4
    assert ours["width_over_pitch"] == 1  # CUDA_ERROR_INVALID_VALUE, before NVIDIA's
    assert ours["calls"] == [1, 1, 1, 1, 0, 0, 0]
    assert (ours["past_the_end"], ours["past_the_end_async"]) == (1, 1)  # INVALID_VALUE
    assert (ours["fill16"], ours["fill32_async"]) == (0, 0)
    assert (ours.pop("fill16_fills"), ours.pop("fill32_async_fills")) == (1, 1)
    cpu = _probe(libdir, ZMLIR_BACKEND="opencl")  # a row at a time, the same bytes
    ours.pop("calls"), cpu.pop("calls"), cpu.pop("fill16_fills"), cpu.pop("fill32_async_fills")
    assert cpu == ours
