"""The PTX parser: real nvcc output, every operand form, and diagnostics.

The nvcc tests compile small CUDA programs at test time (skipped when nvcc is
missing) and check facts about the parsed AST, cross-checked against the PTX
text where the exact numbers depend on the nvcc version.

Run from the repository root: `python -m pytest test/frontend/test_parser.py`.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from zmlir.diagnostics import CompileError, SourceLoc
from zmlir.frontend import parse_ptx
from zmlir.frontend.ast import (
    Addr,
    Block,
    FloatImm,
    Function,
    Guard,
    InitField,
    Instruction,
    IntImm,
    Label,
    Mask,
    Module,
    Not,
    NoUnroll,
    Operand,
    Pair,
    Reg,
    RegDecl,
    Sink,
    Statement,
    Sym,
    SymOffset,
    TargetList,
    VarDecl,
    Vec,
)
from zmlir.frontend.fastpath import MAX_NESTING

HEADER = ".version 9.0\n.target sm_80\n.address_size 64\n"

# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------


def walk(stmts: tuple[Statement, ...] | None) -> Iterator[Statement]:
    """Every statement, descending into nested blocks."""
    for s in stmts or ():
        yield s
        if isinstance(s, Block):
            yield from walk(s.body)


def instructions(f: Function) -> list[Instruction]:
    return [s for s in walk(f.body) if isinstance(s, Instruction)]


def function(module: Module, name: str) -> Function:
    """The definition of the C++ function `name` (matched by its mangled name)."""
    mangled = re.compile(rf"_Z{len(name)}{name}\w*")
    (f,) = [f for f in module.functions if mangled.fullmatch(f.name) and f.body is not None]
    return f


def kernel_body(body: str) -> Function:
    """Parse `body` as the body of one kernel and return the kernel."""
    module = parse_ptx(HEADER + ".visible .entry k()\n{\n" + body + "\n}\n")
    (f,) = module.functions
    return f


def operand(text: str) -> Operand:
    """Parse `text` as the second operand of an instruction."""
    (inst,) = kernel_body(f"mov.b32 %r0, {text};").body or ()
    assert isinstance(inst, Instruction)
    return inst.operands[1]


def as_addr(o: Operand) -> Addr:
    assert isinstance(o, Addr), o
    return o


def errors(source: str) -> CompileError:
    with pytest.raises(CompileError) as info:
        parse_ptx(source, "bad.ptx")
    return info.value


# Special registers are predefined; everything else an instruction names must be declared.
SPECIAL = re.compile(r"%(tid|ntid|ctaid|nctaid|laneid|warpid|clock|clock64|cluster\w*|SP|SPL)\b")


def check_registers_declared(f: Function) -> None:
    declared = {n for s in walk(f.body) if isinstance(s, RegDecl) for n in s.names}
    declared |= {p.name for p in (*f.params, *f.returns) if p.space == "reg"}

    def regs(o: Operand) -> Iterator[str]:
        if isinstance(o, Reg):
            yield o.name.split(".")[0] if SPECIAL.match(o.name) is None else "%special"
        elif isinstance(o, Addr):
            yield from regs(o.base)
        elif isinstance(o, Vec):
            for e in o.elems:
                yield from regs(e)
        elif isinstance(o, Pair):
            yield from regs(o.first)
            yield from regs(o.second)
        elif isinstance(o, Not):
            yield from regs(o.operand)

    for inst in instructions(f):
        for o in inst.operands:
            for r in regs(o):
                assert r == "%special" or r in declared, (r, inst)


def check_reg_counts(ptx: str, f: Function) -> None:
    """Each `.reg .t %x<N>;` line in the kernel's text expands to exactly N names."""
    start = ptx.index(f.name + "(")
    end = ptx.index("\n}", start)
    declared = {n for s in walk(f.body) if isinstance(s, RegDecl) for n in s.names}
    for prefix, count in re.findall(r"\.reg \.\w+\s+(%\w+)<(\d+)>;", ptx[start:end]):
        assert {f"{prefix}{i}" for i in range(int(count))} <= declared
        assert f"{prefix}{count}" not in declared


# ---------------------------------------------------------------------------
# Real nvcc output
# ---------------------------------------------------------------------------

NVCC = shutil.which("nvcc") or "/usr/local/bin/nvcc"
needs_nvcc = pytest.mark.skipif(not Path(NVCC).exists(), reason="nvcc not installed")

CUDA_SOURCES = {
    "vadd": """
        __global__ void vadd(const float* a, const float* b, float* c, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) c[i] = a[i] + b[i];
        }""",
    "reduce": """
        __global__ void __launch_bounds__(256, 2) reduce(const float* in, float* out, int n) {
          __shared__ float smem[256];
          int t = threadIdx.x;
          float v = 0;
          for (int i = blockIdx.x * 256 + t; i < n; i += gridDim.x * 256) v += in[i];
          smem[t] = v;
          __syncthreads();
          for (int s = 128; s >= 32; s >>= 1) {
            if (t < s) smem[t] += smem[t + s];
            __syncthreads();
          }
          v = smem[t];
          for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
          if (t == 0) atomicAdd(out, v);
        }""",
    "hist": """
        __global__ void hist(const unsigned char* d, unsigned* h, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) atomicAdd(&h[d[i]], 1u);
        }""",
    "matmul": """
        #define T 16
        __global__ void matmul(const float* A, const float* B, float* C, int N) {
          __shared__ float As[T][T], Bs[T][T];
          int r = blockIdx.y * T + threadIdx.y, c = blockIdx.x * T + threadIdx.x;
          float acc = 0;
          for (int k = 0; k < N / T; k++) {
            As[threadIdx.y][threadIdx.x] = A[r * N + k * T + threadIdx.x];
            Bs[threadIdx.y][threadIdx.x] = B[(k * T + threadIdx.y) * N + c];
            __syncthreads();
            for (int j = 0; j < T; j++) acc += As[threadIdx.y][j] * Bs[j][threadIdx.x];
            __syncthreads();
          }
          C[r * N + c] = acc;
        }""",
    "call": """
        __device__ __noinline__ float helper(float x, int y) { return x * y + 1.5f; }
        __global__ void caller(float* p) { p[threadIdx.x] = helper(p[threadIdx.x], threadIdx.x); }
        """,
    "dynshared": """
        extern __shared__ float dyn[];
        __global__ void dynk(float* p) {
          dyn[threadIdx.x] = p[threadIdx.x];
          __syncthreads();
          p[threadIdx.x] = dyn[31 - threadIdx.x];
        }""",
    "printf": """
        #include <cstdio>
        __device__ int counter = 5;
        __constant__ int table[4] = {1, 2, 3, 4};
        __global__ void hello(int x) { printf("hi %d\\n", x + counter + table[x & 3]); }
        """,
    "indirect": """
        typedef float (*fp)(float);
        __device__ float f1(float x) { return x + 1; }
        __device__ float f2(float x) { return x * 2; }
        __device__ fp tab[2] = {f1, f2};
        __global__ void ind(float* p, int k) { p[threadIdx.x] = tab[k](p[threadIdx.x]); }
        """,
    "inlineasm": """
        __global__ void asmk(int* p) {
          int r;
          asm volatile("{\\n\\t.reg .pred q;\\n\\tsetp.ne.s32 q, %1, 0;\\n\\t"
                       "selp.s32 %0, 1, 2, q;\\n\\t}" : "=r"(r) : "r"(p[0]));
          p[1] = r;
        }""",
    "cluster": """
        __global__ void __cluster_dims__(2, 1, 1) clk(float* p) { p[threadIdx.x] += 1; }
        """,
}


