"""Kernel launches through Python: what fastpath.c's C path does not take
(tracing, captures, parameters it cannot describe, modules with trap words
(traps.py), cooperative launches, cuLaunchKernelEx attributes) and
occupancy. Parameters come from kernelParams or the packed `extra` buffer,
typed by the kernel's PTX parameter types. A launch returns while its kernel
runs where the backend hands over its event (Backend.launch_events)."""

from __future__ import annotations

from typing import Any

import numpy as np

from zmlir.runtime.backends.base import UnsupportedLaunch
from zmlir.runtime.cuda import cooperative as cooperative_launch
from zmlir.runtime.cuda import device_launch
from zmlir.runtime.cuda.attributes import device_attribute, max_dynamic_shared, max_threads
from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.function import FunctionAPI, packed_offsets, param_dtype
from zmlir.runtime.cuda.graph.model import HostParams, KernelParams, record
from zmlir.runtime.cuda.objects import Function
from zmlir.runtime.cuda.state import log

E = CUresult

# CUlaunchAttributeID values that change nothing here: hints, and orderings
# our one queue already gives (programmatic serialization may overlap
# launches; running them in order is allowed).
_LAUNCH_HINTS = {0: "IGNORE", 1: "ACCESS_POLICY_WINDOW", 3: "SYNCHRONIZATION_POLICY",
                 5: "CLUSTER_SCHEDULING_POLICY_PREFERENCE",
                 6: "PROGRAMMATIC_STREAM_SERIALIZATION", 8: "PRIORITY",
                 9: "MEM_SYNC_DOMAIN_MAP", 10: "MEM_SYNC_DOMAIN",
                 14: "PREFERRED_SHARED_MEMORY_CARVEOUT", 16: "NVLINK_UTIL_CENTRIC_SCHEDULING"}


