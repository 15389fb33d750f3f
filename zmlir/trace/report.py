"""`zmlir report trace.jsonl`: what an application asked of the driver.

Totals (calls, distinct APIs), per-API counts and time, the APIs that
returned CUDA_ERROR_NOT_SUPPORTED or failed, and the first failing call; with
--compare B.jsonl, where two traces of the same program diverge (e.g. NVIDIA's
driver under `zmlir trace` against zmlir's).

A failure is a call whose result is neither CUDA_SUCCESS nor one of the
answers that are part of normal operation: CUDA_ERROR_NOT_READY from
cuStreamQuery/cuEventQuery, and CUDA_ERROR_NOT_FOUND from cuGetProcAddress
(the runtime probes for entry points the driver may not have). Those still
count under "non-success results". The names a program looked up with
cuGetProcAddress and did not get are listed apart ("looked up, not found"):
a program that needs one stops for want of it without a failing call.

Some failing calls are probes that libraries make on every run and do
without (PROBES: cudart's and NVRTC's requests for export tables, cudart's
context-local storage lookups before it stored anything, cuda.core asking
whether a context is current and counting a kernel's parameters); they are
counted apart and skipped, so that "first failing call" names the first
real failure.

Lines that are not valid trace records are reported with their line number
and skipped; they never stop the report.
"""

from __future__ import annotations

import difflib
import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from zmlir.runtime.cuda.export_tables import TABLES
from zmlir.trace.records import Call, Trace, load, normalize

NOT_SUPPORTED = 801
_BENIGN = {("cuStreamQuery", 600), ("cuEventQuery", 600), ("cuGetProcAddress", 500),
           ("cuGetProcAddress_v2", 500)}


def is_failure(call: Call) -> bool:
    return call.result not in (None, 0) and (call.api, call.result) not in _BENIGN


# Export tables libraries ask for on every run and do without when refused.
_PROBED_TABLES = {
    # cudart, before cuInit: success would skip its own initialization.
    "f8cff951-2146-8b4e-b9e2-fb469e7c0dd9": "cudart's start-up probe",
    # NVRTC and nvJitLink 13.x, as they compile.
    "da9151d3-3ae6-cc41-a5c0-4f26d533e328": "NVRTC's probe",
}
PROBES = {
    "cuGetExportTable": "an export table a library probes for and does without",
    "export_table:CONTEXT_LOCAL_STORAGE:2": "cudart's lookup of a value it has not stored yet",
    "cuCtxGetDevice": "asked before any context was made current (is one current?)",
    "cuKernelGetParamInfo": "the index past the last parameter (how many are there?)",
    "cuFuncGetParamInfo": "the index past the last parameter (how many are there?)",
}
_MAKES_CONTEXT_CURRENT = ("cuCtxSetCurrent", "cuCtxPushCurrent", "cuCtxCreate")
# cudart's tools hooks (the export tables marked optional): a slot we give no
# body answers NOT_SUPPORTED, on every run and at exit, and cudart goes on.
_OPTIONAL_SLOTS = tuple(f"export_table:{t.name}:" for t in TABLES if t.optional)


class _Probes:
    """Tells the failing calls that are PROBES, from what came before them."""

    def __init__(self) -> None:
        self.context_current = False
        self.param_counts: set[tuple[str, str, int]] = set()  # (api, kernel, index) answered

    def see(self, call: Call) -> None:
        api = normalize(call.api)
        if call.result == 0 and api.startswith(_MAKES_CONTEXT_CURRENT):
            self.context_current = True
        if call.result == 0 and api in ("cuKernelGetParamInfo", "cuFuncGetParamInfo"):
            self.param_counts.add((api, str(_kernel_of(call)), call.args.get("paramIndex", -1)))

    def is_probe(self, call: Call) -> bool:
        api = normalize(call.api)
        if api.startswith(_OPTIONAL_SLOTS):
            return call.result == NOT_SUPPORTED
        if api not in PROBES:
            return False
        if api == "cuGetExportTable":
            return str(call.args.get("pExportTableId", "")).lower() in _PROBED_TABLES
        if api == "export_table:CONTEXT_LOCAL_STORAGE:2":
            return call.result == 400  # CUDA_ERROR_INVALID_HANDLE: no such key
        if api == "cuCtxGetDevice":
            return call.result == 201 and not self.context_current  # INVALID_CONTEXT
        if api in ("cuKernelGetParamInfo", "cuFuncGetParamInfo") and call.result == 1:
            index = call.args.get("paramIndex")
            return isinstance(index, int) and (
                index == 0 or (api, str(_kernel_of(call)), index - 1) in self.param_counts)
        return False


