"""A kernel's register ceiling reaches CU_FUNC_ATTRIBUTE_NUM_REGS: the PTX
`.maxnreg` on an entry, CU_JIT_MAX_REGISTERS given to cuModuleLoadDataEx,
cuLinkCreate or cuLinkAddData (nvJitLink's -maxrregcount:
test_jit_libraries.py). numba-cuda's `cuda.jit(max_registers=N)` reads it back
(issue 15)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from zmlir.frontend.link import with_register_ceiling
from zmlir.runtime.cuda.attributes import DEFAULT_NUM_REGS

pytest.importorskip("zmlir.runtime.backends.opencl.device")

_PTX = textwrap.dedent("""\
    .version 8.0
    .target sm_80
    .address_size 64
    // .entry in_a_comment() .maxnreg 8 {
    .visible .entry free()
    {
      ret;
    }
    .visible .entry bounded()
    .maxnreg 16
    {
      ret;
    }
""")

_PROBE = textwrap.dedent("""
    import ctypes, json, sys
    lib = ctypes.CDLL(sys.argv[1] + "/libcuda.so.1")
    ptx = sys.argv[2].encode()
    ctx = ctypes.c_void_p()
    assert lib.cuInit(0) == 0
    assert lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    assert lib.cuCtxSetCurrent(ctx) == 0
    MAX_REGISTERS = 0  # CUjit_option CU_JIT_MAX_REGISTERS

    def ceiling(n):  # (count, options, values) of one CU_JIT_MAX_REGISTERS option
        return 1, (ctypes.c_int * 1)(MAX_REGISTERS), (ctypes.c_void_p * 1)(n)

    def num_regs(module):
        out = {}
        for name in ("free", "bounded"):
            f, value = ctypes.c_void_p(), ctypes.c_int(-1)
            assert lib.cuModuleGetFunction(ctypes.byref(f), module, name.encode()) == 0
            assert lib.cuFuncGetAttribute(ctypes.byref(value), 4, f) == 0  # NUM_REGS
            out[name] = value.value
        return out

    r = {}
    module = ctypes.c_void_p()
    assert lib.cuModuleLoadData(ctypes.byref(module), ptx) == 0
    r["plain"] = num_regs(module)
    assert lib.cuModuleLoadDataEx(ctypes.byref(module), ptx, *ceiling(20)) == 0
    r["load_option_20"] = num_regs(module)

    def linked(create_ceiling, add_ceiling):
        state, image, size = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_size_t()
        assert lib.cuLinkCreate_v2(*ceiling(create_ceiling), ctypes.byref(state)) == 0
        assert lib.cuLinkAddData_v2(state, 1, ptx, len(ptx), b"k.ptx",
                                    *ceiling(add_ceiling)) == 0  # CU_JIT_INPUT_PTX
        assert lib.cuLinkComplete(state, ctypes.byref(image), ctypes.byref(size)) == 0
        assert lib.cuModuleLoadData(ctypes.byref(module), image) == 0
        assert lib.cuLinkDestroy(state) == 0
        return num_regs(module)

    r["link_create_24"] = linked(24, 0)
    r["link_add_12"] = linked(0, 12)
    print(json.dumps(r))
""")


def test_num_regs_keeps_to_the_register_ceiling(libdir: str) -> None:
    result = subprocess.run([sys.executable, "-c", _PROBE, libdir, _PTX],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    r = json.loads(result.stdout.strip().splitlines()[-1])
    assert DEFAULT_NUM_REGS == 32
    assert r["plain"] == {"free": 32, "bounded": 16}
    assert r["load_option_20"] == {"free": 20, "bounded": 16}
    assert r["link_create_24"] == {"free": 24, "bounded": 16}
    assert r["link_add_12"] == {"free": 12, "bounded": 12}


def test_register_ceiling_is_written_as_maxnreg() -> None:
    text = with_register_ceiling(_PTX, 20)
    # The unbounded kernel gets one, on its body's line (the lines stay);
    # a lower one stays; the commented-out entry is untouched.
    assert text.splitlines() == _PTX.replace("{\n  ret;\n}\n.visible .entry bounded",
                                             ".maxnreg 20 {\n  ret;\n}\n.visible .entry bounded",
                                             1).splitlines()
    assert with_register_ceiling(_PTX, 8).count(".maxnreg 8") == 3  # one in the comment
    assert with_register_ceiling(_PTX, 0) == _PTX
