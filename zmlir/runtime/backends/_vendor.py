"""What the vendor-library backends (HIP, Level Zero, CUDA passthrough) share:
opening the vendor library through cffi's ABI mode with a clear account of
where it was looked for, errors that name the API and its code, and kernel
arguments as the bytes each parameter's ABI type wants."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zmlir.runtime.backends.base import NoDevice


class VendorError(RuntimeError):
    """A vendor API call failed: which call, its result code and name."""

    def __init__(self, api: str, code: int, name: str, detail: str = "",
                 cuda_result: int | None = None) -> None:
        self.api, self.code, self.name = api, code, name
        # Set where the vendor's code is itself a CUresult (NVIDIA's driver under
        # the passthrough): the application gets that code, as from the real driver.
        self.cuda_result = cuda_result
        text = f"{api} failed: {name} ({code:#x})" if code > 0xFFFF else \
            f"{api} failed: {name} ({code})"
        super().__init__(f"{text}: {detail}" if detail else text)


@dataclass(frozen=True)
class OpenedLibrary:
    lib: Any
    path: str


def open_library(ffi: Any, candidates: Iterable[str], what: str,
                 flags: int | None = None) -> OpenedLibrary:
    """The first candidate that dlopens; NoDevice listing every path tried
    (and why each failed) when none does."""
    tried: list[str] = []
    for candidate in dict.fromkeys(candidates):  # unique, in order
        try:
            lib = ffi.dlopen(candidate) if flags is None else ffi.dlopen(candidate, flags)
        except OSError as err:
            tried.append(f"{candidate} ({_dlopen_reason(candidate, err)})")
            continue
        return OpenedLibrary(lib, candidate)
    raise NoDevice(f"{what} not found; tried: " + "; ".join(tried or ["(no candidates)"]))


def _dlopen_reason(candidate: str, err: OSError) -> str:
    # cffi says "cannot load library 'x': x: cannot open shared object file: ...";
    # the last clause is the part worth showing.
    text = str(err).splitlines()[0] if str(err) else "dlopen failed"
    reason = text.rsplit(": ", 1)[-1]
    if os.path.isabs(candidate) and not os.path.exists(candidate):
        return "no such file"
    return reason


def note(message: str) -> None:
    """One line on stderr when ZMLIR_LOG is set: what ran where."""
    if os.environ.get("ZMLIR_LOG"):
        print(f"zmlir: {message}", file=sys.stderr, flush=True)


def env_path(variable: str) -> list[str]:
    """An override path from the environment, as a candidate list."""
    value = os.environ.get(variable, "").strip()
    return [value] if value else []


# Our kernels take pointers as 64-bit integers, so every argument is a plain
# scalar: its bytes are the numpy scalar's, in the host's (little) endianness.
def encode_args(args: Sequence[Any]) -> list[bytes]:
    encoded = []
    for index, value in enumerate(args):
        if isinstance(value, np.generic):
            encoded.append(value.tobytes())
        elif hasattr(value, "encode") and hasattr(value, "kind"):  # opencl.device.KernelArg
            encoded.append(value.encode())
        else:
            raise TypeError(f"kernel argument {index} ({value!r}) is not a numpy scalar")
    return encoded


@dataclass
class ParamBlock:
    """A `void *params[]` array for cuLaunchKernel/hipModuleLaunchKernel,
    with the argument buffers it points at kept alive alongside."""

    array: Any
    buffers: list[Any]


def param_block(ffi: Any, args: Sequence[Any]) -> ParamBlock:
    buffers = [ffi.new("char[]", raw) for raw in encode_args(args)]
    array = ffi.new("void *[]", [ffi.cast("void *", b) for b in buffers] or [ffi.NULL])
    return ParamBlock(array, buffers)


def dim3(what: str, dims: Sequence[int]) -> tuple[int, int, int]:
    if not 1 <= len(dims) <= 3:
        raise ValueError(f"{what} must have 1 to 3 dimensions, got {tuple(dims)}")
    padded = [int(d) for d in dims] + [1] * (3 - len(dims))
    if any(d < 1 for d in padded):
        raise ValueError(f"{what} dimensions must be >= 1, got {tuple(dims)}")
    return (padded[0], padded[1], padded[2])


def host_buffer(ffi: Any, data: Any) -> tuple[Any, int]:
    """(cffi pointer, size) of host bytes, numpy arrays in C order."""
    if isinstance(data, np.ndarray):
        data = np.ascontiguousarray(data)
    view = memoryview(data)
    if view.format != "B" or not view.c_contiguous:
        view = memoryview(bytes(view)) if not view.c_contiguous else view.cast("B")
    return ffi.from_buffer(view), view.nbytes


class CopiesThroughMemcpy:
    """The Backend copy methods for a vendor with one memcpy for every
    direction (hipMemcpy with hipMemcpyDefault, Level Zero's append copy):
    subclasses provide `ffi` and `_memcpy(dst, src, nbytes)`."""

    ffi: Any

    def _memcpy(self, dst: Any, src: Any, nbytes: int) -> None:
        raise NotImplementedError

    def copy_to_device(self, address: int, data: Any) -> None:
        src, nbytes = host_buffer(self.ffi, data)
        if nbytes:
            self._memcpy(address, src, nbytes)

    def copy_from_device(self, address: int, nbytes: int) -> bytes:
        out = bytearray(nbytes)
        if nbytes:
            self._memcpy(self.ffi.from_buffer(out), address, nbytes)
        return bytes(out)

    def copy_device_to_device(self, dst: int, src: int, nbytes: int) -> None:
        if nbytes:
            self._memcpy(dst, src, nbytes)
