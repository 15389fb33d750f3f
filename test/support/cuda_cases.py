"""Registry of the CUDA test kernels in test/cuda/ with their inputs and numpy references.

Each `CudaCase` names a .cu file and its `extern "C"` kernel; `case.launch_for(size)` builds,
for one problem size, the kernel's arguments in parameter order (device buffers with their
initial contents, scalars as numpy scalars of the parameter's C type), the CUDA grid/block and
dynamic shared memory, and the expected contents of the output buffers.

The references are exact wherever the kernel's arithmetic order is fixed by its source, which
is everywhere here: IEEE float32 operations in a fixed order have one right answer, so the
end-to-end tests compare bit for bit and catch lowering bugs (a split fma, a wrong shuffle lane)
that a tolerance would hide. Two points make that possible:

- nvcc contracts `a * x + y` to `fma.rn.f32` (its default -fmad=true), so saxpy and matmul are
  referenced with `fma_f32`, a correctly rounded float32 fma (not float64-then-round, which
  can round twice);
- block_reduce and matmul are referenced by replaying the kernel's own summation order
  (shared-memory tree then `__shfl_down_sync` butterfly; sequential k loop over tiles).

`Expected` still carries rtol/atol for kernels added later whose order is not fixed (atomics on
floats, say).
"""

from __future__ import annotations

import shutil
import subprocess
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from support import CUDA_DIR

Dim3 = tuple[int, int, int]
Size = int | tuple[int, ...]


# --- what a launch is made of ----------------------------------------------------------------


@dataclass(frozen=True)
class Buffer:
    """A pointer parameter: a device buffer holding `data` before the launch."""

    name: str
    data: np.ndarray
    output: bool = False  # read back after the launch and compared with its Expected


@dataclass(frozen=True)
class Scalar:
    """A by-value parameter; `value`'s numpy dtype is the parameter's C type."""

    name: str
    value: np.generic


Arg = Buffer | Scalar


@dataclass(frozen=True)
class Expected:
    """The reference contents of one output buffer; rtol = atol = 0 means bit-exact."""

    buffer: str
    reference: np.ndarray
    rtol: float = 0.0
    atol: float = 0.0

    def check(self, actual: np.ndarray) -> None:
        actual = np.asarray(actual).reshape(self.reference.shape)
        if actual.dtype != self.reference.dtype:
            raise AssertionError(
                f"{self.buffer}: dtype {actual.dtype}, expected {self.reference.dtype}"
            )
        if self.rtol == 0.0 and self.atol == 0.0:
            np.testing.assert_array_equal(actual, self.reference, err_msg=self.buffer)
        else:
            np.testing.assert_allclose(
                actual, self.reference, rtol=self.rtol, atol=self.atol, err_msg=self.buffer
            )


@dataclass(frozen=True)
class Launch:
    """One kernel launch: arguments in parameter order, geometry and expected outputs."""

    args: tuple[Arg, ...]
    grid: Dim3
    block: Dim3
    expected: tuple[Expected, ...]
    shared_bytes: int = 0  # CUDA dynamic shared memory

    @property
    def buffers(self) -> tuple[Buffer, ...]:
        return tuple(arg for arg in self.args if isinstance(arg, Buffer))

    @property
    def outputs(self) -> tuple[Buffer, ...]:
        return tuple(buffer for buffer in self.buffers if buffer.output)

    def check(self, outputs: Mapping[str, np.ndarray]) -> None:
        """Compare read-back output buffers (by name) with the references."""
        missing = {e.buffer for e in self.expected} - set(outputs)
        if missing:
            raise AssertionError(f"outputs not read back: {sorted(missing)}")
        for expected in self.expected:
            expected.check(outputs[expected.buffer])


@dataclass(frozen=True)
class CudaCase:
    name: str
    source: Path
    kernel: str
    sizes: tuple[Size, ...]
    build: Callable[[Any, np.random.Generator], Launch]
    # Bytes of static __shared__ data: what the compiled kernel's shared-memory window must
    # hold besides `Launch.shared_bytes` of dynamic shared memory.
    static_shared_bytes: int = 0

    def launch_for(self, size: Size, seed: int = 0) -> Launch:
        """The launch for one size; inputs are deterministic in (case, size, seed)."""
        key = [zlib.crc32(self.name.encode()), zlib.crc32(repr(size).encode()), seed]
        return self.build(size, np.random.default_rng(key))


# --- exact float32 arithmetic the kernels do --------------------------------------------------


