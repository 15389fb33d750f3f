"""The driver's objects and the handle table: what an application's CUcontext,
CUmodule, CUfunction, CUstream, CUevent, CUgraph... point at. Handles are
small integers the application sees as pointers."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from zmlir.runtime.cuda.errors import CudaError, CUresult

E = CUresult

@dataclass
class Context:
    device: int
    flags: int = 0
    primary: bool = False
    refcount: int = 1
    limits: dict[int, int] = field(default_factory=dict)
    local_storage: dict[int, tuple[int, Any]] = field(default_factory=dict)


@dataclass
class Function:
    module: Module  # in a module compiled a part at a time, its part's once bound
    name: str
    bound_info: Any  # zmlir.KernelInfo (info); None until bound
    bound_kernel: Any  # the backend's kernel (kernel); None until bound
    attributes: dict[int, int] = field(default_factory=dict)
    dtypes: list[Any] | None = None  # numpy types of the parameters, found on first launch
    handle: int = 0
    fast: bool = False  # registered with the C launch fast path
    # The legacy launch API's state (cuFuncSetBlockShape, cuFuncSetSharedSize, cuParamSet*),
    # which cuLaunch/cuLaunchGrid(Async) launch with.
    block: tuple[int, int, int] = (0, 0, 0)
    shared_size: int = 0
    params: bytearray = field(default_factory=bytearray)
    param_size: int = 0
    # A kernel of a module compiled a part at a time (parted.py) before its
    # part is loaded: pending(self) compiles and loads the part and binds
    # the kernel, or raises the CudaError saying why it cannot.
    pending: Any = None

    @property
    def info(self) -> Any:
        if self.pending is not None:
            self.pending(self)
        return self.bound_info

    @property
    def kernel(self) -> Any:
        if self.pending is not None:
            self.pending(self)
        return self.bound_kernel


@dataclass
class Module:
    ptx_name: str
    compiled: Any  # zmlir.CompiledModule
    program: Any  # the backend's program
    functions: dict[str, Function] = field(default_factory=dict)
    globals: dict[str, int] = field(default_factory=dict)
    handle: int = 0  # the first handle it was loaded under (cuFuncGetModule)
    # The address of the module's trap word (SPIR-V modules with a `trap` or an assert),
    # 0: none.
    trap_word: int = 0
    # Compiled a part at a time (compiled is a parted.PartedModule, program
    # None): its parts loaded so far, by their roots, each a Module of its own.
    parts: dict[frozenset[str], Module] = field(default_factory=dict)
    # Its kernels that call printf or assert (cuda/printf.py): launching one
    # fixes the printf FIFO's size.
    printf_kernels: frozenset[str] = frozenset()
    printf_id: int = 0  # its id in the printf records (0: it has none)
    # Its kernels that call malloc or free (cuda/heap.py): launching one fixes the
    # heap's size. The context's heap it was given and the address of its
    # `__zmlir_device_heap` (None, 0: it calls NVIDIA's malloc, or none).
    heap_kernels: frozenset[str] = frozenset()
    heap: Any = None
    heap_state: int = 0
    # The context's software stacks it was given (cuda/stacks.py) and the
    # address of its `__zmlir_local_stack` (None, 0: it needs none).
    stacks: Any = None
    stacks_state: int = 0
    # The address of its `__zmlir_grid_workspace` (0: its kernels read no
    # %envreg1/%envreg2, or NVIDIA's) and of the grid workspace it points at
    # during a cooperative launch (cuda/cooperative.py; 0: none made yet).
    grid_workspace_var: int = 0
    grid_workspace: int = 0
    # The address of its `__zmlir_device_launches` (0: it makes no device-side
    # launches) and of the launch queue it points at (cuda/device_launch.py).
    device_launch_var: int = 0
    device_launch_queue: int = 0


@dataclass
class UncompiledLibrary:
    """A library whose PTX did not compile, or that holds no PTX at all
    (logged when it was loaded). CUDA
    loads libraries lazily and cudart loads every fatbin of a program at
    start-up, so the error belongs to the library's first use: a program
    can still ask the device what it supports before it needs the kernel."""

    error: CudaError


CU_STREAM_NON_BLOCKING = 0x1  # the one stream flag; CU_STREAM_DEFAULT is 0


@dataclass
class Stream:
    flags: int = 0
    priority: int = 0
    # Under the CUDA passthrough: its handle is a stream of NVIDIA's driver
    # too (Backend.vendor_stream), destroyed with it.
    vendor: bool = False
    # Work of the stream in the backend's one queue that no launch number
    # covers (a host function): its synchronisation is the whole queue's.
    untracked: bool = False
    # While capturing (cuStreamBeginCapture): the capture (graph/capture.py) and
    # the graph nodes the stream's next work depends on.
    capture: Any = None
    capture_dependencies: list[Any] = field(default_factory=list)

    @property
    def non_blocking(self) -> bool:
        """CU_STREAM_NON_BLOCKING: no order with the legacy stream's work."""
        return bool(self.flags & CU_STREAM_NON_BLOCKING)


