"""Writes docs/fidelity.md from the PTX fidelity results.

  python3 tools/fidelity_table.py [NVPTX_JSON]

Reads build/fidelity/*.json (written by `pytest test/fidelity/test_ptx_fidelity.py`: per target
the compile status of every case, and `spirv-cpu.json` and `host-cpu.json` with the comparisons
against the H200 golden data; `spirv-cpu-reference.json`, written by
`pytest test/fidelity/test_ptx_reference.py`, with the comparisons against numpy references of
the cases that have no golden data yet)
and the nvptx.json that tools/capture_golden.py wrote on the H200 (default: the committed
test/ptx/golden/nvptx-h200.json). One row per instruction family, one column per target; a
cell counts the family's variants by status: pass (bit-exact; NaN payloads not compared),
within-ulp (an .approx op within its documented bound), ref-pass / ref-within-ulp /
ref-mismatch (the same against the numpy reference, while there is no golden data),
unsupported (rejected at compile time with a diagnostic), error (the compiler or a runtime
failed without a diagnostic), mismatch, fixed-unverified (an NVPTX mismatch of that
capture fixed since, see FIXED_SINCE_CAPTURE), and pending (compiles, but nothing to compare
with yet).
"""

from __future__ import annotations

import json
import sys
from collections import Counter, OrderedDict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "build" / "fidelity"
sys.path.insert(0, str(REPO / "test"))

from ptx import spec  # noqa: E402

ORDER = ("pass", "within-ulp", "ref-pass", "ref-within-ulp", "unsupported", "error",
         "mismatch", "ref-mismatch", "fixed-unverified", "pending", "missing")
NVPTX_CAPTURE = REPO / "test" / "ptx" / "golden" / "nvptx-h200.json"
# NVPTX mismatches of the H200 capture that were fixed after it: the fix, by case. They
# count as fixed-unverified (and stay listed with the capture's verdict) only while the
# capture still says mismatch; a new capture (tools/capture_golden.py --nvptx) decides.
FIXED_SINCE_CAPTURE = {
    "bfe_s64": "64-bit bfe takes position and length unmasked, as the H200 does",
    "dp2a_hi_u32_u32": "the importer dropped `.hi` (read as a comparison), so the low "
                       "bytes of b were used",
    "testp_normal_f32": "+-0 counts as normal, as on the H200",
    "cvt_rn_relu_f16x2_f32": ".relu maps -0 to +0",
    "cvt_rn_bf16x2_f32": "NaN gives the canonical bf16 NaN 0x7fff (our integer rounding "
                         "kept the payload)",
    "local_depot": "NVPTX allocas in the generic space, cast to local (LLVM 22 selected an "
                   "addrspace(5) alloca as the generic %SP)",
}


def _load(name: str) -> dict[str, dict[str, str]]:
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else {}


def _cell(statuses: list[str]) -> str:
    counts = Counter(statuses)
    return ", ".join(f"{s} {counts[s]}" for s in ORDER if counts[s]) or "-"


