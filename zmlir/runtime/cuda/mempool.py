"""Memory pools: stream-ordered allocation (cuMemAllocAsync, cuMemFreeAsync,
cuMemAllocFromPoolAsync) and the cuMemPool* API.

A pool hands out backend allocations and keeps freed ones for reuse, as
CUDA's pools do. Our work is ordered on one queue and runs as it is issued,
so a block freed "in stream order" is free at once: any later allocation
of a pool may reuse it (the reuse attributes are kept and reported; with
one queue every dependency they ask about is already satisfied). Memory
above the release threshold goes back to the backend at the next
synchronization (stream, event or context) or at cuMemPoolTrimTo, which
releases free blocks until the pool holds no more than asked.

Sizes are kept in granules of GRANULE bytes; a freed block is reused for a
request that rounds to the same size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from zmlir.runtime.cuda.errors import CudaError, CUresult

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
LOCATION_TYPE_DEVICE = 1
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
    reuse: dict[int, int] = field(default_factory=lambda: dict.fromkeys(INT_ATTRIBUTES, 1))
    release_threshold: int = 0
    reserved: int = 0
    reserved_high: int = 0
    used: int = 0
    used_high: int = 0
    destroyed: bool = False
    free_blocks: dict[int, list[int]] = field(default_factory=dict)  # rounded size -> bases
    live: dict[int, int] = field(default_factory=dict)  # base -> rounded size

    def allocate(self, nbytes: int) -> int:
        size = granules(nbytes)
        blocks = self.free_blocks.get(size)
        if blocks:
            base = blocks.pop()
        else:
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

    def owns(self, base: int) -> bool:
        return base in self.live

    def free(self, base: int) -> None:
        size = self.live.pop(base)
        self.used -= size
        if self.destroyed:
            self.free_backend(base)
            self.reserved -= size
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

    def settle(self) -> None:
        """At a synchronization: hold no more than the release threshold."""
        if self.reserved > self.release_threshold:
            self.release(self.release_threshold)

    def destroy(self) -> None:
        """Frees what is free now; blocks still in use go back when freed."""
        self.destroyed = True
        self.release(0)

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