class Nvcc:
    """Compiles CUDA_SOURCES on demand, once per (source, flags)."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.cache: dict[tuple[str, tuple[str, ...]], str] = {}

    def ptx(self, name: str, *flags: str) -> str:
        key = (name, flags)
        if key not in self.cache:
            tag = "_".join(re.sub(r"\W", "", f) for f in flags)
            cu = self.tmp / f"{name}.cu"
            cu.write_text(CUDA_SOURCES[name])
            out = self.tmp / f"{name}_{tag}.ptx"
            subprocess.run([NVCC, "-ptx", *flags, str(cu), "-o", str(out)], check=True)
            self.cache[key] = out.read_text()
        return self.cache[key]


@pytest.fixture(scope="session")
def nvcc(tmp_path_factory: pytest.TempPathFactory) -> Nvcc:
    return Nvcc(tmp_path_factory.mktemp("nvcc"))


ARCHS = ["-arch=sm_80", "-arch=sm_90"]


@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
def test_vector_add(nvcc: Nvcc, arch: str) -> None:
    ptx = nvcc.ptx("vadd", arch)
    m = parse_ptx(ptx, "vadd.ptx")
    assert m.filename == "vadd.ptx"
    assert m.version >= (9, 0)
    assert m.target == (arch.split("=")[1],)
    assert m.address_size == 64
    assert m.variables == ()
    (f,) = m.functions
    assert (f.kind, f.name, f.linkage) == ("entry", "_Z4vaddPKfS0_Pfi", "visible")
    assert [(p.space, p.type) for p in f.params] == [("param", "u64")] * 3 + [("param", "u32")]
    assert [p.name for p in f.params] == [f"_Z4vaddPKfS0_Pfi_param_{i}" for i in range(4)]
    assert f.returns == () and f.directives == {}
    assert f.loc.line == ptx.splitlines().index(".visible .entry _Z4vaddPKfS0_Pfi(") + 1
    check_reg_counts(ptx, f)
    check_registers_declared(f)

    insts = instructions(f)
    first = insts[0]
    assert (first.opcode, first.modifiers) == ("ld", ("param", "u64"))
    assert first.operands[1] == Addr(Sym("_Z4vaddPKfS0_Pfi_param_0"))
    assert Reg("%tid.x") in [i.operands[1] for i in insts if i.opcode == "mov"]
    assert Reg("%ctaid.x") in [i.operands[1] for i in insts if i.opcode == "mov"]
    (setp,) = [i for i in insts if i.opcode == "setp"]
    assert setp.modifiers[-1] == "s32"
    loads = [i for i in insts if (i.opcode, i.modifiers) == ("ld", ("global", "f32"))]
    assert len(loads) == 2 and all(isinstance(as_addr(i.operands[1]).base, Reg) for i in loads)
    (store,) = [i for i in insts if i.opcode == "st"]
    assert store.modifiers == ("global", "f32") and isinstance(store.operands[0], Addr)
    # The bounds check: a guarded branch to a label that exists, followed by `ret`.
    (branch,) = [i for i in insts if i.opcode == "bra"]
    assert branch.guard is not None and branch.guard.reg.startswith("%p")
    target = branch.operands[0]
    assert isinstance(target, Sym) and target.name.startswith("$L__BB")
    labels = [s.name for s in walk(f.body) if isinstance(s, Label)]
    assert labels == [target.name]
    assert insts[-1].opcode == "ret"
    # Every instruction's location points at its mnemonic in the text.
    lines = ptx.splitlines()
    for inst in insts:
        text = lines[inst.loc.line - 1][inst.loc.col - 1 :]
        assert text.startswith(inst.opcode) or text.startswith("@")


@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
def test_shared_memory_reduction(nvcc: Nvcc, arch: str) -> None:
    ptx = nvcc.ptx("reduce", arch)
    f = function(parse_ptx(ptx), "reduce")
    assert f.directives == {"maxntid": (256, 1, 1), "minnctapersm": (2,)}
    check_reg_counts(ptx, f)
    check_registers_declared(f)
    (smem,) = [s for s in f.body or () if isinstance(s, VarDecl)]
    assert (smem.space, smem.type, smem.align, smem.dims) == ("shared", "b8", 4, (1024,))
    assert "smem" in smem.name
    insts = instructions(f)
    # The shared array's address is taken by name.
    assert any(Sym(smem.name) in i.operands for i in insts)
    syncs = [i for i in insts if i.opcode in ("bar", "barrier")]
    assert len(syncs) >= 2 and all(i.operands == (IntImm(0),) for i in syncs)
    shuffles = [i for i in insts if i.opcode == "shfl"]
    assert len(shuffles) == 5
    for s in shuffles:
        assert s.modifiers == ("sync", "down", "b32")
        assert isinstance(s.operands[0], Pair)
        assert s.operands[0].second.name.startswith("%p")  # type: ignore[union-attr]
    # Shared loads at constant offsets from one base register.
    offsets = {
        as_addr(i.operands[1]).offset
        for i in insts
        if i.modifiers[:1] == ("shared",) and i.opcode == "ld"
    }
    assert {0, 128, 256, 512} <= offsets
    atomics = [i for i in insts if i.opcode in ("atom", "red")]
    assert len(atomics) == 1 and {"global", "add", "f32"} <= set(atomics[0].modifiers)
    assert any(i.operands[1:] == (FloatImm(0, 32),) for i in insts if i.opcode == "mov")


@needs_nvcc
def test_atomic_histogram(nvcc: Nvcc) -> None:
    ptx = nvcc.ptx("hist", "-arch=sm_80")
    f = function(parse_ptx(ptx), "hist")
    check_registers_declared(f)
    insts = instructions(f)
    assert any((i.opcode, i.modifiers) == ("ld", ("global", "u8")) for i in insts)
    (atomic,) = [i for i in insts if i.opcode in ("atom", "red")]
    assert {"global", "add", "u32"} <= set(atomic.modifiers)
    assert atomic.operands[-1] == IntImm(1)
    assert [i.guard for i in insts if i.guard is not None] == [Guard("%p1", False)]


@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
def test_tiled_matmul(nvcc: Nvcc, arch: str) -> None:
    ptx = nvcc.ptx("matmul", arch)
    f = function(parse_ptx(ptx), "matmul")
    check_reg_counts(ptx, f)
    check_registers_declared(f)
    tiles = [s for s in f.body or () if isinstance(s, VarDecl)]
    assert sorted(t.name[-2:] for t in tiles) == ["As", "Bs"]
    assert all((t.space, t.dims, t.align) == ("shared", (1024,), 4) for t in tiles)
    insts = instructions(f)
    assert len([i for i in insts if (i.opcode, i.modifiers) == ("fma", ("rn", "f32"))]) >= 16
    assert Reg("%tid.y") in [i.operands[1] for i in insts if i.opcode == "mov"]
    # The k loop: a guarded branch back to a label that precedes it.
    body = list(walk(f.body))
    label_pos = {s.name: n for n, s in enumerate(body) if isinstance(s, Label)}
    back_edges = [
        n
        for n, s in enumerate(body)
        if isinstance(s, Instruction)
        and s.opcode == "bra"
        and s.guard is not None
        and label_pos.get(s.operands[0].name, n) < n  # type: ignore[union-attr]
    ]
    assert back_edges


@needs_nvcc
@pytest.mark.parametrize("arch", ARCHS)
def test_noinline_device_call(nvcc: Nvcc, arch: str) -> None:
    ptx = nvcc.ptx("call", arch)
    m = parse_ptx(ptx)
    helper = function(m, "helper")
    assert helper.kind == "func" and helper.linkage is None
    assert [(r.space, r.type, r.name) for r in helper.returns] == [("param", "b32", "func_retval0")]
    assert [p.type for p in helper.params] == ["b32", "b32"]
    helper_insts = instructions(helper)
    assert any(FloatImm(0x3FC00000, 32) in i.operands for i in helper_insts)  # 1.5f
    (ret_store,) = [i for i in helper_insts if i.opcode == "st"]
    assert ret_store.modifiers == ("param", "f32")
    assert ret_store.operands[0] == Addr(Sym("func_retval0"), 0)

    caller = function(m, "caller")
    check_registers_declared(caller)
    (block,) = [s for s in caller.body or () if isinstance(s, Block)]
    params = [s for s in block.body if isinstance(s, VarDecl)]
    assert [(p.space, p.name) for p in params] == [
        ("param", "param0"),
        ("param", "param1"),
        ("param", "retval0"),
    ]
    (call,) = [s for s in block.body if isinstance(s, Instruction) and s.opcode == "call"]
    assert call.modifiers == ("uni",)
    assert call.operands == (
        Vec((Sym("retval0"),)),
        Sym(helper.name),
        Vec((Sym("param0"), Sym("param1"))),
    )
    assert block.loc.line == ptx.splitlines().index("\t{ // callseq 0, 0") + 1


@needs_nvcc
def test_dynamic_shared_memory(nvcc: Nvcc) -> None:
    m = parse_ptx(nvcc.ptx("dynshared", "-arch=sm_80"))
    (dyn,) = m.variables
    assert (dyn.name, dyn.space, dyn.linkage, dyn.align, dyn.dims, dyn.type) == (
        "dyn",
        "shared",
        "extern",
        16,
        (None,),
        "b8",
    )
    f = function(m, "dynk")
    assert any(Sym("dyn") in i.operands for i in instructions(f))


@needs_nvcc
def test_printf_globals_and_local_depot(nvcc: Nvcc) -> None:
    m = parse_ptx(nvcc.ptx("printf", "-arch=sm_80"))
    vprintf = [f for f in m.functions if f.name == "vprintf"]
    assert len(vprintf) == 1 and vprintf[0].body is None and vprintf[0].linkage == "extern"
    assert [p.type for p in vprintf[0].params] == ["b64", "b64"]
    by_name = {v.name: v for v in m.variables}
    counter = by_name["counter"]
    assert (counter.space, counter.type, counter.init) == ("global", "u32", 5)
    table = by_name["table"]
    assert (table.space, table.dims) == ("const", (16,))
    assert table.init[:5] == (1, 0, 0, 0, 2)  # type: ignore[index]
    (fmt,) = [v for v in m.variables if v.name.startswith("$str")]
    # The format string's bytes; nvcc leaves the terminating zero implicit.
    assert fmt.init == tuple(b"hi %d\n") and fmt.dims == (7,)
    f = function(m, "hello")
    check_registers_declared(f)
    depots = [s for s in f.body or () if isinstance(s, VarDecl) and s.space == "local"]
    assert len(depots) == 1 and depots[0].name.startswith("__local_depot")
    assert any(isinstance(s, RegDecl) and s.names == ("%SP",) for s in f.body or ())
    calls = [i for i in instructions(f) if i.opcode == "call"]
    assert calls[0].operands[1] == Sym("vprintf")


@needs_nvcc
def test_indirect_call_through_prototype(nvcc: Nvcc) -> None:
    m = parse_ptx(nvcc.ptx("indirect", "-arch=sm_90"))
    (tab,) = [v for v in m.variables if v.name == "tab"]
    assert tab.init == (Sym("_Z2f1f"), Sym("_Z2f2f"))
    # The two functions are declared first, then defined.
    assert [f.body is None for f in m.functions if f.name == "_Z2f1f"] == [True, False]
    f = function(m, "ind")
    (call,) = [i for i in instructions(f) if i.opcode == "call"]
    rets, callee, args, proto = call.operands
    assert rets == Vec((Sym("retval0"),)) and args == Vec((Sym("param0"),))
    assert isinstance(callee, Reg) and isinstance(proto, Sym)
    # The `.callprototype` declaration is dropped, not mistaken for a label.
    assert not any(isinstance(s, Label) and s.name == proto.name for s in walk(f.body))


@needs_nvcc
def test_inline_asm_registers_without_percent(nvcc: Nvcc) -> None:
    f = function(parse_ptx(nvcc.ptx("inlineasm", "-arch=sm_80")), "asmk")
    check_registers_declared(f)
    (block,) = [s for s in f.body or () if isinstance(s, Block)]
    assert block.body[0] == RegDecl("pred", ("q",), block.body[0].loc)
    setp, selp = block.body[1:]
    assert isinstance(setp, Instruction) and setp.operands[0] == Reg("q")
    assert isinstance(selp, Instruction) and selp.operands[1:] == (IntImm(1), IntImm(2), Reg("q"))


@needs_nvcc
def test_cluster_directives(nvcc: Nvcc) -> None:
    f = function(parse_ptx(nvcc.ptx("cluster", "-arch=sm_90")), "clk")
    assert f.directives == {"explicitcluster": (), "reqnctapercluster": (2, 1, 1)}


@needs_nvcc
@pytest.mark.parametrize("flags", [("-arch=sm_90", "-G"), ("-arch=sm_80", "-lineinfo")])
def test_debug_info_is_dropped(nvcc: Nvcc, flags: tuple[str, ...]) -> None:
    ptx = nvcc.ptx("reduce", *flags)
    assert ".loc" in ptx and ".file" in ptx
    m = parse_ptx(ptx)
    if "-G" in flags:
        assert ".section" in ptx and "debug" in m.target
    f = function(m, "reduce")
    check_registers_declared(f)
    assert m.variables == ()
    # With -G the shuffle stays in its own (debuggable) function.
    assert any(i.opcode == "shfl" for g in m.functions for i in instructions(g))


# ---------------------------------------------------------------------------
# Module structure, handwritten
# ---------------------------------------------------------------------------


def test_header_directives() -> None:
    m = parse_ptx(".version 8.5\n.target sm_90a, texmode_independent, debug\n", "x.ptx")
    assert (m.version, m.target, m.address_size) == (
        (8, 5),
        ("sm_90a", "texmode_independent", "debug"),
        32,
    )
    assert m.functions == () and m.variables == () and m.filename == "x.ptx"


def test_comments_and_dropped_directives() -> None:
    m = parse_ptx(
        """// leading comment
        .version 9.0 /* block
        comment */ .target sm_80 // trailing
        .address_size 64
        .file 1 "/tmp/a.cu"
        .file 2 "/tmp/b // not a comment.h", 1700000000, 1234
        .pragma "nounroll";
        .section .debug_info
        {
        .b32 42 // nested { braces } in a comment are fine
        .b8 1, 2, 3
        { .b64 $L__func_begin0 { .b8 0 } }
        .b64 .debug_loc+16
        }
        .entry k()
        {
            .loc 1 10 3
            .loc 2 440 9, function_name $L__info_string0, inlined_at 1 14 3
            .pragma "nounroll";
            add.s32 %r1, /* inline */ %r2, 1; // done
            ret;
        }
        """
    )
    (f,) = m.functions
    assert [i.opcode for i in instructions(f)] == ["add", "ret"]
    assert instructions(f)[0].operands == (Reg("%r1"), Reg("%r2"), IntImm(1))


def test_linkage() -> None:
    m = parse_ptx(
        HEADER
        + """
        .visible .entry a() { ret; }
        .extern .func b();
        .weak .func c() { ret; }
        .func d() { ret; }
        .visible .global .u32 v1;
        .extern .global .u32 v2;
        .weak .global .u32 v3;
        .common .global .u32 v4;
        """
    )
    assert [(f.name, f.linkage) for f in m.functions] == [
        ("a", "visible"),
        ("b", "extern"),
        ("c", "weak"),
        ("d", None),
    ]
    assert m.functions[1].body is None
    assert [(v.name, v.linkage) for v in m.variables] == [
        ("v1", "visible"),
        ("v2", "extern"),
        ("v3", "weak"),
        ("v4", "common"),
    ]


def test_function_forms_and_params() -> None:
    m = parse_ptx(
        HEADER
        + """
