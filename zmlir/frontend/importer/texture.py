"""Textures and surfaces through their 64-bit objects: the `tex`, `tld4`,
`txq`, `suld`, `sust` and `suq` families.

    tex.geom.v4.dtype.ctype       d{|p}, [tex, {coords}]
    tld4.comp.2d.v4.dtype.f32     d{|p}, [tex, {coords}]
    txq.query.b32                 d, [tex]
    suld.b.geom.vec.dtype.clamp   d, [surf, {coords}]
    sust.b.geom.vec.ctype.clamp   [surf, {coords}], v
    suq.query.b32                 d, [surf]

The object is a 64-bit handle or the name of a `.texref`/`.surfref`
(the address of its descriptor variable, module.py). In independent
texture mode `tex` and `tld4` name a `.samplerref` after a `.texref`
(`[tex, smp, {coords}]`: the sampler's descriptor, samplerref.py), and
`txq` on a `.samplerref` is the constant its initializer gives. An array
geometry's first coordinate is the layer (an operand of its own); the
padding coordinate of `.3d`, `.a2d` and `.cube` is dropped. What has no op
here (a sampler with a texture object or with `.level`/`.grad`, layered
cube-map `.grad` lookups, formatted `sust.p`, `sured`, offsets and depth compares)
imports as `ptx.inst`, which the lowering names as unsupported."""

from __future__ import annotations

from zmlir.frontend import ast
from zmlir.frontend.importer import mipmap, samplerref
from zmlir.frontend.importer.common import attr_dict, classify
from zmlir.frontend.importer.core import FunctionImporter, handles
from zmlir.frontend.importer.generic import generic
from zmlir.frontend.importer.module import reference_symbol
from zmlir.frontend.importer.ptxtypes import mlir_type, quote
from zmlir.frontend.ssa import Value

# PTX geometry: (dialect keyword, coordinates, whether the first is a layer).
_GEOMETRIES = {
    "1d": ("d1", 1, False), "2d": ("d2", 2, False), "3d": ("d3", 3, False),
    "a1d": ("a1d", 1, True), "a2d": ("a2d", 2, True), "cube": ("cube", 3, False),
    "acube": ("acube", 3, True),
}
_SURFACE_GEOMETRIES = {"1d", "2d", "3d", "a1d", "a2d"}
_RESULT_TYPES = {"f32": "f32", "s32": "i32", "u32": "i32"}
_COORD_TYPES = {"f32": "f32", "s32": "i32"}
_TXQ = {"width", "height", "depth", "channel_data_type", "channel_order", "normalized_coords",
        "filter_mode", "addr_mode_0", "addr_mode_1", "addr_mode_2", "array_size",
        "num_mipmap_levels", "num_samples"}
_SUQ = {"width", "height", "depth", "channel_data_type", "channel_order", "array_size",
        "memory_layout"}
_CLAMPS = {"trap", "clamp", "zero"}
_FLOAT_BITS = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}


def _reference(imp: FunctionImporter, name: ast.Operand, wanted: str) -> ast.VarDecl | None:
    """The module's `.texref`/`.surfref`/`.samplerref` variable `name`."""
    decl = imp.m.variables.get(name.name) if isinstance(name, ast.Sym) else None
    return decl if decl is not None and decl.type == wanted else None


def _address(imp: FunctionImporter, inst: ast.Instruction, decl: ast.VarDecl) -> Value:
    handle = imp.new_value("i64")
    imp.emit([handle], f"ptx.addr_of @{quote(reference_symbol(decl))} : i64", [], inst.loc)
    return handle


def _sampler(imp: FunctionImporter, inst: ast.Instruction, operand: ast.Operand) -> Value | None:
    """The sampler's descriptor of an independent-mode `[tex, smp, {c}]`
    (a `.texref` and a `.samplerref`), or None for any other form."""
    if not isinstance(operand, ast.Addr) or operand.sampler is None \
            or _reference(imp, operand.base, "texref") is None:
        return None
    decl = _reference(imp, operand.sampler, "samplerref")
    return None if decl is None else _address(imp, inst, decl)


