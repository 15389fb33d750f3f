"""The C signatures of the driver API functions libcuda.so.1 exports.

One declaration list serves the cffi embedding build (these become the
library's exported symbols) and the driver (each needs a Python body or gets
a CUDA_ERROR_NOT_SUPPORTED stub that logs its name). Every other function
NVIDIA's libcuda.so.1 exports (nvidia_exports.txt) is a C stub of no
declared signature that says so through one Python body, zmlir_py_unsupported:
a program linked against NVIDIA's library loads against ours, and cudart's
cuGetProcAddress finds the function and reports CUDA_ERROR_NOT_SUPPORTED
where it would otherwise report that the driver is too old.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

TYPES = """
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent, *CUlibrary, *CUkernel;
typedef void *CUgraph, *CUgraphExec, *CUgraphNode, *CUuserObject;
typedef void *CUlinkState;
typedef struct { unsigned char bytes[16]; } CUuuid;
typedef struct { char reserved[64]; } CUipcMemHandle;
typedef struct { char reserved[64]; } CUipcEventHandle;
typedef struct {
    unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes; CUstream hStream; void *attrs; unsigned int numAttrs;
} CUlaunchConfig;
typedef void (*CUhostFn)(void *userData);
typedef struct {
    size_t srcXInBytes, srcY; int srcMemoryType; const void *srcHost; CUdeviceptr srcDevice;
    void *srcArray; size_t srcPitch;
    size_t dstXInBytes, dstY; int dstMemoryType; void *dstHost; CUdeviceptr dstDevice;
    void *dstArray; size_t dstPitch;
    size_t WidthInBytes, Height;
} CUDA_MEMCPY2D;
typedef struct {
    size_t srcXInBytes, srcY, srcZ, srcLOD; int srcMemoryType; const void *srcHost;
    CUdeviceptr srcDevice; void *srcArray; void *reserved0; size_t srcPitch, srcHeight;
    size_t dstXInBytes, dstY, dstZ, dstLOD; int dstMemoryType; void *dstHost;
    CUdeviceptr dstDevice; void *dstArray; void *reserved1; size_t dstPitch, dstHeight;
    size_t WidthInBytes, Height, Depth;
} CUDA_MEMCPY3D;
// Arrays, texture and surface objects (texture.py).
typedef void *CUarray, *CUmipmappedArray, *CUtexref, *CUsurfref;
typedef unsigned long long CUtexObject, CUsurfObject;
typedef struct {
    size_t Width, Height; int Format; unsigned int NumChannels;
} CUDA_ARRAY_DESCRIPTOR;
typedef struct {
    size_t Width, Height, Depth; int Format; unsigned int NumChannels, Flags;
} CUDA_ARRAY3D_DESCRIPTOR;
typedef struct {
    int resType;
    union {
        struct { CUarray hArray; } array;
        struct { CUmipmappedArray hMipmappedArray; } mipmap;
        struct { CUdeviceptr devPtr; int format; unsigned int numChannels;
                 size_t sizeInBytes; } linear;
        struct { CUdeviceptr devPtr; int format; unsigned int numChannels; size_t width, height,
                 pitchInBytes; } pitch2D;
        struct { int reserved[32]; } reserved;
    } res;
    unsigned int flags;
} CUDA_RESOURCE_DESC;
typedef struct {
    int addressMode[3]; int filterMode; unsigned int flags, maxAnisotropy;
    int mipmapFilterMode; float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
    float borderColor[4]; int reserved[12];
} CUDA_TEXTURE_DESC;
typedef struct {
    int format; size_t width, height, depth; unsigned int firstMipmapLevel, lastMipmapLevel,
    firstLayer, lastLayer, reserved[16];
} CUDA_RESOURCE_VIEW_DESC;
typedef void (*CUstreamCallback)(CUstream hStream, CUresult status, void *userData);
typedef void *CUmemoryPool;
typedef struct { int type; int id; } CUmemLocation;
typedef struct {
    int allocType; int handleTypes; CUmemLocation location; void *win32SecurityAttributes;
    size_t maxSize; unsigned short usage; unsigned char reserved[54];
} CUmemPoolProps;
typedef struct { CUmemLocation location; int flags; } CUmemAccessDesc;
// Virtual memory management (virtual_memory.py) and pools' IPC (mempool_ipc.py).
typedef unsigned long long CUmemGenericAllocationHandle;
typedef struct {
    int type; int requestedHandleTypes; CUmemLocation location; void *win32HandleMetaData;
    struct {
        unsigned char compressionType; unsigned char gpuDirectRDMACapable; unsigned short usage;
        unsigned char reserved[4];
    } allocFlags;
} CUmemAllocationProp;
typedef struct { unsigned char reserved[64]; } CUmemPoolPtrExportData;
typedef struct { int id; char pad[4]; unsigned char value[64]; } CUlaunchAttribute;
typedef struct {
    unsigned long long flags; CUstream hUploadStream; CUgraphNode hErrNode_out; int result_out;
} CUDA_GRAPH_INSTANTIATE_PARAMS;
typedef struct {
    CUfunction func; unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes; void **kernelParams; void **extra;
} CUDA_KERNEL_NODE_PARAMS;
typedef struct {
    CUfunction func; unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes; void **kernelParams; void **extra; CUkernel kern; CUcontext ctx;
} CUDA_KERNEL_NODE_PARAMS_v2;
typedef struct {
    CUdeviceptr dst; size_t pitch; unsigned int value, elementSize; size_t width, height;
} CUDA_MEMSET_NODE_PARAMS;
typedef struct {
    CUdeviceptr dst; size_t pitch; unsigned int value, elementSize; size_t width, height;
    CUcontext ctx;
} CUDA_MEMSET_NODE_PARAMS_v2;
typedef struct { CUhostFn fn; void *userData; } CUDA_HOST_NODE_PARAMS;
typedef struct {
    CUmemPoolProps poolProps; const CUmemAccessDesc *accessDescs; size_t accessDescCount;
    size_t bytesize; CUdeviceptr dptr;
} CUDA_MEM_ALLOC_NODE_PARAMS;
typedef struct { unsigned char from_port, to_port, type; unsigned char reserved[5]; } CUgraphEdgeData;
typedef struct { int result; CUgraphNode errorNode; CUgraphNode errorFromNode; } CUgraphExecUpdateResultInfo;
typedef struct { int flags; int reserved; CUcontext copyCtx; CUDA_MEMCPY3D copyParams; } CUDA_MEMCPY_NODE_PARAMS;
typedef struct { CUgraph graph; int ownership; } CUDA_CHILD_GRAPH_NODE_PARAMS;
typedef struct { CUevent event; } CUDA_EVENT_NODE_PARAMS;
typedef struct { CUdeviceptr dptr; } CUDA_MEM_FREE_NODE_PARAMS;
typedef struct {
    unsigned long long handle; int type; unsigned int size; CUgraph *phGraph_out; CUcontext ctx;
} CUDA_CONDITIONAL_NODE_PARAMS;
typedef struct {
    int type; int reserved0[3];
    union {
        long long reserved1[29]; CUDA_KERNEL_NODE_PARAMS_v2 kernel; CUDA_MEMCPY_NODE_PARAMS memcpy;
        CUDA_MEMSET_NODE_PARAMS_v2 memset; CUDA_HOST_NODE_PARAMS host;
        CUDA_CHILD_GRAPH_NODE_PARAMS graph; CUDA_EVENT_NODE_PARAMS eventWait;
        CUDA_EVENT_NODE_PARAMS eventRecord; CUDA_MEM_ALLOC_NODE_PARAMS alloc;
        CUDA_MEM_FREE_NODE_PARAMS free; CUDA_CONDITIONAL_NODE_PARAMS conditional;
    };
    long long reserved2;
} CUgraphNodeParams;
"""

FUNCTIONS = """
CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int *version);
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, unsigned long long flags);
CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, unsigned long long flags, int *symbolStatus);
CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId);
CUresult cuGetErrorName(CUresult error, const char **pStr);
CUresult cuGetErrorString(CUresult error, const char **pStr);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev);
CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev);
CUresult cuDeviceGetLuid(char *luid, unsigned int *deviceNodeMask, CUdevice dev);
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev);
CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev);
CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev);
CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev);
CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool);
CUresult cuMemGetDefaultMemPool(CUmemoryPool *pool_out, CUmemLocation *location, int type);
CUresult cuMemGetMemPool(CUmemoryPool *pool, CUmemLocation *location, int type);
CUresult cuMemSetMemPool(CUmemLocation *location, int type, CUmemoryPool pool);
CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *poolProps);
CUresult cuMemPoolDestroy(CUmemoryPool pool);
CUresult cuMemPoolSetAttribute(CUmemoryPool pool, int attr, void *value);
CUresult cuMemPoolGetAttribute(CUmemoryPool pool, int attr, void *value);
CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep);
CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count);
CUresult cuMemPoolGetAccess(int *flags, CUmemoryPool memPool, CUmemLocation *location);
CUresult cuMemPoolExportToShareableHandle(void *handle_out, CUmemoryPool pool, int handleType, unsigned long long flags);
CUresult cuMemPoolImportFromShareableHandle(CUmemoryPool *pool_out, void *handle, int handleType, unsigned long long flags);
CUresult cuMemPoolExportPointer(CUmemPoolPtrExportData *shareData_out, CUdeviceptr ptr);
CUresult cuMemPoolImportPointer(CUdeviceptr *ptr_out, CUmemoryPool pool, CUmemPoolPtrExportData *shareData);
CUresult cuMemGetAllocationGranularity(size_t *granularity, const CUmemAllocationProp *prop, int option);
CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags);
CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size);
CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop, unsigned long long flags);
CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle, unsigned long long flags);
CUresult cuMemUnmap(CUdeviceptr ptr, size_t size);
CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count);
CUresult cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location, CUdeviceptr ptr);
CUresult cuMemExportToShareableHandle(void *shareableHandle, CUmemGenericAllocationHandle handle, int handleType, unsigned long long flags);
CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle, void *osHandle, int shHandleType);
CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop, CUmemGenericAllocationHandle handle);
CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr);
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev);
CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active);
CUresult cuDevicePrimaryCtxSetFlags_v2(CUdevice dev, unsigned int flags);
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
CUresult cuCtxCreate_v4(CUcontext *pctx, void *params, unsigned int flags, CUdevice dev);
CUresult cuCtxDestroy_v2(CUcontext ctx);
CUresult cuCtxAttach(CUcontext *pctx, unsigned int flags);
CUresult cuCtxDetach(CUcontext ctx);
CUresult cuCtxGetCurrent(CUcontext *pctx);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuCtxPushCurrent_v2(CUcontext ctx);
CUresult cuCtxPopCurrent_v2(CUcontext *pctx);
CUresult cuCtxGetDevice(CUdevice *device);
CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx);
CUresult cuCtxGetFlags(unsigned int *flags);
CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId);
CUresult cuCtxSynchronize(void);
CUresult cuProfilerStart(void);
CUresult cuProfilerStop(void);
CUresult cuCtxSynchronize_v2(CUcontext ctx);
CUresult cuCtxGetApiVersion(CUcontext ctx, unsigned int *version);
CUresult cuCtxGetLimit(size_t *pvalue, int limit);
CUresult cuCtxSetLimit(int limit, size_t value);
CUresult cuCtxGetCacheConfig(int *pconfig);
CUresult cuCtxSetCacheConfig(int config);
CUresult cuCtxGetSharedMemConfig(int *pConfig);
CUresult cuCtxSetSharedMemConfig(int config);
CUresult cuCtxGetStreamPriorityRange(int *leastPriority, int *greatestPriority);
CUresult cuModuleLoad(CUmodule *module, const char *fname);
CUresult cuModuleLoadData(CUmodule *module, const void *image);
CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions, int *options, void **optionValues);
CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin);
CUresult cuModuleUnload(CUmodule hmod);
CUresult cuLinkCreate_v2(unsigned int numOptions, int *options, void **optionValues, CUlinkState *stateOut);
CUresult cuLinkAddData_v2(CUlinkState state, int type, void *data, size_t size, const char *name, unsigned int numOptions, int *options, void **optionValues);
CUresult cuLinkAddFile_v2(CUlinkState state, int type, const char *path, unsigned int numOptions, int *options, void **optionValues);
CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut);
CUresult cuLinkDestroy(CUlinkState state);
CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name);
CUresult cuModuleGetLoadingMode(int *mode);
CUresult cuLibraryLoadData(CUlibrary *library, const void *code, int *jitOptions, void **jitOptionsValues, unsigned int numJitOptions, int *libraryOptions, void **libraryOptionValues, unsigned int numLibraryOptions);
CUresult cuLibraryUnload(CUlibrary library);
CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name);
CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library);
CUresult cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name);
CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library, const char *name);
CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel);
CUresult cuKernelGetAttribute(int *pi, int attrib, CUkernel kernel, CUdevice dev);
CUresult cuKernelSetAttribute(int attrib, int val, CUkernel kernel, CUdevice dev);
CUresult cuKernelSetCacheConfig(CUkernel kernel, int config, CUdevice dev);
CUresult cuKernelGetParamInfo(CUkernel kernel, size_t paramIndex, size_t *paramOffset, size_t *paramSize);
CUresult cuFuncGetParamInfo(CUfunction func, size_t paramIndex, size_t *paramOffset, size_t *paramSize);
CUresult cuKernelGetName(const char **name, CUkernel hfunc);
CUresult cuFuncGetAttribute(int *pi, int attrib, CUfunction hfunc);
CUresult cuFuncSetAttribute(CUfunction hfunc, int attrib, int value);
CUresult cuFuncSetCacheConfig(CUfunction hfunc, int config);
CUresult cuFuncGetName(const char **name, CUfunction hfunc);
CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc);
CUresult cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z);
CUresult cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes);
CUresult cuParamSetSize(CUfunction hfunc, unsigned int numbytes);
CUresult cuParamSeti(CUfunction hfunc, int offset, unsigned int value);
CUresult cuParamSetf(CUfunction hfunc, int offset, float value);
CUresult cuParamSetv(CUfunction hfunc, int offset, void *ptr, unsigned int numbytes);
CUresult cuLaunch(CUfunction f);
CUresult cuLaunchGrid(CUfunction f, int grid_width, int grid_height);
CUresult cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height, CUstream hStream);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize, unsigned int flags);
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream);
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream);
CUresult cuMemAllocHost_v2(void **pp, size_t bytesize);
CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags);
CUresult cuMemFreeHost(void *p);
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int flags);
CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int flags);
CUresult cuMemHostUnregister(void *p);
CUresult cuMemGetInfo_v2(size_t *free, size_t *total);
CUresult cuMemGetAddressRange_v2(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dptr);
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t byteCount);
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t byteCount, CUstream hStream);
CUresult cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount);
CUresult cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount, CUstream hStream);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t byteCount);
CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t byteCount);
CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t byteCount);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t byteCount, CUstream hStream);
CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t byteCount, CUstream hStream);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t byteCount, CUstream hStream);
CUresult cuMemAllocPitch_v2(CUdeviceptr *dptr, size_t *pPitch, size_t widthInBytes, size_t height, unsigned int elementSizeBytes);
CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy);
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy);
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream);
CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy);
CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream);
CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray);
CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray);
CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *pArrayDescriptor, CUarray hArray);
CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor, CUarray hArray);
CUresult cuArrayDestroy(CUarray hArray);
CUresult cuMemcpyHtoA_v2(CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount);
CUresult cuMemcpyAtoH_v2(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount);
CUresult cuMemcpyHtoAAsync_v2(CUarray dstArray, size_t dstOffset, const void *srcHost, size_t ByteCount, CUstream hStream);
CUresult cuMemcpyAtoHAsync_v2(void *dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream);
CUresult cuMemcpyDtoA_v2(CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount);
CUresult cuMemcpyAtoD_v2(CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount);
CUresult cuMemcpyAtoA_v2(CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount);
CUresult cuTexObjectCreate(CUtexObject *pTexObject, const CUDA_RESOURCE_DESC *pResDesc, const CUDA_TEXTURE_DESC *pTexDesc, const CUDA_RESOURCE_VIEW_DESC *pResViewDesc);
CUresult cuTexObjectDestroy(CUtexObject texObject);
CUresult cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC *pResDesc, CUtexObject texObject);
CUresult cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC *pTexDesc, CUtexObject texObject);
CUresult cuSurfObjectCreate(CUsurfObject *pSurfObject, const CUDA_RESOURCE_DESC *pResDesc);
CUresult cuSurfObjectDestroy(CUsurfObject surfObject);
CUresult cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC *pResDesc, CUsurfObject surfObject);
CUresult cuModuleGetTexRef(CUtexref *pTexRef, CUmodule hmod, const char *name);
CUresult cuModuleGetSurfRef(CUsurfref *pSurfRef, CUmodule hmod, const char *name);
CUresult cuTexRefCreate(CUtexref *pTexRef);
CUresult cuTexRefDestroy(CUtexref hTexRef);
CUresult cuTexRefSetArray(CUtexref hTexRef, CUarray hArray, unsigned int Flags);
CUresult cuTexRefSetAddress_v2(size_t *ByteOffset, CUtexref hTexRef, CUdeviceptr dptr, size_t bytes);
CUresult cuTexRefSetAddress2D_v2(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR *desc, CUdeviceptr dptr, size_t Pitch);
CUresult cuTexRefSetAddress2D_v3(CUtexref hTexRef, const CUDA_ARRAY_DESCRIPTOR *desc, CUdeviceptr dptr, size_t Pitch);
CUresult cuTexRefGetAddress_v2(CUdeviceptr *pdptr, CUtexref hTexRef);
CUresult cuTexRefGetArray(CUarray *phArray, CUtexref hTexRef);
CUresult cuTexRefSetMipmappedArray(CUtexref hTexRef, CUmipmappedArray hMipmappedArray, unsigned int Flags);
CUresult cuTexRefGetMipmappedArray(CUmipmappedArray *phMipmappedArray, CUtexref hTexRef);
CUresult cuTexRefSetFormat(CUtexref hTexRef, int fmt, int NumPackedComponents);
CUresult cuTexRefGetFormat(int *pFormat, int *pNumChannels, CUtexref hTexRef);
CUresult cuTexRefSetAddressMode(CUtexref hTexRef, int dim, int am);
CUresult cuTexRefGetAddressMode(int *pam, CUtexref hTexRef, int dim);
CUresult cuTexRefSetFilterMode(CUtexref hTexRef, int fm);
CUresult cuTexRefGetFilterMode(int *pfm, CUtexref hTexRef);
CUresult cuTexRefSetFlags(CUtexref hTexRef, unsigned int Flags);
CUresult cuTexRefGetFlags(unsigned int *pFlags, CUtexref hTexRef);
CUresult cuTexRefSetBorderColor(CUtexref hTexRef, float *pBorderColor);
CUresult cuTexRefGetBorderColor(float *pBorderColor, CUtexref hTexRef);
CUresult cuTexRefSetMaxAnisotropy(CUtexref hTexRef, unsigned int maxAniso);
CUresult cuTexRefGetMaxAnisotropy(int *pmaxAniso, CUtexref hTexRef);
CUresult cuTexRefSetMipmapFilterMode(CUtexref hTexRef, int fm);
CUresult cuTexRefGetMipmapFilterMode(int *pfm, CUtexref hTexRef);
CUresult cuTexRefSetMipmapLevelBias(CUtexref hTexRef, float bias);
CUresult cuTexRefGetMipmapLevelBias(float *pbias, CUtexref hTexRef);
CUresult cuTexRefSetMipmapLevelClamp(CUtexref hTexRef, float minMipmapLevelClamp, float maxMipmapLevelClamp);
CUresult cuTexRefGetMipmapLevelClamp(float *pminMipmapLevelClamp, float *pmaxMipmapLevelClamp, CUtexref hTexRef);
CUresult cuParamSetTexRef(CUfunction hfunc, int texunit, CUtexref hTexRef);
CUresult cuSurfRefSetArray(CUsurfref hSurfRef, CUarray hArray, unsigned int Flags);
CUresult cuSurfRefGetArray(CUarray *phArray, CUsurfref hSurfRef);
CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc, unsigned int numMipmapLevels);
CUresult cuMipmappedArrayGetLevel(CUarray *pLevelArray, CUmipmappedArray hMipmappedArray, unsigned int level);
CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray);
CUresult cuMemsetD2D8_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t width, size_t height);
CUresult cuMemsetD2D16_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t width, size_t height);
CUresult cuMemsetD2D32_v2(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t width, size_t height);
CUresult cuMemsetD2D8Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t width, size_t height, CUstream hStream);
CUresult cuMemsetD2D16Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t width, size_t height, CUstream hStream);
CUresult cuMemsetD2D32Async(CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t width, size_t height, CUstream hStream);
CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t n);
CUresult cuMemsetD16_v2(CUdeviceptr dstDevice, unsigned short us, size_t n);
CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t n);
CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t n, CUstream hStream);
CUresult cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t n, CUstream hStream);
CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t n, CUstream hStream);
CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice, CUstream hStream);
CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, int advice, CUdevice device);
CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location, unsigned int flags, CUstream hStream);
CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, int advice, CUmemLocation location);
CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr ptr);
CUresult cuPointerGetAttributes(unsigned int numAttributes, int *attributes, void **data, CUdeviceptr ptr);
CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra);
CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra);
CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams);
CUresult cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData);
CUresult cuStreamCreate(CUstream *phStream, unsigned int flags);
CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority);
CUresult cuStreamDestroy_v2(CUstream hStream);
CUresult cuStreamSynchronize(CUstream hStream);
CUresult cuStreamAttachMemAsync(CUstream hStream, CUdeviceptr dptr, size_t length, unsigned int flags);
CUresult cuStreamQuery(CUstream hStream);
CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int flags);
CUresult cuStreamAddCallback(CUstream hStream, CUstreamCallback callback, void *userData, unsigned int flags);
CUresult cuStreamIsCapturing(CUstream hStream, int *captureStatus);
CUresult cuStreamGetCaptureInfo(CUstream hStream, int *captureStatus_out, unsigned long long *id_out);
CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, int *captureStatus_out, unsigned long long *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out, size_t *numDependencies_out);
CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, int *captureStatus_out, unsigned long long *id_out, CUgraph *graph_out, const CUgraphNode **dependencies_out, const void **edgeData_out, size_t *numDependencies_out);
CUresult cuStreamGetDevice(CUstream hStream, CUdevice *device);
CUresult cuStreamGetAttribute(CUstream hStream, int attr, void *value_out);
CUresult cuStreamSetAttribute(CUstream hStream, int attr, const void *value);
CUresult cuStreamCopyAttributes(CUstream dst, CUstream src);
CUresult cuStreamBeginCapture(CUstream hStream);
CUresult cuStreamBeginCapture_v2(CUstream hStream, int mode);
CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph);
CUresult cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData, size_t numDependencies, int mode);
CUresult cuStreamUpdateCaptureDependencies(CUstream hStream, CUgraphNode *dependencies, size_t numDependencies, unsigned int flags);
CUresult cuStreamUpdateCaptureDependencies_v2(CUstream hStream, CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData, size_t numDependencies, unsigned int flags);
CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags);
CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams);
CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams);
CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS *nodeParams);
CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode, CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams);
CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS *nodeParams);
CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams);
CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, const CUDA_MEMCPY3D *copyParams, CUcontext ctx);
CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *nodeParams);
CUresult cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D *nodeParams);
CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx);
CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode, CUDA_MEMSET_NODE_PARAMS *nodeParams);
CUresult cuGraphMemsetNodeSetParams(CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS *nodeParams);
CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, const CUDA_HOST_NODE_PARAMS *nodeParams);
CUresult cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS *nodeParams);
CUresult cuGraphHostNodeSetParams(CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS *nodeParams);
CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, CUgraph childGraph);
CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph);
CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies);
CUresult cuGraphAddEventRecordNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, CUevent event);
CUresult cuGraphEventRecordNodeGetEvent(CUgraphNode hNode, CUevent *event_out);
CUresult cuGraphEventRecordNodeSetEvent(CUgraphNode hNode, CUevent event);
CUresult cuGraphAddEventWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, CUevent event);
CUresult cuGraphEventWaitNodeGetEvent(CUgraphNode hNode, CUevent *event_out);
CUresult cuGraphEventWaitNodeSetEvent(CUgraphNode hNode, CUevent event);
CUresult cuGraphAddMemAllocNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, CUDA_MEM_ALLOC_NODE_PARAMS *nodeParams);
CUresult cuGraphMemAllocNodeGetParams(CUgraphNode hNode, CUDA_MEM_ALLOC_NODE_PARAMS *params_out);
CUresult cuGraphAddMemFreeNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, CUdeviceptr dptr);
CUresult cuGraphMemFreeNodeGetParams(CUgraphNode hNode, CUdeviceptr *dptr_out);
CUresult cuDeviceGraphMemTrim(CUdevice device);
CUresult cuDeviceGetGraphMemAttribute(CUdevice device, int attr, void *value);
CUresult cuDeviceSetGraphMemAttribute(CUdevice device, int attr, void *value);
CUresult cuGraphAddNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, size_t numDependencies, CUgraphNodeParams *nodeParams);
CUresult cuGraphAddNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies, const CUgraphEdgeData *dependencyData, size_t numDependencies, CUgraphNodeParams *nodeParams);
CUresult cuGraphNodeSetParams(CUgraphNode hNode, CUgraphNodeParams *nodeParams);
CUresult cuGraphConditionalHandleCreate(unsigned long long *pHandle_out, CUgraph hGraph, CUcontext ctx, unsigned int defaultLaunchValue, unsigned int flags);
CUresult cuGraphExecNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraphNodeParams *nodeParams);
CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph);
CUresult cuGraphNodeFindInClone(CUgraphNode *phNode, CUgraphNode hOriginalNode, CUgraph hClonedGraph);
CUresult cuGraphNodeGetType(CUgraphNode hNode, int *type);
CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes);
CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes, size_t *numRootNodes);
CUresult cuGraphGetEdges(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, size_t *numEdges);
CUresult cuGraphGetEdges_v2(CUgraph hGraph, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *edgeData, size_t *numEdges);
CUresult cuGraphNodeGetDependencies(CUgraphNode hNode, CUgraphNode *dependencies, size_t *numDependencies);
CUresult cuGraphNodeGetDependencies_v2(CUgraphNode hNode, CUgraphNode *dependencies, CUgraphEdgeData *edgeData, size_t *numDependencies);
CUresult cuGraphNodeGetDependentNodes(CUgraphNode hNode, CUgraphNode *dependentNodes, size_t *numDependentNodes);
CUresult cuGraphNodeGetDependentNodes_v2(CUgraphNode hNode, CUgraphNode *dependentNodes, CUgraphEdgeData *edgeData, size_t *numDependentNodes);
CUresult cuGraphAddDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, size_t numDependencies);
CUresult cuGraphAddDependencies_v2(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *edgeData, size_t numDependencies);
CUresult cuGraphRemoveDependencies(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, size_t numDependencies);
CUresult cuGraphRemoveDependencies_v2(CUgraph hGraph, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *edgeData, size_t numDependencies);
CUresult cuGraphDestroyNode(CUgraphNode hNode);
CUresult cuGraphDebugDotPrint(CUgraph hGraph, const char *path, unsigned int flags);
CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize);
CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize);
CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags);
CUresult cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams);
CUresult cuGraphExecGetFlags(CUgraphExec hGraphExec, unsigned long long *flags);
CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out, int *updateResult_out);
CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo);
CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS *nodeParams);
CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams);
CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_MEMCPY3D *copyParams, CUcontext ctx);
CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx);
CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, const CUDA_HOST_NODE_PARAMS *nodeParams);
CUresult cuGraphExecChildGraphNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode, CUgraph childGraph);
CUresult cuGraphExecEventRecordNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event);
CUresult cuGraphExecEventWaitNodeSetEvent(CUgraphExec hGraphExec, CUgraphNode hNode, CUevent event);
CUresult cuGraphNodeSetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int isEnabled);
CUresult cuGraphNodeGetEnabled(CUgraphExec hGraphExec, CUgraphNode hNode, unsigned int *isEnabled);
CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream);
CUresult cuGraphUpload(CUgraphExec hGraphExec, CUstream hStream);
CUresult cuGraphDestroy(CUgraph hGraph);
CUresult cuGraphExecDestroy(CUgraphExec hGraphExec);
CUresult cuUserObjectCreate(CUuserObject *object_out, void *ptr, CUhostFn destroy, unsigned int initialRefcount, unsigned int flags);
CUresult cuUserObjectRetain(CUuserObject object, unsigned int count);
CUresult cuUserObjectRelease(CUuserObject object, unsigned int count);
CUresult cuGraphRetainUserObject(CUgraph graph, CUuserObject object, unsigned int count, unsigned int flags);
CUresult cuGraphReleaseUserObject(CUgraph graph, CUuserObject object, unsigned int count);
CUresult cuStreamGetFlags(CUstream hStream, unsigned int *flags);
CUresult cuStreamGetPriority(CUstream hStream, int *priority);
CUresult cuStreamGetCtx(CUstream hStream, CUcontext *pctx);
CUresult cuStreamGetCtx_v2(CUstream hStream, CUcontext *pctx, void **pGreenCtx);
CUresult cuEventCreate(CUevent *phEvent, unsigned int flags);
CUresult cuEventRecord(CUevent hEvent, CUstream hStream);
CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags);
CUresult cuEventSynchronize(CUevent hEvent);
CUresult cuEventQuery(CUevent hEvent);
CUresult cuEventDestroy_v2(CUevent hEvent);
CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd);
CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr);
CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags);
CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags);
CUresult cuIpcCloseMemHandle(CUdeviceptr dptr);
CUresult cuIpcGetEventHandle(CUipcEventHandle *pHandle, CUevent event);
CUresult cuIpcOpenEventHandle(CUevent *phEvent, CUipcEventHandle handle);
CUresult cuDeviceCanAccessPeer(int *canAccessPeer, CUdevice dev, CUdevice peerDev);
CUresult cuDeviceGetP2PAttribute(int *value, int attrib, CUdevice srcDevice, CUdevice dstDevice);
CUresult cuCtxEnablePeerAccess(CUcontext peerContext, unsigned int flags);
CUresult cuCtxDisablePeerAccess(CUcontext peerContext);
CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev);
CUresult cuDeviceGetByPCIBusId(CUdevice *dev, const char *pciBusId);
CUresult cuStreamGetId(CUstream hStream, unsigned long long *streamId);
CUresult cuCtxResetPersistingL2Cache(void);
CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func, void *blockSizeToDynamicSMemSize, size_t dynamicSMemSize, int blockSizeLimit);
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize);
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func, int blockSize, size_t dynamicSMemSize, unsigned int flags);
CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, CUfunction func, int numBlocks, int blockSize);
CUresult cuOccupancyMaxActiveClusters(int *numClusters, CUfunction func, const CUlaunchConfig *config);
"""


# Exported from C (fastpath.c), not Python: when the fast path does not
# apply, the C function calls the Python body, exported as zmlir_py_<name>.
C_FAST_PATH = ("cuLaunchKernel", "cuLaunchKernelEx", "cuEventRecord", "cuEventRecordWithFlags",
               "cuEventQuery", "cuEventSynchronize", "cuEventElapsedTime",
               "cuEventElapsedTime_v2", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemAllocAsync",
               "cuMemFreeAsync", "cuMemPrefetchAsync", "cuMemPrefetchAsync_v2", "cuMemAdvise",
               "cuMemAdvise_v2", "cuMemsetD8_v2",
               "cuMemsetD16_v2", "cuMemsetD32_v2", "cuMemsetD8Async", "cuMemsetD16Async",
               "cuMemsetD32Async", "cuMemcpyAsync", "cuMemcpyHtoDAsync_v2",
               "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoDAsync_v2", "cuMemcpy", "cuMemcpyHtoD_v2",
               "cuMemcpyDtoH_v2", "cuMemcpyDtoD_v2", "cuDeviceGetAttribute",
               "cuCtxGetCurrent", "cuCtxGetDevice", "cuCtxGetDevice_v2", "cuStreamSynchronize",
               "cuCtxSynchronize",
               "cuCtxSynchronize_v2", "cuFuncSetAttribute", "cuKernelSetAttribute",
               "cuKernelGetFunction", "cuModuleGetLoadingMode", "cuLibraryGetKernel",
               "cuFuncGetAttribute", "cuKernelGetAttribute", "cuStreamGetCaptureInfo",
               "cuStreamGetCaptureInfo_v2", "cuStreamGetCaptureInfo_v3",
               "cuOccupancyMaxActiveBlocksPerMultiprocessor",
               "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "cuGraphLaunch",
               "cuGraphExecKernelNodeSetParams", "cuGraphExecKernelNodeSetParams_v2",
               "cuStreamIsCapturing", "cuStreamBeginCapture", "cuStreamBeginCapture_v2",
               "cuStreamEndCapture", "cuGraphExecUpdate", "cuGraphExecUpdate_v2",
               "cuGraphDestroy")
PYTHON_BODY_PREFIX = "zmlir_py_"

# What the Python driver calls to keep fastpath.c's table in step.
FAST_PATH_API = """
int zmlir_fast_set_entry(const char *name, uintptr_t address);
int zmlir_fast_function(uintptr_t handle, int kind, uintptr_t target, unsigned int static_shared,
                        unsigned int shared_limit, unsigned int optin,
                        unsigned int max_threads, unsigned int nparams, const unsigned char *sizes,
                        unsigned int param_bytes, int native);
