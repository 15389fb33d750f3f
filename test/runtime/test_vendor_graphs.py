"""Executable graphs replayed as NVIDIA's under the passthrough
(graph/vendor.py), over the stand-in NVIDIA driver: a graph of a fill, a
kernel, a copy to the host, a host function and an empty node (or a child
graph) is one
cuGraphLaunch of NVIDIA's (the first through Python, the next from
fastpath.c) with the results of our replay; a kernel node's new parameters
reach NVIDIA's node (from C, and our copy after), as do a fill's and an
update's (of the nodes it changed); a disabled node, a refused instantiation or the C path
off give our replay, with the same results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from support import TEST_DIR, run_probe

_PROBE = r"""
import ctypes, json, sys
sys.path.insert(0, sys.argv[3])
from support import add_scalar_setup
lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
fake = ctypes.CDLL(sys.argv[2])
lib.zmlir_fast_launches.restype = ctypes.c_ulonglong
fake.fake_graph_launches.restype = ctypes.c_ulonglong
fake.fake_graph_exec_sets.restype = ctypes.c_ulonglong
c_void_p, c_size_t, c_uint, c_int = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int
HOSTFN = ctypes.CFUNCTYPE(None, c_void_p)
calls = []
host_fn = HOSTFN(lambda data: calls.append(data))

class Kernel(ctypes.Structure):  # CUDA_KERNEL_NODE_PARAMS
    _fields_ = [("func", c_void_p), ("grid", c_uint * 3), ("block", c_uint * 3),
                ("shared", c_uint), ("params", ctypes.POINTER(c_void_p)), ("extra", c_void_p)]
class KernelV2(ctypes.Structure):  # CUDA_KERNEL_NODE_PARAMS_v2
    _fields_ = [("v1", Kernel), ("kern", c_void_p), ("ctx", c_void_p)]
class Memset(ctypes.Structure):  # CUDA_MEMSET_NODE_PARAMS
    _fields_ = [("dst", ctypes.c_uint64), ("pitch", c_size_t), ("value", c_uint),
                ("elementSize", c_uint), ("width", c_size_t), ("height", c_size_t)]
class Host(ctypes.Structure):
    _fields_ = [("fn", HOSTFN), ("userData", c_void_p)]
class Copy(ctypes.Structure):  # CUDA_MEMCPY3D
    _fields_ = [("srcX", c_size_t), ("srcY", c_size_t), ("srcZ", c_size_t), ("srcLOD", c_size_t),
                ("srcType", c_int), ("srcHost", c_void_p), ("srcDevice", ctypes.c_uint64),
                ("srcArray", c_void_p), ("reserved0", c_void_p), ("srcPitch", c_size_t),
                ("srcHeight", c_size_t),
                ("dstX", c_size_t), ("dstY", c_size_t), ("dstZ", c_size_t), ("dstLOD", c_size_t),
                ("dstType", c_int), ("dstHost", c_void_p), ("dstDevice", ctypes.c_uint64),
                ("dstArray", c_void_p), ("reserved1", c_void_p), ("dstPitch", c_size_t),
                ("dstHeight", c_size_t),
                ("width", c_size_t), ("height", c_size_t), ("depth", c_size_t)]

ctx, stream, fn, dev = add_scalar_setup(lib, 0)
graph = c_void_p()
host = (c_uint * 32)()

def kernel_params(value):
    p, v = ctypes.c_uint64(dev.value), c_uint(value)
    args = (c_void_p * 2)(ctypes.addressof(p), ctypes.addressof(v))
    k = Kernel(fn, (1, 1, 1), (32, 1, 1), 0, args, None)
    k.keep = (p, v, args)
    return k

def deps(*nodes):
    return (c_void_p * len(nodes))(*[n.value for n in nodes]), len(nodes)

