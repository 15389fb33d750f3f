"""PTX types as MLIR types, and the sizes and literals that go with them."""

from __future__ import annotations

import struct

# PTX register/instruction type -> MLIR type.
MLIR_TYPES = {
    "pred": "i1",
    "b8": "i8", "u8": "i8", "s8": "i8",
    "b16": "i16", "u16": "i16", "s16": "i16", "f16": "f16", "bf16": "bf16",
    "b32": "i32", "u32": "i32", "s32": "i32", "f32": "f32",
    "f16x2": "i32", "bf16x2": "i32",
    "b64": "i64", "u64": "i64", "s64": "i64", "f64": "f64",
}
_TYPE_BITS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64,
              "f16": 16, "bf16": 16, "f32": 32, "f64": 64}


def mlir_type(ptx_type: str) -> str:
    return MLIR_TYPES[ptx_type]


def bits(mlir: str) -> int:
    return _TYPE_BITS[mlir]


def quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def float_of_bits(pattern: int, width: int) -> float:
    fmt = {16: "<e", 32: "<f", 64: "<d"}[width]
    ifmt = {16: "<H", 32: "<I", 64: "<Q"}[width]
    return struct.unpack(fmt, struct.pack(ifmt, pattern))[0]


def bits_of_float(value: float, width: int) -> int:
    fmt = {16: "<e", 32: "<f", 64: "<d"}[width]
    ifmt = {16: "<H", 32: "<I", 64: "<Q"}[width]
    return struct.unpack(ifmt, struct.pack(fmt, value))[0]


def element_bytes(ptx_type: str) -> int:
    return max(1, bits(mlir_type(ptx_type)) // 8)


def param_value_type(ptx_type: str, dims: tuple[int | None, ...]) -> str | None:
    """The SSA type of a `.param`: its register type, or `!llvm.array<N x i8>`
    for an aggregate (`.param .align 8 .b8 p[16]`); None if it has none."""
    if ptx_type not in MLIR_TYPES:
        return None
    if not dims:
        return mlir_type(ptx_type)
    if any(d is None for d in dims):
        return None
    return f"!llvm.array<{array_bytes(ptx_type, dims)} x i8>"


def is_aggregate(mlir: str) -> bool:
    return mlir.startswith("!llvm.array<")


def array_size(mlir: str) -> int:
    return int(mlir[len("!llvm.array<"):].split(" ", 1)[0])


def array_bytes(ptx_type: str, dims: tuple[int | None, ...]) -> int:
    n = element_bytes(ptx_type)
    for d in dims:
        n *= d or 0
    return n
