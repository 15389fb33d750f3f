"""The OpenCL launcher on the Intel CPU runtime, driven by hand-written SPIR-V kernels.

The kernels are LLVM IR for `spirv64-unknown-unknown` in the shape our compiler emits: device
pointers arrive as i64 and are converted with inttoptr, CUDA's shared memory is a trailing
`ptr addrspace(3)` argument, warps are sub-groups of a required size 32. Each is compiled with
llc at test time and checked with spirv-val before it is loaded.

Run from the repository root: `python -m pytest test/runtime/test_runtime_opencl.py`.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cffi", reason="the OpenCL launcher needs cffi")

from zmlir.runtime.backends.opencl import icd
from zmlir.runtime.backends.opencl.api import OpenCLError
from zmlir.runtime.backends.opencl.device import Device, KernelArg, Program
from zmlir.toolchain import llvm_tool

LLC = llvm_tool("llc")
SPIRV_VAL = shutil.which("spirv-val")


def _runtime_missing() -> str | None:
    try:
        icd.find_runtime_library()
    except icd.IntelRuntimeNotFound as exc:
        return f"Intel OpenCL CPU runtime not installed: {exc}"
    if LLC is None:
        return "llc not found (set ZMLIR_LLVM_ROOT to LLVM 22's prefix)"
    if SPIRV_VAL is None:
        return "spirv-val not on PATH (apt-get install spirv-tools)"
    return None


pytestmark = pytest.mark.skipif(_runtime_missing() is not None, reason=str(_runtime_missing()))

_HEADER = """
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-n8:16:32:64-G1"
target triple = "spirv64-unknown-unknown"

declare spir_func i64 @_Z12get_group_idj(i32)
declare spir_func i64 @_Z14get_local_sizej(i32)
declare spir_func i64 @_Z12get_local_idj(i32)
declare spir_func i64 @_Z14get_num_groupsj(i32)
declare spir_func void @_Z7barrierj(i32) #0
declare spir_func i32 @_Z18get_sub_group_sizev()
declare spir_func i32 @_Z21sub_group_shuffle_xorij(i32, i32) #0

