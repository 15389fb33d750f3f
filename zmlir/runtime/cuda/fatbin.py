"""Fatbinaries: the containers nvcc embeds in host programs.

A host program registers a `__fatBinC_Wrapper_t` (magic 0x466243B1) whose
`data` points at a fatbin: a 16-byte header (magic 0xBA55ED50, version 1,
header size, size of what follows) and then entries, each with its own
header (kind 1 = PTX, 2 = ELF/SASS; the SM it is for; flags saying 64-bit and
whether the payload is LZ4- or zstd-compressed). nvcc 12 compresses with
LZ4 (block format), nvcc 13 with zstd. We compile PTX: SASS is NVIDIA
machine code, which only a backend running it as it is (the passthrough,
native.py) loads, with NVIDIA's own loader, when no PTX of the image loads.

Which PTX: any architecture's. The compute capability the driver reports
(attributes.presented_sm: constants.COMPUTE_CAPABILITY, or the passthrough's
GPU) is what programs plan for; it does not limit
which PTX we compile, since PTX for a newer architecture compiles as long as
every instruction in it is one we lower. `ptx_candidates` orders them: the
newest PTX not above the reported capability first (what NVIDIA's driver
would JIT), then the newer ones, oldest first (the fewest new instructions).

An image with SASS alone has nothing we run (CUDA_ERROR_NO_BINARY_FOR_GPU).
Libraries that choose such images by the compute capability (libcurand) are
told one they have no SASS for under `zmlir run`, so that they load their
PTX (arch_preload.c; docs/driver-differences.md).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import cached_property

WRAPPER_MAGIC = 0x466243B1
FATBIN_MAGIC = 0xBA55ED50
KIND_PTX = 1
KIND_ELF = 2
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000
_HEADER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIIIIIIIIIQQQ")


class FatbinError(ValueError):
    """A malformed fatbin, or one with nothing we can run."""


@dataclass(frozen=True)
class Entry:
    kind: int  # KIND_PTX or KIND_ELF
    sm: int  # e.g. 80 for sm_80 / compute_80
    flags: int
    stored: bytes  # as in the fatbin, compressed or not
    size: int  # decompressed

    @cached_property
    def payload(self) -> bytes:
        """Decompressed on first use: a library's fatbin holds SASS for many
        GPUs that nobody reads."""
        return _decompress(self.flags, self.stored, self.size)

    @property
    def is_ptx(self) -> bool:
        return self.kind == KIND_PTX

    def ptx_text(self) -> str:
        return self.payload.rstrip(b"\0").decode("utf-8", errors="replace")


def fatbin_size(header: bytes) -> int:
    """Total size of a fatbin given at least its 16-byte header."""
    magic, _, header_size, files_size = _HEADER.unpack_from(header)
    if magic != FATBIN_MAGIC:
        raise FatbinError(f"not a fatbin (magic 0x{magic:08X})")
    return header_size + files_size


def _decompress(flags: int, data: bytes, size: int) -> bytes:
    if flags & FLAG_ZSTD:
        import zstandard

        try:
            return zstandard.ZstdDecompressor().decompress(data, max_output_size=max(size, 1))
        except zstandard.ZstdError as err:
            raise FatbinError(f"corrupt zstd-compressed fatbin entry: {err}") from None
    if flags & FLAG_LZ4:
        import lz4.block

        try:
            return lz4.block.decompress(data, uncompressed_size=size)
        except lz4.block.LZ4BlockError as err:
            raise FatbinError(f"corrupt LZ4-compressed fatbin entry: {err}") from None
    return data


def parse(data: bytes) -> list[Entry]:
    """The entries of one fatbin (`data` starts at its header)."""
    if len(data) < _HEADER.size:
        raise FatbinError("truncated fatbin header")
    magic, version, header_size, files_size = _HEADER.unpack_from(data)
    if magic != FATBIN_MAGIC:
        raise FatbinError(f"not a fatbin (magic 0x{magic:08X})")
    if version != 1:
        raise FatbinError(f"unsupported fatbin version {version}")
    end = header_size + files_size
    if end > len(data):
        raise FatbinError("truncated fatbin")
    entries = []
    offset = header_size
    while offset + _ENTRY.size <= end:
        (kind, _, entry_header, padded, _, payload_size, _, _, sm, _, _, flags, _,
         uncompressed) = _ENTRY.unpack_from(data, offset)
        start = offset + entry_header
        # Compressed entries give their compressed size; plain ones only the
        # padded size of the space they take.
        size = payload_size if flags & (FLAG_ZSTD | FLAG_LZ4) else padded
        if entry_header < _ENTRY.size or start + size > end:
            raise FatbinError(f"corrupt fatbin entry at offset {offset}")
        entries.append(Entry(kind, sm, flags, bytes(data[start:start + size]), uncompressed))
        offset = start + max(padded, payload_size)
    return entries


def ptx_candidates(entries: list[Entry], reported_sm: int) -> list[Entry]:
    """The PTX entries in the order to try them (see the module's docstring);
    FatbinError if there is none."""
    ptx = [e for e in entries if e.is_ptx]
    if not ptx:
        kinds = ", ".join(sorted({f"SASS sm_{e.sm}" for e in entries}))
        raise FatbinError(f"no PTX in this fatbin (it holds: {kinds or 'nothing'}), only "
                          f"NVIDIA machine code; rebuild with PTX, e.g. -gencode "
                          f"arch=compute_{reported_sm},code=compute_{reported_sm}")
    older = sorted((e for e in ptx if e.sm <= reported_sm), key=lambda e: -e.sm)
    newer = sorted((e for e in ptx if e.sm > reported_sm), key=lambda e: e.sm)
    return older + newer
