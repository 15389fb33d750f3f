"""cuLaunchHostFunc and cuStreamAddCallback: under the passthrough NVIDIA's,
which call the application's function from NVIDIA's thread when the stream
reaches it (the stand-in driver calls at once and counts them); on the CPU
ours, at once after the device's work. Both call it with its own data."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support import run_probe

_PROBE = r"""
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
counted = ctypes.CDLL(sys.argv[2]).fake_host_calls if len(sys.argv) > 2 else None
if counted is not None:
    counted.restype = ctypes.c_ulonglong
HOSTFN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)
seen = []
host_fn = HOSTFN(lambda data: seen.append(("host", data)))
callback = CALLBACK(lambda stream, status, data: seen.append(("callback", status, data)))
assert lib.cuInit(0) == 0
ctx, stream = ctypes.c_void_p(), ctypes.c_void_p()
assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
assert lib.cuCtxSetCurrent(ctx) == 0
assert lib.cuStreamCreate(ctypes.byref(stream), 0) == 0
before = counted() if counted else 0
r = {"host": lib.cuLaunchHostFunc(stream, host_fn, ctypes.c_void_p(7)),
     "host_null_stream": lib.cuLaunchHostFunc(None, host_fn, ctypes.c_void_p(8)),
     "callback": lib.cuStreamAddCallback(stream, callback, ctypes.c_void_p(9), 0),
     "bad_stream": lib.cuLaunchHostFunc(ctypes.c_void_p(0x999), host_fn, None)}
assert lib.cuStreamSynchronize(stream) == 0 and lib.cuCtxSynchronize() == 0
r["seen"] = sorted(seen)
r["vendor_calls"] = counted() - before if counted else 0
print(json.dumps(r))
"""


def _probe(libdir: str, *extra: str, **env: str) -> dict[str, Any]:
    return run_probe(_PROBE, libdir, *extra, **env)


def test_host_functions_are_nvidias_under_the_passthrough(libdir: str,
                                                         fake_nvidia_driver: Path) -> None:
    ours = _probe(libdir, str(fake_nvidia_driver), ZMLIR_BACKEND="cuda",
                  ZMLIR_CUDA_DRIVER=str(fake_nvidia_driver))
    assert [ours[k] for k in ("host", "host_null_stream", "callback")] == [0, 0, 0]
    assert ours["bad_stream"] == 400  # CUDA_ERROR_INVALID_HANDLE, ours
    assert ours["seen"] == [["callback", 0, 9], ["host", 7], ["host", 8]]
    assert ours["vendor_calls"] == 3
    cpu = _probe(libdir, ZMLIR_BACKEND="opencl")
    assert cpu.pop("vendor_calls") == 0 and ours.pop("vendor_calls") == 3
    assert cpu == ours
