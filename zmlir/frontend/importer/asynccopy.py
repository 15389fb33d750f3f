"""Asynchronous copies from global to shared memory: cp.async and its groups
(cp.async.commit_group, cp.async.wait_group, cp.async.wait_all), and the
mbarrier arrival once a thread's copies are complete; bulk copies and their
groups:

    cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]

    cp.async.{ca,cg}.shared{::cta}.global{.L2::cache_hint}{.L2::64B|128B|256B}
        [dst], [src], cp-size{, src-size | ignore-src}{, cache-policy}

    cp.async.bulk.shared::{cluster,cta}.global.mbarrier::complete_tx::bytes{.L2::cache_hint}
        [dst], [src], size, [mbar]{, cache-policy}
    cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes
        [dst], [src], size, [mbar]
    cp.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}
        [dst], [src], size{, cache-policy}
    cp.async.bulk.commit_group
    cp.async.bulk.wait_group{.read} N

The cache hint and the L2 prefetch size change no result: they are
accepted and dropped, and so is the cache-policy operand. Every other `cp`
form (multicast and masked bulk copies, cp.async.bulk.tensor and .prefetch,
cp.reduce.async.bulk*, an mbarrier in another CTA) imports as `ptx.inst`,
which the lowering names as unsupported."""

from __future__ import annotations

from zmlir.frontend import ast
from zmlir.frontend.importer.common import address, attr_dict
from zmlir.frontend.importer.core import FunctionImporter, handles
from zmlir.frontend.importer.generic import generic
from zmlir.frontend.ssa import Value

_CACHE_OPS = {"ca", "cg"}
_DST_SPACES = {"shared", "shared::cta"}
_PREFETCH_SIZES = {"L2::64B", "L2::128B", "L2::256B"}
_CACHE_HINT = "L2::cache_hint"
_COMPLETE_TX = "mbarrier::complete_tx::bytes"
# cp.async.bulk's (destination, source, completion) forms: the spaces as
# the dialect names them.
_BULK_FORMS = {
    ("shared::cluster", "global", _COMPLETE_TX): ("shared_cluster", "global"),
    ("shared::cta", "global", _COMPLETE_TX): ("shared", "global"),
    ("shared::cluster", "shared::cta", _COMPLETE_TX): ("shared_cluster", "shared"),
    ("global", "shared::cta", "bulk_group"): ("global", "shared"),
}


@handles("cp")
def _cp(imp: FunctionImporter, inst: ast.Instruction) -> None:
    mods = inst.modifiers
    if mods == ("async", "commit_group") and not inst.operands:
        imp.emit([], "ptx.cp_async_commit_group", [], inst.loc)
    elif mods == ("async", "wait_all") and not inst.operands:
        imp.emit([], "ptx.cp_async_wait_group {{all}}", [], inst.loc)
    elif mods == ("async", "wait_group") and len(inst.operands) == 1:
        n = inst.operands[0]
        if not isinstance(n, ast.IntImm):
            raise imp.error("'cp.async.wait_group' expects an integer constant", inst.loc)
        imp.emit([], f"ptx.cp_async_wait_group {attr_dict(pending=f'{n.value} : i64')}", [],
                 inst.loc)
    elif mods[:3] == ("async", "mbarrier", "arrive") and len(inst.operands) == 1 \
            and _is_mbarrier_arrive(mods[3:]):
        space = "shared" if mods[-2:-1] in (("shared",), ("shared::cta",)) else None
        addr, offset = address(imp, inst, inst.operands[0], space)
        attrs = attr_dict(noinc="noinc" in mods, offset=f"{offset} : i64" if offset else None,
                          space=f"#ptx.space<{space}>" if space else None)
        imp.emit([], f"ptx.cp_async_mbarrier_arrive {{0}} {attrs} : {addr.type}", [addr],
                 inst.loc)
    elif _is_copy(mods):
        _copy(imp, inst)
    elif mods == ("async", "bulk", "commit_group") and not inst.operands:
        imp.emit([], "ptx.cp_async_bulk_commit_group", [], inst.loc)
    elif mods[:3] == ("async", "bulk", "wait_group") and mods[3:] in ((), ("read",)) \
            and len(inst.operands) == 1:
        n = inst.operands[0]
        if not isinstance(n, ast.IntImm):
            raise imp.error("'cp.async.bulk.wait_group' expects an integer constant", inst.loc)
        attrs = attr_dict(pending=f"{n.value} : i64", read="read" in mods)
        imp.emit([], f"ptx.cp_async_bulk_wait_group {attrs}", [], inst.loc)
    elif _is_bulk_copy(mods):
        _bulk_copy(imp, inst)
    else:
        generic(imp, inst)


def _is_mbarrier_arrive(mods: tuple[str, ...]) -> bool:
    """`{.noinc}{.shared{::cta}}.b64`, after cp.async.mbarrier.arrive."""
    if mods[:1] == ("noinc",):
        mods = mods[1:]
    return mods in (("b64",), ("shared", "b64"), ("shared::cta", "b64"))


