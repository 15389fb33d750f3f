/* A stand-in for NVIDIA's libcuda.so.1 under zmlir's CUDA passthrough
 * backend (ZMLIR_CUDA_DRIVER=this.so), for testing on a machine without an
 * NVIDIA GPU: the calls the backend makes, on host memory. Launching
 * "add_scalar(u32 *p, u32 v)" (kernelParams, or `extra`) adds v to
 * p[0 .. blockDim.x), "launch_add" makes a device-side launch of it
 * (below); every launch is counted (fake_launches). A thread must make the
 * context current before it launches, as with the real driver. */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <fcntl.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
/* max_dynamic: its MAX_DYNAMIC_SHARED_SIZE_BYTES once set (0: NVIDIA's default,
 * 48 KiB less its 1234 static bytes), which its occupancy honours. */
struct fake_function { char name[128]; int max_dynamic; };

static __thread int current;
static unsigned long long launches;
static unsigned int last_shared;
/* 16 functions; 4096 under FAKE_H100, whose machine code has any (below). */
static struct fake_function functions[4096];
static int nfunctions;

CUresult cuInit(unsigned int flags) { return flags ? 1 : 0; }
/* FAKE_DRIVER_VERSION=N: another driver's version. */
CUresult cuDriverGetVersion(int *v) {
  *v = getenv("FAKE_DRIVER_VERSION") ? atoi(getenv("FAKE_DRIVER_VERSION")) : 13000;
  return 0;
}
CUresult cuDeviceGetCount(int *count) { *count = 1; return 0; }
CUresult cuDeviceGet(int *device, int ordinal) { *device = ordinal; return ordinal ? 101 : 0; }
CUresult cuDeviceGetName(char *name, int len, int dev) {
  strncpy(name, "fake NVIDIA GPU", len);
  return 0;
}
CUresult cuDeviceTotalMem_v2(size_t *bytes, int dev) { *bytes = 1ull << 30; return 0; }
/* FAKE_H100=1: an H100's attributes (NVIDIA's cuBLAS divides by some in
 * cublasCreate) and machine code with functions and variables of any name,
 * so that NVIDIA's cuBLAS 13 gets through cublasCreate over the stand-in. */
static const int fake_h100_attributes[][2] = {
    {1, 1024}, {2, 1024}, {3, 1024}, {4, 64}, {5, 2147483647}, {6, 65535}, {7, 65535},
    {8, 49152}, {9, 65536}, {10, 32}, {11, 2147483647}, {12, 65536}, {13, 1980000},
    {14, 512}, {15, 1}, {16, 132}, {19, 1}, {30, 512}, {31, 1}, {33, 0x1b}, {36, 2619000},
    {37, 5120}, {38, 52428800}, {39, 2048}, {40, 3}, {41, 1}, {75, 9}, {76, 0}, {78, 1},
    {79, 1}, {80, 1}, {81, 233472}, {82, 65536}, {83, 1}, {86, 1}, {87, 2}, {88, 1},
    {89, 1}, {91, 1}, {95, 1}, {96, 1}, {97, 232448}, {98, 1}, {99, 1}, {100, 1},
    {101, 1}, {102, 1}, {106, 32}, {107, 1}, {108, 65536}, {109, 134217728},
    {111, 1024}, {112, 1}, {113, 1}, {114, 1}, {115, 1}, {116, 1}, {119, 0x9},
    {120, 1}, {121, 1}, {122, 1}};
static int fake_h100(void) { return getenv("FAKE_H100") != NULL; }
CUresult cuDeviceGetAttribute(int *pi, int attrib, int dev) {
  for (size_t i = 0; fake_h100() && i < sizeof fake_h100_attributes / sizeof *fake_h100_attributes;
       ++i)
    if (fake_h100_attributes[i][0] == attrib) {
      *pi = fake_h100_attributes[i][1];
      return 0;
    }
  switch (attrib) {
  case 1: *pi = 1024; break;        /* MAX_THREADS_PER_BLOCK */
  case 8: *pi = 48 * 1024; break;   /* MAX_SHARED_MEMORY_PER_BLOCK */
  case 16: *pi = 4; break;          /* MULTIPROCESSOR_COUNT */
  case 75: *pi = 9; break;          /* COMPUTE_CAPABILITY_MAJOR */
  case 76: *pi = 0; break;
  case 95: *pi = 1; break;          /* COOPERATIVE_LAUNCH */
  case 97: *pi = 96 * 1024; break;  /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
  case 102: *pi = 1; break;         /* VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED */
  case 103: *pi = 1; break;         /* HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED */
  case 107: *pi = 1; break;         /* GENERIC_COMPRESSION_SUPPORTED */
  case 119: *pi = 0x9; break;       /* MEMPOOL_SUPPORTED_HANDLE_TYPES: POSIX fd, fabric */
  default: *pi = 0;
  }
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { *ctx = (void *)0xc0; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { return 0; }
CUresult cuCtxSetCurrent(void *ctx) { current = ctx != NULL; return 0; }
/* FAKE_SYNC_RESULT=N: synchronizations fail with N, as after a kernel fault.
 * Each is counted (fake_synchronizations: the context's, then a stream's). */
static unsigned long long fake_ctx_syncs, fake_stream_syncs;
static CUresult fake_sync_result(void) {
  const char *forced = getenv("FAKE_SYNC_RESULT");
  if (forced)
    return atoi(forced);
  return current ? 0 : 201;
}
CUresult cuCtxSynchronize(void) {
  ++fake_ctx_syncs;
  return fake_sync_result();
}
void fake_synchronizations(unsigned long long out[2]) {
  out[0] = fake_ctx_syncs;
  out[1] = fake_stream_syncs;
}
/* FAKE_STREAM_BUSY: the NULL stream still has work (CUDA_ERROR_NOT_READY). */
static int fake_stream_live(void *stream);
CUresult cuStreamQuery(void *stream) {
  if (stream != NULL && !fake_stream_live(stream))
    return 400; /* CUDA_ERROR_INVALID_HANDLE */
  return getenv("FAKE_STREAM_BUSY") ? 600 : 0;
}
CUresult cuGetErrorName(CUresult error, const char **s) { *s = "CUDA_ERROR_FAKE"; return 0; }
/* Private tables: f8cff951-... (NVIDIA's cuBLAS asks for it), whose second
 * word says it is the stand-in's; and TOOLS_CONTEXT (21318c60-...), whose
 * slots 1 to 5 answer their index plus 0xfa40. */
static const unsigned long long fake_table[2] = {sizeof fake_table, 0xfa4e};
static int fake_slot1(void) { return 0xfa41; }
static int fake_slot4(void) { return 0xfa44; }
static int fake_slot5(void) { return 0xfa45; }
/* Streams: the stand-in's own objects, which its TOOLS_CONTEXT slot 6
 * reads as NVIDIA's slots do (CUDA_ERROR_INVALID_HANDLE for any other). */
/* Each counts the launches, event records and waits it was given
 * (fake_stream_work), and keeps its priority. */
struct fake_graph;
struct fake_stream {
  unsigned int magic;
  int priority;
  unsigned int flags;
  unsigned long long launches, records, waits, copies, fills;
  struct fake_graph *capture; /* what a capture records into (below: stream capture) */
};
/* Work asked of a capturing stream becomes a node of its capture (1), else 0. */
static int fake_capture_kernel(void *stream, void *f, const unsigned int grid[3],
                               const unsigned int block[3], unsigned int shared, void **params);
static int fake_capture_fill(void *stream, CUdeviceptr d, unsigned int v, unsigned int size,
                             size_t n);
static int fake_capture_copy(void *stream, int dst_type, uintptr_t d, int src_type, uintptr_t s,
                             size_t n);
static int fake_stream_live(void *stream) {
  return (uintptr_t)stream >= 0x10000 && ((struct fake_stream *)stream)->magic == 0x57ea;
}
CUresult cuStreamCreateWithPriority(void **stream, unsigned int flags, int priority) {
  struct fake_stream *s = calloc(1, sizeof *s);
  s->magic = 0x57ea;
  s->priority = priority;
  s->flags = flags;
  *stream = s;
  return flags > 1 ? 1 : 0;
}
CUresult cuStreamCreate(void **stream, unsigned int flags) {
  return cuStreamCreateWithPriority(stream, flags, 0);
}
/* A stream of its own, or the NULL stream (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD). */
CUresult cuStreamSynchronize(void *stream) {
  if ((uintptr_t)stream > 2 && !fake_stream_live(stream))
    return 400; /* CUDA_ERROR_INVALID_HANDLE */
  ++fake_stream_syncs;
  return fake_sync_result();
}
CUresult cuCtxGetStreamPriorityRange(int *least, int *greatest) { /* an H100's */
  *least = 0;
  *greatest = -5;
  return 0;
}
/* Its priority, launches, event records and waits (a live stream of its own). */
int fake_stream_work(void *stream, unsigned long long out[4]) {
  if (!fake_stream_live(stream))
    return -1;
  const struct fake_stream *s = stream;
  out[0] = (unsigned long long)(long long)s->priority;
  out[1] = s->launches;
  out[2] = s->records;
  out[3] = s->waits;
  return 0;
}
CUresult cuStreamDestroy_v2(void *stream) {
  if (stream == NULL || ((struct fake_stream *)stream)->magic != 0x57ea)
    return 400;
  ((struct fake_stream *)stream)->magic = 0;
  free(stream);
  return 0;
}
static int fake_live_streams(void *stream) {
  /* Only its own (live) streams: a small integer, a handle of zmlir's, is none. */
  if (stream != NULL && (uintptr_t)stream < 0x10000)
    return 400;
  return stream == NULL || ((struct fake_stream *)stream)->magic == 0x57ea ? 0 : 400;
}
static const void *fake_tools_context[7] = {(void *)sizeof fake_tools_context, fake_slot1,
                                            fake_slot1, fake_slot1, fake_slot4, fake_slot5,
                                            fake_live_streams};
CUresult cuGetExportTable(const void **table, const unsigned char *uuid) {
  if (uuid[0] == 0xf8)
    *table = fake_table;
  else if (uuid[0] == 0x21)
    *table = fake_tools_context;
  else
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  return 0;
}
/* CU_LIMIT_MALLOC_HEAP_SIZE, rounded to 1 KiB, and CU_LIMIT_STACK_SIZE,
 * rounded to 256 bytes, so a test sees the value came from here. */
static size_t heap_size = 8 << 20, stack_size = 1024;
CUresult cuCtxSetLimit(int limit, size_t value) {
  if (limit == 0)
    stack_size = (value + 255) & ~(size_t)255;
  else if (limit == 2)
    heap_size = (value + 1023) & ~(size_t)1023;
  else
    return 1;
  return 0;
}
CUresult cuCtxGetLimit(size_t *value, int limit) {
  if (limit != 0 && limit != 2)
    return 1;
  *value = limit ? heap_size : stack_size;
  return 0;
}
static unsigned long long managed_allocations;
unsigned long long fake_managed_allocations(void) { return managed_allocations; }
static struct { CUdeviceptr base; size_t size; } managed[64]; /* for the hints' checks */
CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags) {
  ++managed_allocations;
  *p = (CUdeviceptr)(uintptr_t)calloc(1, n);
  if (*p && managed_allocations <= 64)
    managed[managed_allocations - 1].base = *p, managed[managed_allocations - 1].size = n;
  return *p ? 0 : 2;
}
/* Pinned host memory: plain memory (the stand-in's device shares the host's). */
CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags) {
  (void)flags;
  *p = calloc(1, n);
  return *p ? 0 : 2;
}
CUresult cuMemFreeHost(void *p) {
  free(p);
  return 0;
}
CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned int flags) {
  (void)p, (void)n, (void)flags;
  return 0;
}
CUresult cuMemHostUnregister(void *p) {
  (void)p;
  return 0;
}
/* Device memory (cuMemAlloc_v2): a memfd mapped shared, which IPC exports.
 * A handle names the exporter's pid, its descriptor and that file's inode
 * ("fakeipc"); another process maps /proc/PID/fd/FD, counting the opens of
 * one handle. The codes are NVIDIA's (test/runtime/test_ipc.py). */
