"""Graph-owned memory (memory alloc and free nodes). An allocation node's
address is fixed when the node is made and stays valid across launches, as
NVIDIA's; a node ordered after the free of an earlier allocation of the same
graph takes that allocation's address again (NVIDIA's virtual address
reuse). Here an address range is device memory from the start (a `Slot`);
an allocation is live from its alloc node until a free node, cuMemFree or
cuMemFreeAsync frees it.

The CU_GRAPH_MEM_ATTR_* attributes follow NVIDIA's physical memory model
(cuda-samples' graphMemoryFootprint narrates it): an alloc node maps
physical memory of the graph allocator ("reserved") behind its address;
what is mapped is "used", and stays mapped after the free, until another
allocation takes it over or cuDeviceGraphMemTrim returns what no live
allocation holds. Graphs never run at once here, so an allocation always
finds the memory a finished one freed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from zmlir.runtime.cuda.errors import CudaError, CUresult

E = CUresult
# Graph allocations are handed out in 2 MiB pages, as NVIDIA's graph allocator does.
_PAGE = 2 << 20
# CUgraphMem_attribute
USED_MEM_CURRENT, USED_MEM_HIGH, RESERVED_MEM_CURRENT, RESERVED_MEM_HIGH = range(4)


def _pages(size: int) -> int:
    return -(-size // _PAGE) * _PAGE


@dataclass(eq=False)
class Slot:
    """An address range of graph memory, shared by the allocation nodes of
    one graph whose lifetimes do not overlap."""

    address: int
    size: int  # bytes reserved (whole pages)
    references: int = 0  # the alloc nodes (of graphs and instantiations) that use it
    live: int = 0  # bytes allocated now (0: free)
    mapped: int = 0  # physical bytes behind it (whole pages), kept after a free
    owner: Any = None  # the graph whose allocation nodes use it
    allocs: int = 0  # its allocation nodes in that graph
    frees: int = 0  # and free nodes
    freed_elsewhere: bool = False  # another graph has a free node for it


class GraphMemory:
    def __init__(self, alloc: Callable[[int], int], free: Callable[[int], None]) -> None:
        self._alloc, self._free = alloc, free
        self.slots: dict[int, Slot] = {}  # by address
        self.used_high = self.reserved = self.reserved_high = 0

    def reserve(self, size: int) -> Slot:
        pages = _pages(max(size, 1))
        try:
            address = self._alloc(pages)
        except Exception as err:
            raise CudaError(E.CUDA_ERROR_OUT_OF_MEMORY, f"graph allocation of {size} bytes: "
                                                        f"{err}") from err
        slot = Slot(address, pages)
        self.slots[address] = slot
        return slot

    def retain(self, slot: Slot) -> None:
        slot.references += 1

    def release(self, slot: Slot) -> None:
        """A node using `slot` is gone; its range goes once nothing uses it
        and it holds no live allocation (one freed later goes then)."""
        slot.references -= 1
        self._forget_if_unused(slot)

    def _forget_if_unused(self, slot: Slot) -> None:
        if slot.references <= 0 and not slot.live and self.slots.get(slot.address) is slot:
            del self.slots[slot.address]
            self._free(slot.address)
            slot.mapped = 0  # its physical memory goes back to the allocator

    @property
    def used(self) -> int:
        return sum(slot.mapped for slot in self.slots.values())

    def allocate(self, slot: Slot, size: int) -> None:
        """An alloc node ran: physical memory behind the slot, taken from
        freed allocations' or else new to the allocator."""
        if slot.live:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE,
                            f"graph allocation 0x{slot.address:x} is still allocated")
        slot.live = size
        need = _pages(size) - slot.mapped
        for other in self.slots.values():  # memory of freed allocations moves over
            if need <= 0:
                break
            if other is not slot and not other.live and other.mapped:
                taken = min(need, other.mapped)
                other.mapped -= taken
                slot.mapped += taken
                need -= taken
        if need > 0:
            slot.mapped += need
            self.reserved = max(self.reserved, self.used)
        self.used_high = max(self.used_high, self.used)
        self.reserved_high = max(self.reserved_high, self.reserved)

    def free(self, address: int) -> bool:
        """A free node ran, or cuMemFree(Async) was given `address`: False
        if that is no live graph allocation. Its memory stays mapped."""
        slot = self.slots.get(address)
        if slot is None or not slot.live:
            return False
        slot.live = 0
        self._forget_if_unused(slot)
        return True

    def trim(self) -> None:
        """cuDeviceGraphMemTrim: nothing runs after the call returns here,
        so what no live allocation holds goes back."""
        for slot in self.slots.values():
            if not slot.live:
                slot.mapped = 0
        self.reserved = self.used

    def attribute(self, attr: int) -> int:
        values = {USED_MEM_CURRENT: self.used, USED_MEM_HIGH: self.used_high,
                  RESERVED_MEM_CURRENT: self.reserved, RESERVED_MEM_HIGH: self.reserved_high}
        if attr not in values:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"graph memory attribute {attr}")
        return values[attr]

    def reset_high(self, attr: int, value: int) -> None:
        """The high watermarks can only be reset, to zero (then: the current value)."""
        if attr not in (USED_MEM_HIGH, RESERVED_MEM_HIGH) or value != 0:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"graph memory attribute {attr} = "
                                                        f"{value}")
        if attr == USED_MEM_HIGH:
            self.used_high = self.used
        else:
            self.reserved_high = self.reserved
