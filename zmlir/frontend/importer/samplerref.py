"""`.samplerref` variables: independent texture mode's samplers.

    .global .samplerref smp = { addr_mode_0 = clamp_to_edge, filter_mode = linear,
                                force_unnormalized_coords = 1 };
    tex.2d.v4.f32.f32 d, [tex, smp, {x, y}];

A sampler is a texture descriptor (docs/textures.md) of which only the
sampler's fields are set: the filter mode and force_unnormalized_coords in
the flags, the address modes, a zero border colour. Its initializer is all
there is to it (no driver call changes one), so the importer writes it as
the variable's initial bytes, and `txq` on it is a constant. A field the
initializer leaves out reads as a CUDA texture reference's default does:
clamp to edge, nearest."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from zmlir.frontend import ast

# Descriptor offsets and flags (runtime/cuda/texture.py's _DESCRIPTOR,
# lowering/Texture.cpp's desc::; test_texture_descriptor checks).
FLAGS, ADDR_MODES = 52, 56
LINEAR, FORCE_UNNORMALIZED = 2, 8
DESCRIPTOR_BYTES = 128

# PTX's address modes: (the descriptor's CU_TR_ADDRESS_MODE, txq's value,
# the enum's order in the PTX ISA).
_ADDRESS_MODES = {"wrap": (0, 0), "mirror": (2, 1), "clamp_to_edge": (1, 3),
                  "clamp_to_border": (3, 4)}
_FILTER_MODES = {"nearest": 0, "linear": 1}


@dataclass(frozen=True)
class Sampler:
    """A `.samplerref`'s settings, as PTX names them."""

    addr_modes: tuple[str, str, str] = ("clamp_to_edge",) * 3
    filter_mode: str = "nearest"
    force_unnormalized_coords: int = 0

    def descriptor(self) -> bytes:
        flags = (LINEAR if self.filter_mode == "linear" else 0) | \
            (FORCE_UNNORMALIZED if self.force_unnormalized_coords else 0)
        data = bytearray(DESCRIPTOR_BYTES)
        struct.pack_into("<I", data, FLAGS, flags)
        struct.pack_into("<3I", data, ADDR_MODES,
                         *(_ADDRESS_MODES[m][0] for m in self.addr_modes))
        return bytes(data)

    def query(self, name: str) -> int | None:
        """`txq.NAME` on the sampler (PTX's enums), or None for a query a
        sampler has no answer to."""
        if name == "force_unnormalized_coords":
            return self.force_unnormalized_coords
        if name == "filter_mode":
            return _FILTER_MODES[self.filter_mode]
        if name.startswith("addr_mode_"):
            return _ADDRESS_MODES[self.addr_modes[int(name[-1])]][1]
        return None


def parse(var: ast.VarDecl) -> Sampler | str:
    """The sampler `var` declares, or what in it is unsupported."""
    if var.space != "global" or var.dims or var.attributes or var.linkage == "extern":
        return "only a plain .global definition"
    fields = var.init if isinstance(var.init, tuple) else () if var.init is None else (var.init,)
    modes = list(Sampler.addr_modes)
    filter_mode, force = Sampler.filter_mode, 0
    for f in fields:
        if not isinstance(f, ast.InitField):
            return "an initializer that is not a list of fields"
        value = f.value.name if isinstance(f.value, ast.Sym) else f.value
        if f.name in ("addr_mode_0", "addr_mode_1", "addr_mode_2"):
            if value not in _ADDRESS_MODES:
                return f"{f.name} = {value}"
            modes[int(f.name[-1])] = str(value)
        elif f.name == "filter_mode" and value in _FILTER_MODES:
            filter_mode = str(value)
        elif f.name == "force_unnormalized_coords" and value in (0, 1):
            force = int(value)  # type: ignore[arg-type]
        else:
            return f"{f.name} = {value}"
    return Sampler((modes[0], modes[1], modes[2]), filter_mode, force)
