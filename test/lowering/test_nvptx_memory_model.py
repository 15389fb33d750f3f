"""NVPTX keeps PTX's memory model exactly: a sweep of atom/red over every
operation, semantics, scope and state space, ld/st orderings and fences,
compiled for sm_90; each kernel's emitted instruction must carry the
source's semantics, scope and space (no weaker, no stronger, no fences
added), and ptxas must accept the module."""

from __future__ import annotations

import itertools
import re
import subprocess

import pytest
from support import tool

import zmlir

SEMS = ["", "relaxed", "acquire", "release", "acq_rel"]
SCOPES = ["", "cta", "cluster", "gpu", "sys"]
SPACES = ["global", "shared", ""]
OPS = [("add", "u32"), ("add", "u64"), ("add", "f32"), ("add", "f64"), ("add.noftz", "f16"),
       ("add.noftz", "bf16"), ("add.noftz", "f16x2"), ("add.noftz", "bf16x2"), ("exch", "b32"),
       ("exch", "b64"), ("and", "b32"), ("or", "b64"), ("xor", "b32"), ("min", "s32"),
       ("max", "u32"), ("min", "s64"), ("max", "u64"), ("inc", "u32"), ("dec", "u32"),
       ("cas", "b16"), ("cas", "b32"), ("cas", "b64")]
REG = {"u32": "r", "s32": "r", "b32": "r", "f32": "f", "u64": "rd", "s64": "rd", "b64": "rd",
       "f64": "fd", "f16": "h", "bf16": "h", "b16": "h", "f16x2": "r", "bf16x2": "r"}
SEMSET = {"relaxed", "acquire", "release", "acq_rel", "sc"}
SCOPESET = {"cta", "cluster", "gpu", "sys"}
ATOM_OPS = {"add", "exch", "and", "or", "xor", "min", "max", "inc", "dec", "cas"}


def _q(*parts: str) -> str:
    return "".join("." + p for p in parts if p)


def _cases() -> list[tuple[str, str, dict]]:
    """(kind, instruction, expected qualifiers); a missing .sem on atom/red is
    .relaxed, a missing scope .gpu (PTX ISA 9.7.13.5)."""
    cases = []
    for (op, ty), sem, scope, space in itertools.product(OPS, SEMS, SCOPES, SPACES):
        r = REG[ty]
        c = f", %{r}3" if op == "cas" else ""
        exp = dict(sem=sem or "relaxed", scope=scope or "gpu", space=space, op=op.split(".")[0])
        cases.append(("atom", f"atom{_q(sem, scope, space)}.{op}.{ty} %{r}1, [%rd9], %{r}2{c};",
                      exp))
        if op not in ("cas", "exch") and sem in ("", "relaxed", "release"):
            cases.append(("red", f"red{_q(sem, scope, space)}.{op}.{ty} [%rd9], %{r}2;", exp))
    for (sem, kind), scope, space in itertools.product(
            [("relaxed", "ld"), ("acquire", "ld"), ("relaxed", "st"), ("release", "st")],
            SCOPES[1:], SPACES):
        inst = (f"ld{_q(sem, scope, space)}.u32 %r1, [%rd9];" if kind == "ld"
                else f"st{_q(sem, scope, space)}.u32 [%rd9], %r2;")
        cases.append((kind, inst, dict(sem=sem, scope=scope, space=space)))
    for sem, scope in itertools.product(["sc", "acq_rel"], SCOPES[1:]):
        cases.append(("fence", f"fence.{sem}.{scope};", dict(sem=sem, scope=scope)))
    for level, scope in [("cta", "cta"), ("gl", "gpu"), ("sys", "sys")]:
        cases.append(("fence", f"membar.{level};", dict(sem="sc", scope=scope)))
    return cases


def _kernel(i: int, inst: str, space: str) -> str:
    addr = ("mov.u64 %rd9, sh;" if space == "shared" else
            "ld.param.u64 %rd9, [p];" + (" cvta.to.global.u64 %rd9, %rd9;" if space == "global"
                                          else ""))
    return f""".visible .entry k{i}(.param .u64 p)
{{
	.reg .b16 %h<4>; .reg .b32 %r<4>; .reg .f32 %f<4>; .reg .b64 %rd<10>; .reg .f64 %fd<4>;
	{addr}
	mov.b32 %r2, 1; mov.b32 %r3, 2; mov.b64 %rd2, 3; mov.b64 %rd3, 4; mov.f32 %f2, 0f3F800000;
	mov.f64 %fd2, 0d3FF0000000000000; mov.b16 %h2, 5; mov.b16 %h3, 6;
	{inst}
	st.global.u32 [%rd9+64], %r1; st.global.u64 [%rd9+72], %rd1; st.global.f32 [%rd9+80], %f1;
	st.global.f64 [%rd9+88], %fd1; st.global.b16 [%rd9+96], %h1;
	ret;
}}
"""


@pytest.fixture(scope="module")
def sweep():
    cases = _cases()
    ptx = ".version 8.0\n.target sm_90\n.address_size 64\n.shared .align 8 .b8 sh[256];\n" + \
        "\n".join(_kernel(i, inst, e.get("space", "global")) for i, (_, inst, e) in
                  enumerate(cases))
    asm = zmlir.compile(ptx, target="nvptx:sm_90", filename="sweep.ptx").decode()
    return cases, asm


def test_sweep_keeps_semantics_and_scope(sweep):
    cases, asm = sweep
    bodies = dict(re.findall(r"\.entry k(\d+)\((.*?)\n}", asm, re.S))
    bad = []
    for i, (kind, inst, exp) in enumerate(cases):
        lines = [line.strip() for line in bodies[str(i)].splitlines()]
        if kind in ("atom", "red"):
            mem = [x for x in lines if re.match(r"(atom|red)\.", x)]
        elif kind == "ld":
            mem = [x for x in lines if x.startswith("ld.") and ".param" not in x]
        elif kind == "st":
            mem = [x for x in lines if x.startswith("st.") and not re.search(r"\+(64|72|80|88|96)\]", x)]
        else:
            mem = [x for x in lines if x.startswith("fence.")]
        fences = [x for x in lines if x.startswith("fence") and kind != "fence"]
        if len(mem) != 1 or fences:
            bad.append(f"{inst} -> {mem} {fences}")
            continue
        toks = set(mem[0].split()[0].rstrip(";").split("."))
        got = dict(sem=next(iter(toks & SEMSET), "relaxed"),
                   scope=next(iter(toks & SCOPESET), "gpu" if kind in ("atom", "red") else "sys"))
        if kind != "fence":
            got["space"] = next(iter(toks & {"global", "shared"}), "")
            if not exp["space"]:  # generic: LLVM may prove the space
                got["space"] = ""
        if kind in ("atom", "red"):
            got["op"] = next(iter(toks & ATOM_OPS), None)
        if got != exp:
            bad.append(f"{inst} -> {mem[0]}")
    assert not bad, f"{len(bad)} of {len(cases)} differ:\n" + "\n".join(bad[:40])


def test_sweep_ptxas_accepts(sweep, tmp_path):
    ptxas = tool("ptxas")
    if not ptxas:
        pytest.skip("ptxas is not installed")
    _, asm = sweep
    path = tmp_path / "sweep.ptx"
    path.write_text(asm)
    result = subprocess.run([ptxas, "-arch=sm_90", str(path), "-o", str(tmp_path / "sweep.cubin")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[:4000]
