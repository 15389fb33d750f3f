"""Mipmapped lookups, `tex.level` and `tex.grad`, as ops: the level of
detail, the one or two levels it falls between, a `ptx.tex` on each level's
descriptor and their blend.

    tex.level.geom.v4.dtype.f32  d, [tex, {coords}], lod
    tex.grad.geom.v4.dtype.f32   d, [tex, {coords}], {dPdx}, {dPdy}

A mipmapped texture's descriptor (docs/textures.md; runtime/cuda/texture.py)
is its level 0's, with the number of levels, the LOD bias and clamps, the
mipmap filter and the address of a table of one descriptor per level. Any
other texture has 0 levels there and is its own only level, so these
lookups read it as `tex` would (NVIDIA reads level 0 of such a texture).

The level of detail: `tex.grad`'s is log2 of the footprint's length in
texels, NVIDIA's approximation of it (gradient_lod; isotropic:
maxAnisotropy is not used; on a cube map from finite differences of face
coordinates, cube_gradients); the bias is added,
then the clamps [minMipmapLevelClamp, maxMipmapLevelClamp] and [0, levels -
1]; point mipmap filtering takes the nearest level, linear blends the two
around it with a weight truncated to 1/256 (as an H200 does)."""

from __future__ import annotations

import struct

from zmlir.frontend import ast
from zmlir.frontend.importer.core import FunctionImporter
from zmlir.frontend.ssa import Value

# Descriptor offsets (texture.py's _DESCRIPTOR; test_texture_descriptor checks).
EXTENT, FLAGS, LEVELS, LOD_BIAS, MIN_CLAMP, MAX_CLAMP, MIP_FILTER, LEVEL_TABLE = \
    24, 52, 92, 96, 100, 104, 108, 112
DESCRIPTOR_BYTES = 128
NORMALIZED_COORDS = 1  # descriptor flag


class _Ops:
    """Op text for the expansion, at one instruction's location."""

    def __init__(self, imp: FunctionImporter, loc: ast.SourceLoc) -> None:
        self.imp, self.loc = imp, loc

    def emit(self, type_: str, template: str, *args: Value) -> Value:
        v = self.imp.new_value(type_)
        self.imp.emit([v], template, list(args), self.loc)
        return v

    def f32(self, value: float) -> Value:
        bits = int.from_bytes(struct.pack("<f", value), "little")
        return self.emit("f32", f"arith.constant 0x{bits:08X} : f32")

    def i32(self, value: int) -> Value:
        return self.emit("i32", f"arith.constant {value} : i32")

    def load(self, address: Value, offset: int, ptx_type: str, type_: str) -> Value:
        return self.emit(type_, f"ptx.ld {{0}} {{{{offset = {offset} : i64, space = "
                                f"#ptx.space<global>, type = #ptx.type<{ptx_type}>}}}} : "
                                f"i64 -> {type_}", address)

    def binary(self, op: str, a: Value, b: Value, ptx_type: str = "f32") -> Value:
        suffix = f" -> {a.type}" if op == "mul" else ""
        return self.emit(a.type, f"ptx.{op} {{0}}, {{1}} {{{{type = #ptx.type<{ptx_type}>}}}} : "
                                 f"{a.type}{suffix}", a, b)

    def fma(self, a: Value, b: Value, c: Value) -> Value:
        return self.emit("f32", "ptx.fma {0}, {1}, {2} {{rnd = #ptx.rnd<rn>, type = "
                                "#ptx.type<f32>}} : f32", a, b, c)

    def cvt(self, a: Value, rnd: str | None, src: str, dst: str, type_: str) -> Value:
        attrs = ([f"rnd = #ptx.rnd<{rnd}>"] if rnd else []) + [
            f"src_type = #ptx.type<{src}>", f"type = #ptx.type<{dst}>"]
        return self.emit(type_, f"ptx.cvt {{0}} {{{{{', '.join(attrs)}}}}} : {a.type} -> {type_}",
                         a)

    def unary(self, op: str, a: Value, attrs: str) -> Value:
        return self.emit("f32", f"ptx.{op} {{0}} {{{{{attrs}, type = #ptx.type<f32>}}}} : f32", a)

    def test(self, a: Value, cmp: str, b: Value, ptx_type: str) -> Value:
        p, q = self.imp.new_value("i1"), self.imp.new_value("i1")
        self.imp.emit([p, q], f"ptx.setp {{0}}, {{1}} {{{{cmp = #ptx.cmp<{cmp}>, type = "
                              f"#ptx.type<{ptx_type}>}}}} : {a.type}", [a, b], self.loc)
        return p

    def abs(self, a: Value) -> Value:
        return self.emit("f32", "ptx.abs {0} {{type = #ptx.type<f32>}} : f32", a)

    def select(self, p: Value, a: Value, b: Value, ptx_type: str) -> Value:
        return self.emit(a.type, f"ptx.selp {{0}}, {{1}}, {{2}} {{{{type = "
                                 f"#ptx.type<{ptx_type}>}}}} : {a.type}", a, b, p)


