"""CUDA's virtual memory management: address ranges reserved apart from the
memory mapped into them (cuMemAddressReserve/Free, cuMemCreate/Release,
cuMemMap/Unmap, cuMemSetAccess/GetAccess, cuMemGetAllocationGranularity,
cuMemGetAllocationPropertiesFromHandle, cuMemRetainAllocationHandle), and
the memory's POSIX file descriptor handles that other processes import
(cuMemExportToShareableHandle, cuMemImportFromShareableHandle).

On the CPU (Backend.virtual_memory) device memory is host memory the
kernels reach at its address, so these are the host's own calls: a
reservation is inaccessible pages (Backend.reserve), an allocation
is a memfd of its size, a mapping is that memfd mapped over pages of a
reservation (Backend.ipc_import at a fixed address, as CUDA IPC maps an
exporter's memory), and its shareable handle is a descriptor of the memfd,
which a process passes to another over a Unix socket. Under the CUDA
passthrough (Backend.vendor_vmm) every call is NVIDIA's, with the
application's arguments and NVIDIA's answers; we keep the reservations and
mappings only to tell copies and pointer queries which ranges are
accessible. Elsewhere every call is CUDA_ERROR_NOT_SUPPORTED.

NVIDIA's rules are kept: sizes, addresses and offsets of allocations and
mappings are multiples of the granularity (2 MiB, an H200's); reservations
of whole pages; a mapping starts inaccessible, and cuMemSetAccess over
whole mapped ranges makes it reachable (its pages read-write; until then
copies refuse it and a kernel's access fails the context with
CUDA_ERROR_ILLEGAL_ADDRESS, faults.c); cuMemUnmap takes whole mappings
and gives their pages back to the reservation; the memory lives while a
handle to it is unreleased or a mapping of it remains (cuMemRelease of a
mapped allocation keeps it until the unmap). The calls need no current
context, as NVIDIA's do not (cuda-samples' memMapIPCDrv creates and exports
its memory with none).
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import os
from dataclasses import dataclass, field
from typing import Any

from zmlir.runtime import shared_memory
from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.state import DriverState

E = CUresult
# CU_MEM_ALLOC_GRANULARITY_MINIMUM and _RECOMMENDED alike: what an H200
# answers for device memory, and the CPU's large page.
GRANULARITY = 2 << 20
# CUmemAllocationHandleType
HANDLE_TYPE_NONE, HANDLE_TYPE_POSIX_FD = 0, 1
HANDLE_TYPES = 0x1 | 0x2 | 0x4 | 0x8  # POSIX fd, Win32, Win32 KMT, fabric
ALLOCATION_TYPE_PINNED = 1
LOCATION_TYPE_DEVICE = 1
# CUmemAccess_flags
ACCESS_NONE, ACCESS_READ, ACCESS_READWRITE = 0, 1, 3
_MEMFD_NAME = "zmlir-vmm"


@dataclass(eq=False)
class Allocation:
    """cuMemCreate's memory (or one imported): a memfd of `size` bytes."""

    fd: int
    size: int
    handle_types: int  # requestedHandleTypes
    handle: int = 0  # the application's CUmemGenericAllocationHandle
    imported: bool = False  # by cuMemImportFromShareableHandle
    references: int = 1  # handles not yet released (create, import, retain)
    mappings: int = 0

    @property
    def inode(self) -> int:
        return os.fstat(self.fd).st_ino


@dataclass(eq=False)
class Mapping:
    address: int
    size: int
    allocation: Allocation | None  # None: the vendor's (the passthrough)
    offset: int
    access: int = ACCESS_NONE


@dataclass(eq=False)
class Reservation:
    base: int
    size: int
    mappings: list[int] = field(default_factory=list)  # sorted addresses
    # Its accessible runs (base -> size): adjacent accessible mappings are one
    # range of device memory to copies and pointer queries, as one
    # contiguous range of virtual addresses is on a GPU.
    runs: dict[int, int] = field(default_factory=dict)


@dataclass
class _Tables:
    reservations: dict[int, Reservation] = field(default_factory=dict)
    bases: list[int] = field(default_factory=list)  # sorted
    mappings: dict[int, Mapping] = field(default_factory=dict)  # by address


def _invalid(why: str) -> CudaError:
    return CudaError(E.CUDA_ERROR_INVALID_VALUE, why)