def _object(imp: FunctionImporter, inst: ast.Instruction, operand: ast.Operand,
            with_coords: bool, sampled: bool = False) -> tuple[Value, list[ast.Operand]] | None:
    """The object's handle and the coordinate operands, or None where the
    operand has a form with no op. A `.texref` or `.surfref` name is the
    address of its descriptor variable. With `sampled`, the operand may
    name a sampler too (_sampler reads it)."""
    if not isinstance(operand, ast.Addr) or operand.offset \
            or (operand.sampler is not None and not sampled) \
            or (operand.coords is None) == with_coords:
        return None
    if isinstance(operand.base, ast.Reg):
        handle = imp.value(operand.base, "i64", inst.loc, "b64")
    elif isinstance(operand.base, ast.Sym):
        decl = _reference(imp, operand.base, "texref" if inst.opcode in ("tex", "tld4", "txq")
                          else "surfref")
        if decl is None:
            return None
        handle = _address(imp, inst, decl)
    else:
        return None
    return handle, list(operand.coords or ())


def _coordinates(imp: FunctionImporter, inst: ast.Instruction, coords: list[ast.Operand],
                 ptx_geom: str, coord_type: str) -> tuple[list[Value], Value | None] | None:
    """The coordinates read as `coord_type`, and the layer (i32) of an array
    geometry; None where their number does not fit the geometry."""
    _, count, layered = _GEOMETRIES[ptx_geom]
    # `.3d`, `.a2d`, `.cube`: a fourth (padding) element.
    if len(coords) not in (count + layered, 4 if count + layered == 3 else count + layered):
        return None
    layer = None
    if layered:
        layer = imp.value(coords[0], "i32", inst.loc, "b32")
        coords = coords[1:]
    ptx_type = "f32" if coord_type == "f32" else "s32"
    return [imp.value(c, coord_type, inst.loc, ptx_type) for c in coords[:count]], layer


def _emit_lookup(imp: FunctionImporter, inst: ast.Instruction, op: str, head: str,
                 values: list[Value], layer: Value | None, handle: Value, sampler: Value | None,
                 result_type: str, dests: list[ast.Operand], signed: bool) -> None:
    """`signed`: `.s32` results (the target's own instruction keeps it)."""
    extra = [v for v in (sampler, layer) if v is not None]
    args = [handle, *extra, *values]
    layer_text = (" sampler {1}" if sampler is not None else "") + \
        (f" layer {{{len(extra)}}}" if layer is not None else "")
    first = 1 + len(extra)
    coord_slots = ", ".join(f"{{{first + i}}}" for i in range(len(values)))
    results = [imp.new_value(result_type) for _ in dests]
    types = ", ".join(v.type for v in values)
    attrs = " {{signed}}" if signed else ""
    imp.emit(results, f"ptx.{op} {head} {{0}}{layer_text}, {coord_slots}{attrs} : {types} -> "
                      f"{', '.join([result_type] * len(results))}", args, inst.loc)
    for d, r in zip(dests, results, strict=True):
        imp.write_reg(d, r, inst.loc)


def _four_destinations(inst: ast.Instruction) -> list[ast.Operand] | None:
    """The four destinations of `{d0, d1, d2, d3}` or `{d0, d1, d2, d3}|p`."""
    first = inst.operands[0] if inst.operands else None
    if isinstance(first, ast.Pair) and isinstance(first.second, ast.Reg):
        first = first.first
    if isinstance(first, ast.Vec) and len(first.elems) == 4:
        return list(first.elems)
    return None


def _resident(imp: FunctionImporter, inst: ast.Instruction) -> None:
    """`|p`: whether the texels were resident in memory (sparse CUDA
    arrays), which every texture here is: p is true."""
    first = inst.operands[0]
    if isinstance(first, ast.Pair):
        p = imp.new_value("i1")
        imp.emit([p], "arith.constant true", [], inst.loc)
        imp.write_reg(first.second, p, inst.loc)


