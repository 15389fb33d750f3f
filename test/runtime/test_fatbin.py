"""Fatbin parsing and which PTX the driver takes from one (fatbin.py)."""

from __future__ import annotations

import struct

import lz4.block
import pytest
import zstandard

from zmlir.runtime.cuda import fatbin


def _entry(kind: int, sm: int, payload: bytes, compression: str = "") -> bytes:
    flags, stored = 0x1, payload  # 0x1: 64-bit
    if compression == "lz4":
        flags, stored = flags | fatbin.FLAG_LZ4, lz4.block.compress(payload, store_size=False)
    elif compression == "zstd":
        flags, stored = flags | fatbin.FLAG_ZSTD, zstandard.ZstdCompressor().compress(payload)
    padded = (len(stored) + 7) // 8 * 8
    header = struct.pack("<HHIIIIIIIIIQQQ", kind, 0x101, 64, padded, 0,
                         len(stored) if compression else 0, 0, 0, sm, 0, 0, flags, 0,
                         len(payload))
    return header + stored + b"\0" * (padded - len(stored))


def _fatbin(*entries: bytes) -> bytes:
    body = b"".join(entries)
    return struct.pack("<IHHQ", fatbin.FATBIN_MAGIC, 1, 16, len(body)) + body


def _ptx(sm: int) -> bytes:
    return f"// PTX for sm_{sm}\n.version 8.0\n.target sm_{sm}\n".encode() + b"\0"


@pytest.mark.parametrize("compression", ["", "lz4", "zstd"])
def test_entries_decompress(compression: str) -> None:
    entries = fatbin.parse(_fatbin(_entry(fatbin.KIND_PTX, 90, _ptx(90) * 50, compression)))
    assert len(entries) == 1
    assert entries[0].sm == 90 and entries[0].is_ptx
    assert entries[0].ptx_text() == (_ptx(90) * 50).rstrip(b"\0").decode()


def test_newest_ptx_not_above_the_reported_capability_comes_first() -> None:
    image = _fatbin(_entry(fatbin.KIND_ELF, 80, b"\x7fELF sass"),
                    _entry(fatbin.KIND_PTX, 120, _ptx(120)),
                    _entry(fatbin.KIND_PTX, 75, _ptx(75)),
                    _entry(fatbin.KIND_PTX, 90, _ptx(90)),
                    _entry(fatbin.KIND_PTX, 80, _ptx(80)))
    order = [e.sm for e in fatbin.ptx_candidates(fatbin.parse(image), 80)]
    # What NVIDIA's driver would JIT, then the newer ones with the fewest new
    # instructions first; SASS never.
    assert order == [80, 75, 90, 120]


def test_ptx_newer_than_the_reported_capability_is_taken() -> None:
    # -arch=sm_90 and NVIDIA's libraries (compute_120 only) carry no older PTX.
    image = _fatbin(_entry(fatbin.KIND_ELF, 90, b"\x7fELF sass"),
                    _entry(fatbin.KIND_PTX, 120, _ptx(120), "zstd"))
    assert [e.sm for e in fatbin.ptx_candidates(fatbin.parse(image), 80)] == [120]


def test_sass_only_fatbin_says_what_it_holds() -> None:
    image = _fatbin(_entry(fatbin.KIND_ELF, 90, b"\x7fELF sass"),
                    _entry(fatbin.KIND_ELF, 100, b"\x7fELF sass"))
    with pytest.raises(fatbin.FatbinError, match=r"no PTX .*SASS sm_100, SASS sm_90"):
        fatbin.ptx_candidates(fatbin.parse(image), 80)


def test_corrupt_lz4_entry_is_a_fatbin_error() -> None:
    # Found when the entry is read: entries are decompressed on first use.
    entry = bytearray(_entry(fatbin.KIND_PTX, 80, _ptx(80) * 20, "lz4"))
    entry[64:72] = b"\xff" * 8
    with pytest.raises(fatbin.FatbinError, match="corrupt LZ4"):
        fatbin.parse(_fatbin(bytes(entry)))[0].ptx_text()
