"""`zmlir report --perfetto out.json trace.jsonl`: a Chrome trace-event file
(https://ui.perfetto.dev, chrome://tracing).

Each traced process is one Perfetto process: its API calls are slices on the
thread that made them ("X" events, args decoded as in the trace). Kernel
launches, copies and memsets are also drawn on one track per stream ("stream
0x1020", "stream 0 (legacy)"): the slice spans the API call that enqueued the
work, which is the work itself on zmlir's synchronous CPU backend but only
the enqueue on NVIDIA's driver (the trace records no device timestamps).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from zmlir.trace.records import Trace, normalize

_STREAM_TRACKS_TID = 1 << 30  # synthetic thread ids for the stream tracks
_SYNC_APIS = re.compile(r"^cu(Memcpy|Memset)")


def _work(call: Any) -> tuple[str, str] | None:
    """(stream, label) when the call enqueues device work."""
    api = normalize(call.api)
    args = call.args
    if api in ("cuLaunchKernel", "cuLaunchKernelEx"):
        stream = args.get("hStream") or (args.get("config") or {}).get("hStream") or "0x0"
        label = args.get("kernel") or f"kernel {args.get('f')}"
        return stream, label
    if _SYNC_APIS.match(api):
        stream = args.get("hStream", "0x0")
        size = args.get("byteCount", args.get("n"))
        return stream, f"{api.removeprefix('cu')} {size}" if size is not None else api
    return None


def _stream_name(stream: str) -> str:
    return {"0x0": "stream 0 (legacy)", "0x1": "stream legacy", "0x2": "stream per-thread"}.get(
        stream, f"stream {stream}")


def events(trace: Trace, pid: int) -> list[dict[str, Any]]:
    header = trace.header or {}
    argv = " ".join(header.get("argv") or []) or Path(trace.path).name
    out: list[dict[str, Any]] = [
        {"ph": "M", "name": "process_name", "pid": pid,
         "args": {"name": f"{argv} [{header.get('driver', '?')} driver]"}}]
    threads: set[int] = set()
    streams: dict[str, int] = {}
    for call in trace.calls:
        if call.tid not in threads:
            threads.add(call.tid)
            out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": call.tid,
                        "args": {"name": f"thread {call.tid}"}})
        out.append({"ph": "X", "name": call.api, "cat": "api", "pid": pid, "tid": call.tid,
                    "ts": call.t, "dur": max(call.dur, 0.001),
                    "args": {"seq": call.seq, "result": call.result_name or call.result,
                             **call.args}})
        work = _work(call)
        if work is None or call.result not in (0, None):
            continue
        stream, label = work
        tid = streams.get(stream)
        if tid is None:
            tid = streams[stream] = _STREAM_TRACKS_TID + len(streams)
            out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                        "args": {"name": _stream_name(stream)}})
            out.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                        "args": {"sort_index": 1000 + len(streams)}})
        out.append({"ph": "X", "name": label, "cat": "device", "pid": pid, "tid": tid,
                    "ts": call.t, "dur": max(call.dur, 0.001),
                    "args": {"seq": call.seq, "api": call.api}})
    return out


def write(traces: list[Trace], path: str) -> None:
    all_events: list[dict[str, Any]] = []
    for i, trace in enumerate(traces):
        pid = (trace.header or {}).get("pid") or i + 1
        all_events.extend(events(trace, int(pid) if isinstance(pid, int) else i + 1))
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"traceEvents": all_events, "displayTimeUnit": "ns"}, f)
