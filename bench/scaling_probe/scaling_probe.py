"""Where the stream pool's time goes, and what the machine allows.

Run on the many-core host (the H200 machine: 16 cores), next to
bench/parse_bench.py's scaling runs:

    python3 bench/scaling_probe/scaling_probe.py --module M.ptx [--big B.ptx] --out P.json

- compute: N processes of a pure-Python loop at once, the machine's own
  scaling for CPU-bound Python and so the pool's ceiling (on the H200 host,
  16 copies finish 8.1x faster than one, not 16x:
  bench/results/h200/scaling_probe_compute.json);
- churn, ceiling: N processes allocating objects, or each importing the
  module alone, at once;
- pool: `import_streamed(jobs=N)` with each worker's initializer and
  batches timed (sitecustomize.py here patches the frontend in every
  process this starts) and the main process's steps marked.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent

COMPUTE = """
import time, resource
c0 = time.process_time(); t0 = time.monotonic()
x = 0
for i in range(25_000_000):
    x = (x + i * 7) & 0xffff
print(time.process_time() - c0, time.monotonic() - t0)
"""
CHURN = """
import time, gc
gc.disable()
c0 = time.process_time(); t0 = time.monotonic()
for r in range(60):
    objs = [(i, str(i), {"a": i}) for i in range(50_000)]
    del objs
print(time.process_time() - c0, time.monotonic() - t0)
"""
IMPORT1 = """
import sys, time, resource
from zmlir.frontend.stream import import_streamed
text = open(sys.argv[1]).read()
c0 = time.process_time(); t0 = time.monotonic()
assert import_streamed(text, "big.ptx", jobs=1) is not None
r = resource.getrusage(resource.RUSAGE_SELF)
print(time.process_time() - c0, time.monotonic() - t0, r.ru_minflt, r.ru_nivcsw)
"""
POOL = """
import sys, time, resource, json, multiprocessing
from zmlir.frontend import pool, stream
if sys.argv[3] in ("fork", "forkserver"):
    class _M:
        forkserver = multiprocessing.forkserver
        @staticmethod
        def get_context(_):
            ctx = multiprocessing.get_context(sys.argv[3])
            if sys.argv[3] == "forkserver":
                ctx.set_forkserver_preload(["zmlir.frontend.stream"])
            return ctx
    pool.multiprocessing = _M
MARKS = {}
def _mark(name):
    MARKS[name] = time.monotonic()
def _wrap(owner, attr, before=None, after=None, gen=False):
    orig = getattr(owner, attr)
    if gen:
        def f(*a, **k):
            first = True
            for x in orig(*a, **k):
                if first:
                    _mark(attr + ":first"); first = False
                yield x
            _mark(attr + ":end")
    else:
        def f(*a, **k):
            if before: _mark(before)
            r = orig(*a, **k)
            if after: _mark(after)
            return r
    setattr(owner, attr, f)
_wrap(pool.Workers, "split", "split:start", "split:end")
_wrap(pool.Workers, "submit", None, "workers:submitted")
_wrap(pool.Workers, "module_part", None, "module_part:got")
_wrap(pool.Workers, "results", gen=True)
_wrap(pool.Workers, "close", "close:start", "close:end")
def main():
    text = open(sys.argv[1]).read()
    jobs = int(sys.argv[2])
    c0 = time.process_time(); t0 = time.monotonic()
    assert stream.import_streamed(text, "big.ptx", jobs=jobs) is not None
    t1 = time.monotonic()
    s = resource.getrusage(resource.RUSAGE_SELF); c = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(json.dumps({"t0": t0, "t1": t1, "main_cpu": time.process_time() - c0,
                      "marks": {k: v - t0 for k, v in MARKS.items()},
                      "kids_cpu": c.ru_utime + c.ru_stime, "kids_minflt": c.ru_minflt,
                      "main_minflt": s.ru_minflt}))
if __name__ == "__main__":
    main()
