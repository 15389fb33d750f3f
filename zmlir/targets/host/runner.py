"""Loads and launches the host target's kernel libraries in this process.

The host runtime (libzmlir_host_runtime.so, beside zmlir._native) is loaded
once, globally, so the kernel libraries' calls of its functions resolve to
it; `HostDevice` then offers what the tests' launch helper uses of a device:
memory, copies, modules and launches. Device memory is this process's
memory, 64-byte aligned, so device pointers are plain addresses.
"""

from __future__ import annotations

import ctypes
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

RUNTIME_NAME = "libzmlir_host_runtime.so"
_ALIGN = 64
_Entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)
_Dim3 = ctypes.c_uint * 3


class HostLaunchError(RuntimeError):
    """A launch that did not complete: a thread trapped."""


def runtime_path() -> Path:
    from zmlir import _native

    return Path(_native.__file__).with_name(RUNTIME_NAME)


_runtime: ctypes.CDLL | None = None


def runtime() -> ctypes.CDLL:
    """The host runtime, loaded on first use with its symbols global."""
    global _runtime
    if _runtime is None:
        lib = ctypes.CDLL(str(runtime_path()), mode=os.RTLD_NOW | os.RTLD_GLOBAL)
        lib.zmlir_host_launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p, _Dim3, _Dim3,
                                          ctypes.c_uint32]
        lib.zmlir_host_launch.restype = ctypes.c_int
        _runtime = lib
    return _runtime


@dataclass(frozen=True)
class HostKernel:
    name: str
    entry: int  # the address of `<name>.zmlir_entry`


class HostProgram:
    """One compiled module (the host target's binary), loaded."""

    def __init__(self, binary: bytes) -> None:
        runtime()
        # dlopen needs a file; it stays mapped after the file is gone.
        with tempfile.NamedTemporaryFile(prefix="zmlir-host-", suffix=".so") as f:
            f.write(binary)
            f.flush()
            self._lib = ctypes.CDLL(f.name, mode=os.RTLD_NOW | os.RTLD_LOCAL)

    def kernel(self, name: str) -> HostKernel:
        try:
            entry = getattr(self._lib, f"{name}.zmlir_entry")
        except AttributeError:
            raise KeyError(f"no kernel '{name}' in the module") from None
        return HostKernel(name, ctypes.cast(entry, ctypes.c_void_p).value or 0)

    def global_variable(self, name: str) -> int:
        """The address of the module's variable `name` (state a driver sets,
        as the device heap's address)."""
        try:
            return ctypes.addressof(ctypes.c_char.in_dll(self._lib, name))
        except ValueError:
            raise KeyError(f"no variable '{name}' in the module") from None


class HostDevice:
    """Memory, copies and launches on the host CPU."""

    def __init__(self) -> None:
        self._buffers: dict[int, np.ndarray] = {}

    def alloc(self, nbytes: int) -> int:
        raw = np.zeros(max(nbytes, 1) + _ALIGN, dtype=np.uint8)
        address = (raw.ctypes.data + _ALIGN - 1) // _ALIGN * _ALIGN
        self._buffers[address] = raw
        return address

    def free(self, address: int) -> None:
        del self._buffers[address]

    def copy_to_device(self, address: int, data: np.ndarray) -> None:
        ctypes.memmove(address, np.ascontiguousarray(data).ctypes.data, data.nbytes)

    def copy_into(self, address: int, out: np.ndarray) -> np.ndarray:
        ctypes.memmove(out.ctypes.data, address, out.nbytes)
        return out

    def load(self, binary: bytes) -> HostProgram:
        return HostProgram(binary)

    def launch(self, kernel: HostKernel, *, grid: tuple[int, int, int],
               block: tuple[int, int, int], args: list[Any], shared_bytes: int = 0,
               shared_window: int | None = None) -> None:
        """Runs `kernel` over the grid; `args` are the parameters in order
        (numpy scalars, or objects whose `encode()` gives their bytes, as
        the OpenCL launcher's KernelArg), `shared_window` the kernel's static
        shared bytes, to which `shared_bytes` of dynamic ones are added."""
        values = [_argument_bytes(arg) for arg in args]
        slots = (ctypes.c_void_p * max(len(values), 1))(
            *[ctypes.cast(v, ctypes.c_void_p) for v in values])
        window = (shared_window or 0) + shared_bytes
        status = runtime().zmlir_host_launch(kernel.entry, slots, _Dim3(*grid), _Dim3(*block),
                                             window)
        if status:
            raise HostLaunchError(f"kernel '{kernel.name}' trapped")


def _argument_bytes(arg: Any) -> ctypes.Array[ctypes.c_char]:
    """A parameter's value in memory the kernel's entry loads it from."""
    data = arg.tobytes() if isinstance(arg, np.generic) else arg.encode()
    return ctypes.create_string_buffer(data, max(len(data), 8))