.entry noparams { ret; }
.entry empty() .maxntid 256, 1, 1 .reqntid 64 .minnctapersm 2 .maxnreg 32 { ret; }
.func (.param .b32 r0, .param .align 16 .b8 r1[32]) f(
    .param .u64 a,
    .param .u64 .ptr.global.align 1 b,
    .param .u64 .ptr .shared c,
    .param .align 8 .b8 d[16],
    .reg .b32 e
) .noreturn
;
.func (.reg .b32 x) g(.reg .b32 y) { mov.b32 x, y; ret; }
"""
    )
    noparams, empty, f, g = m.functions
    assert noparams.params == () and noparams.kind == "entry"
    assert empty.directives == {
        "maxntid": (256, 1, 1),
        "reqntid": (64,),
        "minnctapersm": (2,),
        "maxnreg": (32,),
    }
    assert f.body is None and f.directives == {"noreturn": ()}
    assert [(r.name, r.type, r.align, r.dims) for r in f.returns] == [
        ("r0", "b32", None, ()),
        ("r1", "b8", 16, (32,)),
    ]
    a, b, c, d, e = f.params
    assert (a.space, a.type, a.name, a.ptr_space, a.ptr_align) == ("param", "u64", "a", None, None)
    assert (b.ptr_space, b.ptr_align) == ("global", 1)
    assert (c.ptr_space, c.ptr_align) == ("shared", None)
    assert (d.type, d.align, d.dims) == ("b8", 8, (16,))
    assert (e.space, e.type, e.name) == ("reg", "b32", "e")
    assert d.loc == SourceLoc(11, 5)
    # `.reg` parameters without `%` are registers inside the body.
    (mov, _) = instructions(g)
    assert mov.operands == (Reg("x"), Reg("y"))


def test_register_declarations() -> None:
    f = kernel_body(
        """
        .reg .b32 %r<12>;
        .reg .pred %p, %q;
        .reg .b64 %rd<3>, %SP;
        .reg .v4 .f32 %v;
        .reg .f32 plain;
        """
    )
    decls = [s for s in f.body or () if isinstance(s, RegDecl)]
    assert decls[0].type == "b32" and decls[0].names == tuple(f"%r{i}" for i in range(12))
    assert decls[1].names == ("%p", "%q") and decls[1].type == "pred"
    assert decls[2].names == ("%rd0", "%rd1", "%rd2", "%SP")
    assert (decls[3].type, decls[3].names) == ("v4.f32", ("%v",))
    assert decls[4].names == ("plain",)
    assert [d.loc for d in decls] == [SourceLoc(n, 9) for n in range(7, 12)]


def test_variables() -> None:
    m = parse_ptx(
        HEADER
        + """
