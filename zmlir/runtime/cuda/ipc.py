"""CUDA IPC: device memory and events shared between processes
(cuIpcGetMemHandle, cuIpcOpenMemHandle, cuIpcCloseMemHandle,
cuIpcGetEventHandle, cuIpcOpenEventHandle).

A handle is 64 opaque bytes the application hands to another process
(a pipe, shared memory). Ours name the exporting process, a file descriptor
of it holding the memory and that file's inode (so that a descriptor number
reused after a free is never mistaken for the old one), the allocation's
offset and size there, and a serial that makes a handle of a later
allocation at the same address a different one, as NVIDIA's are.

Memory: the backend makes the allocation's pages shared memory in place when
it is first exported (Backend.ipc_export; on the CPU a memfd mapped over the
same pages, runtime/shared_memory.py) and the importer maps that file
(Backend.ipc_import): the same physical memory at an address of its own,
which copies and kernels reach, cuMemFree refuses, and cuIpcCloseMemHandle
unmaps. The handle names the allocation's base whatever pointer into it was
given; opening it in the exporting process is CUDA_ERROR_INVALID_CONTEXT;
opening it again in the importer counts a reference and returns the same
pointer, as NVIDIA's driver does.

Events: an event created with CU_EVENT_INTERPROCESS (with
CU_EVENT_DISABLE_TIMING, as NVIDIA requires) keeps its state in a page of
shared memory both processes map (SharedEvent): how many times it was
recorded, by any of them, and per record whether the recording stream
reached it, written by the backend in queue order (Backend.signal). Query,
synchronize and stream waits read that page, so one process waits for what
another recorded. A stream waiting on such an event waits on the host, at
the call, for the record last made (driver-differences.md).

Where the vendor's driver is underneath (the CUDA passthrough:
Backend.vendor_ipc), memory handles are its own: cuIpcGetMemHandle hands
out NVIDIA's handle of NVIDIA's device memory (Backend.alloc_device) and
cuIpcOpenMemHandle opens it with NVIDIA's driver, whose codes are the
answer; our tables keep only what the driver needs (the opened range as an
allocation cuMemFree refuses, the opens to close). Events stay ours there.
"""

from __future__ import annotations

import ctypes
import fcntl
import functools
import itertools
import os
import struct
import time
from dataclasses import dataclass, field
from typing import Any

from zmlir.runtime import shared_memory
from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.fastpath import ASYNC_ALLOCATION
from zmlir.runtime.cuda.objects import Event
from zmlir.runtime.cuda.state import DriverState

E = CUresult
CU_EVENT_DISABLE_TIMING = 0x2
CU_EVENT_INTERPROCESS = 0x4
CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x1

_HANDLE_BYTES = 64
_MAGIC = b"zmlirIPC"
_MEMORY, _EVENT = 1, 2
# magic, kind, exporter's pid, its descriptor, (pad), inode, offset, size, serial
_LAYOUT = struct.Struct("<8sIIiIQQQQ")
_SERIALS = itertools.count(1)


@dataclass(frozen=True)
class _Handle:
    kind: int
    pid: int
    fd: int
    inode: int
    offset: int = 0
    size: int = 0
    serial: int = 0

    def pack(self) -> bytes:
        data = _LAYOUT.pack(_MAGIC, self.kind, self.pid, self.fd, 0, self.inode, self.offset,
                            self.size, self.serial)
        return data.ljust(_HANDLE_BYTES, b"\0")

    @staticmethod
    def unpack(data: bytes, kind: int) -> _Handle:
        magic, got, pid, fd, _, inode, offset, size, serial = _LAYOUT.unpack_from(data)
        if magic == _MAGIC and got == _MEMORY and kind == _EVENT:  # an H200's answer
            raise CudaError(E.CUDA_ERROR_MAP_FAILED, "a memory handle opened as an event")
        if magic != _MAGIC or got != kind:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "not an IPC handle of this driver")
        return _Handle(kind, pid, fd, inode, offset, size, serial)

    def open_fd(self) -> int:
        """The exporter's file, opened here; the handle's error if it is gone."""
        if self.pid == os.getpid():  # NVIDIA's answer: opened where it was made
            raise CudaError(E.CUDA_ERROR_INVALID_CONTEXT, "opened in the exporting process")
        try:
            fd = shared_memory.open_foreign_fd(self.pid, self.fd)
        except OSError as err:
            if not os.path.exists(f"/proc/{self.pid}"):
                raise CudaError(E.CUDA_ERROR_INVALID_VALUE,
                                f"the exporting process {self.pid}'s memory: {err}") from None
            fd = -1  # the exporter lives and closed the file: the memory was freed
        if fd < 0 or os.fstat(fd).st_ino != self.inode:
            if fd >= 0:
                os.close(fd)
            # An H200 answers CUDA_ERROR_NOT_PERMITTED for a handle whose memory the
            # (living) exporter freed.
            raise CudaError(E.CUDA_ERROR_NOT_PERMITTED, "the exported memory was freed")
        return fd


