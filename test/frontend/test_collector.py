"""The collector pause around parsing and importing (zmlir/frontend/collector.py)."""

from __future__ import annotations

import gc

from zmlir.frontend.collector import collector_paused


class _Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


def test_garbage_made_in_pauses_is_still_collected() -> None:
    """Ending a pause resets Python's allocation counts, so without the
    pause's own full collections cyclic garbage would never be freed."""
    assert gc.isenabled()
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(100):
        with collector_paused():
            for _ in range(10_000):
                _Node()
    # 1,000,000 cycles were made; at most a few pauses' worth are left.
    assert len(gc.get_objects()) - before < 300_000
    assert gc.isenabled()


def test_pause_nests_and_keeps_a_disabled_collector_disabled() -> None:
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