.shared .align 4 .b8 _ZZ3fooE4smem[1024];
.extern .shared .align 16 .b8 dyn[];
.global .align 4 .u32 x = 5;
.const .align 4 .b8 tab[8] = {1,2,3,4,5,6,7,8};
.global .u64 p = generic(sym);
.global .u64 q = sym;
.global .f32 f = 0f3F800000;
.global .f64 d = 1.5;
.global .s32 neg = -3;
.const .u32 grid[2][3] = {{1, 2, 3}, {4, 5, 6}};
.global .u64 ptrs[2] = {generic(a), generic(b)};
.global .attribute(.managed) .align 4 .u32 managed;
.global .v4 .f32 vec;
.global .texref tex;
"""
    )
    v = {x.name: x for x in m.variables}
    smem = v["_ZZ3fooE4smem"]
    assert (smem.space, smem.type, smem.align, smem.dims, smem.linkage) == (
        "shared",
        "b8",
        4,
        (1024,),
        None,
    )
    assert (v["dyn"].linkage, v["dyn"].dims, v["dyn"].align) == ("extern", (None,), 16)
    assert (v["x"].init, v["x"].align, v["x"].type) == (5, 4, "u32")
    assert v["tab"].init == (1, 2, 3, 4, 5, 6, 7, 8) and v["tab"].space == "const"
    assert v["p"].init == SymOffset("sym", 0, generic=True) and v["q"].init == Sym("sym")
    assert v["f"].init == FloatImm(0x3F800000, 32)
    assert v["d"].init == FloatImm(0x3FF8000000000000, 64)
    assert v["neg"].init == -3
    assert v["grid"].dims == (2, 3) and v["grid"].init == ((1, 2, 3), (4, 5, 6))
    assert v["ptrs"].init == (SymOffset("a", 0, generic=True), SymOffset("b", 0, generic=True))
    assert v["managed"].attributes == ("managed",)
    assert v["vec"].type == "v4.f32"
    assert v["tex"].type == "texref"
    assert smem.loc == SourceLoc(5, 1)


def test_labels_guards_and_nested_blocks() -> None:
    f = kernel_body(
        """$L__BB0_2:
    @%p1 bra $L__BB0_2;
    @!%p2 bra.uni $L__BB0_3;
    {
        .reg .b32 t;
        { mov.u32 t, 1; }
    }
$L__BB0_3 : ret;"""
    )
    body = f.body or ()
    assert body[0] == Label("$L__BB0_2", SourceLoc(6, 1))
    assert body[1] == Instruction(
        "bra", (), (Sym("$L__BB0_2"),), Guard("%p1", False), SourceLoc(7, 5)
    )
    assert body[2].guard == Guard("%p2", True)  # type: ignore[union-attr]
    outer = body[3]
    assert isinstance(outer, Block) and outer.loc == SourceLoc(9, 5)
    inner = outer.body[1]
    assert isinstance(inner, Block) and inner.loc == SourceLoc(11, 9)
    # `t` is declared in the enclosing block, so it is a register here.
    assert inner.body == (
        Instruction("mov", ("u32",), (Reg("t"), IntImm(1)), None, SourceLoc(11, 11)),
    )
    assert body[4] == Label("$L__BB0_3", SourceLoc(13, 1))
    assert isinstance(body[5], Instruction) and body[5].opcode == "ret"


def test_branch_targets_are_a_statement() -> None:
    f = kernel_body(
        """
    ts: .branchtargets L1, L2;
    brx.idx %r1, ts;
