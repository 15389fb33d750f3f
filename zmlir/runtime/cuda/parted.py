"""Modules compiled a part at a time (zmlir/frontend/partition.py).

A big module (CUB's and Thrust's, 20 to 30 MB of PTX of which a program
launches a few kernels), or one of many kernels (a template's instances),
is indexed when it loads and each part, a kernel with the functions and
variables it reaches, is compiled when one of its kernels or variables is
first asked for, through the JIT cache: a second
run finds it there. A module variable that keeps state is compiled in one
part only, with every kernel that reaches it, so it is one object for all
of them (cuModuleGetGlobal's too): code generation is unchanged, and so
is what each target does with a module's variables. The CUDA passthrough
parts its modules too: NVIDIA's JIT is fast, ours is what takes the time,
and each part's NVPTX loads as a module of its own.

A module compiled whole that fails on something we cannot lower (an
`unsupported` or `internal error` diagnostic inside a function) is parted
the same way: the kernels that reach that function fail, at
cuModuleGetFunction or at their first use (CUDA_ERROR_INVALID_PTX, the
diagnostic logged), and the others load and run.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from typing import Any

from zmlir.runtime.cuda.errors import CudaError, CUresult

E = CUresult
# From this size, or this many kernels, a module is parted when it loads.
# Below both, compiled whole: the load checks every function, as NVIDIA's
# does, and a program launching most kernels pays one compile (5 kernels,
# 5.6 KB of PTX: 0.94 s of CPU to compile and build whole, 1.14 s in parts;
# the first part alone 0.65 s). A module of many kernels is mostly a
# template's instances, of which a program launches a few: cuda-samples'
# reduction (213 kernels, 592 KB; a cold run's CPU time) took 54.5 s
# compiled whole, 2.7 s parted; samples that launch all of their 8 to 12
# kernels took 3 to 14% more parted (transpose 1.55 -> 1.77 s, dct8x8 2.02
# -> 2.18, alignedTypes 18.2 -> 18.6; lineOfSight 3.05 -> 2.26).
PARTED_MIN_BYTES = 1 << 20
PARTED_MIN_KERNELS = 8
_ENTRY = re.compile(r"\.entry[ \t\r\n]")


def parted_when_loaded(ptx: str) -> bool:
    """Whether a module is compiled a part at a time from its load on."""
    return len(ptx) >= PARTED_MIN_BYTES or len(_ENTRY.findall(ptx)) >= PARTED_MIN_KERNELS


# The diagnostics that say a construct cannot be lowered (the PTX is valid):
# they fail the kernels that reach it, not the module.
_KERNEL_LEVEL = ("unsupported", "internal error")


def kernel_level(err: Any) -> bool:
    """Whether CompileError `err` fails only the kernels reaching where it is."""
    return err.loc is not None and err.message.startswith(_KERNEL_LEVEL)


class PartedModule:
    """The compiled state of one module's PTX, shared by its loads
    (ModuleAPI.compiled_by_hash): each part's CompiledModule, once
    compiled, and why each kernel that cannot be compiled cannot."""

    def __init__(self, ptx_name: str, partition: Any, compile_part: Callable[[str], Any],
                 log: Callable[[str], None]) -> None:
        self.ptx_name = ptx_name
        self.partition = partition
        self.compile_part = compile_part  # part text -> CompiledModule (raises CompileError)
        self.log = log
        self.compiled: dict[frozenset[str], Any] = {}
        self.failed: dict[str, CudaError] = {}
        # Held while a part compiles and loads: threads asking for one part
        # at once get one compile and, per module, one load.
        self.loading = threading.RLock()

    @property
    def kernels(self) -> tuple[str, ...]:
        return self.partition.kernels  # type: ignore[no-any-return]

    def fail(self, err: Any, among: frozenset[str] | tuple[str, ...]) -> set[str]:
        """Fails the kernels of `among` that reach the function where
        CompileError `err` is (all of them if it is in none); returns them."""
        where = self.partition.function_at(err.loc.line) if err.loc is not None else None
        failing = self.partition.kernels_reaching(where, among) if where else set()
        if not failing:
            failing = {k for k in among if k in self.partition.kernels}
        for kernel in sorted(failing):
            self.failed[kernel] = CudaError(E.CUDA_ERROR_INVALID_PTX, f"kernel {kernel}: {err}")
            self.log(f"cannot compile kernel {kernel} of {self.ptx_name}: {err}")
        return failing

    def part(self, name: str) -> tuple[frozenset[str], Any]:
        """The roots and the compiled part holding kernel or stateful
        variable `name`, compiled now if it was not: a kernel that cannot be
        compiled raises its CudaError (as does a variable whose part cannot)."""
        from zmlir.diagnostics import CompileError

        if name in self.failed:
            raise self.failed[name]
        roots = self.partition.part_roots(name)
        if roots is None:
            raise CudaError(E.CUDA_ERROR_NOT_FOUND, f"no kernel or variable named {name!r}")
        while True:
            roots = frozenset(r for r in roots if r not in self.failed)
            compiled = self.compiled.get(roots)
            if compiled is not None:
                return roots, compiled
            start = time.perf_counter()
            try:
                compiled = self.compile_part(self.partition.part_text(roots))
            except CompileError as err:
                if not self.fail(err, roots):  # variables only: nothing left to leave out
                    self.log(f"cannot compile {name} of {self.ptx_name}: {err}")
                    raise CudaError(E.CUDA_ERROR_INVALID_PTX, str(err)) from None
                if name in self.failed:
                    raise self.failed[name] from None
                continue
            if os.environ.get("ZMLIR_LOG"):
                from zmlir.targets.base import KERNEL_METADATA_STAGE

                how = "compiled" if KERNEL_METADATA_STAGE in compiled.stages \
                    else "from the JIT cache"
                self.log(f"part of {self.ptx_name} with {', '.join(sorted(roots))}: {how} "
                         f"({time.perf_counter() - start:.2f} s)")
            self.compiled[roots] = compiled
            return roots, compiled