def main() -> None:
    spirv_compile = _load("spirv.json")
    spirv_cpu = _load("spirv-cpu.json")
    spirv_ref = _load("spirv-cpu-reference.json")
    host_compile = _load("host.json")
    host_cpu = _load("host-cpu.json")
    amd = [_load("amdgpu-gfx1100.json"), _load("amdgpu-gfx942.json")]
    nv_compile = _load("nvptx-sm_90.json")
    nv_h200: dict[str, dict[str, str]] = {}
    device = ""
    capture = Path(sys.argv[1]) if len(sys.argv) > 1 else NVPTX_CAPTURE
    if capture.exists():
        data = json.loads(capture.read_text())
        nv_h200, device = data["cases"], data.get("device", "")

    def spirv_status(name: str) -> str:
        if name in spirv_cpu:
            return spirv_cpu[name]["status"]
        if name in spirv_ref:
            s = spirv_ref[name]["status"]
            return f"ref-{s}" if s in ("pass", "within-ulp", "mismatch") else s
        compiled = spirv_compile.get(name, {}).get("status")
        return compiled if compiled in ("unsupported", "error") else (
            "pending" if compiled else "missing")

    def host_status(name: str) -> str:
        if name in host_cpu:
            return host_cpu[name]["status"]
        compiled = host_compile.get(name, {}).get("status")
        return compiled if compiled in ("unsupported", "error") else (
            "pending" if compiled else "missing")

    def nvptx_status(name: str) -> str:
        if name in nv_h200:
            s = nv_h200[name]["status"]
            s = s if s in ORDER else "error"  # "error: ..." (the kernel failed)
            if s == "unsupported" and nv_compile.get(name, {}).get("status") == "error":
                return "error"  # the capture took a compiler failure for a diagnostic
            return "fixed-unverified" if s == "mismatch" and name in FIXED_SINCE_CAPTURE else s
        compiled = nv_compile.get(name, {}).get("status")
        return compiled if compiled in ("unsupported", "error") else (
            "pending" if compiled else "missing")

    def amd_status(name: str) -> str:
        statuses = [a.get(name, {}).get("status") for a in amd]
        if any(s is None for s in statuses):
            return "missing"
        if all(s == "compiles" for s in statuses):
            return "pass"
        return "error" if "error" in statuses else "unsupported"

    families: OrderedDict[str, list[spec.Case]] = OrderedDict()
    for c in spec.CASES:
        families.setdefault(c.family, []).append(c)
    lines = [
        "# PTX instruction fidelity",
        "",
        "Generated by `tools/fidelity_table.py` from `test/fidelity/test_ptx_fidelity.py` and the H200",
        "capture (`tools/capture_golden.py`); do not edit by hand. Each row is one instruction",
        "family of `test/ptx/spec.py`; a cell counts its variants by status. SPIR-V-CPU runs on",
        "Intel's OpenCL CPU runtime, Host-CPU is the host target (x86-64, CUDA threads as",
        "fibers), both compared with the H200's outputs (those of cvt.pack, ldmatrix and",
        "mma.sync captured on an H100, sm_90 as well); NVPTX-H200 is zmlir's NVPTX output run",
        "on the H200.",
        "",
        "- **pass**: bit-exact with the H200 (NaN payloads are not compared: NVIDIA returns its",
        "  canonical NaN, the CPU quiets signalling NaNs); for AMDGPU: compiles for gfx1100",
        "  (wave32) and gfx942 (wave64), nothing is run.",
        "- **within-ulp**: an `.approx` op within the error bound the PTX ISA states for it",
        "  (the bound is in each case's `Tolerance`).",
        "- **unsupported**: rejected at compile time with `file:line:col: ... unsupported ...`.",
        "- **ref-pass**, **ref-within-ulp**, **ref-mismatch**: SPIR-V-CPU only, for cases",
        "  without H200 golden data yet: the same verdicts against the numpy reference of",
        "  `test/fidelity/test_ptx_reference.py` (what the PTX ISA specifies, computed exactly).",
        "- **error**: the compiler (LLVM), the OpenCL or host runtime or the CUDA driver failed",
        "  without a diagnostic (a defect: it should be a result or an `unsupported`",
        "  diagnostic); listed below.",
        "- **mismatch**: a result differs; every mismatch is listed below the table.",
        "- **fixed-unverified**: NVPTX only: a mismatch in the H200 capture that has been",
        "  fixed since (checked against the golden data through the shared lowering on",
        "  SPIR-V-CPU, and by reading the NVPTX output), not yet re-run on the H200; listed",
        "  below with the capture's verdict and the fix.",
        "- **pending**: compiles, but there is no H200 golden data to compare with yet.",
        "",
        "16-bit float results are compared bit for bit, NaNs included: NVIDIA converts",
        "every NaN to the canonical `0x7fff` and so do we.",
        "",
        f"H200 results: {device or 'not captured yet'}.",
        "",
        "| family | variants | SPIR-V-CPU | Host-CPU | NVPTX-H200 | AMDGPU-compiles |",
        "|---|---|---|---|---|---|",
    ]
    totals: dict[str, Counter[str]] = {"spirv": Counter(), "host": Counter(),
                                       "nvptx": Counter(), "amd": Counter()}
    mismatches = []
    for family, cases in families.items():
        s = [spirv_status(c.name) for c in cases]
        h = [host_status(c.name) for c in cases]
        n = [nvptx_status(c.name) for c in cases]
        a = [amd_status(c.name) for c in cases]
        totals["spirv"].update(s)
        totals["host"].update(h)
        totals["nvptx"].update(n)
        totals["amd"].update(a)
        names = ", ".join(f"`{c.name}`" for c in cases)
        lines.append(f"| {family} | {names} | {_cell(s)} | {_cell(h)} | {_cell(n)} | {_cell(a)} |")
        for c, ss, hh, nn, aa in zip(cases, s, h, n, a, strict=True):
            if ss in ("mismatch", "ref-mismatch", "error"):
                source = spirv_cpu if c.name in spirv_cpu else spirv_ref
                detail = source.get(c.name, {}).get("detail", "") or \
                    spirv_compile.get(c.name, {}).get("detail", "")
                against = " (against the numpy reference)" if ss == "ref-mismatch" else ""
                mismatches.append(f"- `{c.name}` on SPIR-V-CPU{against}, {ss}: {detail}")
            if hh in ("mismatch", "error"):
                detail = host_cpu.get(c.name, {}).get("detail", "") or \
                    host_compile.get(c.name, {}).get("detail", "")
                mismatches.append(f"- `{c.name}` on Host-CPU, {hh}: {detail}")
            if aa == "error":
                detail = next((x[c.name].get("detail", "") for x in amd
                               if x.get(c.name, {}).get("status") == "error"), "")
                mismatches.append(f"- `{c.name}` on AMDGPU: error: {detail}")
            if nn == "error" and c.name not in nv_h200:
                mismatches.append(f"- `{c.name}` on NVPTX: error: "
                                  f"{nv_compile.get(c.name, {}).get('detail', '')}")
            if nn in ("mismatch", "fixed-unverified", "error") and c.name in nv_h200:
                v = nv_h200[c.name]
                what = str(v["status"]) + (f", {v['differing']} of {v['n']} differ"
                                           if int(v.get("differing", 0)) > 0 else "")
                line = f"- `{c.name}` on NVPTX-H200: {what}"
                if nn == "fixed-unverified":
                    line += f". Fixed since: {FIXED_SINCE_CAPTURE[c.name]}; not yet re-run " \
                            "on the H200"
                mismatches.append(line)
    lines += ["", "Totals over all variants:", ""]
    for key, label in (("spirv", "SPIR-V-CPU"), ("host", "Host-CPU"), ("nvptx", "NVPTX-H200"),
                       ("amd", "AMDGPU")):
        lines.append(f"- {label}: {_cell(list(totals[key].elements()))}")
    lines += ["", "## Mismatches", ""] + (mismatches or ["None."])
    out = REPO / "docs" / "fidelity.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