L1: ret;
L2: ret;"""
    )
    body = f.body or ()
    assert [type(s).__name__ for s in body] == [
        "TargetList",
        "Instruction",
        "Label",
        "Instruction",
        "Label",
        "Instruction",
    ]
    assert body[0] == TargetList("ts", "branchtargets", ("L1", "L2"), body[0].loc)
    assert body[1].operands == (Reg("%r1"), Sym("ts"))  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "opcode", "modifiers"),
    [
        ("ret", "ret", ()),
        ("add.s32", "add", ("s32",)),
        ("ld.shared::cta.u32", "ld", ("shared::cta", "u32")),
        (
            "ld.global.L1::no_allocate.L2::128B.v4.f32",
            "ld",
            ("global", "L1::no_allocate", "L2::128B", "v4", "f32"),
        ),
        ("bar.sync.aligned", "bar", ("sync", "aligned")),
        ("cvt.rn.f16x2.f32", "cvt", ("rn", "f16x2", "f32")),
        ("tex.2d.v4.f32.f32", "tex", ("2d", "v4", "f32", "f32")),
        (
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
            "cp",
            ("async", "bulk", "shared::cluster", "global", "mbarrier::complete_tx::bytes"),
        ),
        (
            "tcgen05.ld.sync.aligned.16x64b.x2.b32",
            "tcgen05",
            ("ld", "sync", "aligned", "16x64b", "x2", "b32"),
        ),
    ],
)
def test_opcode_and_modifiers(text: str, opcode: str, modifiers: tuple[str, ...]) -> None:
    (inst,) = kernel_body(f"{text} %r1;").body or ()
    assert isinstance(inst, Instruction)
    assert (inst.opcode, inst.modifiers) == (opcode, modifiers)


# ---------------------------------------------------------------------------
# Operands
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # registers, special registers, vector components
        ("%r1", Reg("%r1")),
        ("%tid.x", Reg("%tid.x")),
        ("%ctaid.y", Reg("%ctaid.y")),
        ("%ntid.z", Reg("%ntid.z")),
        ("%laneid", Reg("%laneid")),
        ("%clock64", Reg("%clock64")),
        ("%envreg3", Reg("%envreg3")),
        ("%lanemask_lt", Reg("%lanemask_lt")),
        ("%SP", Reg("%SP")),
        # integers
        ("0", IntImm(0)),
        ("42", IntImm(42)),
        ("-7", IntImm(-7)),
        ("0x1F", IntImm(31)),
        ("0X1f", IntImm(31)),
        ("017", IntImm(15)),
        ("0b101", IntImm(5)),
        ("42U", IntImm(42)),
        ("0xFFFFFFFFFFFFFFFF", IntImm(2**64 - 1)),
        # floats
        ("0f3F800000", FloatImm(0x3F800000, 32)),
        ("0F3f800000", FloatImm(0x3F800000, 32)),
        ("-0f3F800000", FloatImm(0xBF800000, 32)),
        ("0d3FF0000000000000", FloatImm(0x3FF0000000000000, 64)),
        ("0D7E37E43C8800759C", FloatImm(0x7E37E43C8800759C, 64)),
        ("1.5", FloatImm(0x3FF8000000000000, 64)),
        ("-2.5", FloatImm(0xC004000000000000, 64)),
        ("1e3", FloatImm(0x408F400000000000, 64)),
        ("0.5", FloatImm(0x3FE0000000000000, 64)),
        # symbols
        ("foo", Sym("foo")),
        ("$str", Sym("$str")),
        ("$str$1", Sym("$str$1")),
        ("_Z3fooPf", Sym("_Z3fooPf")),
        ("$L__BB0_2", Sym("$L__BB0_2")),
        ("WARP_SZ", Sym("WARP_SZ")),
        # addresses
        ("[%rd1]", Addr(Reg("%rd1"), 0)),
        ("[%rd1+4]", Addr(Reg("%rd1"), 4)),
        ("[%rd1+-4]", Addr(Reg("%rd1"), -4)),
        ("[%rd1-4]", Addr(Reg("%rd1"), -4)),
        ("[ %rd1 + 0x10 ]", Addr(Reg("%rd1"), 16)),
        ("[sym]", Addr(Sym("sym"), 0)),
        ("[sym+8]", Addr(Sym("sym"), 8)),
        ("[100]", Addr(IntImm(100), 0)),
        # vectors, pairs, negation, sink
        ("{%f1, %f2, _, %f4}", Vec((Reg("%f1"), Reg("%f2"), Sink(), Reg("%f4")))),
        ("{%r1,%r2}", Vec((Reg("%r1"), Reg("%r2")))),
        ("%r1|%p1", Pair(Reg("%r1"), Reg("%p1"))),
        # tex's destination with its residency predicate
        ("{%f1, %f2, %f3, %f4}|%p1",
         Pair(Vec((Reg("%f1"), Reg("%f2"), Reg("%f3"), Reg("%f4"))), Reg("%p1"))),
        ("!%p1", Not(Reg("%p1"))),
        ("_", Sink()),
    ],
)
def test_operand_forms(text: str, expected: Operand) -> None:
    assert operand(text) == expected


def test_operand_floats_are_ieee_bits() -> None:
    # `1.5` keeps full f64 precision; 0f/0d keep the exact bits, NaN payloads included.
    assert operand("0f7FC00001") == FloatImm(0x7FC00001, 32)
    assert operand("0.1") == FloatImm(0x3FB999999999999A, 64)


@pytest.mark.parametrize(
    ("text", "operands"),
    [
        (
            "call.uni (retval0), foo, (param0, param1);",
            (Vec((Sym("retval0"),)), Sym("foo"), Vec((Sym("param0"), Sym("param1")))),
        ),
        ("call foo, (p0);", (Sym("foo"), Vec((Sym("p0"),)))),
        ("call foo;", (Sym("foo"),)),
        ("call.uni foo, ();", (Sym("foo"), Vec(()))),
        (
            "call (r), %rd5, (p), proto;",
            (Vec((Sym("r"),)), Reg("%rd5"), Vec((Sym("p"),)), Sym("proto")),
        ),
        (
            "call.uni (retval0),\n\tvprintf,\n\t(\n\tparam0,\n\tparam1\n\t);",
            (Vec((Sym("retval0"),)), Sym("vprintf"), Vec((Sym("param0"), Sym("param1")))),
        ),
    ],
)
def test_call_operand_groups(text: str, operands: tuple[Operand, ...]) -> None:
    (inst,) = kernel_body(text).body or ()
    assert isinstance(inst, Instruction) and inst.opcode == "call"
    assert inst.operands == operands


def test_plain_register_names_resolve_by_scope() -> None:
    f = kernel_body(
        """
    mov.u32 %r1, q;
    {
        .reg .pred q;
        setp.ne.s32 q|p, %r1, 0;
        @q bra L;
        selp.b32 %r2, 1, 0, !q;
    }