def build(graph, fill_value, add_value):
    # a fill of each of 32 words, add_scalar, a copy to the host, a host function, empty
    def node(add, *args):
        out = c_void_p()
        assert add(ctypes.byref(out), graph, *args) == 0, add
        return out
    assert lib.cuGraphCreate(ctypes.byref(graph), 0) == 0
    fill = node(lib.cuGraphAddMemsetNode, None, 0,
                ctypes.byref(Memset(dev.value, 0, fill_value, 4, 32, 1)), ctx)
    add = node(lib.cuGraphAddKernelNode, *deps(fill), ctypes.byref(kernel_params(add_value)))
    copy = Copy(srcType=2, srcDevice=dev.value, dstType=1, dstHost=ctypes.addressof(host),
                width=128, height=1, depth=1)
    back = node(lib.cuGraphAddMemcpyNode, *deps(add), ctypes.byref(copy), ctx)
    told = node(lib.cuGraphAddHostNode, *deps(back), ctypes.byref(Host(host_fn, 7)))
    node(lib.cuGraphAddEmptyNode, *deps(told))
    return fill, add

fill, add = build(graph, 1, 5)
exe = c_void_p()
assert lib.cuGraphInstantiateWithFlags(ctypes.byref(exe), graph, 0) == 0

r = {}
def launch(name, times=1):
    host[:] = [99] * 32
    before, vendor = lib.zmlir_fast_launches(), fake.fake_graph_launches()
    codes = [lib.cuGraphLaunch(exe, stream) for _ in range(times)]
    codes.append(lib.cuStreamSynchronize(stream))
    r[name] = {"codes": codes, "values": sorted(set(host)), "fast": lib.zmlir_fast_launches() - before,
               "nvidia": fake.fake_graph_launches() - vendor, "live": fake.fake_graph_execs_live()}

lib.zmlir_fast_queries.restype = ctypes.c_ulonglong
def set_params(setter, params):
    before = lib.zmlir_fast_queries()
    assert setter(exe, add, ctypes.byref(params)) == 0
    return lib.zmlir_fast_queries() - before

launch("first", 3)
r["set_fast"] = [set_params(lib.cuGraphExecKernelNodeSetParams, kernel_params(7))]
launch("new_params")
k = kernel_params(9)
r["set_fast"].append(set_params(lib.cuGraphExecKernelNodeSetParams_v2, KernelV2(k)))
launch("new_params_v2")
# A node's parameters set again and again before a launch stay in C (its
# record for our copy is replaced, the journal does not fill): the last win.
r["set_many"] = sum(set_params(lib.cuGraphExecKernelNodeSetParams, kernel_params(v))
                    for v in [*range(100, 199), 9])
launch("set_many_launch")
assert lib.cuGraphNodeSetEnabled(exe, add, 0) == 0
launch("disabled")
assert lib.cuGraphNodeSetEnabled(exe, add, 1) == 0
launch("enabled")
assert lib.cuGraphExecMemsetNodeSetParams(exe, fill, ctypes.byref(Memset(dev.value, 0, 2, 4, 32, 1)),
                                          ctx) == 0
launch("new_fill")
newer = c_void_p()
build(newer, 3, 20)
info = (ctypes.c_char * 24)()
sets = fake.fake_graph_exec_sets()
r["update"] = lib.cuGraphExecUpdate_v2(exe, newer, info)
r["update_sets"] = fake.fake_graph_exec_sets() - sets
launch("updated")
assert lib.cuGraphExecDestroy(exe) == 0
r["destroyed_live"] = fake.fake_graph_execs_live()

# A child graph (add_scalar 4) between a fill and the copy back.
body, outer = c_void_p(), c_void_p()
assert lib.cuGraphCreate(ctypes.byref(body), 0) == 0
step = c_void_p()
assert lib.cuGraphAddKernelNode(ctypes.byref(step), body, None, 0,
                                ctypes.byref(kernel_params(4))) == 0
assert lib.cuGraphCreate(ctypes.byref(outer), 0) == 0
first, child, last = c_void_p(), c_void_p(), c_void_p()
assert lib.cuGraphAddMemsetNode(ctypes.byref(first), outer, None, 0,
                                ctypes.byref(Memset(dev.value, 0, 1, 4, 32, 1)), ctx) == 0
assert lib.cuGraphAddChildGraphNode(ctypes.byref(child), outer, *deps(first), body) == 0
copy = Copy(srcType=2, srcDevice=dev.value, dstType=1, dstHost=ctypes.addressof(host),
            width=128, height=1, depth=1)