attributes #0 = { convergent }
"""

# c[i] = a[i] + b[i] for i < n, with i = blockIdx.x * blockDim.x + threadIdx.x.
VADD = """
define spir_kernel void @vadd(i64 %a, i64 %b, i64 %c, i32 %n) {
entry:
  %bid = call spir_func i64 @_Z12get_group_idj(i32 0)
  %bdim = call spir_func i64 @_Z14get_local_sizej(i32 0)
  %tid = call spir_func i64 @_Z12get_local_idj(i32 0)
  %base = mul i64 %bid, %bdim
  %i = add i64 %base, %tid
  %n64 = sext i32 %n to i64
  %in = icmp slt i64 %i, %n64
  br i1 %in, label %body, label %exit
body:
  %pa = inttoptr i64 %a to ptr addrspace(1)
  %pb = inttoptr i64 %b to ptr addrspace(1)
  %pc = inttoptr i64 %c to ptr addrspace(1)
  %ga = getelementptr inbounds float, ptr addrspace(1) %pa, i64 %i
  %gb = getelementptr inbounds float, ptr addrspace(1) %pb, i64 %i
  %gc = getelementptr inbounds float, ptr addrspace(1) %pc, i64 %i
  %va = load float, ptr addrspace(1) %ga, align 4
  %vb = load float, ptr addrspace(1) %gb, align 4
  %s = fadd float %va, %vb
  store float %s, ptr addrspace(1) %gc, align 4
  br label %exit
exit:
  ret void
}
"""

# out[blockIdx.x] = sum of inp over the block (zeros past n): a tree in the trailing __local
# window with a barrier per step; blockDim.x must be a power of two.
BLOCK_SUM = """
define spir_kernel void @block_sum(i64 %inp, i64 %out, i32 %n, ptr addrspace(3) %smem) {
entry:
  %bid = call spir_func i64 @_Z12get_group_idj(i32 0)
  %bdim = call spir_func i64 @_Z14get_local_sizej(i32 0)
  %tid = call spir_func i64 @_Z12get_local_idj(i32 0)
  %base = mul i64 %bid, %bdim
  %i = add i64 %base, %tid
  %n64 = sext i32 %n to i64
  %inb = icmp slt i64 %i, %n64
  br i1 %inb, label %load, label %stash
load:
  %pin = inttoptr i64 %inp to ptr addrspace(1)
  %gin = getelementptr inbounds i32, ptr addrspace(1) %pin, i64 %i
  %x = load i32, ptr addrspace(1) %gin, align 4
  br label %stash
stash:
  %v = phi i32 [ %x, %load ], [ 0, %entry ]
  %slot = getelementptr inbounds i32, ptr addrspace(3) %smem, i64 %tid
  store i32 %v, ptr addrspace(3) %slot, align 4
  call spir_func void @_Z7barrierj(i32 1)
  %s0 = lshr i64 %bdim, 1
  br label %head
head:
  %s = phi i64 [ %s0, %stash ], [ %sn, %sync ]
  %go = icmp ugt i64 %s, 0
  br i1 %go, label %step, label %finish
step:
  %active = icmp ult i64 %tid, %s
  br i1 %active, label %add, label %sync
add:
  %j = add i64 %tid, %s
  %other = getelementptr inbounds i32, ptr addrspace(3) %smem, i64 %j
  %mine = load i32, ptr addrspace(3) %slot, align 4
  %theirs = load i32, ptr addrspace(3) %other, align 4
  %sum = add i32 %mine, %theirs
  store i32 %sum, ptr addrspace(3) %slot, align 4
  br label %sync
sync:
  call spir_func void @_Z7barrierj(i32 1)
  %sn = lshr i64 %s, 1
  br label %head
finish:
  %first = icmp eq i64 %tid, 0
  br i1 %first, label %write, label %exit
write:
  %total = load i32, ptr addrspace(3) %smem, align 4
  %pout = inttoptr i64 %out to ptr addrspace(1)
  %gout = getelementptr inbounds i32, ptr addrspace(1) %pout, i64 %bid
  store i32 %total, ptr addrspace(1) %gout, align 4
  br label %exit
exit:
  ret void
}
"""

# A warp-sum with sub-groups of the required size 32 (how __shfl_xor_sync is emulated):
# out[i] = sum over i's sub-group by butterfly shuffles, sizes[i] = get_sub_group_size().
WARP_SUM = """
define spir_kernel void @warp_sum(i64 %inp, i64 %out, i64 %sizes) !intel_reqd_sub_group_size !0 {
entry:
  %bid = call spir_func i64 @_Z12get_group_idj(i32 0)
  %bdim = call spir_func i64 @_Z14get_local_sizej(i32 0)
  %tid = call spir_func i64 @_Z12get_local_idj(i32 0)
  %base = mul i64 %bid, %bdim
  %i = add i64 %base, %tid
  %pin = inttoptr i64 %inp to ptr addrspace(1)
  %gin = getelementptr inbounds i32, ptr addrspace(1) %pin, i64 %i
  %v0 = load i32, ptr addrspace(1) %gin, align 4
  br label %loop
loop:
  %v = phi i32 [ %v0, %entry ], [ %vn, %loop ]
  %m = phi i32 [ 16, %entry ], [ %mn, %loop ]
  %o = call spir_func i32 @_Z21sub_group_shuffle_xorij(i32 %v, i32 %m)
  %vn = add i32 %v, %o
  %mn = lshr i32 %m, 1
  %more = icmp ne i32 %mn, 0
  br i1 %more, label %loop, label %done
done:
  %pout = inttoptr i64 %out to ptr addrspace(1)
  %gout = getelementptr inbounds i32, ptr addrspace(1) %pout, i64 %i
  store i32 %vn, ptr addrspace(1) %gout, align 4
  %sz = call spir_func i32 @_Z18get_sub_group_sizev()
  %ps = inttoptr i64 %sizes to ptr addrspace(1)
  %gs = getelementptr inbounds i32, ptr addrspace(1) %ps, i64 %i
  store i32 %sz, ptr addrspace(1) %gs, align 4
  ret void
}
!0 = !{i32 32}
"""

# Every thread of a 3-D launch writes x + 1000*y + 1000000*z (its global coordinates) at its
# linear position: pins grid*block -> global size and the y/z dimensions.
COORDS = """
define spir_kernel void @coords(i64 %out) {
entry:
  %x = call spir_func i64 @gid(i32 0)
  %y = call spir_func i64 @gid(i32 1)
  %z = call spir_func i64 @gid(i32 2)
  %nx = call spir_func i64 @extent(i32 0)
  %ny = call spir_func i64 @extent(i32 1)
  %zy = mul i64 %z, %ny
  %row = add i64 %zy, %y
  %rowx = mul i64 %row, %nx
  %lin = add i64 %rowx, %x
  %y1k = mul i64 %y, 1000
  %z1m = mul i64 %z, 1000000
  %v0 = add i64 %x, %y1k
  %v = add i64 %v0, %z1m
  %v32 = trunc i64 %v to i32
  %p = inttoptr i64 %out to ptr addrspace(1)
  %g = getelementptr inbounds i32, ptr addrspace(1) %p, i64 %lin
  store i32 %v32, ptr addrspace(1) %g, align 4
  ret void
}