L:  mov.u32 %r1, q;"""
    )
    body = f.body or ()
    # Outside the block `q` is an ordinary symbol.
    assert body[0].operands[1] == Sym("q")  # type: ignore[union-attr]
    assert body[-1].operands[1] == Sym("q")  # type: ignore[union-attr]
    block = body[1]
    assert isinstance(block, Block)
    setp, bra, selp = block.body[1:]
    assert setp.operands[0] == Pair(Reg("q"), Sym("p"))  # type: ignore[union-attr]
    assert bra.guard == Guard("q", False)  # type: ignore[union-attr]
    assert selp.operands[-1] == Not(Reg("q"))  # type: ignore[union-attr]


# ---------------------------------------------------------------------------
# Diagnostics
# ---------------------------------------------------------------------------

KERNEL = HEADER + ".visible .entry k()\n{\n"  # the body starts on line 6


@pytest.mark.parametrize(
    ("source", "line", "col", "message"),
    [
        (KERNEL + "\tadd.s32 %r1, %r2, %r3\n\tret;\n}\n", 6, 23, "expected ';'"),
        (KERNEL + "\tadd.s32 %r1 %r2, %r3;\n}\n", 6, 14, "expected ',', ';' or '|', found '%r2'"),
        (KERNEL + "\tadd.s32 %r1, #, %r3;\n}\n", 6, 15, "unexpected character '#'"),
        (KERNEL + "\tret;\n", 6, 6, "expected '}' at end of input"),
        (KERNEL + "\tret;\n.entry j() { ret; }\n", 7, 1, "expected '}' before '.entry'"),
        (KERNEL + "\t5;\n}\n", 6, 2, "unexpected '5'"),
        (KERNEL + "\tmov.u32 %r1, 09;\n}\n", 6, 15, "invalid octal literal '09'"),
        (KERNEL + "\tmov.u32 %r1, [%r2+1.5];\n}\n", 6, 20, "expected an integer, found '1.5'"),
        (KERNEL + "\tld.u32 %r1, [%r2 %r3];\n}\n", 6, 19, "expected '+', ',' or ']', found '%r3'"),
        (KERNEL + "\tmov.u64 %rd1, 18446744073709551616;\n}\n", 6, 16, "does not fit in 64 bits"),
        (KERNEL + "\tmov.u32 %r1, {{%r1}};\n}\n", 6, 16, "unexpected '{'"),
        (KERNEL + "\tmov.u32 %r1, {%r2, %r3;\n}\n", 6, 24, "expected ',' or '}', found ';'"),
        (".target sm_80\n", 1, 1, "must start with a '.version' directive"),
        ("", 1, 1, "must start with a '.version' directive"),
        ("// nothing\n\n.version 9.0\n.entry k() { ret; }\n", 3, 1, "missing '.target' directive"),
        (".version 9.0\n.version 9.0\n.target sm_80\n", 2, 1, "duplicate '.version' directive"),
        (".version 9\n.target sm_80\n", 1, 10, "expected a version number, found '9'"),
        (".version 9.0\n.target sm_80\n.address_size 48\n", 3, 15, "must be 32 or 64, not 48"),
        (".version 9.0\n.target sm_9999\n", 2, 1, "unknown target architecture 'sm_9999'"),
        (HEADER + "/* never closed\n.entry k() { ret; }\n", 4, 1, "unterminated '/*' comment"),
        (HEADER + ".section .debug_info { .b8 1\n", 4, 1, "unterminated '.section'"),
        (HEADER + ".foo bar;\n", 4, 1, "unexpected '.foo'"),
        (
            HEADER + ".global .q32 x;\n",
            4,
            9,
            "expected '.align', '.attribute', a type or a vector size, found '.q32'",
        ),
        (HEADER + ".global .align 1.5 .b8 x;\n", 4, 16, "expected an integer, found '1.5'"),
        (
            HEADER + ".entry (.param .b32 r) k() { ret; }\n",
            4,
            1,
            "'.entry' cannot have return values",
        ),
        (HEADER + ".entry k(.param .u64) { ret; }\n", 4, 21, "found ')'"),
        (HEADER + ".entry _(.param .u64 a) { ret; }\n", 4, 8,
         "expected '(' or an identifier, found '_'"),
        (HEADER + ".global .b8 x[2] = {1, 2, };\n", 4, 27, "unexpected '}'"),
    ],
)
def test_syntax_errors(source: str, line: int, col: int, message: str) -> None:
    e = errors(source)
    assert (e.filename, e.loc) == ("bad.ptx", SourceLoc(line, col))
    assert message in e.message
    assert str(e) == f"bad.ptx:{line}:{col}: error: {e.message}"


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("body", ["", ".reg .b32 %r<2>;\nmov.b32 %r1, 1;\n"])
def test_nesting_limit_is_exact_and_located(fast: bool, body: str) -> None:
    # The function's braces count: MAX_NESTING - 1 blocks in it parse, one
    # more is an error at that block's brace, with or without the fast path.
    def nested(n: int) -> str:
        return HEADER + ".entry k()\n{\n" + ("{\n" + body) * n + "}\n" * n + "ret;\n}\n"

    parse_ptx(nested(MAX_NESTING - 1), fast=fast)
    with pytest.raises(CompileError) as info:
        parse_ptx(nested(MAX_NESTING), "bad.ptx", fast=fast)
    line = 6 + (MAX_NESTING - 1) * (1 + body.count("\n"))
    assert str(info.value) == (f"bad.ptx:{line}:1: error: unsupported nesting: blocks or "
                               f"braces more than {MAX_NESTING} deep")


def test_absurd_nesting_is_a_compile_error_in_linear_time() -> None:
    # 200k nested braces took 132 s (25k: 5 s): lark's stack grew with them
    # and was copied for each token. The error comes at the first brace too
    # deep, so the time no longer depends on how many follow.
    for n in (5_000, 200_000):
        start = time.perf_counter()
        e = errors(HEADER + ".entry k() {" + "{" * n + "}" * n + "}")
        assert time.perf_counter() - start < 2.0, n
        assert (e.filename, e.loc) == ("bad.ptx", SourceLoc(4, 12 + MAX_NESTING))
        assert e.message.startswith("unsupported nesting")


def _mutations(text: str, count: int, seed: int) -> Iterator[str]:
    rng = random.Random(seed)
    edits: list[Callable[[str, int], str]] = [
        lambda s, i: s[:i],  # truncate
        lambda s, i: s[:i] + s[i + 1 :],  # delete a character
        lambda s, i: s[:i] + rng.choice("{}[]();,.%@!|_-+0xf\"'#/*:<>=") + s[i:],  # insert
    ]
    for _ in range(count):
        yield rng.choice(edits)(text, rng.randrange(len(text)))


def test_no_lark_exception_escapes() -> None:
    source = (
        HEADER
        + """