def fma_f32(a: Any, b: Any, c: Any) -> np.ndarray:
    """Correctly rounded float32 fma(a, b, c) (round to nearest even), elementwise.

    a*b is exact in float64 (24 + 24 significand bits). p + c rounded to float64 and then to
    float32 can round twice, wrongly, only when the float64 sum lands exactly on a float32
    midpoint; TwoSum gives the float64 sum's exact error, whose sign settles those ties.
    """
    a64, b64, c64 = (np.asarray(v, dtype=np.float32).astype(np.float64) for v in (a, b, c))
    p = a64 * b64
    s = p + c64
    bv = s - p
    error = (p - (s - bv)) + (c64 - bv)  # TwoSum: s + error == p + c exactly
    r = s.astype(np.float32)
    r64 = r.astype(np.float64)
    direction = np.where(s > r64, np.float32(np.inf), np.float32(-np.inf))
    other = np.nextafter(r, direction)
    with np.errstate(invalid="ignore", over="ignore"):
        midpoint = (r64 + other.astype(np.float64)) / 2
    tie = (s == midpoint) & (error != 0) & np.isfinite(s)
    if np.any(tie):
        upper, lower = np.maximum(r, other), np.minimum(r, other)
        r = np.where(tie, np.where(error > 0, upper, lower), r)
    return np.asarray(r, dtype=np.float32)


def _blocks(n: int, block: int) -> int:
    return (n + block - 1) // block


# --- the kernels -------------------------------------------------------------------------------


def _vector_add(n: int, rng: np.random.Generator) -> Launch:
    block = 256
    a = rng.standard_normal(n, dtype=np.float32)
    b = rng.standard_normal(n, dtype=np.float32)
    return Launch(
        args=(
            Buffer("a", a),
            Buffer("b", b),
            Buffer("c", np.zeros(n, np.float32), output=True),
            Scalar("n", np.int32(n)),
        ),
        grid=(_blocks(n, block), 1, 1),
        block=(block, 1, 1),
        expected=(Expected("c", a + b),),  # one float32 add: exact
    )


def _saxpy(n: int, rng: np.random.Generator) -> Launch:
    block = 256
    # Capped grid: large sizes go round the grid-stride loop several times.
    grid = min(_blocks(n, block), 16)
    a = np.float32(rng.uniform(-4, 4))
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    return Launch(
        args=(
            Scalar("n", np.int32(n)),
            Scalar("a", a),
            Buffer("x", x),
            Buffer("y", y, output=True),
        ),
        grid=(grid, 1, 1),
        block=(block, 1, 1),
        expected=(Expected("y", fma_f32(a, x, y)),),  # fma.rn.f32, one rounding
    )


def block_reduce_reference(data: np.ndarray, block: int) -> np.ndarray:
    """Per-block sums in block_reduce.cu's own order: shared tree down to 64, then
    v = s[t] + s[t+32] and the __shfl_down_sync butterfly (lanes past 31 keep their value)."""
    blocks = _blocks(data.size, block)
    s = np.zeros(blocks * block, np.float32)
    s[: data.size] = data
    s = s.reshape(blocks, block)
    width = block // 2
    while width > 32:
        s[:, :width] = s[:, :width] + s[:, width : 2 * width]
        width //= 2
    v = s[:, :32] + s[:, 32:64]
    for offset in (16, 8, 4, 2, 1):
        shuffled = v.copy()
        shuffled[:, : 32 - offset] = v[:, offset:]
        v = v + shuffled
    return v[:, 0].copy()


def _block_reduce(size: tuple[int, int], rng: np.random.Generator) -> Launch:
    n, block = size
    blocks = _blocks(n, block)
    data = rng.standard_normal(n, dtype=np.float32)
    return Launch(
        args=(
            Buffer("in", data),
            Buffer("partial", np.zeros(blocks, np.float32), output=True),
            Scalar("n", np.int32(n)),
        ),
        grid=(blocks, 1, 1),
        block=(block, 1, 1),
        shared_bytes=block * 4,  # extern __shared__ float sdata[blockDim.x]
        expected=(Expected("partial", block_reduce_reference(data, block)),),
    )


def _histogram(n: int, rng: np.random.Generator) -> Launch:
    block = 256
    grid = min(_blocks(n, block), 32)
    data = rng.integers(0, 256, n, dtype=np.uint8)
    data[::3] = 42  # one hot bin: many threads hitting one address at once
    bins = np.zeros(256, np.uint32)
    return Launch(
        args=(
            Buffer("data", data),
            Scalar("n", np.uint32(n)),
            Buffer("bins", bins, output=True),
        ),
        grid=(grid, 1, 1),
        block=(block, 1, 1),
        expected=(Expected("bins", np.bincount(data, minlength=256).astype(np.uint32)),),
    )