define internal spir_func i64 @gid(i32 %d) {
  %b = call spir_func i64 @_Z12get_group_idj(i32 %d)
  %s = call spir_func i64 @_Z14get_local_sizej(i32 %d)
  %t = call spir_func i64 @_Z12get_local_idj(i32 %d)
  %bs = mul i64 %b, %s
  %r = add i64 %bs, %t
  ret i64 %r
}

define internal spir_func i64 @extent(i32 %d) {
  %g = call spir_func i64 @_Z14get_num_groupsj(i32 %d)
  %s = call spir_func i64 @_Z14get_local_sizej(i32 %d)
  %r = mul i64 %g, %s
  ret i64 %r
}
"""


@pytest.fixture(scope="module")
def spirv(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """All test kernels in one SPIR-V module (one llc run keeps the suite cheap)."""
    directory = tmp_path_factory.mktemp("spirv")
    ll = directory / "kernels.ll"
    spv = directory / "kernels.spv"
    ll.write_text(_HEADER + VADD + BLOCK_SUM + WARP_SUM + COORDS)
    _run([LLC, "-mtriple=spirv64-unknown-unknown", "-filetype=obj", str(ll), "-o", str(spv)])
    _run([str(SPIRV_VAL), str(spv)])
    return spv.read_bytes()


def _run(command: list[str]) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        pytest.fail(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")


@pytest.fixture(scope="module")
def device() -> Iterator[Device]:
    with Device.open() as dev:
        yield dev


@pytest.fixture(scope="module")
def program(device: Device, spirv: bytes) -> Program:
    return device.load_spirv(spirv)


def _upload(device: Device, array: np.ndarray) -> int:
    address = device.alloc(array.nbytes)
    device.copy_to_device(address, array)
    return address


def test_device_accepts_spirv(device: Device) -> None:
    assert "SPIR-V" in device.il_version
    assert device.max_work_group_size >= 1024  # CUDA's limit must fit
    assert device.local_mem_size >= 48 * 1024  # CUDA's default static shared-memory limit


@pytest.mark.parametrize("n", [1, 100, 255, 256, 257, 1000, 4097])
@pytest.mark.parametrize("block", [64, 256])
def test_vector_add(device: Device, program: Program, n: int, block: int) -> None:
    rng = np.random.default_rng(n * 7 + block)
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    pa, pb = _upload(device, a), _upload(device, b)
    # One float past the end is a sentinel: the bounds check must keep it untouched.
    pc = device.alloc((n + 1) * 4)
    device.memset(pc, 0xAB, (n + 1) * 4)
    grid = ((n + block - 1) // block, 1, 1)
    device.launch(
        program.kernel("vadd"),
        grid=grid,
        block=(block, 1, 1),
        args=[KernelArg.ptr(pa), KernelArg.ptr(pb), KernelArg.ptr(pc), np.int32(n)],
    )
    c = device.copy_into(pc, np.empty(n + 1, np.float32))
    np.testing.assert_array_equal(c[:n], a + b)
    assert c[n:].view(np.uint32)[0] == 0xABABABAB
    for address in (pa, pb, pc):
        device.free(address)


@pytest.mark.parametrize("n", [1, 63, 64, 1000, 5000])
@pytest.mark.parametrize("block", [32, 128, 256])
def test_block_sum_local_window(device: Device, program: Program, n: int, block: int) -> None:
    rng = np.random.default_rng(n + block)
    data = rng.integers(-1000, 1000, n, dtype=np.int32)
    blocks = (n + block - 1) // block
    pin, pout = _upload(device, data), device.alloc(blocks * 4)
    device.launch(
        program.kernel("block_sum"),
        grid=(blocks,),
        block=(block,),
        args=[KernelArg.ptr(pin), KernelArg.ptr(pout), np.int32(n)],
        shared_window=block * 4,
    )
    padded = np.zeros(blocks * block, np.int32)
    padded[:n] = data
    expected = padded.reshape(blocks, block).sum(axis=1, dtype=np.int32)
    np.testing.assert_array_equal(device.copy_into(pout, np.empty(blocks, np.int32)), expected)
    device.free(pin)
    device.free(pout)


@pytest.mark.parametrize("block", [32, 128, 256])
def test_required_sub_group_size_32(device: Device, program: Program, block: int) -> None:
    assert 32 in device.sub_group_sizes, device.sub_group_sizes
    kernel = program.kernel("warp_sum")
    assert kernel.compile_sub_group_size() == 32
    assert kernel.max_sub_group_size((block, 1, 1)) == 32
    blocks = 3
    n = blocks * block
    data = np.random.default_rng(block).integers(-(2**20), 2**20, n, dtype=np.int32)
    pin, pout, psizes = _upload(device, data), device.alloc(n * 4), device.alloc(n * 4)
    device.launch(
        kernel,
        grid=(blocks,),
        block=(block,),
        args=[KernelArg.ptr(pin), KernelArg.ptr(pout), KernelArg.ptr(psizes)],
    )
    sizes = device.copy_into(psizes, np.empty(n, np.int32))
    assert set(sizes.tolist()) == {32}
    warp_sums = data.reshape(-1, 32).sum(axis=1, dtype=np.int32)
    np.testing.assert_array_equal(
        device.copy_into(pout, np.empty(n, np.int32)), np.repeat(warp_sums, 32)
    )
    for address in (pin, pout, psizes):
        device.free(address)


def test_unconstrained_kernel_sub_group_size_is_not_32(device: Device, program: Program) -> None:
    # Documents why our kernels that use sub-groups must require 32: left alone, the runtime
    # picks its own width.
    assert program.kernel("vadd").compile_sub_group_size() == 0


@pytest.mark.parametrize(("grid", "block"), [((3, 2, 2), (4, 5, 3)), ((1, 7, 1), (16, 1, 2))])
def test_grid_block_dimensions(device: Device, program: Program, grid, block) -> None:
    shape = [g * b for g, b in zip(grid, block, strict=True)]
    count = shape[0] * shape[1] * shape[2]
    out = device.alloc(count * 4)
    device.launch(program.kernel("coords"), grid=grid, block=block, args=[KernelArg.ptr(out)])
    z, y, x = np.meshgrid(*(np.arange(s) for s in reversed(shape)), indexing="ij")
    expected = (x + 1000 * y + 1_000_000 * z).astype(np.int32).ravel()
    np.testing.assert_array_equal(device.copy_into(out, np.empty(count, np.int32)), expected)
    device.free(out)


def test_memset_and_copy_round_trip(device: Device) -> None:
    address = device.alloc(64)
    device.memset(address, 0x5A, 64)
    assert device.copy_from_device(address, 64) == b"\x5a" * 64
    device.copy_to_device(address + 8, b"hello")
    assert device.copy_from_device(address + 6, 9) == b"\x5a\x5ahello\x5a\x5a"
    device.free(address)


def test_alloc_kinds_give_usable_addresses() -> None:
    for kind in ("device", "shared", "host"):
        with Device.open(alloc_kind=kind) as dev:
            address = dev.alloc(4096)
            assert address % 64 == 0  # real, aligned addresses kernels can do arithmetic on
            dev.copy_to_device(address, np.arange(1024, dtype=np.int32))
            assert np.array_equal(
                dev.copy_into(address, np.empty(1024, np.int32)), np.arange(1024, dtype=np.int32)
            )


def test_errors_are_clear(device: Device, program: Program) -> None:
    address = device.alloc(16)  # a 512-byte slot of a slab (runtime/slabs.py)
    with pytest.raises(ValueError, match="not inside one live device allocation"):
        device.copy_to_device(address + 500, b"\0" * 16)
    large = device.alloc(100_000)
    with pytest.raises(ValueError, match="not inside one live device allocation"):
        device.copy_to_device(large + 99_992, b"\0" * 16)
    device.free(large)
    with pytest.raises(ValueError, match="not a live allocation"):
        device.free(address + 4)
    kernel = program.kernel("vadd")
    with pytest.raises(ValueError, match="takes 4 arguments, launch gives 3"):
        device.launch(kernel, grid=(1,), block=(1,), args=[KernelArg.ptr(0)] * 3)
    with pytest.raises(TypeError, match="has no C type"):
        device.launch(kernel, grid=(1,), block=(1,), args=[KernelArg.ptr(0)] * 3 + [5])
    with pytest.raises(ValueError, match="no shared-memory window"):
        device.launch(kernel, grid=(1,), block=(1,), args=[], shared_bytes=16)
    with pytest.raises(OpenCLError, match="CL_INVALID_KERNEL_NAME") as info:
        program.kernel("no_such_kernel")
    assert info.value.code == -46 and info.value.api == "clCreateKernel"
    device.free(address)


def test_bad_spirv_is_refused_before_the_runtime_sees_it(device: Device, spirv: bytes) -> None:
    # The Intel runtime spins forever on a zero word count: this must be an error, not a hang.
    with pytest.raises(ValueError, match="word count 0"):
        device.load_spirv(spirv[:20] + b"\0" * 8)
    # A trailing instruction that claims 5 words where 1 is left (a truncated module).
    with pytest.raises(ValueError, match="word count 5 with 1 words left"):
        device.load_spirv(spirv + (5 << 16).to_bytes(4, "little"))
    with pytest.raises(ValueError, match=r"SPIR-V 1\.6 module"):
        device.load_spirv(spirv[:4] + bytes([0, 6, 1, 0]) + spirv[8:])
    with pytest.raises(ValueError, match="magic"):
        device.load_spirv(b"\x7fELF" + b"\0" * 60)


def test_build_failure_carries_the_build_log(device: Device, spirv: bytes) -> None:
    # A module with only OpCapability Kernel: well-formed words, but no memory model.
    module = spirv[:20] + bytes.fromhex("1100020006000000")
    with pytest.raises(OpenCLError) as info:
        device.load_spirv(module)
    assert info.value.api in ("clCreateProgramWithIL", "clBuildProgram")
    assert info.value.name.startswith("CL_")


def test_missing_runtime_lists_paths_tried(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "libintelocl.so"
    monkeypatch.setenv("ZMLIR_OPENCL_ICD", str(missing))
    with pytest.raises(icd.IntelRuntimeNotFound, match=str(missing)):
        icd.find_runtime_library()
