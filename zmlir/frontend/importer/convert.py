"""Moves and conversions between registers: mov (special registers,
addresses, packing and unpacking vectors) and cvt."""

from __future__ import annotations

from zmlir.frontend import ast
from zmlir.frontend.importer.common import (
    attr_dict,
    check_no_rest,
    classify,
    emit_result,
    expect_operands,
    one_type,
    operand_slots,
    operand_values,
)
from zmlir.frontend.importer.core import FunctionImporter, handles
from zmlir.frontend.importer.generic import generic, is_other_special_reg
from zmlir.frontend.importer.ptxtypes import bits, mlir_type
from zmlir.frontend.importer.sreg import SPECIAL_REGS


@handles("mov")
def _mov(imp: FunctionImporter, inst: ast.Instruction) -> None:
    if len(inst.operands) == 2 and is_other_special_reg(imp, inst.operands[1]):
        # Special registers without a ptx.sreg case.
        generic(imp, inst)
        return
    if (len(inst.operands) == 2 and isinstance(inst.operands[1], ast.Sym)
            and inst.operands[1].name in imp.params):
        # The address of a parameter (nvcc's way to index a big by-value
        # struct; grid constants), read with ld.param through a register.
        param = imp.params[inst.operands[1].name]
        dest = inst.operands[0]
        want = imp.reg_type(dest.name, inst.loc) if isinstance(dest, ast.Reg) else "i64"
        if want not in ("i32", "i64"):
            raise imp.error("unsupported 'mov' of a parameter's address into a "
                            f"{bits(want)}-bit register", inst.loc)
        emit_result(imp, inst, f"ptx.param_addr {{0}} : {param.type} -> {want}", [param], want)
        return
    m = classify(inst)
    check_no_rest(imp, inst, m)
    expect_operands(imp, inst, 2)
    ptx_type = one_type(imp, inst, m)
    dest, src = inst.operands
    if isinstance(src, ast.Vec):
        # mov.b64 %rd, {%r1, %r2}: the first element in the low bits.
        if not isinstance(dest, ast.Reg):
            raise imp.error("'mov' packing needs a register destination", inst.loc)
        want = imp.reg_type(dest.name, inst.loc)
        n = len(src.elems)
        if bits(want) % n:
            raise imp.error("'mov' packing elements do not divide the destination", inst.loc)
        part = f"i{bits(want) // n}"
        elems = []
        for e in src.elems:
            if isinstance(e, ast.Reg) and e.name not in SPECIAL_REGS:
                v = imp.read_reg(e.name, inst.loc)
                elems.append(v if bits(v.type) == bits(part) else imp.coerce(v, part, inst.loc))
            else:
                elems.append(imp.value(e, part, inst.loc))
        types = ", ".join(v.type for v in elems)
        emit_result(imp, inst, f"ptx.mov_pack {operand_slots(n)} : {types} -> {want}", elems, want)
        return
    if isinstance(dest, ast.Vec):
        # mov.b32 {%h1, %h2}, %r: the first element from the low bits; `_`
        # sinks take their share of the bits too.
        n = len(dest.elems)
        v = imp.value(src, mlir_type(ptx_type), inst.loc, ptx_type)
        if bits(v.type) % n:
            raise imp.error("'mov' unpacking elements do not divide the source", inst.loc)
        part = f"i{bits(v.type) // n}"
        types = []
        for e in dest.elems:
            t = imp.reg_type(e.name, inst.loc) if isinstance(e, ast.Reg) else part
            types.append(t if bits(t) == bits(part) else part)
        results = [imp.new_value(t) for t in types]
        imp.emit(results, f"ptx.mov_unpack {{0}} : {v.type} -> {', '.join(types)}", [v], inst.loc)
        for e, r in zip(dest.elems, results, strict=True):
            imp.write_reg(e, r, inst.loc)
        return
    if not isinstance(dest, ast.Reg):
        raise imp.error("'mov' needs a register destination", inst.loc)
    want = imp.reg_type(dest.name, inst.loc)
    if isinstance(src, ast.Reg) and src.name in SPECIAL_REGS:
        v = imp.special_reg(src.name, want, inst.loc)
    elif isinstance(src, ast.Reg):
        v = imp.read_reg(src.name, inst.loc)
        if v.type != want:
            v = imp.coerce(v, want, inst.loc, ptx_type)
    else:
        v = imp.value(src, want, inst.loc, ptx_type)
    imp.write_reg(dest, v, inst.loc)


# The fp8 pair types of cvt (sm_89): two values in a .b16, the first operand's upper.
FP8_PAIRS = ("e4m3x2", "e5m2x2")


def _fp8_form(inst: ast.Instruction) -> tuple[str, str, bool] | None:
    """(dtype, atype, relu) of the fp8 pair forms ptx.cvt/ptx.cvt_pack hold, or None:
    cvt.rn.satfinite{.relu}.f8x2.{f32,f16x2} and cvt.rn{.relu}.f16x2.f8x2 (PTX ISA
    9.7.9.21). Other spellings (.rz, .e2m1x2, .ue8m0x2, .bf16x2 sources) stay `ptx.inst`, which
    the lowering names as unsupported."""
    mods = list(inst.modifiers)
    relu = "relu" in mods
    if relu:
        mods.remove("relu")
    if len(mods) == 4 and mods[:2] == ["rn", "satfinite"] and mods[2] in FP8_PAIRS \
            and mods[3] in ("f32", "f16x2"):
        return mods[2], mods[3], relu
    if len(mods) == 3 and mods[:2] == ["rn", "f16x2"] and mods[2] in FP8_PAIRS:
        return mods[1], mods[2], relu
    return None


