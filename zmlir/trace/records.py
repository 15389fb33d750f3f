"""A trace file as data: its calls (Call), the whole file (Trace, from
load) and normalize, which names one request across ABI versions. The
report (report.py) and the Perfetto export (perfetto.py) both read traces
through here; the format is written by tracer.py."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any


@dataclass
class Call:
    line: int
    seq: int
    api: str
    result: int | None
    result_name: str | None
    dur: float
    t: float
    tid: int
    args: dict[str, Any]


@dataclass
class Trace:
    path: str
    header: dict[str, Any] | None = None
    calls: list[Call] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    malformed: list[tuple[int, str]] = field(default_factory=list)


def load(path: str | Path) -> Trace:
    """Reads a trace; bad lines go to .malformed as (line number, why)."""
    trace = Trace(str(path))
    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            text = raw.decode("utf-8", "replace").strip()
            if not text:
                continue
            try:
                record = json.loads(text)
            except ValueError as err:
                trace.malformed.append((number, f"not JSON ({err.msg} at column {err.colno})"))
                continue
            if not isinstance(record, dict):
                trace.malformed.append((number, f"not a JSON object ({type(record).__name__})"))
                continue
            if "trace" in record and "api" not in record:
                if trace.header is None:
                    trace.header = record
                continue
            if "event" in record and "api" not in record:
                trace.events.append(record)
                continue
            call = _call(number, record)
            if isinstance(call, str):
                trace.malformed.append((number, call))
            else:
                trace.calls.append(call)
    trace.calls.sort(key=lambda c: c.seq)
    return trace


def _call(number: int, r: dict[str, Any]) -> Call | str:
    api = r.get("api")
    if not isinstance(api, str) or not api:
        return "no 'api' name"
    seq = r.get("seq")
    if not isinstance(seq, int) or isinstance(seq, bool):
        return f"{api}: 'seq' is not an integer"
    result = r.get("result")
    if result is not None and (not isinstance(result, int) or isinstance(result, bool)):
        return f"{api}: 'result' is not an integer"
    num = {}
    for key in ("dur", "t"):
        value = r.get(key, 0.0)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return f"{api}: '{key}' is not a number"
        num[key] = float(value)
    args = r.get("args", {})
    tid = r.get("tid", 0)
    return Call(number, seq, api, result, r.get("result_name") if isinstance(
        r.get("result_name"), str) else None, num["dur"], num["t"],
        tid if isinstance(tid, int) else 0, args if isinstance(args, dict) else {})


@cache  # a trace names a few hundred APIs in up to millions of calls
def normalize(api: str) -> str:
    """cuMemcpyAsync_v2_ptsz -> cuMemcpyAsync: the same request across ABI versions."""
    api = re.sub(r"_(ptds|ptsz)$", "", api)
    return re.sub(r"_v\d+$", "", api)
