"""Device malloc and free: each context's device heap.

A module compiled with calls of `malloc`, `free` or `__nv_aligned_device_malloc`
on a target without NVIDIA's own (zmlir/lowering/DeviceHeap.h) has the
variable `__zmlir_device_heap`, the address of its context's heap, set here
as the module loads; the module's own allocator (lock-free size classes over
a bump region) works inside it. (NVPTX modules call NVIDIA's malloc, whose
heap NVIDIA's driver keeps.)

As NVIDIA's driver does (the CUDA Programming Guide's "Heap Memory
Allocation", cuCtxSetLimit): the heap holds CU_LIMIT_MALLOC_HEAP_SIZE bytes,
8 MiB unless set, allocated when the first module that uses it loads into the
context (a failed allocation fails that load with
CUDA_ERROR_SHARED_OBJECT_INIT_FAILED); the limit can be set until a kernel
that calls malloc or free was launched in the context, later it is
CUDA_ERROR_INVALID_VALUE. Set before that, a heap already allocated is
replaced by one of the new size. Blocks live until freed or the context
ends, across launches; cuCtxDestroy frees the heap, and the primary
context's reset gives it a new, empty heap of the default size.
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, Any

from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.printf import kernels_calling

if TYPE_CHECKING:
    from zmlir.runtime.cuda.objects import Function, Module

E = CUresult
STATE_NAME = "__zmlir_device_heap"  # kHeapStateName
HEADER_BYTES = 512  # kHeapHeaderBytes: bump offset, end offset, free-list heads
DEFAULT_SIZE = 8 << 20  # NVIDIA's default CU_LIMIT_MALLOC_HEAP_SIZE
MAX_SIZE = (1 << 40) - HEADER_BYTES  # the largest block index DeviceHeap.h encodes
SERVICES = ("malloc", "free", "__cuda_syscall_aligned_malloc")


class DeviceHeap:
    """The device heap of one context."""

    def __init__(self, device: Any) -> None:
        self.device = device  # backends.Backend
        self.size = DEFAULT_SIZE  # CU_LIMIT_MALLOC_HEAP_SIZE
        self.address = 0  # the heap's header, 0 until a module needs it
        self.locked = False  # a kernel that calls malloc or free was launched
        self.modules: list[Module] = []  # attached, each with its state's address

    def attach(self, module: Module, state: int) -> None:
        if not self.address:
            try:
                self.address = self._allocate(self.size)
            except Exception as err:  # the backend's: no memory for it
                raise CudaError(E.CUDA_ERROR_SHARED_OBJECT_INIT_FAILED,
                                f"the device heap's {self.size} bytes: {err}") from None
        module.heap, module.heap_state = self, state
        self.modules.append(module)
        self.device.copy_to_device(state, struct.pack("<Q", self.address))

    def detach(self, module: Module) -> None:
        self.modules = [m for m in self.modules if m is not module]
        module.heap, module.heap_state = None, 0

    def set_size(self, nbytes: int) -> None:
        """CU_LIMIT_MALLOC_HEAP_SIZE: CUDA_ERROR_INVALID_VALUE once a kernel
        that calls malloc or free was launched (the size stays). A heap in
        place is replaced by an empty one of the new size."""
        if self.locked or not 0 <= nbytes <= MAX_SIZE:
            raise CudaError(E.CUDA_ERROR_INVALID_VALUE, f"device heap size {nbytes}")
        if self.address:
            try:
                address = self._allocate(nbytes)
            except Exception as err:
                raise CudaError(E.CUDA_ERROR_OUT_OF_MEMORY,
                                f"a device heap of {nbytes} bytes: {err}") from None
            self.device.free(self.address)
            self._point_modules_at(address)
        self.size = nbytes

    def reset(self) -> None:
        """The primary context's reset: an empty heap of the default size
        that can be sized again (the modules loaded stay, as cudart's are)."""
        self.locked = False
        old, self.address = self.address, 0
        if old:
            self.device.free(old)
        self.size = DEFAULT_SIZE
        if self.modules:
            self._point_modules_at(self._allocate(self.size))

    def release(self) -> None:
        """The context's end: the heap is freed; a module still loaded
        finds none (its malloc returns NULL)."""
        if self.address:
            self.device.free(self.address)
        self._point_modules_at(0)
        for module in self.modules:
            module.heap, module.heap_state = None, 0
        self.modules.clear()

    def _point_modules_at(self, address: int) -> None:
        self.address = address
        for module in self.modules:
            self.device.copy_to_device(module.heap_state, struct.pack("<Q", address))

    def _allocate(self, nbytes: int) -> int:
        """A heap of `nbytes` bytes of blocks: its header says all are unused."""
        address = int(self.device.alloc(HEADER_BYTES + nbytes))
        self.device.memset(address, 0, HEADER_BYTES)
        self.device.copy_to_device(address, struct.pack("<QQ", HEADER_BYTES,
                                                        HEADER_BYTES + nbytes))
        return address


class DeviceHeaps:
    """The driver's device heaps, one per context (by handle), made on first use."""

    def __init__(self) -> None:
        self.device: Any = None  # backends.Backend, set at cuInit
        self.heaps: dict[int, DeviceHeap] = {}

    def of(self, context: int) -> DeviceHeap:
        heap = self.heaps.get(context)
        if heap is None:
            heap = self.heaps[context] = DeviceHeap(self.device)
        return heap

    def attach(self, module: Module, ptx: str, context: int) -> None:
        """At load: gives a module with its own allocator the context's heap
        (allocating it), and names its kernels that call malloc or free."""
        if STATE_NAME.encode() not in module.compiled.binary:
            return
        module.heap_kernels = kernels_calling(ptx, SERVICES)
        try:
            state, _ = self.device.global_variable(module.program, STATE_NAME)
        except Exception as err:  # the backend's: it cannot reach the module's variable
            raise CudaError(E.CUDA_ERROR_SHARED_OBJECT_INIT_FAILED,
                            f"the device heap's state in {module.ptx_name}: {err}") from None
        self.of(context).attach(module, state)

    def detach(self, module: Module) -> None:
        """At the module's unload."""
        if module.heap is not None:
            module.heap.detach(module)

    def launched(self, function: Function) -> bool:
        """At a launch: once a kernel that calls malloc or free ran, its
        heap's size is fixed. True where `function` is one."""
        heap = function.module.heap
        if heap is None or function.name not in function.module.heap_kernels:
            return False
        heap.locked = True
        return True

    def context_destroyed(self, context: int) -> None:
        heap = self.heaps.pop(context, None)
        if heap is not None:
            heap.release()
