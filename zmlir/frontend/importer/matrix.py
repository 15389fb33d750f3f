"""Warp matrix instructions: wmma.load, wmma.store and wmma.mma; mma.sync and
ldmatrix.

The modifiers come in any order (nvcc writes `.row.m16n16k16`, the PTX ISA's
examples `.m16n16k16.row`, cuBLAS `.x4.m8n8`); a form with a shape or type
these ops do not take (the sub-byte and single-bit shapes, mma.sync's other
shapes and types, ldmatrix's .m16n16 and .b8 ones, ...) imports as
`ptx.inst`, which the lowering names as unsupported. Register counts are
the ops' verifiers' to check."""

from __future__ import annotations

from zmlir.frontend import ast
from zmlir.frontend.importer.common import address, attr_dict, operand_slots
from zmlir.frontend.importer.core import FunctionImporter, handles
from zmlir.frontend.importer.generic import generic
from zmlir.frontend.ssa import Value

_SHAPES = {"m16n16k16", "m32n8k16", "m8n32k16", "m16n16k8", "m8n8k4"}
_TYPES = {"f16", "bf16", "tf32", "f32", "f64", "s8", "u8", "s32"}
_LAYOUTS = {"row", "col"}
_SPACES = {"global": "global", "shared": "shared", "shared::cta": "shared"}
_ROUNDING = {"rn", "rz", "rm", "rp"}
_HINTS = {"sync", "aligned"}


def _register_type(ptx_type: str) -> str:
    return {"f32": "f32", "f64": "f64"}.get(ptx_type, "i32")


def _registers(imp: FunctionImporter, inst: ast.Instruction, operand: ast.Operand,
               type_: str) -> list[Value]:
    if not isinstance(operand, ast.Vec):
        raise imp.error(f"'{inst.opcode}' expects a fragment {{...}} of registers", inst.loc)
    return [imp.value(e, type_, inst.loc) for e in operand.elems]


@handles("wmma")
def _wmma(imp: FunctionImporter, inst: ast.Instruction) -> None:
    mods = inst.modifiers
    kind = mods[0] if mods else ""
    shapes = [m for m in mods if m in _SHAPES]
    if kind not in ("load", "store", "mma") or len(shapes) != 1:
        generic(imp, inst)
        return
    if kind == "mma":
        _mma(imp, inst, shapes[0])
    else:
        _load_store(imp, inst, kind, shapes[0])


def _load_store(imp: FunctionImporter, inst: ast.Instruction, kind: str, shape: str) -> None:
    mods = inst.modifiers
    matrix = mods[1] if len(mods) > 1 else ""
    rest = [m for m in mods[2:] if m not in _HINTS and m != shape]
    layouts = [m for m in rest if m in _LAYOUTS]
    spaces = [m for m in rest if m in _SPACES]
    types = [m for m in rest if m in _TYPES]
    if (matrix not in (("a", "b", "c") if kind == "load" else ("d",)) or len(layouts) != 1
            or len(spaces) > 1 or len(types) != 1
            or len(layouts) + len(spaces) + len(types) != len(rest)
            or len(inst.operands) not in (2, 3)):
        generic(imp, inst)
        return
    space = _SPACES[spaces[0]] if spaces else None
    ptx_type = types[0]
    reg_type = _register_type(ptx_type)
    frag_operand, mem = ((inst.operands[0], inst.operands[1]) if kind == "load"
                         else (inst.operands[1], inst.operands[0]))
    addr, offset = address(imp, inst, mem, space)
    stride = ([imp.value(inst.operands[2], "i32", inst.loc)] if len(inst.operands) == 3
              else [])
    attrs = attr_dict(
        layout=f"#ptx.wmma_layout<{layouts[0]}>",
        matrix=f"#ptx.wmma_matrix<{matrix}>" if kind == "load" else None,
        offset=f"{offset} : i64" if offset else None,
        shape=f"#ptx.wmma_shape<{shape}>",
        space=f"#ptx.space<{space}>" if space else None,
        type=f"#ptx.wmma_type<{ptx_type}>")
    if kind == "load":
        if not isinstance(frag_operand, ast.Vec):
            raise imp.error("'wmma.load' expects a fragment {...} of registers", inst.loc)
        dests = list(frag_operand.elems)
        results = [imp.new_value(reg_type) for _ in dests]
        types_text = ", ".join(r.type for r in results)
        stride_slot = ", {1}" if stride else ""
        imp.emit(results, f"ptx.wmma_load {{0}}{stride_slot} {attrs} : {addr.type} -> "
                          f"{types_text}", [addr, *stride], inst.loc)
        for d, r in zip(dests, results, strict=True):
            imp.write_reg(d, r, inst.loc)
        return
    values = _registers(imp, inst, frag_operand, reg_type)
    n = len(values)
    stride_text = f" stride {{{n + 1}}}" if stride else ""
    imp.emit([], f"ptx.wmma_store {{0}}, {operand_slots(n, 1)}{stride_text} {attrs} : "
                 f"{addr.type}, {', '.join(v.type for v in values)}",
             [addr, *values, *stride], inst.loc)