struct fake_allocation {
  CUdeviceptr base;
  size_t size;
  int fd, pid, exporter_fd, opens; /* pid 0: this process's own */
  struct fake_pool *pool;           /* a pool's block (pid -1) */
};
static struct fake_allocation allocations[64];
static int nallocations;
typedef struct { char reserved[64]; } fake_ipc_handle;
struct fake_ipc_data { char magic[8]; int pid, fd; unsigned long long inode, size; };
static struct fake_allocation *fake_allocation_of(CUdeviceptr p) {
  for (int i = 0; i < nallocations; ++i)
    if (p >= allocations[i].base && p < allocations[i].base + allocations[i].size)
      return &allocations[i];
  return NULL;
}
/* Whether [p, p + n) is inside one managed or device allocation (the hints'
 * check: past an allocation's end is CUDA_ERROR_INVALID_VALUE). */
static int fake_managed_range(CUdeviceptr p, size_t n) {
  for (int i = 0; i < 64; ++i)
    if (managed[i].size && p >= managed[i].base && p + n <= managed[i].base + managed[i].size)
      return 1;
  struct fake_allocation *a = fake_allocation_of(p);
  return a != NULL && p + n <= a->base + a->size;
}
static CUresult fake_map(CUdeviceptr *p, int fd, size_t n, int pid, int exporter_fd) {
  void *at = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (at == MAP_FAILED || nallocations == 64)
    return 2;
  allocations[nallocations++] = (struct fake_allocation){(uintptr_t)at, n, fd, pid, exporter_fd, 1};
  *p = (uintptr_t)at;
  return 0;
}
static void fake_unmap(struct fake_allocation *a) {
  munmap((void *)(uintptr_t)a->base, a->size);
  close(a->fd);
  *a = allocations[--nallocations];
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
  int fd = memfd_create("fake-device-memory", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, n) != 0)
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  return fake_map(p, fd, n, 0, -1);
}
struct fake_pool { int fd, imported, exported; size_t end; };
static struct fake_pool default_pool; /* cuMemAllocAsync's, below */
static unsigned long long default_pool_used;
CUresult cuMemFree_v2(CUdeviceptr p) {
  struct fake_allocation *a = fake_allocation_of(p);
  if (a == NULL)
    free((void *)(uintptr_t)p);
  else if (a->base == p && a->pid == 0) {
    if (a->pool == &default_pool) /* a block of the default pool, freed at once */
      default_pool_used -= a->size;
    fake_unmap(a);
  }
  else
    return 1;
  return 0;
}
CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p) {
  struct fake_allocation *a = fake_allocation_of(p);
  if (a == NULL)
    return 500; /* CUDA_ERROR_NOT_FOUND */
  *base = a->base;
  *size = a->size;
  return 0;
}
CUresult cuIpcGetMemHandle(fake_ipc_handle *handle, CUdeviceptr p) {
  struct fake_allocation *a = fake_allocation_of(p);
  struct stat st;
  if (a == NULL || a->pid != 0 || fstat(a->fd, &st) != 0)
    return 1;
  struct fake_ipc_data data = {"fakeipc", getpid(), a->fd, st.st_ino, a->size};
  memset(handle, 0, sizeof *handle);
  memcpy(handle, &data, sizeof data);
  return 0;
}
CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *p, fake_ipc_handle handle, unsigned int flags) {
  struct fake_ipc_data data;
  memcpy(&data, &handle, sizeof data);
  if (memcmp(data.magic, "fakeipc", 8) != 0)
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  if (data.pid == getpid())
    return 201; /* CUDA_ERROR_INVALID_CONTEXT: opened in its exporter */
  for (int i = 0; i < nallocations; ++i)
    if (allocations[i].pid == data.pid && allocations[i].exporter_fd == data.fd) {
      ++allocations[i].opens;
      *p = allocations[i].base;
      return 0;
    }
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", data.pid, data.fd);
  int fd = open(path, O_RDWR | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_ino != data.inode) {
    if (fd >= 0)
      close(fd);
    return 800; /* CUDA_ERROR_NOT_PERMITTED: the exporter freed it */
  }
  return fake_map(p, fd, data.size, data.pid, data.fd);
}
CUresult cuIpcCloseMemHandle(CUdeviceptr p) {
  struct fake_allocation *a = fake_allocation_of(p);
  if (a == NULL || a->base != p || a->pid == 0)
    return 1;
  if (--a->opens == 0)
    fake_unmap(a);
  return 0;
}
CUresult cuIpcOpenEventHandle(void **event, fake_ipc_handle handle) {
  return memcmp(&handle, "fakeipc", 8) == 0 ? 205 /* MAP_FAILED */ : 1;
}
/* Pools with POSIX file descriptor handles: a pool is a memfd, each block
 * a piece of it mapped (pid -1 in the table: no legacy IPC of it); the
 * shareable handle a descriptor of the memfd, a block's export data (once
 * the pool's handle was exported) its inode, offset and size ("fakepool"). */
static struct fake_pool pools[16];
static int npools;
struct fake_pool_data { char magic[8]; unsigned long long inode, offset, size; };
typedef struct { char reserved[64]; } fake_pool_export;
static unsigned long long fake_inode(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 ? st.st_ino : 0;
}
static CUresult fake_map_piece(CUdeviceptr *p, struct fake_pool *pool, size_t offset, size_t n) {
  void *at = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, pool->fd, (off_t)offset);
  if (at == MAP_FAILED || nallocations == 64)
    return 2;
  allocations[nallocations++] =
      (struct fake_allocation){(uintptr_t)at, n, dup(pool->fd), -1, (int)(offset >> 12), 1, pool};
  *p = (uintptr_t)at;
  return 0;
}
CUresult cuMemPoolCreate(struct fake_pool **pool, const int *props) {
  if (props[1] != 1 || npools == 16) /* handleTypes: POSIX file descriptors only */
    return 1;
  int fd = memfd_create("fake-pool", MFD_CLOEXEC);
  if (fd < 0)
    return 2;
  pools[npools] = (struct fake_pool){fd, 0, 0, 0};
  *pool = &pools[npools++];
  return 0;
}
CUresult cuMemPoolDestroy(struct fake_pool *pool) {
  close(pool->fd); /* its pieces keep the memory they map */
  pool->fd = -1;
  return 0;
}
CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, struct fake_pool *pool, void *s) {
  if (pool->imported)
    return 1;
  size_t offset = pool->end, length = (n + 4095) & ~(size_t)4095;
  if (ftruncate(pool->fd, offset + length) != 0)
    return 2;
  pool->end += length;
  return fake_map_piece(p, pool, offset, n);
}
/* The device's default pool (cuMemAllocAsync): device memory as
 * cuMemAlloc_v2's, its amounts and release threshold kept; a block freed
 * goes at once (the stand-in's work is done when it is issued). */
