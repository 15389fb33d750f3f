"""The small-allocation sub-allocator (runtime/slabs.py) and the OpenCL
device's use of it: slots never overlap, keep the 512-byte granule, and a
slab goes back to the runtime when its last slot is freed."""

from __future__ import annotations

import itertools
import random

import pytest

from zmlir.runtime.slabs import MIN_SLOT, SLAB_BYTES, SMALL_LIMIT, SlabAllocator, size_class


class FakeRuntime:
    def __init__(self) -> None:
        self.live: set[int] = set()
        self.next = 1 << 32

    def carve(self, nbytes: int, alignment: int) -> int:
        assert alignment == nbytes == SLAB_BYTES
        base, self.next = self.next, self.next + 2 * nbytes
        self.live.add(base)
        return base

    def release(self, base: int) -> None:
        self.live.remove(base)


def test_size_classes() -> None:
    assert [size_class(n) for n in (1, 512, 513, 4096, 4097, SMALL_LIMIT)] == [
        512, 512, 1024, 4096, 8192, SMALL_LIMIT]
    assert SlabAllocator.serves(SMALL_LIMIT) and not SlabAllocator.serves(SMALL_LIMIT + 1)


def test_slots_are_disjoint_aligned_and_slabs_return() -> None:
    runtime = FakeRuntime()
    slabs = SlabAllocator(runtime.carve, runtime.release)
    rng = random.Random(7)
    live: dict[int, int] = {}
    for _ in range(20000):
        if live and rng.random() < 0.45:
            address = rng.choice(list(live))
            slabs.free(address)
            del live[address]
        else:
            nbytes = rng.choice((8, 512, 700, 3000, 40000))
            address = slabs.alloc(nbytes)
            assert address % MIN_SLOT == 0 and address not in live
            live[address] = size_class(nbytes)
    spans = sorted((a, a + n) for a, n in live.items())
    assert all(end <= start for (_, end), (start, _) in itertools.pairwise(spans))
    for address in list(live):
        slabs.free(address)
    with pytest.raises(ValueError, match="not a live slot"):
        slabs.free(address)
    # One empty slab per size class stays; everything else went back.
    assert len(runtime.live) <= 4
    assert slabs.held_bytes() <= 4 * SLAB_BYTES
    slabs.release_all()
    assert runtime.live == set()


def test_small_allocations_share_slabs_on_the_device(device) -> None:
    addresses = [device.alloc(512, 256) for _ in range(64)]
    assert len(set(a & ~(SLAB_BYTES - 1) for a in addresses)) <= 2
    device.copy_to_device(addresses[5], bytes(range(256)) * 2)
    assert bytes(device.copy_from_device(addresses[5], 512)) == bytes(range(256)) * 2
    for address in addresses:
        device.free(address)
    with pytest.raises(ValueError):
        device.free(addresses[0])  # twice
    big = device.alloc(SMALL_LIMIT + 1, 256)
    assert not device._slabs.owns(big)
    device.free(big)