def _mma(imp: FunctionImporter, inst: ast.Instruction, shape: str) -> None:
    rest = [m for m in inst.modifiers[1:] if m not in _HINTS and m != shape]
    layouts = [m for m in rest if m in _LAYOUTS]
    types = [m for m in rest if m in _TYPES]
    rnd = [m for m in rest if m in _ROUNDING]
    satfinite = "satfinite" in rest
    if (len(layouts) != 2 or len(types) not in (2, 4) or len(rnd) > 1
            or len(layouts) + len(types) + len(rnd) + satfinite != len(rest)
            or len(inst.operands) != 4):
        generic(imp, inst)
        return
    if len(types) == 2:  # .dtype.ctype, with f16 multiplicands
        dtype, ctype = types
        atype = btype = "f16"
    else:
        dtype, atype, btype, ctype = types
    d, a, b, c = inst.operands
    av = _registers(imp, inst, a, _register_type(atype))
    bv = _registers(imp, inst, b, _register_type(btype))
    cv = _registers(imp, inst, c, _register_type(ctype))
    if not isinstance(d, ast.Vec):
        raise imp.error("'wmma.mma' expects a fragment {...} of registers", inst.loc)
    dests = list(d.elems)
    results = [imp.new_value(_register_type(dtype)) for _ in dests]
    attrs = attr_dict(
        alayout=f"#ptx.wmma_layout<{layouts[0]}>",
        atype=f"#ptx.wmma_type<{atype}>",
        blayout=f"#ptx.wmma_layout<{layouts[1]}>",
        btype=f"#ptx.wmma_type<{btype}>",
        ctype=f"#ptx.wmma_type<{ctype}>",
        dtype=f"#ptx.wmma_type<{dtype}>",
        rnd=f"#ptx.rnd<{rnd[0]}>" if rnd else None,
        satfinite=satfinite,
        shape=f"#ptx.wmma_shape<{shape}>")
    na, nb, nc = len(av), len(bv), len(cv)

    def types_of(vs: list[Value]) -> str:
        return ", ".join(v.type for v in vs)

    imp.emit(results,
             f"ptx.wmma_mma a({operand_slots(na)}) b({operand_slots(nb, na)}) "
             f"c({operand_slots(nc, na + nb)}) {attrs} : ({types_of(av)}), ({types_of(bv)}), "
             f"({types_of(cv)}) -> {types_of(results)}",
             [*av, *bv, *cv], inst.loc)
    for dest, r in zip(dests, results, strict=True):
        imp.write_reg(dest, r, inst.loc)


# mma.sync's forms ptx.mma_sync takes: shape -> (dtype, atype, btype, ctype) lists.
_MMA_SYNC_FORMS = {
    "m16n8k16": [("f32", "f16", "f16", "f32"), ("f16", "f16", "f16", "f16"),
                 ("f32", "bf16", "bf16", "f32")],
    "m16n8k8": [("f32", "tf32", "tf32", "f32")],
    "m8n8k4": [("f64", "f64", "f64", "f64")],
}


