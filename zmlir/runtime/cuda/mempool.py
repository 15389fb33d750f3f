"""Memory pools: stream-ordered allocation (cuMemAllocAsync, cuMemFreeAsync,
cuMemAllocFromPoolAsync) and the cuMemPool* API.

A pool hands out backend allocations and keeps freed ones for reuse, as
CUDA's pools do. Our work is ordered on one in-order queue, so a block
freed "in stream order" is free for everything issued after: any later
allocation of a pool may reuse it (the reuse attributes are kept and
reported; with one queue every dependency they ask about is satisfied).
A block freed in a vendor stream (the passthrough's, whose kernels run
beside other streams': stream.py) is pending: reused in that stream, and
by any once that stream has run its work so far (at a synchronization). Memory
above the release threshold goes back to the backend at the next
synchronization (stream, event or context) or at cuMemPoolTrimTo, which
releases free blocks until the pool holds no more than asked.

Sizes are kept in granules of GRANULE bytes; a freed block is reused for a
request that rounds to the same size.

Where the vendor's driver is underneath (the passthrough) the device's
default pool is the vendor's own (VendorDefaultPool): its blocks, their
reuse and its attributes are NVIDIA's, and fastpath.c allocates and frees
them without Python while it is the device's current pool (cudaMallocAsync
in a loop: streamOrderedAllocation's).

Besides the device's pools there are CUDA 13's pools by location and
allocation type (cuMemGetMemPool, cuMemPoolCreate): page-locked host memory
(CU_MEM_LOCATION_TYPE_HOST and HOST_NUMA: one host memory here), and managed
memory, which is device memory (the host reaches it anyway) that
cuPointerGetAttributes reports as managed.

MemoryPool is one pool; MemPoolAPI the driver API over pools (a pool is
reached by its handle, freed through cuMemFree as any allocation).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.memory import MemoryAPI

E = CUresult
GRANULE = 512

# CUmemPool_attribute
ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1
ATTR_REUSE_ALLOW_OPPORTUNISTIC = 2
ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3
ATTR_RELEASE_THRESHOLD = 4
ATTR_RESERVED_MEM_CURRENT = 5
ATTR_RESERVED_MEM_HIGH = 6
ATTR_USED_MEM_CURRENT = 7
ATTR_USED_MEM_HIGH = 8
INT_ATTRIBUTES = (ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES, ATTR_REUSE_ALLOW_OPPORTUNISTIC,
                  ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES)

# CUmemPoolProps fields we accept
ALLOCATION_TYPE_PINNED = 1
ALLOCATION_TYPE_MANAGED = 2
LOCATION_TYPE_NONE = 0
LOCATION_TYPE_DEVICE = 1
HOST_LOCATION_TYPES = (2, 3, 4)  # HOST, HOST_NUMA, HOST_NUMA_CURRENT: one host memory
HANDLE_TYPE_NONE = 0


def granules(nbytes: int) -> int:
    return -(-nbytes // GRANULE) * GRANULE


@dataclass
class MemoryPool:
    """One pool; `alloc`/`free` are the backend's."""

    alloc_backend: Callable[[int], int]
    free_backend: Callable[[int], None]
    max_size: int = 0  # 0: no limit but the device's
    default: bool = False
    # "device"; "host": page-locked host memory (CU_MEM_LOCATION_TYPE_HOST*);
    # "managed": device memory that says it is managed (our one memory is both).
    kind: str = "device"
    reuse: dict[int, int] = field(default_factory=lambda: dict.fromkeys(INT_ATTRIBUTES, 1))
    release_threshold: int = 0
    reserved: int = 0
    reserved_high: int = 0
    used: int = 0
    used_high: int = 0
    destroyed: bool = False
    free_blocks: dict[int, list[int]] = field(default_factory=dict)  # rounded size -> bases
    # Freed in a vendor stream: (stream, rounded size, base), oldest first.
    pending: list[tuple[int, int, int]] = field(default_factory=list)
    live: dict[int, int] = field(default_factory=dict)  # base -> rounded size
    # IPC (mempool_ipc.py): the handle types it was created with, its memory
    # (a mempool_ipc.SharedPoolMemory), and whether it is another process's
    # pool imported here (it makes no allocations; it maps imported ones,
    # which a free unmaps).
    handle_types: int = 0
    shared: Any = None
    imported: bool = False

    def allocate(self, nbytes: int, stream: int = 0) -> int:
        """`stream`: the vendor stream it is allocated in (0: the queue)."""
        size = granules(nbytes)
        blocks = self.free_blocks.get(size)
        base = blocks.pop() if blocks else self._pending_block(size, stream)
        if base is None:
            if self.max_size and self.reserved + size > self.max_size:
                self.release(self.max_size - size)
                if self.reserved + size > self.max_size:
                    raise CudaError(E.CUDA_ERROR_OUT_OF_MEMORY,
                                    f"pool of at most {self.max_size} bytes is full")
            try:
                base = self.alloc_backend(size)
            except Exception as err:
                self.release(0)  # what the pool holds back may be what is missing
                try:
                    base = self.alloc_backend(size)
                except Exception:
                    raise CudaError(E.CUDA_ERROR_OUT_OF_MEMORY, str(err)) from None
            self.reserved += size
            self.reserved_high = max(self.reserved_high, self.reserved)
        self.live[base] = size
        self.used += size
        self.used_high = max(self.used_high, self.used)
        return base

    def _pending_block(self, size: int, stream: int) -> int | None:
        """A block of `size` bytes freed earlier in vendor stream `stream`."""
        for i, (lane, pending_size, base) in enumerate(self.pending):
            if stream and lane == stream and pending_size == size:
                del self.pending[i]
                return base
        return None

    def owns(self, base: int) -> bool:
        return base in self.live

    def free(self, base: int, stream: int = 0) -> None:
        """`stream`: the vendor stream it is freed in (0: the queue)."""
        size = self.live.pop(base)
        self.used -= size
        if self.destroyed or self.imported:
            self.free_backend(base)
            self.reserved -= size
        elif stream:
            self.pending.append((stream, size, base))
        else:
            self.free_blocks.setdefault(size, []).append(base)

    def release(self, keep: int) -> None:
        """Returns free blocks to the backend until at most `keep` bytes are
        reserved (or no free block is left), largest blocks first."""
        for size in sorted(self.free_blocks, reverse=True):
            blocks = self.free_blocks[size]
            while blocks and self.reserved > keep:
                self.free_backend(blocks.pop())
                self.reserved -= size
        self.free_blocks = {s: b for s, b in self.free_blocks.items() if b}

    def settle(self, stream_done: Callable[[int], bool]) -> None:
        """At a synchronization: blocks pending in streams that have run
        their work (`stream_done`) are free; hold no more than the release
        threshold."""
        done = [block for block in self.pending if stream_done(block[0])]
        self.pending = [block for block in self.pending if block not in done]
        for _, size, base in done:
            if self.destroyed:
                self.free_backend(base)
                self.reserved -= size
            else:
                self.free_blocks.setdefault(size, []).append(base)
        if self.reserved > self.release_threshold:
            self.release(self.release_threshold)

    def held(self) -> int:
        """Bytes the pool keeps for reuse (reserved, not in use)."""
        return self.reserved - self.used

    def pending_in(self, stream: int) -> bool:
        """Whether blocks freed in vendor stream `stream` are pending."""
        return any(lane == stream for lane, _, _ in self.pending)

    def destroy(self) -> None:
        """Frees what is free now, pending blocks too (the backend's free
        waits for the device, as cuMemFree does); blocks still in use go
        back when freed."""
        self.destroyed = True
        self.release(0)
        for _, size, base in self.pending:
            self.free_backend(base)
            self.reserved -= size
        self.pending = []

    def get_attribute(self, attr: int) -> int:
        values = {
            ATTR_RELEASE_THRESHOLD: self.release_threshold,
            ATTR_RESERVED_MEM_CURRENT: self.reserved,
            ATTR_RESERVED_MEM_HIGH: self.reserved_high,
            ATTR_USED_MEM_CURRENT: self.used,
            ATTR_USED_MEM_HIGH: self.used_high,
            **self.reuse,
        }
        if attr not in values:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"memory pool attribute {attr}")
        return values[attr]

    def set_attribute(self, attr: int, value: int) -> None:
        if attr in INT_ATTRIBUTES:
            self.reuse[attr] = int(value != 0)
        elif attr == ATTR_RELEASE_THRESHOLD:
            self.release_threshold = value
        elif attr == ATTR_RESERVED_MEM_HIGH and value == 0:
            self.reserved_high = self.reserved
        elif attr == ATTR_USED_MEM_HIGH and value == 0:
            self.used_high = self.used
        else:  # the current amounts are read-only; the high marks reset only to 0
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE,
                            f"memory pool attribute {attr} cannot be set to {value}")

    @staticmethod
    def is_int_attribute(attr: int) -> bool:
        return attr in INT_ATTRIBUTES


