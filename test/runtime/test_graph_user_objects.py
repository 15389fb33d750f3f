"""User objects (cuUserObject*): the references graphs and their
instantiations hold, as cuda.core's graph builder keeps a graph's kernel
arguments alive; the destructor runs once, when the last reference goes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

_PROBE = r"""
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
r, destroyed = {}, []
DESTROY = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
destroy = DESTROY(lambda p: destroyed.append(p))
def log(what):
    r[what] = list(destroyed)
ctx, stream, graph, exec_ = (ctypes.c_void_p() for _ in range(4))
assert lib.cuInit(0) == 0
assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
assert lib.cuCtxSetCurrent(ctx) == 0
assert lib.cuStreamCreate(ctypes.byref(stream), 0) == 0
assert lib.cuStreamBeginCapture_v2(stream, 2) == 0
status, during = ctypes.c_int(), ctypes.c_void_p()
r["info"] = lib.cuStreamGetCaptureInfo_v3(stream, ctypes.byref(status), None,
                                          ctypes.byref(during), None, None, None)
assert lib.cuStreamEndCapture(stream, ctypes.byref(graph)) == 0
r["same_graph"] = during.value == graph.value and status.value == 1
obj = ctypes.c_void_p()
r["no_sync_flag"] = lib.cuUserObjectCreate(ctypes.byref(obj), ctypes.c_void_p(7), destroy, 1, 0)
assert lib.cuUserObjectCreate(ctypes.byref(obj), ctypes.c_void_p(7), destroy, 1, 1) == 0
# The creator's reference moves to the graph; the instance takes its own.
r["move"] = lib.cuGraphRetainUserObject(graph, obj, 1, 1)
class Params(ctypes.Structure):  # CUDA_GRAPH_INSTANTIATE_PARAMS
    _fields_ = [("flags", ctypes.c_uint64), ("upload", ctypes.c_void_p),
                ("err_node", ctypes.c_void_p), ("result", ctypes.c_int)]
params = Params(2, stream, ctypes.c_void_p(1), 7)  # CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD
r["instantiate"] = lib.cuGraphInstantiateWithParams(ctypes.byref(exec_), graph,
                                                    ctypes.byref(params))
r["instantiate_out"] = [params.err_node, params.result]
r["graph_destroy"] = lib.cuGraphDestroy(graph)
log("after_graph_destroy")
r["exec_destroy"] = lib.cuGraphExecDestroy(exec_)
log("after_exec_destroy")
r["retain_gone"] = lib.cuUserObjectRetain(obj, 1)
obj2 = ctypes.c_void_p()
assert lib.cuUserObjectCreate(ctypes.byref(obj2), ctypes.c_void_p(9), destroy, 2, 1) == 0
r["release_one"] = lib.cuUserObjectRelease(obj2, 1)
log("after_release_one")
r["release_last"] = lib.cuUserObjectRelease(obj2, 1)
log("after_release_last")
print(json.dumps(r))
"""


def test_user_objects_of_a_captured_graph(libdir: str) -> None:
    pytest.importorskip("zmlir.runtime.backends.opencl.device")
    result = subprocess.run([sys.executable, "-c", _PROBE, libdir], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    # cuStreamGetCaptureInfo gives the graph being captured: the one EndCapture returns.
    assert r["info"] == 0 and r["same_graph"]
    assert r["no_sync_flag"] == 1  # CU_USER_OBJECT_NO_DESTRUCTOR_SYNC is required
    assert [r["move"], r["instantiate"], r["graph_destroy"], r["exec_destroy"]] == [0, 0, 0, 0]
    assert r["instantiate_out"] == [None, 0]  # no error node, CUDA_GRAPH_INSTANTIATE_SUCCESS
    assert r["after_graph_destroy"] == []  # the instance still holds it
    assert r["after_exec_destroy"] == [7]
    assert r["retain_gone"] == 400  # CUDA_ERROR_INVALID_HANDLE: destroyed
    assert r["release_one"] == 0 and r["after_release_one"] == [7]
    assert r["release_last"] == 0 and r["after_release_last"] == [7, 9]