assert lib.cuGraphAddMemcpyNode(ctypes.byref(last), outer, *deps(child), ctypes.byref(copy),
                                ctx) == 0
assert lib.cuGraphInstantiateWithFlags(ctypes.byref(exe), outer, 0) == 0
launch("child", 2)
r["host_calls"] = len(calls)
print(json.dumps(r))
"""


def _run(libdir: str, fake_nvidia_driver: Path, **extra: str) -> dict[str, Any]:
    return run_probe(_PROBE, libdir, str(fake_nvidia_driver), str(TEST_DIR),
                     ZMLIR_BACKEND="cuda", ZMLIR_CUDA_DRIVER=str(fake_nvidia_driver), **extra)


def _values(r: dict[str, Any]) -> dict[str, Any]:
    return {k: (v["codes"], v["values"]) if isinstance(v, dict) else v for k, v in r.items()}


def test_graphs_replay_as_nvidias(libdir: str, fake_nvidia_driver: Path) -> None:
    ours = _run(libdir, fake_nvidia_driver)
    assert ours["first"] == {"codes": [0] * 4, "values": [6], "fast": 2, "nvidia": 3, "live": 1}
    # New kernel parameters went to NVIDIA's node from C (v1 and v2): the same
    # instantiation.
    assert ours["set_fast"] == [1, 1]
    assert ours["new_params"] == {"codes": [0, 0], "values": [8], "fast": 1, "nvidia": 1,
                                  "live": 1}
    assert ours["new_params_v2"] == {"codes": [0, 0], "values": [10], "fast": 1, "nvidia": 1,
                                     "live": 1}
    # A disabled node: NVIDIA's copy went, ours replayed (the fill alone), then
    # NVIDIA's built again from our copy, which took the C path's parameters.
    assert ours["set_many"] == 100
    assert ours["set_many_launch"] == {"codes": [0, 0], "values": [10], "fast": 1, "nvidia": 1,
                                       "live": 1}
    assert ours["disabled"] == {"codes": [0, 0], "values": [1], "fast": 0, "nvidia": 0,
                                "live": 0}
    assert ours["enabled"] == {"codes": [0, 0], "values": [10], "fast": 0, "nvidia": 1,
                               "live": 1}
    # A fill's new value and an update from a graph of the same shape: NVIDIA's
    # nodes take them, the same instantiation.
    assert ours["new_fill"] == {"codes": [0, 0], "values": [11], "fast": 1, "nvidia": 1,
                                "live": 1}
    assert ours["update"] == 0
    assert ours["update_sets"] == 2  # the fill's and the kernel's: the rest did not change
    assert ours["updated"] == {"codes": [0, 0], "values": [23], "fast": 1, "nvidia": 1,
                               "live": 1}
    assert ours["destroyed_live"] == 0 and ours["host_calls"] == 10
    assert ours["child"] == {"codes": [0, 0, 0], "values": [5], "fast": 1, "nvidia": 2,
                             "live": 1}


def test_our_replay_gives_the_same_results(libdir: str, fake_nvidia_driver: Path) -> None:
    ours = _run(libdir, fake_nvidia_driver)
    assert ours.pop("set_fast") == [1, 1]
    ours.pop("update_sets")
    assert ours.pop("set_many") == 100
    refused = _run(libdir, fake_nvidia_driver, FAKE_REFUSE_GRAPHS="1")
    assert {v["nvidia"] for v in refused.values() if isinstance(v, dict)} == {0}
    assert (refused.pop("set_fast"), refused.pop("update_sets")) == ([0, 0], 0)
    assert refused.pop("set_many") == 0
    assert _values(refused) == _values(ours)
    slow = _run(libdir, fake_nvidia_driver, ZMLIR_FAST_LAUNCH="0")
    assert {v["fast"] for v in slow.values() if isinstance(v, dict)} == {0}
    assert slow.pop("set_fast") == [0, 0]
    assert slow.pop("update_sets") == 2
    assert slow.pop("set_many") == 0
    assert slow["first"]["nvidia"] == 3  # NVIDIA's graph, launched from Python
    assert _values(slow) == _values(ours)
