"""Software stacks: the local memory of recursive device functions on SPIR-V.

Intel's OpenCL CPU runtime gives a function's private memory one instance,
which the frames of a recursive function would share; so a module whose
functions on a call cycle have local memory keeps it on stacks the driver
gives it (zmlir/lowering/LocalStack.h): the variable `__zmlir_local_stack`,
set here as the module loads, holds four u64: the slots' flags (one u32 each,
0 while free), the slots' address, a slot's bytes and the number of slots. A
thread takes a free slot for the outermost call into a recursion and gives it
back when that call returns; a frame past its slot's end fails the launch
(trap word 4: CUDA_ERROR_ILLEGAL_ADDRESS, NVIDIA's answer to a stack
overflow on an H200).

As on NVIDIA, a slot holds CU_LIMIT_STACK_SIZE bytes (1024 unless set,
rounded up to 16 as an H200 rounds it), and there is one per thread that can
be resident: 1024 per compute unit (a CPU runtime runs one work-group per
compute unit at a time), halved while the pool would take more than an
eighth of the device's memory, down to 16 per compute unit (on Intel's CPU
runtime a work-item runs a recursion to its end before the next one starts,
so a compute unit needs one slot unless it waits at a barrier inside). The
pool is allocated when the first module that
uses it loads into the context (a failed allocation fails that load with
CUDA_ERROR_SHARED_OBJECT_INIT_FAILED) and replaced, after the device's work
has ended, when the limit changes; freed with the context.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from zmlir.runtime.cuda.errors import CudaError, CUresult

if TYPE_CHECKING:
    from zmlir.runtime.cuda.objects import Module

E = CUresult
STATE_NAME = "__zmlir_local_stack"  # kLocalStackStateName
DEFAULT_SIZE = 1024  # NVIDIA's default CU_LIMIT_STACK_SIZE
THREADS_PER_UNIT = 1024  # the largest block, one block per compute unit at a time
MIN_PER_UNIT = 16  # slots per compute unit where the memory allows no more
_PAGE = 4096


def stack_size(nbytes: int) -> int:
    """CU_LIMIT_STACK_SIZE as an H200 keeps it: rounded up to 16 bytes."""
    return -(-nbytes // 16) * 16


class StackPool:
    """The software stacks of one context."""

    def __init__(self, device: Any) -> None:
        self.device = device  # backends.Backend
        self.size = DEFAULT_SIZE  # bytes per slot: CU_LIMIT_STACK_SIZE
        self.address = 0  # the flags, then the slots; 0 until a module needs them
        self.slots = 0
        self.modules: list[Module] = []  # attached, each with its state's address

    def attach(self, module: Module, state: int) -> None:
        if not self.address:
            try:
                self._allocate()
            except Exception as err:  # the backend's: no memory for it
                raise CudaError(E.CUDA_ERROR_SHARED_OBJECT_INIT_FAILED,
                                f"the software stacks' {self._bytes()} bytes: {err}") from None
        module.stacks, module.stacks_state = self, state
        self.modules.append(module)
        self._point(module)

    def detach(self, module: Module) -> None:
        self.modules = [m for m in self.modules if m is not module]
        module.stacks, module.stacks_state = None, 0

    def set_size(self, nbytes: int) -> None:
        """A new CU_LIMIT_STACK_SIZE: stacks in place are replaced once the
        device's work has ended (no kernel holds a slot)."""
        if nbytes == self.size:
            return
        old, self.size = self.address, nbytes
        if not old:
            return
        self.device.synchronize()
        try:
            self._allocate()
        except Exception as err:
            self.address = old
            raise CudaError(E.CUDA_ERROR_OUT_OF_MEMORY,
                            f"software stacks of {nbytes} bytes: {err}") from None
        for module in self.modules:
            self._point(module)
        self.device.free(old)

    def release(self) -> None:
        """The context's end: the stacks are freed; a module still loaded
        finds none (a thread that needs one fails the launch)."""
        if self.address:
            self.device.free(self.address)
        self.address = 0
        for module in self.modules:
            self._point(module)
            module.stacks, module.stacks_state = None, 0
        self.modules.clear()

    def _flags_bytes(self) -> int:
        return -(-4 * self.slots // _PAGE) * _PAGE

    def _bytes(self) -> int:
        return self._flags_bytes() + self.slots * self.size

    def _allocate(self) -> None:
        units = max(1, int(self.device.compute_units))
        per_unit, budget = THREADS_PER_UNIT, self.device.total_memory() // 8
        while per_unit > MIN_PER_UNIT and units * per_unit * self.size > budget:
            per_unit //= 2
        self.slots = units * per_unit
        address = int(self.device.alloc(self._bytes()))
        self.device.memset(address, 0, self._flags_bytes())
        self.address = address

    def _point(self, module: Module) -> None:
        words = ((self.address, self.address + self._flags_bytes(), self.size, self.slots)
                 if self.address else (0, 0, 0, 0))
        self.device.copy_to_device(module.stacks_state, struct.pack("<4Q", *words))


class StackPools:
    """The driver's software stacks, one pool per context (by handle), made on first use."""

    def __init__(self) -> None:
        self.device: Any = None  # backends.Backend, set at cuInit
        self.pools: dict[int, StackPool] = {}

    def of(self, context: int) -> StackPool:
        pool = self.pools.get(context)
        if pool is None:
            pool = self.pools[context] = StackPool(self.device)
        return pool

    def attach(self, module: Module, context: int) -> None:
        """At load: gives a module with recursive functions' frames to place
        its context's stacks (allocating them)."""
        if STATE_NAME.encode() not in module.compiled.binary:
            return
        try:
            state, _ = self.device.global_variable(module.program, STATE_NAME)
        except Exception as err:  # the backend's: it cannot reach the module's variable
            raise CudaError(E.CUDA_ERROR_SHARED_OBJECT_INIT_FAILED,
                            f"the software stacks' state in {module.ptx_name}: {err}") from None
        self.of(context).attach(module, state)

    def detach(self, module: Module) -> None:
        """At the module's unload."""
        if module.stacks is not None:
            module.stacks.detach(module)

    def context_destroyed(self, context: int) -> None:
        pool = self.pools.pop(context, None)
        if pool is not None:
            pool.release()