# NVIDIA's isotropic LOD from two gradients, fitted to an H200
# (tools/lod_sweep_probe.h200.txt: 1538 of its 1608 isotropic lookups, the
# others one or two 1/256 steps off; tools/mipmap_gradient_probe.h200.txt:
# all 112). A vector's length is max + _MINOR * min of its absolute
# components, max cut to 9 mantissa bits ((1, 1) is 1.344, not 1.414:
# every one of the sweep's 514 single gradients); the footprint's is the
# longest of dx, dy and _DIAGONAL times the length of dx + dy and of dx -
# dy, their max cut to 8 bits (parallel gradients lengthen it: (2, 0) and
# (2, 0) read 2.75); the LOD is its exponent plus _LOG2_STEPS of its top 8
# mantissa bits, in 1/256 steps.
_MINOR, _DIAGONAL = 11 / 32, 0.6878
_MANTISSA_8, _MANTISSA_9 = -0x8000, -0x4000  # 0xFFFF8000, 0xFFFFC000

# An H200's LOD of a gradient of length 1 + i/256 texels, in 1/256 steps
# (tools/lod_sweep_probe.h200.txt's `axis` lines; the next octave's are
# these plus 256): its log2, not rounded to nearest (index 2 reads 4 for
# 2.87). test_texture_lod.py checks the table against that file.
_LOG2_STEPS = (
    0, 2, 4, 5, 6, 8, 9, 11, 12, 13, 15, 16, 18, 19, 20, 22,
    23, 24, 26, 27, 28, 30, 31, 32, 34, 35, 36, 38, 39, 40, 42, 43,
    44, 45, 47, 48, 49, 50, 52, 53, 54, 55, 57, 58, 59, 60, 62, 63,
    64, 65, 66, 68, 69, 70, 71, 72, 74, 75, 76, 77, 78, 79, 81, 82,
    83, 84, 85, 86, 88, 89, 90, 91, 92, 93, 94, 95, 97, 98, 99, 100,
    101, 102, 103, 104, 105, 106, 107, 109, 110, 111, 112, 113, 114, 115, 116, 117,
    118, 119, 120, 121, 122, 123, 124, 125, 126, 127, 128, 129, 130, 131, 132, 133,
    135, 136, 137, 137, 138, 139, 140, 141, 142, 143, 144, 145, 146, 147, 148, 149,
    150, 151, 152, 153, 154, 155, 156, 157, 158, 159, 160, 161, 162, 162, 163, 164,
    165, 166, 167, 168, 169, 170, 171, 172, 173, 173, 174, 175, 176, 177, 178, 179,
    180, 181, 181, 182, 183, 184, 185, 186, 187, 188, 188, 189, 190, 191, 192, 193,
    194, 195, 195, 196, 197, 198, 199, 200, 200, 201, 202, 203, 204, 205, 205, 206,
    207, 208, 209, 210, 210, 211, 212, 213, 214, 214, 215, 216, 217, 218, 218, 219,
    220, 221, 222, 222, 223, 224, 225, 226, 226, 227, 228, 229, 229, 230, 231, 232,
    233, 233, 234, 235, 236, 236, 237, 238, 239, 239, 240, 241, 242, 242, 243, 244,
    245, 245, 246, 247, 248, 248, 249, 250, 251, 251, 252, 253, 253, 254, 255, 255,
)