def _kernel_of(call: Call) -> object:
    return call.args.get("kernel", call.args.get("func"))


def _looked_up(call: Call) -> str | None:
    """The name a cuGetProcAddress call asked for and did not get, else None
    (cudart's empty-name probe asks for nothing)."""
    if normalize(call.api) != "cuGetProcAddress" or call.result != 500:
        return None
    symbol = call.args.get("symbol")
    return symbol if isinstance(symbol, str) and symbol else None


@dataclass
class Summary:
    calls: int
    distinct_apis: int
    per_api: dict[str, dict[str, Any]]
    not_supported: list[str]
    failed: dict[str, dict[str, int]]  # api -> result name -> count
    first_failure: dict[str, Any] | None
    first_non_success: dict[str, Any] | None
    not_found: list[str]  # names looked up with cuGetProcAddress and not got, in order
    first_not_found: dict[str, Any] | None
    probes: dict[str, int]  # failing calls skipped as PROBES, by API
    malformed: list[tuple[int, str]]
    total_time_us: float
    header: dict[str, Any] | None

    def as_json(self) -> dict[str, Any]:
        return {"calls": self.calls, "distinct_apis": self.distinct_apis,
                "total_time_us": round(self.total_time_us, 3), "per_api": self.per_api,
                "not_supported": self.not_supported, "failed": self.failed,
                "first_failure": self.first_failure,
                "first_non_success": self.first_non_success,
                "not_found": self.not_found, "first_not_found": self.first_not_found,
                "probes": self.probes,
                "malformed": [{"line": n, "error": e} for n, e in self.malformed],
                "header": self.header}


def _where(index: int, call: Call) -> dict[str, Any]:
    keys = _KEY_ARGS.get(normalize(call.api), ())
    return {"index": index, "seq": call.seq, "line": call.line, "api": call.api,
            "result": call.result, "result_name": call.result_name,
            "args": {k: call.args[k] for k in keys if k in call.args}}


def summarize(trace: Trace) -> Summary:
    per_api: dict[str, dict[str, Any]] = {}
    failed: dict[str, Counter[str]] = defaultdict(Counter)
    not_supported: list[str] = []
    not_found: list[str] = []
    probes: Counter[str] = Counter()
    seen = _Probes()
    first_failure = first_non_success = first_not_found = None
    for index, call in enumerate(trace.calls):
        entry = per_api.setdefault(call.api, {"count": 0, "time_us": 0.0, "errors": 0})
        entry["count"] += 1
        entry["time_us"] += call.dur
        if call.result not in (None, 0):
            if first_non_success is None:
                first_non_success = _where(index, call)
            if call.result == NOT_SUPPORTED and call.api not in not_supported:
                not_supported.append(call.api)
            missing = _looked_up(call)
            if missing is not None and missing not in not_found:
                not_found.append(missing)
                if first_not_found is None:
                    first_not_found = {**_where(index, call), "symbol": missing,
                                       "cudaVersion": call.args.get("cudaVersion")}
            if seen.is_probe(call):
                probes[call.api] += 1
            elif is_failure(call):
                entry["errors"] += 1
                failed[call.api][call.result_name or str(call.result)] += 1
                if first_failure is None:
                    first_failure = _where(index, call)
        seen.see(call)
    for entry in per_api.values():
        entry["time_us"] = round(entry["time_us"], 3)
    return Summary(len(trace.calls), len(per_api), per_api, not_supported,
                   {api: dict(c) for api, c in failed.items()}, first_failure,
                   first_non_success, not_found, first_not_found, dict(probes),
                   trace.malformed, sum(c.dur for c in trace.calls), trace.header)


