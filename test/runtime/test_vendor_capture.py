"""Stream capture on NVIDIA's driver under the passthrough (fastpath.c:
stream capture), over the stand-in NVIDIA driver: a capture per iteration
of a fill, a kernel and a copy back, each turned into an update of one
executable graph (jacobiCudaGraphs' loop), is NVIDIA's capture and NVIDIA's
update from C, with the results of our own capture; the graph reads back
through our API (its nodes are NVIDIA's handles); a call of the Python path
in the middle of a capture takes it over with what was captured so far; an
application's destroyed graph whose update our copy has not taken yet
still updates it. Captures are NVIDIA's only where a capture of its own
reads back as captured (tried at the first capture)."""

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
for name in ("fake_captures", "fake_graph_exec_updates", "fake_graph_launches"):
    getattr(fake, name).restype = ctypes.c_ulonglong
c_void_p, c_uint = ctypes.c_void_p, ctypes.c_uint
HOSTFN = ctypes.CFUNCTYPE(None, c_void_p)
calls = []
host_fn = HOSTFN(lambda data: calls.append(data))
ctx, stream, fn, dev = add_scalar_setup(lib, 1)
host = (c_uint * 32)()

def launch_add(value):
    p, v = ctypes.c_uint64(dev.value), c_uint(value)
    args = (c_void_p * 2)(ctypes.addressof(p), ctypes.addressof(v))
    return lib.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, stream, args, None)

def capture(fill, add, python_call=None):
    # a fill of 32 words, add_scalar, a copy to the host; python_call in the middle
    graph = c_void_p()
    assert lib.cuStreamBeginCapture_v2(stream, 0) == 0
    assert lib.cuMemsetD32Async(dev, fill, 32, stream) == 0
    if python_call:
        python_call()
    assert launch_add(add) == 0
    assert lib.cuMemcpyDtoHAsync_v2(host, dev, 128, stream) == 0
    assert lib.cuStreamEndCapture(stream, ctypes.byref(graph)) == 0
    return graph

def run(exe):
    host[:] = [99] * 32
    assert lib.cuGraphLaunch(exe, stream) == 0 and lib.cuStreamSynchronize(stream) == 0
    return sorted(set(host))

r = {}
assert launch_add(0) == 0 and lib.cuStreamSynchronize(stream) == 0  # add_scalar is C's now
before = {n: getattr(fake, n)() for n in ("fake_captures", "fake_graph_exec_updates",
                                          "fake_graph_launches")}
graph = capture(1, 5)
exe = c_void_p()
assert lib.cuGraphInstantiateWithFlags(ctypes.byref(exe), graph, 0) == 0
r["first"] = run(exe)
info = (ctypes.c_char * 24)()
r["updated"] = []
for k in range(4):
    newer = capture(2 + k, 10)
    if k == 1:  # the first form
        error_node, result = c_void_p(1), ctypes.c_int(-1)
        assert lib.cuGraphExecUpdate(exe, newer, ctypes.byref(error_node),
                                     ctypes.byref(result)) == 0
        assert (error_node.value, result.value) == (None, 0)
    else:
        assert lib.cuGraphExecUpdate_v2(exe, newer, info) == 0
    if k == 2:  # destroyed before our copy took its update: NVIDIA's graph waits for it
        assert lib.cuGraphDestroy(newer) == 0
    r["updated"].append(run(exe))
r["counts"] = {n: getattr(fake, n)() - v for n, v in before.items()}
# Our copy took NVIDIA's updates: a fill's new value through our API keeps the
# kernel's last arguments (10).
fill_node = (c_void_p * 3)()
n = ctypes.c_size_t(3)
assert lib.cuGraphGetNodes(newer, fill_node, ctypes.byref(n)) == 0
kind = ctypes.c_int(-1)
assert lib.cuGraphNodeGetType(c_void_p(fill_node[0]), ctypes.byref(kind)) == 0
r["read_back"] = [n.value, kind.value, [fill_node[i] == 0 for i in range(3)].count(True)]
class Memset(ctypes.Structure):
    _fields_ = [("dst", ctypes.c_uint64), ("pitch", ctypes.c_size_t), ("value", c_uint),
                ("elementSize", c_uint), ("width", ctypes.c_size_t), ("height", ctypes.c_size_t)]
