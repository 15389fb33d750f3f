"""The CUDA passthrough backend's C declarations of NVIDIA's driver API
(backends/cuda.py), and the FFI that reads them."""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path
from typing import Any

import cffi

_CDEF = """
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;
typedef struct { char bytes[16]; } CUuuid;
CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId);
typedef struct { char reserved[64]; } CUipcMemHandle;
typedef struct { char reserved[64]; } CUipcEventHandle;
CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int *version);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev);
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxSynchronize(void);
CUresult cuStreamQuery(CUstream hStream);
CUresult cuStreamSynchronize(CUstream hStream);
CUresult cuStreamCreate(CUstream *phStream, unsigned int flags);
CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority);
CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int flags);
CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority);
CUresult cuStreamDestroy_v2(CUstream hStream);
CUresult cuCtxSetLimit(int limit, size_t value);
CUresult cuCtxGetLimit(size_t *pvalue, int limit);
CUresult cuGetErrorName(CUresult error, const char **pStr);
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr);
CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr);
CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int flags);
CUresult cuIpcCloseMemHandle(CUdeviceptr dptr);
CUresult cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle);
CUresult cuEventDestroy_v2(CUevent hEvent);
typedef struct { int type; int id; } CUmemLocation;
typedef struct {
    int allocType; int handleTypes; CUmemLocation location; void *win32SecurityAttributes;
    size_t maxSize; unsigned short usage; unsigned char reserved[54];
} CUmemPoolProps;
typedef struct { unsigned char reserved[64]; } CUmemPoolPtrExportData;
typedef struct CUmemPoolHandle_st *CUmemoryPool;
CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps);
CUresult cuMemPoolDestroy(CUmemoryPool pool);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool,
                                 CUstream hStream);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream);
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool_out, CUdevice dev);
CUresult cuMemPoolGetAttribute(CUmemoryPool pool, int attr, void *value);
CUresult cuMemPoolSetAttribute(CUmemoryPool pool, int attr, void *value);
CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep);
CUresult cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool, int handleType,
                                          unsigned long long flags);
CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle,
                                            int handleType, unsigned long long flags);
CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out, CUdeviceptr ptr);
CUresult cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool,
                                CUmemPoolPtrExportData *shareData);
// Virtual memory management, handed the application's arguments as they
// are: every pointer an address (uintptr_t, passed as a pointer is on x86-64
// and AArch64), every struct the application's own.
CUresult cuMemGetAllocationGranularity(uintptr_t granularity, uintptr_t prop, int option);
CUresult cuMemAddressReserve(uintptr_t ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags);
CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size);
CUresult cuMemCreate(uintptr_t handle, size_t size, uintptr_t prop, unsigned long long flags);
CUresult cuMemRelease(unsigned long long handle);
CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, unsigned long long handle,
                  unsigned long long flags);
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size);
CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, uintptr_t desc, size_t count);
CUresult cuMemGetAccess(uintptr_t flags, uintptr_t location, CUdeviceptr ptr);
CUresult cuMemExportToShareableHandle(uintptr_t shareableHandle, unsigned long long handle,
                                      int handleType, unsigned long long flags);
CUresult cuMemImportFromShareableHandle(uintptr_t handle, uintptr_t osHandle, int shHandleType);
CUresult cuMemGetAllocationPropertiesFromHandle(uintptr_t prop, unsigned long long handle);
CUresult cuMemRetainAllocationHandle(uintptr_t handle, uintptr_t addr);
// Arrays, texture and surface objects (ZMLIR_NATIVE_TEXTURES=1), likewise.
CUresult cuArrayCreate_v2(uintptr_t handle, uintptr_t desc);
CUresult cuArray3DCreate_v2(uintptr_t handle, uintptr_t desc);
CUresult cuArrayGetDescriptor_v2(uintptr_t desc, uintptr_t handle);
CUresult cuArray3DGetDescriptor_v2(uintptr_t desc, uintptr_t handle);
CUresult cuArrayDestroy(uintptr_t handle);
CUresult cuMipmappedArrayCreate(uintptr_t handle, uintptr_t desc, unsigned int levels);
CUresult cuMipmappedArrayGetLevel(uintptr_t level, uintptr_t handle, unsigned int index);
CUresult cuMipmappedArrayDestroy(uintptr_t handle);
CUresult cuMemcpyHtoA_v2(uintptr_t dst, size_t offset, uintptr_t src, size_t n);
CUresult cuMemcpyAtoH_v2(uintptr_t dst, uintptr_t src, size_t offset, size_t n);
CUresult cuMemcpyDtoA_v2(uintptr_t dst, size_t offset, CUdeviceptr src, size_t n);
CUresult cuMemcpyAtoD_v2(CUdeviceptr dst, uintptr_t src, size_t offset, size_t n);
CUresult cuMemcpyAtoA_v2(uintptr_t dst, size_t dst_offset, uintptr_t src, size_t src_offset,
                         size_t n);
CUresult cuMemcpy2D_v2(uintptr_t copy);
CUresult cuMemcpy3D_v2(uintptr_t copy);
CUresult cuMemcpy3DAsync_v2(uintptr_t copy, CUstream stream);
CUresult cuLaunchHostFunc(CUstream hStream, void *fn, void *userData);
CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                               unsigned int flags, CUstream hStream);
CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, int advice, CUmemLocation location);
CUresult cuStreamAddCallback(CUstream hStream, void *callback, void *userData,
                             unsigned int flags);
CUresult cuTexObjectCreate(uintptr_t handle, uintptr_t res, uintptr_t tex, uintptr_t view);
CUresult cuTexObjectDestroy(unsigned long long handle);
CUresult cuTexObjectGetResourceDesc(uintptr_t res, unsigned long long handle);
CUresult cuTexObjectGetTextureDesc(uintptr_t tex, unsigned long long handle);
CUresult cuSurfObjectCreate(uintptr_t handle, uintptr_t res);
CUresult cuSurfObjectDestroy(unsigned long long handle);
CUresult cuSurfObjectGetResourceDesc(uintptr_t res, unsigned long long handle);
CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags);
CUresult cuMemFreeHost(void *p);
CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int flags);
CUresult cuMemHostUnregister(void *p);
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n);
CUresult cuMemsetD16_v2(CUdeviceptr dst, unsigned short value, size_t n);
CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned int value, size_t n);
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream);
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream stream);
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream stream);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream);
CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t n, CUstream stream);
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t n, CUstream stream);
CUresult cuMemsetD2D8_v2(CUdeviceptr dst, size_t pitch, unsigned char value, size_t width,
                         size_t height);
CUresult cuMemsetD2D16_v2(CUdeviceptr dst, size_t pitch, unsigned short value, size_t width,
                          size_t height);
CUresult cuMemsetD2D32_v2(CUdeviceptr dst, size_t pitch, unsigned int value, size_t width,
                          size_t height);
CUresult cuMemsetD2D8Async(CUdeviceptr dst, size_t pitch, unsigned char value, size_t width,
                           size_t height, CUstream stream);
CUresult cuMemsetD2D16Async(CUdeviceptr dst, size_t pitch, unsigned short value, size_t width,
                            size_t height, CUstream stream);
CUresult cuMemsetD2D32Async(CUdeviceptr dst, size_t pitch, unsigned int value, size_t width,
                            size_t height, CUstream stream);
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                            int *options, void **optionValues);
CUresult cuModuleLoadData(CUmodule *module, const void *image);
CUresult cuModuleUnload(CUmodule hmod);
CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod,
                              const char *name);
CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr ptr);
CUresult cuFuncSetAttribute(CUfunction hfunc, int attrib, int value);
CUresult cuFuncGetAttribute(int *pi, int attrib, CUfunction hfunc);
CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset,
                            size_t *paramSize);
CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule mod);
CUresult cuModuleEnumerateFunctions(CUfunction *functions, unsigned int count, CUmodule mod);
CUresult cuFuncGetName(const char **name, CUfunction hfunc);
CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func, const void *config);
typedef struct { int id; char pad[4]; unsigned int value[16]; } CUlaunchAttribute;
typedef struct {
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes; void *hStream; CUlaunchAttribute *attrs; unsigned int numAttrs;
} CUlaunchConfig;
CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                          void **extra);
CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void **kernelParams, void **extra);
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                   unsigned int gridDimZ, unsigned int blockDimX,
                                   unsigned int blockDimY, unsigned int blockDimZ,
                                   unsigned int sharedMemBytes, CUstream hStream,
                                   void **kernelParams);
CUresult cuEventCreate(CUevent *phEvent, unsigned int flags);
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;
typedef struct {
    CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes; void **kernelParams; void **extra;
} CUDA_KERNEL_NODE_PARAMS;
typedef struct {
    CUdeviceptr dst; size_t pitch; unsigned int value; unsigned int elementSize;
    size_t width; size_t height;
} CUDA_MEMSET_NODE_PARAMS;
typedef struct { void *fn; void *userData; } CUDA_HOST_NODE_PARAMS;
CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags);
CUresult cuGraphDestroy(CUgraph hGraph);
CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                              const CUgraphNode *dependencies, size_t numDependencies,
                              const CUDA_KERNEL_NODE_PARAMS *nodeParams);
CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                              const CUgraphNode *dependencies, size_t numDependencies,
                              const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx);
CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                              const CUgraphNode *dependencies, size_t numDependencies,
                              const void *copyParams, CUcontext ctx);
CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                            const CUgraphNode *dependencies, size_t numDependencies,
                            const CUDA_HOST_NODE_PARAMS *nodeParams);
CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                             const CUgraphNode *dependencies, size_t numDependencies);
CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                  const CUgraphNode *dependencies, size_t numDependencies,
                                  CUgraph childGraph);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                     unsigned long long flags);
CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream);
CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_KERNEL_NODE_PARAMS *nodeParams);
CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_MEMSET_NODE_PARAMS *memsetParams,
                                        CUcontext ctx);
CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const void *copyParams, CUcontext ctx);
CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                      const CUDA_HOST_NODE_PARAMS *nodeParams);
CUresult cuGraphExecDestroy(CUgraphExec hGraphExec);
typedef struct {
    CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes; void **kernelParams; void **extra; void *kern; void *ctx;
} CUDA_KERNEL_NODE_PARAMS_v2;
CUresult cuStreamBeginCapture_v2(CUstream hStream, int mode);
CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph);
CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, int *captureStatus_out,
                                   unsigned long long *id_out, CUgraph *graph_out,
                                   const CUgraphNode **dependencies_out,
                                   size_t *numDependencies_out);
CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, void *resultInfo);
CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes);
CUresult cuGraphNodeGetType(CUgraphNode hNode, int *type);
CUresult cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode *dependencies,
                                    size_t *numDependencies);
CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams);
CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS *nodeParams);
CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode, void *nodeParams);
CUresult cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS *nodeParams);
CUresult cuEventRecord(CUevent hEvent, CUstream hStream);
CUresult cuEventQuery(CUevent hEvent);
CUresult cuEventSynchronize(CUevent hEvent);
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func,
                                                     int blockSize, size_t dynamicSMemSize);
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func,
                                                              int blockSize,
                                                              size_t dynamicSMemSize,
                                                              unsigned int flags);
"""

