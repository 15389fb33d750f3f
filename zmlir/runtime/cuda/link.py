"""The JIT linker: cuLinkCreate, cuLinkAddData/AddFile, cuLinkComplete,
cuLinkDestroy. Programs (NVIDIA's ptxjit sample, numba-cuda) hand it PTX,
fatbins or NVIDIA objects and load what cuLinkComplete returns with
cuModuleLoadData. What we hand back is PTX text, which cuModuleLoadData
takes wherever it takes a cubin: the inputs' PTX linked into one module
(frontend/link.py). NVIDIA's device runtime library (libcudadevrt.a,
machine code) links as our PTX stand-in for it (devrt.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from zmlir.runtime.cuda import devrt
from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.module import JitLog, ModuleAPI, ceiling_ptx, linked_ptx

E = CUresult

# CUjitInputType
_INPUT_CUBIN, _INPUT_PTX, _INPUT_FATBINARY, _INPUT_OBJECT, _INPUT_LIBRARY = 0, 1, 2, 3, 4
_INPUT_NAMES = {0: "cubin", 1: "PTX", 2: "fatbin", 3: "object", 4: "library", 5: "NVVM IR"}


@dataclass
class LinkState:
    log: JitLog
    ptx: list[tuple[str, str]] = field(default_factory=list)  # (text, name)
    image: Any = None  # what cuLinkComplete handed out, alive until cuLinkDestroy
    devrt: bool = False  # our libcudadevrt stand-in is among the units
    # cuLinkCreate's CU_JIT_MAX_REGISTERS, read there (its option arrays need
    # not outlive the call, only the log buffers do); 0: none.
    max_registers: int = 0


class LinkAPI(ModuleAPI):
    def cuLinkCreate_v2(self, n: int, options: Any, values: Any, pstate: Any) -> int:
        self.current_context()
        log = JitLog(self.ffi, n, options, values)
        state = LinkState(log, max_registers=log.max_registers)
        self.out(pstate, self.handle_ptr(self.handles.add(state)))
        return E.CUDA_SUCCESS

    def cuLinkAddData_v2(self, hstate: Any, kind: int, data: Any, size: int, name: Any,
                         n: int, options: Any, values: Any) -> int:
        state = self.handles.get(self.ptr(hstate), LinkState)
        label = self.ffi.string(name).decode(errors="replace") if name != self.ffi.NULL else ""
        if data == self.ffi.NULL or size == 0:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "no data to link")
        if kind == _INPUT_PTX:
            text = bytes(self.ffi.buffer(self.ffi.cast("char *", data), size))
            unit = (text.split(b"\0", 1)[0].decode("utf-8", "replace"), label or "link.ptx")
        elif kind == _INPUT_FATBINARY:
            unit = self._image_ptx(data)[0]
        elif devrt.is_cudadevrt(label, bytes(self.ffi.buffer(self.ffi.cast("char *", data),
                                                             size))):
            if state.devrt:
                return E.CUDA_SUCCESS  # linked once, as a library is searched once
            state.devrt = True
            unit = devrt.unit()
        else:
            err = CudaError(E.CUDA_ERROR_NOT_SUPPORTED,
                            f"linking {_INPUT_NAMES.get(kind, f'input type {kind}')} "
                            f"{label!r}: NVIDIA machine code; only PTX and fatbins with PTX link")
            state.log.error(str(err))  # what nvJitLink's stand-in reports
            raise err
        # This input's register ceiling (CU_JIT_MAX_REGISTERS) on its kernels;
        # cuLinkCreate's on all of them at cuLinkComplete.
        unit = (ceiling_ptx(unit[0], JitLog(self.ffi, n, options, values).max_registers), unit[1])
        # A name this unit defines again fails here, as on NVIDIA's linker
        # (undefined references wait for cuLinkComplete).
        if state.ptx:
            try:
                _check_definitions([*state.ptx, unit])
            except CudaError as err:
                state.log.error(str(err))
                raise
        state.ptx.append(unit)
        return E.CUDA_SUCCESS

    def cuLinkAddFile_v2(self, hstate: Any, kind: int, path: Any, n: int, options: Any,
                         values: Any) -> int:
        self.handles.get(self.ptr(hstate), LinkState)
        name = self.ffi.string(path).decode(errors="replace")
        try:
            with open(name, "rb") as f:
                data = f.read()
        except OSError as err:
            raise CudaError(E.CUDA_ERROR_FILE_NOT_FOUND, f"{name}: {err.strerror}") from None
        buffer = self.ffi.from_buffer("char[]", data + b"\0")
        return self.cuLinkAddData_v2(hstate, kind, buffer, len(data),
                                     self.ffi.new("char[]", name.encode()), 0, self.ffi.NULL,
                                     self.ffi.NULL)

    def cuLinkComplete(self, hstate: Any, pimage: Any, psize: Any) -> int:
        state = self.handles.get(self.ptr(hstate), LinkState)
        with state.log:
            if not state.ptx:
                raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "nothing was added to link")
            try:
                linked = linked_ptx(state.ptx)  # one unit too: its undefined references
            except CudaError as err:
                why = devrt.unsupported(str(err)) if state.devrt else None
                if why is None:
                    raise
                raise CudaError(E.CUDA_ERROR_NOT_SUPPORTED, why) from None
            text = ceiling_ptx(state.ptx[0][0] if len(state.ptx) == 1 else linked,
                               state.max_registers)
            state.image = self.ffi.new("char[]", text.encode() + b"\0")
        self.out(pimage, state.image)
        if psize != self.ffi.NULL:
            psize[0] = len(text.encode()) + 1
        return E.CUDA_SUCCESS

    def cuLinkDestroy(self, hstate: Any) -> int:
        self.handles.remove(self.ptr(hstate), LinkState)
        return E.CUDA_SUCCESS


def _check_definitions(units: list[tuple[str, str]]) -> None:
    try:
        linked_ptx(units)
    except CudaError as err:
        if "Undefined reference" not in str(err):
            raise
