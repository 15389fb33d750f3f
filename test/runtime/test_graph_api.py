"""The explicit graph API's C structures and older entry points, through
ctypes against our libcuda.so.1: cuGraphAddNode's CUgraphNodeParams (memset,
host, allocation and free nodes), cuGraphNodeSetParams and
cuGraphExecNodeSetParams, cuGraphInstantiate's first signature,
cuGraphExecUpdate's first signature, cuGraphExecGetFlags and
cuGraphDebugDotPrint. The nvcc-built programs (test/cuda/programs/graph_*.cu)
cover what cudart calls."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_PROBE = r"""
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
r = {}
c_void_p, c_size_t, c_uint, c_int = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint, ctypes.c_int
HOSTFN = ctypes.CFUNCTYPE(None, c_void_p)
calls = []
host_fn = HOSTFN(lambda p: calls.append(p))

class Memset(ctypes.Structure):  # CUDA_MEMSET_NODE_PARAMS_v2
    _fields_ = [("dst", ctypes.c_uint64), ("pitch", c_size_t), ("value", c_uint),
                ("elementSize", c_uint), ("width", c_size_t), ("height", c_size_t),
                ("ctx", c_void_p)]
class Host(ctypes.Structure):
    _fields_ = [("fn", HOSTFN), ("userData", c_void_p)]
class Location(ctypes.Structure):
    _fields_ = [("type", c_int), ("id", c_int)]
class PoolProps(ctypes.Structure):
    _fields_ = [("allocType", c_int), ("handleTypes", c_int), ("location", Location),
                ("win32", c_void_p), ("maxSize", c_size_t), ("usage", ctypes.c_ushort),
                ("reserved", ctypes.c_ubyte * 54)]
class Alloc(ctypes.Structure):
    _fields_ = [("poolProps", PoolProps), ("accessDescs", c_void_p),
                ("accessDescCount", c_size_t), ("bytesize", c_size_t), ("dptr", ctypes.c_uint64)]
class Union(ctypes.Union):
    _fields_ = [("reserved1", ctypes.c_longlong * 29), ("memset", Memset), ("host", Host),
                ("alloc", Alloc), ("free", ctypes.c_uint64)]
class NodeParams(ctypes.Structure):  # CUgraphNodeParams: 256 bytes
    _fields_ = [("type", c_int), ("reserved0", c_int * 3), ("u", Union),
                ("reserved2", ctypes.c_longlong)]
assert ctypes.sizeof(NodeParams) == 256
class UpdateInfo(ctypes.Structure):
    _fields_ = [("result", c_int), ("errorNode", c_void_p), ("errorFromNode", c_void_p)]

ctx, stream, graph = c_void_p(), c_void_p(), c_void_p()
assert lib.cuInit(0) == 0
assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
assert lib.cuCtxSetCurrent(ctx) == 0
assert lib.cuStreamCreate(ctypes.byref(stream), 0) == 0
dev = ctypes.c_uint64()
assert lib.cuMemAlloc_v2(ctypes.byref(dev), 1024) == 0

def memset_params(value, width=256):
    p = NodeParams()
    p.type = 2  # CU_GRAPH_NODE_TYPE_MEMSET
    p.u.memset = Memset(dev.value, 0, value, 4, width, 1, None)
    return p

assert lib.cuGraphCreate(ctypes.byref(graph), 0) == 0
fill, host, alloc, free = c_void_p(), c_void_p(), c_void_p(), c_void_p()
p = memset_params(7)
r["add_memset"] = lib.cuGraphAddNode_v2(ctypes.byref(fill), graph, None, None, 0, ctypes.byref(p))
hp = NodeParams()
hp.type = 3  # HOST
hp.u.host = Host(host_fn, 42)
r["add_host"] = lib.cuGraphAddNode_v2(ctypes.byref(host), graph, ctypes.byref(fill), None, 1,
                                      ctypes.byref(hp))
ap = NodeParams()
ap.type = 10  # MEM_ALLOC
ap.u.alloc.poolProps.allocType = 1
ap.u.alloc.poolProps.location.type = 1
ap.u.alloc.bytesize = 4096
r["add_alloc"] = lib.cuGraphAddNode(ctypes.byref(alloc), graph, ctypes.byref(host), 1,
                                    ctypes.byref(ap))
r["alloc_address_set"] = ap.u.alloc.dptr != 0
fp = NodeParams()
fp.type = 11  # MEM_FREE
fp.u.free = ap.u.alloc.dptr
r["add_free"] = lib.cuGraphAddNode(ctypes.byref(free), graph, ctypes.byref(alloc), 1,
                                   ctypes.byref(fp))
bad = NodeParams()
bad.type = 99
r["add_bad_type"] = lib.cuGraphAddNode(ctypes.byref(c_void_p()), graph, None, 0,
                                       ctypes.byref(bad))
r["set_memset"] = lib.cuGraphNodeSetParams(fill, ctypes.byref(memset_params(9)))
r["set_wrong_type"] = lib.cuGraphNodeSetParams(host, ctypes.byref(memset_params(9)))
node_type = c_int()
lib.cuGraphNodeGetType(alloc, ctypes.byref(node_type))
r["alloc_type"] = node_type.value

