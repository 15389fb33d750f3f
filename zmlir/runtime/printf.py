"""Device printf on the host: CUDA's vprintf formats, and the records
kernels write to the driver's printf buffer (zmlir/lowering/DeviceServices.h
gives the layout, zmlir/runtime/cuda/printf.py reads the buffer).

As on NVIDIA's driver, the final formatting takes place on the host with the
host's C library: each conversion is libc's snprintf of the conversion as
written and its argument. `parse` reads a format as the compiler laid its
arguments out (DeviceServices.cpp, `layoutFormat`, keeps the same rules):

    %[flags][width][.precision][length]conversion

A `*` width or precision is an int argument before the value; d i o u x X c
take an int (4 bytes; 8 with l, ll, q, j, z, Z, t or L), f F e E g G a A a
double, s p n a 64-bit pointer, %% nothing; each argument sits at an offset
aligned to its size (the CUDA ABI). An unknown conversion, an incomplete one
at the end, and every conversion after the 32nd argument are printed as
written (NVIDIA's driver passes no more than 32 either, and printed garbage
for a 33rd and 34th %d on an H200: ours never prints garbage). %s strings are
copied into the record whole when printf runs (a null pointer stores none:
"(null)"); a record whose strings do not fit the buffer is dropped whole.
%n writes nothing.

The records of a failed assert (the format ASSERT_FORMAT) go to stderr, as
NVIDIA's driver prints them; every other record goes to stdout.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

MAX_ARGS = 32
# NVIDIA's assert message (DeviceServices.cpp, kAssertFormat).
ASSERT_FORMAT = b"%s:%d: %s: block: [%d,%d,%d], thread: [%d,%d,%d] Assertion `%s` failed.\n"
# Bytes of a record's header: u32 size, u32 module id, u32 format index, u32 zero.
RECORD_HEADER = 16
# Bytes of the buffer's header: u64 head (bytes reserved), u64 capacity.
BUFFER_HEADER = 16

_FLAGS = b"-+ #0'I"
_DIGITS = b"0123456789"
_LENGTHS = b"hlLqjzZt"
_INTS = b"diouxXc"
_FLOATS = b"fFeEgGaA"
_POINTERS = b"spn"


class FormatError(ValueError):
    """A format CUDA's printf cannot pass (the compiler rejects it too)."""


@dataclass(frozen=True)
class Conversion:
    spec: bytes  # as written, e.g. b"%-*.3lld"
    conversion: str  # "d", "s", ...
    kind: str  # "int", "double", "string", "pointer" or "count" (%n)
    size: int  # bytes of the value: 4 or 8
    offsets: tuple[int, ...]  # each `*` argument's offset, then the value's


@dataclass(frozen=True)
class Format:
    pieces: tuple[bytes | Conversion, ...]
    args_bytes: int  # the argument buffer's size
    is_assert: bool = False  # a failed assert's message (ASSERT_FORMAT): stderr

    @property
    def strings(self) -> int:
        return sum(1 for p in self.pieces if isinstance(p, Conversion) and p.kind == "string")


def parse(fmt: bytes) -> Format:
    """The pieces of `fmt` (literal bytes and conversions) with their
    arguments' offsets."""
    pieces: list[bytes | Conversion] = []
    literal = bytearray()
    offset = count = 0
    i, n = 0, len(fmt)

    def place(size: int) -> int:
        nonlocal offset, count
        offset = -(-offset // size) * size
        at = offset
        offset += size
        count += 1
        return at

    while i < n:
        if fmt[i] != ord("%"):
            literal.append(fmt[i])
            i += 1
            continue
        start = i
        i += 1
        while i < n and fmt[i] in _FLAGS:
            i += 1
        stars = 0
        if i < n and fmt[i] == ord("*"):
            stars += 1
            i += 1
        else:
            while i < n and fmt[i] in _DIGITS:
                i += 1
            if i < n and fmt[i] == ord("$"):
                raise FormatError(f"numbered argument in {fmt[start:i + 1].decode('latin-1')!r}")
        if i < n and fmt[i] == ord("."):
            i += 1
            if i < n and fmt[i] == ord("*"):
                stars += 1
                i += 1
            else:
                while i < n and fmt[i] in _DIGITS:
                    i += 1
        length_start = i
        while i < n and fmt[i] in _LENGTHS:
            i += 1
        length = fmt[length_start:i]
        if i >= n:
            literal += fmt[start:]  # an incomplete conversion is printed as written
            break
        conv = fmt[i]
        i += 1
        spec = fmt[start:i]
        if conv == ord("%"):
            literal += b"%"
            continue
        if ((conv in _FLOATS and b"L" in length) or (conv in b"cs" and length)
                or conv in b"CS"):
            raise FormatError(f"conversion {spec.decode('latin-1')!r} (CUDA's printf passes no "
                              "long double or wide characters)")
        if conv not in _INTS + _FLOATS + _POINTERS:
            literal += spec
            continue
        if count + stars + 1 > MAX_ARGS:
            literal += spec  # CUDA ignores arguments past the 32nd
            continue
        star_offsets = tuple(place(4) for _ in range(stars))
        wide = length not in (b"", b"h", b"hh")
        if conv in _INTS:
            kind, size = "int", 8 if wide else 4
        elif conv in _FLOATS:
            kind, size = "double", 8
        else:
            kind, size = {ord("s"): "string", ord("p"): "pointer", ord("n"): "count"}[conv], 8
        if literal:
            pieces.append(bytes(literal))
            literal.clear()
        pieces.append(Conversion(spec, chr(conv), kind, size, (*star_offsets, place(size))))
    if literal:
        pieces.append(bytes(literal))
    return Format(tuple(pieces), offset, fmt == ASSERT_FORMAT)


# -- formatting ------------------------------------------------------------------

_libc: ctypes.CDLL | None = None


def _snprintf() -> Callable[..., int]:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None)
        _libc.snprintf.restype = ctypes.c_int
    return _libc.snprintf


