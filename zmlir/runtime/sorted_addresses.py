"""A sorted set of addresses for the lookups a driver makes per call: which
allocation holds this pointer. Insertions and removals cost O(√n), not the
O(n) of one sorted list (with 100,000 live allocations, a cuMemFree spent
more time in list.remove than NVIDIA's driver takes for the whole call):
sorted chunks of at most 2 * CHUNK addresses, and each chunk's first, as
sortedcontainers lays them out."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator

CHUNK = 512


class SortedAddresses:
    def __init__(self) -> None:
        self._chunks: list[list[int]] = []
        self._firsts: list[int] = []
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[int]:
        for chunk in self._chunks:
            yield from chunk

    def __contains__(self, address: object) -> bool:
        return isinstance(address, int) and self.floor(address) == address

    def add(self, address: int) -> None:
        if not self._chunks:
            self._chunks, self._firsts, self._count = [[address]], [address], 1
            return
        i = max(bisect_right(self._firsts, address) - 1, 0)
        chunk = self._chunks[i]
        j = bisect_left(chunk, address)
        if j < len(chunk) and chunk[j] == address:
            return
        chunk.insert(j, address)
        self._firsts[i] = chunk[0]
        self._count += 1
        if len(chunk) > 2 * CHUNK:
            self._chunks[i:i + 1] = [chunk[:CHUNK], chunk[CHUNK:]]
            self._firsts[i:i + 1] = [chunk[0], chunk[CHUNK]]

    def discard(self, address: int) -> bool:
        """Removes `address`; False if it was not there."""
        i = bisect_right(self._firsts, address) - 1
        if i < 0:
            return False
        chunk = self._chunks[i]
        j = bisect_left(chunk, address)
        if j == len(chunk) or chunk[j] != address:
            return False
        del chunk[j]
        self._count -= 1
        if chunk:
            self._firsts[i] = chunk[0]
        else:
            del self._chunks[i], self._firsts[i]
        return True

    def floor(self, address: int) -> int | None:
        """The largest address in the set that is <= `address`, or None."""
        i = bisect_right(self._firsts, address) - 1
        if i < 0:
            return None
        chunk = self._chunks[i]
        return chunk[bisect_right(chunk, address) - 1]