static struct fake_pool default_pool = {-1, 0, 0, 0};
static unsigned long long default_pool_used_high, default_pool_threshold;
static unsigned long long default_pool_allocations;
CUresult cuDeviceGetDefaultMemPool(struct fake_pool **pool, int dev) {
  *pool = &default_pool;
  return 0;
}
CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, void *stream) {
  CUresult code = cuMemAlloc_v2(p, n);
  if (code == 0) {
    struct fake_allocation *a = fake_allocation_of(*p);
    a->pool = &default_pool;
    default_pool_used += n;
    if (default_pool_used > default_pool_used_high)
      default_pool_used_high = default_pool_used;
    ++default_pool_allocations;
  }
  return code;
}
CUresult cuMemFreeAsync(CUdeviceptr p, void *stream) {
  struct fake_allocation *a = fake_allocation_of(p);
  if (a == NULL || a->base != p || (a->pid != -1 && a->pool != &default_pool))
    return 1;
  if (a->pool == &default_pool)
    default_pool_used -= a->size;
  fake_unmap(a);
  return 0;
}
/* CUmemPool_attribute: 4 RELEASE_THRESHOLD, 5/6 RESERVED, 7/8 USED (current, high) */
CUresult cuMemPoolGetAttribute(struct fake_pool *pool, int attr, void *value) {
  if (pool != &default_pool)
    return 1;
  if (attr >= 1 && attr <= 3)
    *(int *)value = 1;
  else if (attr == 4)
    *(unsigned long long *)value = default_pool_threshold;
  else if (attr == 5 || attr == 7)
    *(unsigned long long *)value = default_pool_used;
  else if (attr == 6 || attr == 8)
    *(unsigned long long *)value = default_pool_used_high;
  else
    return 1;
  return 0;
}
CUresult cuMemPoolSetAttribute(struct fake_pool *pool, int attr, void *value) {
  if (pool != &default_pool || attr != 4)
    return 1;
  default_pool_threshold = *(unsigned long long *)value;
  return 0;
}
CUresult cuMemPoolTrimTo(struct fake_pool *pool, size_t keep) {
  return pool == &default_pool ? 0 : 1;
}
unsigned long long fake_default_pool_allocations(void) { return default_pool_allocations; }
unsigned long long fake_default_pool_used(void) { return default_pool_used; }
CUresult cuMemPoolExportToShareableHandle(int *fd, struct fake_pool *pool, int type,
                                          unsigned long long flags) {
  if (type != 1 || pool->imported)
    return 1;
  *fd = dup(pool->fd);
  pool->exported = 1;
  return 0;
}
CUresult cuMemPoolImportFromShareableHandle(struct fake_pool **pool, void *handle, int type,
                                            unsigned long long flags) {
  if (type != 1 || npools == 16)
    return 1;
  int fd = dup((int)(uintptr_t)handle);
  if (fd < 0)
    return 1;
  pools[npools] = (struct fake_pool){fd, 1, 0, 0};
  *pool = &pools[npools++];
  return 0;
}
CUresult cuMemPoolExportPointer(fake_pool_export *out, CUdeviceptr p) {
  struct fake_allocation *a = fake_allocation_of(p);
  /* An H200's answer before the pool's handle was exported. */
  if (a == NULL || a->base != p || a->pid != -1 || !a->pool->exported)
    return 1;
  struct fake_pool_data data = {"fakepool", fake_inode(a->fd), (size_t)a->exporter_fd << 12,
                                a->size};
  memset(out, 0, sizeof *out);
  memcpy(out, &data, sizeof data);
  return 0;
}
CUresult cuMemPoolImportPointer(CUdeviceptr *p, struct fake_pool *pool, fake_pool_export *in) {
  struct fake_pool_data data;
  memcpy(&data, in, sizeof data);
  if (!pool->imported || memcmp(data.magic, "fakepool", 8) != 0 ||
      data.inode != fake_inode(pool->fd))
    return 1;
  return fake_map_piece(p, pool, data.offset, data.size);
}
/* Virtual memory management: a reservation is PROT_NONE pages, an
 * allocation a memfd (its handle the descriptor + 0x1000), a mapping the
 * memfd mapped there without access until cuMemSetAccess; granularity
 * 2 MiB. Only what the passthrough's tests ask, with NVIDIA's documented
 * codes. */
#define FAKE_GRANULE (2ull << 20)
typedef struct { int type, handle_types, location_type, location_id; void *win32;
                 unsigned char flags[8]; } fake_allocation_prop;
typedef struct { int type, id; int flags; } fake_access_desc;
static struct { CUdeviceptr base; size_t size; unsigned long long handle; int access; } vmaps[64];
static int nvmaps;
static int fake_vmm_fd(unsigned long long handle) {
  struct stat st;
  int fd = (int)(handle - 0x1000);
  return handle >= 0x1000 && fstat(fd, &st) == 0 ? fd : -1;
}
CUresult cuMemGetAllocationGranularity(size_t *g, const fake_allocation_prop *prop, int option) {
  *g = FAKE_GRANULE;
  return 0;
}
CUresult cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr addr,
                             unsigned long long flags) {
  if (size % FAKE_GRANULE)
    return 1;
  void *at = mmap(NULL, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (at == MAP_FAILED)
    return 2;
  *p = (uintptr_t)at;
  return 0;
}
CUresult cuMemAddressFree(CUdeviceptr p, size_t size) {
  return munmap((void *)(uintptr_t)p, size) == 0 ? 0 : 1;
}
CUresult cuMemCreate(unsigned long long *handle, size_t size, const fake_allocation_prop *prop,
                     unsigned long long flags) {
  if (size % FAKE_GRANULE || prop->handle_types & ~1)
    return 1;
  int fd = memfd_create(prop->handle_types ? "fake-vmm-shareable" : "fake-vmm", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, size) != 0)
    return 2;
  *handle = 0x1000 + fd;
  return 0;
}
CUresult cuMemRelease(unsigned long long handle) {
  int fd = fake_vmm_fd(handle);
  return fd < 0 ? 1 : (close(fd), 0); /* mappings keep the memory */
}
CUresult cuMemMap(CUdeviceptr p, size_t size, size_t offset, unsigned long long handle,
                  unsigned long long flags) {
  int fd = fake_vmm_fd(handle);
  if (fd < 0 || p % FAKE_GRANULE || size % FAKE_GRANULE || nvmaps == 64)
    return 1;
  if (mmap((void *)(uintptr_t)p, size, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, (off_t)offset) ==
      MAP_FAILED)
    return 1;
  vmaps[nvmaps].base = p;
  vmaps[nvmaps].size = size;
  vmaps[nvmaps].handle = handle;
  vmaps[nvmaps++].access = 0;
  return 0;
}
CUresult cuMemUnmap(CUdeviceptr p, size_t size) {
  for (int i = 0; i < nvmaps; ++i)
    if (vmaps[i].base == p && vmaps[i].size == size) {
      mmap((void *)(uintptr_t)p, size, PROT_NONE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
      vmaps[i] = vmaps[--nvmaps];
      return 0;
    }
  return 1;
}
CUresult cuMemSetAccess(CUdeviceptr p, size_t size, const fake_access_desc *desc, size_t n) {
  for (int i = 0; i < nvmaps; ++i)
    if (vmaps[i].base == p && vmaps[i].size == size && n == 1) {
      vmaps[i].access = desc->flags;
      return mprotect((void *)(uintptr_t)p, size,
                      desc->flags ? PROT_READ | PROT_WRITE : PROT_NONE) ? 1 : 0;
    }
  return 1;
}
CUresult cuMemGetAccess(unsigned long long *flags, const int *location, CUdeviceptr p) {
  for (int i = 0; i < nvmaps; ++i)
    if (p >= vmaps[i].base && p < vmaps[i].base + vmaps[i].size) {
      *flags = vmaps[i].access;
      return 0;
    }
  return 1;
}
CUresult cuMemRetainAllocationHandle(unsigned long long *handle, void *addr) {
  for (int i = 0; i < nvmaps; ++i)
    if ((uintptr_t)addr >= vmaps[i].base && (uintptr_t)addr < vmaps[i].base + vmaps[i].size) {
      *handle = 0x1000 + dup(fake_vmm_fd(vmaps[i].handle));
      return 0;
    }
  return 1;
}
CUresult cuMemGetAllocationPropertiesFromHandle(fake_allocation_prop *prop,
                                                unsigned long long handle) {
  int fd = fake_vmm_fd(handle);
  char path[64], target[64] = "";
  if (fd < 0)
    return 1;
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  if (readlink(path, target, sizeof target - 1) < 0)
    return 1;
  memset(prop, 0, sizeof *prop);
  prop->type = prop->location_type = 1;
  prop->handle_types = strstr(target, "shareable") != NULL;
  return 0;
}
CUresult cuMemExportToShareableHandle(int *out, unsigned long long handle, int type,
                                      unsigned long long flags) {
  fake_allocation_prop prop;
  if (type != 1 || cuMemGetAllocationPropertiesFromHandle(&prop, handle) || !prop.handle_types)
    return 1;
  *out = dup(fake_vmm_fd(handle));
  return 0;
}
CUresult cuMemImportFromShareableHandle(unsigned long long *handle, void *os_handle, int type) {
  int fd = type == 1 ? dup((int)(uintptr_t)os_handle) : -1;
  if (fd < 0)
    return 1;
  *handle = 0x1000 + fd;
  return 0;
}
/* Blocking copies: a null address, or memory without access (a virtual
 * memory reservation unmapped, or mapped without access: PROT_NONE here), is
 * NVIDIA's CUDA_ERROR_INVALID_VALUE (counted: fake_blocking_copies). */
static unsigned long long blocking_copies;
unsigned long long fake_blocking_copies(void) { return blocking_copies; }
/* Whether the byte at `p` reads (and, where `write`, writes back) without a fault. */
static int fake_reaches(uintptr_t p, int write) {
  char byte;
  struct iovec local = {&byte, 1}, remote = {(void *)p, 1};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == 1 &&
         (!write || process_vm_writev(getpid(), &local, 1, &remote, 1, 0) == 1);
}
static CUresult fake_copy(uintptr_t d, uintptr_t s, size_t n) {
  if (n != 0 && (d == 0 || s == 0 || !fake_reaches(s, 0) || !fake_reaches(s + n - 1, 0) ||
                 !fake_reaches(d, 1) || !fake_reaches(d + n - 1, 1)))
    return 1;
  memmove((void *)d, (const void *)s, n);
  ++blocking_copies;
  return 0;
}
CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n) { return fake_copy(d, s, n); }
CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) {
  return fake_copy(d, (uintptr_t)s, n);
}
CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) {
  return fake_copy((uintptr_t)d, s, n);
}
CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n) { return fake_copy(d, s, n); }
/* Asynchronous copies: on the NULL stream or a live one of its own, counted
 * per stream (fake_stream_copies); a null address is NVIDIA's
 * CUDA_ERROR_INVALID_VALUE. */
static unsigned long long null_stream_copies;
unsigned long long fake_stream_copies(void *stream) {
  return stream == NULL ? null_stream_copies
                        : fake_stream_live(stream) ? ((struct fake_stream *)stream)->copies : 0;
}
/* A capture records a CUDA_MEMCPY3D whose ends are of CUmemorytype `dst_type` and
 * `src_type` (HOST 1, DEVICE 2, UNIFIED 4: cuMemcpyAsync's). */
static CUresult fake_copy_async_typed(uintptr_t d, uintptr_t s, size_t n, void *stream,
                                      int dst_type, int src_type) {
  if (stream != NULL && !fake_stream_live(stream))
    return 400;
  if (n != 0 && (d == 0 || s == 0))
    return 1;
  if (fake_capture_copy(stream, dst_type, d, src_type, s, n))
    return 0;
  memmove((void *)d, (const void *)s, n);
  ++*(stream == NULL ? &null_stream_copies : &((struct fake_stream *)stream)->copies);
  return 0;
}
CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, void *stream) {
  return fake_copy_async_typed(d, s, n, stream, 4, 4);
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, void *stream) {
  return fake_copy_async_typed(d, (uintptr_t)s, n, stream, 2, 1);
}
CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, void *stream) {
  return fake_copy_async_typed((uintptr_t)d, s, n, stream, 1, 2);
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, void *stream) {
  return fake_copy_async_typed(d, s, n, stream, 2, 2);
}
/* Fills: any memory but the first page (NVIDIA's CUDA_ERROR_INVALID_VALUE
 * there); each is counted (fake_memsets). */