def _mipmapped_tex(imp: FunctionImporter, inst: ast.Instruction) -> bool:
    """`tex.level` and `tex.grad` (mipmap.py); False for a form with no expansion."""
    m = classify(inst)
    dests = _four_destinations(inst)
    kind = m.rest[0]
    extra = 1 if kind == "level" else 2
    # (No H200 data says how a layered cube map takes its LOD from gradients.)
    if len(m.rest) != 2 or m.rest[1] not in _GEOMETRIES \
            or (kind == "grad" and m.rest[1] == "acube") \
            or m.vec != 4 or m.types[1:] != ["f32"] or m.types[0] not in _RESULT_TYPES \
            or m.flags or m.space or dests is None or len(inst.operands) != 2 + extra:
        return False
    geom = m.rest[1]
    found = _object(imp, inst, inst.operands[1], with_coords=True)
    coords = found and _coordinates(imp, inst, found[1], geom, "f32")
    if found is None or not coords:
        return False
    values, layer = coords
    grads: list[list[Value]] = []
    lod = None
    if kind == "level":
        lod = imp.value(inst.operands[2], "f32", inst.loc, "f32")
    else:
        count = _GEOMETRIES[geom][1]
        for operand in inst.operands[2:]:
            elems = list(operand.elems) if isinstance(operand, ast.Vec) else [operand]
            if len(elems) not in (count, 4 if count == 3 else count):
                return False
            grads.append([imp.value(e, "f32", inst.loc, "f32") for e in elems[:count]])
    # A ptx.tex_mipmap whose region is the expansion on our descriptors
    # (mipmap.py), in MLIR's generic form: its head, with the operands, opens
    # the region; the expansion and its yield follow; the last line closes it
    # with the types and the location.
    result_type = _RESULT_TYPES[m.types[0]]
    handle = found[0]
    operands = [handle, *([layer] if layer is not None else []), *values,
                *([lod] if lod is not None else []), *(g for grad in grads for g in grad)]
    segments = [1, int(layer is not None), len(values), int(lod is not None),
                len(grads[0]) if grads else 0, len(grads[1]) if grads else 0]
    results = [imp.new_value(result_type) for _ in range(4)]
    slots = ", ".join(f"{{{i}}}" for i in range(len(operands)))
    imp.emit(results, f'"ptx.tex_mipmap"({slots}) <{{{{geometry = #ptx.geom<'
                      f'{_GEOMETRIES[geom][0]}>, operandSegmentSizes = array<i32: '
                      f'{", ".join(map(str, segments))}>}}}}> ({{{{', operands, None)
    if grads:
        lod = mipmap.gradient_lod(imp, inst.loc, handle, grads[0], grads[1],
                                  values if geom == "cube" else None)
    assert lod is not None
    channels = mipmap.level_lookup(imp, inst.loc, _GEOMETRIES[geom][0], handle, layer, values,
                                   lod, result_type)
    types = ", ".join([result_type] * 4)
    imp.emit([], f'"ptx.tex_yield"({{0}}, {{1}}, {{2}}, {{3}}) : ({types}) -> ()', channels,
             inst.loc)
    signed = " {{signed}}" if m.types[0] == "s32" else ""
    imp.emit([], f"}}}}){signed} : ({', '.join(v.type for v in operands)}) -> ({types})", [],
             inst.loc)
    for d, r in zip(dests, results, strict=True):
        imp.write_reg(d, r, inst.loc)
    _resident(imp, inst)
    return True