.global .align 4 .b8 tab[4] = {1, 2, 3, 4};
.func (.param .b32 r) f(.param .u64 .ptr.global.align 4 p, .param .align 8 .b8 s[16]) .noreturn;
.visible .entry k(.param .u64 a) .maxntid 128, 1, 1
{
    .reg .pred %p<3>;
    .reg .b32 %r<9>;
    ld.param.u64 %rd1, [a+8];
    @!%p1 bra $L__BB0_2;
    { .param .b32 param0; call.uni (retval0), f, (param0); }
    shfl.sync.down.b32 %r1|%p2, %r2, 1, 31, -1;
    st.global.v4.f32 [%rd1], {%f1, %f2, _, 0f3F800000};
$L__BB0_2:
    ret;
}
"""
    )
    parse_ptx(source)  # the unmutated source is valid
    for mutated in _mutations(source, 300, seed=1234):
        try:
            parse_ptx(mutated, "fuzz.ptx")
        except CompileError as e:
            assert e.filename == "fuzz.ptx" and e.loc is not None and e.loc.line >= 1


# ---------------------------------------------------------------------------
# Module-level syntax of PTX ISA 9.0, texture operands, `.loc`
# ---------------------------------------------------------------------------


def test_texture_surface_and_tensor_addresses() -> None:
    f = kernel_body(
        """
    tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex_a, {%f5, %f6}];
    tex.1d.v4.s32.s32 {%r1, %r2, %r3, %r4}, [tex_b, smp, {%r5}];
    suld.b.2d.v2.b32.trap {%r1, %r2}, [surf, {%r3, %r4}];
    sust.b.1d.b32.clamp [%rd1, {%r1}], {%r2};
    cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd2, {%r3, %r4}], [%r5];
    tld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex_a, {%f5, 0f3F000000}];
    """
    )
    tex, tex1, suld, sust, cp, tld4 = instructions(f)
    assert tex.operands[1] == Addr(Sym("tex_a"), 0, (Reg("%f5"), Reg("%f6")))
    assert tex1.operands[1] == Addr(Sym("tex_b"), 0, (Reg("%r5"),), Sym("smp"))
    assert suld.operands[1] == Addr(Sym("surf"), 0, (Reg("%r3"), Reg("%r4")))
    assert sust.operands == (Addr(Reg("%rd1"), 0, (Reg("%r1"),)), Vec((Reg("%r2"),)))
    assert cp.operands == (
        Addr(Reg("%r1")),
        Addr(Reg("%rd2"), 0, (Reg("%r3"), Reg("%r4"))),
        Addr(Reg("%r5")),
    )
    assert tld4.operands[1].coords == (Reg("%f5"), FloatImm(0x3F000000, 32))  # type: ignore[union-attr]
    # Plain addresses have no coordinates.
    assert operand("[%rd1+4]").coords is None  # type: ignore[union-attr]


def test_texture_coordinates_resolve_plain_registers() -> None:
    f = kernel_body("{ .reg .f32 x; .reg .b64 t; tex.1d.v4.f32.f32 {%f1,%f2,%f3,%f4}, [t, {x}]; }")
    (block,) = f.body or ()
    assert isinstance(block, Block)
    tex = block.body[-1]
    assert isinstance(tex, Instruction)
    assert tex.operands[1] == Addr(Reg("t"), 0, (Reg("x"),))


@pytest.mark.parametrize("guard", ["@%p1", "@ %p1", "@\t%p1", "@!%p1", "@ !%p1", "@! %p1", "@ ! %p1"])
def test_guard_spacing(guard: str) -> None:
    (inst,) = kernel_body(f"{guard} bra L;\nL: ret;").body[:1]  # type: ignore[index]
    assert isinstance(inst, Instruction)
    assert inst.guard == Guard("%p1", "!" in guard)


def test_loc_attaches_cuda_source_positions() -> None:
    m = parse_ptx(
        HEADER
        + """.visible .entry k()
{
    .reg .b32 %r<3>;
    mov.u32 %r1, 0;
    .loc 1 12 5
    add.s32 %r1, %r1, 1;
    .loc 2 7 0, function_name $L__info_string0, inlined_at 1 12 5
    add.s32 %r1, %r1, 2; add.s32 %r1, %r1, 3;
    .loc 1 13 9
    @%p1 bra $L__BB0_1;
$L__BB0_1:
    ret;
}
.file 1 "/src/k.cu"
.file 2 "/usr/include/some \\"quoted\\" header.h", 1700000000, 4096
"""
    )
    (f,) = m.functions
    srcs = [i.src for i in instructions(f)]
    assert srcs == [None, (1, 12, 5), (2, 7, 0), (2, 7, 0), (1, 13, 9), (1, 13, 9)]
    assert m.files == {1: "/src/k.cu", 2: '/usr/include/some "quoted" header.h'}


def test_alias_and_module_directives() -> None:
    m = parse_ptx(
        """.version 9.0
.target sm_100a, texmode_independent, debug
.address_size 64
.visible .func foo(.param .b32 a) { ret; }
.visible .func bar(.param .b32 a);
.alias bar, foo;
.weak .global .align 4 .u32 w;
.common .global .align 8 .b8 c[16];
.tex .u32 old_tex;
.global .samplerref smp = { addr_mode_0 = clamp_to_edge, filter_mode = linear };
.global .texref tr = { width = 64, height = 32 };
.global .surfref sr;
.pragma "nounroll";
.section .debug_str { $L__info_string0: .b8 95, 0 }
.entry k() .maxntid 128 .reqnctapercluster 2, 1, 1 .maxclusterrank 4 .explicitcluster
    .noreturn .maxnreg 64 .minnctapersm 1 .abi_preserve 2 .blocksareclusters { exit; }
"""
    )
    assert m.target == ("sm_100a", "texmode_independent", "debug")
    assert [(a.name, a.aliasee) for a in m.aliases] == [("bar", "foo")]
    assert m.aliases[0].loc == SourceLoc(6, 1)
    v = {x.name: x for x in m.variables}
    assert (v["w"].linkage, v["c"].linkage, v["old_tex"].space) == ("weak", "common", "tex")
    assert v["smp"].type == "samplerref"
    assert v["smp"].init == (
        InitField("addr_mode_0", Sym("clamp_to_edge")),
        InitField("filter_mode", Sym("linear")),
    )
    assert v["tr"].init == (InitField("width", 64), InitField("height", 32))
    assert v["sr"].type == "surfref"
    k = m.functions[-1]
    assert k.directives == {
        "maxntid": (128,),
        "reqnctapercluster": (2, 1, 1),
        "maxclusterrank": (4,),
        "explicitcluster": (),
        "noreturn": (),
        "maxnreg": (64,),
        "minnctapersm": (1,),
        "abi_preserve": (2,),
        "blocksareclusters": (),
    }


def test_constant_expressions_in_initializers() -> None:
    m = parse_ptx(
        HEADER
        + """
.const .u32 foo = 42;
.global .u32 bar[] = { 2, 3, 5 };
.global .u32 arith[6] = { 1000 + 546, (1 << 4) | 3, -7 / 2, -7 % 2, ~0 & 0xff, !5 };
.global .u64 parr[] = { generic(bar), generic(bar)+4, 8 + bar, bar - 4 };
.global .u8 addr[] = { 0xff(foo), 0xff00(generic(foo)+4), 0xFF(1000 + 546), 0xff00(0x1234) };
.global .b8 sized[2 * 8 + 1];
.global .f32 negf = -0f3F800000;
.global .f64 negd = -1.5;
"""
    )
    v = {x.name: x for x in m.variables}
    assert v["foo"].init == 42
    assert v["arith"].init == (1546, 19, -3, -1, 255, 0)
    assert v["parr"].init == (
        SymOffset("bar", 0, generic=True),
        SymOffset("bar", 4, generic=True),
        SymOffset("bar", 8),
        SymOffset("bar", -4),
    )
    assert v["addr"].init == (
        Mask(0xFF, SymOffset("foo", 0)),
        Mask(0xFF00, SymOffset("foo", 4, generic=True)),
        1546 & 0xFF,
        0x12,
    )
    assert v["sized"].dims == (17,)
    assert v["negf"].init == FloatImm(0xBF800000, 32)
    assert v["negd"].init == FloatImm(0xBFF8000000000000, 64)


@pytest.mark.parametrize(
    ("decl", "message"),
    [
        (".global .u32 x = 1 / 0;", "division by zero"),
        (".global .u32 x = 1 << 99999999;", "shift count"),
        (".global .u32 x = 0xffffffffffffffff * 16;", "does not fit in 64 bits"),
        (".global .u32 x = foo * 2;", "invalid operands to '*'"),
        (".global .u8 x = 0xf0(foo);", "mask 0xf0"),
        (".global .u32 x = ~1.5;", "invalid operand to '~'"),
        (".global .b8 x[1 - 2];", "non-negative"),
        (".global .b8 x[1 / 0];", "division by zero"),
    ],
)
def test_bad_constant_expressions(decl: str, message: str) -> None:
    e = errors(HEADER + decl + "\n")
    assert e.loc == SourceLoc(4, 1) and message in e.message


@pytest.mark.parametrize(
    ("source", "line", "col", "message"),
    [
        (KERNEL + "\t.loc 1 x 2\n\tret;\n}\n", 6, 2, "malformed '.loc' directive"),
        (
            HEADER + '.file 1 "a.cu"\n.file 1 "b.cu"\n',
            5,
            1,
            "'.file 1' declared twice",
        ),
        (HEADER + ".alias a;\n", 4, 9, "expected ','"),
    ],
)
def test_debug_directive_errors(source: str, line: int, col: int, message: str) -> None:
    e = errors(source)
    assert e.loc == SourceLoc(line, col) and message in e.message, e


@needs_nvcc
def test_lineinfo_maps_instructions_to_cuda_lines(nvcc: Nvcc) -> None:
    ptx = nvcc.ptx("reduce", "-arch=sm_80", "-lineinfo")
    m = parse_ptx(ptx, "reduce.ptx")
    # Our file and the CUDA headers the intrinsics are inlined from.
    ours = [n for n, name in m.files.items() if name.endswith("reduce.cu")]
    assert len(ours) == 1 and len(m.files) >= 2
    f = function(m, "reduce")
    srcs = [i.src for i in instructions(f)]
    assert all(s is not None and s[0] in m.files for s in srcs)
    # The source lines are within the CUDA file (the kernel is lines 2..16).
    lines = {s[1] for s in srcs if s is not None and s[0] == ours[0]}
    assert lines <= set(range(0, 17)) and len(lines) > 5
    cu_lines = CUDA_SOURCES["reduce"].splitlines()
    load_lines = {
        cu_lines[i.src[1] - 1]
        for i in instructions(f)
        if (i.opcode, i.modifiers[:1]) == ("ld", ("global",)) and i.src and i.src[0] == ours[0]
    }
    assert len(load_lines) == 1 and "v += in[i]" in load_lines.pop()


# ---------------------------------------------------------------------------
# The fast path (fastpath.py) against lark alone
# ---------------------------------------------------------------------------

TRICKY = (
    HEADER
    + """