def _cvt_fp8(imp: FunctionImporter, inst: ast.Instruction, dtype: str, atype: str,
             relu: bool) -> None:
    dest = inst.operands[0]
    if not isinstance(dest, ast.Reg):
        raise imp.error("'cvt' needs a register destination", inst.loc)
    rt = imp.reg_type(dest.name, inst.loc)
    narrowing = dtype in FP8_PAIRS
    attrs = attr_dict(relu=relu, rnd="#ptx.rnd<rn>", satfinite=narrowing,
                      src_type=None if atype == "f32" else f"#ptx.type<{atype}>",
                      type=f"#ptx.type<{dtype}>")
    if atype == "f32":  # d, a, b: a to the upper byte
        vs = operand_values(imp, inst, ["f32", "f32"], ["f32", "f32"])
        if rt not in ("i16", "i32", "i64"):
            raise imp.error(f"unsupported 'cvt' of an fp8 pair into a {rt} register", inst.loc)
        emit_result(imp, inst, f"ptx.cvt_pack {{0}}, {{1}} {attrs} : {rt}", vs, rt)
        return
    expect_operands(imp, inst, 2)
    src = inst.operands[1]
    if isinstance(src, ast.Reg) and src.name not in SPECIAL_REGS:
        v = imp.read_reg(src.name, inst.loc)
    else:
        v = imp.value(src, "i32" if atype == "f16x2" else "i16", inst.loc)
    width = {"f16x2": 32}
    if bits(v.type) < width.get(atype, 16) or bits(rt) < width.get(dtype, 16):
        raise imp.error(f"'cvt.{dtype}.{atype}' on a register narrower than its type",
                        inst.loc)
    r = imp.new_value(rt)
    imp.emit([r], f"ptx.cvt {{0}} {attrs} : {v.type} -> {rt}", [v], inst.loc)
    imp.write_reg(dest, r, inst.loc)


# cvt.pack.sat's integer forms: the width each type packs into.
PACK_WIDTHS = {"u16": 16, "s16": 16, "u8": 8, "s8": 8, "u4": 4, "s4": 4, "u2": 2, "s2": 2}


def _cvt_pack_sat(imp: FunctionImporter, inst: ast.Instruction) -> None:
    """cvt.pack.sat.{u16,s16}.s32 d, a, b and
    cvt.pack.sat.{u8,s8,u4,s4,u2,s2}.s32.b32 d, a, b, c."""
    mods = list(inst.modifiers)
    width = PACK_WIDTHS.get(mods[2]) if len(mods) >= 4 else None
    sources = ["s32"] if width == 16 else ["s32", "b32"]
    if mods[:2] != ["pack", "sat"] or width is None or mods[3:] != sources:
        raise imp.error(f"unsupported 'cvt.{'.'.join(mods)}'", inst.loc)
    n = 2 if width == 16 else 3
    vs = operand_values(imp, inst, ["i32"] * n, ["s32", "s32", "b32"][:n])
    attrs = attr_dict(is_signed=mods[2].startswith("s"), width=f"{width} : i32")
    emit_result(imp, inst, f"ptx.cvt_pack_sat {operand_slots(n)} {attrs}", vs, "i32")


@handles("cvt")
def _cvt(imp: FunctionImporter, inst: ast.Instruction) -> None:
    if inst.modifiers and inst.modifiers[0] == "pack":
        _cvt_pack_sat(imp, inst)
        return
    m = classify(inst)
    if any(r in FP8_PAIRS for r in m.rest):
        form = _fp8_form(inst)
        if form is not None:
            _cvt_fp8(imp, inst, *form)
            return
    if len(inst.operands) == 3 and m.types and m.types[0] in ("f16x2", "bf16x2"):
        check_no_rest(imp, inst, m, {"satfinite"})
        if m.types[1:] != ["f32"]:
            raise imp.error("unsupported packed 'cvt' source (expected .f32)", inst.loc)
        vs = operand_values(imp, inst, ["f32", "f32"], ["f32", "f32"])
        attrs = attr_dict(relu="relu" in m.flags, rnd=f"#ptx.rnd<{m.rnd}>" if m.rnd else None,
                          satfinite="satfinite" in m.rest, type=f"#ptx.type<{m.types[0]}>")
        emit_result(imp, inst, f"ptx.cvt_pack {{0}}, {{1}} {attrs} : i32", vs, "i32")
        return
    if m.rest:
        # .satfinite, .tf32, the fp8 pair forms _fp8_form leaves, ...: the generic form.
        generic(imp, inst)
        return
    expect_operands(imp, inst, 2)
    if len(m.types) != 2:
        raise imp.error("'cvt' needs a destination and a source type", inst.loc)
    dst_type, src_type = m.types
    dest, src = inst.operands
    if isinstance(src, ast.Reg) and src.name not in SPECIAL_REGS:
        v = imp.read_reg(src.name, inst.loc)
    else:
        v = imp.value(src, mlir_type(src_type), inst.loc, src_type)
    rt = imp.reg_type(dest.name, inst.loc) if isinstance(dest, ast.Reg) else mlir_type(dst_type)
    r = imp.new_value(rt)
    attrs = attr_dict(ftz="ftz" in m.flags, relu="relu" in m.flags,
                      rnd=f"#ptx.rnd<{m.rnd}>" if m.rnd else None, sat="sat" in m.flags,
                      src_type=f"#ptx.type<{src_type}>", type=f"#ptx.type<{dst_type}>")
    imp.emit([r], f"ptx.cvt {{0}} {attrs} : {v.type} -> {rt}", [v], inst.loc)
    imp.write_reg(dest, r, inst.loc)