def _c_format(spec: bytes, args: Sequence[object]) -> bytes:
    """libc's snprintf of one conversion."""
    snprintf = _snprintf()
    size = snprintf(None, 0, spec, *args)
    if size < 0:
        return spec  # the C library rejects it: as written
    out = ctypes.create_string_buffer(size + 1)
    snprintf(out, size + 1, spec, *args)
    return out.raw[:size]


def format_args(fmt: Format, args: bytes, strings: Sequence[bytes | None]) -> bytes:
    """`fmt` with the argument buffer `args` (vprintf's layout) and the
    values of its %s arguments in order (None: a null pointer)."""
    out = bytearray()
    pending = iter(strings)
    for piece in fmt.pieces:
        if isinstance(piece, bytes):
            out += piece
            continue
        *stars, at = piece.offsets
        values: list[object] = [ctypes.c_int(struct.unpack_from("<i", args, s)[0]) for s in stars]
        if piece.kind == "int":
            if piece.size == 4:
                values.append(ctypes.c_int(struct.unpack_from("<i", args, at)[0]))
            else:
                values.append(ctypes.c_longlong(struct.unpack_from("<q", args, at)[0]))
        elif piece.kind == "double":
            values.append(ctypes.c_double(struct.unpack_from("<d", args, at)[0]))
        elif piece.kind == "string":
            values.append(ctypes.c_char_p(next(pending, None)))
        elif piece.kind == "pointer":
            values.append(ctypes.c_void_p(struct.unpack_from("<Q", args, at)[0] or None))
        else:
            continue  # %n: nothing to print, nowhere to write
        out += _c_format(piece.spec, values)
    return bytes(out)


# -- records ---------------------------------------------------------------------

def decode(records: bytes, formats: Callable[[int, int], Format | None]) -> tuple[bytes, int]:
    """The output of the records in `records` (the buffer's record bytes,
    zeros after the last) and how many records could not be read (an unknown
    module or format; a damaged record, where the walk stops).
    `formats(module id, index)` gives a record's format."""
    outputs, bad = decode_records(records, formats)
    return b"".join(text for _, text in outputs), bad


def decode_records(records: bytes, formats: Callable[[int, int], Format | None]
                   ) -> tuple[list[tuple[Format, bytes]], int]:
    """As `decode`, each record's output apart with its format."""
    out: list[tuple[Format, bytes]] = []
    at, bad = 0, 0
    while at + RECORD_HEADER <= len(records):
        size, module, index, _ = struct.unpack_from("<IIII", records, at)
        if size == 0:  # where the records end (a dropped one was never written)
            break
        if size < RECORD_HEADER or size % 8 or at + size > len(records):
            return out, bad + 1
        fmt = formats(module, index)
        body = records[at + RECORD_HEADER:at + size]
        at += size
        if fmt is None or len(body) < fmt.args_bytes:
            bad += 1
            continue
        args = body[:fmt.args_bytes]
        strings: list[bytes | None] = []
        tail = -(-fmt.args_bytes // 8) * 8
        for piece in fmt.pieces:
            if not isinstance(piece, Conversion) or piece.kind != "string":
                continue
            if struct.unpack_from("<Q", args, piece.offsets[-1])[0] == 0:
                strings.append(None)
                continue
            end = body.find(b"\0", tail)
            if end < 0:
                end = len(body)
            strings.append(body[tail:end])
            tail = end + 1
        out.append((fmt, format_args(fmt, args, strings)))
    return out, bad


def record(module: int, index: int, fmt: Format, args: bytes,
           strings: Sequence[bytes | None] = ()) -> bytes:
    """A record as a kernel writes it (for tests and tools): `args` is the
    argument buffer, `strings` the %s arguments' bytes (None: null)."""
    args = args.ljust(fmt.args_bytes, b"\0")[:fmt.args_bytes]
    tail = b"".join(s + b"\0" for s in strings if s is not None)
    body = args.ljust(-(-len(args) // 8) * 8, b"\0") + tail
    size = RECORD_HEADER + -(-len(body) // 8) * 8
    return struct.pack("<IIII", size, module, index, 0) + body.ljust(size - RECORD_HEADER, b"\0")
