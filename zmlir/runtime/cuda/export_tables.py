"""The undocumented tables the CUDA runtime asks the driver for with
cuGetExportTable, by UUID: what they are, not what the slots do. Shared by
our runtime (export_slots.py implements the slots) and the tracer's
interposer (zmlir/trace/interposer.py wraps NVIDIA's tables), so it imports
nothing of either.

Each table is an array of pointers, usually starting with its own size in
bytes. A table is one entry of TABLES: its name, UUID, length, whether slot
0 is the size, and the slots we know with their C signatures (a cffi
function type). The slot meanings are what public reverse engineering
(ZLUDA) found; slots not listed have no known meaning.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Slot:
    name: str  # what the slot does; export_slots.BODIES implements it by this name
    signature: str  # a cffi function type, e.g. "CUresult(CUcontext *, CUdevice)"
    # Under the passthrough the vendor's slot, where it has one, answers:
    # what it returns (NVIDIA's context, its stream objects) the vendor's
    # other slots take.
    vendors_first: bool = False


@dataclass
class Table:
    name: str
    uuid: str
    length: int
    sized: bool = True  # slot 0 holds the table's size in bytes
    # Tools hooks cudart calls on every run and does without: their unknown
    # slots answer quietly (logged only under ZMLIR_LOG).
    optional: bool = False
    # Slots of no known meaning may not all be functions: the tracer's
    # interposer passes them through unwrapped.
    opaque: bool = False
    # Handed out as the vendor's own where the vendor's driver is underneath
    # (the passthrough): NVIDIA's libraries need the slots we do not know
    # (cuBLAS's GEMMs call TOOLS_TLS slot 2; docs/passthrough-libraries.md).
    # The slots we know are ours there too (a copy of the vendor's table):
    # they take our handles, which the vendor's would not know.
    vendor_first: bool = False
    slots: dict[int, Slot] = field(default_factory=dict)

    @property
    def key(self) -> bytes:
        return uuid.UUID(self.uuid).bytes


TABLES = [
    # 13 slots at least: CUDA 13.5's libcudart.so.13 calls slot 12 as its
    # runtime starts (no arguments; any answer but 0 fails the runtime).
    Table("CUDART_INTERFACE", "6BD5FB6C-5BF4-E74A-8987-D93912FD9DF9", 13, slots={
        1: Slot("get_module_from_cubin", "void(CUmodule *, void *)"),
        2: Slot("primary_context", "CUresult(CUcontext *, CUdevice)"),
        6: Slot("get_module_from_cubin_ext1",
                "CUresult(CUmodule *, void *, void *, void *, unsigned int)"),
        7: Slot("cudart_interface_fn7", "CUresult(size_t)"),
        8: Slot("get_module_from_cubin_ext2",
                "CUresult(void *, CUmodule *, void *, void *, unsigned int)"),
        12: Slot("cudart_start_check", "CUresult(void)"),
    }),
    Table("TOOLS_TLS", "42D85A81-23F6-CB47-8298-F6E78A3AECDC", 4, optional=True,
          vendor_first=True, slots={
        # cuBLAS calls it ~70 times in each GEMM and fails the GEMM on an error.
        2: Slot("current_context", "CUresult(CUcontext *)", vendors_first=True),
    }),
    Table("TOOLS_RUNTIME_CALLBACK_HOOKS", "A094798C-2E74-2E74-93F2-0800200C0A66", 7,
          optional=True, slots={
        2: Slot("unknown_buffer", "void(void **, size_t *)"),
        6: Slot("unknown_buffer", "void(void **, size_t *)"),
    }),
    Table("CONTEXT_LOCAL_STORAGE", "C693336E-1121-DF11-A8C3-68F355D89593", 4, sized=False,
          slots={
              0: Slot("context_local_storage_put",
                      "CUresult(CUcontext, void *, void *, void *)"),
              1: Slot("context_local_storage_delete", "CUresult(void *, void **)"),
              2: Slot("context_local_storage_get", "CUresult(void **, CUcontext, void *)"),
          }),
    Table("CTX_CREATE_BYPASS", "0CA50B8C-1004-929A-89A7-D0DF10E77286", 2, slots={
        1: Slot("ctx_create_bypass", "CUresult(CUcontext *, unsigned int, CUdevice)"),
    }),
    Table("HEAP_ACCESS", "195BCBF4-D67D-024A-ACC5-1D29CEA631AE", 3, slots={
        1: Slot("heap_alloc", "CUresult(void **, size_t, size_t)"),
        2: Slot("heap_free", "CUresult(void *, size_t *)"),
    }),
    Table("DEVICE_EXTENDED_RT", "B10541E1-F7C7-C74A-9F64-F223BE99F1E2", 26, slots={
        5: Slot("device_attribute_ext", "CUresult(CUdevice, unsigned int, int, void *)"),
        13: Slot("device_something", "CUresult(unsigned char *, CUdevice)"),
    }),
    Table("INTEGRITY_CHECK", "D4082055-BDE6-704B-8D34-BA123C66E1F2", 3, slots={
        1: Slot("integrity_check",
                "CUresult(unsigned int, unsigned long long, unsigned long long *)"),
    }),
    # Asked for by CUDA 13.4+ runtimes at start-up, which fail every call
    # (cudaErrorInvalidValue) when it is refused: a size and 94 slots.
    # Slot 4 is a context's unique id (cuCtxGetId's): NVIDIA's cuFFT asks it
    # of the current context and of a plan's stream's, to tell whether the
    # context changed; cuBLAS's GEMMs ask it too.
    Table("TOOLS_CONTEXT", "21318C60-9714-3248-8CA6-41FF7324C8F2", 95, opaque=True,
          vendor_first=True, slots={
              4: Slot("context_id", "CUresult(CUcontext, unsigned long long *)"),
              # cuBLASLt's GEMMs: the driver's own object for a stream handle
              # (0: the NULL stream, and whether per thread), then its id.
              39: Slot("stream_id", "CUresult(CUcontext, void *, unsigned long long *)",
                       vendors_first=True),
              51: Slot("stream_object", "CUresult(CUcontext, CUstream, void **, int)",
                       vendors_first=True),
          }),
    # A module's functions. NVIDIA's cuFFT 12 asks for it as its first plan
    # starts and fails the plan (CUFFT_INTERNAL_ERROR) without it; it loads
    # each of its kernels as a module of one function and finds that
    # function with slot 7: (context, module, callback, user) calls
    # callback(user, function) for each function of the module and answers
    # how many there were (cuFFT wants 1; it checks that the table has 8
    # slots at least). Ours has 64; the others are unknown.
    Table("MODULE_FUNCTIONS", "6E163FBE-B958-444D-835C-E182AFF1991E", 64, slots={
        7: Slot("module_functions", "size_t(CUcontext, CUmodule, void *, void *)"),
    }),
    # Asked for once by NVIDIA's cuBLASLt 13.1 before its first bf16 GEMM
    # on an H200 (cublasGemmEx), which calls slot 4 with two output pointers
    # and, on success, slot 13 with what slot 4 gave: no object of ours, so
    # under the passthrough NVIDIA's own. It never checks that the table was
    # given: refused, the GEMM crashed (SIGSEGV calling slot 4 of NULL).
    # Elsewhere our stubs (slot 4 answers CUDA_ERROR_NOT_SUPPORTED, where
    # cuBLASLt leaves that path). Its length is unknown.
    Table("CUBLASLT_QUERY", "1734DC26-800D-4745-8726-C0F1E7DD8BCA", 16, opaque=True,
          vendor_first=True),
    Table("UNKNOWN_CHECKS", "263E8860-7CD2-6143-92F6-BBD5006DFA7E", 4, slots={
        2: Slot("context_check", "CUresult(CUcontext, unsigned int *, void **)"),
        3: Slot("check_fn3", "unsigned int(void)"),
    }),
    # zmlir's own, not NVIDIA's: what our libraries (zmlir/libraries/, route.c)
    # ask the driver: the backend's name, where the vendor's own library
    # of a name is, on a backend where that one answers (the passthrough),
    # and the backend's native handles (OpenCL: platform, device, context),
    # for a library on the backend's own API (the SYCL route, cublas/engine.c).
    Table("ZMLIR_LIBRARIES", "3F2A8C61-0B5E-4D2B-9A47-1CD35B706E21", 4, slots={
        1: Slot("libraries_backend", "CUresult(char *, size_t)"),
        2: Slot("libraries_vendor_library", "CUresult(char *, char *, size_t)"),
        3: Slot("libraries_native_handles", "CUresult(void **, size_t)"),
    }),
]
BY_UUID = {t.key: t for t in TABLES}
BY_NAME = {t.name: t for t in TABLES}