first_node = (c_void_p * 3)()
n = ctypes.c_size_t(3)
assert lib.cuGraphGetNodes(graph, first_node, ctypes.byref(n)) == 0
assert lib.cuGraphExecMemsetNodeSetParams(exe, c_void_p(first_node[0]),
                                          ctypes.byref(Memset(dev.value, 0, 40, 4, 32, 1)),
                                          ctx) == 0
r["set_after_updates"] = run(exe)
# A call of the Python path in the middle (a host function): the capture
# goes on as ours, with the fill NVIDIA captured.
status = ctypes.c_int(-1)
captured_graph = c_void_p()
def python_call():
    assert lib.cuLaunchHostFunc(stream, host_fn, None) == 0
    assert lib.cuStreamGetCaptureInfo_v2(stream, ctypes.byref(status), None,
                                         ctypes.byref(captured_graph), None, None) == 0
mixed = capture(7, 1, python_call)
r["mixed_same_graph"] = [status.value, captured_graph.value == mixed.value]
n = ctypes.c_size_t(0)
assert lib.cuGraphGetNodes(mixed, None, ctypes.byref(n)) == 0
r["mixed_nodes"] = n.value
exe2 = c_void_p()
assert lib.cuGraphInstantiateWithFlags(ctypes.byref(exe2), mixed, 0) == 0
r["mixed"] = run(exe2)
r["host_calls"] = len(calls)
print(json.dumps(r))
"""


def _run(libdir: str, fake_nvidia_driver: Path, **extra: str) -> dict[str, Any]:
    return run_probe(_PROBE, libdir, str(fake_nvidia_driver), str(TEST_DIR),
                     ZMLIR_BACKEND="cuda", ZMLIR_CUDA_DRIVER=str(fake_nvidia_driver), **extra)


def test_captures_are_nvidias(libdir: str, fake_nvidia_driver: Path) -> None:
    ours = _run(libdir, fake_nvidia_driver)
    assert ours["first"] == [6]
    assert ours["updated"] == [[12], [13], [14], [15]]
    # Every capture NVIDIA's after its try at the first (6: the try, 5 of
    # ours), every update NVIDIA's from C, every launch NVIDIA's graph.
    assert ours["counts"] == {"fake_captures": 6, "fake_graph_exec_updates": 4,
                              "fake_graph_launches": 5}
    assert ours["read_back"] == [3, 2, 0]  # three nodes, the first a memset
    assert ours["set_after_updates"] == [50]
    assert ours["mixed_same_graph"] == [1, True]  # ACTIVE, the graph it then ended as
    assert ours["mixed_nodes"] == 4 and ours["mixed"] == [8] and ours["host_calls"] == 1


def test_our_capture_gives_the_same_results(libdir: str, fake_nvidia_driver: Path) -> None:
    ours = _run(libdir, fake_nvidia_driver)
    theirs = _run(libdir, fake_nvidia_driver, ZMLIR_VENDOR_CAPTURE="0")
    assert theirs.pop("counts") == {"fake_captures": 0, "fake_graph_exec_updates": 0,
                                    "fake_graph_launches": 5}
    ours.pop("counts")
    assert theirs == ours


def test_captures_that_do_not_read_back_stay_ours(libdir: str,
                                                  fake_nvidia_driver: Path) -> None:
    ours = _run(libdir, fake_nvidia_driver)
    mangled = _run(libdir, fake_nvidia_driver, FAKE_CAPTURE_MANGLED="1")
    # NVIDIA's driver captured once: the try at the first capture.
    assert mangled.pop("counts") == {"fake_captures": 1, "fake_graph_exec_updates": 0,
                                     "fake_graph_launches": 5}
    ours.pop("counts")
    assert mangled == ours