def format_summary(s: Summary, path: str, top: int | None = None) -> str:
    lines = [f"{path}: {s.calls} calls across {s.distinct_apis} APIs, "
             f"{s.total_time_us / 1000:.3f} ms in the driver"]
    if s.header:
        lines.append(f"  driver: {s.header.get('driver')}, program: "
                     f"{' '.join(s.header.get('argv') or [])}")
    if s.first_failure:
        f = s.first_failure
        shown = f" {json.dumps(f['args'])}" if f["args"] else ""
        lines.append(f"  first failing call: #{f['index']} (seq {f['seq']}, line {f['line']}) "
                     f"{f['api']}{shown} -> {f['result_name'] or f['result']}")
    elif s.first_not_found:
        f = s.first_not_found
        lines.append(f"  no failing call; first entry point looked up and not found: "
                     f"#{f['index']} (seq {f['seq']}, line {f['line']}) {f['symbol']} "
                     f"(CUDA {f['cudaVersion']})")
    else:
        lines.append("  no failing call")
    if s.not_found:
        lines.append(f"  looked up with cuGetProcAddress, not found ({len(s.not_found)}): "
                     + ", ".join(s.not_found))
    if s.probes:
        lines.append(f"  skipped {sum(s.probes.values())} failing probes libraries do without: "
                     + ", ".join(f"{api} x{n}" for api, n in s.probes.items()))
    if s.not_supported:
        lines.append(f"  CUDA_ERROR_NOT_SUPPORTED from {len(s.not_supported)} APIs: "
                     + ", ".join(s.not_supported))
    if s.failed:
        lines.append("  failed:")
        for api, results in sorted(s.failed.items()):
            lines.append(f"    {api}: " + ", ".join(f"{r} x{n}" for r, n in results.items()))
    lines.append(f"  {'API':<48} {'calls':>7} {'time (us)':>12} {'errors':>7}")
    rows = sorted(s.per_api.items(), key=lambda kv: (-kv[1]["count"], kv[0]))
    for api, e in rows[:top] if top else rows:
        lines.append(f"  {api:<48} {e['count']:>7} {e['time_us']:>12.1f} {e['errors']:>7}")
    if top and len(rows) > top:
        lines.append(f"  ... {len(rows) - top} more APIs")
    for number, why in s.malformed:
        lines.append(f"  malformed line {number}: {why}")
    return "\n".join(lines)


# -- comparison -------------------------------------------------------------------------


_KEY_ARGS = {"cuLaunchKernel": ("kernel", "grid", "block", "sharedMemBytes"),
             "cuMemAlloc": ("bytesize",), "cuMemcpyHtoD": ("byteCount",),
             "cuMemcpyDtoH": ("byteCount",), "cuMemcpyHtoDAsync": ("byteCount",),
             "cuMemcpyDtoHAsync": ("byteCount",), "cuGetProcAddress": ("symbol",),
             "cuGetExportTable": ("pExportTableId",), "cuModuleGetFunction": ("name",),
             "cuLibraryGetKernel": ("name",)}


def call_key(call: Call, with_args: bool = True,
             resultless: frozenset[str] = frozenset()) -> tuple[Any, ...]:
    """What must match for two calls to count as the same request (APIs in
    `resultless` are compared without their result)."""
    api = normalize(call.api)
    extra = tuple(json.dumps(call.args.get(a), sort_keys=True)
                  for a in _KEY_ARGS.get(api, ())) if with_args else ()
    return (api, None if api in resultless else call.result, *extra)


def _describe(call: Call) -> str:
    keys = _KEY_ARGS.get(normalize(call.api), ())
    shown = {k: call.args.get(k) for k in keys if k in call.args}
    extra = f" {json.dumps(shown)}" if shown else ""
    return f"{call.api}{extra} -> {call.result_name or call.result}"


@dataclass
class Comparison:
    a: Trace
    b: Trace
    diverge_at: int | None  # index of the first differing call; None when equal
    context: list[str]
    opcodes: list[tuple[str, int, int, int, int]]
    only_a: list[str]
    only_b: list[str]
    count_diff: dict[str, tuple[int, int]]

    def as_json(self) -> dict[str, Any]:
        return {"a": self.a.path, "b": self.b.path, "calls": [len(self.a.calls), len(self.b.calls)],
                "diverge_at": self.diverge_at, "only_a": self.only_a, "only_b": self.only_b,
                "count_diff": {k: list(v) for k, v in self.count_diff.items()},
                "edits": [list(op) for op in self.opcodes if op[0] != "equal"]}


