"""The device address ranges the driver knows: its allocations and the
module variables it handed out. Lookups by address are a floor search of the
sorted bases (sorted_addresses.py): copies ask for every pointer they are
given, and a long-running program holds many allocations. Allocations the C
fast path made (fastpath.c: cuMemAlloc_v2 and cuMemFree_v2 under the
passthrough) come from its journal, taken before every answer (`journal`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from zmlir.runtime.sorted_addresses import SortedAddresses


@dataclass
class AllocationMap:
    _sizes: dict[int, int] = field(default_factory=dict)
    _bases: SortedAddresses = field(default_factory=SortedAddresses)
    _owned: set[int] = field(default_factory=set)  # ours to free (not module variables)
    _peak: int = 0  # the most ranges held since the tables were last compacted
    # Each range's CU_POINTER_ATTRIBUTE_BUFFER_ID: unique in the process, a
    # range made again at the same base gets a new one.
    _ids: dict[int, int] = field(default_factory=dict)
    _next_id: int = 1
    # The C fast path's allocations (size) and frees (0) since the last call.
    journal: Callable[[], list[tuple[int, int]]] | None = None
    _journal_lock: threading.Lock = field(default_factory=threading.Lock)

    def _take_journal(self) -> None:
        if self.journal is None:
            return
        with self._journal_lock:  # taken and applied in order
            for base, size in self.journal():
                if size:
                    self._add(base, size, True)
                else:
                    self._remove_owned(base)

    def add(self, base: int, size: int, owned: bool = True) -> None:
        self._take_journal()
        self._add(base, size, owned)

    def _add(self, base: int, size: int, owned: bool) -> None:
        if base not in self._sizes:
            self._bases.add(base)
            self._ids[base] = self._next_id
            self._next_id += 1
        self._sizes[base] = size
        self._peak = max(self._peak, len(self._sizes))
        if owned:
            self._owned.add(base)

    def owns(self, base: int) -> bool:
        """Whether `base` starts an allocation of ours (cuMemFree frees it)."""
        self._take_journal()
        return base in self._owned

    def remove_owned(self, base: int) -> bool:
        """Forgets an allocation of ours; False if `base` does not start one."""
        self._take_journal()
        return self._remove_owned(base)

    def _remove_owned(self, base: int) -> bool:
        if base not in self._owned:
            return False
        self._owned.discard(base)
        del self._sizes[base]
        del self._ids[base]
        self._bases.discard(base)
        self._compact()
        return True

    def _compact(self) -> None:
        # Python's dicts and sets never shrink as entries go: after 100,000
        # allocations were freed, their tables kept megabytes. Copies are
        # sized to what is left; amortized O(1) a removal.
        if self._peak > 4096 and len(self._sizes) * 8 < self._peak:
            self._sizes = dict(self._sizes)
            self._ids = dict(self._ids)
            self._owned = set(self._owned)
            self._peak = len(self._sizes)

    def forget(self, base: int) -> None:
        """Forgets a range that is not ours to free (a module variable),
        when its module is unloaded."""
        self._take_journal()
        if base in self._sizes and base not in self._owned:
            del self._sizes[base]
            del self._ids[base]
            self._bases.discard(base)

    def size_of(self, base: int) -> int:
        self._take_journal()
        return self._sizes[base]

    def buffer_id(self, base: int) -> int:
        self._take_journal()
        return self._ids[base]

    def containing(self, address: int, nbytes: int = 1) -> tuple[int, int] | None:
        """(base, size) of the range holding [address, address + nbytes)."""
        self._take_journal()
        base = self._bases.floor(address)
        if base is None:
            return None
        size = self._sizes[base]
        if address + max(nbytes, 1) <= base + size:
            return base, size
        return None

    def owned_bytes(self) -> int:
        self._take_journal()
        return sum(self._sizes[base] for base in self._owned)