.global .align 4 .b8 tab[4] = {1, 2, 3, 4};
.visible .entry k(.param .u64 a, .param .align 8 .b8 s[16]) .maxntid 128, 1, 1
{
    .reg .pred %p<3>;
    .reg .b32 %r<9>, %x;
    .reg.b16 plain, other<2>;
    .reg .v4 .f32 %v;
    .reg .b32 %big<017>;
    .local .align 8 .b8 depot[32];
    .shared .b32 sh[2][3];
    .loc 1 5 7
    ld.param.u64 %rd1, [a+8];
    ld.param.u64 %rd2, [ a + -8 ];
    ld.param.u64 %rd2, [a - 0x10];
    ld.global.u32 %r1, [100];
    @!%p1 bra $L__BB0_2;
    @ ! %p1 bra $L__BB0_2;
    { .param .b32 param0; call.uni (retval0), f, (param0); }
    call.uni (retval0),
    f,
    (
    param0
    );
    call f, ();
    shfl.sync.down.b32 %r1|%p2, %r2, 1, 31, -1;
    setp.ne.s32 plain | %p1, %r1, 0;
    selp.b32 %r1, 1, 0, !%p1;
    st.global.v4.f32 [%rd1], {%f1, %f2, _, 0f3F800000};
    mov.b64 %rd1, {%r1,%r2};
    tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex, {%f5, %f6}];
    tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex, smp, {%f5, -1}];
    mov.u32 %r1, 0x1F; mov.u32 %r2, 017; mov.u32 %r3, 0b101U; mov.f64 %fd1, 1.5e3;
    mov.f32 %f1, -0f3F800000; add.s32 %r1, %r1, -5;
    /* comment */ add.s32 %r1, %r1, 1; // trailing
    ret ;
    ret
    ;
    exit;
    .pragma "nounroll";
    { { { mov.u32 %r1, 1; } } }
    {}
    ts: .branchtargets L1, L2;
    brx.idx %r1, ts;
L1: ret;
L2 :
$L__BB0_2:
    .pragma	"nounroll"	;
    .pragma "used_bytes_mask 0xf";
    .loc 1 9 2, function_name $L__info_string0, inlined_at 1 5 7
    ret;
}
"""
)


def test_fast_path_matches_lark() -> None:
    fast, slow = parse_ptx(TRICKY), parse_ptx(TRICKY, fast=False)
    assert fast == slow
    # `.pragma "nounroll"` is a statement; other pragmas are not.
    body = fast.functions[0].body
    assert body is not None and sum(isinstance(s, NoUnroll) for s in body) == 2
    insts = instructions(fast.functions[0])
    assert len(insts) == 30 and insts[0].src == (1, 5, 7) and insts[-1].src == (1, 9, 2)


def _fast_and_lark(text: str) -> list[object]:
    """parse_ptx's AST or diagnostic with the fast path, then without; a
    diagnostic never names an internal terminal."""
    results: list[object] = []
    for fast in (True, False):
        try:
            results.append(parse_ptx(text, "m.ptx", fast=fast))
        except CompileError as e:
            assert "FAST_" not in str(e), str(e)
            results.append(str(e))
    return results


def test_fast_path_errors_match_lark() -> None:
    """Mutated inputs: both paths give the same AST or the same diagnostic."""
    for mutated in _mutations(TRICKY, 400, seed=99):
        fast, slow = _fast_and_lark(mutated)
        assert fast == slow, mutated


DECLARATIONS = HEADER + """
.extern .shared .align 16 .b8 tile[];
.const .align 4 .b8 coeffs[8] = {0, 0, 128, 63, 0, 0, 0, 64};
.global .align 4 .u32 table[2][2] = {{1, 2}, {3, 4}};
.visible .global .u32 counter = 7;
.global .align 8 .u64 at_tile = generic(tile)+8;
.weak .const .b32 octal = 017;
.global .attribute(.managed) .align 4 .u32 managed = 1;
.shared .b8 two_dims[4][8];
.visible .func  (.param .b32 r) twice(
\t.param .b32 x,
\t.param .align 8 .b8 agg[16]
)
;
.weak .func (.reg .b32 %out) plain (.reg .b32 in, .reg .b32 %in2) { ret; }
.visible .entry k(
\t.param .u64 k_param_0,
\t.param .u32 k_param_1
)
{
\tret;
}
.entry bounded(.param .u64 p) .maxntid 128, 1, 1 { ret; }
"""


def test_fast_declarations_match_lark() -> None:
    """Parameter lists, integer initializers, function headers and module
    variables taken by the fast path: the same AST as lark's, and the same
    diagnostic for mutated inputs, which never names an internal terminal."""
    assert parse_ptx(DECLARATIONS) == parse_ptx(DECLARATIONS, fast=False)
    for mutated in _mutations(DECLARATIONS, 400, seed=7):
        fast, slow = _fast_and_lark(mutated)
        assert fast == slow, mutated


def test_register_count_limit() -> None:
    e = errors(KERNEL + "\t.reg .b32 %r<99999999999>;\n}\n")
    assert e.loc == SourceLoc(6, 15) and "too many registers" in e.message


@pytest.mark.parametrize("ty", ["u14", "b7", "f8", "s128", "u16x2", "e9m9", "q32"])
def test_declarations_take_only_ptx_types(ty: str) -> None:
    for fast in (True, False):
        with pytest.raises(CompileError, match=f"found '.{ty}'"):
            parse_ptx(KERNEL + f"\t.reg .{ty} %r;\n}}\n", fast=fast)
    e = errors(HEADER + f".entry k(.param .{ty} p) {{ ret; }}\n")
    assert e.loc == SourceLoc(4, 17)


def test_declaration_types() -> None:
    types = ["s8", "u64", "b128", "f16x2", "bf16x2", "tf32", "pred", "e4m3x2", "e2m1", "ue8m0x2"]
    f = kernel_body("".join(f".reg .{t} %x{n};\n" for n, t in enumerate(types)))
    assert [d.type for d in f.body or ()] == types