def _is_copy(mods: tuple[str, ...]) -> bool:
    if len(mods) < 4 or mods[0] != "async" or mods[1] not in _CACHE_OPS:
        return False
    if mods[2] not in _DST_SPACES or mods[3] != "global":
        return False
    hints = mods[4:]
    return (len(set(hints)) == len(hints)
            and all(h == _CACHE_HINT or h in _PREFETCH_SIZES for h in hints)
            and sum(h in _PREFETCH_SIZES for h in hints) <= 1)


def _copy(imp: FunctionImporter, inst: ast.Instruction) -> None:
    operands = list(inst.operands)
    if _CACHE_HINT in inst.modifiers:
        if len(operands) not in (4, 5):
            raise imp.error("'cp.async' with .L2::cache_hint expects a cache-policy operand",
                            inst.loc)
        operands.pop()  # the cache policy: a hint
    if len(operands) not in (3, 4):
        raise imp.error(f"'cp.async' expects 3 or 4 operands, got {len(operands)}", inst.loc)
    size = operands[2]
    if not isinstance(size, ast.IntImm):
        raise imp.error("'cp.async' expects the copy size as an integer constant", inst.loc)
    dst, dst_offset = address(imp, inst, operands[0], "shared")
    src, src_offset = address(imp, inst, operands[1], "global")
    args: list[Value] = [dst, src]
    extra = ""
    if len(operands) == 4:
        last = operands[3]
        if _is_predicate(imp, last):
            args.append(imp.value(last, "i1", inst.loc))
            extra = " ignore_src {2}"
        else:
            args.append(imp.value(last, "i32", inst.loc, "u32"))
            extra = " src_size {2}"
    attrs = attr_dict(
        cache=f"#ptx.cache<{inst.modifiers[1]}>",
        dst_offset=f"{dst_offset} : i64" if dst_offset else None,
        size=f"{size.value} : i64",
        src_offset=f"{src_offset} : i64" if src_offset else None)
    imp.emit([], f"ptx.cp_async {{0}}, {{1}}{extra} {attrs} : {dst.type}, {src.type}", args,
             inst.loc)


def _is_bulk_copy(mods: tuple[str, ...]) -> bool:
    """One of _BULK_FORMS; the cache hint on those to or from global memory."""
    if mods[:2] != ("async", "bulk") or mods[2:5] not in _BULK_FORMS:
        return False
    return mods[5:] == () or (mods[5:] == (_CACHE_HINT,) and "global" in mods[2:4])


def _bulk_copy(imp: FunctionImporter, inst: ast.Instruction) -> None:
    dst_space, src_space = _BULK_FORMS[inst.modifiers[2:5]]
    with_mbarrier = inst.modifiers[4] == _COMPLETE_TX
    count = 3 + with_mbarrier
    operands = list(inst.operands)
    if _CACHE_HINT in inst.modifiers:
        if len(operands) != count + 1:
            raise imp.error("'cp.async.bulk' with .L2::cache_hint expects a cache-policy operand",
                            inst.loc)
        operands.pop()  # the cache policy: a hint
    if len(operands) != count:
        raise imp.error(f"'cp.async.bulk' expects {count} operands, got {len(operands)}",
                        inst.loc)
    # Shared::cluster addresses are the executing CTA's shared ones where no
    # cluster has more than one CTA, and read as those (32 bits).
    dst, dst_offset = address(imp, inst, operands[0], "global" if dst_space == "global"
                              else "shared")
    src, src_offset = address(imp, inst, operands[1], src_space)
    args: list[Value] = [dst, src, imp.value(operands[2], "i32", inst.loc, "u32")]
    mbar_offset = 0
    extra, types = "", f"{dst.type}, {src.type}"
    if with_mbarrier:
        mbar, mbar_offset = address(imp, inst, operands[3], "shared")
        args.append(mbar)
        extra, types = " mbarrier {3}", f"{types}, {mbar.type}"
    attrs = attr_dict(
        dst_offset=f"{dst_offset} : i64" if dst_offset else None,
        dst_space=f"#ptx.space<{dst_space}>",
        mbar_offset=f"{mbar_offset} : i64" if mbar_offset else None,
        src_offset=f"{src_offset} : i64" if src_offset else None,
        src_space=f"#ptx.space<{src_space}>")
    imp.emit([], f"ptx.cp_async_bulk {{0}}, {{1}}, {{2}}{extra} {attrs} : {types}", args,
             inst.loc)


def _is_predicate(imp: FunctionImporter, operand: ast.Operand) -> bool:
    """Whether the fourth operand is the ignore-src predicate (`p`, `!p`),
    not the source size."""
    if isinstance(operand, ast.Not):
        return True
    return isinstance(operand, ast.Reg) and imp.ssa.reg_type(operand.name) == "i1"