int zmlir_fast_opencl_kernel(uintptr_t handle, uintptr_t variant, unsigned int max_grid_x,
                             unsigned int sub_group_size, int linear_blocks);
int zmlir_fast_optin(uintptr_t handle, unsigned int *optin);
int zmlir_fast_library_kernel(uintptr_t library, const char *name, uintptr_t kernel);
void zmlir_fast_forget_library(uintptr_t library);
int zmlir_fast_stream(uintptr_t handle, uintptr_t target);
int zmlir_fast_event(uintptr_t handle, uintptr_t target);
int zmlir_fast_graph(uintptr_t handle, uintptr_t target);
int zmlir_fast_graph_node(uintptr_t node, uintptr_t graph, uintptr_t target);
void zmlir_fast_vendor_capture_enable(int on);
int zmlir_fast_begin_vendor_capture(uintptr_t stream, int mode);
int zmlir_fast_vendor_captures_under_way(void);
void zmlir_fast_capture_lock(int lock);
int zmlir_fast_stream_capture(uintptr_t stream, int end, int *code, uintptr_t *graph);
int zmlir_fast_captured_take(uintptr_t graph);
uintptr_t zmlir_fast_update_take(uintptr_t exec, int *failed, int *destroyed);
void zmlir_fast_update_done(uintptr_t graph);
int zmlir_fast_updates_pending(void);
struct zmlir_graph_record {
  uintptr_t graph, node, func;
  unsigned int grid[3], block[3], shared, nargs;
  unsigned int sizes[64];
  unsigned char args[512];
};
size_t zmlir_fast_graph_take(struct zmlir_graph_record *out, size_t room);
int zmlir_fast_graph_pending(void);
void zmlir_fast_forget(uintptr_t handle);
void zmlir_fast_set_context(uintptr_t ctx);
void zmlir_fast_context_destroyed(void);
void zmlir_fast_capture(int delta);
void zmlir_fast_sync_work_add(int delta);
void zmlir_fast_enable(int on);
unsigned long long zmlir_fast_launches(void);
unsigned long long zmlir_fast_events(void);
void zmlir_fast_launch_lock(void);
unsigned long long zmlir_fast_launch_unlock(uintptr_t event);
int zmlir_fast_launches_done(void);
unsigned long long zmlir_fast_launches_enqueued(void);
void zmlir_fast_stream_launched(uintptr_t stream);
int zmlir_fast_stream_ended(uintptr_t stream);
int zmlir_fast_stream_wait(uintptr_t stream);
int zmlir_fast_poll(unsigned long long *completed);
unsigned long zmlir_fast_take_failed_launches(void);
uint32_t zmlir_fast_take_word(uintptr_t address);
void zmlir_enter(void);
void zmlir_leave(void);
void zmlir_leave_python(void);
void zmlir_register_exit(void);
void zmlir_fast_cls_configure(uintptr_t python_get);
void zmlir_fast_cls_put(uintptr_t ctx, uintptr_t key, uintptr_t value);
void zmlir_fast_cls_forget(uintptr_t ctx, uintptr_t key);
CUresult zmlir_fast_cls_get(void **pvalue, void *ctx, void *key);
void zmlir_fast_context_id_configure(uintptr_t python, uintptr_t vendor);
void zmlir_fast_vendor_context(uintptr_t ctx, int add);
CUresult zmlir_fast_context_id(void *ctx, unsigned long long *id);
CUresult zmlir_fast_context_check(void *ctx, unsigned int *failed, void **detail);
uintptr_t zmlir_fast_address(const char *name);
struct zmlir_mem_record { uintptr_t address; size_t size; };
size_t zmlir_fast_mem_take(struct zmlir_mem_record *out, size_t room);
int zmlir_fast_mem_pending(void);
int zmlir_fast_mem_claim(uintptr_t address);
int zmlir_fast_mem_kind(uintptr_t address);
unsigned long long zmlir_fast_memory_calls(void);
void zmlir_fast_device_attribute(int attrib, int value, int pid);
void zmlir_fast_native_sm(int sm);
unsigned long long zmlir_fast_queries(void);
void zmlir_faults_install(void);
void zmlir_signals_save(void);
void zmlir_signals_restore(void);
void zmlir_faults_arm(int delta);
unsigned long zmlir_faults_take(uintptr_t *first);
int zmlir_faults_guard(uintptr_t begin, uintptr_t size, int add);
"""


def function_names() -> list[str]:
    return re.findall(r"CUresult (\w+)\(", FUNCTIONS)


def _fast_path_pattern() -> str:
    return rf"CUresult ({'|'.join(C_FAST_PATH)})\("


def python_declarations() -> str:
    """FUNCTIONS as the embedding API (Python bodies): the fast path's
    functions under their zmlir_py_ names."""
    return re.sub(_fast_path_pattern(), rf"CUresult {PYTHON_BODY_PREFIX}\1(", FUNCTIONS)


def fast_path_declarations() -> str:
    """The C functions of fastpath.c the library exports or Python calls."""
    lines = [line for line in FUNCTIONS.splitlines() if re.match(_fast_path_pattern(), line)]
    return "\n".join(lines) + "\n" + FAST_PATH_API


# The Python body of every unimplemented export (unimplemented_stubs_c).
UNSUPPORTED_API = "CUresult zmlir_py_unsupported(const char *name);\n"
UNSUPPORTED_ADDRESS_API = "uintptr_t zmlir_unsupported_address(const char *name);\n"


@cache
def nvidia_exports() -> tuple[str, ...]:
    text = (Path(__file__).resolve().parent / "nvidia_exports.txt").read_text()
    lines = (line.strip() for line in text.splitlines())
    return tuple(line for line in lines if line and not line.startswith("#"))


@cache
def unimplemented_names() -> tuple[str, ...]:
    """NVIDIA's exported functions we have no declaration for."""
    ours = set(function_names())
    return tuple(name for name in nvidia_exports() if name not in ours)


def unimplemented_stubs_c() -> str:
    """C for the unimplemented exports: one stub each (no declared
    parameters: the System V ABI lets a caller pass any) and the address
    lookup cuGetProcAddress uses."""
    names = unimplemented_names()
    stubs = "".join(f'CUresult {n}(void) {{ return zmlir_py_unsupported("{n}"); }}\n'
                    for n in names)
    table = "".join(f'  {{"{n}", (uintptr_t)&{n}}},\n' for n in names)
    return (stubs + "static const struct { const char *name; uintptr_t address; } "
            "zmlir_unsupported_table[] = {\n" + table + "};\n"
            "uintptr_t zmlir_unsupported_address(const char *name) {\n"
            "  for (size_t i = 0; i < sizeof zmlir_unsupported_table / "
            "sizeof *zmlir_unsupported_table; ++i)\n"
            "    if (strcmp(zmlir_unsupported_table[i].name, name) == 0)\n"
            "      return zmlir_unsupported_table[i].address;\n"
            "  return 0;\n}\n")
