"""Each context's software stacks (zmlir/runtime/cuda/stacks.py) over a fake
device: the words a module gets, free flags, CU_LIMIT_STACK_SIZE rounded as
an H200 rounds it, a new pool for the modules when it changes (after the
device's work), fewer slots where memory is short, none after the context's
end. test/cuda/programs/recursion_local_memory.cu runs the stacks
themselves."""

from __future__ import annotations

import struct
from types import SimpleNamespace

import pytest

from zmlir.runtime.cuda import stacks
from zmlir.runtime.cuda.errors import CudaError, CUresult
from zmlir.runtime.cuda.objects import Module


class FakeDevice:
    """Device memory as a dict of bytearrays, by base address."""

    def __init__(self, compute_units: int = 2, memory: int = 64 << 30) -> None:
        self.compute_units = compute_units
        self.memory_bytes = memory
        self.memory: dict[int, bytearray] = {}
        self.next = 0x1000
        self.synchronized = 0
        self.variable = self.alloc(32)

    def total_memory(self) -> int:
        return self.memory_bytes

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

    def synchronize(self) -> None:
        self.synchronized += 1

    def global_variable(self, program: object, name: str) -> tuple[int, int]:
        assert name == stacks.STATE_NAME
        return self.variable, 32

    def words(self) -> tuple[int, int, int, int]:
        buf, at = self._at(self.variable)
        return struct.unpack_from("<4Q", buf, at)


def module(binary: bytes = b"... __zmlir_local_stack ...") -> Module:
    return Module("m.ptx", SimpleNamespace(binary=binary), object())


def test_a_module_gets_its_contexts_stacks() -> None:
    device = FakeDevice(compute_units=2)
    pools = stacks.StackPools()
    pools.device = device
    m = module()
    pools.attach(m, context=7)
    flags, slots_at, size, count = device.words()
    assert (size, count) == (1024, 2 * 1024)
    assert slots_at - flags == 8192  # 2048 u32 flags, a page multiple
    assert bytes(device._at(flags)[0][:8192]) == bytes(8192)  # every slot free
    assert len(device.memory[flags]) == 8192 + 2048 * 1024
    assert m.stacks is pools.of(7) and m.stacks_state == device.variable
    # A module that needs none is left alone.
    other = module(b"no stacks here")
    pools.attach(other, context=7)
    assert other.stacks is None


@pytest.mark.parametrize(("asked", "kept"), [(1, 16), (1024, 1024), (40004, 40016), (0, 0)])
def test_stack_size_rounds_up_to_16(asked: int, kept: int) -> None:
    assert stacks.stack_size(asked) == kept


def test_a_new_size_replaces_the_pool_after_the_devices_work() -> None:
    device = FakeDevice(compute_units=1)
    pools = stacks.StackPools()
    pools.device = device
    pool = pools.of(3)
    pool.set_size(2048)  # no pool yet: only the size
    assert device.synchronized == 0
    m = module()
    pools.attach(m, context=3)
    old = device.words()
    assert old[2:] == (2048, 1024)
    pool.set_size(4096)
    assert device.synchronized == 1
    new = device.words()
    assert new[2:] == (4096, 1024) and new[0] != old[0]
    assert old[0] not in device.memory  # the old pool is freed
    pool.set_size(4096)  # the same size: nothing to do
    assert device.synchronized == 1 and device.words() == new


def test_short_memory_means_fewer_slots() -> None:
    # 64 KiB stacks, 4 units, 64 MiB of memory: an eighth is 8 MiB, 32 a unit.
    device = FakeDevice(compute_units=4, memory=64 << 20)
    pool = stacks.StackPool(device)
    pool.size = 64 << 10
    pool.attach(module(), device.variable)
    assert device.words()[3] == 4 * 32
    # Never fewer than 16 a unit.
    tiny = FakeDevice(compute_units=4, memory=1 << 20)
    pool = stacks.StackPool(tiny)
    pool.size = 64 << 10
    pool.attach(module(), tiny.variable)
    assert tiny.words()[3] == 4 * 16


def test_no_memory_for_the_pool_fails_the_load() -> None:
    device = FakeDevice()

    def fail(nbytes: int) -> int:
        raise MemoryError("no")

    pools = stacks.StackPools()
    pools.device = device
    variable = device.variable
    device.alloc = fail  # type: ignore[method-assign]
    with pytest.raises(CudaError) as err:
        pools.attach(module(), context=1)
    assert err.value.code == CUresult.CUDA_ERROR_SHARED_OBJECT_INIT_FAILED
    assert device.variable == variable


def test_the_contexts_end_frees_the_pool() -> None:
    device = FakeDevice()
    pools = stacks.StackPools()
    pools.device = device
    m = module()
    pools.attach(m, context=5)
    flags = device.words()[0]
    pools.context_destroyed(5)
    assert flags not in device.memory
    assert device.words() == (0, 0, 0, 0)  # a thread that needs a slot now traps
    assert m.stacks is None and m.stacks_state == 0
    pools.detach(m)  # at its unload later: nothing left to do