def compare(a: Trace, b: Trace, *, with_args: bool = True, context: int = 3) -> Comparison:
    # Calls the interposer saw only on entry have no result: compare those APIs by name.
    resultless = frozenset(normalize(c.api) for c in a.calls + b.calls if c.result is None)
    ka = [call_key(c, with_args, resultless) for c in a.calls]
    kb = [call_key(c, with_args, resultless) for c in b.calls]
    diverge = next((i for i, (x, y) in enumerate(zip(ka, kb, strict=False)) if x != y), None)
    if diverge is None and len(ka) != len(kb):
        diverge = min(len(ka), len(kb))
    lines: list[str] = []
    if diverge is not None:
        lo = max(diverge - context, 0)
        for i in range(lo, diverge + context + 1):
            left = _describe(a.calls[i]) if i < len(a.calls) else "(end of trace)"
            right = _describe(b.calls[i]) if i < len(b.calls) else "(end of trace)"
            mark = ">>" if i == diverge else "  "
            lines.append(f"{mark} #{i:<6} A: {left}")
            lines.append(f"   {'':<7} B: {right}")
    matcher = difflib.SequenceMatcher(None, ka, kb, autojunk=False)
    apis_a = Counter(normalize(c.api) for c in a.calls)
    apis_b = Counter(normalize(c.api) for c in b.calls)
    return Comparison(a, b, diverge, lines, matcher.get_opcodes(),
                      sorted(set(apis_a) - set(apis_b)), sorted(set(apis_b) - set(apis_a)),
                      {k: (apis_a[k], apis_b[k]) for k in sorted(set(apis_a) | set(apis_b))
                       if apis_a[k] != apis_b[k]})


def format_comparison(c: Comparison, limit: int = 20) -> str:
    out = [f"A: {c.a.path} ({len(c.a.calls)} calls)", f"B: {c.b.path} ({len(c.b.calls)} calls)"]
    if c.diverge_at is None:
        out.append("the traces make the same calls with the same results")
        return "\n".join(out)
    out.append(f"first divergence at call #{c.diverge_at}:")
    out.extend("  " + line for line in c.context)
    edits = [op for op in c.opcodes if op[0] != "equal"]
    same = sum(i2 - i1 for tag, i1, i2, _, _ in c.opcodes if tag == "equal")
    out.append(f"{same} calls match in order; {len(edits)} differing stretches:")
    for tag, i1, i2, j1, j2 in edits[:limit]:
        left = ", ".join(_describe(x) for x in c.a.calls[i1:min(i2, i1 + 3)])
        right = ", ".join(_describe(x) for x in c.b.calls[j1:min(j2, j1 + 3)])
        more_l = " ..." if i2 - i1 > 3 else ""
        more_r = " ..." if j2 - j1 > 3 else ""
        out.append(f"  {tag:<7} A[{i1}:{i2}] {left}{more_l}")
        out.append(f"  {'':<7} B[{j1}:{j2}] {right}{more_r}")
    if len(edits) > limit:
        out.append(f"  ... {len(edits) - limit} more")
    if c.only_a:
        out.append("APIs only in A: " + ", ".join(c.only_a))
    if c.only_b:
        out.append("APIs only in B: " + ", ".join(c.only_b))
    if c.count_diff:
        out.append("call counts that differ (A, B): " + ", ".join(
            f"{k} {a}/{b}" for k, (a, b) in c.count_diff.items()))
    return "\n".join(out)


def main(paths: list[str], compare_with: str | None = None, as_json: bool = False,
         perfetto: str | None = None, top: int | None = None, exact: bool = False) -> int:
    import sys

    if not paths:
        print("zmlir report: no trace given", file=sys.stderr)
        return 2
    traces = []
    for p in paths:
        try:
            traces.append(load(p))
        except OSError as err:
            print(f"zmlir report: cannot read {p}: {err.strerror or err}", file=sys.stderr)
            return 1
    if perfetto:
        from zmlir.trace.perfetto import write

        write(traces, perfetto)
    outputs: dict[str, Any] = {}
    for trace in traces:
        s = summarize(trace)
        if as_json:
            outputs[trace.path] = s.as_json()
        else:
            print(format_summary(s, trace.path, top))
    if compare_with:
        try:
            other = load(compare_with)
        except OSError as err:
            print(f"zmlir report: cannot read {compare_with}: {err.strerror or err}",
                  file=sys.stderr)
            return 1
        comparison = compare(traces[0], other, with_args=exact)
        if as_json:
            outputs["compare"] = comparison.as_json()
        else:
            print()
            print(format_comparison(comparison))
    if as_json:
        print(json.dumps(outputs, indent=1))
    if perfetto and not as_json:
        print(f"perfetto trace written to {perfetto} (open it in https://ui.perfetto.dev)")
    return 0