static unsigned long long memsets;
unsigned long long fake_memsets(void) { return memsets; }
static int fake_fillable(CUdeviceptr d, size_t bytes) {
  ++memsets;
  return bytes == 0 || d >= 4096;
}
CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) {
  if (!fake_fillable(d, n))
    return 1;
  memset((void *)(uintptr_t)d, v, n);
  return 0;
}
CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) {
  if (!fake_fillable(d, 2 * n))
    return 1;
  for (size_t i = 0; i < n; ++i)
    ((unsigned short *)(uintptr_t)d)[i] = v;
  return 0;
}
CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n) {
  if (!fake_fillable(d, 4 * n))
    return 1;
  for (size_t i = 0; i < n; ++i)
    ((unsigned int *)(uintptr_t)d)[i] = v;
  return 0;
}
/* Asynchronous fills: on the NULL stream or a live one of its own, whose
 * fills are counted (fake_stream_fills). */
static int fake_fill_stream(void *stream) {
  if (stream != NULL && !fake_stream_live(stream))
    return 0;
  if (stream != NULL)
    ++((struct fake_stream *)stream)->fills;
  return 1;
}
unsigned long long fake_stream_fills(void *stream) {
  return fake_stream_live(stream) ? ((struct fake_stream *)stream)->fills : 0;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, void *stream) {
  if (fake_stream_live(stream) && fake_capture_fill(stream, d, v, 1, n))
    return 0;
  return fake_fill_stream(stream) ? cuMemsetD8_v2(d, v, n) : 400;
}
CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, void *stream) {
  if (fake_stream_live(stream) && fake_capture_fill(stream, d, v, 2, n))
    return 0;
  return fake_fill_stream(stream) ? cuMemsetD16_v2(d, v, n) : 400;
}
CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, void *stream) {
  if (fake_stream_live(stream) && fake_capture_fill(stream, d, v, 4, n))
    return 0;
  return fake_fill_stream(stream) ? cuMemsetD32_v2(d, v, n) : 400;
}
/* The PTX of the last module loaded: its module variables are what
 * cuModuleGetGlobal_v2 finds. */
static char *module_ptx;
/* What loads took: PTX (JIT-assembled every time), the stand-in's cubins. */
static unsigned long long ptx_loads, cubin_loads, links;
unsigned long long fake_ptx_loads(void) { return ptx_loads; }
unsigned long long fake_cubin_loads(void) { return cubin_loads; }
unsigned long long fake_links(void) { return links; }
CUresult cuModuleLoadDataEx(void **module, const void *image, unsigned int n, int *options,
                            void **values) {
  if (strstr(image, ".entry zmlir_probe") != NULL) { /* zmlir's capture probe: not counted */
    *module = (void *)0x42;
    return 0;
  }
  ++ptx_loads;
  free(module_ptx);
  module_ptx = strdup(image);
  *module = (void *)0x40;
  return 0;
}
/* NVIDIA machine code: a cubin (ELF) or a fatbin (a stand-in's: the magic
 * is enough). */
/* The linker's cubin of PTX: "\x7f" "ELFFAKE" and the PTX, which a load
 * reads as cuModuleLoadDataEx reads PTX (FAKE_REFUSE_CUBINS: it refuses it,
 * as a driver refuses another's machine code). */
static const char fake_cubin_magic[8] = "\x7f" "ELFFAKE";
struct fake_link { char *image; size_t size; };
CUresult cuLinkCreate_v2(unsigned int n, int *options, void **values, struct fake_link **state) {
  *state = calloc(1, sizeof **state);
  return 0;
}
CUresult cuLinkAddData_v2(struct fake_link *state, int type, void *data, size_t size,
                          const char *name, unsigned int n, int *options, void **values) {
  if (type != 1 || state->image != NULL) /* CU_JIT_INPUT_PTX, one input */
    return 1;
  state->image = malloc(8 + size);
  memcpy(state->image, fake_cubin_magic, 8);
  memcpy(state->image + 8, data, size);
  state->size = 8 + size;
  return 0;
}
CUresult cuLinkComplete(struct fake_link *state, void **cubin, size_t *size) {
  ++links;
  *cubin = state->image;
  *size = state->size;
  return state->image ? 0 : 1;
}
CUresult cuLinkDestroy(struct fake_link *state) {
  free(state->image);
  free(state);
  return 0;
}
CUresult cuModuleLoadData(void **module, const void *image) {
  if (memcmp(image, fake_cubin_magic, 8) == 0) {
    if (getenv("FAKE_REFUSE_CUBINS"))
      return 209; /* CUDA_ERROR_NO_BINARY_FOR_GPU */
    ++cubin_loads;
    free(module_ptx);
    module_ptx = strdup((const char *)image + 8);
    *module = (void *)0x40;
    return 0;
  }
  if (memcmp(image, "\x7f" "ELF", 4) != 0 && *(const unsigned *)image != 0xBA55ED50u)
    return 209; /* CUDA_ERROR_NO_BINARY_FOR_GPU */
  free(module_ptx);
  module_ptx = NULL;
  *module = (void *)0x41;
  return 0;
}
CUresult cuModuleUnload(void *module) { return 0; }
CUresult cuModuleGetFunction(void **f, void *module, const char *name) {
  if (nfunctions == (fake_h100() ? 4096 : 16))
    return 2;
  if (module == (void *)0x41 && strcmp(name, "add_scalar") != 0 && !fake_h100())
    return 500; /* CUDA_ERROR_NOT_FOUND: the machine code has add_scalar only */
  strncpy(functions[nfunctions].name, name, sizeof functions[0].name - 1);
  *f = &functions[nfunctions++];
  return 0;
}
/* The machine code's functions: add_scalar alone. */
CUresult cuModuleGetFunctionCount(unsigned *count, void *module) {
  *count = module == (void *)0x41;
  return 0;
}
CUresult cuModuleEnumerateFunctions(void **f, unsigned count, void *module) {
  return count == 1 && module == (void *)0x41 ? cuModuleGetFunction(f, module, "add_scalar") : 1;
}
CUresult cuFuncGetName(const char **name, void *f) {
  *name = ((struct fake_function *)f)->name;
  return 0;
}
/* A module variable is the declaration `.global ... .b8 NAME[SIZE];` in the
 * loaded PTX (as zmlir's NVPTX declares every one). Variables declared
 * `.attribute(.managed)` are placed in the managed arena, which
 * cuPointerGetAttribute reports as managed, as the real driver does. */
static unsigned char managed_arena[4096], device_arena[4096];
static size_t managed_used, device_used;
static struct { char name[64]; CUdeviceptr address; size_t size; } globals[16];
static int nglobals;
static unsigned char fake_h100_variables[1 << 20];
static size_t fake_h100_variables_used;
CUresult cuModuleGetGlobal_v2(CUdeviceptr *p, size_t *bytes, void *module, const char *name) {
  if (module == (void *)0x41 && fake_h100()) { /* any variable: 1 KiB of its own */
    if (fake_h100_variables_used == sizeof fake_h100_variables)
      return 2;
    *p = (CUdeviceptr)(uintptr_t)(fake_h100_variables + fake_h100_variables_used);
    fake_h100_variables_used += 1024;
    if (bytes)
      *bytes = 1024;
    return 0;
  }
  for (int i = 0; i < nglobals; ++i)
    if (strcmp(globals[i].name, name) == 0) {
      *p = globals[i].address;
      *bytes = globals[i].size;
      return 0;
    }
  char pattern[80];
  snprintf(pattern, sizeof pattern, " %s[", name);
  const char *at = module_ptx && strlen(name) < 64 ? strstr(module_ptx, pattern) : NULL;
  if (at == NULL || nglobals == 16)
    return 500; /* CUDA_ERROR_NOT_FOUND */
  const char *line = at;
  while (line > module_ptx && line[-1] != '\n')
    --line;
  size_t size = strtoul(at + strlen(pattern), NULL, 10);
  int managed = memmem(line, at - line, ".attribute(.managed)", 20) != NULL;
  unsigned char *arena = managed ? managed_arena : device_arena;
  size_t *used = managed ? &managed_used : &device_used;
  if (strstr(line, ".global") == NULL || strstr(line, ".global") > at ||
      *used + size > sizeof managed_arena)
    return 500;
  strcpy(globals[nglobals].name, name);
  globals[nglobals].address = *p = (CUdeviceptr)(uintptr_t)(arena + *used);
  globals[nglobals++].size = *bytes = size;
  *used += (size + 15) & ~(size_t)15;
  return 0;
}
CUresult cuPointerGetAttribute(void *data, int attribute, CUdeviceptr ptr) {
  if (attribute != 8) /* CU_POINTER_ATTRIBUTE_IS_MANAGED */
    return 1;
  uintptr_t a = (uintptr_t)ptr, base = (uintptr_t)managed_arena;
  *(unsigned int *)data = a >= base && a < base + sizeof managed_arena;
  return 0;
}
/* Attributes as a driver that compiled the kernel knows them: 9 is
 * PREFERRED_SHARED_MEMORY_CARVEOUT, settable; 1 (SHARED_SIZE_BYTES) is
 * the static shared memory of add_scalar's machine code. */
static int carveout = -1;
/* Opt-ins to dynamic shared memory (MAX_DYNAMIC_SHARED_SIZE_BYTES), counted. */
static unsigned long long shared_optins;
unsigned long long fake_shared_optins(void) { return shared_optins; }
CUresult cuFuncSetAttribute(void *f, int attrib, int value) {
  if (attrib == 9)
    carveout = value;
  if (attrib == 8) {
    ++shared_optins;
    if (f != NULL)
      ((struct fake_function *)f)->max_dynamic = value;
  }
  return 0;
}
CUresult cuFuncGetAttribute(int *value, int attrib, void *f) {
  switch (attrib) {
  case 1: *value = 1234; return 0;
  case 9: *value = carveout; return 0;
  case 0: *value = 1024; return 0;
  default: *value = 0; return 0;
  }
}
/* add_scalar(u32 *p, u32 v): its parameters' offsets and sizes. */
CUresult cuFuncGetParamInfo(void *f, size_t index, size_t *offset, size_t *size) {
  if (index > 1)
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  *offset = index ? 8 : 0;
  *size = index ? 4 : 8;
  return 0;
}
/* launch_add(u32 *p, u32 v, u64 child) runs as a kernel linked with zmlir's
 * libcudadevrt stand-in would, one thread launching `child<<<1,
 * blockDim.x>>>(p, v)`: a record in the launch queue whose address the
 * driver wrote to the module variable __zmlir_device_launches (the layout of
 * zmlir/runtime/cuda/device_launch.py); `child` is the kernel's address as
 * zmlir's device code has it. copy_words(u32 *dst, u32 *src, u32 n) makes
 * a device-side cudaMemcpyAsync of n words: a record of kernel 1. */
