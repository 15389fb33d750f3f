"""Memory another process can map: the pages behind CUDA IPC on the CPU.

Intel's USM allocations are ordinary private anonymous memory of this
process, so another process cannot map them. An allocation is made
shareable when it is exported, not when it is made (the copy is paid once,
by the exporter, and nothing else changes): its contents are copied into a
memfd, which is then mapped over the very same pages (MAP_FIXED), so its
address, and every pointer to it, stays valid. The importing process opens
the exporter's memfd (/proc/PID/fd/N, else pidfd_getfd) and maps it
wherever it likes. Backing every allocation with a memfd from the start
would cost what shmem costs on every allocation (no transparent huge pages
for shmem here: /sys/kernel/mm/transparent_hugepage/shmem_enabled is
"never", and a file descriptor per allocation), for the rare one exported.
"""

from __future__ import annotations

import ctypes
import mmap
import os
from dataclasses import dataclass

PAGE = mmap.PAGESIZE
_PROT_RW = mmap.PROT_READ | mmap.PROT_WRITE
_PROT_NONE = 0
_MAP_FIXED = 0x10
_MAP_NORESERVE = 0x4000
_MAP_FAILED = ctypes.c_void_p(-1).value
_SYS_PIDFD_OPEN = 434
_SYS_PIDFD_GETFD = 438


def page_floor(address: int) -> int:
    return address & ~(PAGE - 1)


def page_ceil(nbytes: int) -> int:
    return -(-nbytes // PAGE) * PAGE


class _Libc:
    def __init__(self) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.mmap = libc.mmap
        self.mmap.restype = ctypes.c_void_p
        self.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_int, ctypes.c_long]
        self.munmap = libc.munmap
        self.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self.mprotect = libc.mprotect
        self.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        self.fallocate = libc.fallocate
        self.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
        self.syscall = libc.syscall
        self.syscall.restype = ctypes.c_long


_LIBC: _Libc | None = None


def _libc() -> _Libc:
    global _LIBC
    if _LIBC is None:
        _LIBC = _Libc()
    return _LIBC


def _map(address: int, nbytes: int, flags: int, fd: int, offset: int,
         prot: int = _PROT_RW) -> int:
    result = _libc().mmap(address or None, nbytes, prot, flags, fd, offset)
    if result is None or result == _MAP_FAILED:
        err = ctypes.get_errno()
        raise OSError(err, f"mmap of {nbytes} bytes: {os.strerror(err)}")
    return int(result)


@dataclass
class SharedRange:
    """Pages of this process turned into a memfd's: [base, base + nbytes)
    is the memfd's [0, nbytes)."""

    base: int
    nbytes: int
    fd: int

    @property
    def inode(self) -> int:
        return os.fstat(self.fd).st_ino


def share_in_place(base: int, nbytes: int) -> SharedRange:
    """Makes the whole pages [base, base + nbytes) shared memory, keeping their
    contents and addresses. Nothing may write them meanwhile."""
    assert base % PAGE == 0 and nbytes % PAGE == 0, (base, nbytes)
    fd = os.memfd_create("zmlir-ipc", os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, nbytes)
        staging = _map(0, nbytes, mmap.MAP_SHARED, fd, 0)
        try:
            ctypes.memmove(staging, base, nbytes)
        finally:
            _libc().munmap(staging, nbytes)
        _map(base, nbytes, mmap.MAP_SHARED | _MAP_FIXED, fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return SharedRange(base, nbytes, fd)


def unshare(shared: SharedRange) -> None:
    """Gives pages of share_in_place back as private zeroed memory (their
    allocation is being freed), so that their next owner shares nothing."""
    _map(shared.base, shared.nbytes,
         mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_FIXED, -1, 0)
    os.close(shared.fd)


def open_foreign_fd(pid: int, fd: int) -> int:
    """A descriptor of this process for another process's descriptor `fd`:
    /proc/PID/fd/N (the same user may), else pidfd_getfd (ptrace rights)."""
    try:
        return os.open(f"/proc/{pid}/fd/{fd}", os.O_RDWR | os.O_CLOEXEC)
    except OSError as first:
        libc = _libc()
        pidfd = libc.syscall(_SYS_PIDFD_OPEN, ctypes.c_int(pid), ctypes.c_uint(0))
        if pidfd < 0:
            raise first from None
        try:
            got = libc.syscall(_SYS_PIDFD_GETFD, ctypes.c_int(pidfd), ctypes.c_int(fd),
                               ctypes.c_uint(0))
        finally:
            os.close(pidfd)
        if got < 0:
            raise first from None
        return int(got)


def map_fd(fd: int, offset: int, nbytes: int) -> tuple[int, int, int]:
    """Maps [offset, offset + nbytes) of a memfd anywhere: (the address of
    `offset`, the mapping's start, the mapping's length)."""
    start = page_floor(offset)
    length = page_ceil(offset + nbytes - start)
    base = _map(0, length, mmap.MAP_SHARED, fd, start)
    return base + offset - start, base, length


def unmap(base: int, length: int) -> None:
    if _libc().munmap(base, length) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"munmap: {os.strerror(err)}")


# -- address ranges reserved ahead of their memory (CUDA's virtual memory
# management, cuda/virtual_memory.py): a reservation is inaccessible pages
# no one else is given; memory is mapped into it at fixed addresses and
# unmapped back to inaccessible pages.

def reserve(nbytes: int, alignment: int, hint: int = 0) -> int:
    """Reserves `nbytes` (whole pages) of address space aligned to
    `alignment` (a power of two, at least a page), at `hint` where that is
    free and aligned: inaccessible, backed by nothing until map_fd_at."""
    assert nbytes % PAGE == 0 and alignment % PAGE == 0, (nbytes, alignment)
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE
    if hint and hint % alignment == 0:
        got = _map(hint, nbytes, flags, -1, 0, _PROT_NONE)
        if got == hint:
            return got
        unmap(got, nbytes)
    span = nbytes + alignment - PAGE
    start = _map(0, span, flags, -1, 0, _PROT_NONE)
    base = -(-start // alignment) * alignment
    if base > start:  # the pages before and after the aligned range go back
        unmap(start, base - start)
    if start + span > base + nbytes:
        unmap(base + nbytes, start + span - base - nbytes)
    return base


def map_fd_at(address: int, fd: int, offset: int, nbytes: int, prot: int = _PROT_RW) -> None:
    """Maps [offset, offset + nbytes) of a memfd over reserved pages at `address`."""
    _map(address, nbytes, mmap.MAP_SHARED | _MAP_FIXED, fd, offset, prot)


def unmap_to_reserved(address: int, nbytes: int) -> None:
    """Gives mapped pages back to their reservation: inaccessible, no memory."""
    _map(address, nbytes, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | _MAP_NORESERVE | _MAP_FIXED,
         -1, 0, _PROT_NONE)


def protect(address: int, nbytes: int, readable: bool, writable: bool) -> None:
    prot = (mmap.PROT_READ if readable else 0) | (mmap.PROT_WRITE if writable else 0)
    if _libc().mprotect(address, nbytes, prot) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mprotect: {os.strerror(err)}")


def punch_hole(fd: int, offset: int, nbytes: int) -> None:
    """Frees a memfd's pages [offset, offset + nbytes), keeping its size
    (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE): they read as zeros."""
    if _libc().fallocate(fd, 0x3, offset, nbytes) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"fallocate: {os.strerror(err)}")