# The declarations above as an out-of-line cffi module (ABI mode), written
# beside this file by `python -m zmlir.runtime.cuda.build` (write_ffi_module):
# parsed there once, where an in-line FFI parses them at each cuInit (~65 ms)
# and, with pycparser, each type a string names at its first use (~0.5 ms
# each: 5 ms of jacobiCudaGraphs' first graph launch).
FFI_MODULE = Path(__file__).with_name("_cuda_backend_ffi.py")


def _cdef_digest() -> str:
    return hashlib.sha256(_CDEF.encode()).hexdigest()


def write_ffi_module() -> Path:
    """FFI_MODULE, of _CDEF, marked with its digest."""
    builder = cffi.FFI()
    builder.cdef(_CDEF)
    builder.set_source("_cuda_backend_ffi", None)
    builder.emit_python_code(str(FFI_MODULE))
    with FFI_MODULE.open("a") as module:
        module.write(f"\nCDEF_DIGEST = {_cdef_digest()!r}\n")
    return FFI_MODULE


def _prebuilt_ffi() -> Any:
    """The out-of-line FFI the build wrote, where it declares what _CDEF does;
    else None (an in-line one then)."""
    if not FFI_MODULE.exists():
        return None
    try:
        spec = importlib.util.spec_from_file_location("_cuda_backend_ffi", FFI_MODULE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception:  # another cffi's, or a broken file: parse _CDEF here
        return None
    return module.ffi if getattr(module, "CDEF_DIGEST", None) == _cdef_digest() else None


_PARSED_AT_OPEN = ("CUfunction *", "CUmodule *", "CUdeviceptr *", "CUevent *", "CUstream *",
                   "CUstream", "size_t *", "int *", "unsigned int *", "float *", "void *",
                   "void **", "void *[]", "int[]", "char[]", "uintptr_t", "const char **",
                   "CUfunction[]", "CUlaunchConfig *", "CUlaunchAttribute[2]")
_ffi: Any = None


def get_ffi() -> Any:
    global _ffi
    if _ffi is None:
        ffi = _prebuilt_ffi()
        if ffi is None:
            ffi = cffi.FFI()
            ffi.cdef(_CDEF)
            # An in-line FFI parses a type named by a string at its first
            # use: those of the calls a program times (a function's first
            # launch, memory, events) are parsed here, at cuInit.
            for name in _PARSED_AT_OPEN:
                ffi.typeof(name)
        _ffi = ffi
    return _ffi