static CUresult fake_device_launch(void **params, unsigned int threads) {
  CUdeviceptr variable = 0;
  for (int i = 0; i < nglobals; ++i)
    if (strcmp(globals[i].name, "__zmlir_device_launches") == 0)
      variable = globals[i].address;
  if (variable == 0)
    return 1; /* the driver never asked for the queue's variable */
  unsigned char *queue = (unsigned char *)(uintptr_t) * (CUdeviceptr *)(uintptr_t)variable;
  unsigned int *header = (unsigned int *)queue; /* claimed, capacity, dropped */
  if (header[0] >= header[1]) {
    ++header[2];
    return 0;
  }
  unsigned char *record = queue + 64 + (size_t)header[0]++ * (64 + 4096);
  unsigned int shape[8] = {1, 1, 1, threads, 1, 1, 0, 1}; /* grid, block, shared, launched */
  memcpy(record + 8, shape, sizeof shape);
  memset(record + 40, 0, 8); /* the stream */
  if (threads == 0) { /* a copy: kernel 1, {dst, src, bytes} */
    unsigned long long copy[4] = {1, *(CUdeviceptr *)params[0], *(CUdeviceptr *)params[1],
                                  4ull * *(unsigned int *)params[2]};
    memcpy(record, copy, 8);
    memcpy(record + 64, copy + 1, 24);
    return 0;
  }
  memcpy(record, params[2], 8);
  memcpy(record + 64, params[0], 8);
  memcpy(record + 72, params[1], 4);
  return 0;
}
static CUresult fake_device_copy(void **params) { return fake_device_launch(params, 0); }

CUresult cuLaunchKernel(void *f, unsigned int gx, unsigned int gy, unsigned int gz,
                        unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                        void *stream, void **params, void **extra) {
  if (!current)
    return 201; /* CUDA_ERROR_INVALID_CONTEXT */
  if ((stream != NULL && !fake_stream_live(stream)) || (params != NULL && extra != NULL))
    return 1;
  void *packed[2];
  if (extra != NULL) { /* add_scalar's p and v at 0 and 8 in CU_LAUNCH_PARAM_BUFFER_POINTER */
    char *buffer = NULL;
    size_t size = 0;
    for (int i = 0; extra[i] != NULL; i += 2)
      if (extra[i] == (void *)1)
        buffer = extra[i + 1];
      else if (extra[i] == (void *)2)
        size = *(size_t *)extra[i + 1];
    if (buffer == NULL || size < 12)
      return 1; /* CUDA_ERROR_INVALID_VALUE */
    packed[0] = buffer;
    packed[1] = buffer + 8;
    params = packed;
  }
  const unsigned int grid[3] = {gx, gy, gz}, block[3] = {bx, by, bz};
  if (fake_capture_kernel(stream, f, grid, block, shared, params))
    return 0;
  const struct fake_function *fn = f;
  if (strcmp(fn->name, "add_scalar") == 0) {
    unsigned int *p = (unsigned int *)(uintptr_t) * (CUdeviceptr *)params[0];
    unsigned int v = *(unsigned int *)params[1];
    for (unsigned int i = 0; i < bx; ++i)
      p[i] += v;
  } else if (strcmp(fn->name, "launch_add") == 0 || strcmp(fn->name, "copy_words") == 0) {
    CUresult code = fn->name[0] == 'c' ? fake_device_copy(params) : fake_device_launch(params, bx);
    if (code != 0)
      return code;
  }
  last_shared = shared;
  __atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED);
  if (stream != NULL)
    ++((struct fake_stream *)stream)->launches;
  return 0;
}
unsigned long long fake_launches(void) { return launches; }

/* Cooperative: at most 2 blocks per multiprocessor of 4 are resident. */
static unsigned long long cooperative_launches;
/* The dynamic shared memory function `f` may launch with: its opt-in, else
 * NVIDIA's default (48 KiB less its 1234 static bytes). */
static size_t fake_max_dynamic(void *f) {
  int opted = f ? ((struct fake_function *)f)->max_dynamic : 0;
  return (size_t)(opted ? opted : 48 * 1024 - 1234);
}
/* 2, and one more per KiB of shared memory asked (which tells what was
 * asked); as NVIDIA's, 0 where the dynamic shared memory is above the
 * function's opt-in (its launch would fail). */
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int block, size_t smem) {
  *n = smem > fake_max_dynamic(f) ? 0 : 2 + (int)(smem / 1024);
  return 0;
}
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, void *f, int block,
                                                              size_t smem, unsigned int flags) {
  return cuOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, smem);
}
CUresult cuLaunchCooperativeKernel(void *f, unsigned int gx, unsigned int gy, unsigned int gz,
                                   unsigned int bx, unsigned int by, unsigned int bz,
                                   unsigned int shared, void *stream, void **params) {
  if ((unsigned long long)gx * gy * gz > 2 * 4)
    return 720; /* CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE */
  CUresult code = cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, params, NULL);
  if (code == 0)
    ++cooperative_launches;
  return code;
}
unsigned long long fake_cooperative_launches(void) { return cooperative_launches; }

/* Thread-block clusters (compute capability 9.0): cuLaunchKernelEx takes
 * the cluster dimension (launch attribute 4) and the cooperative flag (2);
 * a grid of whole clusters launches (counted: fake_cluster_launches), and
 * 3 clusters of any size are resident. */
typedef struct { int id; char pad[4]; unsigned int value[16]; } fake_launch_attribute;
typedef struct {
  unsigned int grid[3], block[3], shared;
  void *stream;
  fake_launch_attribute *attrs;
  unsigned int count;
} fake_launch_config;
static unsigned long long cluster_launches;
CUresult cuLaunchKernelEx(const fake_launch_config *c, void *f, void **params, void **extra) {
  unsigned int cluster[3] = {1, 1, 1};
  int cooperative = 0;
  for (unsigned int i = 0; i < c->count; ++i) {
    if (c->attrs[i].id == 4)
      memcpy(cluster, c->attrs[i].value, sizeof cluster);
    else if (c->attrs[i].id == 2)
      cooperative = c->attrs[i].value[0] != 0;
    else
      return 1;
  }
  for (int d = 0; d < 3; ++d)
    if (cluster[d] == 0 || c->grid[d] % cluster[d])
      return 912; /* CUDA_ERROR_INVALID_CLUSTER_SIZE */
  CUresult code = cooperative ? cuLaunchCooperativeKernel(f, c->grid[0], c->grid[1], c->grid[2],
                                                          c->block[0], c->block[1], c->block[2],
                                                          c->shared, c->stream, params)
                              : cuLaunchKernel(f, c->grid[0], c->grid[1], c->grid[2], c->block[0],
                                               c->block[1], c->block[2], c->shared, c->stream,
                                               params, extra);
  if (code == 0)
    ++cluster_launches;
  return code;
}
/* As NVIDIA's: CUDA_ERROR_INVALID_VALUE for an empty grid or block, or more
 * dynamic shared memory than the function is opted in to. */
CUresult cuOccupancyMaxActiveClusters(int *n, void *f, const fake_launch_config *c) {
  for (int d = 0; d < 3; ++d)
    if (c->grid[d] == 0 || c->block[d] == 0)
      return 1;
  if (c->shared > fake_max_dynamic(f))
    return 1;
  *n = c->stream == NULL ? 3 : -1; /* the driver's copy has no stream */
  return 0;
}
unsigned long long fake_cluster_launches(void) { return cluster_launches; }

/* Events: a record stamps the launches made so far, and the elapsed time
 * between two records is 1 ms per launch between them; records are counted
 * (fake_event_records). FAKE_EVENT_RESULT=N: records fail with N. */
struct fake_event {
  unsigned int flags;
  int recorded;
  unsigned long long at;
};
static unsigned long long event_records;
CUresult cuEventCreate(void **event, unsigned int flags) {
  struct fake_event *e = calloc(1, sizeof *e);
  e->flags = flags;
  *event = e;
  return 0;
}
CUresult cuEventDestroy_v2(void *event) {
  free(event);
  return 0;
}
CUresult cuEventRecord(void *event, void *stream) {
  const char *forced = getenv("FAKE_EVENT_RESULT");
  if (forced)
    return atoi(forced);
  if (!current)
    return 201; /* CUDA_ERROR_INVALID_CONTEXT */
  if (stream != NULL && !fake_stream_live(stream))
    return 1;
  struct fake_event *e = event;
  e->recorded = 1;
  if (stream != NULL)
    ++((struct fake_stream *)stream)->records;
  e->at = launches;
  __atomic_add_fetch(&event_records, 1, __ATOMIC_RELAXED);
  return 0;
}
CUresult cuEventQuery(void *event) { return 0; }
/* Waits of the NULL stream (fake_null_waits). */
static unsigned long long null_waits;
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned int flags) {
  if ((stream != NULL && !fake_stream_live(stream)) || event == NULL || flags != 0)
    return 400;
  if (stream == NULL)
    ++null_waits;
  else
    ++((struct fake_stream *)stream)->waits;
  return 0;
}
unsigned long long fake_null_waits(void) { return null_waits; }
/* The flags a live stream was created with (CU_STREAM_NON_BLOCKING: 1); -1 for any other. */
int fake_stream_flags(void *stream) {
  return fake_stream_live(stream) ? (int)((struct fake_stream *)stream)->flags : -1;
}
CUresult cuEventSynchronize(void *event) { return 0; }
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  const struct fake_event *a = start, *b = end;
  if (!a->recorded || !b->recorded || ((a->flags | b->flags) & 2)) /* DISABLE_TIMING */
    return 400; /* CUDA_ERROR_INVALID_HANDLE */
  *ms = (float)(b->at - a->at);
  return 0;
}
unsigned long long fake_event_records(void) { return event_records; }