@dataclass
class VendorDefaultPool(MemoryPool):
    """The device's default pool where it is the vendor's own
    (Backend.vendor_default_pool: NVIDIA's under the passthrough): blocks,
    their reuse in each stream, the release threshold and the amounts are
    the vendor's; nothing pends or settles here. fastpath.c allocates and
    frees its blocks too, while it is the device's current pool."""

    vendor: Any = None  # the Backend

    def allocate(self, nbytes: int, stream: int = 0) -> int:
        return self.vendor.default_pool_alloc(nbytes, stream)

    def free(self, base: int, stream: int = 0) -> None:
        self.vendor.default_pool_free(base, stream)

    def release(self, keep: int) -> None:
        self.vendor.default_pool_trim(keep)

    def settle(self, stream_done: Callable[[int], bool]) -> None:
        pass  # the vendor's

    def held(self) -> int:
        return (self.get_attribute(ATTR_RESERVED_MEM_CURRENT)
                - self.get_attribute(ATTR_USED_MEM_CURRENT))

    def get_attribute(self, attr: int) -> int:
        if attr not in (*INT_ATTRIBUTES, ATTR_RELEASE_THRESHOLD, ATTR_RESERVED_MEM_CURRENT,
                        ATTR_RESERVED_MEM_HIGH, ATTR_USED_MEM_CURRENT, ATTR_USED_MEM_HIGH):
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"memory pool attribute {attr}")
        return self.vendor.default_pool_attribute(attr)

    def set_attribute(self, attr: int, value: int) -> None:
        self.vendor.default_pool_attribute(attr, value)


