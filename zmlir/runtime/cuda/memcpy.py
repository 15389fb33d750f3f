"""Copies and fills: cuMemcpy* (either side host or device, 1D, 2D, 3D,
peer) and cuMemset* (8, 16 and 32-bit patterns, 1D and 2D). A copy waits
for the kernels before it and for its own end, an *Async one too (kernels
alone run while the host goes on); the *Async forms are recorded instead
while their stream is being captured (state.enqueue)."""

from __future__ import annotations

from typing import Any

import numpy as np

from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.graph.model import CopyParams, MemsetParams
from zmlir.runtime.cuda.objects import Context
from zmlir.runtime.cuda.state import DriverState

E = CUresult
# CUmemorytype
HOST, DEVICE, ARRAY, UNIFIED = 1, 2, 3, 4


class MemcpyAPI(DriverState):
    # -- copies -------------------------------------------------------------------

    def copy(self, dst: int, src: int, nbytes: int, stream: Any = None) -> int:
        """cudaMemcpyDefault semantics: either side may be host or device. A
        blocking copy is a synchronisation point (an asynchronous one runs
        through enqueue, which holds printf output back). An asynchronous
        copy in `stream` waits for that stream's launches alone where they
        are all its work and the host reaches the memory (own_work_waited,
        Backend.host_copies) and the stream is a non-blocking one (a blocking
        stream's copy waits for the legacy stream's work before it too): then
        the host copies, beside other streams' kernels."""
        self.current_context()
        s = self.stream(stream) if stream is not None else None
        by_host = s is not None and s.non_blocking and \
            self.device.host_copies and self.own_work_waited(s, stream)
        if not by_host:
            self.device.synchronize()
            self.sync_point()
        self.check_sticky()
        if nbytes == 0:
            return E.CUDA_SUCCESS
        dst_dev, src_dev = self.is_device(dst), self.is_device(src)
        if dst_dev:
            self.check_device_range(dst, nbytes)
        if src_dev:
            self.check_device_range(src, nbytes)
        if by_host:
            self.ffi.memmove(self.ffi.cast("void *", dst), self.ffi.cast("void *", src), nbytes)
            return E.CUDA_SUCCESS
        self.device.synchronize()
        if dst_dev and not src_dev:
            self.device.copy_to_device(dst, self.host_view(src, nbytes))
        elif src_dev and not dst_dev:
            self.device.copy_into_host(self.host_view(dst, nbytes), src)
        elif dst_dev and src_dev:
            self.device.copy_device_to_device(dst, src, nbytes)
        else:
            self.ffi.memmove(self.ffi.cast("void *", dst), self.ffi.cast("void *", src), nbytes)
        return E.CUDA_SUCCESS

    def cuMemcpy(self, dst: int, src: int, nbytes: int) -> int:
        return self.copy(dst, src, nbytes)

    def copy_node(self, dst: int, dst_type: int, src: int, src_type: int,
                  nbytes: int) -> CopyParams:
        """The memcpy node a 1D copy is in a graph: a CUDA_MEMCPY3D of one row."""
        c = self.ffi.new("CUDA_MEMCPY3D *")
        c.srcMemoryType, c.dstMemoryType = src_type, dst_type
        if src_type == HOST:
            c.srcHost = self.ffi.cast("void *", src)
        else:
            c.srcDevice = src
        if dst_type == HOST:
            c.dstHost = self.ffi.cast("void *", dst)
        else:
            c.dstDevice = dst
        c.WidthInBytes, c.Height, c.Depth = nbytes, 1, 1
        return CopyParams(bytes(self.ffi.buffer(c)))

    def cuMemcpyAsync(self, dst: int, src: int, nbytes: int, stream: Any) -> int:
        return self.enqueue(stream, lambda: self.copy(dst, src, nbytes, stream),
                            self.copy_node(dst, UNIFIED, src, UNIFIED, nbytes))

    def cuMemcpyPeer(self, dst: int, dst_ctx: Any, src: int, src_ctx: Any, nbytes: int) -> int:
        # One device: both contexts are on it, and a peer copy is a device copy.
        self.require_init()
        self.handles.get(self.ptr(dst_ctx), Context)
        self.handles.get(self.ptr(src_ctx), Context)
        return self.cuMemcpyDtoD_v2(dst, src, nbytes)

    def cuMemcpyPeerAsync(self, dst: int, dst_ctx: Any, src: int, src_ctx: Any, nbytes: int,
                          stream: Any) -> int:
        return self.enqueue(stream, lambda: self.cuMemcpyPeer(dst, dst_ctx, src, src_ctx,
                                                                nbytes),
                            self.copy_node(dst, DEVICE, src, DEVICE, nbytes))

    # A copy of 0 bytes succeeds whatever its addresses, as on NVIDIA's
    # driver (numba copies a 0-sized array to its null device pointer).

    def on_device(self, address: int, nbytes: int) -> bool:
        """Whether a device pointer's range is device memory (True) or
        page-locked host memory (False): under unified addressing the
        device reaches cuMemHostAlloc'd and registered memory at its host
        address, and the copies and fills take it (numba's mapped arrays).
        Neither: CUDA_ERROR_INVALID_VALUE."""
        if self.allocations.containing(address, nbytes) is not None:
            return True
        if self.host_ranges.containing(address, nbytes) is not None:
            return False
        self.check_device_range(address, nbytes)  # raises, saying where
        return True

    def cuMemcpyHtoD_v2(self, dst: int, src: Any, nbytes: int, stream: Any = None) -> int:
        if nbytes:
            self.on_device(dst, nbytes)
        return self.copy(dst, self.ptr(src), nbytes, stream)

    def cuMemcpyDtoH_v2(self, dst: Any, src: int, nbytes: int, stream: Any = None) -> int:
        if nbytes:
            self.on_device(src, nbytes)
        return self.copy(self.ptr(dst), src, nbytes, stream)

    def cuMemcpyDtoD_v2(self, dst: int, src: int, nbytes: int, stream: Any = None) -> int:
        if nbytes:
            self.on_device(dst, nbytes)
            self.on_device(src, nbytes)
        return self.copy(dst, src, nbytes, stream)

    def cuMemcpyHtoDAsync_v2(self, dst: int, src: Any, nbytes: int, stream: Any) -> int:
        return self.enqueue(stream, lambda: self.cuMemcpyHtoD_v2(dst, src, nbytes, stream),
                            self.copy_node(dst, DEVICE, self.ptr(src), HOST, nbytes))

    def cuMemcpyDtoHAsync_v2(self, dst: Any, src: int, nbytes: int, stream: Any) -> int:
        return self.enqueue(stream, lambda: self.cuMemcpyDtoH_v2(dst, src, nbytes, stream),
                            self.copy_node(self.ptr(dst), HOST, src, DEVICE, nbytes))

    def cuMemcpyDtoDAsync_v2(self, dst: int, src: int, nbytes: int, stream: Any) -> int:
        return self.enqueue(stream, lambda: self.cuMemcpyDtoD_v2(dst, src, nbytes, stream),
                            self.copy_node(dst, DEVICE, src, DEVICE, nbytes))

    def _copy_end(self, memory_type: int, host: Any, device: int, array: Any, what: str) -> int:
        """The base address of one side of a 2D/3D copy (CUmemorytype)."""
        if memory_type == HOST:
            return self.ptr(host)
        if memory_type in (DEVICE, UNIFIED):
            return int(device)
        if memory_type == ARRAY:
            raise CudaError(self.unsupported("cuMemcpy2D/3D", f"CUDA arrays ({what})"))
        raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"{what} memory type {memory_type}")

    def _copy_rows(self, src: int, src_pitch: int, src_height: int, dst: int, dst_pitch: int,
                   dst_height: int, width: int, height: int, depth: int) -> int:
        for z in range(depth):
            for y in range(height):
                code = self.copy(dst + (z * dst_height + y) * dst_pitch,
                                 src + (z * src_height + y) * src_pitch, width)
                if code != E.CUDA_SUCCESS:
                    return code
        return E.CUDA_SUCCESS

    def _pitched_by_backend(self, c3: Any, stream: Any | None) -> int | None:
        """A 2D/3D copy (`c3`: a CUDA_MEMCPY3D) as one call of the backend's
        (Backend.copy_pitched): in `stream`'s order, or blocking where it is
        None; None where the backend has none or a side is an array."""
        c = c3[0]
        if not self.device.pitched_copies or ARRAY in (c.srcMemoryType, c.dstMemoryType):
            return None
        if stream is None:  # a blocking copy: a synchronisation point, as copy()
            self.current_context()
            self.sync_point()
            self.check_sticky()
        for side in ("src", "dst"):  # device memory the copy reaches: all of it ours
            start, span = self._pitched_side(c, side)
            if span and self.is_device(start):
                self.check_device_range(start, span)
        self.device.copy_pitched(bytes(self.ffi.buffer(c3)),
                                 None if stream is None else self.vendor_queue(stream))
        return E.CUDA_SUCCESS

    def _pitched_side(self, c: Any, side: str) -> tuple[int, int]:
        """The first address of one side (src or dst) of a CUDA_MEMCPY3D and
        the bytes from there to the end of its last row."""
        def field(name: str) -> Any:
            return getattr(c, side + name)

        base = self.ptr(field("Host")) if field("MemoryType") == HOST else int(field("Device"))
        pitch = field("Pitch") or c.WidthInBytes
        height = field("Height") or c.Height
        start = base + (field("Z") * height + field("Y")) * pitch + field("XInBytes")
        rows = (max(c.Depth, 1) - 1) * height + c.Height - 1
        return start, (rows * pitch + c.WidthInBytes) if c.Height and c.WidthInBytes else 0

    def _pitched_async(self, copy: Any) -> bool:
        """Whether an asynchronous 2D/3D copy is the backend's, in its
        stream's order (Backend.copy_pitched): neither side an array."""
        return (copy != self.ffi.NULL and self.device.pitched_copies
                and ARRAY not in (copy[0].srcMemoryType, copy[0].dstMemoryType))

    def _as_3d(self, copy: Any) -> Any:
        """A CUDA_MEMCPY2D as the CUDA_MEMCPY3D of its one slice."""
        c, c3 = copy[0], self.ffi.new("CUDA_MEMCPY3D *")
        for side in ("src", "dst"):
            for name in ("XInBytes", "Y", "MemoryType", "Host", "Device", "Array", "Pitch"):
                setattr(c3, side + name, getattr(c, side + name))
        c3.WidthInBytes, c3.Height, c3.Depth = c.WidthInBytes, c.Height, 1
        return c3

    def _check_2d(self, copy: Any) -> tuple[int, int] | int:
        """(source, destination) addresses of a CUDA_MEMCPY2D, or the error."""
        if copy == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        c = copy[0]
        if (c.WidthInBytes > c.srcPitch and c.Height > 1) or (
                c.WidthInBytes > c.dstPitch and c.Height > 1):
            return E.CUDA_ERROR_INVALID_VALUE
        src = self._copy_end(c.srcMemoryType, c.srcHost, c.srcDevice, c.srcArray, "source")
        dst = self._copy_end(c.dstMemoryType, c.dstHost, c.dstDevice, c.dstArray, "destination")
        return src + c.srcY * c.srcPitch + c.srcXInBytes, dst + c.dstY * c.dstPitch + c.dstXInBytes

    def cuMemcpy2D_v2(self, copy: Any) -> int:
        ends = self._check_2d(copy)
        if isinstance(ends, int):
            return ends
        code = self._pitched_by_backend(self._as_3d(copy), None)
        if code is not None:
            return code
        c = copy[0]
        return self._copy_rows(ends[0], c.srcPitch, 0, ends[1], c.dstPitch, 0, c.WidthInBytes,
                               c.Height, 1)

    cuMemcpy2DUnaligned_v2 = cuMemcpy2D_v2

    def cuMemcpy2DAsync_v2(self, copy: Any, stream: Any) -> int:
        s = self.stream(stream)
        if s is not None and s.capture is not None and copy != self.ffi.NULL:
            return self.enqueue(stream, lambda: E.CUDA_SUCCESS,  # its memcpy node's 3D copy
                                CopyParams(bytes(self.ffi.buffer(self._as_3d(copy)))))
        if self._pitched_async(copy):
            ends = self._check_2d(copy)
            if isinstance(ends, int):
                return ends
            self._pitched_by_backend(self._as_3d(copy), stream)
            return E.CUDA_SUCCESS
        return self.cuMemcpy2D_v2(copy)  # at once (a side an array: texture.py's first)

    def _check_3d(self, copy: Any) -> tuple[int, int] | int:
        """(source, destination) addresses of a CUDA_MEMCPY3D, or the error."""
        if copy == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        c = copy[0]
        src = self._copy_end(c.srcMemoryType, c.srcHost, c.srcDevice, c.srcArray, "source")
        dst = self._copy_end(c.dstMemoryType, c.dstHost, c.dstDevice, c.dstArray, "destination")
        src_pitch, dst_pitch = c.srcPitch or c.WidthInBytes, c.dstPitch or c.WidthInBytes
        src_height, dst_height = c.srcHeight or c.Height, c.dstHeight or c.Height
        return ((src + (c.srcZ * src_height + c.srcY) * src_pitch + c.srcXInBytes),
                (dst + (c.dstZ * dst_height + c.dstY) * dst_pitch + c.dstXInBytes))

    def cuMemcpy3D_v2(self, copy: Any) -> int:
        ends = self._check_3d(copy)
        if isinstance(ends, int):
            return ends
        code = self._pitched_by_backend(copy, None)
        if code is not None:
            return code
        c = copy[0]
        return self._copy_rows(ends[0], c.srcPitch or c.WidthInBytes, c.srcHeight or c.Height,
                               ends[1], c.dstPitch or c.WidthInBytes, c.dstHeight or c.Height,
                               c.WidthInBytes, c.Height, max(c.Depth, 1))

    def cuMemcpy3DAsync_v2(self, copy: Any, stream: Any) -> int:
        s = self.stream(stream)
        if s is not None and s.capture is not None and copy != self.ffi.NULL:
            return self.enqueue(stream, lambda: E.CUDA_SUCCESS,
                                CopyParams(bytes(self.ffi.buffer(copy))))
        if self._pitched_async(copy):
            ends = self._check_3d(copy)
            if isinstance(ends, int):
                return ends
            self._pitched_by_backend(copy, stream)
            return E.CUDA_SUCCESS
        return self.cuMemcpy3D_v2(copy)  # at once (a side an array: texture.py's first)

    # -- fills --------------------------------------------------------------------

    def memset(self, dst: int, value: int, width: int, count: int) -> int:
        self.current_context()
        nbytes = width * count
        if nbytes == 0:
            return E.CUDA_SUCCESS
        on_device = self.on_device(dst, nbytes)
        self.device.synchronize()
        if on_device and width == 1:
            self.device.memset(dst, value & 0xFF, nbytes)
            return E.CUDA_SUCCESS
        pattern = np.full(count, value, dtype={1: np.uint8, 2: np.uint16, 4: np.uint32}[width])
        if on_device:
            self.device.copy_to_device(dst, pattern)
        else:  # page-locked host memory: the host writes it
            self.host_view(dst, nbytes)[:] = pattern.tobytes()
        return E.CUDA_SUCCESS

    def cuMemsetD8_v2(self, dst: int, value: int, n: int) -> int:
        return self.memset(dst, value, 1, n)

    def cuMemsetD16_v2(self, dst: int, value: int, n: int) -> int:
        return self.memset(dst, value, 2, n)

    def cuMemsetD32_v2(self, dst: int, value: int, n: int) -> int:
        return self.memset(dst, value, 4, n)

    def memset_async(self, dst: int, pitch: int, value: int, width: int, count: int,
                     height: int, stream: Any) -> int:
        mask = (1 << (8 * width)) - 1
        s = self.stream(stream)
        if (s is None or s.capture is None) and self._fill_by_backend(
                dst, pitch, value, width, count, height, self.vendor_queue(stream)):
            return E.CUDA_SUCCESS  # the backend's, in the stream's order
        return self.enqueue(stream,
                            lambda: self.memset_2d(dst, pitch, value, width, count, height),
                            MemsetParams(dst, pitch, value & mask, width, count, height))

    def cuMemsetD8Async(self, dst: int, value: int, n: int, stream: Any) -> int:
        return self.memset_async(dst, 0, value, 1, n, 1, stream)

    def cuMemsetD16Async(self, dst: int, value: int, n: int, stream: Any) -> int:
        return self.memset_async(dst, 0, value, 2, n, 1, stream)

    def cuMemsetD32Async(self, dst: int, value: int, n: int, stream: Any) -> int:
        return self.memset_async(dst, 0, value, 4, n, 1, stream)

    def memset_2d(self, dst: int, pitch: int, value: int, width: int, count: int,
                  height: int) -> int:
        if self._fill_by_backend(dst, pitch, value, width, count, height, None):
            return E.CUDA_SUCCESS  # the backend's blocking fill, after the work before it
        for row in range(height):
            code = self.memset(dst + row * pitch, value, width, count)
            if code != E.CUDA_SUCCESS:
                return code
        return E.CUDA_SUCCESS

    def _fill_by_backend(self, dst: int, pitch: int, value: int, width: int, count: int,
                         height: int, queue: int | None) -> bool:
        """A fill of `height` rows as one call of the backend's
        (Backend.fill_pitched), once every row is known to be device or
        page-locked host memory (on_device raises otherwise)."""
        if not (count and height and self.device.pitched_copies):
            return False
        self.on_device(dst, (height - 1) * (pitch or width * count) + width * count)
        return self.device.fill_pitched(dst, pitch, value, width, count, height, queue)

    def cuMemsetD2D8_v2(self, dst: int, pitch: int, value: int, width: int, height: int) -> int:
        return self.memset_2d(dst, pitch, value, 1, width, height)

    def cuMemsetD2D16_v2(self, dst: int, pitch: int, value: int, width: int, height: int) -> int:
        return self.memset_2d(dst, pitch, value, 2, width, height)

    def cuMemsetD2D32_v2(self, dst: int, pitch: int, value: int, width: int, height: int) -> int:
        return self.memset_2d(dst, pitch, value, 4, width, height)

    def cuMemsetD2D8Async(self, dst: int, pitch: int, value: int, width: int, height: int,
                          stream: Any) -> int:
        return self.memset_async(dst, pitch, value, 1, width, height, stream)

    def cuMemsetD2D16Async(self, dst: int, pitch: int, value: int, width: int, height: int,
                           stream: Any) -> int:
        return self.memset_async(dst, pitch, value, 2, width, height, stream)

    def cuMemsetD2D32Async(self, dst: int, pitch: int, value: int, width: int, height: int,
                           stream: Any) -> int:
        return self.memset_async(dst, pitch, value, 4, width, height, stream)