/* Arrays, texture and surface objects (the passthrough's vendor textures,
 * ZMLIR_NATIVE_TEXTURES=1): an array is host memory of its extent, known
 * to fake_is_array, rows of width x texel bytes; a texture or surface object a number from
 * 0x7e000001 that keeps the resource description it was made of, refused
 * (CUDA_ERROR_INVALID_HANDLE) unless its array is one of these. Every call
 * is counted (fake_texture_calls). */
#define FAKE_ARRAY_TAG 0xa11a7a11a7ull
typedef struct { size_t width, height; int format; unsigned channels; } fake_array_desc;
typedef struct {
  size_t width, height, depth;
  int format;
  unsigned channels, flags;
} fake_array3d_desc;
struct fake_array {
  unsigned long long tag;
  fake_array3d_desc d;
  unsigned char *data;
  size_t pitch, bytes;
};
typedef struct { /* CUDA_MEMCPY2D */
  size_t src_x, src_y;
  int src_type;
  const void *src_host;
  CUdeviceptr src_device;
  struct fake_array *src_array;
  size_t src_pitch, dst_x, dst_y;
  int dst_type;
  void *dst_host;
  CUdeviceptr dst_device;
  struct fake_array *dst_array;
  size_t dst_pitch, width, height;
} fake_memcpy2d;
typedef struct { int type; unsigned long long res[16]; unsigned flags; } fake_resource_desc;
static unsigned long long texture_calls;
static struct { int live, surface; fake_resource_desc res; } texture_objects[16];
unsigned long long fake_texture_calls(void) { return texture_calls; }
static struct fake_array *arrays[64]; /* every one made, live or not */
static int narrays;
int fake_is_array(const struct fake_array *a) {
  for (int i = 0; i < narrays; ++i)
    if (arrays[i] == a)
      return a->tag == FAKE_ARRAY_TAG;
  return 0;
}
static size_t fake_format_bytes(int format) {
  return format == 0x01 || format == 0x08 ? 1 : format == 0x02 || format == 0x09 || format == 0x10
                                                 ? 2 : 4;
}
static CUresult fake_array_new(struct fake_array **out, fake_array3d_desc d) {
  ++texture_calls;
  if (narrays == 64)
    return 2;
  struct fake_array *a = calloc(1, sizeof *a);
  arrays[narrays++] = a;
  a->tag = FAKE_ARRAY_TAG;
  a->d = d;
  a->pitch = d.width * d.channels * fake_format_bytes(d.format);
  a->bytes = a->pitch * (d.height ? d.height : 1) * (d.depth ? d.depth : 1);
  a->data = calloc(1, a->bytes);
  *out = a;
  return 0;
}
CUresult cuArrayCreate_v2(struct fake_array **out, const fake_array_desc *d) {
  fake_array3d_desc d3 = {d->width, d->height, 0, d->format, d->channels, 0};
  return fake_array_new(out, d3);
}
CUresult cuArray3DCreate_v2(struct fake_array **out, const fake_array3d_desc *d) {
  return fake_array_new(out, *d);
}
CUresult cuArrayGetDescriptor_v2(fake_array_desc *out, const struct fake_array *a) {
  ++texture_calls;
  if (!fake_is_array(a))
    return 400;
  out->width = a->d.width, out->height = a->d.height, out->format = a->d.format;
  out->channels = a->d.channels;
  return 0;
}
CUresult cuArrayDestroy(struct fake_array *a) {
  ++texture_calls;
  if (!fake_is_array(a))
    return 400;
  a->tag = 0;
  free(a->data);
  return 0; /* the header stays: a destroyed array is never one again */
}
CUresult cuMemcpyHtoA_v2(struct fake_array *a, size_t offset, const void *src, size_t n) {
  ++texture_calls;
  if (!fake_is_array(a) || offset + n > a->bytes)
    return 1;
  memcpy(a->data + offset, src, n);
  return 0;
}
CUresult cuMemcpyAtoH_v2(void *dst, const struct fake_array *a, size_t offset, size_t n) {
  ++texture_calls;
  if (!fake_is_array(a) || offset + n > a->bytes)
    return 1;
  memcpy(dst, a->data + offset, n);
  return 0;
}
/* Host and device sides are both host memory here; 3: an array. */
CUresult cuMemcpy2D_v2(const fake_memcpy2d *c) {
  ++texture_calls;
  const unsigned char *src = c->src_type == 3 ? c->src_array->data
                             : c->src_type == 1 ? c->src_host : (const void *)(uintptr_t)c->src_device;
  unsigned char *dst = c->dst_type == 3 ? c->dst_array->data
                       : c->dst_type == 1 ? c->dst_host : (void *)(uintptr_t)c->dst_device;
  size_t src_pitch = c->src_type == 3 ? c->src_array->pitch : c->src_pitch;
  size_t dst_pitch = c->dst_type == 3 ? c->dst_array->pitch : c->dst_pitch;
  if ((c->src_type == 3 && !fake_is_array(c->src_array)) ||
      (c->dst_type == 3 && !fake_is_array(c->dst_array)))
    return 400;
  for (size_t y = 0; y < c->height; ++y)
    memcpy(dst + (c->dst_y + y) * dst_pitch + c->dst_x, src + (c->src_y + y) * src_pitch + c->src_x,
           c->width);
  return 0;
}
static CUresult fake_object_new(unsigned long long *out, const fake_resource_desc *res,
                                int surface) {
  ++texture_calls;
  struct fake_array *a;
  memcpy(&a, res->res, sizeof a);
  if (res->type != 0 || !fake_is_array(a))
    return 400;
  for (int i = 0; i < 16; ++i)
    if (!texture_objects[i].live) {
      texture_objects[i].live = 1;
      texture_objects[i].surface = surface;
      texture_objects[i].res = *res;
      *out = 0x7e000001ull + i;
      return 0;
    }
  return 2;
}
static int fake_object_index(unsigned long long h, int surface) {
  int i = (int)(h - 0x7e000001ull);
  return i >= 0 && i < 16 && texture_objects[i].live && texture_objects[i].surface == surface
             ? i : -1;
}
CUresult cuTexObjectCreate(unsigned long long *out, const fake_resource_desc *res, const void *tex,
                           const void *view) {
  return tex == NULL ? 1 : fake_object_new(out, res, 0);
}
CUresult cuSurfObjectCreate(unsigned long long *out, const fake_resource_desc *res) {
  return fake_object_new(out, res, 1);
}
static CUresult fake_object_destroy(unsigned long long h, int surface) {
  ++texture_calls;
  int i = fake_object_index(h, surface);
  if (i < 0)
    return 400;
  texture_objects[i].live = 0;
  return 0;
}
CUresult cuTexObjectDestroy(unsigned long long h) { return fake_object_destroy(h, 0); }
CUresult cuSurfObjectDestroy(unsigned long long h) { return fake_object_destroy(h, 1); }
CUresult cuTexObjectGetResourceDesc(fake_resource_desc *out, unsigned long long h) {
  ++texture_calls;
  int i = fake_object_index(h, 0);
  if (i < 0)
    return 400;
  *out = texture_objects[i].res;
  return 0;
}
/* The PTX of the last module loaded. */
const char *fake_module_ptx(void) { return module_ptx; }

/* Graphs: a graph keeps its nodes in the order they were added (a node's
 * dependencies were added before it), an instantiation copies them and a
 * launch runs them in that order (counted: fake_graph_launches; new
 * parameters of an instantiation's nodes: fake_graph_exec_sets). A kernel
 * node copies add_scalar's parameters (a u64 and a u32); a copy node's
 * CUDA_MEMCPY3D moves rows between host and device addresses.
 * FAKE_REFUSE_GRAPHS makes instantiations fail. */
enum {
  FAKE_KERNEL_NODE,
  FAKE_MEMSET_NODE,
  FAKE_COPY_NODE,
  FAKE_HOST_NODE,
  FAKE_EMPTY_NODE,
  FAKE_CHILD_NODE
};
typedef struct {
  void *func;
  unsigned int grid[3], block[3], shared;
  void **params, **extra;
} fake_kernel_node_params;
typedef struct {
  CUdeviceptr dst;
  size_t pitch;
  unsigned int value, element_size;
  size_t width, height;
} fake_memset_node_params;
typedef struct {
  void (*fn)(void *);
  void *data;
} fake_host_node_params;
typedef struct {
  size_t src_x, src_y, src_z, src_lod;
  int src_type;
  const void *src_host;
  CUdeviceptr src_device;
  void *src_array, *reserved0;
  size_t src_pitch, src_height;
  size_t dst_x, dst_y, dst_z, dst_lod;
  int dst_type;
  void *dst_host;
  CUdeviceptr dst_device;
  void *dst_array, *reserved1;
  size_t dst_pitch, dst_height;
  size_t width, height, depth;
} fake_memcpy3d;
struct fake_node {
  int type, index;
  struct fake_node *deps[4]; /* a capture's: the node before it */
  size_t ndeps;
  fake_kernel_node_params kernel;
  unsigned char args[16];
  void *arg_pointers[2];
  fake_memset_node_params fill;
  fake_memcpy3d copy;
  fake_host_node_params host;
  struct fake_graph *child; /* a child graph node's copy (never freed here) */
};
struct fake_graph {
  int nnodes;
  struct fake_node nodes[64];
};
static unsigned long long graph_launches;
static int graph_execs_live;