class SharedEvent:
    """An interprocess event's state in one page of shared memory: word 0
    counts the records (of every process), word 1 + n % SLOTS is n once
    record n's stream has reached it."""

    SLOTS = shared_memory.PAGE // 8 - 1

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.address, self._base, self._length = shared_memory.map_fd(fd, 0, shared_memory.PAGE)

    @classmethod
    def create(cls) -> SharedEvent:
        fd = os.memfd_create("zmlir-ipc-event", os.MFD_CLOEXEC)
        os.ftruncate(fd, shared_memory.PAGE)
        return cls(fd)

    def _word(self, index: int) -> ctypes.c_uint64:
        return ctypes.c_uint64.from_address(self.address + 8 * index)

    def record(self, backend: Any) -> None:
        # A POSIX lock: it holds between processes however each opened the file.
        fcntl.lockf(self.fd, fcntl.LOCK_EX, 8, 0)
        try:
            n = self._word(0).value + 1
            self._word(0).value = n
        finally:
            fcntl.lockf(self.fd, fcntl.LOCK_UN, 8, 0)
        backend.signal(self.address + 8 * (1 + n % self.SLOTS), n)

    def last(self) -> int:
        """The record a query or a wait now refers to (0: none yet)."""
        return int(self._word(0).value)

    def reached(self, n: int) -> bool:
        return n == 0 or self._word(1 + n % self.SLOTS).value >= n

    def wait(self, n: int) -> None:
        pause = 20e-6
        while not self.reached(n):
            time.sleep(pause)
            pause = min(pause * 2, 1e-3)

    def close(self) -> None:
        shared_memory.unmap(self._base, self._length)
        os.close(self.fd)


@dataclass
class _Imported:
    key: tuple[int, int, int, int] | None  # None: a vendor's handle (Backend.vendor_ipc)
    address: int
    references: int = 1


@dataclass
class _Tables:
    exported: dict[int, _Handle] = field(default_factory=dict)  # allocation base -> handle
    imported: dict[tuple[int, int, int, int], _Imported] = field(default_factory=dict)
    by_address: dict[int, _Imported] = field(default_factory=dict)