@dataclass
class UserObject:
    """cuUserObjectCreate's: `destroy(ptr)` runs when the last reference goes."""

    ptr: Any
    destroy: Any  # a CUhostFn
    references: int


@dataclass
class Event:
    flags: int = 0
    mark: Any = None  # where it was recorded: Backend.record_mark()
    handle: int = 0  # the application's CUevent
    # Recorded in a capturing stream: streams waiting on it join that capture,
    # depending on what the recording stream depended on.
    capture: Any = None
    capture_dependencies: list[Any] = field(default_factory=list)
    # CU_EVENT_INTERPROCESS: its state, shared with other processes (ipc.SharedEvent).
    shared: Any = None


class Handles:
    """Integer handles for driver objects (what the application sees)."""

    def __init__(self) -> None:
        self._objects: dict[int, Any] = {}
        # The same objects by their class: a program that never destroys its
        # graphs holds thousands of nodes, and a walk over every stream (each
        # stream capture's end makes one) must not walk those.
        self._by_class: dict[type, dict[int, Any]] = {}
        self._ids = itertools.count(0x1000, 0x10)

    def add(self, obj: Any) -> int:
        return self._put(next(self._ids), obj)

    def add_at(self, handle: int, obj: Any) -> int:
        """`obj` under a handle given (an object of the vendor's driver that
        stands for it: Backend.vendor_stream), which no live object has."""
        if handle in self._objects or handle < 0x1000:
            raise CudaError(E.CUDA_ERROR_UNKNOWN, f"handle 0x{handle:x} is taken")
        return self._put(handle, obj)

    def _put(self, handle: int, obj: Any) -> int:
        self._objects[handle] = obj
        self._by_class.setdefault(type(obj), {})[handle] = obj
        return handle

    def get(self, handle: int, kind: type) -> Any:
        obj = self._objects.get(handle)
        if not isinstance(obj, kind):
            raise CudaError(E.CUDA_ERROR_INVALID_HANDLE, f"not a {kind.__name__}: 0x{handle:x}")
        return obj

    def find(self, handle: int) -> Any:
        """The object behind `handle`, of any kind, or None."""
        return self._objects.get(handle)

    def all(self, kind: type) -> Iterator[Any]:
        """Every live object of `kind`."""
        return (obj for _, obj in self.items(kind))

    def items(self, kind: type) -> Iterator[tuple[int, Any]]:
        """(handle, object) of every live object of `kind`."""
        classes = [objects for cls, objects in list(self._by_class.items())
                   if issubclass(cls, kind)]
        return ((h, obj) for objects in classes for h, obj in list(objects.items()))

    def remove(self, handle: int, kind: type) -> Any:
        obj = self.get(handle, kind)
        del self._objects[handle]
        del self._by_class[type(obj)][handle]
        return obj
