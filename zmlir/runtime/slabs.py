"""Small device allocations carved out of large ones, as NVIDIA's driver does.

A runtime's own allocator may keep far more than it hands out for small
requests: Intel's USM on the CPU holds about 1.8 KiB of host memory per
64-byte allocation even after it is freed (100,000 of them left 237 MiB
behind). Requests up to SMALL_LIMIT bytes are therefore served from slabs of
SLAB_BYTES, one power-of-two size class per slab, and a slab goes back to the
runtime as soon as its last slot is freed (one empty slab per class is kept,
so that a loop of alloc and free does not reach the runtime every time).

Slots are at least 512-byte aligned (the granule cuMemAlloc hands out), and a
kernel that overruns a slot writes into another device allocation, never
into the host's heap, as on a GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

SMALL_LIMIT = 64 << 10
SLAB_BYTES = 2 << 20
MIN_SLOT = 512


@dataclass
class _Slab:
    base: int
    slot: int
    free: list[int]
    live: bytearray  # one byte per slot: handed out and not freed
    used: int = 0


def size_class(nbytes: int) -> int:
    """The slot size serving a request of `nbytes` (a power of two >= MIN_SLOT)."""
    return max(MIN_SLOT, 1 << (nbytes - 1).bit_length())


class SlabAllocator:
    """`carve(nbytes, alignment)` gets a slab from the runtime, `release(base)`
    returns one. Slabs are aligned to their size, so a slot finds its slab by
    masking its address: no per-allocation bookkeeping beyond a byte."""

    def __init__(self, carve: Callable[[int, int], int],
                 release: Callable[[int], None]) -> None:
        self._carve = carve
        self._release = release
        self._slabs: dict[int, _Slab] = {}  # base -> slab
        self._open: dict[int, list[_Slab]] = {}  # size class -> slabs with a free slot
        self._spare: dict[int, _Slab] = {}  # size class -> its one kept empty slab

    @staticmethod
    def serves(nbytes: int) -> bool:
        return 0 < nbytes <= SMALL_LIMIT

    def alloc(self, nbytes: int) -> int:
        slot = size_class(nbytes)
        open_slabs = self._open.setdefault(slot, [])
        if not open_slabs:
            slab = self._spare.pop(slot, None) or self._new_slab(slot)
            open_slabs.append(slab)
        slab = open_slabs[-1]
        address = slab.free.pop()
        slab.live[(address - slab.base) // slot] = 1
        slab.used += 1
        if not slab.free:
            open_slabs.pop()
        return address

    def _live_slab(self, address: int) -> _Slab | None:
        slab = self._slabs.get(address & ~(SLAB_BYTES - 1))
        if slab is None:
            return None
        index, offset = divmod(address - slab.base, slab.slot)
        return slab if offset == 0 and slab.live[index] else None

    def is_slab(self, address: int) -> bool:
        return address in self._slabs

    def slot_holding(self, address: int) -> tuple[int, int] | None:
        """(start, size) of the live slot holding `address`, if any."""
        slab = self._slabs.get(address & ~(SLAB_BYTES - 1))
        if slab is None:
            return None
        index = (address - slab.base) // slab.slot
        if not slab.live[index]:
            return None
        return slab.base + index * slab.slot, slab.slot

    def owns(self, address: int) -> bool:
        """Whether `address` is a slot handed out and not yet freed."""
        return self._live_slab(address) is not None

    def free(self, address: int) -> None:
        slab = self._live_slab(address)
        if slab is None:
            raise ValueError(f"free of {address:#x}, which is not a live slot")
        slab.live[(address - slab.base) // slab.slot] = 0
        if not slab.free:
            self._open[slab.slot].append(slab)
        slab.free.append(address)
        slab.used -= 1
        if slab.used == 0:
            self._open[slab.slot].remove(slab)
            spare = self._spare.get(slab.slot)
            self._spare[slab.slot] = slab
            if spare is not None:
                self._drop(spare)

    def release_all(self) -> None:
        """Returns every slab, live slots or not (the device is closing)."""
        for slab in list(self._slabs.values()):
            self._drop(slab)
        self._open.clear()
        self._spare.clear()

    def held_bytes(self) -> int:
        """Bytes of slabs taken from the runtime and not handed out."""
        return sum(len(s.free) * s.slot for s in self._slabs.values())

    def _new_slab(self, slot: int) -> _Slab:
        base = self._carve(SLAB_BYTES, SLAB_BYTES)
        # Highest address last: pop() hands out the lowest first.
        free = list(range(base + SLAB_BYTES - slot, base - 1, -slot))
        slab = _Slab(base, slot, free, bytearray(SLAB_BYTES // slot))
        self._slabs[base] = slab
        return slab

    def _drop(self, slab: _Slab) -> None:
        del self._slabs[slab.base]
        self._release(slab.base)
