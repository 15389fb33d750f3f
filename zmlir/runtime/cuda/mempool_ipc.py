"""Memory pools shared between processes: a pool created with an IPC handle
type (cuMemPoolCreate), its shareable handle (cuMemPoolExportToShareableHandle,
cuMemPoolImportFromShareableHandle) and its allocations' export data
(cuMemPoolExportPointer, cuMemPoolImportPointer).

On the CPU (Backend.virtual_memory) such a pool's memory is one memfd: each
block the pool takes is a piece of it, page-aligned, mapped at an address
of its own (Backend.ipc_import), and given back by unmapping it and
punching its pages out of the file. The pool's shareable handle is a
descriptor of that memfd (a POSIX file descriptor, passed over a Unix
socket); an allocation's export data name the file (its inode), the
piece's offset and the allocation's size, and importing it maps that piece
of the imported pool's file. An imported pointer is freed (unmapped) with
cuMemFree or cuMemFreeAsync; the exporter's blocks are the pool's as any
pool's (kept for reuse, released above the threshold).

Under the CUDA passthrough (Backend.vendor_pools) the pool is NVIDIA's:
each block is one of NVIDIA's pool's allocations, and the shareable handle,
export data and imports are NVIDIA's, with NVIDIA's codes; our tables keep
the blocks and imported pointers as on the CPU.
"""

from __future__ import annotations

import os
import struct
from typing import Any

from zmlir.runtime import shared_memory
from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.mempool import MemoryPool, MemPoolAPI
from zmlir.runtime.cuda.virtual_memory import HANDLE_TYPE_POSIX_FD, import_memfd

E = CUresult
_MEMFD_NAME = "zmlir-pool"
_EXPORT_BYTES = 64
_MAGIC = b"zmlirPPE"
# magic, the pool's memfd's inode, the piece's offset there, the allocation's size
_EXPORT = struct.Struct("<8sQQQ")


class SharedPoolMemory:
    """A shareable pool's memory: one memfd, pieces of it mapped here."""

    def __init__(self, backend: Any, fd: int) -> None:
        self.backend = backend
        self.fd = fd
        self.inode = os.fstat(fd).st_ino
        self.end = 0  # pieces are never reused: holes are punched instead
        self.pieces: dict[int, tuple[int, int]] = {}  # address -> (offset, length)
        self.retired = False  # its pool is destroyed: the file closes with its last piece
        self.exported = False  # its handle was: only then are its blocks (as NVIDIA's)

    @classmethod
    def create(cls, backend: Any) -> SharedPoolMemory:
        return cls(backend, os.memfd_create(_MEMFD_NAME, os.MFD_CLOEXEC))

    def alloc(self, nbytes: int) -> int:
        """A new piece of at least `nbytes` bytes, mapped (MemoryPool.alloc_backend)."""
        offset, length = self.end, shared_memory.page_ceil(nbytes)
        os.ftruncate(self.fd, offset + length)
        self.end += length
        address = self.map(offset, length)
        return address

    def free(self, address: int) -> None:
        """Unmaps a piece and frees its pages (MemoryPool.free_backend)."""
        offset, length = self.pieces.pop(address)
        self.backend.ipc_close(address)  # waits for work that may still use it
        if self.end:  # ours, not an importer's
            shared_memory.punch_hole(self.fd, offset, length)
        self._close_if_done()

    def retire(self) -> None:
        self.retired = True
        self._close_if_done()

    def _close_if_done(self) -> None:
        if self.retired and not self.pieces and self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def map(self, offset: int, length: int) -> int:
        address = int(self.backend.ipc_import(self.fd, offset, length))
        self.pieces[address] = (offset, length)
        return address

    def offset_of(self, address: int) -> int:
        return self.pieces[address][0]