@handles("mma")
def _mma_sync(imp: FunctionImporter, inst: ast.Instruction) -> None:
    """mma.sync.aligned.shape.row.col.dtype.atype.btype.ctype d, a, b, c (f64: `.rn` too,
    its only rounding)."""
    mods = inst.modifiers
    shapes = [m for m in mods if m in _MMA_SYNC_FORMS]
    types = [m for m in mods if m in _TYPES]
    rest = [m for m in mods if m not in _HINTS and m not in _MMA_SYNC_FORMS and m not in _TYPES]
    if (len(shapes) != 1 or "sync" not in mods or tuple(types) not in _MMA_SYNC_FORMS[shapes[0]]
            or rest not in (["row", "col"], ["row", "col", "rn"], ["rn", "row", "col"])
            or ("rn" in rest and types[0] != "f64") or len(inst.operands) != 4
            or not all(isinstance(o, ast.Vec) for o in inst.operands)):
        generic(imp, inst)
        return
    shape = shapes[0]
    dtype, atype, btype, ctype = types
    d, a, b, c = inst.operands
    av = _registers(imp, inst, a, _register_type(atype))
    bv = _registers(imp, inst, b, _register_type(btype))
    cv = _registers(imp, inst, c, _register_type(ctype))
    assert isinstance(d, ast.Vec)
    results = [imp.new_value(_register_type(dtype)) for _ in d.elems]
    attrs = attr_dict(
        atype=f"#ptx.wmma_type<{atype}>", btype=f"#ptx.wmma_type<{btype}>",
        ctype=f"#ptx.wmma_type<{ctype}>", dtype=f"#ptx.wmma_type<{dtype}>",
        shape=f"#ptx.mma_shape<{shape}>")
    na, nb, nc = len(av), len(bv), len(cv)

    def types_of(vs: list[Value]) -> str:
        return ", ".join(v.type for v in vs)

    imp.emit(results,
             f"ptx.mma_sync a({operand_slots(na)}) b({operand_slots(nb, na)}) "
             f"c({operand_slots(nc, na + nb)}) {attrs} : ({types_of(av)}), ({types_of(bv)}), "
             f"({types_of(cv)}) -> {types_of(results)}",
             [*av, *bv, *cv], inst.loc)
    for dest, r in zip(d.elems, results, strict=True):
        imp.write_reg(dest, r, inst.loc)


_LDMATRIX_COUNTS = {"x1": 1, "x2": 2, "x4": 4}


@handles("ldmatrix")
def _ldmatrix(imp: FunctionImporter, inst: ast.Instruction) -> None:
    """ldmatrix.sync.aligned.m8n8.num{.trans}{.shared{::cta}}.b16 d, [a]."""
    mods = inst.modifiers
    counts = [m for m in mods if m in _LDMATRIX_COUNTS]
    spaces = [m for m in mods if m in ("shared", "shared::cta")]
    rest = [m for m in mods if m not in _HINTS and m not in _LDMATRIX_COUNTS
            and m not in spaces and m not in ("m8n8", "b16", "trans")]
    if (len(counts) != 1 or "sync" not in mods or mods.count("m8n8") != 1
            or mods.count("b16") != 1 or mods.count("trans") > 1 or len(spaces) > 1 or rest
            or len(inst.operands) != 2):
        generic(imp, inst)
        return
    count = _LDMATRIX_COUNTS[counts[0]]
    dest, mem = inst.operands
    dests = list(dest.elems) if isinstance(dest, ast.Vec) else [dest]
    if len(dests) != count:
        raise imp.error(f"'ldmatrix.{counts[0]}' expects {count} destination registers, "
                        f"got {len(dests)}", inst.loc)
    space = "shared" if spaces else None
    addr, offset = address(imp, inst, mem, space)
    results = [imp.new_value("i32") for _ in dests]
    attrs = attr_dict(
        offset=f"{offset} : i64" if offset else None,
        space=f"#ptx.space<{space}>" if space else None,
        trans="trans" in mods)
    imp.emit(results, f"ptx.ldmatrix {{0}} {attrs} : {addr.type} -> "
                      f"{', '.join(r.type for r in results)}", [addr], inst.loc)
    for d, r in zip(dests, results, strict=True):
        imp.write_reg(d, r, inst.loc)