def matmul_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A @ B in matmul_tiled.cu's order: acc = fma(A[i,k], B[k,j], acc) for k = 0, 1, ...

    (the zero padding of partial tiles adds fma(0, 0, acc) == acc, so it changes nothing)."""
    m, n = a.shape[0], b.shape[1]
    acc = np.zeros((m, n), np.float32)
    for k in range(a.shape[1]):
        acc = fma_f32(a[:, k : k + 1], b[k : k + 1, :], acc)
    return acc


def _matmul_tiled(size: tuple[int, int, int], rng: np.random.Generator) -> Launch:
    m, n, k = size
    tile = 16
    a = rng.uniform(-1, 1, (m, k)).astype(np.float32)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float32)
    return Launch(
        args=(
            Buffer("A", a),
            Buffer("B", b),
            Buffer("C", np.zeros((m, n), np.float32), output=True),
            Scalar("M", np.int32(m)),
            Scalar("N", np.int32(n)),
            Scalar("K", np.int32(k)),
        ),
        grid=(_blocks(n, tile), _blocks(m, tile), 1),
        block=(tile, tile, 1),
        expected=(Expected("C", matmul_reference(a, b)),),
    )


CASES: dict[str, CudaCase] = {
    case.name: case
    for case in (
        CudaCase(
            name="vector_add",
            source=CUDA_DIR / "vector_add.cu",
            kernel="vector_add",
            sizes=(1, 255, 256, 1000, 4097, 65539),
            build=_vector_add,
        ),
        CudaCase(
            name="saxpy",
            source=CUDA_DIR / "saxpy.cu",
            kernel="saxpy",
            sizes=(1, 1000, 4097, 100_003),
            build=_saxpy,
        ),
        CudaCase(
            name="block_reduce",
            source=CUDA_DIR / "block_reduce.cu",
            kernel="block_reduce",
            # (n, blockDim.x): blockDim.x a power of two >= 64
            sizes=((1, 256), (100, 64), (256, 256), (1000, 128), (4097, 256), (50_000, 512)),
            build=_block_reduce,
        ),
        CudaCase(
            name="histogram",
            source=CUDA_DIR / "histogram.cu",
            kernel="histogram",
            sizes=(1, 255, 1000, 65_537, (1 << 20) + 5),
            build=_histogram,
        ),
        CudaCase(
            name="matmul_tiled",
            source=CUDA_DIR / "matmul_tiled.cu",
            kernel="matmul_tiled",
            # (M, N, K)
            sizes=((1, 1, 1), (16, 16, 16), (17, 33, 15), (64, 48, 80), (100, 37, 129)),
            build=_matmul_tiled,
            static_shared_bytes=2 * 16 * 16 * 4,  # As and Bs
        ),
    )
}


def case_sizes() -> list[tuple[CudaCase, Size]]:
    """Every (case, size) pair, for pytest parametrisation; see `case_id`."""
    return [(case, size) for case in CASES.values() for size in case.sizes]


def case_id(case: CudaCase, size: Size) -> str:
    dims = size if isinstance(size, tuple) else (size,)
    return f"{case.name}-{'x'.join(map(str, dims))}"


# --- helpers for the end-to-end tests ----------------------------------------------------------

NVCC_ARCH = "sm_80"


def compile_ptx(case: CudaCase, out_dir: Path) -> Path:
    """`nvcc -ptx -arch=sm_80` of the case's source; raises with nvcc's output on failure."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise FileNotFoundError("nvcc not on PATH")
    ptx = out_dir / f"{case.source.stem}.ptx"
    result = subprocess.run(
        [nvcc, "-ptx", f"-arch={NVCC_ARCH}", str(case.source), "-o", str(ptx)],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"nvcc failed on {case.source}:\n{result.stdout}{result.stderr}")
    return ptx


def run_launch(
    device: Any, kernel: Any, launch: Launch, shared_window: int | None
) -> dict[str, np.ndarray]:
    """Run `launch` on an OpenCL `Device` (backends/opencl/device.py); returns the output buffers by name.

    `shared_window` is the static shared-memory size of the compiled kernel's window argument
    (None when it has none), passed through to `Device.launch`.
    """
    from zmlir.runtime.backends.opencl.device import KernelArg

    addresses: dict[str, int] = {}
    try:
        args: list[Any] = []
        for arg in launch.args:
            if isinstance(arg, Buffer):
                address = device.alloc(arg.data.nbytes)
                device.copy_to_device(address, arg.data)
                addresses[arg.name] = address
                args.append(KernelArg.ptr(address))
            else:
                args.append(arg.value)
        device.launch(
            kernel,
            grid=launch.grid,
            block=launch.block,
            args=args,
            shared_bytes=launch.shared_bytes,
            shared_window=shared_window,
        )
        return {
            buffer.name: device.copy_into(addresses[buffer.name], np.empty_like(buffer.data))
            for buffer in launch.outputs
        }
    finally:
        for address in addresses.values():
            device.free(address)
