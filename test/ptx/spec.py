"""PTX instruction fidelity cases: one small kernel per instruction variant family.

Each case is an element-wise kernel `k(out, in0, in1, in2, n)`: thread i loads in0[i], in1[i],
in2[i] into %a0, %a1, %a2 (registers of the case's input types), runs the case's PTX body, which
leaves its result in %d, and stores %d to out[i]. Inputs are generated here, deterministically:
exhaustive where the input space is at most 2^16, else random plus edge cases (NaN payloads,
+-Inf, +-0, subnormals, INT_MIN/INT_MAX, shift counts at and past the width, rounding ties,
out-of-range conversions). Blocks are 128 threads, so warp-level cases see full warps.

This module needs numpy only: tools/capture_golden.py imports it on the GPU machine, and
test/test_ptx_fidelity.py on the CI machine. `python3 test/ptx/spec.py` rewrites the PTX files
in test/ptx/kernels/ from the cases below.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
KERNELS = HERE / "kernels"
GOLDEN = HERE / "golden"
BLOCK = 128

# Register type of each input/output kind, its numpy dtype and byte width.
KINDS = {
    "u16": ("b16", np.uint16), "u32": ("b32", np.uint32), "u64": ("b64", np.uint64),
    "f32": ("f32", np.float32), "f64": ("f64", np.float64),
}


@dataclass(frozen=True)
class Tolerance:
    """How far an .approx result may be from the H200's: `ulp` units in the last place of
    the golden value, or an absolute error `abs`. NVIDIA documents the op's error against the
    exact result; both results are within it, so they may differ by up to twice the bound."""

    ulp: int = 0
    abs: float = 0.0
    source: str = ""


@dataclass(frozen=True)
class Case:
    name: str
    family: str  # row of docs/fidelity.md
    body: str  # PTX using %a0..%a2 (inputs), %d (result), %t0..%t3/%q0..%q3/%w0..%w3 temps
    inputs: tuple[str, ...]
    output: str
    gen: str = "random"  # see _inputs
    tolerance: Tolerance | None = None
    preamble: str = ""  # module-level PTX (device functions)
    locals_: str = ""  # function-level declarations (.local arrays)
    extra: dict[str, object] = field(default_factory=dict)


def _c(name: str, family: str, body: str, inputs: str, output: str, **kw: object) -> Case:
    return Case(name, family, body, tuple(inputs.split()), output, **kw)  # type: ignore[arg-type]


SELP = "selp.u32 %d, 1, 0, %q0;"
CASES: list[Case] = [
    # -- integer bit manipulation ------------------------------------------------------
    _c("popc_b32", "popc", "popc.b32 %d, %a0;", "u32", "u32"),
    _c("popc_b64", "popc", "popc.b64 %d, %a0;", "u64", "u32"),
    _c("clz_b32", "clz", "clz.b32 %d, %a0;", "u32", "u32"),
    _c("clz_b64", "clz", "clz.b64 %d, %a0;", "u64", "u32"),
    _c("bfind_u32", "bfind", "bfind.u32 %d, %a0;", "u32", "u32"),
    _c("bfind_s32", "bfind", "bfind.s32 %d, %a0;", "u32", "u32"),
    _c("bfind_shiftamt_s64", "bfind", "bfind.shiftamt.s64 %d, %a0;", "u64", "u32"),
    _c("brev_b32", "brev", "brev.b32 %d, %a0;", "u32", "u32"),
    _c("brev_b64", "brev", "brev.b64 %d, %a0;", "u64", "u64"),
    _c("cnot_b32", "cnot", "cnot.b32 %d, %a0;", "u32", "u32", gen="small"),
    _c("bfe_u32", "bfe", "bfe.u32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32", gen="fields"),
    _c("bfe_s32", "bfe", "bfe.s32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32", gen="fields"),
    _c("bfe_s64", "bfe", "bfe.s64 %d, %a0, %t0, %t1;", "u64 u32 u32", "u64", gen="fields",
       extra={"pre": "mov.b32 %t0, %a1; mov.b32 %t1, %a2;"}),
    _c("bfe_u64", "bfe", "bfe.u64 %d, %a0, %t0, %t1;", "u64 u32 u32", "u64", gen="fields",
       extra={"pre": "mov.b32 %t0, %a1; mov.b32 %t1, %a2;"}),
    _c("bfi_b32", "bfi", "bfi.b32 %d, %a0, %a1, %t0, %t1;", "u32 u32 u32", "u32", gen="fields",
       extra={"pre": "and.b32 %t0, %a2, 255; shr.b32 %t1, %a2, 8;"}),
    _c("prmt_b32", "prmt", "prmt.b32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32"),
    *[_c(f"prmt_{m}", "prmt", f"prmt.b32.{m} %d, %a0, %a1, %a2;", "u32 u32 u32", "u32")
      for m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")],
    *[_c(f"lop3_{lut:02x}", "lop3", f"lop3.b32 %d, %a0, %a1, %a2, {lut};", "u32 u32 u32", "u32")
      for lut in (0x00, 0x96, 0xe8, 0x1e, 0xf8, 0xff)],
    *[_c(f"shf_{d}_{m}", "shf", f"shf.{d}.{m}.b32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32",
         gen="shifts") for d in ("l", "r") for m in ("clamp", "wrap")],
    _c("szext_clamp_s32", "szext", "szext.clamp.s32 %d, %a0, %a1;", "u32 u32", "u32",
       gen="shifts"),
    _c("szext_wrap_u32", "szext", "szext.wrap.u32 %d, %a0, %a1;", "u32 u32", "u32",
       gen="shifts"),
    _c("bmsk_clamp", "bmsk", "bmsk.clamp.b32 %d, %a0, %a1;", "u32 u32", "u32", gen="shifts2"),
    _c("bmsk_wrap", "bmsk", "bmsk.wrap.b32 %d, %a0, %a1;", "u32 u32", "u32", gen="shifts2"),
    _c("shl_b32", "shl/shr", "shl.b32 %d, %a0, %a1;", "u32 u32", "u32", gen="shifts"),
    _c("shr_s32", "shl/shr", "shr.s32 %d, %a0, %a1;", "u32 u32", "u32", gen="shifts"),
    # -- integer arithmetic ----------------------------------------------------------------
    _c("mul24_lo_s32", "mul24/mad24", "mul24.lo.s32 %d, %a0, %a1;", "u32 u32", "u32"),
    _c("mul24_hi_u32", "mul24/mad24", "mul24.hi.u32 %d, %a0, %a1;", "u32 u32", "u32"),
    _c("mad24_lo_u32", "mul24/mad24", "mad24.lo.u32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32"),
    _c("mad24_hi_sat_s32", "mul24/mad24", "mad24.hi.sat.s32 %d, %a0, %a1, %a2;",
       "u32 u32 u32", "u32"),
    _c("sad_u32", "sad", "sad.u32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32"),
    _c("sad_s32", "sad", "sad.s32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32"),
    _c("dp4a_s32_s32", "dp4a/dp2a", "dp4a.s32.s32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32"),
    _c("dp4a_u32_s32", "dp4a/dp2a", "dp4a.u32.s32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32"),
    _c("dp2a_lo_s32_u32", "dp4a/dp2a", "dp2a.lo.s32.u32 %d, %a0, %a1, %a2;", "u32 u32 u32",
       "u32"),
    _c("dp2a_hi_u32_u32", "dp4a/dp2a", "dp2a.hi.u32.u32 %d, %a0, %a1, %a2;", "u32 u32 u32",
       "u32"),
    _c("add_sat_s32", "add/sub .sat", "add.sat.s32 %d, %a0, %a1;", "u32 u32", "u32"),
    _c("sub_sat_s32", "add/sub .sat", "sub.sat.s32 %d, %a0, %a1;", "u32 u32", "u32"),
    _c("max_relu_s32", "min/max .relu", "max.relu.s32 %d, %a0, %a1;", "u32 u32", "u32"),
    _c("min_relu_s32", "min/max .relu", "min.relu.s32 %d, %a0, %a1;", "u32 u32", "u32"),
    _c("add_cc_chain", "add.cc/addc",
       "add.cc.u32 %t0, %a0, %a1; addc.cc.u32 %t1, %a1, %a2; addc.u32 %t2, 0, 0; "
       "xor.b32 %t1, %t1, %t0; shl.b32 %t2, %t2, 16; xor.b32 %d, %t1, %t2;", "u32 u32 u32", "u32"),
    _c("sub_cc_chain", "sub.cc/subc",
       "sub.cc.u32 %t0, %a0, %a1; subc.cc.u32 %t1, %a1, %a2; subc.u32 %t2, 0, 0; "
       "xor.b32 %t1, %t1, %t0; shl.b32 %t2, %t2, 16; xor.b32 %d, %t1, %t2;", "u32 u32 u32", "u32"),
    _c("mad_cc_chain", "mad.cc/madc",
       "mad.lo.cc.u32 %t0, %a0, %a1, %a2; madc.hi.cc.u32 %t1, %a0, %a1, %a2; "
       "addc.u32 %t2, 0, 0; xor.b32 %t1, %t1, %t0; shl.b32 %t2, %t2, 16; xor.b32 %d, %t1, %t2;",
       "u32 u32 u32", "u32"),
    # -- float ------------------------------------------------------------------------------
    _c("rcp_rn_f32", "rcp/sqrt .rn", "rcp.rn.f32 %d, %a0;", "f32", "f32"),
    _c("rcp_rn_f64", "rcp/sqrt .rn", "rcp.rn.f64 %d, %a0;", "f64", "f64"),
    _c("sqrt_rn_f32", "rcp/sqrt .rn", "sqrt.rn.f32 %d, %a0;", "f32", "f32"),
    _c("sqrt_rn_f64", "rcp/sqrt .rn", "sqrt.rn.f64 %d, %a0;", "f64", "f64"),
    _c("rcp_approx_ftz_f32", "rcp/sqrt/rsqrt .approx", "rcp.approx.ftz.f32 %d, %a0;", "f32",
       "f32", tolerance=Tolerance(ulp=1, source="PTX ISA rcp.approx.f32: max 1 ulp")),
    _c("sqrt_approx_f32", "rcp/sqrt/rsqrt .approx", "sqrt.approx.f32 %d, %a0;", "f32", "f32",
       tolerance=Tolerance(ulp=2, source="PTX ISA sqrt.approx.f32: relative error 2^-23")),
    _c("rsqrt_approx_f32", "rcp/sqrt/rsqrt .approx", "rsqrt.approx.f32 %d, %a0;", "f32", "f32",
       tolerance=Tolerance(ulp=4, source="PTX ISA rsqrt.approx.f32: max relative error 2^-22.9")),
    _c("sin_approx_f32", "sin/cos/lg2/ex2/tanh .approx", "sin.approx.f32 %d, %a0;", "f32", "f32",
       gen="angle", tolerance=Tolerance(abs=2.0 ** -19.5,
                                        source="PTX ISA sin.approx.f32: abs error 2^-20.5 in "
                                               "[-pi, pi]")),
    _c("cos_approx_f32", "sin/cos/lg2/ex2/tanh .approx", "cos.approx.f32 %d, %a0;", "f32", "f32",
       gen="angle", tolerance=Tolerance(abs=2.0 ** -19.5,
                                        source="PTX ISA cos.approx.f32: abs error 2^-20.5 in "
                                               "[-pi, pi]")),
    _c("lg2_approx_f32", "sin/cos/lg2/ex2/tanh .approx", "lg2.approx.f32 %d, %a0;", "f32", "f32",
       gen="positive", tolerance=Tolerance(ulp=4, abs=2.0 ** -21.6,
                                           source="PTX ISA lg2.approx.f32: abs error 2^-22.6 "
                                                  "(mantissa in [0.5, 2]), else 2 ulp")),
    _c("ex2_approx_f32", "sin/cos/lg2/ex2/tanh .approx", "ex2.approx.f32 %d, %a0;", "f32", "f32",
       gen="exponent", tolerance=Tolerance(ulp=4, source="PTX ISA ex2.approx.f32: max 2 ulp")),
    _c("tanh_approx_f32", "sin/cos/lg2/ex2/tanh .approx", "tanh.approx.f32 %d, %a0;", "f32",
       "f32", gen="exponent",
       tolerance=Tolerance(ulp=2 ** 13, abs=2.0 ** -10,
                           source="PTX ISA tanh.approx.f32: max relative error 2^-11")),
    *[_c(f"testp_{k}_f32", "testp", f"testp.{k}.f32 %q0, %a0; {SELP}", "f32", "u32")
      for k in ("finite", "infinite", "number", "notanumber", "normal", "subnormal")],
    _c("testp_subnormal_f64", "testp", f"testp.subnormal.f64 %q0, %a0; {SELP}", "f64", "u32"),
    _c("testp_normal_f64", "testp", f"testp.normal.f64 %q0, %a0; {SELP}", "f64", "u32"),
    _c("copysign_f32", "copysign", "copysign.f32 %d, %a0, %a1;", "f32 f32", "f32"),
    _c("min_f32", "min/max f32", "min.f32 %d, %a0, %a1;", "f32 f32", "f32", gen="pairs"),
    _c("max_f32", "min/max f32", "max.f32 %d, %a0, %a1;", "f32 f32", "f32", gen="pairs"),
    _c("min_nan_f32", "min/max .NaN", "min.NaN.f32 %d, %a0, %a1;", "f32 f32", "f32", gen="pairs"),
    _c("max_nan_f32", "min/max .NaN", "max.NaN.f32 %d, %a0, %a1;", "f32 f32", "f32", gen="pairs"),
    # -- compare and select ------------------------------------------------------------------
    _c("set_lt_u32_f32", "set", "set.lt.u32.f32 %d, %a0, %a1;", "f32 f32", "u32", gen="pairs"),
    _c("set_gtu_f32_f32", "set", "set.gtu.f32.f32 %w0, %a0, %a1; mov.b32 %d, %w0;", "f32 f32",
       "u32", gen="pairs"),
    _c("set_ne_and_s32", "set",
       "setp.ne.u32 %q1, %a2, 0; set.le.and.s32.s32 %d, %a0, %a1, %q1;", "u32 u32 u32", "u32"),
    _c("slct_s32_s32", "slct", "slct.b32.s32 %d, %a0, %a1, %a2;", "u32 u32 u32", "u32"),
    _c("slct_f32_f32", "slct", "mov.b32 %w0, %a2; slct.b32.f32 %d, %a0, %a1, %w0;", "u32 u32 u32",
       "u32", gen="float_bits"),
    # -- moves and conversions ----------------------------------------------------------------
    _c("mov_pack_b64", "mov pack/unpack", "mov.b64 %d, {%a0, %a1};", "u32 u32", "u64"),
    _c("mov_unpack_b32", "mov pack/unpack",
       "mov.b32 {%h0, %h1}, %a0; mov.b32 %d, {%h1, %h0};", "u32", "u32"),
    _c("cvt_rz_f32_f64", "cvt float narrowing .rz/.rm/.rp", "cvt.rz.f32.f64 %d, %a0;", "f64", "f32"),
    _c("cvt_rm_f32_f64", "cvt float narrowing .rz/.rm/.rp", "cvt.rm.f32.f64 %d, %a0;", "f64", "f32"),
    _c("cvt_rp_f32_f64", "cvt float narrowing .rz/.rm/.rp", "cvt.rp.f32.f64 %d, %a0;", "f64", "f32"),
    _c("cvt_rn_f16_f32", "cvt f16/bf16", "cvt.rn.f16.f32 %h0, %a0; cvt.u32.u16 %d, %h0;",
       "f32", "u32"),
    _c("cvt_rz_f16_f32", "cvt f16/bf16", "cvt.rz.f16.f32 %h0, %a0; cvt.u32.u16 %d, %h0;",
       "f32", "u32"),
    _c("cvt_rn_relu_f16_f32", "cvt f16/bf16",
       "cvt.rn.relu.f16.f32 %h0, %a0; cvt.u32.u16 %d, %h0;", "f32", "u32"),
    _c("cvt_rn_bf16_f32", "cvt f16/bf16", "cvt.rn.bf16.f32 %h0, %a0; cvt.u32.u16 %d, %h0;",
       "f32", "u32"),
    _c("cvt_f32_f16", "cvt f16/bf16", "mov.b16 %h0, %a0; cvt.f32.f16 %d, %h0;", "u16", "f32",
       gen="exhaustive16"),
    _c("cvt_rn_f16x2_f32", "cvt f16x2/bf16x2 pack", "cvt.rn.f16x2.f32 %d, %a0, %a1;",
       "f32 f32", "u32"),
    _c("cvt_rn_relu_f16x2_f32", "cvt f16x2/bf16x2 pack", "cvt.rn.relu.f16x2.f32 %d, %a0, %a1;",
       "f32 f32", "u32"),
    _c("cvt_rn_bf16x2_f32", "cvt f16x2/bf16x2 pack", "cvt.rn.bf16x2.f32 %d, %a0, %a1;",
       "f32 f32", "u32"),
    _c("cvt_rz_f32_s32", "cvt int->float .rz/.rm/.rp", "cvt.rz.f32.s32 %d, %a0;", "u32", "f32"),
    _c("cvt_rm_f32_u32", "cvt int->float .rz/.rm/.rp", "cvt.rm.f32.u32 %d, %a0;", "u32", "f32"),
    _c("cvt_rp_f32_s64", "cvt int->float .rz/.rm/.rp", "cvt.rp.f32.s64 %d, %a0;", "u64", "f32"),
    _c("cvt_rz_f64_u64", "cvt int->float .rz/.rm/.rp", "cvt.rz.f64.u64 %d, %a0;", "u64", "f64"),
    _c("cvt_sat_s8_s32", "cvt .sat int", "cvt.sat.s8.s32 %d, %a0;", "u32", "u32"),
    _c("cvt_sat_u16_s32", "cvt .sat int", "cvt.sat.u16.s32 %d, %a0;", "u32", "u32"),
    _c("cvt_sat_s32_u32", "cvt .sat int", "cvt.sat.s32.u32 %d, %a0;", "u32", "u32"),
    _c("cvt_rni_s32_f32", "cvt float->int", "cvt.rni.s32.f32 %d, %a0;", "f32", "u32"),
    # -- warp level (full warps) ----------------------------------------------------------------
    _c("vote_ballot", "vote.sync", "and.b32 %t0, %a0, 1; setp.ne.u32 %q0, %t0, 0; "
       "vote.sync.ballot.b32 %d, %q0, -1;", "u32", "u32", gen="warp"),
    _c("vote_any_all_uni", "vote.sync", "setp.ne.u32 %q0, %a0, 0; "
       "vote.sync.any.pred %q1, %q0, -1; vote.sync.all.pred %q2, %q0, -1; "
       "vote.sync.uni.pred %q3, %q0, -1; selp.u32 %t0, 1, 0, %q1; selp.u32 %t1, 2, 0, %q2; "
       "selp.u32 %t2, 4, 0, %q3; or.b32 %t0, %t0, %t1; or.b32 %d, %t0, %t2;", "u32", "u32",
       gen="warp_sparse"),
    _c("activemask", "activemask", "activemask.b32 %d;", "u32", "u32", gen="warp"),
    *[_c(f"redux_{op}_{t}", "redux.sync", f"redux.sync.{op}.{t} %d, %a0, -1;", "u32", "u32",
         gen="warp") for op, t in (("add", "u32"), ("min", "s32"), ("max", "u32"),
                                   ("and", "b32"), ("or", "b32"), ("xor", "b32"))],
    _c("match_any_b32", "match.sync", "match.any.sync.b32 %d, %a0, -1;", "u32", "u32",
       gen="warp_small"),
    _c("match_all_b32", "match.sync", f"match.all.sync.b32 %t0|%q0, %a0, -1; {SELP} "
       "xor.b32 %d, %d, %t0;", "u32", "u32", gen="warp_uniformish"),
    _c("lanemasks", "special registers", "mov.u32 %t0, %laneid; mov.u32 %t1, %lanemask_lt; "
       "mov.u32 %t2, %lanemask_ge; shl.b32 %t0, %t0, 24; xor.b32 %t1, %t1, %t2; "
       "xor.b32 %d, %t1, %t0;", "u32", "u32", gen="warp"),
    # -- calls and local memory ---------------------------------------------------------------
    _c("call_func", ".func/call",
       "{ .param .b32 param0; .param .b32 param1; st.param.b32 [param0], %a0; "
       "st.param.b32 [param1], %a1; .param .b32 retval0; "
       "call.uni (retval0), mix, (param0, param1); ld.param.b32 %d, [retval0]; }",
       "u32 u32", "u32",
       preamble=".func (.param .b32 r) mix(.param .b32 x, .param .b32 y)\n{\n"
                "\t.reg .b32 %v<4>;\n\tld.param.b32 %v0, [x];\n\tld.param.b32 %v1, [y];\n"
                "\tmul.lo.u32 %v2, %v0, 3;\n\txor.b32 %v3, %v2, %v1;\n"
                "\tst.param.b32 [r], %v3;\n\tret;\n}\n"),
    _c("local_depot", ".local", "mov.u64 %l1, depot; cvta.local.u64 %l0, %l1; "
       "st.local.u32 [%l1], %a0; st.u32 [%l0+4], %a1; and.b32 %t0, %a1, 4; "
       "cvt.u64.u32 %l2, %t0; add.u64 %l2, %l1, %l2; ld.local.u32 %d, [%l2];", "u32 u32", "u32",
       locals_=".local .align 8 .b8 depot[8];"),
]


def case(name: str) -> Case:
    return next(c for c in CASES if c.name == name)


# -- PTX text ------------------------------------------------------------------------------


def ptx(c: Case) -> str:
    regs = "\n".join(f"\t.reg .{KINDS[k][0]} %a{i};" for i, k in enumerate(c.inputs))
    loads = []
    for i, k in enumerate(c.inputs):
        size = np.dtype(KINDS[k][1]).itemsize
        loads.append(f"\tld.param.u64 %rd{i + 2}, [in{i}];\n"
                     f"\tmad.wide.u32 %rd{i + 2}, %r4, {size}, %rd{i + 2};\n"
                     f"\tld.global.{KINDS[k][0]} %a{i}, [%rd{i + 2}];")
    out_size = np.dtype(KINDS[c.output][1]).itemsize
    pre = str(c.extra.get("pre", ""))
    body = "\n".join(f"\t{s.strip()}" + ("" if s.strip() == "}" else ";")
                     for s in (pre + " " + c.body).split(";") if s.strip())
    return f""".version 8.0
