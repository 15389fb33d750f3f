"""SortedAddresses: the driver's sorted set of allocation bases, checked
against a plain sorted list through random additions, removals and floor
lookups, across chunk splits and emptied chunks."""

from __future__ import annotations

import bisect
import random

from zmlir.runtime.sorted_addresses import CHUNK, SortedAddresses


def test_matches_a_sorted_list() -> None:
    rng = random.Random(7)
    got, want = SortedAddresses(), []
    for step in range(20 * CHUNK):
        address = rng.randrange(0, 1 << 20) * 64
        if rng.random() < (0.7 if step < 10 * CHUNK else 0.3):
            got.add(address)
            if address not in want:
                bisect.insort(want, address)
        else:
            victim = rng.choice(want) if want and rng.random() < 0.8 else address
            assert got.discard(victim) == (victim in want)
            if victim in want:
                want.remove(victim)
        probe = rng.randrange(0, 1 << 26)
        index = bisect.bisect_right(want, probe) - 1
        assert got.floor(probe) == (want[index] if index >= 0 else None)
    assert list(got) == want and len(got) == len(want)
    assert all(a in got for a in want[:100]) and (want[0] + 1) not in got


def test_adding_twice_and_removing_what_is_not_there() -> None:
    s = SortedAddresses()
    assert s.floor(5) is None and not s.discard(5)
    s.add(10)
    s.add(10)
    assert len(s) == 1 and s.floor(9) is None and s.floor(10) == 10 and s.floor(11) == 10
    assert s.discard(10) and len(s) == 0 and s.floor(10) is None
