"""The texture descriptor the driver writes (runtime/cuda/texture.py) has
the layout the lowering reads (lowering/Texture.cpp's `desc::` offsets,
docs/textures.md), and arrays record theirs."""

from __future__ import annotations

import re
import struct
from pathlib import Path

from zmlir.runtime.cuda import texture

LOWERING = Path(texture.__file__).resolve().parents[2] / "lowering" / "Texture.cpp"

# Field -> its index in texture._DESCRIPTOR's pack order.
FIELDS = {"kData": 0, "kPitch": 1, "kSlice": 2, "kWidth": 3, "kKind": 7, "kElemBytes": 8,
          "kChannels": 9, "kFlags": 10, "kAddrModes": 11, "kTexelBytes": 14, "kBorder": 15,
          "kFormat": 19}


def offsets_in(fmt: str) -> list[int]:
    """The byte offset of each field of a little-endian struct format."""
    codes = fmt.lstrip("<").replace(" ", "")
    offsets, at = [], 0
    for code in codes:
        offsets.append(at)
        at += struct.calcsize("<" + code)
    return offsets


def test_offsets_match_the_lowering() -> None:
    cpp = dict(re.findall(r"constexpr int64_t (k\w+) = (\d+);", LOWERING.read_text()))
    offsets = offsets_in(texture._DESCRIPTOR.format)
    assert {name: int(cpp[name]) for name in FIELDS} == \
        {name: offsets[index] for name, index in FIELDS.items()}
    assert texture._DESCRIPTOR.size <= texture.DESCRIPTOR_BYTES


def test_flags_match_the_lowering() -> None:
    text = LOWERING.read_text()
    assert f"kNormalizedCoords = {texture.DESC_NORMALIZED_COORDS}" in text
    assert f"kLinear = {texture.DESC_LINEAR}" in text
    assert f"kReadNormalized = {texture.DESC_READ_NORMALIZED}" in text


def test_array_layouts() -> None:
    # A layered 1D array of 3 layers of 10 float2s: one row per layer.
    a = texture.Array(0, 10, 0, 3, 0x20, 2, texture.LAYERED)
    assert (a.texel_bytes, a.pitch, a.slice, a.slices, a.nbytes) == (8, 80, 80, 3, 240)
    # A cube map of 4x4 uchar4 faces.
    c = texture.Array(0, 4, 4, 6, 0x01, 4, texture.CUBEMAP)
    assert (c.pitch, c.slice, c.nbytes) == (16, 64, 384)


def test_mipmap_fields_match_the_importer() -> None:
    # frontend/importer/mipmap.py reads the mipmap fields the driver packs
    # after the descriptor (texture._MIPMAP), and level 0's extent and flags.
    from zmlir.frontend.importer import mipmap

    at = [texture.MIPMAP_OFFSET + o for o in offsets_in(texture._MIPMAP.format)]
    assert at == [mipmap.LEVELS, mipmap.LOD_BIAS, mipmap.MIN_CLAMP, mipmap.MAX_CLAMP,
            mipmap.MIP_FILTER, mipmap.LEVEL_TABLE]
    assert at[-1] + 8 <= texture.DESCRIPTOR_BYTES == mipmap.DESCRIPTOR_BYTES
    base = offsets_in(texture._DESCRIPTOR.format)
    assert (base[FIELDS["kWidth"]], base[FIELDS["kFlags"]]) == (mipmap.EXTENT, mipmap.FLAGS)
    assert mipmap.NORMALIZED_COORDS == texture.DESC_NORMALIZED_COORDS


def test_sampler_fields_match_the_lowering() -> None:
    # frontend/importer/samplerref.py writes a `.samplerref`'s descriptor:
    # the flags and address modes where the driver packs a texture's, the
    # sampler's own flag (force_unnormalized_coords) the lowering's.
    from zmlir.frontend.importer import samplerref

    base = offsets_in(texture._DESCRIPTOR.format)
    assert (base[FIELDS["kFlags"]], base[FIELDS["kAddrModes"]]) == \
        (samplerref.FLAGS, samplerref.ADDR_MODES)
    assert samplerref.LINEAR == texture.DESC_LINEAR
    assert f"kForceUnnormalized = {samplerref.FORCE_UNNORMALIZED}" in LOWERING.read_text()
    assert samplerref.DESCRIPTOR_BYTES == texture.DESCRIPTOR_BYTES
    # Every mode the sampler writes is one the sampler reads (CU_TR_ADDRESS_MODE).
    smp = samplerref.Sampler(("wrap", "mirror", "clamp_to_border"), "linear", 1)
    assert struct.unpack_from("<4I", smp.descriptor(), samplerref.FLAGS) == (10, 0, 2, 3)
