"""Imports a parsed PTX module into the MLIR `ptx` dialect (as MLIR text).

Each PTX instruction becomes one ptx op carrying all its modifiers; registers
become SSA values (see ssa.py); labels and guarded instructions become blocks
and `ptx.cond_bra`. Every op carries the PTX source location, so later
diagnostics point at `file.ptx:line:col`.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass, field

from zmlir.diagnostics import CompileError, SourceLoc
from zmlir.frontend import ast, memo
from zmlir.frontend.collector import without_collector
from zmlir.frontend.ssa import Phi, SSABlock, SSABuilder, Value

# PTX register/instruction type -> MLIR type.
_MLIR_TYPES = {
    "pred": "i1",
    "b8": "i8", "u8": "i8", "s8": "i8",
    "b16": "i16", "u16": "i16", "s16": "i16", "f16": "f16", "bf16": "bf16",
    "b32": "i32", "u32": "i32", "s32": "i32", "f32": "f32",
    "f16x2": "i32", "bf16x2": "i32",
    "b64": "i64", "u64": "i64", "s64": "i64", "f64": "f64",
}
_TYPE_BITS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64,
              "f16": 16, "bf16": 16, "f32": 32, "f64": 64}
_STATE_SPACES = {"global", "shared", "shared::cta", "shared::cluster", "local", "const", "param"}
_ROUNDING = {"rn", "rz", "rm", "rp", "rna", "rs", "rni", "rzi", "rmi", "rpi"}
_CMP = {"eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
        "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"}
_SEMANTICS = {"weak", "volatile", "relaxed", "acquire", "release", "acq_rel", "mmio"}
_SCOPES = {"cta", "cluster", "gpu", "sys"}
_CACHE_OPS = {"ca", "cg", "cs", "lu", "cv", "wb", "wt"}
_SPECIAL_REGS = {
    "%tid.x", "%tid.y", "%tid.z", "%ntid.x", "%ntid.y", "%ntid.z",
    "%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z",
    "%laneid", "%warpid", "%nwarpid", "%clock", "%clock64", "%lanemask_eq",
    "%lanemask_lt", "%lanemask_le", "%lanemask_gt", "%lanemask_ge", "%smid", "%nsmid",
    "%gridid", "%globaltimer", "%dynamic_smem_size", "%total_smem_size",
}
_PACKED_INT_TYPES = {"u16x2", "s16x2"}
_HALF_TYPES = {"f16", "f16x2", "bf16", "bf16x2"}
# Special registers with no `ptx.sreg` case: reads of them import as the
# generic `ptx.inst` (operand kind "%name"), which lowering rejects.
_OTHER_SPECIAL_REG = re.compile(
    r"%(?:envreg\d+|cluster_\w+(?:\.[xyz])?|n?clusterid\.[xyz]|is_explicit_cluster"
    r"|aggr_smem_size|reserved_smem_\w+|pm\d+(?:_64)?|current_graph_exec)")
# Modifiers that are hints only and change no result.
_HINTS = {"uni", "aligned", "sync", "nc", "L1::evict_last", "L1::evict_first",
          "L1::no_allocate", "L1::evict_normal", "L1::evict_unchanged",
          "L2::64B", "L2::128B", "L2::256B", "L2::cache_hint"}


CARRY_REG = "%cc.cf"


def _no_undef(type_: str) -> Value:
    raise AssertionError("the function is imported already")


def mlir_type(ptx_type: str) -> str:
    return _MLIR_TYPES[ptx_type]


def bits(mlir: str) -> int:
    return _TYPE_BITS[mlir]


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(slots=True)
class _Op:
    """One op to print: results, text with {0}, {1}... operand slots, location."""

    results: list[Value]
    template: str
    operands: list[Value]
    loc: SourceLoc | None


@dataclass(slots=True)
class _Terminator:
    kind: str  # "bra", "cond_bra", "ret", "exit"
    succs: list[tuple[SSABlock, int]] = field(default_factory=list)  # (block, edge id)
    pred: Value | None = None
    attrs: str = ""
    loc: SourceLoc | None = None
    values: list[Value] = field(default_factory=list)  # a .func's return values


@dataclass(slots=True)
class _Block:
    ssa: SSABlock
    ops: list[_Op] = field(default_factory=list)
    term: _Terminator | None = None


class _FunctionImporter:
    """Builds the ops of one function; see import_module."""

    def __init__(self, module: ModuleImporter, fn: ast.Function) -> None:
        self.m = module
        self.fn = fn
        self.ssa = SSABuilder(self._undef)
        self.blocks: list[_Block] = []
        self.entry = self._new_block()
        self.block = self.entry
        self.params: dict[str, Value] = {}
        # `.param` variables of a body (call arguments and return values) and
        # a `.func`'s return parameters live in pseudo-registers named
        # "%param:<name>"; `.local` variables are ptx.local_var addresses.
        self.param_regs: dict[str, str] = {}
        self.locals: dict[str, Value] = {}
        self.result_types: list[str] = []
        self._edge_ids = 0
        self._undefs: list[_Op] = []
        self._counter = 0
        # `.branchtargets` lists by name (brx.idx), collected with the labels.
        self.branch_targets: dict[str, ast.TargetList] = {}
        self._param_decls = 0
        self._loc_head: str | None = None  # ` loc("file.ptx":`, made once
        # Set while a handler runs for a new instruction shape (memo.py).
        self._recording: memo.Recording | None = None

    # -- values and blocks ---------------------------------------------------

    def _new_block(self) -> _Block:
        b = _Block(SSABlock(len(self.blocks)))
        self.blocks.append(b)
        return b

    def _undef(self, type_: str) -> Value:
        v = Value(type_)
        self._undefs.append(_Op([v], f"ub.poison : {type_}", [], None))
        return v

    def emit(self, results: list[Value], template: str, operands: list[Value],
             loc: SourceLoc | None) -> None:
        op = _Op(results, template, operands, loc)
        self.block.ops.append(op)
        if self._recording is not None:
            self._recording.emit(op)

    def new_value(self, type_: str) -> Value:
        v = Value(type_)
        if self._recording is not None:
            self._recording.new(v)
        return v

    def error(self, message: str, loc: SourceLoc | None) -> CompileError:
        return self.m.error(message, loc)

    def _edge(self, target: _Block) -> tuple[SSABlock, int]:
        self._edge_ids += 1
        target.ssa.preds.append((self.block.ssa, self._edge_ids))
        return (target.ssa, self._edge_ids)

    def terminate(self, kind: str, targets: list[_Block], pred: Value | None = None,
                  attrs: str = "", loc: SourceLoc | None = None) -> None:
        succs = [self._edge(t) for t in targets]
        self.block.term = _Terminator(kind, succs, pred, attrs, loc)

    # -- registers -------------------------------------------------------------

    def declare_param(self, name: str, type_: str, fresh: bool = False) -> None:
        # A `.param` declared in a body (in each call's `{ }` scope, names
        # reused) is a new pseudo-register per declaration, so a call never
        # sees what an earlier call of the same name stored.
        reg = f"%param:{name}"
        if fresh:
            self._param_decls += 1
            reg = f"{reg}:{self._param_decls}"
        self.param_regs[name] = reg
        self.ssa.declare(reg, type_)

    def declare_local(self, var: ast.VarDecl) -> None:
        if var.type not in _MLIR_TYPES:
            raise self.error(f"unsupported .local variable type '.{var.type}'", var.loc)
        size = _element_bytes(var.type)
        for d in var.dims:
            if d is None:
                raise self.error(f"unsupported unsized .local variable '{var.name}'", var.loc)
            size *= d
        v = self.new_value("i64")
        align = var.align or _element_bytes(var.type)
        # In the entry block, so it is one static allocation per thread.
        self.entry.ops.append(_Op([v], f"ptx.local_var {{{{align = {align} : i64, "
                                        f"name = {_quote(var.name)}, size = {size} : i64}}}} "
                                        ": i64", [], var.loc))
        self.locals[var.name] = v

    def reg_type(self, name: str, loc: SourceLoc) -> str:
        t = self.ssa.reg_type(name)
        if t is None:
            raise self.error(f"use of undeclared register '{name}'", loc)
        return t

    def read_reg(self, name: str, loc: SourceLoc) -> Value:
        self.reg_type(name, loc)
        v = self.ssa.read(self.block.ssa, name)
        if self._recording is not None:
            self._recording.read(name, v)
        return v

    def define(self, reg: str, value: Value) -> None:
        """`reg` holds `value` from here on in the current block."""
        self.ssa.write(self.block.ssa, reg, value)
        if self._recording is not None:
            self._recording.define(reg, value)

    def write_reg(self, operand: ast.Operand, value: Value, loc: SourceLoc) -> None:
        if isinstance(operand, ast.Sink):
            return
        if not isinstance(operand, ast.Reg):
            raise self.error("expected a register as destination", loc)
        want = self.reg_type(operand.name, loc)
        self.define(operand.name, self.coerce(value, want, loc))

    def coerce(self, value: Value, want: str, loc: SourceLoc, ptx_type: str = "") -> Value:
        """Reinterprets `value` as `want` (a register of another type of the same width)."""
        if value.type == want:
            return value
        if bits(value.type) != bits(want):
            raise self.error(
                f"operand of type {value.type} where {want} is expected", loc)
        result = self.new_value(want)
        type_attr = ptx_type or f"b{bits(want)}"
        self.emit([result], f"ptx.mov {{0}} {{{{type = #ptx.type<{type_attr}>}}}} "
                            f": {value.type} -> {want}", [value], loc)
        return result

    def constant(self, imm: ast.IntImm | ast.FloatImm, type_: str, loc: SourceLoc) -> Value:
        v = self.new_value(type_)
        if type_.startswith("i"):
            n = bits(type_)
            raw = imm.value if isinstance(imm, ast.IntImm) else imm.bits
            raw &= (1 << n) - 1
            if n > 1 and raw >= 1 << (n - 1):
                raw -= 1 << n
            # i1 constants are `true`/`false`, which take no type suffix.
            text = ("true" if raw else "false") if n == 1 else f"{raw} : {type_}"
            self.emit([v], f"arith.constant {text}", [], loc)
            return v
        n = bits(type_)
        if isinstance(imm, ast.FloatImm):
            if imm.width == n:
                pattern = imm.bits
            else:
                value = _float_of_bits(imm.bits, imm.width)
                pattern = _bits_of_float(value, n)
        else:
            pattern = _bits_of_float(float(imm.value), n)
        self.emit([v], f"arith.constant 0x{pattern:0{n // 4}X} : {type_}", [], loc)
        return v

    def value(self, operand: ast.Operand, type_: str, loc: SourceLoc,
              ptx_type: str = "") -> Value:
        """An operand read as `type_` (registers, immediates, symbols)."""
        if isinstance(operand, ast.Reg):
            if operand.name in _SPECIAL_REGS:
                return self.special_reg(operand.name, type_, loc)
            return self.coerce(self.read_reg(operand.name, loc), type_, loc, ptx_type)
        if isinstance(operand, ast.IntImm | ast.FloatImm):
            return self.constant(operand, type_, loc)
        if isinstance(operand, ast.Sym):
            if operand.name in self.params:
                raise self.error(
                    f"unsupported use of parameter '{operand.name}' as a value", loc)
            if operand.name == "WARP_SZ" and operand.name not in self.m.variables:
                return self.constant(ast.IntImm(32), type_, loc)  # PTX's warp size constant
            return self.address_of(operand.name, type_, loc)
        if isinstance(operand, ast.Not):
            inner = self.value(operand.operand, "i1", loc)
            result = self.new_value("i1")
            self.emit([result], "ptx.not {0} {{type = #ptx.type<pred>}} : i1", [inner], loc)
            return result
        raise self.error(f"unsupported operand {_describe(operand)}", loc)

    def special_reg(self, name: str, type_: str, loc: SourceLoc) -> Value:
        reg_type = "i64" if name in ("%clock64", "%globaltimer", "%gridid") else "i32"
        v = self.new_value(reg_type)
        self.emit([v], f"ptx.sreg <{name[1:]}> : {reg_type}", [], loc)
        if reg_type != type_ and type_.startswith("i"):
            return self.coerce(v, type_, loc) if bits(type_) == bits(reg_type) else v
        return v

    def address_of(self, name: str, type_: str, loc: SourceLoc) -> Value:
        if name in self.locals:
            v = self.locals[name]
            if type_ == "i32":
                r = self.new_value("i32")
                self.emit([r], "ptx.cvt {0} {{src_type = #ptx.type<u64>, type = #ptx.type<u32>}}"
                               " : i64 -> i32", [v], loc)
                return r
            return v
        if name not in self.m.variables:
            if name in self.m.functions:  # a function pointer
                v = self.new_value("i64")
                self.emit([v], f"ptx.func_addr @{_quote(name)} : i64", [], loc)
                return v
            raise self.error(f"unsupported reference to '{name}' (not a variable or "
                             "function)", loc)
        addr_type = type_ if type_ in ("i32", "i64") else "i64"
        v = self.new_value(addr_type)
        self.emit([v], f"ptx.addr_of @{_quote(name)} : {addr_type}", [], loc)
        return v

    # -- import --------------------------------------------------------------

    @without_collector
    def run(self) -> str:
        fn = self.fn
        args = []
        for i, p in enumerate(fn.params):
            if p.dims:
                size = _array_bytes(p.type, p.dims)
                t = f"!llvm.array<{size} x i8>"
            elif p.type in _MLIR_TYPES:
                t = mlir_type(p.type)
            else:
                raise self.error(f"unsupported parameter type '.{p.type}'", p.loc)
            v = Value(t, f"%arg{i}")
            self.params[p.name] = v
            args.append(f"%arg{i}: {t}")
        for r in fn.returns:
            t = _param_value_type(r.type, r.dims)
            if t is None:
                raise self.error(f"unsupported return parameter '{r.name}' of '{fn.name}' "
                                 "(unknown type or unsized array)", r.loc)
            self.declare_param(r.name, t)
            self.result_types.append(t)
        # CC.CF, the carry flag of add.cc/addc/..., as a hidden predicate.
        self.ssa.declare(CARRY_REG, "i1")
        assert fn.body is not None
        labels = self._collect_labels(fn.body)
        self._import_statements(fn.body, labels)
        if self.block.term is None:
            self.terminate("ret", [], loc=fn.loc)
        self.ssa.seal([b.ssa for b in self.blocks], self.entry.ssa)
        text = self._print(args)
        # Loops make the blocks a cycle of references (predecessor lists):
        # broken here, the function's blocks, ops and values are freed now,
        # not at the next full collection (collector.py).
        for b in self.blocks:
            b.ssa.preds.clear()
        self.ssa = SSABuilder(_no_undef)  # and the builder's bound self._undef
        return text

    def _collect_labels(self, body: tuple[ast.Statement, ...]) -> dict[str, _Block]:
        labels: dict[str, _Block] = {}
        for s in _all_statements(body):
            if isinstance(s, ast.Label):
                if s.name in labels:
                    raise self.error(f"duplicate label '{s.name}'", s.loc)
                labels[s.name] = _Block(SSABlock(-1))
            elif isinstance(s, ast.TargetList) and s.kind == "branchtargets":
                self.branch_targets[s.name] = s
        return labels

    def _import_statements(self, stmts: tuple[ast.Statement, ...],
                           labels: dict[str, _Block]) -> None:
        instruction = ast.Instruction
        recipes = memo.RECIPES if self.m.memo else None
        reg_types = self.ssa.reg_types
        for s in stmts:
            if s.__class__ is instruction:
                # The common case first: an unguarded instruction of a known
                # shape, in a block still open (what _dispatch would do).
                if recipes is not None and s.guard is None and self.block.term is None:
                    shape = memo.key(s, reg_types, recipes.shapes, _SPECIAL_REGS)
                    if shape is not None:
                        replay = recipes.table.get(shape[0])
                        if replay is not None:
                            replay(self, shape[1], s.loc)
                            continue
                self._instruction(s, labels)
            elif isinstance(s, ast.RegDecl):
                for name in s.names:
                    if s.type not in _MLIR_TYPES:
                        raise self.error(f"unsupported register type '.{s.type}'", s.loc)
                    self.ssa.declare(name, mlir_type(s.type))
            elif isinstance(s, ast.Label):
                target = labels[s.name]
                target.ssa.index = len(self.blocks)
                self.blocks.append(target)
                if self.block.term is None:
                    self.terminate("bra", [target], loc=s.loc)
                self.block = target
            elif isinstance(s, ast.Block):
                self._import_statements(s.body, labels)
            elif isinstance(s, ast.TargetList):
                pass  # read where used (brx.idx, call)
            elif isinstance(s, ast.VarDecl):
                # .shared/.global/.const declared in a body were hoisted to
                # module scope by ModuleImporter.
                if s.space == "param":
                    t = _param_value_type(s.type, s.dims)
                    if t is None:
                        raise self.error(f"unsupported .param variable '{s.name}' "
                                         "(unknown type or unsized array)", s.loc)
                    self.declare_param(s.name, t, fresh=True)
                elif s.space == "local":
                    self.declare_local(s)
                elif s.name not in self.m.variables:
                    raise self.error(
                        f"unsupported function-scope variable '{s.name}' in .{s.space}", s.loc)
            else:
                raise TypeError(f"not a statement: {s!r}")

    def _instruction(self, inst: ast.Instruction, labels: dict[str, _Block]) -> None:
        if self.block.term is not None:
            # Code after an unconditional branch without a label is unreachable
            # but still imported into a block of its own.
            self.block = self._new_block()
        if inst.opcode == "bra":
            self._branch(inst, labels)
            return
        if inst.opcode == "brx":
            self._brx(inst, labels)
            return
        if inst.guard is not None:
            pred = self.read_reg(inst.guard.reg, inst.loc)
            then_block, cont = self._new_block(), self._new_block()
            negated = " {negated}" if inst.guard.negated else ""
            self.terminate("cond_bra", [then_block, cont], pred, negated, inst.loc)
            self.block = then_block
            self._dispatch(inst)
            if self.block.term is None:
                self.terminate("bra", [cont], loc=inst.loc)
            self.block = cont
            return
        self._dispatch(inst)

    def _branch(self, inst: ast.Instruction, labels: dict[str, _Block]) -> None:
        if len(inst.operands) != 1 or not isinstance(inst.operands[0], ast.Sym):
            raise self.error("'bra' expects one label", inst.loc)
        name = inst.operands[0].name
        if name not in labels:
            raise self.error(f"branch to unknown label '{name}'", inst.loc)
        target = labels[name]
        uni = "uni" in inst.modifiers
        if inst.guard is None:
            self.terminate("bra", [target], attrs=" {uni}" if uni else "", loc=inst.loc)
            return
        pred = self.read_reg(inst.guard.reg, inst.loc)
        fallthrough = self._new_block()
        attrs = [a for a, on in (("negated", inst.guard.negated), ("uni", uni)) if on]
        self.terminate("cond_bra", [target, fallthrough], pred,
                       " {" + ", ".join(attrs) + "}" if attrs else "", inst.loc)
        self.block = fallthrough

    def _brx(self, inst: ast.Instruction, labels: dict[str, _Block]) -> None:
        """`{@p} brx.idx{.uni} index, tlist;`: one compare and branch per target of the
        `.branchtargets` list, in order; an index past the list (undefined in PTX) traps."""
        ops = inst.operands
        if (inst.modifiers not in (("idx",), ("idx", "uni")) or len(ops) != 2
                or not isinstance(ops[1], ast.Sym)):
            raise self.error("unsupported 'brx' form (expected brx.idx index, targets)", inst.loc)
        tlist = self.branch_targets.get(ops[1].name)
        if tlist is None:
            raise self.error(f"'brx.idx' of unknown .branchtargets list '{ops[1].name}'",
                             inst.loc)
        for t in tlist.targets:
            if t not in labels:
                raise self.error(f"'.branchtargets' list '{tlist.name}' names unknown label "
                                 f"'{t}'", tlist.loc)
        if inst.guard is not None:
            pred = self.read_reg(inst.guard.reg, inst.loc)
            taken, fallthrough = self._new_block(), self._new_block()
            self.terminate("cond_bra", [taken, fallthrough], pred,
                           " {negated}" if inst.guard.negated else "", inst.loc)
            self.block = taken
        index = self.value(ops[0], "i32", inst.loc)
        for k, t in enumerate(tlist.targets):
            k_value = self.constant(ast.IntImm(k), "i32", inst.loc)
            equal = self.new_value("i1")
            self.emit([equal], "arith.cmpi eq, {0}, {1} : i32", [index, k_value], inst.loc)
            after = self._new_block()
            self.terminate("cond_bra", [labels[t], after], equal, "", inst.loc)
            self.block = after
        self.terminate("trap", [], loc=inst.loc)
        if inst.guard is not None:
            self.block = fallthrough

    def _dispatch(self, inst: ast.Instruction) -> None:
        handler = _HANDLERS.get(inst.opcode, _generic)
        shape = memo.key(inst, self.ssa.reg_types, memo.RECIPES.shapes, _SPECIAL_REGS) if self.m.memo else None
        if shape is None:
            handler(self, inst)
            return
        k, names = shape
        replay = memo.RECIPES.table.get(k)
        if replay is not None:
            replay(self, names, inst.loc)
            return
        block, n_blocks, n_ops = self.block, len(self.blocks), len(self.block.ops)
        n_undefs, n_params, n_locals = len(self._undefs), len(self.param_regs), len(self.locals)
        rec = self._recording = memo.Recording(names, inst.loc)
        try:
            handler(self, inst)
        finally:
            self._recording = None
        # Kept only if the handler's whole effect is in the recording.
        if (rec.valid and self.block is block and block.term is None
                and len(self.blocks) == n_blocks and len(block.ops) - n_ops == rec.emits
                and len(self._undefs) == n_undefs and len(self.param_regs) == n_params
                and len(self.locals) == n_locals):
            memo.RECIPES.add(k, rec, _Op)

    # -- printing --------------------------------------------------------------

    def _name(self, v: Value) -> str:
        v = v.resolve()
        if not v.name:
            self._counter += 1
            v.name = f"%v{self._counter}"
        return v.name

    def _loc(self, loc: SourceLoc | None) -> str:
        if loc is None or not self.m.locations:
            return ""
        head = self._loc_head
        if head is None:
            head = self._loc_head = f" loc({self.m.quoted_filename}:"
        return f"{head}{loc.line + self.m.line_offset}:{loc.col})"

    def _print(self, args: list[str]) -> str:
        fn = self.fn
        attrs = ["ptx.entry"] if fn.kind == "entry" else []
        if fn.linkage:
            attrs.append(f"ptx.linkage = {_quote(fn.linkage)}")
        for key, values in fn.directives.items():
            # `.explicitcluster` has no values: `array<i64>`.
            elems = f": {', '.join(map(str, values))}" if values else ""
            attrs.append(f"ptx.{key} = array<i64{elems}>")
        attr_text = f" attributes {{{', '.join(attrs)}}}" if attrs else ""
        results = ""
        if self.result_types:
            results = " -> " + (self.result_types[0] if len(self.result_types) == 1
                                else f"({', '.join(self.result_types)})")
        lines = [f"  func.func @{_quote(fn.name)}({', '.join(args)}){results}{attr_text} {{"]
        live_phis = {b.ssa.index: [p for p in b.ssa.phis if not p.dead] for b in self.blocks}
        for b in self.blocks:
            if b is not self.entry:
                phis = live_phis[b.ssa.index]
                params = ", ".join(f"{self._name(p.value)}: {p.value.type}" for p in phis)
                lines.append(f"  ^bb{b.ssa.index}" + (f"({params})" if phis else "") + ":")
            if b is self.entry:
                self._format_ops(self._undefs, lines)
            self._format_ops(b.ops, lines)
            lines.append("    " + self._format_terminator(b, live_phis))
        lines.append("  }" + self._loc(fn.loc))
        return "\n".join(lines)

    def _format_ops(self, ops: list[_Op], lines: list[str]) -> None:
        """Each op as a line of text onto `lines`: `_name` and `_loc` inlined,
        as this is most of printing (a call per value costs the import ~15%)."""
        counter = self._counter
        locations = self.m.locations
        head = f" loc({self.m.quoted_filename}:"
        line_offset = self.m.line_offset
        append = lines.append
        for op in ops:
            # Operands then results, named in that order on first use; the
            # template takes the operands' names and ignores the rest.
            names = []
            for v in op.operands + op.results if op.results else op.operands:
                while v.alias is not None:
                    v = v.alias
                if not v.name:
                    counter += 1
                    v.name = f"%v{counter}"
                names.append(v.name)
            body = op.template.format(*names)
            if op.results:
                body = ", ".join(names[len(op.operands):]) + " = " + body
            loc = op.loc
            if loc is not None and locations:
                append(f"    {body}{head}{loc.line + line_offset}:{loc.col})")
            else:
                append("    " + body)
        self._counter = counter

    def _successor(self, succ: tuple[SSABlock, int], live_phis: dict[int, list[Phi]]) -> str:
        block, edge = succ
        phis = live_phis[block.index]
        if not phis:
            return f"^bb{block.index}"
        values = [p.incoming[edge] for p in phis]
        names = ", ".join(self._name(v) for v in values)
        types = ", ".join(v.resolve().type for v in values)
        return f"^bb{block.index}({names} : {types})"

    def _format_terminator(self, b: _Block, live_phis: dict[int, list[Phi]]) -> str:
        t = b.term
        assert t is not None
        loc = self._loc(t.loc)
        if t.kind == "bra":
            return f"ptx.bra {self._successor(t.succs[0], live_phis)}{t.attrs}{loc}"
        if t.kind == "cond_bra":
            assert t.pred is not None
            taken = self._successor(t.succs[0], live_phis)
            fall = self._successor(t.succs[1], live_phis)
            return f"ptx.cond_bra {self._name(t.pred)}, {taken}, {fall}{t.attrs}{loc}"
        if t.values:
            names = ", ".join(self._name(v) for v in t.values)
            types = ", ".join(v.resolve().type for v in t.values)
            return f"ptx.{t.kind}{t.attrs} {names} : {types}{loc}"
        return f"ptx.{t.kind}{t.attrs}{loc}"


# ---------------------------------------------------------------------------
# Instruction handlers
# ---------------------------------------------------------------------------

Handler = Callable[[_FunctionImporter, ast.Instruction], None]
_HANDLERS: dict[str, Handler] = {}


def _handles(*opcodes: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for op in opcodes:
            _HANDLERS[op] = fn
        return fn
    return register


@dataclass(frozen=True, slots=True)
class _Modifiers:
    """An instruction's modifiers sorted into kinds; unknown ones are errors.

    Shared: _classify hands the same object to every instruction with the
    same modifiers, so it is frozen, and its lists (lists, as handlers
    compare them to lists) must not be changed in place either."""

    types: list[str] = field(default_factory=list)
    space: str | None = None
    rnd: str | None = None
    cmp: str | None = None
    sem: str | None = None
    scope: str | None = None
    cache: str | None = None
    vec: int = 1
    flags: frozenset[str] = frozenset()
    rest: list[str] = field(default_factory=list)


_FLAGS = frozenset(("ftz", "sat", "approx", "full", "lo", "hi", "wide", "to", "and", "or", "xor",
                    "relu"))
_SPACE_NAMES = {"shared::cta": "shared", "shared::cluster": "shared_cluster"}
# _classify's results by modifier tuple (a module has few distinct ones).
_CLASSIFIED: dict[tuple[str, ...], _Modifiers] = {}


def _classify(inst: ast.Instruction) -> _Modifiers:
    m = _CLASSIFIED.get(inst.modifiers)
    if m is None:
        m = _classify_uncached(inst.modifiers)
        if len(_CLASSIFIED) > 1 << 14:
            _CLASSIFIED.clear()
        _CLASSIFIED[inst.modifiers] = m
    return m


def _classify_uncached(modifiers: tuple[str, ...]) -> _Modifiers:
    types: list[str] = []
    flags: set[str] = set()
    rest: list[str] = []
    space = rnd = cmp = sem = scope = cache = None
    vec = 1
    for mod in modifiers:
        if mod in _MLIR_TYPES or mod in ("b128",):
            types.append(mod)
        elif mod in _STATE_SPACES:
            space = _SPACE_NAMES.get(mod, mod)
        elif mod in _ROUNDING:
            rnd = mod
        elif mod in _CMP and cmp is None:
            cmp = mod
        elif mod in _SEMANTICS:
            sem = mod
        elif mod in _SCOPES:
            scope = mod
        elif mod in _CACHE_OPS:
            cache = mod
        elif mod in ("v2", "v4", "v8"):
            vec = int(mod[1:])
        elif mod in _HINTS or mod in _FLAGS:
            flags.add(mod)
        else:
            rest.append(mod)
    return _Modifiers(types, space, rnd, cmp, sem, scope, cache, vec, frozenset(flags), rest)


def _check_no_rest(imp: _FunctionImporter, inst: ast.Instruction, m: _Modifiers,
                   allowed: set[str] = frozenset()) -> None:
    extra = [r for r in m.rest if r not in allowed]
    if extra:
        raise imp.error(f"unsupported modifier '.{extra[0]}' on '{inst.opcode}'", inst.loc)


def _one_type(imp: _FunctionImporter, inst: ast.Instruction, m: _Modifiers) -> str:
    if len(m.types) != 1:
        raise imp.error(f"'{inst.opcode}' needs exactly one type modifier", inst.loc)
    return m.types[0]


def _attrs(**kwargs: object) -> str:
    parts = []
    for key, value in kwargs.items():
        if value is None or value is False:
            continue
        if value is True:
            parts.append(key)
        else:
            parts.append(f"{key} = {value}")
    return "{{" + ", ".join(parts) + "}}" if parts else ""


def _arith_attrs(ptx_type: str, m: _Modifiers, **extra: object) -> str:
    return _attrs(type=f"#ptx.type<{ptx_type}>",
                  rnd=f"#ptx.rnd<{m.rnd}>" if m.rnd else None,
                  ftz="ftz" in m.flags, sat="sat" in m.flags, **extra)


def _expect_operands(imp: _FunctionImporter, inst: ast.Instruction, n: int) -> None:
    if len(inst.operands) != n:
        raise imp.error(f"'{inst.opcode}' expects {n} operands, got {len(inst.operands)}",
                        inst.loc)


@_handles("add", "sub", "min", "max", "and", "or", "xor", "rem", "div", "copysign")
def _binary(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    if "cc" in inst.modifiers and inst.opcode in ("add", "sub"):
        _carry(imp, inst)
        return
    m = _classify(inst)
    if any(r in _PACKED_INT_TYPES for r in m.rest):
        # Packed 16-bit SIMD integer arithmetic: no ptx type for the lanes.
        _generic(imp, inst)
        return
    _check_no_rest(imp, inst, m,
                   {"NaN", "xorsign", "abs"} if inst.opcode in ("min", "max") else set())
    if ("xorsign" in m.rest) != ("abs" in m.rest):
        raise imp.error(f"'.xorsign' and '.abs' go together on '{inst.opcode}'", inst.loc)
    _expect_operands(imp, inst, 3)
    ptx_type = _one_type(imp, inst, m)
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
    attrs = _arith_attrs(ptx_type, m, **extra)
    imp.emit([r], f"ptx.{inst.opcode} {{0}}, {{1}} {attrs} : {t}", [va, vb], inst.loc)
    imp.write_reg(d, r, inst.loc)


def _mul_mode(m: _Modifiers) -> str | None:
    # .lo and .hi are also comparison names (setp.lo/.hi), so _classify may
    # have put them in `cmp`.
    for mode in ("lo", "hi", "wide"):
        if mode in m.flags or m.cmp == mode:
            return mode
    return None


@_handles("mul", "mad")
def _mul(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    if "cc" in inst.modifiers and inst.opcode == "mad":
        _carry(imp, inst)
        return
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    is_mad = inst.opcode == "mad"
    _expect_operands(imp, inst, 4 if is_mad else 3)
    ptx_type = _one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    mode = _mul_mode(m)
    rt = f"i{2 * bits(t)}" if mode == "wide" else t
    va = imp.value(inst.operands[1], t, inst.loc, ptx_type)
    vb = imp.value(inst.operands[2], t, inst.loc, ptx_type)
    operands = [va, vb]
    if is_mad:
        operands.append(imp.value(inst.operands[3], rt, inst.loc))
    r = imp.new_value(rt)
    attrs = _arith_attrs(ptx_type, m, mode=f"#ptx.mode<{mode}>" if mode else None)
    slots = ", ".join(f"{{{i}}}" for i in range(len(operands)))
    imp.emit([r], f"ptx.{inst.opcode} {slots} {attrs} : {t} -> {rt}", operands, inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


@_handles("fma")
def _fma(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    _expect_operands(imp, inst, 4)
    ptx_type = _one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    vs = [imp.value(o, t, inst.loc, ptx_type) for o in inst.operands[1:]]
    r = imp.new_value(t)
    if "relu" in m.flags and ptx_type not in _HALF_TYPES:
        raise imp.error(f"unsupported '.relu' on 'fma.{ptx_type}'", inst.loc)
    attrs = _arith_attrs(ptx_type, m, relu="relu" in m.flags)
    imp.emit([r], f"ptx.fma {{0}}, {{1}}, {{2}} {attrs} : {t}", vs, inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


@_handles("neg", "abs", "not")
def _unary(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    _expect_operands(imp, inst, 2)
    ptx_type = _one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    va = imp.value(inst.operands[1], t, inst.loc, ptx_type)
    r = imp.new_value(t)
    imp.emit([r], f"ptx.{inst.opcode} {{0}} {_arith_attrs(ptx_type, m)} : {t}", [va], inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


@_handles("shl", "shr")
def _shift(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    _expect_operands(imp, inst, 3)
    ptx_type = _one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    va = imp.value(inst.operands[1], t, inst.loc, ptx_type)
    vb = imp.value(inst.operands[2], "i32", inst.loc)
    r = imp.new_value(t)
    imp.emit([r], f"ptx.{inst.opcode} {{0}}, {{1}} {_arith_attrs(ptx_type, m)} : {t}",
             [va, vb], inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


@_handles("setp")
def _setp(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    ptx_type = _one_type(imp, inst, m)
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
    attrs = _attrs(cmp=f"#ptx.cmp<{m.cmp}>", type=f"#ptx.type<{ptx_type}>",
                   boolop=f"#ptx.boolop<{boolop}>" if boolop else None,
                   negate_c=negate_c, ftz="ftz" in m.flags)
    slots = ", ".join(f"{{{i}}}" for i in range(len(operands)))
    imp.emit([p, q], f"ptx.setp {slots} {attrs} : {t}", operands, inst.loc)
    if isinstance(dest, ast.Pair):
        imp.write_reg(dest.first, p, inst.loc)
        imp.write_reg(dest.second, q, inst.loc)
    else:
        imp.write_reg(dest, p, inst.loc)


@_handles("selp")
def _selp(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    _expect_operands(imp, inst, 4)
    ptx_type = _one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    va = imp.value(inst.operands[1], t, inst.loc, ptx_type)
    vb = imp.value(inst.operands[2], t, inst.loc, ptx_type)
    vp = imp.value(inst.operands[3], "i1", inst.loc)
    r = imp.new_value(t)
    imp.emit([r], f"ptx.selp {{0}}, {{1}}, {{2}} {_attrs(type=f'#ptx.type<{ptx_type}>')} : {t}",
             [va, vb, vp], inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


@_handles("mov")
def _mov(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    if len(inst.operands) == 2 and (
            _is_other_special_reg(imp, inst.operands[1])
            or (isinstance(inst.operands[1], ast.Sym) and inst.operands[1].name in imp.params)):
        # Special registers without a ptx.sreg case, and the address of a
        # kernel parameter (grid constants, tensor maps).
        _generic(imp, inst)
        return
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    _expect_operands(imp, inst, 2)
    ptx_type = _one_type(imp, inst, m)
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
            if isinstance(e, ast.Reg) and e.name not in _SPECIAL_REGS:
                v = imp.read_reg(e.name, inst.loc)
                elems.append(v if bits(v.type) == bits(part) else imp.coerce(v, part, inst.loc))
            else:
                elems.append(imp.value(e, part, inst.loc))
        types = ", ".join(v.type for v in elems)
        _emit_result(imp, inst, f"ptx.mov_pack {_slots(n)} : {types} -> {want}", elems, want)
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
    if isinstance(src, ast.Reg) and src.name in _SPECIAL_REGS:
        v = imp.special_reg(src.name, want, inst.loc)
    elif isinstance(src, ast.Reg):
        v = imp.read_reg(src.name, inst.loc)
        if v.type != want:
            v = imp.coerce(v, want, inst.loc, ptx_type)
    else:
        v = imp.value(src, want, inst.loc, ptx_type)
    imp.write_reg(dest, v, inst.loc)


def _address(imp: _FunctionImporter, inst: ast.Instruction, operand: ast.Operand,
             space: str | None) -> tuple[Value, int]:
    if not isinstance(operand, ast.Addr):
        raise imp.error("expected a memory operand [address]", inst.loc)
    base = operand.base
    if isinstance(base, ast.Reg):
        v = imp.read_reg(base.name, inst.loc)
        if v.type not in ("i32", "i64"):
            v = imp.coerce(v, f"i{bits(v.type)}", inst.loc)
        return v, operand.offset
    if isinstance(base, ast.Sym):
        width = "i32" if space == "shared" else "i64"
        return imp.address_of(base.name, width, inst.loc), operand.offset
    return imp.constant(ast.IntImm(base.value), "i64", inst.loc), operand.offset


def _mem_attrs(m: _Modifiers, ptx_type: str, offset: int) -> str:
    return _attrs(
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


@_handles("ld", "ldu")
def _ld(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    if len(inst.operands) == 3 and "L2::cache_hint" in m.flags:
        # The third operand is a cache policy (from `createpolicy`); ld_op has
        # no place for it.
        _generic(imp, inst)
        return
    _check_no_rest(imp, inst, m)
    _expect_operands(imp, inst, 2)
    ptx_type = _one_type(imp, inst, m)
    dests = _destinations(inst, inst.operands[0])
    if len(dests) != m.vec:
        raise imp.error(f"'{inst.opcode}' with .v{m.vec} needs {m.vec} destinations", inst.loc)
    src = inst.operands[1]
    if (m.space == "param" and isinstance(src, ast.Addr) and isinstance(src.base, ast.Sym)
            and src.base.name in imp.param_regs):
        v = imp.read_reg(imp.param_regs[src.base.name], inst.loc)
        if _is_aggregate(v.type):
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
    if m.space == "param":
        if isinstance(src, ast.Addr) and isinstance(src.base, ast.Reg):
            # Through the address of a kernel parameter (`mov %rd, param`).
            _generic(imp, inst)
            return
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
            offset = src.offset + i * _element_bytes(ptx_type)
            attrs = _attrs(offset=f"{offset} : i64" if offset else None,
                           type=f"#ptx.type<{ptx_type}>")
            imp.emit([r], f"ptx.ld_param {param.name} {attrs} : {param.type} -> {rt}", [],
                     inst.loc)
            imp.write_reg(dest, r, inst.loc)
        return
    addr, offset = _address(imp, inst, src, m.space)
    results = []
    for d in dests:
        rt = imp.reg_type(d.name, inst.loc) if isinstance(d, ast.Reg) else mlir_type(ptx_type)
        results.append(imp.new_value(rt))
    types = ", ".join(r.type for r in results)
    imp.emit(results, f"ptx.ld {{0}} {_mem_attrs(m, ptx_type, offset)} : {addr.type} -> {types}",
             [addr], inst.loc)
    for d, r in zip(dests, results, strict=True):
        imp.write_reg(d, r, inst.loc)


@_handles("st")
def _st(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    _expect_operands(imp, inst, 2)
    ptx_type = _one_type(imp, inst, m)
    if m.space == "param":
        target = inst.operands[0]
        if (not isinstance(target, ast.Addr) or not isinstance(target.base, ast.Sym)
                or target.base.name not in imp.param_regs):
            raise imp.error("unsupported 'st.param' to something other than a call "
                            "or return parameter", inst.loc)
        reg = imp.param_regs[target.base.name]
        want = imp.reg_type(reg, inst.loc)
        if _is_aggregate(want):
            _st_aggregate(imp, inst, reg, target.offset, ptx_type, m.vec)
            return
        if target.offset or m.vec != 1:
            raise imp.error("unsupported 'st.param' of part of a scalar parameter", inst.loc)
        v = imp.value(inst.operands[1], f"i{bits(want)}" if not want.startswith("f")
                      and not want.startswith("bf") else want, inst.loc, ptx_type)
        imp.define(reg, imp.coerce(v, want, inst.loc))
        return
    addr, offset = _address(imp, inst, inst.operands[0], m.space)
    sources = _destinations(inst, inst.operands[1])
    if len(sources) != m.vec:
        raise imp.error(f"'st' with .v{m.vec} needs {m.vec} values", inst.loc)
    values = []
    for s in sources:
        if isinstance(s, ast.Reg) and s.name not in _SPECIAL_REGS:
            values.append(imp.read_reg(s.name, inst.loc))
        else:
            values.append(imp.value(s, mlir_type(ptx_type), inst.loc, ptx_type))
    slots = ", ".join(f"{{{i + 1}}}" for i in range(len(values)))
    types = ", ".join(v.type for v in values)
    imp.emit([], f"ptx.st {{0}}, {slots} {_mem_attrs(m, ptx_type, offset)} : {addr.type}, {types}",
             [addr, *values], inst.loc)


def _ld_aggregate(imp: _FunctionImporter, inst: ast.Instruction, agg: Value, offset: int,
                  ptx_type: str, dests: list[ast.Operand]) -> None:
    """`ld.param{.vN}` from an aggregate call or return parameter: one
    `ptx.ld_param` per element, at consecutive offsets."""
    for i, dest in enumerate(dests):
        rt = (imp.reg_type(dest.name, inst.loc) if isinstance(dest, ast.Reg)
              else mlir_type(ptx_type))
        r = imp.new_value(rt)
        at = offset + i * _element_bytes(ptx_type)
        attrs = _attrs(offset=f"{at} : i64" if at else None, type=f"#ptx.type<{ptx_type}>")
        imp.emit([r], f"ptx.ld_param {{0}} {attrs} : {agg.type} -> {rt}", [agg], inst.loc)
        imp.write_reg(dest, r, inst.loc)


def _st_aggregate(imp: _FunctionImporter, inst: ast.Instruction, reg: str, offset: int,
                  ptx_type: str, vec: int) -> None:
    """`st.param{.vN}` into an aggregate call or return parameter: each
    element gives a new value of the aggregate (`ptx.st_param`)."""
    sources = _destinations(inst, inst.operands[1])
    if len(sources) != vec:
        raise imp.error(f"'st' with .v{vec} needs {vec} values", inst.loc)
    size = _array_size(imp.reg_type(reg, inst.loc))
    for i, src in enumerate(sources):
        at = offset + i * _element_bytes(ptx_type)
        if at < 0 or at + _element_bytes(ptx_type) > size:
            raise imp.error(f"'st.param' at byte {at} is outside the {size}-byte parameter",
                            inst.loc)
        if isinstance(src, ast.Reg) and src.name not in _SPECIAL_REGS:
            v = imp.read_reg(src.name, inst.loc)
        else:
            v = imp.value(src, mlir_type(ptx_type), inst.loc, ptx_type)
        agg = imp.read_reg(reg, inst.loc)
        r = imp.new_value(agg.type)
        attrs = _attrs(offset=f"{at} : i64" if at else None, type=f"#ptx.type<{ptx_type}>")
        imp.emit([r], f"ptx.st_param {{0}}, {{1}} {attrs} : {agg.type}, {v.type}", [agg, v],
                 inst.loc)
        imp.define(reg, r)


@_handles("cvta")
def _cvta(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    _expect_operands(imp, inst, 2)
    ptx_type = _one_type(imp, inst, m)
    if m.space is None:
        raise imp.error("'cvta' needs a state space", inst.loc)
    dest = inst.operands[0]
    rt = imp.reg_type(dest.name, inst.loc) if isinstance(dest, ast.Reg) else mlir_type(ptx_type)
    src = imp.value(inst.operands[1], mlir_type(ptx_type), inst.loc, ptx_type)
    r = imp.new_value(rt)
    attrs = _attrs(space=f"#ptx.space<{m.space}>", to="to" in m.flags,
                   type=f"#ptx.type<{ptx_type}>")
    imp.emit([r], f"ptx.cvta {{0}} {attrs} : {src.type} -> {rt}", [src], inst.loc)
    imp.write_reg(dest, r, inst.loc)


_PREFETCH_LEVELS = {"L1", "L2", "L2::evict_last", "L2::evict_normal"}


@_handles("prefetch", "prefetchu")
def _prefetch(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    levels = [r for r in m.rest if r in _PREFETCH_LEVELS]
    level = levels[0] if len(levels) == 1 else ""
    uniform = inst.opcode == "prefetchu"
    # Other forms (prefetch.tensormap, .L2::evict_* without .global, ...)
    # import as ptx.inst with every modifier; lowering names them if unsupported.
    if (len(levels) != 1 or m.types or m.space not in (None, "global", "local")
            or any(r not in _PREFETCH_LEVELS for r in m.rest) or len(inst.operands) != 1
            or (level.startswith("L2::") and m.space != "global")
            or (uniform and (level != "L1" or m.space is not None))):
        _generic(imp, inst)
        return
    addr, offset = _address(imp, inst, inst.operands[0], m.space)
    attrs = _attrs(level=f"#ptx.level<{level.replace('::', '_')}>", offset=f"{offset} : i64" if offset else None,
                   space=f"#ptx.space<{m.space}>" if m.space else None, uniform=uniform)
    imp.emit([], f"ptx.prefetch {{0}} {attrs} : {addr.type}", [addr], inst.loc)


@_handles("isspacep")
def _isspacep(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    _expect_operands(imp, inst, 2)
    if m.space is None or m.types:
        raise imp.error("unsupported 'isspacep' form (expected isspacep.space p, a)", inst.loc)
    src = inst.operands[1]
    if isinstance(src, ast.Reg):
        addr = imp.read_reg(src.name, inst.loc)
        if addr.type not in ("i32", "i64"):
            addr = imp.coerce(addr, f"i{bits(addr.type)}", inst.loc)
    else:
        addr = imp.value(src, "i64", inst.loc)
    _emit_result(imp, inst, f"ptx.isspacep {{0}} {_attrs(space=f'#ptx.space<{m.space}>')} : "
                            f"{addr.type}", [addr], "i1")


@_handles("cvt")
def _cvt(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    if len(inst.operands) == 3 and m.types and m.types[0] in ("f16x2", "bf16x2"):
        _check_no_rest(imp, inst, m, {"satfinite"})
        if m.types[1:] != ["f32"]:
            raise imp.error("unsupported packed 'cvt' source (expected .f32)", inst.loc)
        vs = _operand_values(imp, inst, ["f32", "f32"], ["f32", "f32"])
        attrs = _attrs(relu="relu" in m.flags, rnd=f"#ptx.rnd<{m.rnd}>" if m.rnd else None,
                       satfinite="satfinite" in m.rest, type=f"#ptx.type<{m.types[0]}>")
        _emit_result(imp, inst, f"ptx.cvt_pack {{0}}, {{1}} {attrs} : i32", vs, "i32")
        return
    if m.rest:
        # .satfinite, .tf32, fp8 pairs (.e4m3x2), ...: ptx.cvt has no place for them.
        _generic(imp, inst)
        return
    _expect_operands(imp, inst, 2)
    if len(m.types) != 2:
        raise imp.error("'cvt' needs a destination and a source type", inst.loc)
    dst_type, src_type = m.types
    dest, src = inst.operands
    if isinstance(src, ast.Reg) and src.name not in _SPECIAL_REGS:
        v = imp.read_reg(src.name, inst.loc)
    else:
        v = imp.value(src, mlir_type(src_type), inst.loc, src_type)
    rt = imp.reg_type(dest.name, inst.loc) if isinstance(dest, ast.Reg) else mlir_type(dst_type)
    r = imp.new_value(rt)
    attrs = _attrs(ftz="ftz" in m.flags, relu="relu" in m.flags,
                   rnd=f"#ptx.rnd<{m.rnd}>" if m.rnd else None, sat="sat" in m.flags,
                   src_type=f"#ptx.type<{src_type}>", type=f"#ptx.type<{dst_type}>")
    imp.emit([r], f"ptx.cvt {{0}} {attrs} : {v.type} -> {rt}", [v], inst.loc)
    imp.write_reg(dest, r, inst.loc)


@_handles("atom")
def _atom(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    ops = {"and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max"}
    op = next((r for r in m.rest if r in ops), None)
    if op is None:
        op = next((f for f in ("and", "or", "xor") if f in m.flags), None)
    if op is None:
        raise imp.error("'atom' needs an operation (.add, .cas, ...)", inst.loc)
    # .noftz is the only form of the f16/bf16 adds (and required on them).
    if any(r not in ops and r != "noftz" for r in m.rest):
        _generic(imp, inst)
        return
    ptx_type = _one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    n = 4 if op == "cas" else 3
    _expect_operands(imp, inst, n)
    addr, offset = _address(imp, inst, inst.operands[1], m.space)
    values = [imp.value(o, t, inst.loc, ptx_type) for o in inst.operands[2:]]
    r = imp.new_value(t)
    attrs = _attrs(offset=f"{offset} : i64" if offset else None, op=f"#ptx.atomop<{op}>",
                   scope=f"#ptx.scope<{m.scope}>" if m.scope else None,
                   sem=f"#ptx.sem<{m.sem}>" if m.sem else None,
                   space=f"#ptx.space<{m.space}>" if m.space else None,
                   type=f"#ptx.type<{ptx_type}>")
    slots = ", ".join(f"{{{i}}}" for i in range(1 + len(values)))
    types = ", ".join([addr.type, *(v.type for v in values)])
    imp.emit([r], f"ptx.atom {slots} {attrs} : ({types}) -> {t}", [addr, *values], inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


@_handles("bar", "barrier")
def _bar(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    if inst.opcode == "bar" and inst.modifiers == ("warp", "sync"):
        _expect_operands(imp, inst, 1)
        mask = imp.value(inst.operands[0], "i32", inst.loc)
        imp.emit([], "ptx.bar_warp_sync {0}", [mask], inst.loc)
        return
    m = _classify(inst)
    aligned = inst.opcode == "bar" or "aligned" in m.flags
    if m.scope == "cluster":
        # barrier.cluster.*: no dedicated op (barrier.cta.* is barrier.*).
        _generic(imp, inst)
        return
    if m.rest == ["red"] or m.rest == ["red", "popc"]:
        _bar_red(imp, inst, m, aligned)
        return
    if m.rest == ["arrive"]:
        _expect_operands(imp, inst, 2)
        vs = [imp.value(o, "i32", inst.loc) for o in inst.operands]
        imp.emit([], f"ptx.bar_arrive {{0}}, {{1}} {_attrs(aligned=aligned)}", vs, inst.loc)
        return
    if "sync" not in m.flags or m.rest:
        # barrier.cluster, ...: no dedicated op.
        _generic(imp, inst)
        return
    if len(inst.operands) not in (1, 2):
        raise imp.error(f"'{inst.opcode}.sync' expects 1 or 2 operands", inst.loc)
    vs = [imp.value(o, "i32", inst.loc) for o in inst.operands]
    slots = ", ".join(f"{{{i}}}" for i in range(len(vs)))
    imp.emit([], f"ptx.bar_sync {slots} {_attrs(aligned=aligned)}", vs, inst.loc)


def _bar_red(imp: _FunctionImporter, inst: ast.Instruction, m: _Modifiers,
             aligned: bool) -> None:
    """`bar.red.popc.u32 d, a{, b}, {!}c` and `bar.red.{and,or}.pred p, a{, b}, {!}c`."""
    mode = "popc" if "popc" in m.rest else next((f for f in ("and", "or") if f in m.flags), None)
    want = "u32" if mode == "popc" else "pred"
    if mode is None or m.types != [want]:
        raise imp.error(f"unsupported '{inst.opcode}.red' form (expected .popc.u32, .and.pred "
                        "or .or.pred)", inst.loc)
    if len(inst.operands) not in (3, 4):
        raise imp.error(f"'{inst.opcode}.red' expects 3 or 4 operands", inst.loc)
    pred = imp.value(inst.operands[-1], "i1", inst.loc)
    vs = [imp.value(o, "i32", inst.loc) for o in inst.operands[1:-1]]
    t = "i32" if mode == "popc" else "i1"
    r = imp.new_value(t)
    slots = ", ".join(f"{{{i}}}" for i in range(1 + len(vs)))
    imp.emit([r], f"ptx.bar_red {slots} {_attrs(aligned=aligned, mode=f'#ptx.barred<{mode}>')}"
                  f" : {t}", [pred, *vs], inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


@_handles("elect")
def _elect(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    """`elect.sync d|p, membermask` (d may be the sink `_`)."""
    dest = inst.operands[0] if inst.operands else None
    if inst.modifiers != ("sync",) or len(inst.operands) != 2 or not isinstance(dest, ast.Pair):
        raise imp.error("unsupported 'elect' form (expected elect.sync d|p, membermask)",
                        inst.loc)
    mask = imp.value(inst.operands[1], "i32", inst.loc)
    d, p = imp.new_value("i32"), imp.new_value("i1")
    imp.emit([d, p], "ptx.elect_sync {0}", [mask], inst.loc)
    imp.write_reg(dest.first, d, inst.loc)
    imp.write_reg(dest.second, p, inst.loc)


@_handles("shfl")
def _shfl(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    modes = {"up", "down", "bfly", "idx"}
    mode = next((r for r in m.rest if r in modes), None)
    if mode is None or "sync" not in m.flags:
        raise imp.error("unsupported 'shfl' form (expected shfl.sync.<mode>.b32)", inst.loc)
    _check_no_rest(imp, inst, m, allowed=modes)
    _expect_operands(imp, inst, 5)
    dest = inst.operands[0]
    vs = [imp.value(o, "i32", inst.loc) for o in inst.operands[1:]]
    d, p = imp.new_value("i32"), imp.new_value("i1")
    imp.emit([d, p], f"ptx.shfl_sync {{0}}, {{1}}, {{2}}, {{3}} "
                     f"{_attrs(mode=f'#ptx.shfl<{mode}>')} : i32", vs, inst.loc)
    if isinstance(dest, ast.Pair):
        imp.write_reg(dest.first, d, inst.loc)
        imp.write_reg(dest.second, p, inst.loc)
    else:
        imp.write_reg(dest, d, inst.loc)


# -- integer bit manipulation ---------------------------------------------------


def _operand_values(imp: _FunctionImporter, inst: ast.Instruction,
                    types: list[str], ptx_types: list[str] | None = None) -> list[Value]:
    """Operands 1.. read as `types` (immediates and registers alike)."""
    _expect_operands(imp, inst, 1 + len(types))
    ptx_types = ptx_types or [""] * len(types)
    return [imp.value(o, t, inst.loc, pt)
            for o, t, pt in zip(inst.operands[1:], types, ptx_types, strict=True)]


def _emit_result(imp: _FunctionImporter, inst: ast.Instruction, text: str,
                 operands: list[Value], result_type: str) -> None:
    r = imp.new_value(result_type)
    imp.emit([r], text, operands, inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)


def _slots(n: int, start: int = 0) -> str:
    return ", ".join(f"{{{i}}}" for i in range(start, start + n))


@_handles("popc", "clz", "bfind", "brev", "cnot")
def _bit_unary(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    allowed = {"shiftamt"} if inst.opcode == "bfind" else set()
    _check_no_rest(imp, inst, m, allowed)
    ptx_type = _one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    (a,) = _operand_values(imp, inst, [t], [ptx_type])
    attrs = _attrs(shiftamt="shiftamt" in m.rest, type=f"#ptx.type<{ptx_type}>")
    if inst.opcode in ("brev", "cnot"):
        _emit_result(imp, inst, f"ptx.{inst.opcode} {{0}} {attrs} : {t}", [a], t)
    else:
        _emit_result(imp, inst, f"ptx.{inst.opcode} {{0}} {attrs} : {t} -> i32", [a], "i32")


@_handles("bfe", "bfi")
def _bit_field(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    ptx_type = _one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    types = [t, "i32", "i32"] if inst.opcode == "bfe" else [t, t, "i32", "i32"]
    vs = _operand_values(imp, inst, types, [ptx_type] + [""] * (len(types) - 1))
    attrs = _attrs(type=f"#ptx.type<{ptx_type}>")
    _emit_result(imp, inst, f"ptx.{inst.opcode} {_slots(len(vs))} {attrs} : {t}", vs, t)


@_handles("prmt")
def _prmt(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    modes = {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"}
    _check_no_rest(imp, inst, m, modes)
    mode = next((r for r in m.rest if r in modes), None)
    vs = _operand_values(imp, inst, ["i32"] * 3)
    attrs = _attrs(mode=f"#ptx.prmt<{mode}>" if mode else None)
    _emit_result(imp, inst, f"ptx.prmt {_slots(3)} {attrs} : i32", vs, "i32")


@_handles("lop3")
def _lop3(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    _expect_operands(imp, inst, 5)
    lut = inst.operands[4]
    if not isinstance(lut, ast.IntImm):
        raise imp.error("'lop3' needs an immediate lookup table", inst.loc)
    vs = [imp.value(o, "i32", inst.loc) for o in inst.operands[1:4]]
    _emit_result(imp, inst, f"ptx.lop3 {_slots(3)} {{{{lut = {lut.value & 0xff} : i32}}}} : i32",
                 vs, "i32")


def _clamp_mode(imp: _FunctionImporter, inst: ast.Instruction, m: _Modifiers) -> str:
    mode = next((r for r in m.rest if r in ("clamp", "wrap")), None)
    if mode is None:
        raise imp.error(f"'{inst.opcode}' needs .clamp or .wrap", inst.loc)
    return f"#ptx.clampmode<{mode}>"


@_handles("shf")
def _shf(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m, {"l", "r", "clamp", "wrap"})
    direction = next((r for r in m.rest if r in ("l", "r")), None)
    if direction is None:
        raise imp.error("'shf' needs .l or .r", inst.loc)
    ptx_type = _one_type(imp, inst, m)
    vs = _operand_values(imp, inst, ["i32"] * 3)
    attrs = _attrs(dir=f"#ptx.dir<{direction}>", mode=_clamp_mode(imp, inst, m),
                   type=f"#ptx.type<{ptx_type}>")
    _emit_result(imp, inst, f"ptx.shf {_slots(3)} {attrs} : i32", vs, "i32")


@_handles("szext", "bmsk")
def _szext(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m, {"clamp", "wrap"})
    ptx_type = _one_type(imp, inst, m)
    vs = _operand_values(imp, inst, ["i32"] * 2)
    attrs = _attrs(mode=_clamp_mode(imp, inst, m),
                   type=f"#ptx.type<{ptx_type}>" if inst.opcode == "szext" else None)
    _emit_result(imp, inst, f"ptx.{inst.opcode} {_slots(2)} {attrs} : i32", vs, "i32")


@_handles("fns")
def _fns(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    if _one_type(imp, inst, m) != "b32":
        raise imp.error("unsupported 'fns' type (expected fns.b32)", inst.loc)
    vs = _operand_values(imp, inst, ["i32"] * 3)
    _emit_result(imp, inst, f"ptx.fns {_slots(3)} : i32", vs, "i32")


@_handles("mul24", "mad24")
def _mul24(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    ptx_type = _one_type(imp, inst, m)
    mode = _mul_mode(m)
    vs = _operand_values(imp, inst, ["i32"] * (3 if inst.opcode == "mad24" else 2))
    attrs = _attrs(mode=f"#ptx.mode<{mode}>" if mode else None,
                   sat="sat" in m.flags and inst.opcode == "mad24",
                   type=f"#ptx.type<{ptx_type}>")
    _emit_result(imp, inst, f"ptx.{inst.opcode} {_slots(len(vs))} {attrs} : i32", vs, "i32")


@_handles("sad")
def _sad(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    ptx_type = _one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    vs = _operand_values(imp, inst, [t] * 3, [ptx_type] * 3)
    _emit_result(imp, inst, f"ptx.sad {_slots(3)} {_attrs(type=f'#ptx.type<{ptx_type}>')} : {t}",
                 vs, t)


@_handles("dp4a", "dp2a")
def _dp(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    if len(m.types) != 2:
        raise imp.error(f"'{inst.opcode}' needs two operand types", inst.loc)
    vs = _operand_values(imp, inst, ["i32"] * 3)
    attrs = _attrs(a_type=f"#ptx.type<{m.types[0]}>", b_type=f"#ptx.type<{m.types[1]}>",
                   hi=inst.opcode == "dp2a" and _mul_mode(m) == "hi")
    _emit_result(imp, inst, f"ptx.{inst.opcode} {_slots(3)} {attrs} : i32", vs, "i32")


def _carry(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    """add.cc/addc/sub.cc/subc/mad.cc/madc: CC.CF is the hidden register
    CARRY_REG, read by the `c` forms and written by the `.cc` forms."""
    m = _classify(inst)
    _check_no_rest(imp, inst, m, {"cc"})
    ptx_type = _one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    base = inst.opcode.rstrip("c") if inst.opcode in ("addc", "subc", "madc") else inst.opcode
    carry_in = inst.opcode in ("addc", "subc", "madc")
    writes_cc = "cc" in m.rest
    n = 3 if base == "mad" else 2
    vs = _operand_values(imp, inst, [t] * n, [ptx_type] * n)
    if carry_in:
        vs.append(imp.read_reg(CARRY_REG, inst.loc))
    mode = _mul_mode(m)
    if base == "mad" and mode not in ("lo", "hi"):
        raise imp.error(f"'{inst.opcode}' needs .lo or .hi", inst.loc)
    attrs = _attrs(mode=f"#ptx.mode<{mode}>" if base == "mad" else None,
                   type=f"#ptx.type<{ptx_type}>")
    r, cf = imp.new_value(t), imp.new_value("i1")
    imp.emit([r, cf], f"ptx.{base}_cc {_slots(len(vs))} {attrs} : {t}", vs, inst.loc)
    imp.write_reg(inst.operands[0], r, inst.loc)
    if writes_cc:
        imp.define(CARRY_REG, cf)


_HANDLERS["addc"] = _carry
_HANDLERS["subc"] = _carry
_HANDLERS["madc"] = _carry


# -- float special functions ----------------------------------------------------


@_handles("rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh")
def _float_unary(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    ptx_type = _one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    (a,) = _operand_values(imp, inst, [t], [ptx_type])
    precision = "approx" if "approx" in m.flags else ("full" if "full" in m.flags else None)
    attrs = _arith_attrs(ptx_type, m,
                         precision=f"#ptx.precision<{precision}>" if precision else None)
    _emit_result(imp, inst, f"ptx.{inst.opcode} {{0}} {attrs} : {t}", [a], t)


@_handles("testp")
def _testp(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    classes = {"finite", "infinite", "number", "notanumber", "normal", "subnormal"}
    _check_no_rest(imp, inst, m, classes)
    kind = next((r for r in m.rest if r in classes), None)
    if kind is None:
        raise imp.error("'testp' needs a class (.finite, .normal, ...)", inst.loc)
    ptx_type = _one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    (a,) = _operand_values(imp, inst, [t], [ptx_type])
    attrs = _attrs(kind=f"#ptx.testp<{kind}>", type=f"#ptx.type<{ptx_type}>")
    _emit_result(imp, inst, f"ptx.testp {{0}} {attrs} : {t}", [a], "i1")


# -- set, slct ------------------------------------------------------------------


@_handles("set")
def _set(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    if len(m.types) != 2 or m.cmp is None:
        raise imp.error("'set' needs a comparison and two types", inst.loc)
    dtype, stype = m.types
    if dtype not in ("u32", "s32", "f32"):
        # .f16/.f16x2/... results: ptx.set has no such result type.
        _generic(imp, inst)
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
    rt = "f32" if dtype == "f32" else "i32"
    attrs = _attrs(boolop=f"#ptx.boolop<{boolop}>" if boolop else None,
                   cmp=f"#ptx.cmp<{m.cmp}>", ftz="ftz" in m.flags, negate_c=negate_c,
                   src_type=f"#ptx.type<{stype}>", type=f"#ptx.type<{dtype}>")
    _emit_result(imp, inst, f"ptx.set {_slots(len(operands))} {attrs} : {st} -> {rt}",
                 operands, rt)


@_handles("slct")
def _slct(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    _check_no_rest(imp, inst, m)
    if len(m.types) != 2 or m.types[1] not in ("s32", "f32"):
        raise imp.error("'slct' needs a result type and .s32 or .f32", inst.loc)
    dtype, ctype = m.types
    t, ct = mlir_type(dtype), mlir_type(ctype)
    vs = _operand_values(imp, inst, [t, t, ct], [dtype, dtype, ctype])
    attrs = _attrs(c_type=f"#ptx.type<{ctype}>", ftz="ftz" in m.flags,
                   type=f"#ptx.type<{dtype}>")
    _emit_result(imp, inst, f"ptx.slct {_slots(3)} {attrs} : {t}, {ct}", vs, t)


# -- warp level and memory ordering ---------------------------------------------


@_handles("vote")
def _vote(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    modes = {"all", "any", "uni", "ballot"}
    _check_no_rest(imp, inst, m, modes)
    # .uni is also a hint modifier elsewhere, so look at the modifiers as written.
    mode = next((r for r in inst.modifiers if r in modes), None)
    if mode is None or "sync" not in m.flags:
        raise imp.error("unsupported 'vote' form (expected vote.sync.mode)", inst.loc)
    if len(inst.operands) != 3:
        raise imp.error("'vote.sync' expects 3 operands", inst.loc)
    _, p, mask = inst.operands
    pv = imp.value(p, "i1", inst.loc)  # a `!p` operand is negated here
    mv = imp.value(mask, "i32", inst.loc)
    rt = "i32" if mode == "ballot" else "i1"
    _emit_result(imp, inst, f"ptx.vote_sync {{0}}, {{1}} {{{{mode = #ptx.vote<{mode}>}}}} : {rt}",
                 [pv, mv], rt)


@_handles("activemask")
def _activemask(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    _expect_operands(imp, inst, 1)
    _emit_result(imp, inst, "ptx.activemask : i32", [], "i32")


@_handles("redux")
def _redux(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    ops = {"add", "min", "max"}
    _check_no_rest(imp, inst, m, ops)
    op = next((r for r in m.rest if r in ops), None) or next(
        (f for f in ("and", "or", "xor") if f in m.flags), None)
    if op is None or "sync" not in m.flags:
        raise imp.error("unsupported 'redux' form (expected redux.sync.op.type)", inst.loc)
    ptx_type = _one_type(imp, inst, m)
    if ptx_type not in ("b32", "u32", "s32"):
        raise imp.error(f"unsupported 'redux.sync' type '.{ptx_type}'", inst.loc)
    vs = _operand_values(imp, inst, ["i32", "i32"])
    attrs = _attrs(op=f"#ptx.atomop<{op}>", type=f"#ptx.type<{ptx_type}>")
    _emit_result(imp, inst, f"ptx.redux_sync {{0}}, {{1}} {attrs} : i32", vs, "i32")


@_handles("match")
def _match(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    modes = {"any", "all"}
    _check_no_rest(imp, inst, m, modes)
    mode = next((r for r in m.rest if r in modes), None)
    if mode is None or "sync" not in m.flags:
        raise imp.error("unsupported 'match' form (expected match.mode.sync.type)", inst.loc)
    ptx_type = _one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    _expect_operands(imp, inst, 3)
    a = imp.value(inst.operands[1], t, inst.loc, ptx_type)
    mask = imp.value(inst.operands[2], "i32", inst.loc)
    d, p = imp.new_value("i32"), imp.new_value("i1")
    imp.emit([d, p], f"ptx.match_sync {{0}}, {{1}} {{{{mode = #ptx.match<{mode}>}}}} : {t}",
             [a, mask], inst.loc)
    dest = inst.operands[0]
    if isinstance(dest, ast.Pair):
        imp.write_reg(dest.first, d, inst.loc)
        imp.write_reg(dest.second, p, inst.loc)
    else:
        imp.write_reg(dest, d, inst.loc)


@_handles("membar", "fence")
def _fence(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    if inst.opcode == "membar":
        scopes = {"cta": "cta", "gl": "gpu", "sys": "sys"}
        if len(inst.modifiers) != 1 or inst.modifiers[0] not in scopes:
            raise imp.error(f"unsupported 'membar' form '.{'.'.join(inst.modifiers)}'",
                            inst.loc)
        sem, scope = "sc", scopes[inst.modifiers[0]]
    else:
        mods = list(inst.modifiers)
        if len(mods) != 2 or mods[0] not in ("sc", "acq_rel") or mods[1] not in _SCOPES:
            # Proxy and mbarrier fences: no ptx.fence form for them.
            _generic(imp, inst)
            return
        sem, scope = mods
    imp.emit([], f"ptx.fence {{{{scope = #ptx.scope<{scope}>, sem = #ptx.sem<{sem}>}}}}", [],
             inst.loc)


@_handles("red")
def _red(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    m = _classify(inst)
    ops = {"add", "inc", "dec", "min", "max"}
    op = next((r for r in m.rest if r in ops), None)
    if op is None:
        op = next((f for f in ("and", "or", "xor") if f in m.flags), None)
    if op is None:
        raise imp.error("'red' needs an operation (.add, .min, ...)", inst.loc)
    _check_no_rest(imp, inst, m, allowed=ops | {"noftz"})
    ptx_type = _one_type(imp, inst, m)
    t = mlir_type(ptx_type)
    _expect_operands(imp, inst, 2)
    addr, offset = _address(imp, inst, inst.operands[0], m.space)
    b = imp.value(inst.operands[1], t, inst.loc, ptx_type)
    attrs = _attrs(offset=f"{offset} : i64" if offset else None, op=f"#ptx.atomop<{op}>",
                   scope=f"#ptx.scope<{m.scope}>" if m.scope else None,
                   sem=f"#ptx.sem<{m.sem}>" if m.sem else None,
                   space=f"#ptx.space<{m.space}>" if m.space else None,
                   type=f"#ptx.type<{ptx_type}>")
    imp.emit([], f"ptx.red {{0}}, {{1}} {attrs} : {addr.type}, {t}", [addr, b], inst.loc)


# -- calls ------------------------------------------------------------------------


@_handles("call")
def _call(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    ops = list(inst.operands)
    rets: list[ast.Operand] = []
    if ops and isinstance(ops[0], ast.Vec):
        rets = list(ops.pop(0).elems)
    if ops and isinstance(ops[0], ast.Reg):
        _call_indirect(imp, inst, rets, ops)
        return
    if not ops or not isinstance(ops[0], ast.Sym):
        raise imp.error("'call' needs a function name or a register", inst.loc)
    name = ops.pop(0).name
    args: list[ast.Operand] = list(ops.pop(0).elems) if ops and isinstance(ops[0], ast.Vec) else []
    if ops:
        raise imp.error("unsupported 'call' with a prototype or jump table", inst.loc)
    callee = imp.m.functions.get(name)
    if callee is None or callee.kind == "entry":
        raise imp.error(f"'call' of unknown function '{name}'", inst.loc)
    if len(args) != len(callee.params) or len(rets) != len(callee.returns):
        raise imp.error(f"'call' of '{name}' with the wrong number of parameters", inst.loc)
    values = []
    for a, p in zip(args, callee.params, strict=True):
        want = _param_value_type(p.type, p.dims)
        if want is None:
            raise imp.error(f"unsupported parameter '{p.name}' in a call (unknown type or "
                            "unsized array)", inst.loc)
        if _is_aggregate(want):
            if not isinstance(a, ast.Sym) or a.name not in imp.param_regs:
                raise imp.error(f"aggregate parameter '{p.name}' must be passed as a .param "
                                "variable", inst.loc)
            v = imp.read_reg(imp.param_regs[a.name], inst.loc)
            if v.type != want:
                raise imp.error(f"'call' of '{name}' passes {v.type} for parameter "
                                f"'{p.name}' of type {want}", inst.loc)
            values.append(v)
            continue
        if isinstance(a, ast.Sym) and a.name in imp.param_regs:
            v = imp.read_reg(imp.param_regs[a.name], inst.loc)
            values.append(imp.coerce(v, want, inst.loc))
        else:
            values.append(imp.value(a, want, inst.loc, p.type))
    results = []
    for r in callee.returns:
        rt = _param_value_type(r.type, r.dims)
        if rt is None:
            raise imp.error(f"unsupported return parameter '{r.name}' of '{name}' (unknown "
                            "type or unsized array)", inst.loc)
        results.append(imp.new_value(rt))
    arg_types = ", ".join(v.type for v in values)
    res_types = ", ".join(r.type for r in results)
    uni = " {{uni}}" if "uni" in inst.modifiers else ""
    imp.emit(results, f"ptx.call @{_quote(name)}({_slots(len(values))}){uni} : "
                      f"({arg_types}) -> ({res_types})", values, inst.loc)
    for r_op, r in zip(rets, results, strict=True):
        if not isinstance(r_op, ast.Sym) or r_op.name not in imp.param_regs:
            raise imp.error("'call' return values must be .param variables", inst.loc)
        reg = imp.param_regs[r_op.name]
        want = imp.reg_type(reg, inst.loc)
        if _is_aggregate(want) or _is_aggregate(r.type):
            if want != r.type:
                raise imp.error(f"'call' of '{name}' returns {r.type} into '{r_op.name}' of "
                                f"type {want}", inst.loc)
            imp.define(reg, r)
            continue
        imp.define(reg, imp.coerce(r, want, inst.loc))


def _call_indirect(imp: _FunctionImporter, inst: ast.Instruction, rets: list[ast.Operand],
                   ops: list[ast.Operand]) -> None:
    """`call (ret), %fptr, (args), prototype;`: the `.callprototype` (or
    `.calltargets`) names the signature, which is that of the `.param`
    variables passed; so arguments and results take their declared types."""
    fptr = ops.pop(0)
    assert isinstance(fptr, ast.Reg)
    args: list[ast.Operand] = list(ops.pop(0).elems) if ops and isinstance(ops[0], ast.Vec) else []
    if len(ops) != 1 or not isinstance(ops[0], ast.Sym):
        raise imp.error("indirect 'call' needs a '.callprototype' or '.calltargets' label",
                        inst.loc)
    callee = imp.read_reg(fptr.name, inst.loc)
    if callee.type != "i64":
        raise imp.error(f"unsupported indirect 'call' through '{fptr.name}' of type "
                        f"{callee.type} (function pointers are 64-bit)", inst.loc)
    values = []
    for a in args:
        if not isinstance(a, ast.Sym) or a.name not in imp.param_regs:
            raise imp.error("indirect 'call' arguments must be .param variables", inst.loc)
        values.append(imp.read_reg(imp.param_regs[a.name], inst.loc))
    regs = []
    for r_op in rets:
        if not isinstance(r_op, ast.Sym) or r_op.name not in imp.param_regs:
            raise imp.error("'call' return values must be .param variables", inst.loc)
        regs.append(imp.param_regs[r_op.name])
    results = [imp.new_value(imp.reg_type(reg, inst.loc)) for reg in regs]
    arg_types = ", ".join(v.type for v in (callee, *values))
    res_types = ", ".join(r.type for r in results)
    uni = " {{uni}}" if "uni" in inst.modifiers else ""
    imp.emit(results, f"ptx.call_indirect {{0}}({_slots(len(values), 1)}){uni} : "
                      f"({arg_types}) -> ({res_types})", [callee, *values], inst.loc)
    for reg, r in zip(regs, results, strict=True):
        imp.define(reg, r)


# Instructions (opcode, or opcode.first-modifier) whose first operand is not
# a destination register. Besides these, a first operand that is an address
# (`st`, `mbarrier.init`, `multimem.st`, `cp.async`, ...) is never one.
_NO_DESTINATION = {
    "st", "red", "bar", "barrier", "membar", "fence", "prefetch", "prefetchu", "trap",
    "brkpt", "pmevent", "call", "brx", "nanosleep", "stmatrix", "wmma.store", "cp",
    "griddepcontrol", "setmaxnreg", "bar.warp", "discard", "applypriority",
    "sust", "sured", "tensormap", "stackrestore", "wgmma",
}


def _has_destination(inst: ast.Instruction) -> bool:
    if not inst.operands or isinstance(inst.operands[0], ast.Addr):
        return False
    if inst.opcode in ("bar", "barrier") and "red" in inst.modifiers:
        return True
    dotted = f"{inst.opcode}.{inst.modifiers[0]}" if inst.modifiers else inst.opcode
    return inst.opcode not in _NO_DESTINATION and dotted not in _NO_DESTINATION


def _is_other_special_reg(imp: _FunctionImporter, operand: ast.Operand) -> bool:
    """A special register without a `ptx.sreg` case (and not a declared register)."""
    return (isinstance(operand, ast.Reg) and _OTHER_SPECIAL_REG.fullmatch(operand.name) is not None
            and imp.ssa.reg_type(operand.name) is None)


def _generic(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    """Imports an instruction with no dedicated op as `ptx.inst`, keeping
    opcode, modifiers and operands; lowering reports it as unsupported.
    A special register with no `ptx.sreg` case (`%envreg0`, `%cluster_ctarank`,
    ...) is an operand of kind "%name" (its own name) with no SSA value."""
    m = _classify(inst)
    default_type = mlir_type(m.types[-1]) if m.types and m.types[-1] in _MLIR_TYPES else "i32"
    operands = list(inst.operands)
    dests: list[ast.Operand] = []
    if _has_destination(inst):
        first = operands.pop(0)
        dests = list(first.elems) if isinstance(first, ast.Vec) else (
            [first.first, first.second] if isinstance(first, ast.Pair) else [first])
    kinds: list[str] = ["d" * len(dests)] if dests else []
    args: list[Value] = []
    symbols: list[str] = []

    def value_of(o: ast.Operand) -> Value:
        if isinstance(o, ast.Reg) and o.name not in _SPECIAL_REGS:
            return imp.read_reg(o.name, inst.loc)
        return imp.value(o, default_type, inst.loc)

    for o in operands:
        if isinstance(o, ast.Addr):
            if isinstance(o.base, ast.Sym) and o.base.name not in imp.m.variables:
                symbols.append(o.base.name)
                kinds.append(f"as{o.offset:+d}")
                continue
            base, offset = _address(imp, inst, o, m.space)
            args.append(base)
            kinds.append(f"a{offset:+d}")
        elif isinstance(o, ast.Vec):
            elems = [e for e in o.elems if not isinstance(e, ast.Sink)]
            args.extend(value_of(e) for e in elems)
            kinds.append(f"v{len(elems)}")
        elif isinstance(o, ast.Sym) and o.name not in imp.m.variables:
            symbols.append(o.name)
            kinds.append("s")
        elif isinstance(o, ast.Sink):
            kinds.append("_")
        elif _is_other_special_reg(imp, o):
            assert isinstance(o, ast.Reg)
            kinds.append(o.name)
        else:
            args.append(value_of(o))
            kinds.append("r")
    results = []
    for d in dests:
        if isinstance(d, ast.Reg) and d.name not in _SPECIAL_REGS:
            results.append(imp.new_value(imp.reg_type(d.name, inst.loc)))
        else:
            results.append(imp.new_value(default_type))
    mods = ", ".join(_quote("." + mod) for mod in inst.modifiers)
    attrs = [f"operand_kinds = [{', '.join(_quote(k) for k in kinds)}]"]
    if symbols:
        attrs.append(f"symbols = [{', '.join('@' + _quote(sym) for sym in symbols)}]")
    arg_slots = ", ".join(f"{{{i}}}" for i in range(len(args)))
    arg_types = ", ".join(a.type for a in args)
    result_types = ", ".join(r.type for r in results)
    imp.emit(results, f"ptx.inst {_quote(inst.opcode)} [{mods}] ({arg_slots}) "
                      f"{{{{{', '.join(attrs)}}}}} : ({arg_types}) -> ({result_types})",
             args, inst.loc)
    for d, r in zip(dests, results, strict=True):
        if not isinstance(d, ast.Sink):
            imp.write_reg(d, r, inst.loc)


@_handles("trap")
def _trap(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    if inst.operands or inst.modifiers:
        raise imp.error("'trap' takes no operands or modifiers", inst.loc)
    imp.terminate("trap", [], loc=inst.loc)


@_handles("ret", "exit")
def _ret(imp: _FunctionImporter, inst: ast.Instruction) -> None:
    if inst.operands:
        raise imp.error(f"'{inst.opcode}' takes no operands", inst.loc)
    uni = " {uni}" if "uni" in inst.modifiers else ""
    imp.terminate(inst.opcode, [], attrs=uni if inst.opcode == "ret" else "", loc=inst.loc)
    if inst.opcode == "ret":
        assert imp.block.term is not None
        imp.block.term.values = [imp.read_reg(f"%param:{r.name}", inst.loc)
                                 for r in imp.fn.returns]


# ---------------------------------------------------------------------------
# Module level
# ---------------------------------------------------------------------------


def _float_of_bits(pattern: int, width: int) -> float:
    fmt = {16: "<e", 32: "<f", 64: "<d"}[width]
    ifmt = {16: "<H", 32: "<I", 64: "<Q"}[width]
    return struct.unpack(fmt, struct.pack(ifmt, pattern))[0]


def _bits_of_float(value: float, width: int) -> int:
    fmt = {16: "<e", 32: "<f", 64: "<d"}[width]
    ifmt = {16: "<H", 32: "<I", 64: "<Q"}[width]
    return struct.unpack(ifmt, struct.pack(fmt, value))[0]


def _element_bytes(ptx_type: str) -> int:
    return max(1, bits(mlir_type(ptx_type)) // 8)


def _param_value_type(ptx_type: str, dims: tuple[int | None, ...]) -> str | None:
    """The SSA type of a `.param`: its register type, or `!llvm.array<N x i8>`
    for an aggregate (`.param .align 8 .b8 p[16]`); None if it has none."""
    if ptx_type not in _MLIR_TYPES:
        return None
    if not dims:
        return mlir_type(ptx_type)
    if any(d is None for d in dims):
        return None
    return f"!llvm.array<{_array_bytes(ptx_type, dims)} x i8>"


def _is_aggregate(mlir: str) -> bool:
    return mlir.startswith("!llvm.array<")


def _array_size(mlir: str) -> int:
    return int(mlir[len("!llvm.array<"):].split(" ", 1)[0])


def _array_bytes(ptx_type: str, dims: tuple[int | None, ...]) -> int:
    n = _element_bytes(ptx_type)
    for d in dims:
        n *= d or 0
    return n


def _describe(operand: ast.Operand) -> str:
    return type(operand).__name__.lower()


@dataclass
class ModuleImporter:
    module: ast.Module
    filename: str
    variables: dict[str, ast.VarDecl] = field(default_factory=dict)
    functions: dict[str, ast.Function] = field(default_factory=dict)
    # Names an initializer may take the address of (see _symbols).
    _symbol_names: Container[str] | None = None
    # Added to every line number printed or reported: the line, less one, at
    # which the text parsed into `module` starts in the file (stream.py).
    line_offset: int = 0
    # Without locations the text is smaller and MLIR keeps no location per
    # op in its context (stream.py verifies that way, then with locations
    # only to report an error).
    locations: bool = True
    # Replay instruction recipes (memo.py); off only to check them.
    memo: bool = True

    def __post_init__(self) -> None:
        for fn in self.module.functions:
            # A definition wins over a declaration of the same name.
            if fn.name not in self.functions or fn.body is not None:
                self.functions[fn.name] = fn

    @property
    def quoted_filename(self) -> str:
        return _quote(self.filename)

    def error(self, message: str, loc: SourceLoc | None) -> CompileError:
        if loc is not None and self.line_offset:
            loc = SourceLoc(loc.line + self.line_offset, loc.col)
        return CompileError(message, self.filename, loc)

    def header(self) -> str:
        """The opening line of the module (its directives as attributes)."""
        mod = self.module
        target = ", ".join(_quote(t) for t in mod.target)
        return (f"module attributes {{ptx.address_size = {mod.address_size} : i64, "
                f"ptx.target = [{target}], "
                f'ptx.version = "{mod.version[0]}.{mod.version[1]}"}} {{')

    @without_collector
    def run(self) -> str:
        mod = self.module
        lines = [self.header()]
        for var in mod.variables + self._function_scope_variables():
            lines.append(self._variable(var))
        for fn in mod.functions:
            if fn.body is None:
                continue
            lines.append(_FunctionImporter(self, fn).run())
        lines.append("}")
        return "\n".join(lines) + "\n"

    # -- one function at a time (stream.py) ----------------------------------------

    def module_variables(self) -> list[str]:
        """The `ptx.var` lines of the module-scope variables (and registers them)."""
        return [self._variable(var) for var in self.module.variables]

    def body_variables(self, fn: ast.Function) -> list[ast.VarDecl]:
        """`fn`'s `.shared`/`.global`/`.const` variables, which are module
        symbols (see _function_scope_variables)."""
        return [s for s in _all_statements(fn.body or ())
                if isinstance(s, ast.VarDecl) and s.space in ("shared", "global", "const")]

    def function(self, fn: ast.Function, body_vars: list[ast.VarDecl]) -> tuple[list[str], str]:
        """The `ptx.var` lines of `fn`'s body variables (registered, so `fn`
        can take their addresses) and `fn` as a `func.func`."""
        var_lines = [self._variable(var) for var in body_vars]
        return var_lines, _FunctionImporter(self, fn).run()

    def _function_scope_variables(self) -> tuple[ast.VarDecl, ...]:
        """`.shared`/`.global`/`.const` variables declared inside bodies (nvcc
        puts a kernel's `__shared__` arrays there); their names are unique."""
        found: list[ast.VarDecl] = []
        names = {v.name for v in self.module.variables}
        for fn in self.module.functions:
            for s in _all_statements(fn.body or ()):
                if isinstance(s, ast.VarDecl) and s.space in ("shared", "global", "const"):
                    if s.name in names:
                        raise self.error(f"unsupported redeclaration of '{s.name}' "
                                         "in a function body", s.loc)
                    names.add(s.name)
                    found.append(s)
        return tuple(found)

    def _variable(self, var: ast.VarDecl) -> str:
        if var.space not in ("global", "shared", "const"):
            raise self.error(f"unsupported module variable in .{var.space}", var.loc)
        if var.type not in _MLIR_TYPES:
            raise self.error(f"unsupported variable type '.{var.type}'", var.loc)
        self.variables[var.name] = var
        count = 1
        for d in var.dims:
            count *= d if d is not None else 0
        if var.dims and var.dims[-1] is None and var.init is not None:
            count = len(_flatten(var.init))
        attrs = [f"space = #ptx.space<{var.space}>", f"type = #ptx.type<{var.type}>"]
        if count != 1:
            attrs.append(f"count = {count} : i64")
        if var.align:
            attrs.append(f"align = {var.align} : i64")
        if var.linkage:
            attrs.append(f"linkage = {_quote(var.linkage)}")
        for attribute in var.attributes:
            # `.attribute(.managed)`: a __managed__ variable, host-accessible
            # at the address the driver gives (PTX ISA, Variable Attributes).
            # The other one, `.unified(...)`, we do not support yet.
            if attribute != "managed":
                raise self.error(f"unsupported variable attribute '.{attribute}' on "
                                 f"'{var.name}'", var.loc)
            if var.space != "global":
                raise self.error(f"'.attribute(.managed)' on '{var.name}' in .{var.space} "
                                 "(only .global variables can be managed)", var.loc)
            attrs.append("managed")
        if var.init is not None:
            data, addresses = self._initializer(var)
            attrs.append(f"init = array<i8: {', '.join(map(str, data))}>")
            if addresses:
                attrs.append(f"init_addresses = [{', '.join(addresses)}]")
        loc = (f' loc({self.quoted_filename}:{var.loc.line + self.line_offset}:{var.loc.col})'
               if self.locations else "")
        return f"  ptx.var @{_quote(var.name)} {{{', '.join(attrs)}}}{loc}"

    def _initializer(self, var: ast.VarDecl) -> tuple[list[int], list[str]]:
        """The initializer's bytes, and a `#ptx.init_addr` for each element
        that holds the address of a symbol (zero in the bytes)."""
        size = _element_bytes(var.type)
        width = size * 8
        is_float = var.type.startswith("f")
        out = bytearray()
        addresses: list[str] = []
        for item in _flatten(var.init):
            if isinstance(item, ast.Sym):
                item = ast.SymOffset(item.name, 0)
            if isinstance(item, ast.SymOffset):
                if size not in (4, 8) or is_float:
                    raise self.error(f"unsupported initializer for '{var.name}' (a symbol's "
                                     f"address in a .{var.type} element)", var.loc)
                if item.name not in self._symbols():
                    raise self.error(f"initializer of '{var.name}' refers to unknown symbol "
                                     f"'{item.name}'", var.loc)
                params = [f"offset = {len(out)}", f"symbol = @{_quote(item.name)}"]
                if item.offset:
                    params.append(f"addend = {item.offset}")
                if item.generic:
                    params.append("generic = true")
                addresses.append(f"#ptx.init_addr<{', '.join(params)}>")
                out += bytes(size)
                continue
            if isinstance(item, int):
                pattern = _bits_of_float(float(item), width) if is_float else item
            elif isinstance(item, ast.IntImm):
                pattern = _bits_of_float(float(item.value), width) if is_float else item.value
            elif isinstance(item, ast.FloatImm):
                pattern = (item.bits if item.width == width
                           else _bits_of_float(_float_of_bits(item.bits, item.width), width))
            else:
                raise self.error(f"unsupported initializer for '{var.name}' "
                                 "(addresses of symbols)", var.loc)
            out += (pattern & ((1 << width) - 1)).to_bytes(size, "little")
        return [b - 256 if b >= 128 else b for b in out], addresses

    def _symbols(self) -> Container[str]:
        """Names an initializer may take the address of: variables and functions."""
        if self._symbol_names is None:
            mod = self.module
            self._symbol_names = {v.name for v in mod.variables} | {
                f.name for f in mod.functions} | {
                v.name for v in self._function_scope_variables()}
        return self._symbol_names


def _flatten(init: object) -> list[object]:
    if isinstance(init, tuple | list):
        result: list[object] = []
        for item in init:
            result.extend(_flatten(item))
        return result
    return [init]


def _all_statements(stmts: tuple[ast.Statement, ...]) -> Iterator[ast.Statement]:
    """Every statement of `stmts`, those of nested blocks too, in order
    (iterative: a recursive closure would be a reference cycle)."""
    stack = [iter(stmts)]
    while stack:
        for s in stack[-1]:
            yield s
            if isinstance(s, ast.Block):
                stack.append(iter(s.body))
                break
        else:
            stack.pop()


def import_module(module: ast.Module, filename: str | None = None, *, memo: bool = True) -> str:
    """The ptx-dialect MLIR text for a parsed PTX module (`memo=False` runs
    every instruction's handler, to check the recipes against)."""
    return ModuleImporter(module, filename or module.filename, memo=memo).run()