exec_, log = c_void_p(), ctypes.create_string_buffer(b"x" * 16)
err_node = c_void_p(1)
r["instantiate_v1"] = lib.cuGraphInstantiate(ctypes.byref(exec_), graph, ctypes.byref(err_node),
                                             log, 16)
r["instantiate_v1_out"] = [err_node.value, log.value.decode()]
flags = ctypes.c_uint64(5)
r["get_flags"] = [lib.cuGraphExecGetFlags(exec_, ctypes.byref(flags)), flags.value]
r["launch"] = lib.cuGraphLaunch(exec_, stream)
r["sync"] = lib.cuStreamSynchronize(stream)
out = (c_uint * 256)()
lib.cuMemcpyDtoH_v2(out, dev, 1024)
r["after_launch"] = [out[0], out[255], calls == [42]]
# The instantiation's memset, changed there only; the graph keeps 9.
r["exec_set"] = lib.cuGraphExecNodeSetParams(exec_, fill, ctypes.byref(memset_params(11, 128)))
lib.cuGraphLaunch(exec_, stream)
lib.cuStreamSynchronize(stream)
lib.cuMemcpyDtoH_v2(out, dev, 1024)
r["after_exec_set"] = [out[0], out[127], out[128]]
got = Memset()
lib.cuGraphMemsetNodeGetParams(fill, ctypes.byref(got))
r["graph_memset_value"] = got.value
# cuGraphExecUpdate's first signature, from the graph itself.
node_out, result = c_void_p(1), c_int(-1)
r["update_v1"] = lib.cuGraphExecUpdate(exec_, graph, ctypes.byref(node_out), ctypes.byref(result))
r["update_v1_out"] = [node_out.value, result.value]
info = UpdateInfo()
other = c_void_p()
lib.cuGraphCreate(ctypes.byref(other), 0)
r["update_v2_other"] = lib.cuGraphExecUpdate_v2(exec_, other, ctypes.byref(info))
r["update_v2_info"] = [info.result, info.errorNode]
path = sys.argv[2]
r["dot"] = lib.cuGraphDebugDotPrint(graph, path.encode(), 0)
r["destroy_exec"] = lib.cuGraphExecDestroy(exec_)
r["destroy"] = lib.cuGraphDestroy(graph)
r["destroy_again"] = lib.cuGraphDestroy(graph)
print(json.dumps(r))
"""


def test_graph_node_params_and_first_signatures(libdir: str, tmp_path) -> None:
    pytest.importorskip("zmlir.runtime.backends.opencl.device")
    dot = tmp_path / "graph.dot"
    result = subprocess.run([sys.executable, "-c", _PROBE, libdir, str(dot)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    assert [r[k] for k in ("add_memset", "add_host", "add_alloc", "add_free")] == [0, 0, 0, 0]
    assert r["alloc_address_set"] and r["alloc_type"] == 10
    assert r["add_bad_type"] == 1  # CUDA_ERROR_INVALID_VALUE
    assert r["set_memset"] == 0 and r["set_wrong_type"] == 1
    # No error node, an empty log.
    assert r["instantiate_v1"] == 0 and r["instantiate_v1_out"] == [None, ""]
    assert r["get_flags"] == [0, 0]
    assert r["launch"] == 0 and r["sync"] == 0
    assert r["after_launch"] == [9, 9, True]
    assert r["exec_set"] == 0 and r["after_exec_set"] == [11, 11, 9]
    assert r["graph_memset_value"] == 9
    assert r["update_v1"] == 0 and r["update_v1_out"] == [None, 0]
    # CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED
    assert r["update_v2_other"] == 910 and r["update_v2_info"] == [2, None]
    assert r["dot"] == 0 and "-> n" in dot.read_text()
    assert [r["destroy_exec"], r["destroy"], r["destroy_again"]] == [0, 0, 1]


_INVALIDATE = r"""
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
c = ctypes.c_void_p
ctx, s, graph, status, d = c(), c(), c(1), ctypes.c_int(), ctypes.c_uint64()
assert lib.cuInit(0) == 0
assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
assert lib.cuCtxSetCurrent(ctx) == 0
assert lib.cuStreamCreate(ctypes.byref(s), 1) == 0
assert lib.cuMemAlloc_v2(ctypes.byref(d), 64) == 0
assert lib.cuStreamBeginCapture_v2(s, 0) == 0
r = {"sync": lib.cuStreamSynchronize(s)}
lib.cuStreamIsCapturing(s, ctypes.byref(status))
r["status"] = status.value
r["memset"] = lib.cuMemsetD8Async(d, 1, 16, s)
r["end"] = lib.cuStreamEndCapture(s, ctypes.byref(graph))
r["graph"] = graph.value
r["sync_after"] = lib.cuStreamSynchronize(s)
print(json.dumps(r))
"""


def test_synchronize_invalidates_a_capture(libdir: str) -> None:
    """A capturing stream synchronized: refused (900), the capture invalidated
    (status 2): its work and its end answer 901, the end without a graph."""
    pytest.importorskip("zmlir.runtime.backends.opencl.device")
    result = subprocess.run([sys.executable, "-c", _INVALIDATE, libdir],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    assert r == {"sync": 900, "status": 2, "memset": 901, "end": 901, "graph": None,
                 "sync_after": 0}