def _rise_words(at_least: int) -> list[int]:
    """The 256-bit set (four 64-bit words, as signed i64 values) of the k
    where _LOG2_STEPS rises by at least `at_least` from k - 1 to k: the
    table at i is the count of set bits up to i in both sets."""
    words = [0] * 4
    for k in range(1, len(_LOG2_STEPS)):
        if _LOG2_STEPS[k] - _LOG2_STEPS[k - 1] >= at_least:
            words[k // 64] |= 1 << (k % 64)
    return [w - (1 << 64) if w >= 1 << 63 else w for w in words]


_RISES = (_rise_words(1), _rise_words(2))


def gradient_lod(imp: FunctionImporter, loc: ast.SourceLoc, handle: Value,
                 dx: list[Value], dy: list[Value], cube_point: list[Value] | None = None
                 ) -> Value:
    """The LOD of `tex.grad` from gradients in texture coordinates
    (normalized ones scaled by level 0's extent): NVIDIA's approximation
    above for 1D and 2D textures and, on the differences of face
    coordinates (cube_gradients), for a cube map looked up at `cube_point`;
    log2 of the longer Euclidean gradient for 3D ones (no H200 data on
    those yet)."""
    o = _Ops(imp, loc)
    leaves = None
    if cube_point is not None:
        scaled, leaves = cube_gradients(o, handle, cube_point, [dx, dy])
    else:
        flags = o.load(handle, FLAGS, "u32", "i32")
        normalized = o.test(o.binary("and", flags, o.i32(NORMALIZED_COORDS), "b32"), "ne",
                            o.i32(0), "u32")
        scaled = []
        for grad in (dx, dy):
            components = []
            for k, g in enumerate(grad):
                extent = o.cvt(o.load(handle, EXTENT + 4 * k, "u32", "i32"), "rn", "u32", "f32",
                               "f32")
                components.append(o.binary("mul", g, o.select(normalized, extent, o.f32(1.0),
                                                              "f32")))
            scaled.append(components)
    if len(scaled[0]) > 2:
        squares = []
        for components in scaled:
            total = o.f32(0.0)
            for c in components:
                total = o.fma(c, c, total)
            squares.append(total)
        longest = o.binary("max", squares[0], squares[1])
        return o.binary("mul", o.unary("lg2", longest, "precision = #ptx.precision<approx>"),
                        o.f32(0.5))

    def bits(x: Value) -> Value:
        return imp.coerce(x, "i32", loc)

    def cut(x: Value, mask: int) -> Value:
        return imp.coerce(o.binary("and", bits(x), o.i32(mask), "b32"), "f32", loc)

    def length(vector: list[Value], major_mask: int) -> Value:
        magnitudes = [o.abs(c) for c in vector]
        major = cut(magnitudes[0] if len(magnitudes) == 1
                    else o.binary("max", magnitudes[0], magnitudes[1]), major_mask)
        if len(magnitudes) == 1:
            return major
        minor = o.binary("min", magnitudes[0], magnitudes[1])
        return o.binary("add", major, o.binary("mul", minor, o.f32(_MINOR)))

    sums = [o.binary("add", a, b) for a, b in zip(*scaled, strict=True)]
    differences = [o.binary("sub", a, b) for a, b in zip(*scaled, strict=True)]
    diagonal = o.binary("mul", o.binary("max", length(sums, _MANTISSA_8),
                                        length(differences, _MANTISSA_8)), o.f32(_DIAGONAL))
    if leaves is not None:
        # On a cube map an H200 drops the dx +- dy term when either
        # neighbour lies on another face (docs/textures.md).
        diagonal = o.select(leaves, o.f32(0.0), diagonal, "f32")
    footprint = o.binary("max", o.binary("max", length(scaled[0], _MANTISSA_9),
                                         length(scaled[1], _MANTISSA_9)), diagonal)
    return o.binary("mul", o.cvt(_log2_steps(o, bits(footprint)), "rn", "s32", "f32", "f32"),
                    o.f32(1 / 256))


class _Face:
    """The cube-map face of a direction: its major axis (ties go to z, then
    y, as the lowering's cubeFace takes them) and sign."""

    def __init__(self, o: _Ops, v: list[Value]) -> None:
        self.o = o
        ax, ay, az = (o.abs(c) for c in v)
        self.z = o.test(az, "ge", o.binary("max", ax, ay), "f32")
        self.y = o.test(ay, "ge", ax, "f32")
        self.major = self.pick(*v)
        positive = o.test(self.major, "ge", o.f32(0.0), "f32")
        self.sign = o.select(positive, o.f32(1.0), o.f32(-1.0), "f32")
        # 0-5: +x, -x, +y, -y, +z, -z.
        axis = o.select(self.z, o.i32(4), o.select(self.y, o.i32(2), o.i32(0), "b32"), "b32")
        self.index = o.binary("add", axis, o.select(positive, o.i32(0), o.i32(1), "b32"), "s32")

    def pick(self, x: Value, y: Value, z: Value) -> Value:
        """The value for this face's major axis."""
        o = self.o
        return o.select(self.z, z, o.select(self.y, y, x, "f32"), "f32")

    def face_coordinates(self, r: list[Value]) -> tuple[Value, Value]:
        """The programming guide's sc, tc on this face of a point whose
        other two components are already divided by |ma|."""
        o = self.o
        minus_sign = o.binary("mul", self.sign, o.f32(-1.0))
        sc = self.pick(o.binary("mul", minus_sign, r[2]), r[0], o.binary("mul", self.sign, r[0]))
        minus_y = o.binary("mul", r[1], o.f32(-1.0))
        return sc, self.pick(minus_y, o.binary("mul", self.sign, r[2]), minus_y)


def cube_gradients(o: _Ops, handle: Value, point: list[Value], gradients: list[list[Value]]
                   ) -> tuple[list[list[Value]], Value]:
    """Cube-map gradients in texels of P's face, and whether Q = P + d of
    any lies on another face: an H200 takes the finite difference of face
    coordinates, Q's minus P's, times half the extent; Q on a neighbouring
    face (major axis m') is unfolded onto P's plane over their shared edge,
    its m' coordinate sign(Q_m') (2 - sign(P_m) Q_m / |Q_m'|)
    (docs/textures.md; tools/cube_grad_probe.h200.txt)."""
    here = _Face(o, point)
    rcp_here = o.unary("rcp", o.abs(here.major), "rnd = #ptx.rnd<rn>")
    p_coords = here.face_coordinates([o.binary("mul", c, rcp_here) for c in point])
    half = o.binary("mul", o.cvt(o.load(handle, EXTENT, "u32", "i32"), "rn", "u32", "f32", "f32"),
                    o.f32(0.5))
    scaled, leaves = [], o.i32(0)
    for d in gradients:
        q = [o.binary("add", a, b) for a, b in zip(point, d, strict=True)]
        there = _Face(o, q)
        rcp_there = o.unary("rcp", o.abs(there.major), "rnd = #ptx.rnd<rn>")
        across = o.binary("mul", there.sign, o.binary("sub", o.f32(2.0), o.binary(
            "mul", o.binary("mul", here.sign, here.pick(*q)), rcp_there)))
        projected = [o.binary("mul", c, rcp_there) for c in q]
        # Q's coordinate along its own major axis reads `across`, unused by
        # P's sc, tc where that is P's axis too.
        unfolded = [there.pick(across, projected[0], projected[0]),
                    there.pick(projected[1], across, projected[1]),
                    there.pick(projected[2], projected[2], across)]
        q_coords = here.face_coordinates(unfolded)
        scaled.append([o.binary("mul", o.binary("sub", b, a), half)
                       for a, b in zip(p_coords, q_coords, strict=True)])
        leaves = o.binary("or", leaves, o.select(o.test(here.index, "ne", there.index, "s32"),
                                                 o.i32(1), o.i32(0), "b32"), "b32")
    return scaled, o.test(leaves, "ne", o.i32(0), "u32")


def _log2_steps(o: _Ops, bits: Value) -> Value:
    """256 log2 of a positive f32 (its bits), as an H200 takes it: the
    exponent's 256 steps plus _LOG2_STEPS at the top 8 mantissa bits, read
    as the count of the table's rises up to that index (no memory holds
    it). Zero reads -32512, below any LOD clamp."""
    def shift(op: str, a: Value, amount: Value, ptx_type: str) -> Value:
        return o.emit(a.type, f"ptx.{op} {{0}}, {{1}} {{{{type = #ptx.type<{ptx_type}>}}}} : "
                              f"{a.type}", a, amount)

    exponent = o.binary("sub", shift("shr", bits, o.i32(23), "u32"), o.i32(127), "s32")
    index = o.binary("and", shift("shr", bits, o.i32(15), "u32"), o.i32(0xFF), "b32")
    steps = shift("shl", exponent, o.i32(8), "b32")
    one = o.emit("i64", "arith.constant 1 : i64")
    for w in range(4):
        # Bits 0..index of word w: (1 << clamp(index + 1 - 64 w, 0, 64)) - 1;
        # PTX's shl gives 0 for a shift of 64.
        amount = o.binary("max", o.binary("sub", index, o.i32(64 * w - 1), "s32"), o.i32(0),
                          "s32")
        upto = o.binary("sub", shift("shl", one, amount, "b64"), one, "s64")
        for rises in _RISES:
            if rises[w]:
                word = o.emit("i64", f"arith.constant {rises[w]} : i64")
                count = o.emit("i32", "ptx.popc {0} {{type = #ptx.type<b64>}} : i64 -> i32",
                               o.binary("and", word, upto, "b64"))
                steps = o.binary("add", steps, count, "s32")
    return steps


def level_lookup(imp: FunctionImporter, loc: ast.SourceLoc, geometry: str, handle: Value,
                 layer: Value | None, coords: list[Value], lod: Value,
                 result_type: str) -> list[Value]:
    """The four channels of a lookup at level of detail `lod` (before bias
    and clamps)."""
    o = _Ops(imp, loc)
    levels = o.load(handle, LEVELS, "u32", "i32")
    last = o.binary("sub", o.binary("max", levels, o.i32(1), "u32"), o.i32(1), "u32")
    lod = o.binary("add", lod, o.load(handle, LOD_BIAS, "f32", "f32"))
    lod = o.binary("max", lod, o.load(handle, MIN_CLAMP, "f32", "f32"))
    lod = o.binary("min", lod, o.load(handle, MAX_CLAMP, "f32", "f32"))
    lod = o.binary("min", lod, o.cvt(last, "rn", "u32", "f32", "f32"))
    lod = o.binary("max", lod, o.f32(0.0))
    linear = o.test(o.load(handle, MIP_FILTER, "u32", "i32"), "ne", o.i32(0), "u32")
    below = o.cvt(lod, "rmi", "f32", "f32", "f32")
    nearest = o.cvt(o.binary("add", lod, o.f32(0.5)), "rmi", "f32", "f32", "f32")
    first = o.cvt(o.select(linear, below, nearest, "f32"), "rzi", "f32", "s32", "i32")
    second = o.binary("min", o.binary("add", first, o.i32(1), "s32"), last, "u32")
    # NVIDIA truncates the blend weight to 1/256 (an H200 blends lod 0.6 as
    # 153/256: tools/mipmap_probe.h200.txt, level_linear).
    steps = o.cvt(o.binary("mul", o.binary("sub", lod, below), o.f32(256.0)), "rzi", "f32",
                  "f32", "f32")
    weight = o.select(linear, o.binary("mul", steps, o.f32(1 / 256)), o.f32(0.0), "f32")
    table = o.load(handle, LEVEL_TABLE, "u64", "i64")
    mipmapped = o.test(levels, "gt", o.i32(1), "u32")

    def level(index: Value) -> Value:
        offset = o.emit("i64", "ptx.mul {0}, {1} {{mode = #ptx.mode<wide>, type = "
                               "#ptx.type<u32>}} : i32 -> i64", index, o.i32(DESCRIPTOR_BYTES))
        entry = o.emit("i64", "ptx.add {0}, {1} {{type = #ptx.type<s64>}} : i64", table, offset)
        return o.select(mipmapped, entry, handle, "b64")

    def sample(h: Value) -> list[Value]:
        args = [h] + ([layer] if layer is not None else []) + coords
        first_coord = 2 if layer is not None else 1
        slots = ", ".join(f"{{{first_coord + i}}}" for i in range(len(coords)))
        results = [imp.new_value(result_type) for _ in range(4)]
        # `mipmap_level`: `h` is one of our level descriptors, which the
        # target's own instructions cannot read (Texture.cpp refuses it).
        imp.emit(results, f"ptx.tex <{geometry}> {{0}}"
                          f"{' layer {1}' if layer is not None else ''}, {slots} "
                          f"{{{{mipmap_level}}}} : "
                          f"{', '.join(c.type for c in coords)} -> "
                          f"{', '.join([result_type] * 4)}", args, loc)
        return results

    near = sample(level(first))
    if result_type != "f32":
        return near  # integers are never filtered
    far = sample(level(second))
    return [o.fma(weight, o.binary("sub", b, a), a) for a, b in zip(near, far, strict=True)]