class VendorPoolMemory:
    """A pool's memory that is the vendor's pool (Backend.vendor_pools)."""

    def __init__(self, backend: Any, pool: Any) -> None:
        self.backend = backend
        self.pool = pool  # the vendor's handle

    def alloc(self, nbytes: int) -> int:
        return int(self.backend.vendor_pool_alloc(self.pool, nbytes))

    def free(self, address: int) -> None:
        self.backend.vendor_pool_free(address)

    def retire(self) -> None:
        # The vendor's pool goes once its blocks still in use are freed.
        self.backend.vendor_pool_destroy(self.pool)


class MemPoolIpcAPI(MemPoolAPI):
    def shareable_pool(self, handle_types: int, max_size: int) -> MemoryPool:
        if self.device.vendor_pools:  # NVIDIA's, with NVIDIA's answers
            if handle_types != HANDLE_TYPE_POSIX_FD:
                self.unsupported("cuMemPoolCreate",
                                 f"handle types {handle_types:#x} (a POSIX file descriptor only)")
                raise CudaError(E.CUDA_ERROR_NOT_SUPPORTED, "IPC handle types")
            vendor = VendorPoolMemory(self.device,
                                      self.device.vendor_pool_create(handle_types, max_size))
            return MemoryPool(vendor.alloc, vendor.free, max_size, handle_types=handle_types,
                              shared=vendor)
        if not self.device.virtual_memory:
            self.unsupported("cuMemPoolCreate", f"IPC pools on the {self.device.name} backend")
            raise CudaError(E.CUDA_ERROR_NOT_SUPPORTED, "IPC pools")
        if handle_types != HANDLE_TYPE_POSIX_FD:
            self.unsupported("cuMemPoolCreate",
                             f"handle types {handle_types:#x} (a POSIX file descriptor only)")
            raise CudaError(E.CUDA_ERROR_NOT_SUPPORTED, "IPC handle types")
        memory = SharedPoolMemory.create(self.device)
        return MemoryPool(memory.alloc, memory.free, max_size, handle_types=handle_types,
                          shared=memory)

    def cuMemPoolDestroy(self, pool: Any) -> int:
        p = self._pool(pool)
        code = super().cuMemPoolDestroy(pool)
        if code == E.CUDA_SUCCESS and p.shared is not None:
            p.shared.retire()
        return code

    def cuMemPoolExportToShareableHandle(self, handle_out: Any, pool: Any, handle_type: int,
                                         flags: int) -> int:
        p = self._pool(pool)
        if handle_out == self.ffi.NULL or flags or p.shared is None or p.imported:
            return E.CUDA_ERROR_INVALID_VALUE
        if handle_type != p.handle_types:
            return E.CUDA_ERROR_INVALID_VALUE
        # A descriptor of its own: the application closes it once sent.
        if isinstance(p.shared, VendorPoolMemory):
            fd = self.device.vendor_pool_export(p.shared.pool, handle_type)
        else:
            fd, p.shared.exported = os.dup(p.shared.fd), True
        self.ffi.cast("int *", handle_out)[0] = fd
        return E.CUDA_SUCCESS

    def cuMemPoolImportFromShareableHandle(self, pool_out: Any, handle: Any, handle_type: int,
                                           flags: int) -> int:
        self.require_init()
        if pool_out == self.ffi.NULL or flags:
            return E.CUDA_ERROR_INVALID_VALUE
        if self.device.vendor_pools:
            if handle_type != HANDLE_TYPE_POSIX_FD:
                return E.CUDA_ERROR_INVALID_VALUE
            vendor = VendorPoolMemory(self.device, self.device.vendor_pool_import(
                self.ptr(handle) & 0xFFFFFFFF, handle_type))
            pool = MemoryPool(_no_allocation, vendor.free, handle_types=handle_type,
                              shared=vendor, imported=True)
            self.out(pool_out, self.handle_ptr(self._new_pool(pool)))
            return E.CUDA_SUCCESS
        if not self.device.virtual_memory:
            return self.unsupported("cuMemPoolImportFromShareableHandle",
                                    f"the {self.device.name} backend")
        if handle_type != HANDLE_TYPE_POSIX_FD:
            return E.CUDA_ERROR_INVALID_VALUE
        memory = SharedPoolMemory(self.device,
                                  import_memfd(self.ptr(handle) & 0xFFFFFFFF, _MEMFD_NAME))
        pool = MemoryPool(_no_allocation, memory.free, handle_types=handle_type, shared=memory,
                          imported=True)
        self.out(pool_out, self.handle_ptr(self._new_pool(pool)))
        return E.CUDA_SUCCESS

    def cuMemPoolExportPointer(self, data_out: Any, ptr: int) -> int:
        self.require_init()
        pool = self.pool_of.get(ptr)
        if data_out == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        if self.device.vendor_pools and (pool is None or not pool.imported):
            # NVIDIA's data, or NVIDIA's answer for memory none of its IPC
            # pools gave (cuMemAlloc's is its own too).
            self.ffi.memmove(data_out, self.device.vendor_pool_export_pointer(ptr),
                             _EXPORT_BYTES)
            return E.CUDA_SUCCESS
        if pool is None or pool.shared is None or pool.imported:
            return E.CUDA_ERROR_INVALID_VALUE
        if not pool.shared.exported:  # NVIDIA's: blocks "of an already shared pool"
            return E.CUDA_ERROR_INVALID_VALUE
        data = _EXPORT.pack(_MAGIC, pool.shared.inode, pool.shared.offset_of(ptr),
                            self.allocations.size_of(ptr))
        self.ffi.memmove(data_out, data.ljust(_EXPORT_BYTES, b"\0"), _EXPORT_BYTES)
        return E.CUDA_SUCCESS

    def cuMemPoolImportPointer(self, ptr_out: Any, pool: Any, data: Any) -> int:
        p = self._pool(pool)
        if ptr_out == self.ffi.NULL or data == self.ffi.NULL or not p.imported:
            return E.CUDA_ERROR_INVALID_VALUE
        if isinstance(p.shared, VendorPoolMemory):
            return self._import_vendor_pointer(ptr_out, p, bytes(self.ffi.buffer(data,
                                                                                 _EXPORT_BYTES)))
        magic, inode, offset, nbytes = _EXPORT.unpack_from(
            bytes(self.ffi.buffer(data, _EXPORT_BYTES)))
        if magic != _MAGIC or inode != p.shared.inode or nbytes == 0:
            return E.CUDA_ERROR_INVALID_VALUE  # not an allocation of this pool
        if offset + nbytes > os.fstat(p.shared.fd).st_size:
            return E.CUDA_ERROR_INVALID_VALUE
        for address, (at, _) in p.shared.pieces.items():
            if at == offset:  # imported before: the same pointer
                self.out(ptr_out, address)
                return E.CUDA_SUCCESS
        try:
            address = p.shared.map(offset, shared_memory.page_ceil(nbytes))
        except OSError as err:
            raise CudaError(E.CUDA_ERROR_OUT_OF_MEMORY, str(err)) from None
        p.live[address] = nbytes
        p.used += nbytes
        p.reserved += nbytes
        self.allocations.add(address, nbytes)
        self.pool_of[address] = p
        self.out(ptr_out, address)
        return E.CUDA_SUCCESS

    def _import_vendor_pointer(self, ptr_out: Any, p: MemoryPool, data: bytes) -> int:
        address, nbytes = self.device.vendor_pool_import_pointer(p.shared.pool, data)
        if address not in p.live:  # NVIDIA's gives an allocation imported before again
            p.live[address] = nbytes
            p.used += nbytes
            p.reserved += nbytes
            self.allocations.add(address, nbytes)
            self.pool_of[address] = p
        self.out(ptr_out, address)
        return E.CUDA_SUCCESS



def _no_allocation(nbytes: int) -> int:
    raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "an imported pool makes no allocations")