class VirtualMemoryAPI(DriverState):
    @functools.cached_property
    def _vmm(self) -> _Tables:
        return _Tables()

    def _require_vmm(self, api_name: str) -> int | None:
        """None where the backend has virtual memory, else NOT_SUPPORTED (logged)."""
        self.require_init()
        if self.device.virtual_memory or self.device.vendor_vmm:
            return None
        return self.unsupported(api_name, f"the {self.device.name} backend")

    def _vendor(self, api_name: str, *args: Any) -> int | None:
        """Under the passthrough, NVIDIA's CUresult for the call with the
        application's own arguments; None where the calls are ours."""
        if not self.device.vendor_vmm:
            return None
        return int(self.device.vendor_vmm_call(api_name, *(self.ptr(a) for a in args)))

    def _add_reservation(self, base: int, size: int) -> None:
        t = self._vmm
        t.reservations[base] = Reservation(base, size)
        bisect.insort(t.bases, base)

    def _vendor_mapped(self, address: int, size: int, access: int | None) -> None:
        """Notes what NVIDIA's driver did to the mappings in [address, +size):
        access None: unmapped them; else their access is `access` (a new
        mapping is made with access ACCESS_NONE by cuMemMap)."""
        try:
            reservation = self._reservation_of(address, size)
        except CudaError:  # a range NVIDIA's driver knows and we do not
            return
        t = self._vmm
        for start in list(reservation.mappings):
            m = t.mappings[start]
            if m.address < address + size and address < m.address + m.size:
                if access is None:
                    del t.mappings[start]
                    reservation.mappings.remove(start)
                else:
                    m.access = access
        self._update_runs(reservation)

    def _allocation(self, handle: int) -> Allocation:
        found = self.handles.find(handle)
        if not isinstance(found, Allocation) or found.references == 0:
            raise _invalid(f"not a memory allocation handle: {handle:#x}")
        return found

    def _check_prop(self, prop: Any) -> None:
        if prop == self.ffi.NULL:
            raise _invalid("no allocation properties")
        p = prop[0]
        if p.type != ALLOCATION_TYPE_PINNED or p.location.type != LOCATION_TYPE_DEVICE:
            raise _invalid(f"allocation type {p.type} at location type {p.location.type}")
        self.check_device(p.location.id)
        if p.requestedHandleTypes & ~HANDLE_TYPES:
            raise _invalid(f"handle types {p.requestedHandleTypes:#x}")

    # -- granularity, reservations ----------------------------------------------

    def cuMemGetAllocationGranularity(self, granularity: Any, prop: Any, option: int) -> int:
        if (error := self._require_vmm("cuMemGetAllocationGranularity")) is not None:
            return error
        if (code := self._vendor("cuMemGetAllocationGranularity", granularity, prop,
                                 option)) is not None:
            return code
        self._check_prop(prop)
        if option not in (0, 1):  # MINIMUM, RECOMMENDED
            return E.CUDA_ERROR_INVALID_VALUE
        self.out(granularity, GRANULARITY)
        return E.CUDA_SUCCESS

    def cuMemAddressReserve(self, ptr: Any, size: int, alignment: int, addr: int,
                            flags: int) -> int:
        if (error := self._require_vmm("cuMemAddressReserve")) is not None:
            return error
        if (code := self._vendor("cuMemAddressReserve", ptr, size, alignment, addr,
                                 flags)) is not None:
            if code == E.CUDA_SUCCESS:
                self._add_reservation(int(ptr[0]), size)
            return code
        if (ptr == self.ffi.NULL or size == 0 or size % shared_memory.PAGE or flags
                or addr % shared_memory.PAGE or alignment & (alignment - 1)):
            return E.CUDA_ERROR_INVALID_VALUE
        try:
            base = self.device.reserve(size, max(alignment, GRANULARITY), addr)
        except OSError as err:
            raise CudaError(E.CUDA_ERROR_OUT_OF_MEMORY, str(err)) from None
        self._add_reservation(base, size)
        # A kernel's access to its inaccessible pages fails the context (700),
        # as on a GPU, rather than ending the process (faults.c; past 256
        # reservations at once it would end it).
        self.fast.guard_faults(base, size, True)
        ptr[0] = base
        return E.CUDA_SUCCESS

    def cuMemAddressFree(self, ptr: int, size: int) -> int:
        if (error := self._require_vmm("cuMemAddressFree")) is not None:
            return error
        t = self._vmm
        if (code := self._vendor("cuMemAddressFree", ptr, size)) is not None:
            if code == E.CUDA_SUCCESS and ptr in t.reservations:
                del t.reservations[ptr]
                t.bases.remove(ptr)
            return code
        reservation = t.reservations.get(ptr)
        if reservation is None or reservation.size != size:
            return E.CUDA_ERROR_INVALID_VALUE
        if reservation.mappings:  # NVIDIA's: unmap first
            return E.CUDA_ERROR_INVALID_VALUE
        del t.reservations[ptr]
        t.bases.remove(ptr)
        self.fast.guard_faults(ptr, size, False)
        self.device.release_reservation(ptr)
        return E.CUDA_SUCCESS

    def _reservation_of(self, address: int, size: int) -> Reservation:
        t = self._vmm
        i = bisect.bisect_right(t.bases, address) - 1
        if i >= 0:
            r = t.reservations[t.bases[i]]
            if address + size <= r.base + r.size:
                return r
        raise _invalid(f"[{address:#x}, +{size:#x}) is not inside one reservation")

    def _mappings_in(self, reservation: Reservation, address: int, size: int) -> list[Mapping]:
        """The mappings inside [address, address + size); one cut by either end
        of the range is CUDA_ERROR_INVALID_VALUE."""
        t = self._vmm
        found = []
        addresses = reservation.mappings
        i = max(bisect.bisect_right(addresses, address) - 1, 0)
        for start in addresses[i:]:
            m = t.mappings[start]
            if m.address >= address + size:
                break
            if m.address + m.size <= address:
                continue
            if m.address < address or m.address + m.size > address + size:
                raise _invalid(f"[{address:#x}, +{size:#x}) cuts the mapping at {m.address:#x}")
            found.append(m)
        return found

    # -- physical memory ---------------------------------------------------------

    def cuMemCreate(self, handle: Any, size: int, prop: Any, flags: int) -> int:
        if (error := self._require_vmm("cuMemCreate")) is not None:
            return error
        if (code := self._vendor("cuMemCreate", handle, size, prop, flags)) is not None:
            return code
        self._check_prop(prop)
        if handle == self.ffi.NULL or size == 0 or size % GRANULARITY or flags:
            return E.CUDA_ERROR_INVALID_VALUE
        handle_types = int(prop[0].requestedHandleTypes)
        if handle_types & ~HANDLE_TYPE_POSIX_FD:
            return self.unsupported("cuMemCreate", f"handle types {handle_types:#x} "
                                    "(a POSIX file descriptor only)")
        fd = os.memfd_create(_MEMFD_NAME, os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, size)
        except OSError as err:
            os.close(fd)
            raise CudaError(E.CUDA_ERROR_OUT_OF_MEMORY, str(err)) from None
        handle[0] = self._add_allocation(Allocation(fd, size, handle_types))
        return E.CUDA_SUCCESS

    def _add_allocation(self, allocation: Allocation) -> int:
        allocation.handle = self.handles.add(allocation)
        return allocation.handle

    def _drop(self, allocation: Allocation) -> None:
        """Frees the memory once no handle and no mapping holds it."""
        if allocation.references == 0 and allocation.mappings == 0:
            self.handles.remove(allocation.handle, Allocation)
            os.close(allocation.fd)

    def cuMemRelease(self, handle: int) -> int:
        if (error := self._require_vmm("cuMemRelease")) is not None:
            return error
        if (code := self._vendor("cuMemRelease", handle)) is not None:
            return code
        allocation = self._allocation(handle)
        allocation.references -= 1
        self._drop(allocation)
        return E.CUDA_SUCCESS

    def cuMemGetAllocationPropertiesFromHandle(self, prop: Any, handle: int) -> int:
        if (error := self._require_vmm("cuMemGetAllocationPropertiesFromHandle")) is not None:
            return error
        if (code := self._vendor("cuMemGetAllocationPropertiesFromHandle", prop, handle)) is not None:
            return code
        allocation = self._allocation(handle)
        if prop == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        # What was asked, less what the CPU does not do: no compression, no
        # GPUDirect RDMA (cudaCompressibleMemory asks whether it got compression).
        self.ffi.memmove(prop, bytes(self.ffi.sizeof("CUmemAllocationProp")),
                         self.ffi.sizeof("CUmemAllocationProp"))
        p = prop[0]
        # An imported handle's properties ask for no handle type (an H200).
        p.type = ALLOCATION_TYPE_PINNED
        p.requestedHandleTypes = 0 if allocation.imported else allocation.handle_types
        p.location.type, p.location.id = LOCATION_TYPE_DEVICE, 0
        return E.CUDA_SUCCESS

    def cuMemRetainAllocationHandle(self, handle: Any, addr: Any) -> int:
        if (error := self._require_vmm("cuMemRetainAllocationHandle")) is not None:
            return error
        if (code := self._vendor("cuMemRetainAllocationHandle", handle, addr)) is not None:
            return code
        mapping = self._mapping_at(self.ptr(addr))
        if mapping is None or handle == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        mapping.allocation.references += 1
        handle[0] = mapping.allocation.handle
        return E.CUDA_SUCCESS

    def _mapping_at(self, address: int) -> Mapping | None:
        try:
            reservation = self._reservation_of(address, 1)
        except CudaError:
            return None
        i = bisect.bisect_right(reservation.mappings, address) - 1
        if i < 0:
            return None
        m = self._vmm.mappings[reservation.mappings[i]]
        return m if address < m.address + m.size else None

    # -- mappings and access --------------------------------------------------------

    def cuMemMap(self, ptr: int, size: int, offset: int, handle: int, flags: int) -> int:
        if (error := self._require_vmm("cuMemMap")) is not None:
            return error
        if (code := self._vendor("cuMemMap", ptr, size, offset, handle, flags)) is not None:
            if code == E.CUDA_SUCCESS:
                with contextlib.suppress(CudaError):  # a range NVIDIA's driver knows
                    reservation = self._reservation_of(ptr, size)
                    self._vmm.mappings[ptr] = Mapping(ptr, size, None, offset)
                    bisect.insort(reservation.mappings, ptr)
            return code
        allocation = self._allocation(handle)
        if (flags or size == 0 or ptr % GRANULARITY or size % GRANULARITY
                or offset % GRANULARITY):
            return E.CUDA_ERROR_INVALID_VALUE
        # An H200's answers (driver 580): an offset into the allocation (its
        # documentation: "must be zero currently"), a size past its end, and
        # a range already mapped are NOT_SUPPORTED.
        if offset or size > allocation.size:
            return E.CUDA_ERROR_NOT_SUPPORTED
        reservation = self._reservation_of(ptr, size)
        if self._mappings_in(reservation, ptr, size):
            return E.CUDA_ERROR_NOT_SUPPORTED
        try:
            self.device.ipc_import(allocation.fd, offset, size, at=ptr)
            shared_memory.protect(ptr, size, readable=False, writable=False)
        except OSError as err:
            raise CudaError(E.CUDA_ERROR_OUT_OF_MEMORY, str(err)) from None
        self._vmm.mappings[ptr] = Mapping(ptr, size, allocation, offset)
        bisect.insort(reservation.mappings, ptr)
        allocation.mappings += 1
        return E.CUDA_SUCCESS

    def cuMemUnmap(self, ptr: int, size: int) -> int:
        if (error := self._require_vmm("cuMemUnmap")) is not None:
            return error
        if (code := self._vendor("cuMemUnmap", ptr, size)) is not None:
            if code == E.CUDA_SUCCESS:
                self._vendor_mapped(ptr, size, None)
            return code
        if size == 0:
            return E.CUDA_ERROR_INVALID_VALUE
        reservation = self._reservation_of(ptr, size)
        mappings = self._mappings_in(reservation, ptr, size)
        if not mappings:
            return E.CUDA_ERROR_INVALID_VALUE
        for m in mappings:
            self._set_access(m, ACCESS_NONE)
            self.device.ipc_close(m.address)  # waits for work that may still use it
            del self._vmm.mappings[m.address]
            reservation.mappings.remove(m.address)
            m.allocation.mappings -= 1
            self._drop(m.allocation)
        self._update_runs(reservation)
        return E.CUDA_SUCCESS

    def _set_access(self, m: Mapping, access: int) -> None:
        if access == m.access:
            return
        if access == ACCESS_READWRITE:
            # Mapped afresh: a kernel's fault on an inaccessible page left a
            # page of its own there (faults.c).
            shared_memory.map_fd_at(m.address, m.allocation.fd, m.offset, m.size)
        else:
            shared_memory.protect(m.address, m.size, readable=False, writable=False)
        m.access = access

    def _update_runs(self, reservation: Reservation) -> None:
        """The device memory copies and pointer queries know in `reservation`
        (the driver's allocation map): its runs of adjacent accessible
        mappings, each one range that cuMemFree refuses."""
        runs: dict[int, int] = {}
        start = end = 0
        for address in reservation.mappings:
            m = self._vmm.mappings[address]
            if m.access == ACCESS_NONE:
                continue
            if address != end:
                if end:
                    runs[start] = end - start
                start = address
            end = address + m.size
        if end:
            runs[start] = end - start
        for base, size in reservation.runs.items():
            if runs.get(base) != size:
                self.allocations.forget(base)
        for base, size in runs.items():
            if reservation.runs.get(base) != size:
                self.allocations.add(base, size, owned=False)
        reservation.runs = runs

    def cuMemSetAccess(self, ptr: int, size: int, desc: Any, count: int) -> int:
        if (error := self._require_vmm("cuMemSetAccess")) is not None:
            return error
        if (code := self._vendor("cuMemSetAccess", ptr, size, desc, count)) is not None:
            if code == E.CUDA_SUCCESS:  # the last descriptor for our one device holds
                flags = [desc[i].flags for i in range(count)
                         if desc[i].location.type == LOCATION_TYPE_DEVICE]
                if flags:
                    self._vendor_mapped(ptr, size, flags[-1])
            return code
        if size == 0 or count == 0 or desc == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        access = None
        for i in range(count):  # one device: the last descriptor for it holds
            d = desc[i]
            if d.location.type != LOCATION_TYPE_DEVICE:
                return self.unsupported("cuMemSetAccess",
                                        f"location type {d.location.type} (the device only)")
            self.check_device(d.location.id)
            if d.flags not in (ACCESS_NONE, ACCESS_READ, ACCESS_READWRITE):
                return E.CUDA_ERROR_INVALID_VALUE
            access = d.flags
        if access == ACCESS_READ:
            # Read-only pages would fault our own copies into them (and the
            # process) rather than fail the call.
            return self.unsupported("cuMemSetAccess", "read-only access (PROT_READ)")
        reservation = self._reservation_of(ptr, size)
        mappings = self._mappings_in(reservation, ptr, size)
        if sum(m.size for m in mappings) != size:  # NVIDIA's: a fully mapped range
            return E.CUDA_ERROR_INVALID_VALUE
        for m in mappings:
            self._set_access(m, access)
        self._update_runs(reservation)
        return E.CUDA_SUCCESS

    def cuMemGetAccess(self, flags: Any, location: Any, ptr: int) -> int:
        if (error := self._require_vmm("cuMemGetAccess")) is not None:
            return error
        if (code := self._vendor("cuMemGetAccess", flags, location, ptr)) is not None:
            return code
        if location == self.ffi.NULL or location.type != LOCATION_TYPE_DEVICE:
            return E.CUDA_ERROR_INVALID_VALUE
        self.check_device(location.id)
        mapping = self._mapping_at(ptr)
        if mapping is None:
            return E.CUDA_ERROR_INVALID_VALUE
        self.out(flags, mapping.access)
        return E.CUDA_SUCCESS

    # -- sharing with other processes --------------------------------------------------

    def cuMemExportToShareableHandle(self, shareable: Any, handle: int, handle_type: int,
                                     flags: int) -> int:
        if (error := self._require_vmm("cuMemExportToShareableHandle")) is not None:
            return error
        if (code := self._vendor("cuMemExportToShareableHandle", shareable, handle, handle_type, flags)) is not None:
            return code
        allocation = self._allocation(handle)
        if shareable == self.ffi.NULL or flags:
            return E.CUDA_ERROR_INVALID_VALUE
        if handle_type != HANDLE_TYPE_POSIX_FD or not allocation.handle_types & handle_type:
            return E.CUDA_ERROR_INVALID_VALUE  # not requested at cuMemCreate
        # A descriptor of its own: the application closes it once sent.
        self.ffi.cast("int *", shareable)[0] = os.dup(allocation.fd)
        return E.CUDA_SUCCESS

    def cuMemImportFromShareableHandle(self, handle: Any, os_handle: Any,
                                       handle_type: int) -> int:
        if (error := self._require_vmm("cuMemImportFromShareableHandle")) is not None:
            return error
        if (code := self._vendor("cuMemImportFromShareableHandle", handle, os_handle, handle_type)) is not None:
            return code
        if handle == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        if handle_type != HANDLE_TYPE_POSIX_FD:
            return self.unsupported("cuMemImportFromShareableHandle",
                                    f"handle type {handle_type} (a POSIX file descriptor only)")
        fd = import_memfd(self.ptr(os_handle) & 0xFFFFFFFF, _MEMFD_NAME)
        size = os.fstat(fd).st_size
        handle[0] = self._add_allocation(Allocation(fd, size, HANDLE_TYPE_POSIX_FD, imported=True))
        return E.CUDA_SUCCESS


def import_memfd(fd: int, name: str) -> int:
    """A descriptor of our own for the application's `fd`, which must be a
    memfd this driver made under `name` (in any process); else
    CUDA_ERROR_INVALID_VALUE."""
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        raise _invalid(f"{fd} is no open file descriptor") from None
    if not target.startswith(f"/memfd:{name} "):
        raise _invalid(f"descriptor {fd} is {target}, not memory this driver shares")
    return os.dup(fd)
