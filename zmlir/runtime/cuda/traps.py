"""Trap words: how a kernel on a target without a hardware trap fails.

A SPIR-V module has a word its threads set to say why they stopped
(Target.trap_word): `trap` (1), a failed assert (2, its message is in the
printf buffer), sub-groups narrower than a warp (3: the OpenCL runtime ran the
kernel unvectorized), recursion deeper than the stack holds (4) or a block
whose spinning threads wait for each other forever (5). Like
NVIDIA's driver, the launch itself succeeds and the process then holds a
sticky error (state.make_sticky).

Launches return while their kernels run (fastpath.c: launches in flight), so
the word is not read after each launch: a module's word is watched from its
launch until the launch has ended, and read (and cleared) wherever the driver
looks for kernels' errors, which every synchronisation point does after
waiting for the device. A watched word is read atomically, while kernels may
still set it; the launches known to have ended before the read are done
with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zmlir.runtime.cuda.errors import CUresult

if TYPE_CHECKING:
    from zmlir.runtime.cuda.objects import Function, Module

E = CUresult

# The trap word's values: the sticky error and what the log says the kernel did.
_ERRORS = {
    2: (E.CUDA_ERROR_ASSERT, "failed an assert"),
    3: (E.CUDA_ERROR_LAUNCH_FAILED, "ran in sub-groups narrower than a warp (the OpenCL "
        "runtime did not vectorize it), where its warp operations fail"),
    4: (E.CUDA_ERROR_ILLEGAL_ADDRESS, "recursed deeper than its stack holds"),
    5: (E.CUDA_ERROR_LAUNCH_FAILED, "deadlocked: every thread of a block still spinning "
        "polled shared memory no thread had written since, turn after turn"),
}
_TRAP = (E.CUDA_ERROR_LAUNCH_FAILED, "executed trap")


def trap_error(value: int) -> tuple[CUresult, str]:
    """The sticky error a trap word's value means, and what the kernel did."""
    return _ERRORS.get(value, _TRAP)


@dataclass
class _Watched:
    module: Module
    kernel: str  # the module's last kernel launched: the one the log names
    launch: int  # that launch's number (fastpath.c)


class TrapWatch:
    def __init__(self) -> None:
        self._watched: dict[int, _Watched] = {}

    def launched(self, fn: Function, number: int) -> None:
        """After launch `number` of `fn` (FastPath.launch_lock)."""
        if fn.module.trap_word:
            self._watched[id(fn.module)] = _Watched(fn.module, fn.name, number)

    def watching(self) -> bool:
        return bool(self._watched)

    def take(self, completed: int,
             take_word: Callable[[int], int]) -> Iterator[tuple[str, int]]:
        """(kernel, trap value) of each watched word found set, cleared by
        `take_word`; `completed`, read before: how many launches had ended."""
        for key, watched in list(self._watched.items()):
            value = take_word(watched.module.trap_word)
            if watched.launch <= completed and self._watched.get(key) is watched:
                self._watched.pop(key, None)
            if value:
                yield watched.kernel, value

    def forget(self, module: Module) -> None:
        """At the module's unload (after its last look): its word is gone."""
        self._watched.pop(id(module), None)
