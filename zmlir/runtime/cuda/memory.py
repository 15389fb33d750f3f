"""Memory: device allocations (the backend's unified memory: device
pointers are real addresses), host allocations, what is known about a
pointer, and the managed-memory hints (prefetch, advice) that move nothing
on one memory. Pools are in mempool.py, copies and fills in memcpy.py."""

from __future__ import annotations

from typing import Any

from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.fastpath import ASYNC_ALLOCATION
from zmlir.runtime.cuda.ipc import IpcAPI
from zmlir.runtime.cuda.state import log

E = CUresult
# NVIDIA's smallest unit of device memory handed out (cuMemAlloc's
# addresses are at least 512-byte aligned on an H200).
_GRANULE = 512


class MemoryAPI(IpcAPI):  # cuMemFree ends an allocation's exports
    # -- device memory ---------------------------------------------------------

    def _allocate(self, dptr: Any, nbytes: int, managed: bool) -> int:
        self.current_context()
        if nbytes == 0:
            return E.CUDA_ERROR_INVALID_VALUE
        # Whole granules, as NVIDIA's driver hands out: a kernel that runs a
        # little past an allocation's end (numba's own
        # test_dispatcher_cpointer_arguments does) corrupts no neighbour on
        # the host's heap.
        granules = -(-nbytes // _GRANULE) * _GRANULE
        try:
            # Our device memory is the host's too; managed memory is that.
            address = (self.device.alloc(granules) if managed
                       else self.device.alloc_device(granules))
        except Exception as err:
            log(f"allocation of {nbytes} bytes failed: {err}")
            return E.CUDA_ERROR_OUT_OF_MEMORY
        self.allocations.add(address, nbytes)
        if managed:
            self.managed.add(address)
        self.out(dptr, address)
        return E.CUDA_SUCCESS

    def cuMemAlloc_v2(self, dptr: Any, nbytes: int) -> int:
        return self._allocate(dptr, nbytes, managed=False)

    def cuMemAllocManaged(self, dptr: Any, nbytes: int, flags: int) -> int:
        return self._allocate(dptr, nbytes, managed=True)

    def cuMemFree_v2(self, dptr: int) -> int:
        return self.free_device_memory(dptr)

    def free_device_memory(self, dptr: int, stream: int = 0) -> int:
        """cuMemFree, or cuMemFreeAsync in vendor stream `stream` (0: the
        queue), which a pool's block waits for before others reuse it."""
        self.require_init()
        if dptr == 0:
            return E.CUDA_SUCCESS
        if self.graph_memory.free(dptr):  # a graph's allocation, freed outside it
            self.sync_point()
            return E.CUDA_SUCCESS
        made_by = self.fast.claim_allocation(dptr)  # the C path's (fastpath.c): freed here
        if not self.allocations.remove_owned(dptr):
            return E.CUDA_ERROR_INVALID_VALUE
        self.managed.discard(dptr)
        self.ipc_freed(dptr)
        self.sync_point()  # device printf output appears (cudaFree waits for the device)
        pool = self.pool_of.pop(dptr, None)
        if made_by == ASYNC_ALLOCATION:  # a block of the vendor's default pool, made in C
            self.device.default_pool_free(dptr, stream)
            return E.CUDA_SUCCESS
        if pool is not None:
            pool.free(dptr, stream)  # kept for reuse until the pool settles or is trimmed
        else:
            self.device.free(dptr)
        return E.CUDA_SUCCESS

    def cuMemAllocPitch_v2(self, dptr: Any, ppitch: Any, width: int, height: int,
                           element_size: int) -> int:
        if element_size not in (4, 8, 16) or width == 0 or height == 0:
            return E.CUDA_ERROR_INVALID_VALUE
        pitch = -(-width // 256) * 256  # rows aligned like the texture alignment
        code = self.cuMemAlloc_v2(dptr, pitch * height)
        if code == E.CUDA_SUCCESS:
            self.out(ppitch, pitch)
        return code

    def cuMemGetInfo_v2(self, free: Any, total: Any) -> int:
        self.current_context()
        total_bytes = self.total_memory()
        held = sum(p.held() for p in self.pools)  # free blocks pools keep
        self.out(free, max(total_bytes - self.allocations.owned_bytes() - held, 0))
        self.out(total, total_bytes)
        return E.CUDA_SUCCESS

    def cuMemGetAddressRange_v2(self, pbase: Any, psize: Any, dptr: int) -> int:
        self.require_init()
        # Page-locked host memory is mapped (unified addressing): its range
        # is known too (numba sizes a mapped array's memset so).
        found = self.allocations.containing(dptr) or self.host_ranges.containing(dptr)
        if found is None:
            return E.CUDA_ERROR_NOT_FOUND
        if pbase != self.ffi.NULL:
            pbase[0] = found[0]
        if psize != self.ffi.NULL:
            psize[0] = found[1]
        return E.CUDA_SUCCESS

    # -- host memory -----------------------------------------------------------

    def cuMemAllocHost_v2(self, pp: Any, nbytes: int) -> int:
        self.require_init()
        address = self.device.host_alloc(nbytes)
        if address is None:  # the device reaches our own memory
            buffer = self.ffi.new("char[]", max(nbytes, 1))
            address = self.ptr(buffer)
            self.host_allocations[address] = buffer
        else:
            self.host_allocations[address] = None  # the backend's
        self.host_ranges.add(address, nbytes)
        self.out(pp, self.ffi.cast("void *", address))
        return E.CUDA_SUCCESS

    def cuMemHostAlloc(self, pp: Any, nbytes: int, flags: int) -> int:
        return self.cuMemAllocHost_v2(pp, nbytes)

    def cuMemFreeHost(self, p: Any) -> int:
        address = self.ptr(p)
        if address == 0:  # as NVIDIA's
            return E.CUDA_SUCCESS
        if address not in self.host_allocations:
            return E.CUDA_ERROR_INVALID_VALUE
        self.device.synchronize()  # as cudaFreeHost: no kernel still reaches it
        self.host_ranges.remove_owned(address)
        if self.host_allocations.pop(address) is None:
            self.device.host_free(address)
        return E.CUDA_SUCCESS

    def cuMemHostGetDevicePointer_v2(self, pdptr: Any, p: Any, flags: int) -> int:
        # Unified addressing: the device reaches mapped host memory at its address.
        self.require_init()
        self.out(pdptr, self.ptr(p))
        return E.CUDA_SUCCESS

    def cuMemHostRegister_v2(self, p: Any, nbytes: int, flags: int) -> int:
        self.require_init()
        self.device.host_register(self.ptr(p), nbytes)
        self.host_ranges.add(self.ptr(p), nbytes)
        return E.CUDA_SUCCESS

    def cuMemHostUnregister(self, p: Any) -> int:
        self.require_init()
        self.device.synchronize()  # no kernel still reaches it
        self.device.host_unregister(self.ptr(p))
        self.host_ranges.remove_owned(self.ptr(p))
        return E.CUDA_SUCCESS

    # -- managed memory hints and pointer attributes ---------------------------

    def _managed_range(self, api_name: str, ptr: int, count: int, location: Any) -> None:
        self.current_context()
        if count == 0:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"{api_name}: 0 bytes")
        self.check_device_range(ptr, count)
        if location.type == 1:  # CU_MEM_LOCATION_TYPE_DEVICE
            self.check_device(location.id)

    def cuMemPrefetchAsync_v2(self, ptr: int, count: int, location: Any, flags: int,
                              stream: Any) -> int:
        # Our device memory is where both the host and the kernels reach it
        # (unified): a prefetch moves nothing, but on a vendor's managed
        # memory (the passthrough's), where the vendor's does.
        self._managed_range("cuMemPrefetchAsync", ptr, count, location)
        self.stream(stream)
        self.device.memory_hint("cuMemPrefetchAsync_v2", ptr, count, location.type, location.id,
                                flags, self.vendor_queue(stream))
        return E.CUDA_SUCCESS

    def _location(self, device: int) -> Any:
        """A CUmemLocation of `device` (CUDA 8-12's device ordinal arguments;
        CU_DEVICE_CPU, -1, is the host)."""
        location = self.ffi.new("CUmemLocation *")
        location.type, location.id = (2, 0) if device == -1 else (1, device)  # HOST / DEVICE
        return location[0]

    def cuMemPrefetchAsync(self, ptr: int, count: int, device: int, stream: Any) -> int:
        return self.cuMemPrefetchAsync_v2(ptr, count, self._location(device), 0, stream)

    def cuMemAdvise(self, ptr: int, count: int, advice: int, device: int) -> int:
        return self.cuMemAdvise_v2(ptr, count, advice, self._location(device))

    def cuMemAdvise_v2(self, ptr: int, count: int, advice: int, location: Any) -> int:
        self._managed_range("cuMemAdvise", ptr, count, location)
        if not 1 <= advice <= 6:  # CU_MEM_ADVISE_SET_READ_MOSTLY .. UNSET_ACCESSED_BY
            return E.CUDA_ERROR_INVALID_VALUE
        # Advice about placement: there is one memory of ours, but the vendor's
        # managed memory (the passthrough's) takes it.
        self.device.memory_hint("cuMemAdvise_v2", ptr, count, location.type, location.id,
                                advice)
        return E.CUDA_SUCCESS

    def cuStreamAttachMemAsync(self, stream: Any, dptr: int, length: int, flags: int) -> int:
        """Which streams may use managed (or pageable: PAGEABLE_MEMORY_ACCESS
        is 1) memory: one coherent memory and one queue here, so once checked
        it changes nothing."""
        self.current_context()
        self.stream(stream)  # an unknown stream: CUDA_ERROR_INVALID_HANDLE
        if flags not in (1, 2, 4):  # CU_MEM_ATTACH_GLOBAL, _HOST, _SINGLE
            return E.CUDA_ERROR_INVALID_VALUE
        if flags == 4 and self.ptr(stream) in (0, 1, 2):
            return E.CUDA_ERROR_INVALID_VALUE  # singly to the NULL stream
        found = self.allocations.containing(dptr)
        if found is not None and found[0] in self.managed and (
                dptr != found[0] or length not in (0, found[1])):
            return E.CUDA_ERROR_INVALID_VALUE  # only a whole managed allocation
        return E.CUDA_SUCCESS

    def cuPointerGetAttribute(self, data: Any, attribute: int, ptr: int) -> int:
        self.require_init()
        if data == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        is_device = self.is_device(ptr)
        if attribute == 2:  # CU_POINTER_ATTRIBUTE_MEMORY_TYPE
            self.ffi.cast("unsigned int *", data)[0] = 2 if is_device else 1
        elif attribute == 1:  # CONTEXT
            self.ffi.cast("void **", data)[0] = self.handle_ptr(self.primary_context())
        elif attribute in (3, 4):  # DEVICE_POINTER, HOST_POINTER
            self.ffi.cast("unsigned long long *", data)[0] = ptr
        elif attribute == 9:  # DEVICE_ORDINAL
            self.ffi.cast("int *", data)[0] = 0
        elif attribute == 7 and is_device:  # BUFFER_ID (NVIDIA's cuFFT asks its work area's)
            self.ffi.cast("unsigned long long *", data)[0] = self._pointer_attribute(7, ptr)[1]
        else:
            return E.CUDA_ERROR_INVALID_VALUE
        return E.CUDA_SUCCESS

    def cuPointerGetAttributes(self, count: int, attributes: Any, data: Any, ptr: int) -> int:
        # Unlike cuPointerGetAttribute, memory the driver does not know is no
        # error: its attributes read as zeros (cudart's cudaPointerGetAttributes
        # is this call; CuPy asks it whether host memory is page-locked).
        self.require_init()
        if count and (attributes == self.ffi.NULL or data == self.ffi.NULL):
            return E.CUDA_ERROR_INVALID_VALUE
        values = []
        for i in range(count):
            value = self._pointer_attribute(attributes[i], ptr)
            if value is None:
                return self.unsupported("cuPointerGetAttributes",
                                        f"pointer attribute {attributes[i]}")
            values.append(value)
        for i, (ctype, value) in enumerate(values):
            if data[i] != self.ffi.NULL:
                self.ffi.cast(f"{ctype} *", data[i])[0] = value
        return E.CUDA_SUCCESS

    def _pointer_attribute(self, attribute: int, ptr: int) -> tuple[str, Any] | None:
        """(C type, value) of a CUpointer_attribute of `ptr` as
        cuPointerGetAttributes writes it, zeros for memory the driver does
        not know; None for an attribute we do not answer."""
        device = self.allocations.containing(ptr)
        found = device or self.host_ranges.containing(ptr)
        known = found is not None
        if attribute == 1:  # CONTEXT
            return "void *", self.handle_ptr(self.primary_context() if known else 0)
        if attribute == 2:  # MEMORY_TYPE: CU_MEMORYTYPE_DEVICE / HOST, 0 if unknown
            return "unsigned int", 2 if device else 1 if known else 0
        if attribute == 3:  # DEVICE_POINTER: unified addressing, the same address
            return "unsigned long long", ptr if known else 0
        if attribute == 4:  # HOST_POINTER: page-locked host memory only
            return "unsigned long long", ptr if known and not device else 0
        if attribute == 7:  # BUFFER_ID: the device allocation's (0: none)
            return "unsigned long long", self.allocations.buffer_id(device[0]) if device else 0
        if attribute == 8:  # IS_MANAGED (bool)
            return "unsigned char", int(device is not None and device[0] in self.managed)
        if attribute == 10:  # IS_LEGACY_CUDA_IPC_CAPABLE (bool): cuMemAlloc's
            ipc = device is not None and self.device.exports_memory \
                and self.ipc_exportable(device[0])
            return "unsigned char", int(ipc)
        if attribute == 13:  # MAPPED (bool)
            return "unsigned char", int(known)
        if attribute == 9:  # DEVICE_ORDINAL
            return "int", 0 if known else -2  # cudaInvalidDeviceId, as cudart reports it
        if attribute == 11:  # RANGE_START_ADDR
            return "unsigned long long", found[0] if found else 0
        if attribute in (12, 18):  # RANGE_SIZE, MAPPING_SIZE (size_t)
            return "size_t", found[1] if found else 0
        if attribute == 19:  # MAPPING_BASE_ADDR
            return "unsigned long long", found[0] if found else 0
        return None