CUresult cuGraphCreate(struct fake_graph **out, unsigned int flags) {
  *out = calloc(1, sizeof **out);
  return 0;
}
CUresult cuGraphDestroy(struct fake_graph *g) {
  free(g);
  return 0;
}
static CUresult fake_graph_node(struct fake_node **out, struct fake_graph *g, int type,
                                      struct fake_node **deps, size_t ndeps) {
  if (g == NULL || g->nnodes == 64 || ndeps > 4)
    return 1;
  struct fake_node *n = &g->nodes[g->nnodes];
  n->type = type;
  n->index = g->nnodes++;
  for (n->ndeps = 0; n->ndeps < ndeps; ++n->ndeps)
    n->deps[n->ndeps] = deps[n->ndeps];
  *out = n;
  return 0;
}
static void fake_kernel_node_set(struct fake_node *n, const fake_kernel_node_params *p) {
  n->kernel = *p;
  n->kernel.params = NULL;
  const char *name = ((struct fake_function *)p->func)->name;
  if (strcmp(name, "add_scalar") == 0 || strcmp(name, "zmlir_probe") == 0) {
    memcpy(n->args, p->params[0], 8);
    memcpy(n->args + 8, p->params[1], 4);
    n->arg_pointers[0] = n->args;
    n->arg_pointers[1] = n->args + 8;
    n->kernel.params = n->arg_pointers;
  }
}
CUresult cuGraphAddKernelNode(struct fake_node **out, struct fake_graph *g,
                              struct fake_node **deps, size_t n,
                              const fake_kernel_node_params *p) {
  CUresult code = fake_graph_node(out, g, FAKE_KERNEL_NODE, deps, n);
  if (code == 0)
    fake_kernel_node_set(*out, p);
  return code;
}
CUresult cuGraphAddMemsetNode(struct fake_node **out, struct fake_graph *g,
                              struct fake_node **deps, size_t n,
                              const fake_memset_node_params *p, void *ctx) {
  CUresult code = fake_graph_node(out, g, FAKE_MEMSET_NODE, deps, n);
  if (code == 0)
    (*out)->fill = *p;
  return code;
}
CUresult cuGraphAddMemcpyNode(struct fake_node **out, struct fake_graph *g,
                              struct fake_node **deps, size_t n,
                              const fake_memcpy3d *p, void *ctx) {
  CUresult code = fake_graph_node(out, g, FAKE_COPY_NODE, deps, n);
  if (code == 0)
    (*out)->copy = *p;
  return code;
}
CUresult cuGraphAddHostNode(struct fake_node **out, struct fake_graph *g,
                            struct fake_node **deps, size_t n,
                            const fake_host_node_params *p) {
  CUresult code = fake_graph_node(out, g, FAKE_HOST_NODE, deps, n);
  if (code == 0)
    (*out)->host = *p;
  return code;
}
CUresult cuGraphAddEmptyNode(struct fake_node **out, struct fake_graph *g,
                             struct fake_node **deps, size_t n) {
  return fake_graph_node(out, g, FAKE_EMPTY_NODE, deps, n);
}
/* A copy of `g` whose kernel nodes' parameter pointers are its own. */
static struct fake_graph *fake_graph_copy(const struct fake_graph *g) {
  struct fake_graph *copy = malloc(sizeof *copy);
  memcpy(copy, g, sizeof *copy);
  for (int i = 0; i < g->nnodes; ++i)
    if (copy->nodes[i].kernel.params != NULL) {
      copy->nodes[i].arg_pointers[0] = copy->nodes[i].args;
      copy->nodes[i].arg_pointers[1] = copy->nodes[i].args + 8;
      copy->nodes[i].kernel.params = copy->nodes[i].arg_pointers;
    }
  return copy;
}
CUresult cuGraphAddChildGraphNode(struct fake_node **out, struct fake_graph *g,
                                  struct fake_node **deps, size_t n,
                                  const struct fake_graph *child) {
  CUresult code = fake_graph_node(out, g, FAKE_CHILD_NODE, deps, n);
  if (code == 0)
    (*out)->child = fake_graph_copy(child);
  return code;
}
CUresult cuGraphInstantiateWithFlags(struct fake_graph **out, struct fake_graph *g,
                                     unsigned long long flags) {
  if (getenv("FAKE_REFUSE_GRAPHS"))
    return 1;
  *out = fake_graph_copy(g);
  ++graph_execs_live;
  return 0;
}
CUresult cuGraphExecDestroy(struct fake_graph *e) {
  free(e);
  --graph_execs_live;
  return 0;
}
static unsigned long long graph_exec_sets; /* an instantiation's nodes given new parameters */
static struct fake_node *fake_exec_node(struct fake_graph *e, const struct fake_node *node,
                                        int type) {
  ++graph_exec_sets;
  return node->index < e->nnodes && e->nodes[node->index].type == type ? &e->nodes[node->index]
                                                                       : NULL;
}
/* `node` is the instantiated graph's: its copy is at the same index. */
CUresult cuGraphExecKernelNodeSetParams(struct fake_graph *e, struct fake_node *node,
                                        const fake_kernel_node_params *p) {
  struct fake_node *n = fake_exec_node(e, node, FAKE_KERNEL_NODE);
  if (n == NULL)
    return 1;
  fake_kernel_node_set(n, p);
  return 0;
}
CUresult cuGraphExecMemsetNodeSetParams(struct fake_graph *e, struct fake_node *node,
                                        const fake_memset_node_params *p, void *ctx) {
  struct fake_node *n = fake_exec_node(e, node, FAKE_MEMSET_NODE);
  if (n == NULL)
    return 1;
  n->fill = *p;
  return 0;
}
CUresult cuGraphExecMemcpyNodeSetParams(struct fake_graph *e, struct fake_node *node,
                                        const fake_memcpy3d *p, void *ctx) {
  struct fake_node *n = fake_exec_node(e, node, FAKE_COPY_NODE);
  if (n == NULL)
    return 1;
  n->copy = *p;
  return 0;
}
CUresult cuGraphExecHostNodeSetParams(struct fake_graph *e, struct fake_node *node,
                                      const fake_host_node_params *p) {
  struct fake_node *n = fake_exec_node(e, node, FAKE_HOST_NODE);
  if (n == NULL)
    return 1;
  n->host = *p;
  return 0;
}
static const void *fake_copy_end(int type, const void *host, CUdeviceptr device) {
  return type == 1 ? host : (const void *)(uintptr_t)device; /* CU_MEMORYTYPE_HOST: 1 */
}
static void fake_run_copy(const fake_memcpy3d *c) {
  const char *src = fake_copy_end(c->src_type, c->src_host, c->src_device);
  char *dst = (char *)fake_copy_end(c->dst_type, c->dst_host, c->dst_device);
  size_t src_pitch = c->src_pitch ? c->src_pitch : c->width;
  size_t dst_pitch = c->dst_pitch ? c->dst_pitch : c->width;
  size_t rows = (c->height ? c->height : 1) * (c->depth ? c->depth : 1);
  for (size_t y = 0; y < rows; ++y)
    memcpy(dst + c->dst_x + y * dst_pitch, src + c->src_x + y * src_pitch, c->width);
}
/* A 2D/3D copy between host and device memory (both host memory here; no
 * arrays), counted: fake_pitched_copies. */
static unsigned long long pitched_copies;
static CUresult fake_copy_3d(const fake_memcpy3d *c) {
  if (c->src_type == 3 || c->dst_type == 3)
    return 1; /* arrays: not the stand-in's */
  const char *src = fake_copy_end(c->src_type, c->src_host, c->src_device);
  char *dst = (char *)fake_copy_end(c->dst_type, c->dst_host, c->dst_device);
  size_t src_pitch = c->src_pitch ? c->src_pitch : c->width;
  size_t dst_pitch = c->dst_pitch ? c->dst_pitch : c->width;
  size_t src_height = c->src_height ? c->src_height : c->height;
  size_t dst_height = c->dst_height ? c->dst_height : c->height;
  ++pitched_copies;
  for (size_t z = 0; z < (c->depth ? c->depth : 1); ++z)
    for (size_t y = 0; y < c->height; ++y)
      memcpy(dst + c->dst_x + ((c->dst_z + z) * dst_height + c->dst_y + y) * dst_pitch,
             src + c->src_x + ((c->src_z + z) * src_height + c->src_y + y) * src_pitch, c->width);
  return 0;
}
CUresult cuMemcpy3D_v2(const fake_memcpy3d *c) { return fake_copy_3d(c); }
CUresult cuMemcpy3DAsync_v2(const fake_memcpy3d *c, void *stream) {
  if (stream != NULL && !fake_stream_live(stream))
    return 400; /* CUDA_ERROR_INVALID_HANDLE */
  return fake_copy_3d(c);
}
unsigned long long fake_pitched_copies(void) { return pitched_copies; }
/* Host functions and stream callbacks: called at once (the stand-in's work
 * is done when it is issued), counted: fake_host_calls. */
static unsigned long long host_calls;
CUresult cuLaunchHostFunc(void *stream, void (*fn)(void *), void *data) {
  if (stream != NULL && !fake_stream_live(stream))
    return 400;
  ++host_calls;
  fn(data);
  return 0;
}
CUresult cuStreamAddCallback(void *stream, void (*fn)(void *, CUresult, void *), void *data,
                             unsigned int flags) {
  if (stream != NULL && !fake_stream_live(stream))
    return 400;
  if (flags != 0)
    return 1;
  ++host_calls;
  fn(stream, 0, data);
  return 0;
}
unsigned long long fake_host_calls(void) { return host_calls; }
static void fake_run_fill(const fake_memset_node_params *f) {
  for (size_t y = 0; y < (f->height ? f->height : 1); ++y)
    for (size_t x = 0; x < f->width; ++x) {
      char *at = (char *)(uintptr_t)(f->dst + y * f->pitch) + x * f->element_size;
      if (f->element_size == 1)
        *(unsigned char *)at = (unsigned char)f->value;
      else if (f->element_size == 2)
        *(unsigned short *)at = (unsigned short)f->value;
      else
        *(unsigned int *)at = f->value;
    }
}
/* Managed memory hints (cuMemPrefetchAsync_v2, cuMemAdvise_v2): checked and
 * counted (fake_memory_hints); the stand-in's memory stays where it is. */