.target sm_90
.address_size 64

{c.preamble}
.visible .entry k(.param .u64 out, .param .u64 in0, .param .u64 in1, .param .u64 in2,
\t.param .u32 n)
{{
{c.locals_}
\t.reg .pred %p<2>;
\t.reg .pred %q<4>;
\t.reg .b32 %r<6>;
\t.reg .b32 %t<4>;
\t.reg .f32 %w<2>;
\t.reg .b16 %h<2>;
\t.reg .b64 %rd<6>;
\t.reg .b64 %l<3>;
{regs}
\t.reg .{KINDS[c.output][0]} %d;
\tmov.u32 %r1, %ctaid.x;
\tmov.u32 %r2, %ntid.x;
\tmov.u32 %r3, %tid.x;
\tmad.lo.s32 %r4, %r1, %r2, %r3;
\tld.param.u32 %r5, [n];
\tsetp.ge.u32 %p1, %r4, %r5;
\t@%p1 bra DONE;
{chr(10).join(loads)}
{body}
\tld.param.u64 %rd1, [out];
\tmad.wide.u32 %rd1, %r4, {out_size}, %rd1;
\tst.global.{KINDS[c.output][0]} [%rd1], %d;
DONE:
\tret;
}}
"""


# -- inputs --------------------------------------------------------------------------------

U32_EDGES = [0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 0x7F,
             0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFF, 0x800000, 0xFFFFFF,
             0x1000000, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFE, 0xFFFFFFFF,
             0x55555555, 0xAAAAAAAA, 0x12345678, 0xDEADBEEF]
F32_EDGES = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
             0x7FC00001, 0x7FA00000, 0xFFBFFFFF, 0x00000001, 0x80000001, 0x007FFFFF,
             0x807FFFFF, 0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000,
             0xBF800000, 0x3F000000, 0x3FC00000, 0x40000000, 0x3F800001, 0x33800000,
             0x47800000, 0x477FE000, 0x477FF000, 0x4F000000, 0xCF000000, 0x4F800000,
             0x5F000000, 0xDF000000, 0x3EAAAAAB, 0x40490FDB, 0xC0490FDB]
F64_EDGES = [0x0000000000000000, 0x8000000000000000, 0x7FF0000000000000, 0xFFF0000000000000,
             0x7FF8000000000000, 0x7FF8000000000001, 0x7FF4000000000000, 0x0000000000000001,
             0x000FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0x3FF0000000000000,
             0xBFF0000000000000, 0x3FF0000010000000, 0x3FF0000008000000, 0x3FF0000018000000,
             0x36A0000000000000, 0x36A0000000000001, 0x3690000000000000, 0x47EFFFFFE0000000,
             0x47EFFFFFF0000000, 0x47F0000000000000, 0xC7EFFFFFF0000000, 0x380FFFFFFFFFFFFF,
             0x3810000000000000, 0x3FD5555555555555]
N_RANDOM = 4096


def _edge_grid(edges: list[int], arity: int, rng: np.random.Generator) -> list[np.ndarray]:
    e = np.array(edges, dtype=np.uint64)
    if arity == 1:
        return [e]
    if arity == 2:
        a, b = np.meshgrid(e, e, indexing="ij")
        return [a.ravel(), b.ravel()]
    return [rng.choice(e, 2048) for _ in range(arity)]


def _float_bits(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """Random floats: half random bit patterns (every class), half ordinary magnitudes."""
    if kind == "f32":
        raw = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
        nice = rng.uniform(-1e4, 1e4, n).astype(np.float32).view(np.uint32)
        out = np.where(rng.random(n) < 0.5, raw, nice)
        return out.astype(np.uint64)
    raw = rng.integers(0, 2 ** 63, n, dtype=np.uint64) * np.uint64(2) + rng.integers(
        0, 2, n, dtype=np.uint64)
    nice = rng.uniform(-1e6, 1e6, n).view(np.uint64)
    return np.where(rng.random(n) < 0.5, raw, nice)


def inputs(c: Case) -> list[np.ndarray]:
    """The input arrays of a case, each of the kind's dtype, padded to whole blocks."""
    rng = np.random.default_rng(_seed(c.name))
    arity = len(c.inputs)
    cols: list[np.ndarray]
    g = c.gen
    if g == "exhaustive16":
        cols = [np.arange(2 ** 16, dtype=np.uint64)]
    elif g.startswith("warp"):
        n = 32 * 64
        if g == "warp_small":
            cols = [rng.integers(0, 4, n, dtype=np.uint64)]
        elif g == "warp_sparse":
            warps = rng.integers(0, 3, n // 32)
            base = rng.integers(0, 2, n, dtype=np.uint64)
            cols = [np.where(np.repeat(warps, 32) == 0, 0, np.where(
                np.repeat(warps, 32) == 1, 1, base)).astype(np.uint64)]
        elif g == "warp_uniformish":
            v = np.repeat(rng.integers(0, 2 ** 32, n // 32, dtype=np.uint64), 32)
            flip = (rng.random(n) < 0.01) & np.repeat(rng.random(n // 32) < 0.5, 32)
            cols = [np.where(flip, v ^ np.uint64(1), v)]
        else:
            cols = [rng.integers(0, 2 ** 32, n, dtype=np.uint64)]
    else:
        kinds = c.inputs
        cols = []
        for i, k in enumerate(kinds):
            if k == "u16":
                cols.append(rng.integers(0, 2 ** 16, N_RANDOM, dtype=np.uint64))
            elif k == "u32":
                cols.append(rng.integers(0, 2 ** 32, N_RANDOM, dtype=np.uint64))
            elif k == "u64":
                cols.append(rng.integers(0, 2 ** 63, N_RANDOM, dtype=np.uint64) * np.uint64(2)
                            + rng.integers(0, 2, N_RANDOM, dtype=np.uint64))
            else:
                cols.append(_float_bits(k, N_RANDOM, rng))
            if g in ("fields", "shifts", "shifts2") and i > 0:
                cols[i] = rng.integers(0, 80, N_RANDOM, dtype=np.uint64)
            if g == "fields" and i == 2 and c.name == "bfi_b32":
                cols[i] = rng.integers(0, 80, N_RANDOM, dtype=np.uint64) | (
                    rng.integers(0, 80, N_RANDOM, dtype=np.uint64) << np.uint64(8))
            if g == "shifts2" and i == 0:
                cols[i] = rng.integers(0, 80, N_RANDOM, dtype=np.uint64)
        if g == "angle":
            cols[0] = np.float32(rng.uniform(-np.pi, np.pi, N_RANDOM)).view(np.uint32).astype(
                np.uint64)
        elif g == "positive":
            cols[0] = cols[0] & np.uint64(0x7FFFFFFF)
        elif g == "exponent":
            cols[0] = np.float32(rng.uniform(-30, 30, N_RANDOM)).view(np.uint32).astype(np.uint64)
        elif g == "small":
            cols[0] = np.where(rng.random(N_RANDOM) < 0.5, np.uint64(0), cols[0])
        elif g == "float_bits":
            cols[2] = _float_bits("f32", N_RANDOM, rng)
        # Edge cases, crossed for binary ops.
        edges = []
        for k in kinds:
            edges.append(F32_EDGES if k == "f32" else F64_EDGES if k == "f64" else
                         [e & 0xFFFF for e in U32_EDGES] if k == "u16" else
                         U32_EDGES + [e << 32 | e for e in U32_EDGES[-8:]] if k == "u64"
                         else U32_EDGES)
        if g not in ("angle", "exponent", "positive"):
            grid = _edge_grid(edges[0], arity, rng) if arity <= 2 and all(
                e == edges[0] for e in edges) else [np.array(rng.choice(e, 1024),
                                                             dtype=np.uint64) for e in edges]
            cols = [np.concatenate([g_, col]) for g_, col in zip(grid, cols, strict=True)]
        else:
            special = np.array(F32_EDGES[:17], dtype=np.uint64)
            cols[0] = np.concatenate([special, cols[0]])
    n = len(cols[0])
    padded = -(-n // BLOCK) * BLOCK
    out = []
    for k, col in zip(c.inputs, cols, strict=True):
        dtype = KINDS[k][1]
        bits = np.zeros(padded, dtype=np.uint64)
        bits[:n] = col
        width = np.dtype(dtype).itemsize * 8
        bits &= np.uint64((1 << width) - 1) if width < 64 else np.uint64(2 ** 64 - 1)
        int_type = {16: np.uint16, 32: np.uint32, 64: np.uint64}[width]
        out.append(bits.astype(int_type).view(dtype))
    return out


def _seed(name: str) -> int:
    h = 2166136261
    for ch in name.encode():
        h = ((h ^ ch) * 16777619) & 0xFFFFFFFF
    return h


def output_dtype(c: Case) -> type:
    return KINDS[c.output][1]


def compare(c: Case, got: np.ndarray, want: np.ndarray) -> tuple[str, int]:
    """('pass' | 'within-ulp' | 'mismatch', number of differing elements). Float NaNs compare
    equal whatever their payload (NVIDIA returns its canonical NaN; payloads are not part of
    what PTX specifies for arithmetic)."""
    if c.output in ("f32", "f64"):
        itype = np.uint32 if c.output == "f32" else np.uint64
        gb, wb = got.view(itype), want.view(itype)
        both_nan = np.isnan(got) & np.isnan(want)
        differ = (gb != wb) & ~both_nan
        if not differ.any():
            return "pass", 0
        tol = c.tolerance
        if tol is None:
            return "mismatch", int(differ.sum())
        g, w = got[differ].astype(np.float64), want[differ].astype(np.float64)
        ulp = np.spacing(np.abs(want[differ])).astype(np.float64)
        ok = (np.abs(g - w) <= tol.abs) | (np.abs(g - w) <= (tol.ulp + 1) * ulp)
        ok |= (g == w)  # +0 / -0
        return ("within-ulp" if ok.all() else "mismatch"), int((~ok).sum())
    differ = got != want
    return ("pass" if not differ.any() else "mismatch"), int(differ.sum())


def write_kernels() -> None:
    KERNELS.mkdir(exist_ok=True)
    for c in CASES:
        (KERNELS / f"{c.name}.ptx").write_text(ptx(c))


if __name__ == "__main__":
    write_kernels()
    print(f"wrote {len(CASES)} kernels to {KERNELS}")
