"""Each context's device heap (zmlir/runtime/cuda/heap.py) over a fake
device: the header the allocator starts from, CU_LIMIT_MALLOC_HEAP_SIZE
until a kernel that uses the heap was launched, a new heap for the modules
on a change and on the primary context's reset, none after the context's
end. test/cuda/programs/device_heap.cu runs the allocator itself."""

from __future__ import annotations

import struct
from types import SimpleNamespace

import pytest

from zmlir.runtime.cuda import heap
from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.objects import Module


class FakeDevice:
    """Device memory as a dict of bytearrays, by base address."""

    def __init__(self) -> None:
        self.memory: dict[int, bytearray] = {}
        self.next = 0x1000
        self.variables = {heap.STATE_NAME: self.alloc(8)}

    def alloc(self, nbytes: int) -> int:
        address, self.next = self.next, self.next + nbytes + 0x1000
        self.memory[address] = bytearray(nbytes)
        return address

    def free(self, address: int) -> None:
        del self.memory[address]

    def _at(self, address: int) -> tuple[bytearray, int]:
        base = max(b for b in self.memory if b <= address)
        return self.memory[base], address - base

    def memset(self, address: int, byte: int, nbytes: int) -> None:
        buf, at = self._at(address)
        buf[at:at + nbytes] = bytes([byte]) * nbytes

    def copy_to_device(self, address: int, data: bytes) -> None:
        buf, at = self._at(address)
        buf[at:at + len(data)] = data

    def read(self, address: int, nbytes: int) -> bytes:
        buf, at = self._at(address)
        return bytes(buf[at:at + nbytes])

    def global_variable(self, program: object, name: str) -> tuple[int, int]:
        return self.variables[name], 8


PTX = """
.extern .func (.param .b64 func_retval0) malloc(.param .b64 p);
.visible .entry uses(.param .u64 out) { call.uni (r), malloc, (p); ret; }
.visible .entry plain(.param .u64 out) { ret; }
"""


def _module() -> Module:
    return Module("m.ptx", SimpleNamespace(binary=b"..." + heap.STATE_NAME.encode()), object())


def _state(device: FakeDevice) -> int:
    return struct.unpack("<Q", device.read(device.variables[heap.STATE_NAME], 8))[0]


def test_first_module_allocates_the_heap_with_its_header() -> None:
    device = FakeDevice()
    heaps = heap.DeviceHeaps()
    heaps.device = device
    module = _module()
    heaps.attach(module, PTX, context=7)
    assert module.heap_kernels == {"uses"}
    address = _state(device)
    assert address == heaps.of(7).address != 0
    bump, end = struct.unpack("<QQ", device.read(address, 16))
    assert (bump, end) == (heap.HEADER_BYTES, heap.HEADER_BYTES + heap.DEFAULT_SIZE)
    assert device.read(address + 16, heap.HEADER_BYTES - 16) == bytes(heap.HEADER_BYTES - 16)
    # A module that does not use the heap gets none.
    other = Module("n.ptx", SimpleNamespace(binary=b"no heap"), object())
    heaps.attach(other, ".visible .entry k() { ret; }", context=7)
    assert other.heap is None


def test_size_is_fixed_by_a_launch_of_a_kernel_that_uses_it() -> None:
    device = FakeDevice()
    heaps = heap.DeviceHeaps()
    heaps.device = device
    module = _module()
    heaps.attach(module, PTX, context=7)
    first = _state(device)
    # Before any launch: a new, empty heap of the new size for the module.
    heaps.of(7).set_size(1 << 20)
    second = _state(device)
    assert second != first and first not in device.memory
    assert struct.unpack("<QQ", device.read(second, 16))[1] == heap.HEADER_BYTES + (1 << 20)
    # A kernel that does not call malloc fixes nothing.
    assert not heaps.launched(SimpleNamespace(module=module, name="plain"))
    heaps.of(7).set_size(2 << 20)
    assert heaps.launched(SimpleNamespace(module=module, name="uses"))
    with pytest.raises(CudaError) as err:
        heaps.of(7).set_size(4 << 20)
    assert err.value.code == CUresult.CUDA_ERROR_INVALID_VALUE
    assert heaps.of(7).size == 2 << 20
    # The primary context's reset: the default size, settable again.
    heaps.of(7).reset()
    assert heaps.of(7).size == heap.DEFAULT_SIZE and not heaps.of(7).locked
    assert _state(device) == heaps.of(7).address != 0
    heaps.of(7).set_size(4 << 20)


def test_context_end_frees_the_heap() -> None:
    device = FakeDevice()
    heaps = heap.DeviceHeaps()
    heaps.device = device
    module = _module()
    heaps.attach(module, PTX, context=7)
    address = _state(device)
    heaps.context_destroyed(7)
    assert address not in device.memory
    assert _state(device) == 0  # the module's malloc returns NULL
    assert module.heap is None


def test_sizes_past_what_a_block_index_encodes_are_refused() -> None:
    with pytest.raises(CudaError):
        heap.DeviceHeap(FakeDevice()).set_size(heap.MAX_SIZE + 1)


def test_a_module_whose_state_the_backend_cannot_reach_fails_to_load() -> None:
    device = FakeDevice()
    device.variables.clear()
    heaps = heap.DeviceHeaps()
    heaps.device = device
    with pytest.raises(CudaError) as err:
        heaps.attach(_module(), PTX, context=7)
    assert err.value.code == CUresult.CUDA_ERROR_SHARED_OBJECT_INIT_FAILED
