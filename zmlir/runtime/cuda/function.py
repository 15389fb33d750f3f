"""Functions (CUfunction) and kernels (CUkernel, the same objects here):
creating them from a loaded module, their names, attributes and parameter
layout, and registering them with the C launch fast path (fastpath.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

from zmlir.runtime.cuda.attributes import (
    function_attribute,
    max_dynamic_shared,
    max_dynamic_shared_optin,
)
from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.native import is_native
from zmlir.runtime.cuda.objects import Function, Module
from zmlir.runtime.cuda.state import DriverState

E = CUresult

# PTX parameter types -> the numpy types their bytes are read as.
NUMPY_TYPES = {
    "u8": np.uint8, "s8": np.int8, "b8": np.uint8, "u16": np.uint16, "s16": np.int16,
    "b16": np.uint16, "f16": np.float16, "u32": np.uint32, "s32": np.int32, "b32": np.uint32,
    "f32": np.float32, "u64": np.uint64, "s64": np.int64, "b64": np.uint64, "f64": np.float64,
}


def param_dtype(ptx_type: str) -> np.dtype | None:
    """The numpy type a kernel parameter's bytes are read as: a scalar's
    own, a by-value array's bytes as one `V<size>` (np.void) value; None
    for a type the launcher does not know."""
    scalar = NUMPY_TYPES.get(ptx_type)
    if scalar is not None:
        return np.dtype(scalar)
    element, _, count = ptx_type.rpartition(" ")[2].partition("[")
    scalar = NUMPY_TYPES.get(element)
    if scalar is None or not count.endswith("]") or not count[:-1].isdigit():
        return None
    size = np.dtype(scalar).itemsize * int(count[:-1])
    return np.dtype(f"V{size}") if size else None


def param_alignment(ptx_type: str) -> int:
    """A parameter's alignment in a packed parameter buffer: its declared
    `.align`, else its element's size."""
    if ptx_type.startswith("align "):
        return int(ptx_type.split(" ", 2)[1])
    element = ptx_type.partition("[")[0]
    return np.dtype(NUMPY_TYPES.get(element, np.uint8)).itemsize