class IpcAPI(DriverState):
    @functools.cached_property
    def _ipc(self) -> _Tables:
        return _Tables()

    # -- memory ----------------------------------------------------------------

    def cuIpcGetMemHandle(self, phandle: Any, dptr: int) -> int:
        self.current_context()
        found = self.allocations.containing(dptr)
        if phandle == self.ffi.NULL or found is None:
            return E.CUDA_ERROR_INVALID_VALUE
        base, size = found
        if not self.ipc_exportable(base):  # cudarc#521: a pool's is INVALID_VALUE
            return E.CUDA_ERROR_INVALID_VALUE
        if self.device.vendor_ipc:
            self.ffi.memmove(phandle, self.device.vendor_ipc_export(base), _HANDLE_BYTES)
            return E.CUDA_SUCCESS
        handle = self._ipc.exported.get(base)
        if handle is None:
            exported = self.device.ipc_export(base)
            if exported is None:
                return self.unsupported("cuIpcGetMemHandle", f"the {self.device.name} backend")
            fd, offset = exported
            handle = _Handle(_MEMORY, os.getpid(), fd, os.fstat(fd).st_ino, offset, size,
                             next(_SERIALS))
            self._ipc.exported[base] = handle
        self.ffi.memmove(phandle, handle.pack(), _HANDLE_BYTES)
        return E.CUDA_SUCCESS

    def ipc_exportable(self, base: int) -> bool:
        """Whether the allocation at `base` is one cuIpcGetMemHandle takes:
        cuMemAlloc's own, not a pool's, a graph's, managed memory or a
        module variable."""
        return (self.allocations.owns(base) and base not in self.pool_of
                and base not in self.managed
                and self.fast.allocation_kind(base) != ASYNC_ALLOCATION)

    def ipc_freed(self, base: int) -> None:
        """cuMemFree of an allocation: its handles name nothing any more."""
        if self._ipc.exported:
            self._ipc.exported.pop(base, None)

    def cuIpcOpenMemHandle_v2(self, pdptr: Any, handle: Any, flags: int) -> int:
        self.current_context()
        if pdptr == self.ffi.NULL or flags & ~CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS:
            return E.CUDA_ERROR_INVALID_VALUE
        data = self.ffi.unpack(handle.reserved, _HANDLE_BYTES)
        if self.device.vendor_ipc:
            return self._open_vendor(pdptr, data, flags)
        h = _Handle.unpack(data, _MEMORY)
        key = (h.pid, h.inode, h.offset, h.serial)
        opened = self._ipc.imported.get(key)
        if opened is not None:
            opened.references += 1
            self.out(pdptr, opened.address)
            return E.CUDA_SUCCESS
        fd = h.open_fd()
        try:
            address = self.device.ipc_import(fd, h.offset, h.size)
        except NotImplementedError:
            return self.unsupported("cuIpcOpenMemHandle", f"the {self.device.name} backend")
        except OSError as err:
            raise CudaError(E.CUDA_ERROR_MAP_FAILED, str(err)) from None
        finally:
            os.close(fd)  # the mapping holds the memory
        opened = _Imported(key, address)
        self._ipc.imported[key] = opened
        self._ipc.by_address[address] = opened
        self.allocations.add(address, h.size, owned=False)  # cuMemFree refuses it
        self.out(pdptr, address)
        return E.CUDA_SUCCESS

    cuIpcOpenMemHandle = cuIpcOpenMemHandle_v2

    def _open_vendor(self, pdptr: Any, data: bytes, flags: int) -> int:
        """cuIpcOpenMemHandle of a vendor's handle: the vendor opens it
        (again: it counts the opens, and answers the same address)."""
        if data.startswith(_MAGIC):  # one of our event handles
            return E.CUDA_ERROR_INVALID_VALUE
        address, size = self.device.vendor_ipc_open(data, flags)
        opened = self._ipc.by_address.get(address)
        if opened is not None:
            opened.references += 1
        else:
            self._ipc.by_address[address] = _Imported(None, address)
            self.allocations.add(address, size, owned=False)  # cuMemFree refuses it
        self.out(pdptr, address)
        return E.CUDA_SUCCESS

    def cuIpcCloseMemHandle(self, dptr: int) -> int:
        self.current_context()
        opened = self._ipc.by_address.get(dptr)
        if opened is None:
            return E.CUDA_ERROR_INVALID_VALUE
        opened.references -= 1
        if opened.references == 0:
            del self._ipc.by_address[dptr]
            self.allocations.forget(dptr)
            if opened.key is not None:
                del self._ipc.imported[opened.key]
                self.device.ipc_close(dptr)  # waits for work that may still use it
        if opened.key is None:
            self.device.vendor_ipc_close(dptr)  # one open of the vendor's undone
        return E.CUDA_SUCCESS

    # -- events ----------------------------------------------------------------

    def cuIpcGetEventHandle(self, phandle: Any, event: Any) -> int:
        self.require_init()
        if phandle == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        ev = self.handles.get(self.ptr(event), Event)
        if ev.shared is None:  # not created with CU_EVENT_INTERPROCESS
            return E.CUDA_ERROR_INVALID_HANDLE
        shared = ev.shared
        handle = _Handle(_EVENT, os.getpid(), shared.fd, os.fstat(shared.fd).st_ino)
        self.ffi.memmove(phandle, handle.pack(), _HANDLE_BYTES)
        return E.CUDA_SUCCESS

    def cuIpcOpenEventHandle(self, phevent: Any, handle: Any) -> int:
        self.current_context()
        if phevent == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        data = self.ffi.unpack(handle.reserved, _HANDLE_BYTES)
        if self.device.vendor_ipc and not data.startswith(_MAGIC):
            # A vendor's memory handle (MAP_FAILED) or garbage: the vendor's answer.
            return self.device.vendor_ipc_event_code(data)
        h = _Handle.unpack(data, _EVENT)
        fd = h.open_fd()
        try:
            shared = SharedEvent(fd)
        except OSError as err:
            os.close(fd)
            raise CudaError(E.CUDA_ERROR_MAP_FAILED, str(err)) from None
        ev = Event(CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING, shared=shared)
        ev.handle = self.handles.add(ev)
        self.out(phevent, self.handle_ptr(ev.handle))
        return E.CUDA_SUCCESS
