"""Memory: loads and stores (ld, ldu, st; `.param` ones as call arguments
and return values, aggregates too), cvta, prefetch, isspacep."""

from __future__ import annotations

from zmlir.frontend import ast
from zmlir.frontend.importer.common import (
    Modifiers,
    address,
    attr_dict,
    check_no_rest,
    classify,
    emit_result,
    expect_operands,
    one_type,
)
from zmlir.frontend.importer.core import FunctionImporter, handles
from zmlir.frontend.importer.generic import generic
from zmlir.frontend.importer.ptxtypes import (
    array_size,
    bits,
    element_bytes,
    is_aggregate,
    mlir_type,
)
from zmlir.frontend.importer.sreg import SPECIAL_REGS
from zmlir.frontend.ssa import Value


def _mem_attrs(m: Modifiers, ptx_type: str, offset: int) -> str:
    return attr_dict(
        cache=f"#ptx.cache<{m.cache}>" if m.cache else None,
        nc="nc" in m.flags,
        offset=f"{offset} : i64" if offset else None,
        scope=f"#ptx.scope<{m.scope}>" if m.scope else None,
        sem=f"#ptx.sem<{m.sem}>" if m.sem else None,
        space=f"#ptx.space<{m.space}>" if m.space else None,
        type=f"#ptx.type<{ptx_type}>",
        vec=f"{m.vec} : i64" if m.vec != 1 else None)


def _destinations(inst: ast.Instruction, operand: ast.Operand) -> list[ast.Operand]:
    return list(operand.elems) if isinstance(operand, ast.Vec) else [operand]


