"""Integer and floating-point arithmetic: add, sub, mul, mad, fma, div,
min/max, neg/abs/not, and/or/xor, the extended-precision carry forms
(add.cc, addc, ...), mul24/mad24, sad, dp4a/dp2a, the special functions
(rcp, sqrt, sin, ex2, ...), testp, and comparison and selection: setp, selp,
set, slct."""

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
from zmlir.frontend.importer.core import CARRY_REG, FunctionImporter, handles
from zmlir.frontend.importer.generic import generic
from zmlir.frontend.importer.ptxtypes import bits, mlir_type
from zmlir.frontend.ssa import Value

_PACKED_INT_TYPES = {"u16x2", "s16x2"}
_HALF_TYPES = {"f16", "f16x2", "bf16", "bf16x2"}


@handles("add", "sub", "min", "max", "and", "or", "xor", "rem", "div", "copysign")
def _binary(imp: FunctionImporter, inst: ast.Instruction) -> None:
    if "cc" in inst.modifiers and inst.opcode in ("add", "sub"):
        _carry(imp, inst)
        return
    m = classify(inst)
    if any(r in _PACKED_INT_TYPES for r in m.rest):
        _packed_int(imp, inst, m)
        return
    check_no_rest(imp, inst, m,
                  {"NaN", "xorsign", "abs"} if inst.opcode in ("min", "max") else set())
    if ("xorsign" in m.rest) != ("abs" in m.rest):
        raise imp.error(f"'.xorsign' and '.abs' go together on '{inst.opcode}'", inst.loc)
    expect_operands(imp, inst, 3)
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    d, a, b = inst.operands
    va = imp.value(a, t, inst.loc, ptx_type)
    vb = imp.value(b, t, inst.loc, ptx_type)
    r = imp.new_value(t)
    extra = {}
    if inst.opcode == "div":
        precision = "approx" if "approx" in m.flags else ("full" if "full" in m.flags else None)
        extra["precision"] = f"#ptx.precision<{precision}>" if precision else None
    extra["nan"] = "NaN" in m.rest
    extra["relu"] = "relu" in m.flags
    extra["xorsign"] = "xorsign" in m.rest
    if extra["xorsign"] and ptx_type not in (*_HALF_TYPES, "f32"):
        raise imp.error(f"unsupported '.xorsign.abs' on '{inst.opcode}.{ptx_type}'", inst.loc)
    attrs = arith_attrs(ptx_type, m, **extra)
    imp.emit([r], f"ptx.{inst.opcode} {{0}}, {{1}} {attrs} : {t}", [va, vb], inst.loc)
    imp.write_reg(d, r, inst.loc)


# The lane operation of add/sub/min/max on .u16x2/.s16x2 (PTX ISA 8.0).
_PACKED_LANE_OPS = {("add", "u"): "addi", ("add", "s"): "addi", ("sub", "u"): "subi",
                    ("sub", "s"): "subi", ("min", "u"): "minui", ("min", "s"): "minsi",
                    ("max", "u"): "maxui", ("max", "s"): "maxsi"}


def _packed_int(imp: FunctionImporter, inst: ast.Instruction, m: Modifiers) -> None:
    """add/sub/min/max on two 16-bit lanes of a 32-bit register, each lane
    on its own (add and sub wrap; `.relu` clamps a signed min/max at 0):
    the operands split into halves, the lane op on i16, the halves packed."""
    (packed,) = [r for r in m.rest if r in _PACKED_INT_TYPES]
    lane_op = _PACKED_LANE_OPS.get((inst.opcode, packed[0]))
    relu = "relu" in m.flags
    if (lane_op is None or m.types or len(m.rest) != 1 or m.flags - {"relu"}
            or m.rnd or m.space or (relu and (packed != "s16x2" or inst.opcode in ("add", "sub")))):
        raise imp.error(f"unsupported instruction '{inst.opcode}{''.join('.' + x for x in inst.modifiers)}'",
                        inst.loc)
    expect_operands(imp, inst, 3)
    d, a, b = inst.operands
    loc = inst.loc

    def op(template: str, operands: list[Value], type_: str) -> Value:
        result = imp.new_value(type_)
        imp.emit([result], template, operands, loc)
        return result

    sixteen = op("arith.constant 16 : i32", [], "i32")
    lanes = []
    for operand in (a, b):
        v = imp.value(operand, "i32", loc, "b32")
        high = op("arith.shrui {0}, {1} : i32", [v, sixteen], "i32")
        lanes.append([op("arith.trunci {0} : i32 to i16", [x], "i16") for x in (v, high)])
    results = [op(f"arith.{lane_op} {{0}}, {{1}} : i16", [x, y], "i16")
               for x, y in zip(*lanes, strict=True)]
    if relu:
        zero = op("arith.constant 0 : i16", [], "i16")
        results = [op("arith.maxsi {0}, {1} : i16", [x, zero], "i16") for x in results]
    low, high = (op("arith.extui {0} : i16 to i32", [x], "i32") for x in results)
    high = op("arith.shli {0}, {1} : i32", [high, sixteen], "i32")
    imp.write_reg(d, op("arith.ori {0}, {1} : i32", [low, high], "i32"), loc)