def packed_offsets(ptx_types: list[str], sizes: list[int]) -> tuple[list[int], int]:
    """Each parameter's offset in a packed parameter buffer (cuLaunchKernel's
    `extra`, a device-side launch's), each at its alignment, and the bytes
    they take."""
    offsets, end = [], 0
    for ptx_type, size in zip(ptx_types, sizes, strict=True):
        align = param_alignment(ptx_type)
        offsets.append(-(-end // align) * align)
        end = offsets[-1] + size
    return offsets, end


class FunctionAPI(DriverState):
    def function(self, module: Module, name: str) -> int:
        fn = module.functions.get(name)
        if fn is None:
            info = module.compiled.kernels.get(name)
            if info is None:
                raise CudaError(E.CUDA_ERROR_NOT_FOUND, f"no kernel named {name!r}")
            fn = Function(module, name, info, self.device.kernel(module.program, name))
            fn.handle = self.handles.add(fn)
            module.functions[name] = fn
            self.fast_register(fn)
        return fn.handle

    def sync_optin(self, fn: Function) -> None:
        """`fn`'s MAX_DYNAMIC_SHARED_SIZE_BYTES as fastpath.c last set it (a
        cuFuncSetAttribute that never reached Python), before it is read."""
        if not fn.fast:
            return
        value = self.fast.optin(fn.handle)
        if value is not None:
            fn.attributes[8] = value
            self.device.shared_reserved(fn.kernel, fn.info.static_shared_bytes + value)

    def fast_register(self, fn: Function) -> None:
        """Registers `fn` with the C launch fast path (if it can launch it):
        its parameters' sizes come from their PTX types, and so does their
        packing in a launch's `extra` (packed_offsets, as launch._unpack reads it)."""
        self.sync_optin(fn)
        dtypes = [param_dtype(t) for t in fn.info.params]
        # `any(... is None)`, not `None in`: numpy's dtype(None) is float64, so an f64
        # parameter compared equal to None and kept its kernel off the fast path.
        sizes = None if any(d is None for d in dtypes) else [d.itemsize for d in dtypes]
        packed = packed_offsets(fn.info.params, sizes)[1] if sizes is not None else 0
        if not self.launches_as_is(fn):
            sizes = None
        window = fn.info.static_shared_bytes + max_dynamic_shared(fn, self.device)
        fn.fast = self.fast.function(fn.handle, self.device, fn.kernel, fn.info, sizes, window,
                                     packed, is_native(fn.module))

    def launches_as_is(self, fn: Function) -> bool:
        """Whether a launch of `fn` is the backend's launch and nothing of
        ours around it: what the C launch path and the vendor's graphs
        (graph/vendor.py) may launch."""
        if fn.module.trap_word:
            return False  # its launches check the trap word, in Python
        if fn.module.device_launch_var:
            return False  # its launches run the grids it launches (device_launch.py)
        if fn.name in fn.module.printf_kernels and not self.printf.locked:
            return False  # its first launch fixes the printf FIFO's size (printf.py), in Python
        heap = fn.module.heap
        # Its first launch fixes the heap's size (heap.py), in Python.
        return heap is None or heap.locked or fn.name not in fn.module.heap_kernels

    def cuKernelGetFunction(self, pfunc: Any, kernel: Any) -> int:
        self.handles.get(self.ptr(kernel), Function)
        self.out(pfunc, kernel)
        return E.CUDA_SUCCESS

    def cuKernelGetName(self, name: Any, kernel: Any) -> int:
        return self.cuFuncGetName(name, kernel)

    def cuFuncGetName(self, name: Any, hfunc: Any) -> int:
        fn = self.handles.get(self.ptr(hfunc), Function)
        cstr = self.ffi.new("char[]", fn.name.encode())
        self.keepalive.append(cstr)
        self.out(name, cstr)
        return E.CUDA_SUCCESS

    def cuFuncGetModule(self, hmod: Any, hfunc: Any) -> int:
        fn = self.handles.get(self.ptr(hfunc), Function)
        self.out(hmod, self.handle_ptr(fn.module.handle))
        return E.CUDA_SUCCESS

    def attribute_of(self, fn: Function, attrib: int) -> int | None:
        """CUfunction attribute `attrib` of `fn` (None: not one): of NVIDIA's
        machine code, as its driver knows it; of ours, from our compiler."""
        self.sync_optin(fn)
        if is_native(fn.module):
            return self.device.native_function_attribute(fn.kernel.handle, attrib)
        return function_attribute(attrib, fn, self.device)

    def cuFuncGetAttribute(self, pi: Any, attrib: int, hfunc: Any) -> int:
        fn = self.handles.get(self.ptr(hfunc), Function)
        value = self.attribute_of(fn, attrib)
        if value is None:
            return E.CUDA_ERROR_INVALID_VALUE
        self.out(pi, value)
        return E.CUDA_SUCCESS

    def cuKernelGetAttribute(self, pi: Any, attrib: int, kernel: Any, dev: int) -> int:
        return self.cuFuncGetAttribute(pi, attrib, kernel)

    def cuFuncSetAttribute(self, hfunc: Any, attrib: int, value: int) -> int:
        fn = self.handles.get(self.ptr(hfunc), Function)
        self.sync_optin(fn)
        if attrib == 8 and not 0 <= value <= max_dynamic_shared_optin(fn, self.device):
            return E.CUDA_ERROR_INVALID_VALUE  # MAX_DYNAMIC_SHARED_SIZE_BYTES above the device's
        unchanged = fn.attributes.get(attrib) == value
        if is_native(fn.module) and attrib != 8:  # 8: below, through the backend
            code = self.device.native_set_function_attribute(fn.kernel.handle, attrib, value)
            if code != E.CUDA_SUCCESS:
                return code
        # The backend readies the kernel for the window now (NVIDIA's answer
        # for its machine code): its next launch (inside immaTensorCoreGemm's
        # timed region) is then fastpath.c's, and NVIDIA's occupancy, which
        # fastpath.c asks, counts with the opt-in (NVIDIA's cuBLAS opts a
        # kernel in, then asks: 0 blocks without it, and cublasCreate failed).
        if attrib == 8 and not unchanged and fn.pending is None:
            self.device.reserve_shared(fn.kernel, fn.info.static_shared_bytes + value)
        fn.attributes[attrib] = value
        # The fast path's shared-memory limit; llm.c's layernorm_forward6 sets
        # the same value before every timed launch, which changes nothing.
        if attrib == 8 and fn.fast and not unchanged:
            self.fast_register(fn)
        return E.CUDA_SUCCESS

    def cuKernelSetAttribute(self, attrib: int, value: int, kernel: Any, dev: int) -> int:
        return self.cuFuncSetAttribute(kernel, attrib, value)

    def cuFuncSetCacheConfig(self, hfunc: Any, config: int) -> int:
        self.handles.get(self.ptr(hfunc), Function)
        return E.CUDA_SUCCESS

    def cuKernelSetCacheConfig(self, kernel: Any, config: int, dev: int) -> int:
        self.check_device(dev)
        return self.cuFuncSetCacheConfig(kernel, config)  # a preference: one cache here

    def cuFuncGetParamInfo(self, hfunc: Any, index: int, poffset: Any, psize: Any) -> int:
        """Offset and size of a parameter in the packed parameter buffer
        (each aligned as declared, in order: what `extra` launches use)."""
        fn = self.handles.get(self.ptr(hfunc), Function)
        if index >= len(fn.info.params):
            return E.CUDA_ERROR_INVALID_VALUE
        types = fn.info.params[: index + 1]
        sizes = []
        for ptx_type in types:
            dtype = param_dtype(ptx_type)
            if dtype is None:
                return self.unsupported("cuFuncGetParamInfo", f"parameter of type .{ptx_type}")
            sizes.append(dtype.itemsize)
        self.out(poffset, packed_offsets(types, sizes)[0][index])
        self.out(psize, sizes[index])
        return E.CUDA_SUCCESS

    def cuKernelGetParamInfo(self, kernel: Any, index: int, poffset: Any, psize: Any) -> int:
        return self.cuFuncGetParamInfo(kernel, index, poffset, psize)