class MemPoolAPI(MemoryAPI):
    def _default_pool(self) -> int:
        if self.default_pool == 0:
            if self.device.vendor_default_pool:
                pool: MemoryPool = VendorDefaultPool(self.device.alloc_device, self.device.free,
                                                     default=True, vendor=self.device)
            else:
                pool = self._kind_pool("device", default=True)
            self.default_pool = self._new_pool(pool)
        return self.default_pool

    def _new_pool(self, pool: MemoryPool) -> int:
        self.pools.append(pool)
        if not isinstance(pool, VendorDefaultPool):
            self.fast.sync_work(+1)  # settled at synchronizations: in Python
        return self.handles.add(pool)

    def _current_pool_changed(self) -> None:
        """fastpath.c allocates from the vendor's default pool only while
        it is the device's current pool."""
        self.fast.default_pool_current(self.current_pool in (0, self.default_pool))

    def _pool(self, handle: Any) -> MemoryPool:
        self.require_init()
        return self.handles.get(self.ptr(handle), MemoryPool)

    def _stream_ordered(self, api_name: str, stream: Any) -> int | None:
        """None if work may be ordered on `stream` now, else the error."""
        self.current_context()
        s = self.stream(stream)
        if s is not None and s.capture is not None:
            return self.unsupported(api_name, "inside a stream capture (graph memory nodes)")
        return None

    def pool_allocate(self, pool: MemoryPool, dptr: Any, nbytes: int, stream: int = 0) -> int:
        if nbytes == 0 or dptr == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        address = pool.allocate(nbytes, stream)
        if stream and not isinstance(pool, VendorDefaultPool):
            # A free block may be one the NULL stream freed, its kernels
            # maybe still using it: a non-blocking stream waits for them.
            self.device.follow_null_stream(stream)
        if pool.kind == "host":
            self.host_ranges.add(address, nbytes)
        else:
            self.allocations.add(address, nbytes)
        if pool.kind == "managed":
            self.managed.add(address)
        self.pool_of[address] = pool
        dptr[0] = address
        return E.CUDA_SUCCESS

    def _kind_pool(self, kind: str, max_size: int = 0, default: bool = False) -> MemoryPool:
        """A pool of device, managed or host memory. Device memory is the
        backend's device memory (Backend.alloc_device: under the passthrough
        NVIDIA's cuMemAlloc's, as cudaMallocAsync gives natively; while they
        were managed memory, streamOrderedAllocation ran 27% slower than
        natively on an H100)."""
        if kind == "device":
            return MemoryPool(self.device.alloc_device, self.device.free, max_size, default)
        if kind != "host":
            return MemoryPool(self.device.alloc, self.device.free, max_size, default, kind=kind)
        buffers: dict[int, Any] = {}  # ours, where the device reaches our own memory

        def alloc(nbytes: int) -> int:
            address = self.device.host_alloc(nbytes)
            if address is None:
                buffer = self.ffi.new("char[]", nbytes)
                address = self.ptr(buffer)
                buffers[address] = buffer
            return int(address)

        def free(address: int) -> None:
            if buffers.pop(address, None) is None:
                self.device.host_free(address)
        return MemoryPool(alloc, free, max_size, default, kind="host")

    def _pool_key(self, location: Any, alloc_type: int) -> tuple[int, str]:
        """(allocation type, "host" or "device") of a cuMemGetMemPool location."""
        if location == self.ffi.NULL or alloc_type not in (ALLOCATION_TYPE_PINNED,
                                                           ALLOCATION_TYPE_MANAGED):
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, "memory pool location or type")
        where = location.type
        if where == LOCATION_TYPE_DEVICE:
            self.check_device(location.id)
            return alloc_type, "device"
        if where in HOST_LOCATION_TYPES or (where == LOCATION_TYPE_NONE
                                            and alloc_type == ALLOCATION_TYPE_MANAGED):
            return alloc_type, "host"
        raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"memory pool location type {where}")

    def _default_pool_of(self, key: tuple[int, str]) -> int:
        if key == (ALLOCATION_TYPE_PINNED, "device"):
            return self._default_pool()
        if key not in self.kind_pools:
            kind = "managed" if key[0] == ALLOCATION_TYPE_MANAGED else "host"
            self.kind_pools[key] = self._new_pool(self._kind_pool(kind, default=True))
        return self.kind_pools[key]

    def cuMemGetDefaultMemPool(self, ppool: Any, location: Any, alloc_type: int) -> int:
        self.require_init()
        key = self._pool_key(location, alloc_type)
        self.out(ppool, self.handle_ptr(self._default_pool_of(key)))
        return E.CUDA_SUCCESS

    def cuMemGetMemPool(self, ppool: Any, location: Any, alloc_type: int) -> int:
        self.require_init()
        key = self._pool_key(location, alloc_type)
        if key == (ALLOCATION_TYPE_PINNED, "device"):
            return self.cuDeviceGetMemPool(ppool, location.id)
        current = self.kind_current_pools.get(key) or self._default_pool_of(key)
        self.out(ppool, self.handle_ptr(current))
        return E.CUDA_SUCCESS

    def cuMemSetMemPool(self, location: Any, alloc_type: int, pool: Any) -> int:
        self.require_init()
        key = self._pool_key(location, alloc_type)
        if key == (ALLOCATION_TYPE_PINNED, "device"):
            return self.cuDeviceSetMemPool(location.id, pool)
        p = self._pool(pool)
        wanted = "managed" if alloc_type == ALLOCATION_TYPE_MANAGED else "host"
        if p.destroyed or p.kind != wanted:
            return E.CUDA_ERROR_INVALID_VALUE
        self.kind_current_pools[key] = self.ptr(pool)
        return E.CUDA_SUCCESS

    def cuMemAllocAsync(self, dptr: Any, nbytes: int, stream: Any) -> int:
        error = self._stream_ordered("cuMemAllocAsync", stream)
        if error is not None:
            return error
        self.check_device(0)
        return self.pool_allocate(self._pool(self.current_pool or self._default_pool()), dptr,
                                  nbytes, self.vendor_queue(stream))

    def cuMemAllocFromPoolAsync(self, dptr: Any, nbytes: int, pool: Any, stream: Any) -> int:
        error = self._stream_ordered("cuMemAllocFromPoolAsync", stream)
        if error is not None:
            return error
        p = self._pool(pool)
        if p.destroyed:
            return E.CUDA_ERROR_INVALID_HANDLE
        if p.imported:  # another process's pool allocates there only
            return E.CUDA_ERROR_INVALID_VALUE
        return self.pool_allocate(p, dptr, nbytes, self.vendor_queue(stream))

    def cuMemFreeAsync(self, dptr: int, stream: Any) -> int:
        error = self._stream_ordered("cuMemFreeAsync", stream)
        if error is not None:
            return error
        if dptr == 0:  # as NVIDIA's: nothing to free (cuSPARSE frees null buffers)
            return E.CUDA_SUCCESS
        pool = self.pool_of.get(dptr)
        if pool is not None and pool.kind == "host":  # not device memory: cuMemFree's not
            self.host_ranges.remove_owned(dptr)
            del self.pool_of[dptr]
            pool.free(dptr, self.vendor_queue(stream))
            return E.CUDA_SUCCESS
        return self.free_device_memory(dptr, self.vendor_queue(stream))

    def cuDeviceGetDefaultMemPool(self, ppool: Any, dev: int) -> int:
        self.check_device(dev)
        self.out(ppool, self.handle_ptr(self._default_pool()))
        return E.CUDA_SUCCESS

    def cuDeviceGetMemPool(self, ppool: Any, dev: int) -> int:
        self.check_device(dev)
        self.out(ppool, self.handle_ptr(self.current_pool or self._default_pool()))
        return E.CUDA_SUCCESS

    def cuDeviceSetMemPool(self, dev: int, pool: Any) -> int:
        self.check_device(dev)
        if self._pool(pool).destroyed:
            return E.CUDA_ERROR_INVALID_HANDLE
        if self._pool(pool).imported:
            return E.CUDA_ERROR_INVALID_VALUE
        self.current_pool = self.ptr(pool)
        self._current_pool_changed()
        return E.CUDA_SUCCESS

    def shareable_pool(self, handle_types: int, max_size: int) -> MemoryPool:
        """A pool other processes can import (mempool_ipc.py), or the
        CudaError saying why there is none."""
        raise CudaError(E.CUDA_ERROR_NOT_SUPPORTED, "pools with IPC handle types")

    def cuMemPoolCreate(self, ppool: Any, props: Any) -> int:
        self.require_init()
        if props == self.ffi.NULL or ppool == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        p = props[0]
        if p.allocType not in (ALLOCATION_TYPE_PINNED, ALLOCATION_TYPE_MANAGED):
            return E.CUDA_ERROR_INVALID_VALUE
        _, where = self._pool_key(p.location, p.allocType)
        kind = ("managed" if p.allocType == ALLOCATION_TYPE_MANAGED
                else "host" if where == "host" else "device")
        if p.handleTypes != HANDLE_TYPE_NONE:
            if kind != "device":  # NVIDIA's: IPC pools are of device memory
                return E.CUDA_ERROR_INVALID_VALUE
            pool = self.shareable_pool(int(p.handleTypes), int(p.maxSize))
        else:
            pool = self._kind_pool(kind, max_size=int(p.maxSize))
        self.out(ppool, self.handle_ptr(self._new_pool(pool)))
        return E.CUDA_SUCCESS

    def cuMemPoolDestroy(self, pool: Any) -> int:
        p = self._pool(pool)
        if p.default or p.destroyed:
            return E.CUDA_ERROR_INVALID_VALUE
        p.destroy()
        self.pools.remove(p)
        self.fast.sync_work(-1)
        self.handles.remove(self.ptr(pool), MemoryPool)
        if self.current_pool == self.ptr(pool):
            self.current_pool = 0  # the default pool is current again
            self._current_pool_changed()
        for key, current in list(self.kind_current_pools.items()):
            if current == self.ptr(pool):
                del self.kind_current_pools[key]
        return E.CUDA_SUCCESS

    def cuMemPoolSetAttribute(self, pool: Any, attr: int, value: Any) -> int:
        p = self._pool(pool)
        if value == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        ctype = "int *" if MemoryPool.is_int_attribute(attr) else "unsigned long long *"
        p.set_attribute(attr, int(self.ffi.cast(ctype, value)[0]))
        return E.CUDA_SUCCESS

    def cuMemPoolGetAttribute(self, pool: Any, attr: int, value: Any) -> int:
        p = self._pool(pool)
        if value == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        ctype = "int *" if MemoryPool.is_int_attribute(attr) else "unsigned long long *"
        self.ffi.cast(ctype, value)[0] = p.get_attribute(attr)
        return E.CUDA_SUCCESS

    def cuMemPoolTrimTo(self, pool: Any, keep: int) -> int:
        self._pool(pool).release(keep)
        return E.CUDA_SUCCESS

    def cuMemPoolSetAccess(self, pool: Any, descs: Any, count: int) -> int:
        self._pool(pool)
        if count and descs == self.ffi.NULL:
            return E.CUDA_ERROR_INVALID_VALUE
        for i in range(count):  # one device, which always has read-write access
            d = descs[i]
            if d.location.type != LOCATION_TYPE_DEVICE:
                return E.CUDA_ERROR_INVALID_VALUE
            self.check_device(d.location.id)
            if d.flags != 3:  # CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                return self.unsupported("cuMemPoolSetAccess",
                                        f"access flags {d.flags} for the pool's own device")
        return E.CUDA_SUCCESS

    def cuMemPoolGetAccess(self, flags: Any, pool: Any, location: Any) -> int:
        self._pool(pool)
        if location == self.ffi.NULL or location.type != LOCATION_TYPE_DEVICE:
            return E.CUDA_ERROR_INVALID_VALUE
        self.check_device(location.id)
        self.out(flags, 3)  # CU_MEM_ACCESS_FLAGS_PROT_READWRITE
        return E.CUDA_SUCCESS