@handles("ld", "ldu")
def _ld(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    if len(inst.operands) == 3 and "L2::cache_hint" in m.flags:
        # The third operand is a cache policy (from `createpolicy`); ld_op has
        # no place for it.
        generic(imp, inst)
        return
    check_no_rest(imp, inst, m)
    expect_operands(imp, inst, 2)
    ptx_type = one_type(imp, inst, m)
    dests = _destinations(inst, inst.operands[0])
    if len(dests) != m.vec:
        raise imp.error(f"'{inst.opcode}' with .v{m.vec} needs {m.vec} destinations", inst.loc)
    src = inst.operands[1]
    if (m.space == "param" and isinstance(src, ast.Addr) and isinstance(src.base, ast.Sym)
            and src.base.name in imp.param_regs):
        v = imp.read_reg(imp.param_regs[src.base.name], inst.loc)
        if is_aggregate(v.type):
            _ld_aggregate(imp, inst, v, src.offset, ptx_type, dests)
            return
        if src.offset or m.vec != 1:
            raise imp.error("unsupported 'ld.param' of part of a scalar call parameter",
                            inst.loc)
        dest = dests[0]
        if isinstance(dest, ast.Reg):
            want = imp.reg_type(dest.name, inst.loc)
            if bits(v.type) != bits(want):
                r = imp.new_value(want)
                imp.emit([r], f"ptx.cvt {{0}} {{{{src_type = #ptx.type<b{bits(v.type)}>, "
                              f"type = #ptx.type<{ptx_type}>}}}} : {v.type} -> {want}",
                         [imp.coerce(v, f"i{bits(v.type)}", inst.loc)], inst.loc)
                v = r
        imp.write_reg(dest, v, inst.loc)
        return
    if m.space == "param" and not (isinstance(src, ast.Addr) and isinstance(src.base, ast.Reg)):
        # (Through a register: the address of a parameter, `ptx.param_addr`,
        # read like any other state space's below.)
        if (not isinstance(src, ast.Addr) or not isinstance(src.base, ast.Sym)
                or src.base.name not in imp.params):
            raise imp.error("unsupported 'ld.param' from something other than a parameter",
                            inst.loc)
        param = imp.params[src.base.name]
        # ld.param.vN: N element loads at consecutive offsets (a sink's
        # element is read too, and dropped).
        for i, dest in enumerate(dests):
            rt = (imp.reg_type(dest.name, inst.loc) if isinstance(dest, ast.Reg)
                  else mlir_type(ptx_type))
            r = imp.new_value(rt)
            offset = src.offset + i * element_bytes(ptx_type)
            attrs = attr_dict(offset=f"{offset} : i64" if offset else None,
                              type=f"#ptx.type<{ptx_type}>")
            imp.emit([r], f"ptx.ld_param {param.name} {attrs} : {param.type} -> {rt}", [],
                     inst.loc)
            imp.write_reg(dest, r, inst.loc)
        return
    addr, offset = address(imp, inst, src, m.space)
    results = []
    for d in dests:
        rt = imp.reg_type(d.name, inst.loc) if isinstance(d, ast.Reg) else mlir_type(ptx_type)
        results.append(imp.new_value(rt))
    types = ", ".join(r.type for r in results)
    imp.emit(results, f"ptx.ld {{0}} {_mem_attrs(m, ptx_type, offset)} : {addr.type} -> {types}",
             [addr], inst.loc)
    for d, r in zip(dests, results, strict=True):
        imp.write_reg(d, r, inst.loc)


@handles("st")
def _st(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    expect_operands(imp, inst, 2)
    ptx_type = one_type(imp, inst, m)
    if m.space == "param":
        target = inst.operands[0]
        if (not isinstance(target, ast.Addr) or not isinstance(target.base, ast.Sym)
                or target.base.name not in imp.param_regs):
            raise imp.error("unsupported 'st.param' to something other than a call "
                            "or return parameter", inst.loc)
        reg = imp.param_regs[target.base.name]
        want = imp.reg_type(reg, inst.loc)
        if is_aggregate(want):
            _st_aggregate(imp, inst, reg, target.offset, ptx_type, m.vec)
            return
        if target.offset or m.vec != 1:
            raise imp.error("unsupported 'st.param' of part of a scalar parameter", inst.loc)
        v = imp.value(inst.operands[1], f"i{bits(want)}" if not want.startswith("f")
                      and not want.startswith("bf") else want, inst.loc, ptx_type)
        imp.define(reg, imp.coerce(v, want, inst.loc))
        return
    addr, offset = address(imp, inst, inst.operands[0], m.space)
    sources = _destinations(inst, inst.operands[1])
    if len(sources) != m.vec:
        raise imp.error(f"'st' with .v{m.vec} needs {m.vec} values", inst.loc)
    values = []
    for s in sources:
        if isinstance(s, ast.Reg) and s.name not in SPECIAL_REGS:
            values.append(imp.read_reg(s.name, inst.loc))
        else:
            values.append(imp.value(s, mlir_type(ptx_type), inst.loc, ptx_type))
    slots = ", ".join(f"{{{i + 1}}}" for i in range(len(values)))
    types = ", ".join(v.type for v in values)
    imp.emit([], f"ptx.st {{0}}, {slots} {_mem_attrs(m, ptx_type, offset)} : {addr.type}, {types}",
             [addr, *values], inst.loc)


def _ld_aggregate(imp: FunctionImporter, inst: ast.Instruction, agg: Value, offset: int,
                  ptx_type: str, dests: list[ast.Operand]) -> None:
    """`ld.param{.vN}` from an aggregate call or return parameter: one
    `ptx.ld_param` per element, at consecutive offsets."""
    for i, dest in enumerate(dests):
        rt = (imp.reg_type(dest.name, inst.loc) if isinstance(dest, ast.Reg)
              else mlir_type(ptx_type))
        r = imp.new_value(rt)
        at = offset + i * element_bytes(ptx_type)
        attrs = attr_dict(offset=f"{at} : i64" if at else None, type=f"#ptx.type<{ptx_type}>")
        imp.emit([r], f"ptx.ld_param {{0}} {attrs} : {agg.type} -> {rt}", [agg], inst.loc)
        imp.write_reg(dest, r, inst.loc)


def _st_aggregate(imp: FunctionImporter, inst: ast.Instruction, reg: str, offset: int,
                  ptx_type: str, vec: int) -> None:
    """`st.param{.vN}` into an aggregate call or return parameter: each
    element gives a new value of the aggregate (`ptx.st_param`)."""
    sources = _destinations(inst, inst.operands[1])
    if len(sources) != vec:
        raise imp.error(f"'st' with .v{vec} needs {vec} values", inst.loc)
    size = array_size(imp.reg_type(reg, inst.loc))
    for i, src in enumerate(sources):
        at = offset + i * element_bytes(ptx_type)
        if at < 0 or at + element_bytes(ptx_type) > size:
            raise imp.error(f"'st.param' at byte {at} is outside the {size}-byte parameter",
                            inst.loc)
        if isinstance(src, ast.Reg) and src.name not in SPECIAL_REGS:
            v = imp.read_reg(src.name, inst.loc)
        else:
            v = imp.value(src, mlir_type(ptx_type), inst.loc, ptx_type)
        agg = imp.read_reg(reg, inst.loc)
        r = imp.new_value(agg.type)
        attrs = attr_dict(offset=f"{at} : i64" if at else None, type=f"#ptx.type<{ptx_type}>")
        imp.emit([r], f"ptx.st_param {{0}}, {{1}} {attrs} : {agg.type}, {v.type}", [agg, v],
                 inst.loc)
        imp.define(reg, r)


@handles("cvta")
def _cvta(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    expect_operands(imp, inst, 2)
    ptx_type = one_type(imp, inst, m)
    if m.space is None:
        raise imp.error("'cvta' needs a state space", inst.loc)
    dest = inst.operands[0]
    rt = imp.reg_type(dest.name, inst.loc) if isinstance(dest, ast.Reg) else mlir_type(ptx_type)
    src = imp.value(inst.operands[1], mlir_type(ptx_type), inst.loc, ptx_type)
    r = imp.new_value(rt)
    attrs = attr_dict(space=f"#ptx.space<{m.space}>", to="to" in m.flags,
                      type=f"#ptx.type<{ptx_type}>")
    imp.emit([r], f"ptx.cvta {{0}} {attrs} : {src.type} -> {rt}", [src], inst.loc)
    imp.write_reg(dest, r, inst.loc)


_PREFETCH_LEVELS = {"L1", "L2", "L2::evict_last", "L2::evict_normal"}


@handles("prefetch", "prefetchu")
def _prefetch(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    levels = [r for r in m.rest if r in _PREFETCH_LEVELS]
    level = levels[0] if len(levels) == 1 else ""
    uniform = inst.opcode == "prefetchu"
    # Other forms (prefetch.tensormap, .L2::evict_* without .global, ...)
    # import as ptx.inst with every modifier; lowering names them if unsupported.
    if (len(levels) != 1 or m.types or m.space not in (None, "global", "local")
            or any(r not in _PREFETCH_LEVELS for r in m.rest) or len(inst.operands) != 1
            or (level.startswith("L2::") and m.space != "global")
            or (uniform and (level != "L1" or m.space is not None))):
        generic(imp, inst)
        return
    addr, offset = address(imp, inst, inst.operands[0], m.space)
    attrs = attr_dict(level=f"#ptx.level<{level.replace('::', '_')}>",
                      offset=f"{offset} : i64" if offset else None,
                      space=f"#ptx.space<{m.space}>" if m.space else None, uniform=uniform)
    imp.emit([], f"ptx.prefetch {{0}} {attrs} : {addr.type}", [addr], inst.loc)


@handles("isspacep")
def _isspacep(imp: FunctionImporter, inst: ast.Instruction) -> None:
    m = classify(inst)
    check_no_rest(imp, inst, m)
    expect_operands(imp, inst, 2)
    if m.space is None or m.types:
        raise imp.error("unsupported 'isspacep' form (expected isspacep.space p, a)", inst.loc)
    src = inst.operands[1]
    if isinstance(src, ast.Reg):
        addr = imp.read_reg(src.name, inst.loc)
        if addr.type not in ("i32", "i64"):
            addr = imp.coerce(addr, f"i{bits(addr.type)}", inst.loc)
    else:
        addr = imp.value(src, "i64", inst.loc)
    emit_result(imp, inst, f"ptx.isspacep {{0}} {attr_dict(space=f'#ptx.space<{m.space}>')} : "
                           f"{addr.type}", [addr], "i1")
