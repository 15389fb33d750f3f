"""Bit manipulation: shifts (shl, shr, shf), popc, clz, bfind, brev, cnot,
bfe/bfi, prmt, lop3, szext, bmsk, fns."""

from __future__ import annotations

from zmlir.frontend import ast
from zmlir.frontend.importer.common import (
    Modifiers,
    arith_attrs,
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
from zmlir.frontend.importer.ptxtypes import mlir_type


@handles("shl", "shr")
def _shift(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    expect_operands(imp, inst, 3)
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    va = imp.value(inst.operands[1], t, inst.loc, ptx_type)
    vb = imp.value(inst.operands[2], "i32", inst.loc)
    r = imp.new_value(t)
    imp.emit([r], f"ptx.{inst.opcode} {{0}}, {{1}} {arith_attrs(ptx_type, m)} : {t}",
             [va, vb], inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


@handles("popc", "clz", "bfind", "brev", "cnot")
def _bit_unary(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    allowed = {"shiftamt"} if inst.opcode == "bfind" else set()
    check_no_rest(imp, inst, m, allowed)
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    (a,) = operand_values(imp, inst, [t], [ptx_type])
    attrs = attr_dict(shiftamt="shiftamt" in m.rest, type=f"#ptx.type<{ptx_type}>")
    if inst.opcode in ("brev", "cnot"):
        emit_result(imp, inst, f"ptx.{inst.opcode} {{0}} {attrs} : {t}", [a], t)
    else:
        emit_result(imp, inst, f"ptx.{inst.opcode} {{0}} {attrs} : {t} -> i32", [a], "i32")


@handles("bfe", "bfi")
def _bit_field(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    types = [t, "i32", "i32"] if inst.opcode == "bfe" else [t, t, "i32", "i32"]
    vs = operand_values(imp, inst, types, [ptx_type] + [""] * (len(types) - 1))
    attrs = attr_dict(type=f"#ptx.type<{ptx_type}>")
    emit_result(imp, inst, f"ptx.{inst.opcode} {operand_slots(len(vs))} {attrs} : {t}", vs, t)


@handles("prmt")
def _prmt(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    modes = {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"}
    check_no_rest(imp, inst, m, modes)
    mode = next((r for r in m.rest if r in modes), None)
    vs = operand_values(imp, inst, ["i32"] * 3)
    attrs = attr_dict(mode=f"#ptx.prmt<{mode}>" if mode else None)
    emit_result(imp, inst, f"ptx.prmt {operand_slots(3)} {attrs} : i32", vs, "i32")


@handles("lop3")
def _lop3(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    expect_operands(imp, inst, 5)
    lut = inst.operands[4]
    if not isinstance(lut, ast.IntImm):
        raise imp.error("'lop3' needs an immediate lookup table", inst.loc)
    vs = [imp.value(o, "i32", inst.loc) for o in inst.operands[1:4]]
    emit_result(imp, inst,
                f"ptx.lop3 {operand_slots(3)} {{{{lut = {lut.value & 0xff} : i32}}}} : i32", vs,
                "i32")


def _clamp_mode(imp: FunctionImporter, inst: ast.Instruction, m: Modifiers) -> str:
    mode = next((r for r in m.rest if r in ("clamp", "wrap")), None)
    if mode is None:
        raise imp.error(f"'{inst.opcode}' needs .clamp or .wrap", inst.loc)
    return f"#ptx.clampmode<{mode}>"


@handles("shf")
def _shf(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m, {"l", "r", "clamp", "wrap"})
    direction = next((r for r in m.rest if r in ("l", "r")), None)
    if direction is None:
        raise imp.error("'shf' needs .l or .r", inst.loc)
    ptx_type = one_type(imp, inst, m)
    vs = operand_values(imp, inst, ["i32"] * 3)
    attrs = attr_dict(dir=f"#ptx.dir<{direction}>", mode=_clamp_mode(imp, inst, m),
                      type=f"#ptx.type<{ptx_type}>")
    emit_result(imp, inst, f"ptx.shf {operand_slots(3)} {attrs} : i32", vs, "i32")


@handles("szext", "bmsk")
def _szext(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m, {"clamp", "wrap"})
    ptx_type = one_type(imp, inst, m)
    vs = operand_values(imp, inst, ["i32"] * 2)
    attrs = attr_dict(mode=_clamp_mode(imp, inst, m),
                      type=f"#ptx.type<{ptx_type}>" if inst.opcode == "szext" else None)
    emit_result(imp, inst, f"ptx.{inst.opcode} {operand_slots(2)} {attrs} : i32", vs, "i32")


@handles("fns")
def _fns(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    if one_type(imp, inst, m) != "b32":
        raise imp.error("unsupported 'fns' type (expected fns.b32)", inst.loc)
    vs = operand_values(imp, inst, ["i32"] * 3)
    emit_result(imp, inst, f"ptx.fns {operand_slots(3)} : i32", vs, "i32")