def _mul_mode(m: Modifiers) -> str | None:
    # .lo and .hi are also comparison names (setp.lo/.hi), so classify may
    # have put them in `cmp`.
    for mode in ("lo", "hi", "wide"):
        if mode in m.flags or m.cmp == mode:
            return mode
    return None


@handles("mul", "mad")
def _mul(imp: FunctionImporter, inst: ast.Instruction) -> None:
    if "cc" in inst.modifiers and inst.opcode == "mad":
        _carry(imp, inst)
        return
    m = classify(inst)
    check_no_rest(imp, inst, m)
    is_mad = inst.opcode == "mad"
    expect_operands(imp, inst, 4 if is_mad else 3)
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    mode = _mul_mode(m)
    rt = f"i{2 * bits(t)}" if mode == "wide" else t
    va = imp.value(inst.operands[1], t, inst.loc, ptx_type)
    vb = imp.value(inst.operands[2], t, inst.loc, ptx_type)
    operands = [va, vb]
    if is_mad:
        operands.append(imp.value(inst.operands[3], rt, inst.loc))
    r = imp.new_value(rt)
    attrs = arith_attrs(ptx_type, m, mode=f"#ptx.mode<{mode}>" if mode else None)
    slots = ", ".join(f"{{{i}}}" for i in range(len(operands)))
    imp.emit([r], f"ptx.{inst.opcode} {slots} {attrs} : {t} -> {rt}", operands, inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


@handles("fma")
def _fma(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    expect_operands(imp, inst, 4)
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    vs = [imp.value(o, t, inst.loc, ptx_type) for o in inst.operands[1:]]
    r = imp.new_value(t)
    if "relu" in m.flags and ptx_type not in _HALF_TYPES:
        raise imp.error(f"unsupported '.relu' on 'fma.{ptx_type}'", inst.loc)
    attrs = arith_attrs(ptx_type, m, relu="relu" in m.flags)
    imp.emit([r], f"ptx.fma {{0}}, {{1}}, {{2}} {attrs} : {t}", vs, inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


@handles("neg", "abs", "not")
def _unary(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    expect_operands(imp, inst, 2)
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    va = imp.value(inst.operands[1], t, inst.loc, ptx_type)
    r = imp.new_value(t)
    imp.emit([r], f"ptx.{inst.opcode} {{0}} {arith_attrs(ptx_type, m)} : {t}", [va], inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


@handles("mul24", "mad24")
def _mul24(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    ptx_type = one_type(imp, inst, m)
    mode = _mul_mode(m)
    vs = operand_values(imp, inst, ["i32"] * (3 if inst.opcode == "mad24" else 2))
    attrs = attr_dict(mode=f"#ptx.mode<{mode}>" if mode else None,
                      sat="sat" in m.flags and inst.opcode == "mad24",
                      type=f"#ptx.type<{ptx_type}>")
    emit_result(imp, inst, f"ptx.{inst.opcode} {operand_slots(len(vs))} {attrs} : i32", vs, "i32")


@handles("sad")
def _sad(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    vs = operand_values(imp, inst, [t] * 3, [ptx_type] * 3)
    attrs = attr_dict(type=f"#ptx.type<{ptx_type}>")
    emit_result(imp, inst, f"ptx.sad {operand_slots(3)} {attrs} : {t}", vs, t)


@handles("dp4a", "dp2a")
def _dp(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    if len(m.types) != 2:
        raise imp.error(f"'{inst.opcode}' needs two operand types", inst.loc)
    vs = operand_values(imp, inst, ["i32"] * 3)
    attrs = attr_dict(a_type=f"#ptx.type<{m.types[0]}>", b_type=f"#ptx.type<{m.types[1]}>",
                      hi=inst.opcode == "dp2a" and _mul_mode(m) == "hi")
    emit_result(imp, inst, f"ptx.{inst.opcode} {operand_slots(3)} {attrs} : i32", vs, "i32")


@handles("addc", "subc", "madc")
def _carry(imp: FunctionImporter, inst: ast.Instruction) -> None:
    """add.cc/addc/sub.cc/subc/mad.cc/madc: CC.CF is the hidden register
    CARRY_REG, read by the `c` forms and written by the `.cc` forms."""
    m = classify(inst)
    check_no_rest(imp, inst, m, {"cc"})
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    base = inst.opcode.rstrip("c") if inst.opcode in ("addc", "subc", "madc") else inst.opcode
    carry_in = inst.opcode in ("addc", "subc", "madc")
    writes_cc = "cc" in m.rest
    n = 3 if base == "mad" else 2
    vs = operand_values(imp, inst, [t] * n, [ptx_type] * n)
    if carry_in:
        vs.append(imp.read_reg(CARRY_REG, inst.loc))
    mode = _mul_mode(m)
    if base == "mad" and mode not in ("lo", "hi"):
        raise imp.error(f"'{inst.opcode}' needs .lo or .hi", inst.loc)
    attrs = attr_dict(mode=f"#ptx.mode<{mode}>" if base == "mad" else None,
                      type=f"#ptx.type<{ptx_type}>")
    r, cf = imp.new_value(t), imp.new_value("i1")
    imp.emit([r, cf], f"ptx.{base}_cc {operand_slots(len(vs))} {attrs} : {t}", vs, inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)
    if writes_cc:
        imp.define(CARRY_REG, cf)


# -- float special functions ----------------------------------------------------


@handles("rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh")
def _float_unary(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    (a,) = operand_values(imp, inst, [t], [ptx_type])
    precision = "approx" if "approx" in m.flags else ("full" if "full" in m.flags else None)
    attrs = arith_attrs(ptx_type, m,
                        precision=f"#ptx.precision<{precision}>" if precision else None)
    emit_result(imp, inst, f"ptx.{inst.opcode} {{0}} {attrs} : {t}", [a], t)


@handles("testp")
def _testp(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    classes = {"finite", "infinite", "number", "notanumber", "normal", "subnormal"}
    check_no_rest(imp, inst, m, classes)
    kind = next((r for r in m.rest if r in classes), None)
    if kind is None:
        raise imp.error("'testp' needs a class (.finite, .normal, ...)", inst.loc)
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    (a,) = operand_values(imp, inst, [t], [ptx_type])
    attrs = attr_dict(kind=f"#ptx.testp<{kind}>", type=f"#ptx.type<{ptx_type}>")
    emit_result(imp, inst, f"ptx.testp {{0}} {attrs} : {t}", [a], "i1")


# -- comparison and selection ---------------------------------------------------


@handles("setp")
def _setp(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    ptx_type = one_type(imp, inst, m)
    if m.cmp is None:
        raise imp.error("'setp' needs a comparison operator", inst.loc)
    t = mlir_type(ptx_type)
    if len(inst.operands) not in (3, 4):
        raise imp.error("'setp' expects 3 or 4 operands", inst.loc)
    dest = inst.operands[0]
    va = imp.value(inst.operands[1], t, inst.loc, ptx_type)
    vb = imp.value(inst.operands[2], t, inst.loc, ptx_type)
    operands = [va, vb]
    boolop = next((b for b in ("and", "or", "xor") if b in m.flags), None)
    negate_c = False
    if len(inst.operands) == 4:
        c = inst.operands[3]
        if isinstance(c, ast.Not):
            negate_c, c = True, c.operand
        operands.append(imp.value(c, "i1", inst.loc))
        if boolop is None:
            raise imp.error("'setp' with a fourth operand needs .and, .or or .xor", inst.loc)
    p, q = imp.new_value("i1"), imp.new_value("i1")
    attrs = attr_dict(cmp=f"#ptx.cmp<{m.cmp}>", type=f"#ptx.type<{ptx_type}>",
                      boolop=f"#ptx.boolop<{boolop}>" if boolop else None,
                      negate_c=negate_c, ftz="ftz" in m.flags)
    slots = ", ".join(f"{{{i}}}" for i in range(len(operands)))
    imp.emit([p, q], f"ptx.setp {slots} {attrs} : {t}", operands, inst.loc)
    if isinstance(dest, ast.Pair):
        imp.write_reg(dest.first, p, inst.loc)
        imp.write_reg(dest.second, q, inst.loc)
    else:
        imp.write_reg(dest, p, inst.loc)


@handles("selp")
def _selp(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    expect_operands(imp, inst, 4)
    ptx_type = one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    va = imp.value(inst.operands[1], t, inst.loc, ptx_type)
    vb = imp.value(inst.operands[2], t, inst.loc, ptx_type)
    vp = imp.value(inst.operands[3], "i1", inst.loc)
    r = imp.new_value(t)
    imp.emit([r], f"ptx.selp {{0}}, {{1}}, {{2}} {attr_dict(type=f'#ptx.type<{ptx_type}>')} : {t}",
             [va, vb, vp], inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


# 1.0 in each half-precision type: what `set` writes for true.
_HALF_ONE = {"f16": 0x3C00, "bf16": 0x3F80}


@handles("set")
def _set(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    if len(m.types) != 2 or m.cmp is None:
        raise imp.error("'set' needs a comparison and two types", inst.loc)
    dtype, stype = m.types
    half = dtype in _HALF_ONE and not stype.endswith("x2")
    if dtype not in ("u32", "s32", "f32") and not half:
        # .f16x2/.bf16x2 results: ptx.set has no such result type.
        generic(imp, inst)
        return
    if len(inst.operands) not in (3, 4):
        raise imp.error("'set' expects 3 or 4 operands", inst.loc)
    st = mlir_type(stype)
    operands = [imp.value(o, st, inst.loc, stype) for o in inst.operands[1:3]]
    boolop = next((b for b in ("and", "or", "xor") if b in m.flags), None)
    negate_c = False
    if len(inst.operands) == 4:
        c = inst.operands[3]
        if isinstance(c, ast.Not):
            negate_c, c = True, c.operand
        operands.append(imp.value(c, "i1", inst.loc))
        if boolop is None:
            raise imp.error("'set' with a fourth operand needs .and, .or or .xor", inst.loc)
    if half:
        # 1.0 or 0.0 of the half type (numba's float16 ==): setp, then a select.
        p, q = imp.new_value("i1"), imp.new_value("i1")
        attrs = attr_dict(cmp=f"#ptx.cmp<{m.cmp}>", type=f"#ptx.type<{stype}>",
                          boolop=f"#ptx.boolop<{boolop}>" if boolop else None,
                          negate_c=negate_c, ftz="ftz" in m.flags)
        imp.emit([p, q], f"ptx.setp {operand_slots(len(operands))} {attrs} : {st}", operands,
                 inst.loc)
        one, zero = imp.new_value(dtype), imp.new_value(dtype)
        imp.emit([one], f"arith.constant 0x{_HALF_ONE[dtype]:04X} : {dtype}", [], inst.loc)
        imp.emit([zero], f"arith.constant 0x0000 : {dtype}", [], inst.loc)
        emit_result(imp, inst, f"arith.select {{0}}, {{1}}, {{2}} : {dtype}", [p, one, zero],
                    dtype)
        return
    rt = "f32" if dtype == "f32" else "i32"
    attrs = attr_dict(boolop=f"#ptx.boolop<{boolop}>" if boolop else None,
                      cmp=f"#ptx.cmp<{m.cmp}>", ftz="ftz" in m.flags, negate_c=negate_c,
                      src_type=f"#ptx.type<{stype}>", type=f"#ptx.type<{dtype}>")
    emit_result(imp, inst, f"ptx.set {operand_slots(len(operands))} {attrs} : {st} -> {rt}",
                operands, rt)


@handles("slct")
def _slct(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    if len(m.types) != 2 or m.types[1] not in ("s32", "f32"):
        raise imp.error("'slct' needs a result type and .s32 or .f32", inst.loc)
    dtype, ctype = m.types
    t, ct = mlir_type(dtype), mlir_type(ctype)
    vs = operand_values(imp, inst, [t, t, ct], [dtype, dtype, ctype])
    attrs = attr_dict(c_type=f"#ptx.type<{ctype}>", ftz="ftz" in m.flags,
                      type=f"#ptx.type<{dtype}>")
    emit_result(imp, inst, f"ptx.slct {operand_slots(3)} {attrs} : {t}, {ct}", vs, t)