class LaunchAPI(FunctionAPI):
    def launch(self, hfunc: Any, grid: tuple[int, int, int], block: tuple[int, int, int],
               shared: int, params: Any, extra: Any, stream: Any = None,
               cooperative: bool = False, cluster: tuple[int, int, int] | None = None) -> int:
        """The Python launch path: what fastpath.c's C path does not take.
        `cluster`: thread-block cluster dimensions, where the device has them."""
        self.current_context()
        self.check_sticky()  # in a graph's replay, an earlier kernel may have faulted
        # Back on the fast path after a context was destroyed (current_changed, without
        # a second look for kernels' errors).
        self.fast.set_context(self.context_stack()[-1])
        fn = self.handles.get(self.ptr(hfunc), Function)
        if fn.pending is not None:
            fn.pending(fn)  # a kernel of a parted module (parted.py): its part loads now
        if cooperative and not self.device.supports_cooperative:
            return self.unsupported(
                "cooperative launch", f"the {self.device.name} backend cannot guarantee that "
                "all blocks are resident at once")
        self.printf.launched(fn)
        uses_heap = self.heaps.launched(fn)
        code = self._launch(fn, grid, block, shared, params, extra, stream, cooperative, cluster)
        s = self.stream(stream) if stream is not None else None
        recorded = s is not None and s.capture is not None  # a graph's node, not a launch
        if (fn.fast or uses_heap or fn.name in fn.module.printf_kernels) and \
                code == E.CUDA_SUCCESS and not recorded:
            # The backend may have raised the kernel's shared limit; a kernel
            # whose heap's or printf FIFO's size is fixed now (llm.c's kernels
            # assert) can take the fast path.
            self.fast_register(fn)
        return code

    def _launch(self, fn: Function, grid: tuple[int, int, int], block: tuple[int, int, int],
                shared: int, params: Any, extra: Any, stream: Any, cooperative: bool,
                cluster: tuple[int, int, int] | None = None) -> int:
        # Only backends that support cooperative launches (clusters, vendor
        # streams) take the keyword.
        how: dict[str, Any] = {"cooperative": True} if cooperative else {}
        s = self.stream(stream) if stream is not None else None
        capturing = s is not None and s.capture is not None
        vendor = 0 if capturing or stream is None else self.vendor_queue(stream)
        if vendor:
            how["stream"] = vendor  # the backend's own (Backend.vendor_stream)
        if cluster is not None:
            if any(g % c for g, c in zip(grid, cluster, strict=True)):
                return E.CUDA_ERROR_INVALID_CLUSTER_SIZE  # the grid is whole clusters
            if capturing:
                return self.unsupported("cuLaunchKernelEx", "thread block clusters in a graph")
            how["cluster"] = cluster
        if min(grid) < 1 or min(block) < 1:
            return E.CUDA_ERROR_INVALID_VALUE
        if block[0] * block[1] * block[2] > max_threads(fn) or block[2] > 64:
            return E.CUDA_ERROR_INVALID_VALUE  # 1024, or the kernel's .maxntid/.reqntid
        if grid[0] > 2**31 - 1 or grid[1] > 65535 or grid[2] > 65535:
            return E.CUDA_ERROR_INVALID_VALUE  # MAX_GRID_DIM_X/Y/Z
        self.sync_optin(fn)
        if shared > max_dynamic_shared(fn, self.device):
            return E.CUDA_ERROR_INVALID_VALUE  # above 48 KiB without the opt-in, or above it
        if params != self.ffi.NULL and extra != self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        if params != self.ffi.NULL and any(params[i] == self.ffi.NULL
                                           for i in range(len(fn.info.params))):
            return E.CUDA_ERROR_INVALID_VALUE  # a NULL argument pointer
        if (self.device.launches_raw_params and params != self.ffi.NULL and not capturing
                and not fn.module.device_launch_var):
            # The backend takes the application's parameter array as it is.
            try:
                self.device.launch_raw(fn.kernel, fn.info, grid, block, self.ptr(params),
                                       shared, **how)
            except ValueError as err:
                log(f"launch of {fn.name} rejected: {err}")
                return E.CUDA_ERROR_INVALID_VALUE
            return E.CUDA_SUCCESS
        dtypes = fn.dtypes
        if dtypes is None:
            dtypes = []
            for ptx_type in fn.info.params:
                dtype = param_dtype(ptx_type)
                if dtype is None:
                    return self.unsupported("cuLaunchKernel",
                                            f"kernel parameter of type .{ptx_type} ({fn.name})")
                dtypes.append(dtype)
            fn.dtypes = dtypes
        if extra != self.ffi.NULL:
            packed = _unpack(fn, dtypes, self._extra_buffer(extra))
            if packed is None:
                return E.CUDA_ERROR_INVALID_VALUE
            args = packed
        else:
            if params == self.ffi.NULL and dtypes:
                return E.CUDA_ERROR_INVALID_VALUE
            raw = [bytes(self.ffi.buffer(params[i], dtype.itemsize))
                   for i, dtype in enumerate(dtypes)]
            if capturing:  # the node keeps the bytes
                assert s is not None
                record(self.handles, s, KernelParams(fn.handle, grid, block, shared,
                                                     tuple(raw)))
                return E.CUDA_SUCCESS
            args = [np.frombuffer(b, dtype=dtype)[0] for b, dtype in zip(raw, dtypes, strict=True)]
        how.update(self._watched())

        def run() -> int:
            try:
                with self.fast.launch_lock() as launched:
                    def launch() -> None:
                        launched.event = self.device.launch(fn.kernel, fn.info, grid, block,
                                                            args, shared, **how)

                    if fn.module.device_launch_var:
                        device_launch.begin(self.device, fn.module)
                    if cooperative:  # with the grid barrier's workspace
                        cooperative_launch.launch(self.device, fn.module, launch)
                    else:
                        launch()
            except UnsupportedLaunch as err:
                return self.unsupported("cuLaunchKernel", str(err))
            except ValueError as err:
                log(f"launch of {fn.name} rejected: {err}")
                return E.CUDA_ERROR_INVALID_VALUE
            self.traps.launched(fn, launched.number)
            if fn.module.device_launch_var:
                self._device_launches(fn, 1, how.get("stream", 0))
            self.stream_launched(s, stream)
            return E.CUDA_SUCCESS

        if capturing:
            assert s is not None
            record(self.handles, s, KernelParams(fn.handle, grid, block, shared,
                                                 tuple(arg.tobytes() for arg in args)))
            return E.CUDA_SUCCESS
        return run()

    def _device_launches(self, parent: Function, depth: int, queue: int = 0) -> None:
        """After a launch of `parent`: the grids its threads launched
        (device_launch.py), each followed by its own, depth first, in the
        parent's vendor stream `queue` (0: the queue), whose later work waits
        for them. What cannot run fails as a bad launch does on a GPU: the
        context's later calls return CUDA_ERROR_LAUNCH_FAILED."""
        module = parent.module
        launches, dropped = device_launch.collect(self.device, module)
        if dropped:  # their threads were told (a NULL buffer), their grids cannot run
            log(f"{dropped} device-side launches by {parent.name} were not made: more than "
                f"{device_launch.CAPACITY} in one grid; the context's later calls return "
                "CUDA_ERROR_LAUNCH_FAILED")
            self.make_sticky(E.CUDA_ERROR_LAUNCH_FAILED)
            self.current_changed()
            return
        for child in launches:
            if self.sticky_error():
                return
            copy = device_launch.copy_of(child)
            if copy is not None:
                self._device_copy(parent, *copy)
                continue
            fn, args, why = self._child(module, child, depth)
            if fn is None or args is None:
                log(f"a device-side launch by {parent.name} cannot run: {why}; the context's "
                    "later calls return CUDA_ERROR_LAUNCH_FAILED")
                self.make_sticky(E.CUDA_ERROR_LAUNCH_FAILED)
                self.current_changed()
                return
            self.printf.launched(fn)
            self.heaps.launched(fn)
            with self.fast.launch_lock() as launched:
                device_launch.begin(self.device, module)
                launched.event = self.device.launch(fn.kernel, fn.info, child.grid,
                                                    child.block, args, child.shared,
                                                    **self._watched(),
                                                    **({"stream": queue} if queue else {}))
            self.traps.launched(fn, launched.number)
            self._device_launches(fn, depth + 1, queue)

    def _device_copy(self, parent: Function, dst: int, src: int, nbytes: int) -> None:
        """A device-side cudaMemcpyAsync by `parent`'s threads. Outside the
        memory the device reaches it fails as such a copy faults on a GPU:
        the context's later calls return CUDA_ERROR_ILLEGAL_ADDRESS."""
        def reached(address: int) -> bool:
            return any(ranges.containing(address, nbytes) is not None
                       for ranges in (self.allocations, self.host_ranges))

        if not nbytes:
            return
        if not (reached(dst) and reached(src)):
            log(f"a device-side copy by {parent.name} of {nbytes} bytes from {src:#x} to "
                f"{dst:#x} is outside device memory; the context's later calls return "
                "CUDA_ERROR_ILLEGAL_ADDRESS")
            self.make_sticky(E.CUDA_ERROR_ILLEGAL_ADDRESS)
            self.current_changed()
            return
        self.device.copy_device_to_device(dst, src, nbytes)

    def _child(self, module: Any, child: device_launch.DeviceLaunch,
               depth: int) -> tuple[Function | None, list[Any] | None, str]:
        """A device-side launch's kernel and arguments, or why it cannot run."""
        if depth > device_launch.MAX_DEPTH:
            return None, None, f"grids nested more than {device_launch.MAX_DEPTH} deep"
        name = device_launch.kernel_name(module, child.kernel)
        if name is None:
            return None, None, f"no kernel of its module at address {child.kernel:#x}"
        fn = self.handles.get(self.function(module, name), Function)
        threads = child.block[0] * child.block[1] * child.block[2]
        if min(child.grid) < 1 or min(child.block) < 1 or threads > max_threads(fn):
            return fn, None, f"{name} with grid {child.grid} and block {child.block}"
        args = _unpack(fn, self._dtypes(fn), child.params)
        return fn, args, f"{name}'s parameters ({', '.join(fn.info.params)})"

    def _dtypes(self, fn: Function) -> list[Any] | None:
        """The numpy types of `fn`'s parameters, None where one has none."""
        if fn.dtypes is None:
            dtypes = [param_dtype(t) for t in fn.info.params]
            if any(d is None for d in dtypes):  # not `None in`: numpy takes None for float64
                return None
            fn.dtypes = dtypes
        return fn.dtypes

    def _watched(self) -> dict[str, Any]:
        """The keyword that makes a backend's launch return while its kernel
        runs, where the backend can and fastpath.c watches the launch."""
        return {"watched": True} if self.device.launch_events and self.fast.tracks_launches \
            else {}

    def _extra_buffer(self, extra: Any) -> bytes:
        """The packed parameters of cuLaunchKernel's `extra`: pairs of
        CU_LAUNCH_PARAM_BUFFER_POINTER (1) / _SIZE (2), ended by _END (0)."""
        pointer, size = None, None
        for i in range(0, 64, 2):
            tag = self.ptr(extra[i])
            if tag == 0:
                break
            if tag == 1:
                pointer = extra[i + 1]
            elif tag == 2:
                size = self.ffi.cast("size_t *", extra[i + 1])[0]
            else:
                raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"unknown launch extra {tag}")
        if pointer is None or size is None:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "extra lacks the buffer or its size")
        return bytes(self.ffi.buffer(pointer, size))

    def cuLaunchKernel(self, f: Any, gx: int, gy: int, gz: int, bx: int, by: int, bz: int,
                       shared: int, stream: Any, params: Any, extra: Any) -> int:
        return self.launch(f, (gx, gy, gz), (bx, by, bz), shared, params, extra, stream)

    def cuLaunchKernelEx(self, config: Any, f: Any, params: Any, extra: Any) -> int:
        if config == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        c = config[0]
        if c.numAttrs and c.attrs == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        cooperative, cluster = False, None
        attrs = self.ffi.cast("CUlaunchAttribute *", c.attrs)
        for i in range(c.numAttrs):
            ident, value = attrs[i].id, self.ffi.cast("unsigned int *", attrs[i].value)
            if ident == 2:  # COOPERATIVE
                cooperative = value[0] != 0
            elif ident == 4:  # CLUSTER_DIMENSION
                if (value[0], value[1], value[2]) not in ((1, 1, 1), (0, 0, 0)):
                    if not self.device.supports_clusters:
                        return self.unsupported("cuLaunchKernelEx", "thread block clusters")
                    cluster = (value[0], value[1], value[2])
            elif ident == 11:  # PREFERRED_CLUSTER_DIMENSION
                if (value[0], value[1], value[2]) not in ((1, 1, 1), (0, 0, 0)):
                    return self.unsupported("cuLaunchKernelEx", "preferred cluster dimensions")
            elif ident not in _LAUNCH_HINTS:
                return self.unsupported("cuLaunchKernelEx", f"launch attribute {ident}")
        return self.launch(f, (c.gridDimX, c.gridDimY, c.gridDimZ),
                           (c.blockDimX, c.blockDimY, c.blockDimZ), c.sharedMemBytes,
                           params, extra, c.hStream, cooperative, cluster)

    def cuLaunchCooperativeKernel(self, f: Any, gx: int, gy: int, gz: int, bx: int, by: int,
                                  bz: int, shared: int, stream: Any, params: Any) -> int:
        return self.launch(f, (gx, gy, gz), (bx, by, bz), shared, params, self.ffi.NULL,
                           stream, cooperative=True)

    # -- the legacy launch API: state on the function, then cuLaunchGrid -----------

    def cuFuncSetBlockShape(self, f: Any, x: int, y: int, z: int) -> int:
        fn = self.handles.get(self.ptr(f), Function)
        if min(x, y, z) < 1:
            return E.CUDA_ERROR_INVALID_VALUE
        fn.block = (x, y, z)
        return E.CUDA_SUCCESS

    def cuFuncSetSharedSize(self, f: Any, nbytes: int) -> int:
        self.handles.get(self.ptr(f), Function).shared_size = nbytes
        return E.CUDA_SUCCESS

    def cuParamSetSize(self, f: Any, nbytes: int) -> int:
        self.handles.get(self.ptr(f), Function).param_size = nbytes
        return E.CUDA_SUCCESS

    def _param_set(self, f: Any, offset: int, data: bytes) -> int:
        """Writes `data` at `offset` of the function's parameter buffer
        (cuParamSetSize may come before or after)."""
        fn = self.handles.get(self.ptr(f), Function)
        if offset < 0:
            return E.CUDA_ERROR_INVALID_VALUE
        end = offset + len(data)
        if len(fn.params) < end:
            fn.params.extend(bytes(end - len(fn.params)))
        fn.params[offset:end] = data
        return E.CUDA_SUCCESS

    def cuParamSeti(self, f: Any, offset: int, value: int) -> int:
        return self._param_set(f, offset, (value & 0xFFFFFFFF).to_bytes(4, "little"))

    def cuParamSetf(self, f: Any, offset: int, value: float) -> int:
        return self._param_set(f, offset, np.float32(value).tobytes())

    def cuParamSetv(self, f: Any, offset: int, ptr: Any, nbytes: int) -> int:
        if nbytes and ptr == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        return self._param_set(f, offset, bytes(self.ffi.buffer(ptr, nbytes)) if nbytes else b"")

    def cuLaunch(self, f: Any) -> int:
        return self.cuLaunchGridAsync(f, 1, 1, self.ffi.NULL)

    def cuLaunchGrid(self, f: Any, width: int, height: int) -> int:
        return self.cuLaunchGridAsync(f, width, height, self.ffi.NULL)

    def cuLaunchGridAsync(self, f: Any, width: int, height: int, stream: Any) -> int:
        """A launch of the state the legacy calls set: the parameter buffer
        (cuParamSetSize bytes of it) is passed as cuLaunchKernel's `extra`."""
        fn = self.handles.get(self.ptr(f), Function)
        params = bytes(fn.params[:fn.param_size]).ljust(fn.param_size, b"\0")
        buffer = self.ffi.new("char[]", params or b"\0")
        size = self.ffi.new("size_t *", len(params))
        extra = self.ffi.new("void *[5]", [self.ffi.cast("void *", 1), buffer,
                                           self.ffi.cast("void *", 2), size, self.ffi.NULL])
        return self.launch(f, (width, height, 1), fn.block, fn.shared_size, self.ffi.NULL,
                           extra, stream)

    def cuLaunchHostFunc(self, stream: Any, fn: Any, user_data: Any) -> int:
        self.current_context()
        s = self.stream(stream)
        if (s is None or s.capture is None) and self.device.launch_host_func(
                self.vendor_queue(stream), self.ptr(fn), self.ptr(user_data)):
            if s is not None:
                s.untracked = True
            return E.CUDA_SUCCESS  # the backend's, in the stream's order

        def run() -> int:
            self.device.synchronize()
            with self.lock:  # before the host function, in the stream's order
                self.printf.flush(even_held=True)
            fn(user_data)
            return E.CUDA_SUCCESS

        return self.enqueue(stream, run, HostParams(fn, user_data))

    # -- occupancy ---------------------------------------------------------------

    def cuOccupancyMaxActiveBlocksPerMultiprocessor(self, num: Any, f: Any, block: int,
                                                     smem: int) -> int:
        fn = self.handles.get(self.ptr(f), Function)
        if block < 1:
            return E.CUDA_ERROR_INVALID_VALUE
        blocks = self.device.occupancy(fn.kernel, fn.info, block, smem)  # the device's answer
        if blocks is None:
            blocks = max(1, 2048 // block)
        self.out(num, blocks)
        return E.CUDA_SUCCESS

    def cuOccupancyAvailableDynamicSMemPerBlock(self, size: Any, f: Any, blocks: int,
                                                block: int) -> int:
        """The dynamic shared memory each of `blocks` blocks may have with all
        of them resident on one multiprocessor: its shared memory shared out,
        less each block's reserved and static bytes, within the opt-in limit."""
        fn = self.handles.get(self.ptr(f), Function)
        if blocks < 1 or block < 1:
            return E.CUDA_ERROR_INVALID_VALUE
        static = self.attribute_of(fn, 1) or 0  # SHARED_SIZE_BYTES
        per_block = (device_attribute(81, self.device) // blocks
                     - device_attribute(111, self.device) - static)
        optin = device_attribute(97, self.device) - static
        self.out(size, max(0, min(per_block, optin)))
        return E.CUDA_SUCCESS

    def cuOccupancyMaxActiveClusters(self, num: Any, f: Any, config: Any) -> int:
        """The device's own count where it has thread-block clusters (the
        CUDA passthrough on sm_90 and later); elsewhere clusters are not
        supported, as at launch."""
        fn = self.handles.get(self.ptr(f), Function)
        if num == self.ffi.NULL or config == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        copy = self.ffi.new("CUlaunchConfig *", config[0])
        copy.hStream = self.ffi.NULL
        clusters = self.device.max_active_clusters(fn.kernel, fn.info,
                                                   int(self.ffi.cast("uintptr_t", copy)))
        if clusters is None:
            return self.unsupported("cuOccupancyMaxActiveClusters", "thread block clusters")
        self.out(num, clusters)
        return E.CUDA_SUCCESS

    def cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(self, num: Any, f: Any, block: int,
                                                              smem: int, flags: int) -> int:
        return self.cuOccupancyMaxActiveBlocksPerMultiprocessor(num, f, block, smem)

    def cuOccupancyMaxPotentialBlockSize(self, min_grid: Any, block: Any, f: Any,
                                         smem_fn: Any, smem: int, limit: int) -> int:
        fn = self.handles.get(self.ptr(f), Function)
        size = min(limit or 1024, 1024)
        self.out(block, size)
        # The grid that fills the device: cuOccupancyMaxActiveBlocksPerMultiprocessor's
        # blocks on each multiprocessor (what a cooperative launch may use).
        blocks = self.device.occupancy(fn.kernel, fn.info, size, smem)
        self.out(min_grid, self.device.compute_units * (blocks or max(1, 2048 // size)))
        return E.CUDA_SUCCESS


def _unpack(fn: Function, dtypes: list[Any] | None, buffer: bytes) -> list[Any] | None:
    """`fn`'s arguments from a packed buffer (cuLaunchKernel's `extra`, a
    device-side launch's parameters): each at its alignment; None where
    the buffer is too short or a type has no numpy type."""
    if dtypes is None:
        return None
    offsets, end = packed_offsets(fn.info.params, [dtype.itemsize for dtype in dtypes])
    if end > len(buffer):
        return None
    return [np.frombuffer(buffer, dtype=dtype, count=1, offset=offset)[0]
            for dtype, offset in zip(dtypes, offsets, strict=True)]