typedef struct { int type, id; } fake_location;
static unsigned long long memory_hints;
CUresult cuMemPrefetchAsync_v2(CUdeviceptr p, size_t n, fake_location where, unsigned int flags,
                               void *stream) {
  if (stream != NULL && !fake_stream_live(stream))
    return 400;
  if (n == 0 || flags != 0 || !fake_managed_range(p, n))
    return 1;
  if (where.type == 1 && where.id != 0)
    return 101; /* CUDA_ERROR_INVALID_DEVICE */
  ++memory_hints;
  return 0;
}
CUresult cuMemAdvise_v2(CUdeviceptr p, size_t n, int advice, fake_location where) {
  if (n == 0 || advice < 1 || advice > 6 || !fake_managed_range(p, n))
    return 1;
  ++memory_hints;
  return 0;
}
unsigned long long fake_memory_hints(void) { return memory_hints; }
/* 2D fills (cuMemsetD2D{8,16,32}, _v2 and Async), counted: fake_pitched_fills. */
static unsigned long long pitched_fills;
static CUresult fake_fill_2d(CUdeviceptr dst, size_t pitch, unsigned int value,
                             unsigned int element_size, size_t width, size_t height,
                             void *stream) {
  if (stream != NULL && !fake_stream_live(stream))
    return 400;
  if (pitch < width * element_size && height > 1)
    return 1;
  ++pitched_fills;
  fake_memset_node_params f = {dst, pitch, value, element_size, width, height};
  fake_run_fill(&f);
  return 0;
}
CUresult cuMemsetD2D8_v2(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h) {
  return fake_fill_2d(d, p, v, 1, w, h, NULL);
}
CUresult cuMemsetD2D16_v2(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h) {
  return fake_fill_2d(d, p, v, 2, w, h, NULL);
}
CUresult cuMemsetD2D32_v2(CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h) {
  return fake_fill_2d(d, p, v, 4, w, h, NULL);
}
CUresult cuMemsetD2D8Async(CUdeviceptr d, size_t p, unsigned char v, size_t w, size_t h,
                           void *s) {
  return fake_fill_2d(d, p, v, 1, w, h, s);
}
CUresult cuMemsetD2D16Async(CUdeviceptr d, size_t p, unsigned short v, size_t w, size_t h,
                            void *s) {
  return fake_fill_2d(d, p, v, 2, w, h, s);
}
CUresult cuMemsetD2D32Async(CUdeviceptr d, size_t p, unsigned int v, size_t w, size_t h,
                            void *s) {
  return fake_fill_2d(d, p, v, 4, w, h, s);
}
unsigned long long fake_pitched_fills(void) { return pitched_fills; }
static CUresult fake_run_graph(struct fake_graph *e, void *stream) {
  for (int i = 0; i < e->nnodes; ++i) {
    struct fake_node *n = &e->nodes[i];
    if (n->type == FAKE_KERNEL_NODE) {
      const fake_kernel_node_params *k = &n->kernel;
      CUresult code = cuLaunchKernel(k->func, k->grid[0], k->grid[1], k->grid[2], k->block[0],
                                     k->block[1], k->block[2], k->shared, stream, k->params, NULL);
      if (code != 0)
        return code;
    } else if (n->type == FAKE_MEMSET_NODE)
      fake_run_fill(&n->fill);
    else if (n->type == FAKE_COPY_NODE)
      fake_run_copy(&n->copy);
    else if (n->type == FAKE_HOST_NODE)
      n->host.fn(n->host.data);
    else if (n->type == FAKE_CHILD_NODE) {
      CUresult code = fake_run_graph(n->child, stream);
      if (code != 0)
        return code;
    }
  }
  return 0;
}
CUresult cuGraphLaunch(struct fake_graph *e, void *stream) {
  if (!current)
    return 201; /* CUDA_ERROR_INVALID_CONTEXT */
  if (e == NULL || (stream != NULL && !fake_stream_live(stream)))
    return 400;
  CUresult code = fake_run_graph(e, stream);
  if (code == 0)
    ++graph_launches;
  return code;
}
unsigned long long fake_graph_launches(void) { return graph_launches; }

/* Stream capture: cuStreamBeginCapture_v2 gives a created stream a graph its
 * launches, fills and copies become nodes of, each after the one before
 * (counted: fake_captures); cuStreamEndCapture hands it over. The graph's
 * nodes read back as NVIDIA's do, and cuGraphExecUpdate_v2 gives an
 * instantiation the parameters of a graph of the same node types (counted:
 * fake_graph_exec_updates). FAKE_CAPTURE_MANGLED: kernel nodes read back
 * with another grid. */
static unsigned long long captures, graph_exec_updates;
unsigned long long fake_captures(void) { return captures; }
unsigned long long fake_graph_exec_updates(void) { return graph_exec_updates; }
CUresult cuStreamBeginCapture_v2(struct fake_stream *s, int mode) {
  if (!fake_stream_live(s) || mode < 0 || mode > 2)
    return 400;
  if (s->capture != NULL)
    return 401; /* CUDA_ERROR_ILLEGAL_STATE */
  s->capture = calloc(1, sizeof *s->capture);
  ++captures;
  return 0;
}
CUresult cuStreamEndCapture(struct fake_stream *s, struct fake_graph **out) {
  if (!fake_stream_live(s) || s->capture == NULL)
    return 401;
  *out = s->capture;
  s->capture = NULL;
  return 0;
}
CUresult cuStreamGetCaptureInfo_v2(struct fake_stream *s, int *status, unsigned long long *id,
                                   struct fake_graph **graph, struct fake_node ***deps,
                                   size_t *count) {
  static struct fake_node *last[1];
  if (s != NULL && !fake_stream_live(s))
    return 400;
  struct fake_graph *g = s ? s->capture : NULL;
  if (status)
    *status = g != NULL;
  if (id && g)
    *id = (uintptr_t)g;
  if (graph)
    *graph = g;
  last[0] = g && g->nnodes ? &g->nodes[g->nnodes - 1] : NULL;
  if (deps)
    *deps = last[0] ? last : NULL;
  if (count)
    *count = last[0] != NULL;
  return 0;
}
static struct fake_node *fake_captured_node(void *stream, int type) {
  struct fake_stream *s = stream;
  if (!fake_stream_live(stream) || s->capture == NULL)
    return NULL;
  struct fake_graph *g = s->capture;
  struct fake_node *n, *last = g->nnodes ? &g->nodes[g->nnodes - 1] : NULL;
  return fake_graph_node(&n, g, type, &last, last != NULL) == 0 ? n : NULL;
}
static int fake_capture_kernel(void *stream, void *f, const unsigned int grid[3],
                               const unsigned int block[3], unsigned int shared, void **params) {
  struct fake_node *n = fake_captured_node(stream, FAKE_KERNEL_NODE);
  if (n == NULL)
    return 0;
  fake_kernel_node_params p = {f, {grid[0], grid[1], grid[2]}, {block[0], block[1], block[2]},
                               shared, params, NULL};
  fake_kernel_node_set(n, &p);
  return 1;
}
static int fake_capture_fill(void *stream, CUdeviceptr d, unsigned int v, unsigned int size,
                             size_t n) {
  struct fake_node *node = fake_captured_node(stream, FAKE_MEMSET_NODE);
  if (node == NULL)
    return 0;
  node->fill = (fake_memset_node_params){d, 0, v, size, n, 1};
  return 1;
}
static int fake_capture_copy(void *stream, int dst_type, uintptr_t d, int src_type, uintptr_t s,
                             size_t n) {
  struct fake_node *node = fake_captured_node(stream, FAKE_COPY_NODE);
  if (node == NULL)
    return 0;
  memset(&node->copy, 0, sizeof node->copy);
  node->copy.src_type = src_type;
  node->copy.src_host = (const void *)s;
  node->copy.src_device = s;
  node->copy.dst_type = dst_type;
  node->copy.dst_host = (void *)d;
  node->copy.dst_device = d;
  node->copy.width = n;
  node->copy.height = node->copy.depth = 1;
  return 1;
}
CUresult cuGraphGetNodes(struct fake_graph *g, struct fake_node **nodes, size_t *count) {
  if (g == NULL || count == NULL)
    return 1;
  if (nodes != NULL)
    for (int i = 0; i < g->nnodes && (size_t)i < *count; ++i)
      nodes[i] = &g->nodes[i];
  *count = (size_t)g->nnodes;
  return 0;
}
CUresult cuGraphNodeGetType(struct fake_node *n, int *type) {
  static const int types[] = {0 /* KERNEL */, 2 /* MEMSET */, 1 /* MEMCPY */, 3 /* HOST */,
                              5 /* EMPTY */, 4 /* GRAPH */};
  *type = types[n->type];
  return 0;
}
CUresult cuGraphNodeGetDependencies(struct fake_node *n, struct fake_node **deps,
                                    size_t *count) {
  if (deps != NULL)
    for (size_t i = 0; i < n->ndeps && i < *count; ++i)
      deps[i] = n->deps[i];
  *count = n->ndeps;
  return 0;
}
CUresult cuGraphKernelNodeGetParams_v2(struct fake_node *n, fake_kernel_node_params *p) {
  if (n->type != FAKE_KERNEL_NODE)
    return 1;
  *p = n->kernel;
  ((void **)(p + 1))[0] = ((void **)(p + 1))[1] = NULL; /* v2's kern and ctx */
  if (getenv("FAKE_CAPTURE_MANGLED")) /* a driver whose graphs read back otherwise */
    ++p->grid[0];
  return 0;
}
CUresult cuGraphMemsetNodeGetParams(struct fake_node *n, fake_memset_node_params *p) {
  if (n->type != FAKE_MEMSET_NODE)
    return 1;
  *p = n->fill;
  return 0;
}
CUresult cuGraphMemcpyNodeGetParams(struct fake_node *n, fake_memcpy3d *p) {
  if (n->type != FAKE_COPY_NODE)
    return 1;
  *p = n->copy;
  return 0;
}
CUresult cuGraphHostNodeGetParams(struct fake_node *n, fake_host_node_params *p) {
  if (n->type != FAKE_HOST_NODE)
    return 1;
  *p = n->host;
  return 0;
}
typedef struct {
  int result;
  struct fake_node *error_node, *error_from_node;
} fake_update_info;
CUresult cuGraphExecUpdate_v2(struct fake_graph *e, struct fake_graph *g, fake_update_info *info) {
  int same = e->nnodes == g->nnodes;
  for (int i = 0; same && i < g->nnodes; ++i)
    same = e->nodes[i].type == g->nodes[i].type && e->nodes[i].ndeps == g->nodes[i].ndeps;
  info->result = same ? 0 : 2; /* SUCCESS, TOPOLOGY_CHANGED */
  info->error_node = info->error_from_node = NULL;
  if (!same)
    return 910; /* CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE */
  for (int i = 0; i < g->nnodes; ++i) {
    struct fake_node *to = &e->nodes[i], *from = &g->nodes[i];
    if (from->type == FAKE_KERNEL_NODE)
      fake_kernel_node_set(to, &from->kernel);
    to->fill = from->fill;
    to->copy = from->copy;
    to->host = from->host;
  }
  ++graph_exec_updates;
  return 0;
}
unsigned long long fake_graph_exec_sets(void) { return graph_exec_sets; }
int fake_graph_execs_live(void) { return graph_execs_live; }
