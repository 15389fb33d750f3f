"""Parsing and importing with Python's cyclic garbage collector paused.

Both build millions of small objects that live until the phase ends (AST
nodes, SSA values, ops). A collection walks every object of the generations
it collects, and full collections come as the heap grows, so on a big module
the collector took about as long as the work (2 MB module, CPU seconds:
parse 0.54 -> 0.44, import 0.94 -> 0.48).

Pausing alone only defers that: everything made during the pause is in the
youngest generation when the collector is back, and the first allocation
after would walk it all. So the outermost pause ends by moving every object
into the oldest generation unexamined (`gc.freeze()` then `gc.unfreeze()`);
what dies by reference counting is freed as usual. That move also resets
Python's own count of allocations, so Python would never start a collection
again: the cyclic garbage (error paths, lark's internals) of a long-running
process would pile up. So the pause does what Python's rule for full
collections does: one when the objects made in pauses (counted in O(1):
the youngest generation's count before the move) reach a quarter of those
left after the last.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_lock = threading.Lock()
_depth = 0  # pauses in progress, in any thread
_was_enabled = False  # the collector's state when the first of them began
_grown = 0  # tracked objects made (net) in pauses since our last full collection
_heap_after_full = 0  # objects tracked just after that collection
# Less growth than this never starts a full collection.
_MIN_GROWTH = 100_000


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off inside (nesting and threads are fine), as it was after."""
    global _depth, _was_enabled, _grown
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        collect = False
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                # The youngest generation's count: objects made less those
                # freed since it was last reset, here the pause's (O(1)).
                _grown += gc.get_count()[0]
                gc.freeze()
                gc.unfreeze()
                gc.enable()
                collect = _grown > max(_MIN_GROWTH, _heap_after_full // 4)
        if collect:  # not holding the lock: finalizers may run anything
            gc.collect()
            _collected()


def _collected() -> None:
    global _grown, _heap_after_full
    heap = len(gc.get_objects())  # O(heap), as the collection just was
    with _lock:
        _grown = 0
        _heap_after_full = heap


def without_collector(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn` runs with the collector paused."""

    @wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with collector_paused():
            return fn(*args, **kwargs)

    return run