"""


def env(probe_dir=None, nolazy=False):
    e = dict(os.environ)
    if nolazy:
        e["ZMLIR_PROBE_NOLAZY"] = "1"
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), str(REPO), e.get("PYTHONPATH")]))
    if probe_dir:
        e["ZMLIR_PROBE_DIR"] = probe_dir
    return e


def concurrent(code, n, args=()):
    t0 = time.monotonic()
    procs = [subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                              text=True, env=env()) for _ in range(n)]
    outs = [p.communicate()[0].split() for p in procs]
    wall = time.monotonic() - t0
    return {"n": n, "wall": wall, "per_proc": [[float(x) for x in o] for o in outs]}


def pool(path, jobs, method="spawn"):
    d = tempfile.mkdtemp()
    nolazy = method.endswith("-nolazy")
    method = method.removesuffix("-nolazy")
    p = subprocess.run([sys.executable, "-c", POOL, str(path), str(jobs), method],
                       capture_output=True, text=True, env=env(d, nolazy))
    if p.returncode:
        raise RuntimeError(p.stderr)
    main = json.loads(p.stdout.splitlines()[-1])
    workers = []
    for f in sorted(Path(d).glob("*.jsonl")):
        recs = [json.loads(x) for x in f.read_text().splitlines()]
        init = [r for r in recs if r["kind"] == "init"]
        work = [r for r in recs if r["kind"] == "work"]
        segs = [r for r in recs if r["kind"] == "split"]
        parts = [r for r in recs if r["kind"] == "part"]
        if not work and not init:
            continue
        workers.append({
            "init_wall": init[0]["t1"] - init[0]["t0"] if init else None,
            "init_cpu": init[0]["cpu"] if init else None,
            "proc_cpu_at_init_end": init[0]["proc_cpu"] if init else None,
            "init_end": (init[0]["t1"] - main["t0"]) if init else None,
            "split_wall": sum(r["t1"] - r["t0"] for r in segs),
            "split_end": max((r["t1"] for r in segs), default=main["t0"]) - main["t0"],
            "parts": len(parts), "parts_wall": sum(r["t1"] - r["t0"] for r in parts),
            "batches": len(work), "bytes": sum(r["bytes"] for r in work),
            "work_cpu": sum(r["cpu"] for r in work),
            "work_wall": sum(r["t1"] - r["t0"] for r in work),
            "last_end": max((r["t1"] for r in work), default=main["t0"]) - main["t0"],
            "minflt": recs[-1]["minflt"], "nivcsw": recs[-1]["nivcsw"],
        })
    wall = main["t1"] - main["t0"]
    return {"jobs": jobs, "method": method + ("-nolazy" if nolazy else ""), "wall": wall, "main": main, "workers": workers}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--module", type=Path, required=True)
    ap.add_argument("--big", type=Path)
    ap.add_argument("--ns", default="1,2,4,8,16")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--skip", default="")
    ap.add_argument("--methods", default="default-nolazy")
    a = ap.parse_args()
    ns = [int(x) for x in a.ns.split(",")]
    skip = set(a.skip.split(","))
    res = {"lscpu": subprocess.run(["lscpu"], capture_output=True, text=True).stdout}
    print(res["lscpu"], flush=True)

    def save():
        a.out.write_text(json.dumps(res, indent=1))

    for name, code in (("compute", COMPUTE), ("churn", CHURN)):
        if name in skip:
            continue
        res[name] = [concurrent(code, n) for n in ns]
        for r in res[name]:
            cpus = [p[0] for p in r["per_proc"]]
            print(f"{name} n={r['n']}: wall {r['wall']:.2f} cpu/proc mean "
                  f"{sum(cpus)/len(cpus):.2f} max {max(cpus):.2f}", flush=True)
        save()
    if "ceiling" not in skip:
        res["ceiling"] = [concurrent(IMPORT1, n, (str(a.module),)) for n in ns]
        for r in res["ceiling"]:
            cpus = [p[0] for p in r["per_proc"]]
            print(f"ceiling n={r['n']}: wall {r['wall']:.2f} cpu/proc mean "
                  f"{sum(cpus)/len(cpus):.2f} minflt {r['per_proc'][0][2]:.0f}", flush=True)
        save()
    res["pool"] = []
    methods = [m for m in a.methods.split(",") if m]
    runs = [(a.module, j, "default") for j in ns if "pool" not in skip]
    runs += [(a.module, 16, m) for m in methods]
    if a.big:
        runs += [(a.big, j, "default") for j in ns]
        runs += [(a.big, 16, m) for m in methods]
    for path, j, m in runs:
        r = pool(path, j, m)
        r["module"] = path.name
        res["pool"].append(r)
        w = r["workers"]
        if w:
            print(f"pool {path.name} jobs={j} {m}: wall {r['wall']:.2f} main cpu "
                  f"{r['main']['main_cpu']:.2f} kids cpu {r['main']['kids_cpu']:.1f} "
                  f"work cpu {sum(x['work_cpu'] for x in w):.1f} "
                  f"init cpu {sum(x['init_cpu'] or 0 for x in w):.1f} "
                  f"split end max {max(x['split_end'] for x in w):.2f} "
                  f"init end max {max(x['init_end'] or 0 for x in w):.2f} "
                  f"last end max {max(x['last_end'] for x in w):.2f} "
                  f"busy/worker {sum(x['work_wall'] for x in w)/len(w):.2f} "
                  f"parts/worker {sum(x['parts_wall'] for x in w)/len(w):.2f}", flush=True)
            print("   marks " + " ".join(f"{k}={v:.2f}" for k, v in r["main"]["marks"].items()))
        else:
            print(f"pool {path.name} jobs={j}: wall {r['wall']:.2f} cpu "
                  f"{r['main']['main_cpu']:.2f}", flush=True)
        save()


if __name__ == "__main__":
    main()