@handles("tex")
def _tex(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    if m.rest and m.rest[0] in ("level", "grad"):
        if not _mipmapped_tex(imp, inst):
            generic(imp, inst)
        return
    dests = _four_destinations(inst)
    if len(m.rest) != 1 or m.rest[0] not in _GEOMETRIES or m.vec != 4 or len(m.types) != 2 \
            or m.types[0] not in _RESULT_TYPES or m.types[1] not in _COORD_TYPES \
            or m.flags or m.space or dests is None or len(inst.operands) != 2:
        generic(imp, inst)
        return
    geom = m.rest[0]
    operand = inst.operands[1]
    sampler = _sampler(imp, inst, operand)
    found = (sampler is not None or getattr(operand, "sampler", None) is None) and \
        _object(imp, inst, operand, with_coords=True, sampled=True)
    coords = found and _coordinates(imp, inst, found[1], geom, _COORD_TYPES[m.types[1]])
    if not found or coords is None or (geom in ("cube", "acube") and m.types[1] != "f32"):
        generic(imp, inst)
        return
    values, layer = coords
    _emit_lookup(imp, inst, "tex", f"<{_GEOMETRIES[geom][0]}>", values, layer, found[0],
                 sampler, _RESULT_TYPES[m.types[0]], dests, m.types[0] == "s32")
    _resident(imp, inst)


@handles("tld4")
def _tld4(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    dests = _four_destinations(inst)
    if len(m.rest) != 2 or m.rest[0] not in ("r", "g", "b", "a") or m.rest[1] not in ("2d", "a2d") \
            or m.vec != 4 or m.types[1:] != ["f32"] or m.types[0] not in _RESULT_TYPES \
            or m.flags or dests is None or len(inst.operands) != 2:
        generic(imp, inst)
        return
    geom = m.rest[1]
    operand = inst.operands[1]
    sampler = _sampler(imp, inst, operand)
    found = (sampler is not None or getattr(operand, "sampler", None) is None) and \
        _object(imp, inst, operand, with_coords=True, sampled=True)
    coords = found and _coordinates(imp, inst, found[1], geom, "f32")
    if not found or coords is None:
        generic(imp, inst)
        return
    values, layer = coords
    _emit_lookup(imp, inst, "tld4", f"<{m.rest[0]}> <{_GEOMETRIES[geom][0]}>", values, layer,
                 found[0], sampler, _RESULT_TYPES[m.types[0]], dests, m.types[0] == "s32")
    _resident(imp, inst)


@handles("txq", "suq")
def _query(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    if inst.opcode == "txq" and _sampler_query(imp, inst):
        return
    queries = _TXQ if inst.opcode == "txq" else _SUQ
    if len(m.rest) != 1 or m.rest[0] not in queries or m.types != ["b32"] or m.flags \
            or len(inst.operands) != 2:
        generic(imp, inst)
        return
    found = _object(imp, inst, inst.operands[1], with_coords=False)
    if found is None:
        generic(imp, inst)
        return
    r = imp.new_value("i32")
    imp.emit([r], f"ptx.{inst.opcode} <{m.rest[0]}> {{0}} : i32", [found[0]], inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


def _sampler_query(imp: FunctionImporter, inst: ast.Instruction) -> bool:
    """`txq` on a `.samplerref`: the constant its initializer gives; False
    for any other txq."""
    m = classify(inst)
    operand = inst.operands[1] if len(inst.operands) == 2 else None
    decl = _reference(imp, operand.base, "samplerref") \
        if isinstance(operand, ast.Addr) and operand.coords is None \
        and operand.sampler is None and not operand.offset else None
    if decl is None:
        return False
    sampler = samplerref.parse(decl)
    answer = sampler.query(m.rest[0]) if not isinstance(sampler, str) and len(m.rest) == 1 \
        and m.types == ["b32"] and not m.flags else None
    if answer is None:
        generic(imp, inst)
        return True
    r = imp.new_value("i32")
    imp.emit([r], f"arith.constant {answer} : i32", [], inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)
    return True


def _surface_form(inst: ast.Instruction) -> tuple[str, str, str] | None:
    """(geometry, bN type, clamp mode) of a `suld.b`/`sust.b`, or None."""
    m = classify(inst)
    rest = list(m.rest)
    clamp = next((r for r in rest if r in _CLAMPS), "trap")
    rest = [r for r in rest if r not in _CLAMPS]
    if len(rest) != 2 or rest[0] != "b" or rest[1] not in _SURFACE_GEOMETRIES \
            or len(m.types) != 1 or m.types[0] not in ("b8", "b16", "b32", "b64") \
            or m.vec not in (1, 2, 4) or m.space or m.flags - {"L1::evict_last"}:
        return None
    return rest[1], m.types[0], clamp


@handles("suld")
def _suld(imp: FunctionImporter, inst: ast.Instruction) -> None:
    form = _surface_form(inst)
    m = classify(inst)
    first = inst.operands[0] if inst.operands else None
    dests = list(first.elems) if isinstance(first, ast.Vec) else [first]
    found = form and len(inst.operands) == 2 and len(dests) == m.vec \
        and _object(imp, inst, inst.operands[1], with_coords=True)
    coords = found and _coordinates(imp, inst, found[1], form[0], "i32")
    if not found or not coords:
        generic(imp, inst)
        return
    geom, ptx_type, clamp = form
    values, layer = coords
    result_types = [imp.reg_type(d.name, inst.loc) if isinstance(d, ast.Reg)
                    else mlir_type(ptx_type) for d in dests]
    results = [imp.new_value(t) for t in result_types]
    args = [found[0]] + ([layer] if layer is not None else []) + values
    first_coord = 2 if layer is not None else 1
    slots = ", ".join(f"{{{first_coord + i}}}" for i in range(len(values)))
    attrs = attr_dict(clamp=f"#ptx.clamp<{clamp}>" if clamp != "trap" else None,
                      type=f"#ptx.type<{ptx_type}>")
    imp.emit(results, f"ptx.suld <{_GEOMETRIES[geom][0]}> {{0}}"
                      f"{' layer {1}' if layer is not None else ''}, {slots} {attrs} : "
                      f"{', '.join(v.type for v in values)} -> {', '.join(result_types)}",
             args, inst.loc)
    for d, r in zip(dests, results, strict=True):
        imp.write_reg(d, r, inst.loc)


@handles("sust")
def _sust(imp: FunctionImporter, inst: ast.Instruction) -> None:
    form = _surface_form(inst)
    m = classify(inst)
    if form is None or len(inst.operands) != 2:
        generic(imp, inst)
        return
    source = inst.operands[1]
    sources = list(source.elems) if isinstance(source, ast.Vec) else [source]
    found = len(sources) == m.vec and _object(imp, inst, inst.operands[0], with_coords=True)
    coords = found and _coordinates(imp, inst, found[1], form[0], "i32")
    if not found or not coords:
        generic(imp, inst)
        return
    geom, ptx_type, clamp = form
    values, layer = coords
    width = int(ptx_type[1:])
    stored = []
    for s in sources:
        if isinstance(s, ast.Reg):
            v = imp.read_reg(s.name, inst.loc)
            stored.append(v if v.type.startswith("i") else imp.coerce(
                v, f"i{_FLOAT_BITS[v.type]}", inst.loc))
        else:
            stored.append(imp.value(s, "i64" if width == 64 else "i32", inst.loc, ptx_type))
    args = [found[0]] + ([layer] if layer is not None else []) + values + stored
    first_coord = 2 if layer is not None else 1
    slots = ", ".join(f"{{{first_coord + i}}}" for i in range(len(values)))
    first_value = first_coord + len(values)
    value_slots = ", ".join(f"{{{first_value + i}}}" for i in range(len(stored)))
    attrs = attr_dict(clamp=f"#ptx.clamp<{clamp}>" if clamp != "trap" else None,
                      type=f"#ptx.type<{ptx_type}>")
    imp.emit([], f"ptx.sust <{_GEOMETRIES[geom][0]}> {{0}}"
                 f"{' layer {1}' if layer is not None else ''}, {slots} values {value_slots} "
                 f"{attrs} : ({', '.join(v.type for v in values)}), "
                 f"({', '.join(v.type for v in stored)})", args, inst.loc)
