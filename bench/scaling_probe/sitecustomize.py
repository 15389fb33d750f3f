"""Per-process timing of the stream pool (probe only): ZMLIR_PROBE_DIR set.
Patches zmlir.frontend.pool when it is imported (not before: a spawned
worker reads its start-up data first)."""
import os
import sys

_DIR = os.environ.get("ZMLIR_PROBE_DIR")


def _patch(pool):
    import json
    import resource
    import time

    from zmlir.frontend import split

    _orig_load, _orig_task, _orig_split = (pool._worker_context, pool._task,
                                           pool._split_segment)
    if os.environ.get("ZMLIR_PROBE_NOLAZY"):  # no chunks found: module texts parsed whole
        pool.chunks = split.chunks = lambda *args: None

    def _rec(kind, t0, c0, extra=None):
        r = resource.getrusage(resource.RUSAGE_SELF)
        with open(os.path.join(_DIR, f"{os.getpid()}.jsonl"), "a") as f:
            f.write(json.dumps({"kind": kind, "t0": t0, "t1": time.monotonic(),
                                "cpu": time.process_time() - c0, "minflt": r.ru_minflt,
                                "nvcsw": r.ru_nvcsw, "nivcsw": r.ru_nivcsw,
                                **(extra or {})}) + "\n")

    def _load(source):  # the worker's context: recorded when it is loaded
        t0, c0 = time.monotonic(), time.process_time()
        before = pool._WORKER
        out = _orig_load(source)
        if pool._WORKER is not before:
            _rec("init", t0, c0, {"proc_cpu": time.process_time()})
        return out

    def _task(source, method, *a):
        t0, c0 = time.monotonic(), time.process_time()
        out = _orig_task(source, method, *a)
        if method is pool._batch:
            _rec("work", t0, c0, {"bytes": sum(e - s for s, e, _, _ in a[0].spans)})
        elif method is pool.ImportContext.module_part:
            _rec("part", t0, c0)
        return out

    def _split_segment(*a):
        t0, c0 = time.monotonic(), time.process_time()
        out = _orig_split(*a)
        _rec("split", t0, c0, {"bytes": a[2] - a[1]})
        return out

    for f, name in ((_load, "_worker_context"), (_task, "_task"),
                    (_split_segment, "_split_segment")):
        f.__module__, f.__qualname__ = "zmlir.frontend.pool", name
    pool._worker_context, pool._task, pool._split_segment = _load, _task, _split_segment

if _DIR:
    import importlib.abc
    import importlib.util

    class _Hook(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "zmlir.frontend.pool":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                _patch(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _Hook())
