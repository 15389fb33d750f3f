/* The launch fast path of our libcuda.so.1 (compiled into it by build.py).
 *
 * cuLaunchKernel and cuLaunchKernelEx are exported from here, not from
 * Python, and so are the calls a program times its kernels with, events
 * (below). A launch whose function, stream and context the Python driver has
 * registered in the table below goes straight to the backend's own C entry
 * points with the application's kernelParams:
 *
 *   - CUDA passthrough: the real driver's cuLaunchKernel, with the real
 *     CUfunction (NULL stream: all our work is ordered on one queue);
 *   - OpenCL: clSetKernelArg per parameter (sizes precomputed from the PTX
 *     parameter types), the shared-memory window argument and
 *     clEnqueueNDRangeKernel; the launch returns while the kernel runs
 *     (below: launches in flight).
 *
 * Anything else calls the Python body (zmlir_py_cuLaunchKernel, ...), which
 * validates, reports errors and handles what this path does not: unknown or
 * bad handles, `extra`, launch attributes, a capturing stream, a shared
 * window above what the kernel is opted in to, tracing (ZMLIR_TRACE), and
 * ZMLIR_FAST_LAUNCH=0. The Python driver keeps the table in step with its
 * own state: functions when created, streams when created or destroyed,
 * events when recorded outside a capture or destroyed, the
 * calling thread's current context whenever it changes, captures when they
 * begin and end. The other call cudart makes per launch, a context-local
 * storage get (an export-table slot), is answered here too (below).
 *
 * The table is written only by Python (under a lock) and read lock-free:
 * a slot's fields are written before its key is published, a slot is never
 * reused for another key, and forgetting a handle clears its kind.
 */

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fatbin_holdings.h"

#define ZMLIR_FAST_SLOTS 8192 /* a power of two */
#define ZMLIR_FAST_MAX_PARAMS 64

enum {
  ZMLIR_FAST_NONE = 0,
  ZMLIR_FAST_CUDA = 1,
  ZMLIR_FAST_OPENCL = 2,
  ZMLIR_FAST_STREAM = 3,
  ZMLIR_FAST_EVENT = 4,
  ZMLIR_FAST_GRAPH = 5,
  ZMLIR_FAST_GRAPH_NODE = 6
};

typedef CUresult (*zmlir_cu_launch_fn)(void *, unsigned int, unsigned int, unsigned int,
                                       unsigned int, unsigned int, unsigned int, unsigned int,
                                       void *, void **, void **);
typedef CUresult (*zmlir_cu_launch_ex_fn)(const CUlaunchConfig *, void *, void **, void **);
typedef CUresult (*zmlir_cu_func_get_attribute_fn)(int *, int, void *);
typedef CUresult (*zmlir_cu_func_set_attribute_fn)(void *, int, int);
typedef CUresult (*zmlir_cu_occupancy_fn)(int *, void *, int, size_t, unsigned int);
typedef int (*zmlir_cl_set_arg_fn)(void *, unsigned int, size_t, const void *);
typedef int (*zmlir_cl_enqueue_fn)(void *, void *, unsigned int, const size_t *, const size_t *,
                                   const size_t *, unsigned int, const void *, void *);
typedef int (*zmlir_cl_queue_fn)(void *); /* clFlush */
typedef int (*zmlir_cl_event_fn)(void *); /* clReleaseEvent */
typedef int (*zmlir_cl_wait_fn)(unsigned int, void *const *);
typedef int (*zmlir_cl_event_info_fn)(void *, unsigned int, size_t, void *, size_t *);
typedef CUresult (*zmlir_cu_event_record_fn)(void *, void *);
typedef CUresult (*zmlir_cu_event_fn)(void *); /* cuEventQuery, cuEventSynchronize */
typedef CUresult (*zmlir_cu_event_elapsed_fn)(float *, void *, void *);
typedef CUresult (*zmlir_cu_synchronize_fn)(void);
typedef CUresult (*zmlir_cu_stream_synchronize_fn)(void *);
typedef CUresult (*zmlir_cu_graph_launch_fn)(void *, void *);
typedef CUresult (*zmlir_cu_begin_capture_fn)(void *, int);
typedef CUresult (*zmlir_cu_end_capture_fn)(void *, void **);
typedef CUresult (*zmlir_cu_capture_info_fn)(void *, int *, unsigned long long *, void **,
                                             const void **, size_t *);
typedef CUresult (*zmlir_cu_exec_update_fn)(void *, void *, void *);
typedef CUresult (*zmlir_cu_graph_destroy_fn)(void *);
/* CUDA_KERNEL_NODE_PARAMS (v1), and v2's: a CUkernel and a context after it */
struct zmlir_kernel_node_params {
  void *func;
  unsigned int grid[3], block[3], shared;
  void **params, **extra;
};
struct zmlir_kernel_node_params_v2 {
  struct zmlir_kernel_node_params v1;
  void *kern, *ctx;
};
typedef CUresult (*zmlir_cu_graph_set_kernel_fn)(void *, void *,
                                                 const struct zmlir_kernel_node_params *);
typedef CUresult (*zmlir_cu_mem_alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*zmlir_cu_mem_free_fn)(CUdeviceptr);
typedef CUresult (*zmlir_cu_mem_alloc_async_fn)(CUdeviceptr *, size_t, void *);
typedef CUresult (*zmlir_cu_prefetch_fn)(CUdeviceptr, size_t, CUmemLocation, unsigned int, void *);
typedef CUresult (*zmlir_cu_advise_fn)(CUdeviceptr, size_t, int, CUmemLocation);
typedef CUresult (*zmlir_cu_mem_free_async_fn)(CUdeviceptr, void *);
typedef CUresult (*zmlir_cu_memset8_fn)(CUdeviceptr, unsigned char, size_t);
typedef CUresult (*zmlir_cu_memset16_fn)(CUdeviceptr, unsigned short, size_t);
typedef CUresult (*zmlir_cu_memset32_fn)(CUdeviceptr, unsigned int, size_t);
typedef CUresult (*zmlir_cu_memset8_async_fn)(CUdeviceptr, unsigned char, size_t, void *);
typedef CUresult (*zmlir_cu_memset16_async_fn)(CUdeviceptr, unsigned short, size_t, void *);
typedef CUresult (*zmlir_cu_memset32_async_fn)(CUdeviceptr, unsigned int, size_t, void *);
/* cuMemcpyAsync and cuMemcpy{HtoD,DtoH,DtoD}Async_v2: two addresses, a size, a stream */
typedef CUresult (*zmlir_cu_copy_async_fn)(uintptr_t, uintptr_t, size_t, void *);
/* cuMemcpy and cuMemcpy{HtoD,DtoH,DtoD}_v2: two addresses, a size */
typedef CUresult (*zmlir_cu_copy_fn)(uintptr_t, uintptr_t, size_t);

struct zmlir_fast_backend {
  uintptr_t launch;                                                      /* the real driver's */
  uintptr_t launch_ex; /* the real driver's cuLaunchKernelEx, where it has clusters */
  uintptr_t set_arg, enqueue, flush, queue;                              /* OpenCL */
  uintptr_t release_event, wait_for_events, get_event_info;              /* OpenCL */
  uintptr_t event_record, event_query, event_synchronize, event_elapsed; /* the real driver's */
  uintptr_t mem_alloc, mem_free;                                         /* the real driver's */
  /* the real driver's cuMemAllocAsync (0 while its default pool is not the
   * device's current pool: mempool.py) and cuMemFreeAsync */
  uintptr_t mem_alloc_async, mem_free_async;
  /* the real driver's cuMemPrefetchAsync_v2 and cuMemAdvise_v2, and its
   * ordinal of our device 0 */
  uintptr_t mem_prefetch, mem_advise, device_ordinal;
  uintptr_t ctx_synchronize, stream_synchronize;                         /* the real driver's */
  uintptr_t memset[3], memset_async[3]; /* the real driver's D8, D16, D32 */
  uintptr_t copy_async[4]; /* the real driver's cuMemcpyAsync, HtoD, DtoH, DtoD Async */
  uintptr_t copy[4];       /* the real driver's cuMemcpy, HtoD, DtoH, DtoD (_v2) */
  uintptr_t func_get_attribute, func_set_attribute; /* the real driver's */
  uintptr_t occupancy; /* the real driver's cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags */
  uintptr_t shared_optin; /* bytes: the device's MAX_SHARED_MEMORY_PER_BLOCK_OPTIN (0: unknown) */
  uintptr_t graph_launch; /* the real driver's cuGraphLaunch */
  uintptr_t graph_set_kernel; /* the real driver's cuGraphExecKernelNodeSetParams (v1) */
  /* the real driver's cuStreamBeginCapture_v2, cuStreamEndCapture,
   * cuStreamGetCaptureInfo_v2, cuGraphExecUpdate_v2 and cuGraphDestroy (below:
   * stream capture) */
  uintptr_t begin_capture, end_capture, capture_info, exec_update, graph_destroy;
};

struct zmlir_fast_entry {
  uintptr_t key; /* our handle; 0: free slot */
  int kind;
  uintptr_t target; /* the real CUfunction, cl_kernel or CUevent */
  /* OpenCL: the kernel's grid variant (0: none), for grids of at most
   * variant_grid_x blocks in x and 65535 in y and z */
  uintptr_t variant;
  unsigned int variant_grid_x;
  /* OpenCL: the sub-group size the kernel requires (0: none), and whether it
   * has a form for blocks its warps are not rows of, which shape its
   * work-groups (zmlir_fast_work_group) */
  unsigned int sub_group_size;
  int linear_blocks;
  unsigned int static_shared, shared_limit, max_threads, nparams;
  /* the parameters' bytes packed as `extra` gives them (each at its alignment) */
  unsigned int param_bytes;
  int native; /* NVIDIA's machine code: its attributes are the real driver's */
  /* the dynamic shared memory the application opted the function in to (or
   * NVIDIA's default); shared_limit: the static plus that, bounded by the
   * backend's */
  unsigned int optin;
  int optin_set_here; /* optin was set here, not yet read back by Python (zmlir_fast_optin) */
  unsigned char sizes[ZMLIR_FAST_MAX_PARAMS];
  /* a stream: 1 + the CUstreamCaptureMode of the capture the real driver
   * makes of its vendor stream's work (0: none); an executable graph: the
   * captured graph the real driver's copy was last updated from, and whether
   * an update of it failed (below: stream capture) */
  int vendor_capture;
  /* a stream on the backend's one queue: the number of its last launch
   * (below: a stream's own work) */
  unsigned long long last_launch;
  /* a stream: the Python driver's calls ended when its last synchronisation
   * there did, that one included (below: synchronisations) */
  unsigned long long synced_calls;
  uintptr_t pending_update;
  int update_failed;
};

static struct zmlir_fast_entry zmlir_fast_table[ZMLIR_FAST_SLOTS];
static struct zmlir_fast_backend zmlir_fast_backend;
static pthread_mutex_t zmlir_fast_write = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t zmlir_fast_cl = PTHREAD_MUTEX_INITIALIZER; /* kernel args are shared */
static int zmlir_fast_enabled;
static int zmlir_fast_captures;
static int zmlir_fast_vendor_captures; /* the real driver's captures of our streams */
static int zmlir_fast_vendor_capture_on;
static pthread_mutex_t zmlir_capture_lock = PTHREAD_MUTEX_INITIALIZER;
static int zmlir_fast_sync_work; /* what a synchronisation must do in Python (below) */
static unsigned long zmlir_fast_epoch = 1;
static unsigned long long zmlir_fast_count, zmlir_fast_event_count;
static __thread uintptr_t zmlir_fast_ctx;
static __thread unsigned long zmlir_fast_ctx_epoch;

#define ZMLIR_LOAD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define ZMLIR_STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

static size_t zmlir_fast_hash(uintptr_t key) {
  return (size_t)((key >> 4) ^ (key >> 17)) & (ZMLIR_FAST_SLOTS - 1);
}

/* The slot of `key`, or NULL. With `create`, a free slot for it. */
static struct zmlir_fast_entry *zmlir_fast_slot(uintptr_t key, int create) {
  size_t i = zmlir_fast_hash(key);
  for (size_t n = 0; n < ZMLIR_FAST_SLOTS; ++n, i = (i + 1) & (ZMLIR_FAST_SLOTS - 1)) {
    struct zmlir_fast_entry *e = &zmlir_fast_table[i];
    uintptr_t k = ZMLIR_LOAD(e->key);
    if (k == key)
      return e;
    if (k == 0)
      return create ? e : NULL;
  }
  return NULL;
}

static struct zmlir_fast_entry *zmlir_fast_find(uintptr_t key, int kind) {
  struct zmlir_fast_entry *e = key ? zmlir_fast_slot(key, 0) : NULL;
  return e && ZMLIR_LOAD(e->kind) == kind ? e : NULL;
}

/* A registered function (either backend's kind), or NULL. */
static struct zmlir_fast_entry *zmlir_fast_find_function(uintptr_t key) {
  struct zmlir_fast_entry *e = zmlir_fast_find(key, ZMLIR_FAST_CUDA);
  return e ? e : zmlir_fast_find(key, ZMLIR_FAST_OPENCL);
}

/* -- launches in flight ---------------------------------------------------------
 *
 * An OpenCL launch returns once its kernel is enqueued and flushed (it starts
 * at once), as a CUDA launch returns while its kernel runs. The launch's
 * event joins a ring of the launches in flight, oldest first (all launches go
 * into one in-order queue, under zmlir_fast_cl, so they end in that order).
 * Launches that have ended are retired by polling their events, never by a
 * callback from the runtime's threads (which could still be inside one as
 * the process exits): at each launch and whenever the Python driver asks.
 * Retiring one disarms the fault handler its launch armed (faults.c: a wild
 * access is a kernel's while one may run) and counts a kernel the runtime
 * reports failed. A launch beyond the ring waits for the oldest to end, as a
 * GPU's launch waits when its queue is full. The Python driver reads the
 * counts: a stream query is NOT_READY while launches are in flight, a
 * module's trap word is watched until its last launch has ended, and a
 * failed kernel becomes the context's sticky error. */

#define ZMLIR_LAUNCH_RING 1024

static void *zmlir_launch_ring[ZMLIR_LAUNCH_RING]; /* under zmlir_fast_cl */
/* Launches [completed, enqueued) are in the ring. */
static unsigned long long zmlir_launches_enqueued, zmlir_launches_completed;
static unsigned long zmlir_launches_failed;

/* Under zmlir_fast_cl: retires the oldest launch in flight if it has ended
 * (with `wait`, once it has); 1 if it did. */
static int zmlir_launch_retire(int wait) {
  unsigned long long oldest = zmlir_launches_completed;
  if (oldest == zmlir_launches_enqueued)
    return 0;
  void *event = zmlir_launch_ring[oldest % ZMLIR_LAUNCH_RING];
  int status = 0; /* CL_COMPLETE; a failed command's is below, a running one's above */
  if (event != NULL) {
    zmlir_cl_wait_fn wait_for = (zmlir_cl_wait_fn)zmlir_fast_backend.wait_for_events;
    zmlir_cl_event_info_fn info = (zmlir_cl_event_info_fn)zmlir_fast_backend.get_event_info;
    if (wait && wait_for)
      wait_for(1, &event);
    if (info(event, 0x11D3 /* CL_EVENT_COMMAND_EXECUTION_STATUS */, sizeof status, &status, NULL) !=
        0)
      status = -1;
    if (status > 0)
      return 0;
    ((zmlir_cl_event_fn)zmlir_fast_backend.release_event)(event);
  }
  if (status < 0)
    __atomic_add_fetch(&zmlir_launches_failed, 1, __ATOMIC_ACQ_REL);
  zmlir_faults_arm(-1); /* faults.c */
  ZMLIR_STORE(zmlir_launches_completed, oldest + 1);
  return 1;
}

static void zmlir_launch_reap(void) {
  while (zmlir_launch_retire(0)) {
  }
}

/* Under zmlir_fast_cl: retires what has ended; whether every launch has. */
static int zmlir_launch_reap_all(void) {
  zmlir_launch_reap();
  return zmlir_launches_completed == zmlir_launches_enqueued;
}

/* Under zmlir_fast_cl, after a launch was enqueued with the fault handler
 * armed: its number. `event` is the OpenCL launch's own (released once the
 * launch is retired); NULL where the launch has ended or its backend needs no
 * watching (a GPU's faults are its driver's). */
static unsigned long long zmlir_launch_enqueued(void *event) {
  zmlir_launch_reap();
  if (zmlir_launches_enqueued - zmlir_launches_completed == ZMLIR_LAUNCH_RING)
    zmlir_launch_retire(1);
  unsigned long long n = zmlir_launches_enqueued;
  zmlir_launch_ring[n % ZMLIR_LAUNCH_RING] = event;
  ZMLIR_STORE(zmlir_launches_enqueued, n + 1);
  zmlir_cl_queue_fn flush = (zmlir_cl_queue_fn)zmlir_fast_backend.flush;
  if (event != NULL && flush)
    flush((void *)zmlir_fast_backend.queue);
  zmlir_launch_reap();
  return n + 1;
}

/* Retires the launches that have ended; how many have: the first so many. */
unsigned long long zmlir_fast_launches_completed(void) {
  pthread_mutex_lock(&zmlir_fast_cl);
  zmlir_launch_reap();
  unsigned long long completed = zmlir_launches_completed;
  pthread_mutex_unlock(&zmlir_fast_cl);
  return completed;
}

/* The driver's one look per call for kernels' errors: retires ended
 * launches, writes how many have ended, and says whether wild accesses (1)
 * or kernels the runtime reported failed (2) wait to be taken. */
int zmlir_fast_poll(unsigned long long *completed) {
  *completed = zmlir_fast_launches_completed();
  int news = __atomic_load_n(&zmlir_faults_count, __ATOMIC_ACQUIRE) != 0;
  if (__atomic_load_n(&zmlir_launches_failed, __ATOMIC_ACQUIRE) != 0)
    news |= 2;
  return news;
}

/* Whether every launch so far has ended. */
int zmlir_fast_launches_done(void) {
  pthread_mutex_lock(&zmlir_fast_cl);
  int done = zmlir_launch_reap_all();
  pthread_mutex_unlock(&zmlir_fast_cl);
  return done;
}

/* Kernels the runtime reported failed since the last call (retired ones). */
unsigned long zmlir_fast_take_failed_launches(void) {
  return __atomic_exchange_n(&zmlir_launches_failed, 0, __ATOMIC_ACQ_REL);
}

/* Reads and clears a 32-bit word the host reaches (a module's trap word)
 * while kernels may still write it. */
uint32_t zmlir_fast_take_word(uintptr_t address) {
  return __atomic_exchange_n((uint32_t *)address, 0, __ATOMIC_ACQ_REL);
}

/* At exit: waits (a minute at most: a kernel may never end) for the kernels
 * still running, which use the runtime whose destructors come next. Another
 * thread may hold the lock for good (it waits for the process to end). */
static void zmlir_launches_drain(void) {
  const struct timespec pause = {0, 1000000};
  for (int waited = 0; waited < 60000; ++waited) {
    if (pthread_mutex_trylock(&zmlir_fast_cl) == 0) {
      int done = zmlir_launch_reap_all();
      pthread_mutex_unlock(&zmlir_fast_cl);
      if (done)
        return;
    }
    nanosleep(&pause, NULL);
  }
}

/* -- the process's exit -------------------------------------------------------------
 *
 * exit() runs the atexit handlers (cudart's tears its state down) and the
 * static destructors of the libraries the backend loaded (Intel's OpenCL
 * runtime among them) while other threads may still be launching: a call into
 * a destroyed runtime aborts ("Pure virtual function called!"), and a return
 * into torn-down cudart crashes. Every entry into the driver (the launches
 * here, the Python boundary, the export-table slots) is counted; our atexit
 * handler, registered after the backend has loaded (so it runs before those
 * destructors), waits for the calls under way to leave (a few seconds at
 * most: a kernel may never end), and from then on a call from any thread but
 * the exiting one waits for the process to end. The exiting thread's calls
 * (cudart's own teardown) go on as before. */

static int zmlir_exiting;
static pthread_t zmlir_exiting_thread;
static int zmlir_inflight;
static __thread int zmlir_depth; /* this thread's calls under way */

/* Counts a call into the driver; leave with zmlir_leave. */
void zmlir_enter(void) {
  __atomic_add_fetch(&zmlir_inflight, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&zmlir_exiting, __ATOMIC_SEQ_CST) && zmlir_depth == 0 &&
      !pthread_equal(pthread_self(), zmlir_exiting_thread)) {
    __atomic_sub_fetch(&zmlir_inflight, 1, __ATOMIC_SEQ_CST);
    for (;;) /* the process ends while this thread waits */
      pause();
  }
  ++zmlir_depth;
}

void zmlir_leave(void) {
  --zmlir_depth;
  __atomic_sub_fetch(&zmlir_inflight, 1, __ATOMIC_SEQ_CST);
}

/* Calls of the Python driver that have ended, and how many of them the last
 * synchronisation of the whole context covered (below: synchronisations). */
static unsigned long long zmlir_python_calls, zmlir_python_calls_synced;

/* The end of a call of the Python driver's (driver.py: _boundary). */
void zmlir_leave_python(void) {
  __atomic_add_fetch(&zmlir_python_calls, 1, __ATOMIC_SEQ_CST);
  zmlir_leave();
}

static void zmlir_at_exit(void) {
  if (__atomic_load_n(&zmlir_exiting, __ATOMIC_SEQ_CST))
    return; /* registered more than once */
  zmlir_exiting_thread = pthread_self();
  __atomic_store_n(&zmlir_exiting, 1, __ATOMIC_SEQ_CST);
  /* exit() called from inside the driver (a host function) counts itself. */
  const struct timespec pause = {0, 1000000};
  for (int waited = 0; waited < 5000; ++waited) {
    if (__atomic_load_n(&zmlir_inflight, __ATOMIC_SEQ_CST) <= zmlir_depth)
      break;
    nanosleep(&pause, NULL);
  }
  zmlir_launches_drain();
}

/* -- called by the Python driver ---------------------------------------------- */

/* Hands the fast path one of the backend's entry points (or its OpenCL
 * queue, or a limit of its device) by name; -1 for a name it does not know. */
int zmlir_fast_set_entry(const char *name, uintptr_t address) {
  static const struct {
    const char *name;
    size_t offset;
  } fields[] = {
      {"launch", offsetof(struct zmlir_fast_backend, launch)},
      {"launch_ex", offsetof(struct zmlir_fast_backend, launch_ex)},
      {"set_arg", offsetof(struct zmlir_fast_backend, set_arg)},
      {"enqueue", offsetof(struct zmlir_fast_backend, enqueue)},
      {"flush", offsetof(struct zmlir_fast_backend, flush)},
      {"queue", offsetof(struct zmlir_fast_backend, queue)},
      {"release_event", offsetof(struct zmlir_fast_backend, release_event)},
      {"get_event_info", offsetof(struct zmlir_fast_backend, get_event_info)},
      {"wait_for_events", offsetof(struct zmlir_fast_backend, wait_for_events)},
      {"event_record", offsetof(struct zmlir_fast_backend, event_record)},
      {"event_query", offsetof(struct zmlir_fast_backend, event_query)},
      {"event_synchronize", offsetof(struct zmlir_fast_backend, event_synchronize)},
      {"event_elapsed", offsetof(struct zmlir_fast_backend, event_elapsed)},
      {"ctx_synchronize", offsetof(struct zmlir_fast_backend, ctx_synchronize)},
      {"stream_synchronize", offsetof(struct zmlir_fast_backend, stream_synchronize)},
      {"mem_alloc", offsetof(struct zmlir_fast_backend, mem_alloc)},
      {"mem_free", offsetof(struct zmlir_fast_backend, mem_free)},
      {"mem_alloc_async", offsetof(struct zmlir_fast_backend, mem_alloc_async)},
      {"mem_free_async", offsetof(struct zmlir_fast_backend, mem_free_async)},
      {"mem_prefetch", offsetof(struct zmlir_fast_backend, mem_prefetch)},
      {"mem_advise", offsetof(struct zmlir_fast_backend, mem_advise)},
      {"device_ordinal", offsetof(struct zmlir_fast_backend, device_ordinal)},
      {"memset_d8", offsetof(struct zmlir_fast_backend, memset[0])},
      {"memset_d16", offsetof(struct zmlir_fast_backend, memset[1])},
      {"memset_d32", offsetof(struct zmlir_fast_backend, memset[2])},
      {"memset_d8_async", offsetof(struct zmlir_fast_backend, memset_async[0])},
      {"memset_d16_async", offsetof(struct zmlir_fast_backend, memset_async[1])},
      {"memset_d32_async", offsetof(struct zmlir_fast_backend, memset_async[2])},
      {"copy_async", offsetof(struct zmlir_fast_backend, copy_async[0])},
      {"copy_htod_async", offsetof(struct zmlir_fast_backend, copy_async[1])},
      {"copy_dtoh_async", offsetof(struct zmlir_fast_backend, copy_async[2])},
      {"copy_dtod_async", offsetof(struct zmlir_fast_backend, copy_async[3])},
      {"copy", offsetof(struct zmlir_fast_backend, copy[0])},
      {"copy_htod", offsetof(struct zmlir_fast_backend, copy[1])},
      {"copy_dtoh", offsetof(struct zmlir_fast_backend, copy[2])},
      {"copy_dtod", offsetof(struct zmlir_fast_backend, copy[3])},
      {"func_get_attribute", offsetof(struct zmlir_fast_backend, func_get_attribute)},
      {"func_set_attribute", offsetof(struct zmlir_fast_backend, func_set_attribute)},
      {"occupancy", offsetof(struct zmlir_fast_backend, occupancy)},
      {"shared_optin", offsetof(struct zmlir_fast_backend, shared_optin)},
      {"graph_launch", offsetof(struct zmlir_fast_backend, graph_launch)},
      {"graph_set_kernel", offsetof(struct zmlir_fast_backend, graph_set_kernel)},
      {"begin_capture", offsetof(struct zmlir_fast_backend, begin_capture)},
      {"end_capture", offsetof(struct zmlir_fast_backend, end_capture)},
      {"capture_info", offsetof(struct zmlir_fast_backend, capture_info)},
      {"exec_update", offsetof(struct zmlir_fast_backend, exec_update)},
      {"graph_destroy", offsetof(struct zmlir_fast_backend, graph_destroy)},
  };
  for (size_t i = 0; i < sizeof fields / sizeof *fields; ++i)
    if (strcmp(name, fields[i].name) == 0) {
      pthread_mutex_lock(&zmlir_fast_write);
      *(uintptr_t *)((char *)&zmlir_fast_backend + fields[i].offset) = address;
      pthread_mutex_unlock(&zmlir_fast_write);
      return 0;
    }
  return -1;
}

/* Registers the exit handler (above): once the backend has loaded, and again
 * whenever it may have loaded more (a module load), so that it runs before the
 * destructors registered since. */
void zmlir_register_exit(void) {
  static int registrations;
  if (__atomic_add_fetch(&registrations, 1, __ATOMIC_SEQ_CST) <= 32)
    atexit(zmlir_at_exit);
}

/* Registers (or updates) function `handle`; 0 on success, -1 if it does not fit.
 * `sizes` (each parameter's bytes) are OpenCL's (clSetKernelArg). */
int zmlir_fast_function(uintptr_t handle, int kind, uintptr_t target, unsigned int static_shared,
                        unsigned int shared_limit, unsigned int optin,
                        unsigned int max_threads, unsigned int nparams, const unsigned char *sizes,
                        unsigned int param_bytes, int native) {
  if (handle == 0 || nparams > ZMLIR_FAST_MAX_PARAMS ||
      (kind != ZMLIR_FAST_CUDA && kind != ZMLIR_FAST_OPENCL))
    return -1;
  pthread_mutex_lock(&zmlir_fast_write);
  struct zmlir_fast_entry *e = zmlir_fast_slot(handle, 1);
  if (e == NULL) {
    pthread_mutex_unlock(&zmlir_fast_write);
    return -1;
  }
  ZMLIR_STORE(e->kind, ZMLIR_FAST_NONE); /* readers skip it while it changes */
  e->target = target;
  e->variant = 0;
  e->variant_grid_x = 0;
  e->sub_group_size = 0;
  e->linear_blocks = 0;
  e->static_shared = static_shared;
  e->shared_limit = shared_limit;
  e->optin = optin;
  e->optin_set_here = 0;
  e->max_threads = max_threads;
  e->nparams = nparams;
  e->param_bytes = param_bytes;
  e->native = native;
  if (nparams)
    memcpy(e->sizes, sizes, nparams);
  ZMLIR_STORE(e->key, handle);
  ZMLIR_STORE(e->kind, kind);
  pthread_mutex_unlock(&zmlir_fast_write);
  return 0;
}

/* Gives registered OpenCL function `handle` its grid variant: cl_kernel
 * `variant` (0: none), which launches of at most `max_grid_x` blocks in x
 * (and 65535 in y and z) run instead (the SPIR-V target's
 * `<kernel>__zmlir_grid31`, the same kernel compiled knowing its global index
 * fits 31 bits); the sub-group size both require, and whether they have a
 * form for blocks their warps are not rows of; 0 on success. */
int zmlir_fast_opencl_kernel(uintptr_t handle, uintptr_t variant, unsigned int max_grid_x,
                             unsigned int sub_group_size, int linear_blocks) {
  pthread_mutex_lock(&zmlir_fast_write);
  struct zmlir_fast_entry *e = handle ? zmlir_fast_slot(handle, 0) : NULL;
  int kind = e ? ZMLIR_LOAD(e->kind) : ZMLIR_FAST_NONE;
  if (kind == ZMLIR_FAST_OPENCL) {
    ZMLIR_STORE(e->kind, ZMLIR_FAST_NONE); /* readers skip it while it changes */
    e->variant = variant;
    e->variant_grid_x = max_grid_x;
    e->sub_group_size = sub_group_size;
    e->linear_blocks = linear_blocks;
    ZMLIR_STORE(e->kind, kind);
  }
  pthread_mutex_unlock(&zmlir_fast_write);
  return kind == ZMLIR_FAST_OPENCL ? 0 : -1;
}

/* Registers a handle that is a key and at most a target: a stream, an event. */
static int zmlir_fast_put(uintptr_t handle, int kind, uintptr_t target) {
  pthread_mutex_lock(&zmlir_fast_write);
  struct zmlir_fast_entry *e = handle ? zmlir_fast_slot(handle, 1) : NULL;
  if (e != NULL) {
    ZMLIR_STORE(e->kind, ZMLIR_FAST_NONE); /* readers skip it while it changes */
    e->target = target;
    ZMLIR_STORE(e->key, handle);
    ZMLIR_STORE(e->kind, kind);
  }
  pthread_mutex_unlock(&zmlir_fast_write);
  return e ? 0 : -1;
}

/* Stream `handle`; `target`: the real driver's stream its kernels and event
 * records go to (the passthrough's vendor stream), 0: the backend's queue. */
int zmlir_fast_stream(uintptr_t handle, uintptr_t target) {
  if (zmlir_fast_put(handle, ZMLIR_FAST_STREAM, target) != 0)
    return -1;
  struct zmlir_fast_entry *e = zmlir_fast_find(handle, ZMLIR_FAST_STREAM);
  if (e != NULL) { /* a slot a destroyed stream left keeps its numbers */
    ZMLIR_STORE(e->last_launch, 0ULL);
    ZMLIR_STORE(e->synced_calls, 0ULL);
  }
  return 0;
}

/* Event `handle` is the real driver's CUevent `target` (re-recorded in place). */
int zmlir_fast_event(uintptr_t handle, uintptr_t target) {
  return target ? zmlir_fast_put(handle, ZMLIR_FAST_EVENT, target) : -1;
}

/* Executable graph `handle` replays as the real driver's `target` (graph/vendor.py). */
int zmlir_fast_graph(uintptr_t handle, uintptr_t target) {
  return target ? zmlir_fast_put(handle, ZMLIR_FAST_GRAPH, target) : -1;
}

/* Kernel node `node` (the application's) of executable graph `graph` is the
 * real driver's node `target` in that graph's replay. */
int zmlir_fast_graph_node(uintptr_t node, uintptr_t graph, uintptr_t target) {
  if (!target || zmlir_fast_put(node, ZMLIR_FAST_GRAPH_NODE, target) != 0)
    return -1;
  pthread_mutex_lock(&zmlir_fast_write);
  struct zmlir_fast_entry *e = zmlir_fast_find(node, ZMLIR_FAST_GRAPH_NODE);
  if (e)
    e->variant = graph; /* whose node it is: another graph's asks are Python's */
  pthread_mutex_unlock(&zmlir_fast_write);
  return 0;
}

void zmlir_fast_forget(uintptr_t handle) {
  pthread_mutex_lock(&zmlir_fast_write);
  struct zmlir_fast_entry *e = handle ? zmlir_fast_slot(handle, 0) : NULL;
  if (e != NULL)
    ZMLIR_STORE(e->kind, ZMLIR_FAST_NONE);
  pthread_mutex_unlock(&zmlir_fast_write);
}

/* The calling thread's current context (0: none). */
void zmlir_fast_set_context(uintptr_t ctx) {
  zmlir_fast_ctx = ctx;
  zmlir_fast_ctx_epoch = ZMLIR_LOAD(zmlir_fast_epoch);
}

/* A context was destroyed: every thread's cached context is stale. */
void zmlir_fast_context_destroyed(void) {
  __atomic_add_fetch(&zmlir_fast_epoch, 1, __ATOMIC_ACQ_REL);
}

void zmlir_fast_capture(int delta) {
  __atomic_add_fetch(&zmlir_fast_captures, delta, __ATOMIC_ACQ_REL);
}

/* Things a synchronisation point must do in Python (a printf buffer to
 * flush, memory pools to settle): while there are any, cuEventSynchronize
 * takes the Python path. */
void zmlir_fast_sync_work_add(int delta) {
  __atomic_add_fetch(&zmlir_fast_sync_work, delta, __ATOMIC_ACQ_REL);
}

void zmlir_fast_enable(int on) {
  ZMLIR_STORE(zmlir_fast_enabled, on);
}

unsigned long long zmlir_fast_launches(void) {
  return ZMLIR_LOAD(zmlir_fast_count);
}

unsigned long long zmlir_fast_events(void) {
  return ZMLIR_LOAD(zmlir_fast_event_count);
}

/* Taken and released around the Python path's launches: OpenCL binds
 * arguments to the kernel object, which launches from several threads share. */
void zmlir_fast_launch_lock(void) {
  pthread_mutex_lock(&zmlir_fast_cl);
  zmlir_faults_arm(1); /* faults.c */
}

/* `event`: the launch's OpenCL event, or NULL (none, or the launch failed);
 * returns the launch's number (launches in flight, above). */
unsigned long long zmlir_fast_launch_unlock(uintptr_t event) {
  unsigned long long n = zmlir_launch_enqueued((void *)event);
  pthread_mutex_unlock(&zmlir_fast_cl);
  return n;
}

/* -- a stream's own work on the backend's one queue -------------------------------
 *
 * Every stream's work goes into one in-order queue (OpenCL), so a created
 * stream's launches have ended once its last one has, with all that was
 * enqueued before it: a stream's synchronisation waits for that launch, not
 * for the work of other streams enqueued since (a kernel there may wait for
 * the host). The Python driver says when that is all of the stream's work
 * (state.py: own_work_is_launches). */

static void zmlir_stream_launched_at(struct zmlir_fast_entry *stream, unsigned long long n) {
  unsigned long long seen = ZMLIR_LOAD(stream->last_launch);
  while (seen < n && !__atomic_compare_exchange_n(&stream->last_launch, &seen, n, 0,
                                                  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    ;
}

/* Launches enqueued so far (numbered from 1). */
unsigned long long zmlir_fast_launches_enqueued(void) {
  return ZMLIR_LOAD(zmlir_launches_enqueued);
}

/* Stream `stream`'s work so far includes every launch enqueued so far (the
 * Python path's launches for it, and what they launched). */
void zmlir_fast_stream_launched(uintptr_t stream) {
  struct zmlir_fast_entry *e = zmlir_fast_find(stream, ZMLIR_FAST_STREAM);
  if (e != NULL)
    zmlir_stream_launched_at(e, ZMLIR_LOAD(zmlir_launches_enqueued));
}

/* Whether launch `n` (and every one before it) has ended. */
static int zmlir_launch_ended(unsigned long long n) {
  pthread_mutex_lock(&zmlir_fast_cl);
  zmlir_launch_reap();
  int ended = zmlir_launches_completed >= n;
  pthread_mutex_unlock(&zmlir_fast_cl);
  return ended;
}

/* Whether stream `stream`'s last launch has ended: 1, 0, or -1 where the
 * stream is not known here. */
int zmlir_fast_stream_ended(uintptr_t stream) {
  struct zmlir_fast_entry *e = zmlir_fast_find(stream, ZMLIR_FAST_STREAM);
  return e == NULL ? -1 : zmlir_launch_ended(ZMLIR_LOAD(e->last_launch));
}

/* Waits until stream `stream`'s last launch so far has ended: 1, or 0 where
 * the stream is not known here. It polls the launches' events, sleeping
 * between looks (10 us, doubling up to 0.5 ms), outside the lock (other
 * threads launch meanwhile, the one that ends a kernel we wait for among
 * them): a thread in clWaitForEvents runs the queue's work itself on Intel's
 * CPU runtime, the later kernels of other streams with it. */
int zmlir_fast_stream_wait(uintptr_t stream) {
  struct zmlir_fast_entry *e = zmlir_fast_find(stream, ZMLIR_FAST_STREAM);
  if (e == NULL)
    return 0;
  unsigned long long last = ZMLIR_LOAD(e->last_launch);
  for (long sleep_ns = 10000; !zmlir_launch_ended(last);
       sleep_ns = sleep_ns < 500000 ? 2 * sleep_ns : sleep_ns) {
    const struct timespec pause = {0, sleep_ns};
    nanosleep(&pause, NULL);
  }
  return 1;
}

/* -- context-local storage -------------------------------------------------------
 *
 * cudart reads its per-context state through the export table
 * CONTEXT_LOCAL_STORAGE (slot 2: get) before every launch. The Python driver
 * owns the storage and mirrors every put and delete here; a get the mirror
 * cannot answer goes to the Python body. */

#define ZMLIR_FAST_CLS_SLOTS 64

typedef CUresult (*zmlir_cls_get_fn)(void **, void *, void *);

struct zmlir_fast_cls {
  uintptr_t ctx, key;
  void *value;
  int live;
};

static struct zmlir_fast_cls zmlir_fast_cls_table[ZMLIR_FAST_CLS_SLOTS];
static pthread_mutex_t zmlir_fast_cls_lock = PTHREAD_MUTEX_INITIALIZER;
static zmlir_cls_get_fn zmlir_fast_cls_python;

void zmlir_fast_cls_configure(uintptr_t python_get) {
  pthread_mutex_lock(&zmlir_fast_cls_lock);
  zmlir_fast_cls_python = (zmlir_cls_get_fn)python_get;
  pthread_mutex_unlock(&zmlir_fast_cls_lock);
}

/* Forgets (ctx, key); ctx 0: in every context, key 0: every key. */
void zmlir_fast_cls_forget(uintptr_t ctx, uintptr_t key) {
  pthread_mutex_lock(&zmlir_fast_cls_lock);
  for (int i = 0; i < ZMLIR_FAST_CLS_SLOTS; ++i) {
    struct zmlir_fast_cls *e = &zmlir_fast_cls_table[i];
    if (e->live && (!ctx || e->ctx == ctx) && (!key || e->key == key))
      e->live = 0;
  }
  pthread_mutex_unlock(&zmlir_fast_cls_lock);
}

/* Mirrors a put; when the mirror is full the value is only in Python. */
void zmlir_fast_cls_put(uintptr_t ctx, uintptr_t key, uintptr_t value) {
  zmlir_fast_cls_forget(ctx, key);
  pthread_mutex_lock(&zmlir_fast_cls_lock);
  for (int i = 0; i < ZMLIR_FAST_CLS_SLOTS; ++i) {
    struct zmlir_fast_cls *e = &zmlir_fast_cls_table[i];
    if (!e->live) {
      e->ctx = ctx;
      e->key = key;
      e->value = (void *)value;
      e->live = 1;
      break;
    }
  }
  pthread_mutex_unlock(&zmlir_fast_cls_lock);
}

/* A NULL context is the calling thread's current one. A thread that has none
 * (a new thread: cudart makes the primary context current on it when this
 * get fails) or whose context this file does not know goes to Python. */
CUresult zmlir_fast_cls_get(void **pvalue, void *ctx, void *key) {
  uintptr_t c = (uintptr_t)ctx;
  if (c == 0 && zmlir_fast_ctx_epoch == ZMLIR_LOAD(zmlir_fast_epoch))
    c = zmlir_fast_ctx;
  pthread_mutex_lock(&zmlir_fast_cls_lock);
  zmlir_cls_get_fn python = zmlir_fast_cls_python;
  for (int i = 0; c && pvalue && i < ZMLIR_FAST_CLS_SLOTS; ++i) {
    struct zmlir_fast_cls *e = &zmlir_fast_cls_table[i];
    if (e->live && e->ctx == c && e->key == (uintptr_t)key) {
      *pvalue = e->value;
      pthread_mutex_unlock(&zmlir_fast_cls_lock);
      return 0;
    }
  }
  pthread_mutex_unlock(&zmlir_fast_cls_lock);
  return python ? python(pvalue, ctx, key) : 400; /* CUDA_ERROR_INVALID_HANDLE */
}

/* -- the launch ------------------------------------------------------------------ */

/* The work-group that runs a CUDA block (zmlir/targets/spirv's work_group):
 * where the kernel's warps are 32-wide sub-groups, a block of more than one
 * row whose width is no multiple of 32 runs as a one-dimensional work-group,
 * its %ntid.x and %ntid.y the global offsets in y and z (Intel's CPU runtime
 * forms sub-groups along x in each row; CUDA's warps are linear ids), where
 * the kernel has a form for it; 0 where it has none (the Python path refuses
 * the launch). */
static int zmlir_fast_work_group(const struct zmlir_fast_entry *e, const unsigned int block[3],
                                 size_t local[3], size_t offset[3]) {
  if (e->sub_group_size == 32 && block[0] % 32 != 0 && (size_t)block[1] * block[2] > 1) {
    if (!e->linear_blocks)
      return 0;
    local[0] = (size_t)block[0] * block[1] * block[2];
    local[1] = local[2] = 1;
    offset[1] = block[0];
    offset[2] = block[1];
    return 1;
  }
  for (int d = 0; d < 3; ++d)
    local[d] = block[d];
  return 1;
}

static int zmlir_fast_opencl(const struct zmlir_fast_entry *e, const unsigned int grid[3],
                             const unsigned int block[3], unsigned int window, void **params,
                             struct zmlir_fast_entry *stream, CUresult *result) {
  zmlir_cl_set_arg_fn set_arg = (zmlir_cl_set_arg_fn)zmlir_fast_backend.set_arg;
  zmlir_cl_enqueue_fn enqueue = (zmlir_cl_enqueue_fn)zmlir_fast_backend.enqueue;
  void *kernel = (void *)e->target, *queue = (void *)zmlir_fast_backend.queue;
  if (e->variant && grid[0] <= e->variant_grid_x && grid[1] <= 65535 && grid[2] <= 65535)
    kernel = (void *)e->variant;
  if (!set_arg || !enqueue || !queue)
    return 0;
  /* The window's size is the global work offset in x: kernels read
   * %total_smem_size and %dynamic_smem_size with get_global_offset(0). */
  size_t global[3], local[3], offset[3] = {window, 0, 0};
  if (!zmlir_fast_work_group(e, block, local, offset))
    return 0;
  for (int d = 0; d < 3; ++d)
    global[d] = (size_t)grid[d] * local[d];
  void *event = NULL;
  pthread_mutex_lock(&zmlir_fast_cl);
  int ok = 1;
  for (unsigned int i = 0; ok && i < e->nparams; ++i)
    ok = params[i] != NULL && set_arg(kernel, i, e->sizes[i], params[i]) == 0;
  /* A __local argument cannot be 0 bytes; an empty window is never touched. */
  ok = ok && set_arg(kernel, e->nparams, window ? window : 1, NULL) == 0;
  zmlir_faults_arm(1); /* faults.c; disarmed at the kernel's end */
  ok = ok && enqueue(queue, kernel, 3, offset, global, local, 0, NULL, &event) == 0;
  if (!ok) {
    zmlir_faults_arm(-1);
    pthread_mutex_unlock(&zmlir_fast_cl);
    return 0; /* nothing ran: the Python path reports the error */
  }
  unsigned long long number = zmlir_launch_enqueued(event);
  pthread_mutex_unlock(&zmlir_fast_cl);
  if (stream != NULL)
    zmlir_stream_launched_at(stream, number);
  *result = 0;
  return 1;
}

/* Whether a call on `stream` may take the fast path at all: it is on (no
 * tracing), no capture of the Python driver's is under way (the real
 * driver's may be: zmlir_fast_applies), the calling thread's current context is
 * known and holds no sticky error, no kernel has faulted or failed since the
 * Python driver last looked, and the stream is a default one or ours. */
static int zmlir_fast_applies_in_capture(void *stream) {
  if (!ZMLIR_LOAD(zmlir_fast_enabled) || ZMLIR_LOAD(zmlir_fast_captures) != 0)
    return 0;
  if (zmlir_fast_ctx == 0 || zmlir_fast_ctx_epoch != ZMLIR_LOAD(zmlir_fast_epoch))
    return 0;
  /* A kernel since faulted or failed: the Python path makes it sticky. */
  if (ZMLIR_LOAD(zmlir_faults_count) != 0 || ZMLIR_LOAD(zmlir_launches_failed) != 0)
    return 0;
  uintptr_t s = (uintptr_t)stream;
  return s <= 2 || zmlir_fast_find(s, ZMLIR_FAST_STREAM) != NULL; /* 0-2: default streams */
}

/* As zmlir_fast_applies_in_capture, and no stream captures on the real
 * driver either: any call but a stream's work (below) is Python's then. */
static int zmlir_fast_applies(void *stream) {
  return ZMLIR_LOAD(zmlir_fast_vendor_captures) == 0 && zmlir_fast_applies_in_capture(stream);
}

/* Whether a stream's work (a launch, an asynchronous copy or fill) may take
 * the fast path: 0 no, 1 yes, 2 yes with zmlir_capture_lock held (release
 * it with zmlir_fast_work_done). While the real driver captures streams of
 * ours, only our created streams' work is here (on a capturing one, the
 * real driver records it); the lock keeps the Python driver from ending
 * those captures meanwhile (capture.py: demote_vendor_captures). */
static int zmlir_fast_work_applies(void *stream) {
  if (ZMLIR_LOAD(zmlir_fast_vendor_captures) == 0)
    return zmlir_fast_applies_in_capture(stream);
  if ((uintptr_t)stream <= 2)
    return 0;
  pthread_mutex_lock(&zmlir_capture_lock);
  if (zmlir_fast_applies_in_capture(stream))
    return 2;
  pthread_mutex_unlock(&zmlir_capture_lock);
  return 0;
}

static void zmlir_fast_work_done(int applies) {
  if (applies == 2)
    pthread_mutex_unlock(&zmlir_capture_lock);
}

/* A created stream's entry; NULL for a default one (0-2) or an unknown one. */
static struct zmlir_fast_entry *zmlir_fast_stream_entry(void *stream) {
  uintptr_t s = (uintptr_t)stream;
  return s > 2 ? zmlir_fast_find(s, ZMLIR_FAST_STREAM) : NULL;
}

/* The real driver's stream for a stream zmlir_fast_applies to: a registered
 * stream's target (its vendor stream), else NULL (the NULL stream). */
static void *zmlir_fast_queue(void *stream) {
  struct zmlir_fast_entry *e = zmlir_fast_stream_entry(stream);
  return e ? (void *)e->target : NULL;
}

/* Whether `extra` packs the parameters as the Python path reads it
 * (launch.py: _extra_buffer, _unpack): pairs of CU_LAUNCH_PARAM_BUFFER_POINTER
 * (1) and _SIZE (2) up to _END (0), 32 at most, holding `bytes` at least. */
static int zmlir_fast_extra_fits(void **extra, unsigned int bytes) {
  int pointer = 0, sized = 0;
  for (int i = 0; i < 64; i += 2) {
    uintptr_t tag = (uintptr_t)extra[i];
    if (tag == 0)
      break;
    if ((tag != 1 && tag != 2) || extra[i + 1] == NULL)
      return 0;
    if (tag == 1)
      pointer = 1;
    else
      sized = *(const size_t *)extra[i + 1] >= bytes;
  }
  return pointer && sized;
}

/* Launches through the fast path if it applies: 1 with *result set, else 0.
 * `cluster`: a thread-block cluster's dimensions (NULL: none), which only
 * the real driver's cuLaunchKernelEx launches. Under the passthrough a
 * launch with `extra` (NVIDIA's cuBLAS packs its kernels' parameters so)
 * hands it to the real driver as it is, where the Python path unpacks it
 * into kernelParams: the same bytes. */
static int zmlir_fast_launch_here(void *f, const unsigned int grid[3],
                                  const unsigned int block[3], unsigned int shared, void *stream,
                                  void **params, void **extra, const unsigned int *cluster,
                                  CUresult *result) {
  struct zmlir_fast_entry *e = zmlir_fast_find_function((uintptr_t)f);
  if (e == NULL)
    return 0;
  if (extra != NULL ? e->kind != ZMLIR_FAST_CUDA || params != NULL ||
                          !zmlir_fast_extra_fits(extra, e->param_bytes)
                    : params == NULL && e->nparams != 0)
    return 0;
  unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
  if (!grid[0] || !grid[1] || !grid[2] || grid[0] > 0x7fffffffu || grid[1] > 65535 ||
      grid[2] > 65535 || !threads || threads > 1024 || block[2] > 64 || threads > e->max_threads)
    return 0;
  unsigned long long window = (unsigned long long)e->static_shared + shared;
  if (window > ZMLIR_LOAD(e->shared_limit))
    return 0;
  if (e->kind == ZMLIR_FAST_OPENCL) {
    struct zmlir_fast_entry *queued =
        (uintptr_t)stream > 2 ? zmlir_fast_find((uintptr_t)stream, ZMLIR_FAST_STREAM) : NULL;
    if (cluster != NULL ||
        !zmlir_fast_opencl(e, grid, block, (unsigned int)window, params, queued, result))
      return 0;
  } else {
    zmlir_cu_launch_fn launch = (zmlir_cu_launch_fn)zmlir_fast_backend.launch;
    zmlir_cu_launch_ex_fn launch_ex = (zmlir_cu_launch_ex_fn)zmlir_fast_backend.launch_ex;
    CUresult code;
    if (cluster != NULL) {
      /* As the backend's _launch: the cluster and an unset cooperative flag
       * (the hints the application gave are dropped), on the stream's queue. */
      if (launch_ex == NULL || grid[0] % cluster[0] || grid[1] % cluster[1] ||
          grid[2] % cluster[2])
        return 0;
      CUlaunchAttribute attrs[2];
      memset(attrs, 0, sizeof attrs);
      attrs[0].id = 4; /* CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION */
      memcpy(attrs[0].value, cluster, 3 * sizeof *cluster);
      attrs[1].id = 2; /* CU_LAUNCH_ATTRIBUTE_COOPERATIVE: 0 */
      CUlaunchConfig config = {grid[0], grid[1], grid[2], block[0], block[1], block[2],
                               (unsigned int)window, zmlir_fast_queue(stream), attrs, 2};
      code = launch_ex(&config, (void *)e->target, params, extra);
    } else if (launch != NULL)
      code = launch((void *)e->target, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                    (unsigned int)window, zmlir_fast_queue(stream), params, extra);
    else
      return 0;
    /* 201 (CUDA_ERROR_INVALID_CONTEXT): this thread has not entered the real
     * context. A cluster or `extra` the real driver refuses is the Python
     * path's to answer: it launches otherwise (kernelParams of its own). */
    if (code == 201 || (code != 0 && (cluster != NULL || extra != NULL)))
      return 0;
    *result = code;
  }
  __atomic_add_fetch(&zmlir_fast_count, 1, __ATOMIC_RELAXED);
  return 1;
}

/* A launch in a capture on the real driver is one without `extra` or a
 * cluster: the kernel node it records has all the Python driver's copy
 * holds (graph/vendor.py: imported). */
static int zmlir_fast_launch(void *f, const unsigned int grid[3], const unsigned int block[3],
                             unsigned int shared, void *stream, void **params, void **extra,
                             const unsigned int *cluster, CUresult *result) {
  int applies = zmlir_fast_work_applies(stream);
  int done = applies && !(applies == 2 && (extra != NULL || cluster != NULL)) &&
             zmlir_fast_launch_here(f, grid, block, shared, stream, params, extra, cluster, result);
  zmlir_fast_work_done(applies);
  return done;
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                        void **kernelParams, void **extra) {
  const unsigned int grid[3] = {gridDimX, gridDimY, gridDimZ};
  const unsigned int block[3] = {blockDimX, blockDimY, blockDimZ};
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_launch(f, grid, block, sharedMemBytes, hStream, kernelParams, extra, NULL,
                         &result))
    result = zmlir_py_cuLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
                                     blockDimZ, sharedMemBytes, hStream, kernelParams, extra);
  zmlir_leave();
  return result;
}

/* cuLaunchKernelEx's attributes as the Python path reads them (launch.py):
 * 1 where each is a hint that changes nothing here, a cooperative flag the
 * last of which is unset, or a cluster's dimensions (*cluster: the last that
 * are not all 1 or all 0; NULL: none); 0 leaves the launch to the Python
 * path. NVIDIA's cuBLAS launches its sm_90 kernels with a cluster. */
static int zmlir_fast_launch_attributes(const CUlaunchConfig *config,
                                        const unsigned int **cluster) {
  const CUlaunchAttribute *attrs = config->attrs;
  int cooperative = 0;
  *cluster = NULL;
  if (config->numAttrs != 0 && attrs == NULL)
    return 0;
  for (unsigned int i = 0; i < config->numAttrs; ++i) {
    const unsigned int *value = (const unsigned int *)attrs[i].value;
    int trivial = (value[0] == 1 && value[1] == 1 && value[2] == 1) ||
                  (value[0] == 0 && value[1] == 0 && value[2] == 0);
    switch (attrs[i].id) {
    case 0: case 1: case 3: case 5: case 6: case 8: case 9: case 10: case 14: case 16:
      break; /* launch.py's _LAUNCH_HINTS */
    case 2: /* COOPERATIVE */
      cooperative = value[0] != 0;
      break;
    case 4: /* CLUSTER_DIMENSION */
      if (!trivial)
        *cluster = value;
      break;
    case 11: /* PREFERRED_CLUSTER_DIMENSION */
      if (!trivial)
        return 0;
      break;
    default:
      return 0;
    }
  }
  return !cooperative;
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                          void **extra) {
  CUresult result;
  const unsigned int *cluster;
  zmlir_enter();
  if (config != NULL && zmlir_fast_launch_attributes(config, &cluster)) {
    const unsigned int grid[3] = {config->gridDimX, config->gridDimY, config->gridDimZ};
    const unsigned int block[3] = {config->blockDimX, config->blockDimY, config->blockDimZ};
    if (zmlir_fast_launch(f, grid, block, config->sharedMemBytes, config->hStream, kernelParams,
                          extra, cluster, &result)) {
      zmlir_leave();
      return result;
    }
  }
  result = zmlir_py_cuLaunchKernelEx(config, f, kernelParams, extra);
  zmlir_leave();
  return result;
}

/* -- events ----------------------------------------------------------------------
 *
 * Under the CUDA passthrough an event is one of the real driver's, created
 * with the event and its flags and recorded in place in its stream's queue
 * (the NULL stream, or a created stream's vendor stream, where that stream's
 * launches go: backends/cuda.py). The Python driver registers it as it
 * creates it, and again when it records it outside a capture, and forgets it
 * when it is recorded into a capture or destroyed. A registered event's
 * record, query, synchronisation and elapsed time then go straight to the
 * real driver's functions when zmlir_fast_applies (a record: on its stream;
 * the others: on the default stream's terms, a current context without a
 * sticky error, no tracing, no capture under way). The real driver's
 * success (and NOT_READY, where a call may answer it) is the answer; any
 * other result takes the Python path, which makes the same call again and
 * reports it as it always does (a real sticky error becomes ours).
 * cuEventSynchronize also needs zmlir_fast_sync_work at 0: a synchronisation
 * point's own work (device printf output, memory pools) is Python's. Other backends register no
 * events: their events are the Python driver's (OpenCL: markers). */

static struct zmlir_fast_entry *zmlir_fast_event_entry(void *event, void *stream) {
  return zmlir_fast_applies(stream) ? zmlir_fast_find((uintptr_t)event, ZMLIR_FAST_EVENT) : NULL;
}

static int zmlir_fast_event_done(CUresult code, int not_ready_ok, CUresult *result) {
  if (code != 0 && !(not_ready_ok && code == 600)) /* CUDA_ERROR_NOT_READY */
    return 0;
  *result = code;
  __atomic_add_fetch(&zmlir_fast_event_count, 1, __ATOMIC_RELAXED);
  return 1;
}

static int zmlir_fast_event_record(void *event, void *stream, CUresult *result) {
  zmlir_cu_event_record_fn record = (zmlir_cu_event_record_fn)zmlir_fast_backend.event_record;
  struct zmlir_fast_entry *e = zmlir_fast_event_entry(event, stream);
  /* A thread that has not entered the real context gets 201: Python enters it. */
  return e && record &&
         zmlir_fast_event_done(record((void *)e->target, zmlir_fast_queue(stream)), 0, result);
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_event_record(hEvent, hStream, &result))
    result = zmlir_py_cuEventRecord(hEvent, hStream);
  zmlir_leave();
  return result;
}

/* Flags (CU_EVENT_RECORD_EXTERNAL: a node in a capture) are Python's to judge. */
CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) {
  CUresult result;
  zmlir_enter();
  if (flags != 0 || !zmlir_fast_event_record(hEvent, hStream, &result))
    result = zmlir_py_cuEventRecordWithFlags(hEvent, hStream, flags);
  zmlir_leave();
  return result;
}

CUresult cuEventQuery(CUevent hEvent) {
  zmlir_cu_event_fn query = (zmlir_cu_event_fn)zmlir_fast_backend.event_query;
  CUresult result;
  zmlir_enter();
  struct zmlir_fast_entry *e = zmlir_fast_event_entry(hEvent, NULL);
  if (!(e && query && zmlir_fast_event_done(query((void *)e->target), 1, &result)))
    result = zmlir_py_cuEventQuery(hEvent);
  zmlir_leave();
  return result;
}

CUresult cuEventSynchronize(CUevent hEvent) {
  zmlir_cu_event_fn synchronize = (zmlir_cu_event_fn)zmlir_fast_backend.event_synchronize;
  CUresult result;
  zmlir_enter();
  struct zmlir_fast_entry *e = ZMLIR_LOAD(zmlir_fast_sync_work) == 0
                                   ? zmlir_fast_event_entry(hEvent, NULL)
                                   : NULL;
  if (!(e && synchronize && zmlir_fast_event_done(synchronize((void *)e->target), 0, &result)))
    result = zmlir_py_cuEventSynchronize(hEvent);
  zmlir_leave();
  return result;
}

static int zmlir_fast_elapsed(float *ms, void *start, void *end, CUresult *result) {
  zmlir_cu_event_elapsed_fn elapsed = (zmlir_cu_event_elapsed_fn)zmlir_fast_backend.event_elapsed;
  struct zmlir_fast_entry *a = zmlir_fast_event_entry(start, NULL);
  struct zmlir_fast_entry *b = a ? zmlir_fast_event_entry(end, NULL) : NULL;
  return b && elapsed && ms &&
         zmlir_fast_event_done(elapsed(ms, (void *)a->target, (void *)b->target), 1, result);
}

CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_elapsed(pMilliseconds, hStart, hEnd, &result))
    result = zmlir_py_cuEventElapsedTime(pMilliseconds, hStart, hEnd);
  zmlir_leave();
  return result;
}

CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_elapsed(pMilliseconds, hStart, hEnd, &result))
    result = zmlir_py_cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
  zmlir_leave();
  return result;
}

/* -- device memory ---------------------------------------------------------------
 *
 * Under the CUDA passthrough cuMemAlloc_v2, cuMemFree_v2 and cuMemsetD8/16/32
 * (_v2 and Async) go straight to the real driver's when zmlir_fast_applies
 * (no tracing, no capture, a known current context without a sticky
 * error, a default stream or ours): cudaMalloc, cudaMemset and cudaFree in a
 * program's timed loop (llm.c's layernorm_backward) cost what they cost on
 * NVIDIA's driver. The real driver's answers are the answers; any other than
 * success takes the Python path, which makes the call again and reports it as
 * it always does (an allocation's CUDA_ERROR_OUT_OF_MEMORY, a memset's
 * CUDA_ERROR_INVALID_VALUE, 201 from a thread that has not entered the real
 * context).
 *
 * The Python driver keeps the allocations' map (pointer queries, copies,
 * cuMemGetInfo, IPC): every allocation and free made here is written to a
 * journal it takes before it reads the map (zmlir_fast_mem_take, in order).
 * cuMemFree_v2 takes this path only for an allocation made here that Python
 * has not claimed (zmlir_fast_mem_claim: it has work to do at its free) and
 * only while a synchronisation point has no Python work (device printf
 * output: cudaFree is one); every other free is Python's. A full journal or
 * table sends allocations to Python until it has taken the journal. */

#define ZMLIR_MEM_SLOTS 16384 /* a power of two */
#define ZMLIR_MEM_JOURNAL 4096
#define ZMLIR_MEM_TOMBSTONE ((uintptr_t)1)
/* A table key's tag: an allocation of the real driver's default pool
 * (cuMemAllocAsync), which cuMemFreeAsync may free here. */
#define ZMLIR_MEM_ASYNC ((uintptr_t)2)

struct zmlir_mem_record {
  uintptr_t address;
  size_t size; /* 0: freed */
};

static uintptr_t zmlir_mem_table[ZMLIR_MEM_SLOTS]; /* live allocations made here */
static size_t zmlir_mem_live, zmlir_mem_used;      /* slots live; live or tombstones */
static struct zmlir_mem_record zmlir_mem_journal[ZMLIR_MEM_JOURNAL];
static size_t zmlir_mem_journal_length;
static pthread_mutex_t zmlir_mem_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long zmlir_fast_mem_count;

/* Under zmlir_mem_lock: the slot of `address`, or NULL. */
static uintptr_t *zmlir_mem_find(uintptr_t address) {
  size_t i = zmlir_fast_hash(address) & (ZMLIR_MEM_SLOTS - 1);
  for (size_t n = 0; n < ZMLIR_MEM_SLOTS; ++n, i = (i + 1) & (ZMLIR_MEM_SLOTS - 1)) {
    if (zmlir_mem_table[i] == address)
      return &zmlir_mem_table[i];
    if (zmlir_mem_table[i] == 0)
      return NULL;
  }
  return NULL;
}

/* Under zmlir_mem_lock: forgets `address`; whether it was there. */
static int zmlir_mem_remove(uintptr_t address) {
  uintptr_t *slot = zmlir_mem_find(address);
  if (slot == NULL)
    return 0;
  *slot = ZMLIR_MEM_TOMBSTONE;
  --zmlir_mem_live;
  if (zmlir_mem_live == 0) { /* tombstones go when the table empties */
    memset(zmlir_mem_table, 0, sizeof zmlir_mem_table);
    zmlir_mem_used = 0;
  }
  return 1;
}

/* Under zmlir_mem_lock: remembers `address` (not there). */
static void zmlir_mem_insert(uintptr_t address) {
  size_t i = zmlir_fast_hash(address) & (ZMLIR_MEM_SLOTS - 1);
  while (zmlir_mem_table[i] > ZMLIR_MEM_TOMBSTONE)
    i = (i + 1) & (ZMLIR_MEM_SLOTS - 1);
  if (zmlir_mem_table[i] == 0)
    ++zmlir_mem_used;
  zmlir_mem_table[i] = address;
  ++zmlir_mem_live;
}

/* Under zmlir_mem_lock: whether the journal and the table take one more
 * allocation (else it is Python's until Python has taken the journal). */
static int zmlir_mem_has_room(void) {
  return zmlir_mem_journal_length < ZMLIR_MEM_JOURNAL && zmlir_mem_used < ZMLIR_MEM_SLOTS / 2;
}

static void zmlir_mem_record(uintptr_t address, size_t size) {
  zmlir_mem_journal[zmlir_mem_journal_length++] = (struct zmlir_mem_record){address, size};
  __atomic_add_fetch(&zmlir_fast_mem_count, 1, __ATOMIC_RELAXED);
}

/* Python takes the journal: up to `room` records, oldest first; how many. */
size_t zmlir_fast_mem_take(struct zmlir_mem_record *out, size_t room) {
  pthread_mutex_lock(&zmlir_mem_lock);
  size_t n = zmlir_mem_journal_length < room ? zmlir_mem_journal_length : room;
  memcpy(out, zmlir_mem_journal, n * sizeof *out);
  memmove(zmlir_mem_journal, zmlir_mem_journal + n, (zmlir_mem_journal_length - n) * sizeof *out);
  zmlir_mem_journal_length -= n;
  pthread_mutex_unlock(&zmlir_mem_lock);
  return n;
}

/* Whether the journal holds records (read without the lock: a hint). */
int zmlir_fast_mem_pending(void) {
  return __atomic_load_n(&zmlir_mem_journal_length, __ATOMIC_RELAXED) != 0;
}

/* Under zmlir_mem_lock: what made the live allocation at `address` here, 1
 * cuMemAlloc_v2, 2 cuMemAllocAsync (a block of the real driver's default
 * pool, its key tagged ZMLIR_MEM_ASYNC), else 0; forgotten where `claim`. */
static int zmlir_mem_kind(uintptr_t address, int claim) {
  if (address <= ZMLIR_MEM_TOMBSTONE)
    return 0;
  for (int kind = 1; kind <= 2; ++kind) {
    uintptr_t key = kind == 1 ? address : address | ZMLIR_MEM_ASYNC;
    if (claim ? zmlir_mem_remove(key) : zmlir_mem_find(key) != NULL)
      return kind;
  }
  return 0;
}

/* Python frees (or otherwise owns) the allocation at `address` from now on;
 * whether it was one made here, and how (zmlir_mem_kind). */
int zmlir_fast_mem_claim(uintptr_t address) {
  pthread_mutex_lock(&zmlir_mem_lock);
  int kind = zmlir_mem_kind(address, 1);
  pthread_mutex_unlock(&zmlir_mem_lock);
  return kind;
}

/* What made the live allocation at `address` here, without claiming it. */
int zmlir_fast_mem_kind(uintptr_t address) {
  pthread_mutex_lock(&zmlir_mem_lock);
  int kind = zmlir_mem_kind(address, 0);
  pthread_mutex_unlock(&zmlir_mem_lock);
  return kind;
}

/* Calls that took this path: allocations and frees (the journal), memsets. */
unsigned long long zmlir_fast_memory_calls(void) {
  return ZMLIR_LOAD(zmlir_fast_mem_count);
}

CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) {
  zmlir_cu_mem_alloc_fn alloc = (zmlir_cu_mem_alloc_fn)zmlir_fast_backend.mem_alloc;
  CUresult result = 1;
  zmlir_enter();
  int fast = alloc && dptr && bytesize && zmlir_fast_applies(NULL);
  if (fast) {
    pthread_mutex_lock(&zmlir_mem_lock);
    fast = zmlir_mem_has_room();
    CUdeviceptr p = 0;
    fast = fast && (result = alloc(&p, bytesize)) == 0 && p > ZMLIR_MEM_TOMBSTONE;
    if (fast) {
      zmlir_mem_insert((uintptr_t)p);
      zmlir_mem_record((uintptr_t)p, bytesize);
      *dptr = p;
    } else if (result == 0) { /* NVIDIA's allocation at an address we cannot key */
      fast = 0;
      ((zmlir_cu_mem_free_fn)zmlir_fast_backend.mem_free)(p);
    }
    pthread_mutex_unlock(&zmlir_mem_lock);
  }
  if (!fast)
    result = zmlir_py_cuMemAlloc_v2(dptr, bytesize);
  zmlir_leave();
  return result;
}

CUresult cuMemFree_v2(CUdeviceptr dptr) {
  zmlir_cu_mem_free_fn release = (zmlir_cu_mem_free_fn)zmlir_fast_backend.mem_free;
  CUresult result = 1;
  zmlir_enter();
  int fast = release && ZMLIR_LOAD(zmlir_fast_sync_work) == 0 && zmlir_fast_applies(NULL) &&
             zmlir_fast_mem_claim((uintptr_t)dptr);
  if (fast) {
    pthread_mutex_lock(&zmlir_mem_lock);
    if (zmlir_mem_journal_length < ZMLIR_MEM_JOURNAL && (result = release(dptr)) == 0)
      zmlir_mem_record((uintptr_t)dptr, 0);
    else { /* Python's again, which frees it and reports what NVIDIA's says */
      zmlir_mem_insert((uintptr_t)dptr);
      fast = 0;
    }
    pthread_mutex_unlock(&zmlir_mem_lock);
  }
  if (!fast)
    result = zmlir_py_cuMemFree_v2(dptr);
  zmlir_leave();
  return result;
}

/* cudaMallocAsync and cudaFreeAsync where the device's current pool is the
 * real driver's default pool (mempool.py: VendorDefaultPool): the real
 * driver's, in the stream's own stream (zmlir_fast_queue), journalled as
 * cuMemAlloc_v2's are. Only a block allocated here is freed here (its key
 * tagged ZMLIR_MEM_ASYNC); any other free, and any refusal, is Python's. A
 * free in stream order is no synchronisation point: no Python work waits. */
CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream) {
  zmlir_cu_mem_alloc_async_fn alloc =
      (zmlir_cu_mem_alloc_async_fn)ZMLIR_LOAD(zmlir_fast_backend.mem_alloc_async);
  CUresult result = 1;
  zmlir_enter();
  int fast = alloc && dptr && bytesize && zmlir_fast_applies(hStream);
  if (fast) {
    pthread_mutex_lock(&zmlir_mem_lock);
    fast = zmlir_mem_has_room();
    CUdeviceptr p = 0;
    fast = fast && (result = alloc(&p, bytesize, zmlir_fast_queue(hStream))) == 0 &&
           p > ZMLIR_MEM_TOMBSTONE && (p & ZMLIR_MEM_ASYNC) == 0;
    if (fast) {
      zmlir_mem_insert((uintptr_t)p | ZMLIR_MEM_ASYNC);
      zmlir_mem_record((uintptr_t)p, bytesize);
      *dptr = p;
    } else if (result == 0) { /* an address we cannot key */
      ((zmlir_cu_mem_free_async_fn)zmlir_fast_backend.mem_free_async)(p,
                                                                      zmlir_fast_queue(hStream));
    }
    pthread_mutex_unlock(&zmlir_mem_lock);
  }
  if (!fast)
    result = zmlir_py_cuMemAllocAsync(dptr, bytesize, hStream);
  zmlir_leave();
  return result;
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
  zmlir_cu_mem_free_async_fn release =
      (zmlir_cu_mem_free_async_fn)zmlir_fast_backend.mem_free_async;
  CUresult result = 1;
  zmlir_enter();
  int fast = release && dptr && zmlir_fast_applies(hStream);
  if (fast) {
    pthread_mutex_lock(&zmlir_mem_lock);
    fast = zmlir_mem_journal_length < ZMLIR_MEM_JOURNAL &&
           zmlir_mem_remove((uintptr_t)dptr | ZMLIR_MEM_ASYNC);
    if (fast && (result = release(dptr, zmlir_fast_queue(hStream))) == 0)
      zmlir_mem_record((uintptr_t)dptr, 0);
    else if (fast) { /* Python's again, which frees it and reports what NVIDIA's says */
      zmlir_mem_insert((uintptr_t)dptr | ZMLIR_MEM_ASYNC);
      fast = 0;
    }
    pthread_mutex_unlock(&zmlir_mem_lock);
  }
  if (!fast)
    result = zmlir_py_cuMemFreeAsync(dptr, hStream);
  zmlir_leave();
  return result;
}

/* Managed memory hints (cudaMemPrefetchAsync, cudaMemAdvise): the real
 * driver's, whose managed memory moves, where zmlir_fast_applies and the
 * location is the host or our device 0 (made the real driver's ordinal);
 * the prefetch in the stream's own stream. Any refusal is the Python path's,
 * which checks the range and asks again (memory.py). */
static int zmlir_fast_location(CUmemLocation *where) {
  if (where->type == 1) { /* CU_MEM_LOCATION_TYPE_DEVICE */
    if (where->id != 0)
      return 0;
    where->id = (int)zmlir_fast_backend.device_ordinal;
  }
  return where->type >= 1 && where->type <= 4; /* device, host, host NUMA (current) */
}

static int zmlir_fast_prefetch(CUdeviceptr ptr, size_t count, CUmemLocation where,
                               unsigned int flags, void *stream, CUresult *result) {
  zmlir_cu_prefetch_fn prefetch = (zmlir_cu_prefetch_fn)zmlir_fast_backend.mem_prefetch;
  if (!prefetch || !count || !zmlir_fast_location(&where) || !zmlir_fast_applies(stream) ||
      (*result = prefetch(ptr, count, where, flags, zmlir_fast_queue(stream))) != 0)
    return 0;
  __atomic_add_fetch(&zmlir_fast_mem_count, 1, __ATOMIC_RELAXED);
  return 1;
}

static int zmlir_fast_advise(CUdeviceptr ptr, size_t count, int advice, CUmemLocation where,
                             CUresult *result) {
  zmlir_cu_advise_fn advise = (zmlir_cu_advise_fn)zmlir_fast_backend.mem_advise;
  if (!advise || !count || advice < 1 || advice > 6 || !zmlir_fast_location(&where) ||
      !zmlir_fast_applies(NULL) || (*result = advise(ptr, count, advice, where)) != 0)
    return 0;
  __atomic_add_fetch(&zmlir_fast_mem_count, 1, __ATOMIC_RELAXED);
  return 1;
}

/* CUDA 8-12's device ordinals: CU_DEVICE_CPU (-1) is the host. */
static CUmemLocation zmlir_fast_device_location(int device) {
  CUmemLocation where = {device == -1 ? 2 : 1, device == -1 ? 0 : device};
  return where;
}

CUresult cuMemPrefetchAsync_v2(CUdeviceptr devPtr, size_t count, CUmemLocation location,
                               unsigned int flags, CUstream hStream) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_prefetch(devPtr, count, location, flags, hStream, &result))
    result = zmlir_py_cuMemPrefetchAsync_v2(devPtr, count, location, flags, hStream);
  zmlir_leave();
  return result;
}

CUresult cuMemPrefetchAsync(CUdeviceptr devPtr, size_t count, CUdevice dstDevice,
                            CUstream hStream) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_prefetch(devPtr, count, zmlir_fast_device_location(dstDevice), 0, hStream,
                           &result))
    result = zmlir_py_cuMemPrefetchAsync(devPtr, count, dstDevice, hStream);
  zmlir_leave();
  return result;
}

CUresult cuMemAdvise_v2(CUdeviceptr devPtr, size_t count, int advice, CUmemLocation location) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_advise(devPtr, count, advice, location, &result))
    result = zmlir_py_cuMemAdvise_v2(devPtr, count, advice, location);
  zmlir_leave();
  return result;
}

CUresult cuMemAdvise(CUdeviceptr devPtr, size_t count, int advice, CUdevice device) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_advise(devPtr, count, advice, zmlir_fast_device_location(device), &result))
    result = zmlir_py_cuMemAdvise(devPtr, count, advice, device);
  zmlir_leave();
  return result;
}

/* A memset through the real driver's `index` (0: D8, 1: D16, 2: D32); where
 * `async`, on the stream's own stream (zmlir_fast_queue: NULL for the
 * default streams); 1 with *result set, else 0. */
static int zmlir_fast_memset(int index, int async, CUdeviceptr dst, unsigned int value, size_t n,
                             void *stream, CUresult *result) {
  uintptr_t fn = async ? zmlir_fast_backend.memset_async[index] : zmlir_fast_backend.memset[index];
  int applies = !fn ? 0 : async ? zmlir_fast_work_applies(stream) : zmlir_fast_applies(stream);
  if (!applies)
    return 0;
  CUresult code;
  void *queue = async ? zmlir_fast_queue(stream) : NULL;
  if (index == 0)
    code = async ? ((zmlir_cu_memset8_async_fn)fn)(dst, (unsigned char)value, n, queue)
                 : ((zmlir_cu_memset8_fn)fn)(dst, (unsigned char)value, n);
  else if (index == 1)
    code = async ? ((zmlir_cu_memset16_async_fn)fn)(dst, (unsigned short)value, n, queue)
                 : ((zmlir_cu_memset16_fn)fn)(dst, (unsigned short)value, n);
  else
    code = async ? ((zmlir_cu_memset32_async_fn)fn)(dst, value, n, queue)
                 : ((zmlir_cu_memset32_fn)fn)(dst, value, n);
  zmlir_fast_work_done(applies);
  if (code != 0)
    return 0;
  *result = 0;
  __atomic_add_fetch(&zmlir_fast_mem_count, 1, __ATOMIC_RELAXED);
  return 1;
}

#define ZMLIR_FAST_MEMSET(name, index, type)                                                       \
  CUresult name##_v2(CUdeviceptr dst, type value, size_t n) {                                      \
    CUresult result;                                                                               \
    zmlir_enter();                                                                                 \
    if (!zmlir_fast_memset(index, 0, dst, value, n, NULL, &result))                                \
      result = zmlir_py_##name##_v2(dst, value, n);                                                \
    zmlir_leave();                                                                                 \
    return result;                                                                                 \
  }                                                                                                \
  CUresult name##Async(CUdeviceptr dst, type value, size_t n, CUstream stream) {                   \
    CUresult result;                                                                               \
    zmlir_enter();                                                                                 \
    if (!zmlir_fast_memset(index, 1, dst, value, n, stream, &result))                              \
      result = zmlir_py_##name##Async(dst, value, n, stream);                                      \
    zmlir_leave();                                                                                 \
    return result;                                                                                 \
  }

ZMLIR_FAST_MEMSET(cuMemsetD8, 0, unsigned char)
ZMLIR_FAST_MEMSET(cuMemsetD16, 1, unsigned short)
ZMLIR_FAST_MEMSET(cuMemsetD32, 2, unsigned int)

/* Asynchronous copies under the passthrough: the real driver's, on the
 * stream's queue (zmlir_fast_queue), where zmlir_fast_applies. The host then
 * waits for a copy only where NVIDIA's driver makes it (pageable host memory),
 * and copies overlap kernels and each other as natively (simpleMultiCopy,
 * asyncAPI); the Python path waits for each. Any answer but success takes
 * the Python path, which validates the copy and reports what is wrong.
 * `index`: 0 cuMemcpyAsync, 1 HtoD, 2 DtoH, 3 DtoD. */
static int zmlir_fast_copy_async(int index, uintptr_t dst, uintptr_t src, size_t n, void *stream,
                                 CUresult *result) {
  uintptr_t fn = zmlir_fast_backend.copy_async[index];
  int applies = fn ? zmlir_fast_work_applies(stream) : 0;
  if (!applies)
    return 0;
  CUresult code = ((zmlir_cu_copy_async_fn)fn)(dst, src, n, zmlir_fast_queue(stream));
  zmlir_fast_work_done(applies);
  if (code != 0)
    return 0;
  *result = 0;
  __atomic_add_fetch(&zmlir_fast_mem_count, 1, __ATOMIC_RELAXED);
  return 1;
}

#define ZMLIR_FAST_COPY_ASYNC(name, index, dst_type, src_type)                                     \
  CUresult name(dst_type dst, src_type src, size_t n, CUstream stream) {                           \
    CUresult result;                                                                               \
    zmlir_enter();                                                                                 \
    if (!zmlir_fast_copy_async(index, (uintptr_t)dst, (uintptr_t)src, n, stream, &result))         \
      result = zmlir_py_##name(dst, src, n, stream);                                               \
    zmlir_leave();                                                                                 \
    return result;                                                                                 \
  }

ZMLIR_FAST_COPY_ASYNC(cuMemcpyAsync, 0, CUdeviceptr, CUdeviceptr)
ZMLIR_FAST_COPY_ASYNC(cuMemcpyHtoDAsync_v2, 1, CUdeviceptr, const void *)
ZMLIR_FAST_COPY_ASYNC(cuMemcpyDtoHAsync_v2, 2, void *, CUdeviceptr)
ZMLIR_FAST_COPY_ASYNC(cuMemcpyDtoDAsync_v2, 3, CUdeviceptr, CUdeviceptr)

/* Blocking copies under the passthrough: the real driver's, which waits as
 * NVIDIA's cudaMemcpy waits (the NULL stream's work and the blocking
 * streams'), where zmlir_fast_applies and a synchronisation point has no
 * Python work (zmlir_fast_sync_work: device printf output, memory pools);
 * the Python path synchronises the device, then copies. Any answer but
 * success takes the Python path, which validates the copy and reports it.
 * `index`: 0 cuMemcpy, 1 HtoD, 2 DtoH, 3 DtoD. */
static int zmlir_fast_copy(int index, uintptr_t dst, uintptr_t src, size_t n, CUresult *result) {
  uintptr_t fn = zmlir_fast_backend.copy[index];
  if (!fn || ZMLIR_LOAD(zmlir_fast_sync_work) != 0 || !zmlir_fast_applies(NULL) ||
      ((zmlir_cu_copy_fn)fn)(dst, src, n) != 0)
    return 0;
  *result = 0;
  __atomic_add_fetch(&zmlir_fast_mem_count, 1, __ATOMIC_RELAXED);
  return 1;
}

#define ZMLIR_FAST_COPY(name, index, dst_type, src_type)                                           \
  CUresult name(dst_type dst, src_type src, size_t n) {                                            \
    CUresult result;                                                                               \
    zmlir_enter();                                                                                 \
    if (!zmlir_fast_copy(index, (uintptr_t)dst, (uintptr_t)src, n, &result))                       \
      result = zmlir_py_##name(dst, src, n);                                                       \
    zmlir_leave();                                                                                 \
    return result;                                                                                 \
  }

ZMLIR_FAST_COPY(cuMemcpy, 0, CUdeviceptr, CUdeviceptr)
ZMLIR_FAST_COPY(cuMemcpyHtoD_v2, 1, CUdeviceptr, const void *)
ZMLIR_FAST_COPY(cuMemcpyDtoH_v2, 2, void *, CUdeviceptr)
ZMLIR_FAST_COPY(cuMemcpyDtoD_v2, 3, CUdeviceptr, CUdeviceptr)

/* -- device attributes, the current context's device -------------------------------
 *
 * Thrust and CUB ask cuDeviceGetAttribute several times in every algorithm
 * call (radixSortThrust's timed sorts) and cudart cuCtxGetDevice: a value the
 * Python driver has answered once (a device's attributes do not change) it
 * hands over here (zmlir_fast_device_attribute), and later asks are answered
 * from it while the fast path is on (not tracing), in the process that
 * called cuInit (a forked child's calls are Python's: CUDA_ERROR_NOT_INITIALIZED).
 * cuCtxGetDevice answers device 0 (the only one) for a calling thread whose
 * current context the fast path knows (once an attribute was answered: its
 * process is known); any other ask is Python's. */

#define ZMLIR_FAST_ATTRIBUTES 256

static int zmlir_fast_attribute_values[ZMLIR_FAST_ATTRIBUTES];
static unsigned char zmlir_fast_attribute_known[ZMLIR_FAST_ATTRIBUTES];
/* Whether this is the process that called cuInit, without a system call
 * per ask: a page the kernel wipes in a forked child (MADV_WIPEONFORK; a
 * fork's atfork handlers do not reach a library in a link-map namespace of
 * its own), else the process id compared. */
static volatile int *zmlir_fast_process_page;
static int zmlir_fast_process_pid, zmlir_fast_process_once;
static unsigned long long zmlir_fast_query_count;

static int zmlir_fast_in_process(void) {
  volatile int *page = ZMLIR_LOAD(zmlir_fast_process_page);
  if (page != NULL)
    return *page;
  int pid = ZMLIR_LOAD(zmlir_fast_process_pid);
  return pid != 0 && pid == (int)getpid();
}

/* Device 0's attribute `attrib` is `value` (in this process: `pid` is its). */
void zmlir_fast_device_attribute(int attrib, int value, int pid) {
  if (attrib <= 0 || attrib >= ZMLIR_FAST_ATTRIBUTES || pid != (int)getpid())
    return;
  if (!__atomic_exchange_n(&zmlir_fast_process_once, 1, __ATOMIC_ACQ_REL)) {
    void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page != MAP_FAILED && madvise(page, 4096, 18 /* MADV_WIPEONFORK */) == 0) {
      *(volatile int *)page = 1;
      ZMLIR_STORE(zmlir_fast_process_page, (volatile int *)page);
    } else if (page != MAP_FAILED)
      munmap(page, 4096);
    ZMLIR_STORE(zmlir_fast_process_pid, pid);
  }
  zmlir_fast_attribute_values[attrib] = value;
  ZMLIR_STORE(zmlir_fast_attribute_known[attrib], 1);
}

/* Calls this section and the synchronisations (below) answered (tests). */
unsigned long long zmlir_fast_queries(void) {
  return ZMLIR_LOAD(zmlir_fast_query_count);
}

/* -- the compute capability a library that picks machine code is told ----------------
 *
 * NVIDIA's cuFFT keeps many kernels as images of SASS alone, per
 * architecture, and the rest as images of PTX alone, and chooses with the
 * compute capability its own (static) cudart asks the driver for: for our
 * 8.9 it loads sm_89 SASS that nothing but an NVIDIA GPU runs
 * (CUFFT_INTERNAL_ERROR at plan time for 4097 points, 2^15 and more, double
 * 1023). NVIDIA's cuBLAS keeps its PTX beside SASS, but its CUTLASS
 * kernels for 8.x as SASS alone, which it picks for 8.9. A caller of
 * cuDeviceGetAttribute whose object holds both an image of SASS alone that
 * the reported architecture would run and PTX (fatbin_holdings.h) is told
 * a major newer than all its SASS, minor 0 (cuFFT and cuBLAS: 13.0), so
 * that it takes the path NVIDIA's libraries take on a GPU newer than they
 * are, their PTX; not where the backend runs
 * NVIDIA's machine code itself. Every other caller gets the device's
 * answer. (cudart's callers, libcurand, are answered by arch_preload.c,
 * whose rule that library needs.) */

enum { ZMLIR_ATTR_MAJOR = 75, ZMLIR_ATTR_MINOR = 76 };

/* The SASS architecture the backend runs (the CUDA passthrough: the GPU's,
 * where cuFFT's SASS runs as it is), 0 for none, -1 until Python said. */
static int zmlir_fast_native_sm_value = -1;

void zmlir_fast_native_sm(int sm) {
  ZMLIR_STORE(zmlir_fast_native_sm_value, sm);
}

static void zmlir_answer_caller(void *return_address, int attrib, int *pi) {
  Dl_info caller;
  /* The device's answers as Python handed them over (both, at the first
   * ask of either): no second call, which a trace would show. */
  if (ZMLIR_LOAD(zmlir_fast_native_sm_value) != 0 ||
      !ZMLIR_LOAD(zmlir_fast_attribute_known[ZMLIR_ATTR_MAJOR]) ||
      !ZMLIR_LOAD(zmlir_fast_attribute_known[ZMLIR_ATTR_MINOR]) || !zmlir_fast_in_process() ||
      dladdr(return_address, &caller) == 0 || caller.dli_fbase == NULL)
    return;
  int major = zmlir_fast_attribute_values[ZMLIR_ATTR_MAJOR];
  int minor = zmlir_fast_attribute_values[ZMLIR_ATTR_MINOR];
  struct zmlir_holdings *h = zmlir_holdings_of((uintptr_t)caller.dli_fbase, major * 10 + minor);
  if (h == NULL || !h->sass_only_usable || !h->ptx)
    return;
  int newest = 0;
  for (int sm = 0; sm < 256; ++sm)
    if (h->sass[sm])
      newest = sm;
  int told = newest / 10 + 1;
  static int said;
  if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED) && getenv("ZMLIR_LOG"))
    fprintf(stderr,
            "zmlir: %s keeps machine code an sm_%d device runs in images without PTX, and "
            "PTX: told compute capability %d.0 (newer than all its machine code) "
            "so that it takes its PTX path\n",
            caller.dli_fname, major * 10 + minor, told);
  *pi = attrib == ZMLIR_ATTR_MAJOR ? told : 0;
}

CUresult cuDeviceGetAttribute(int *pi, int attrib, CUdevice dev) {
  void *return_address = __builtin_extract_return_addr(__builtin_return_address(0));
  CUresult result;
  zmlir_enter();
  if (pi != NULL && dev == 0 && attrib > 0 && attrib < ZMLIR_FAST_ATTRIBUTES &&
      ZMLIR_LOAD(zmlir_fast_enabled) && ZMLIR_LOAD(zmlir_fast_attribute_known[attrib]) &&
      zmlir_fast_in_process()) {
    *pi = zmlir_fast_attribute_values[attrib];
    __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
    result = 0;
  } else
    result = zmlir_py_cuDeviceGetAttribute(pi, attrib, dev);
  if (result == 0 && dev == 0 && (attrib == ZMLIR_ATTR_MAJOR || attrib == ZMLIR_ATTR_MINOR))
    zmlir_answer_caller(return_address, attrib, pi);
  zmlir_leave();
  return result;
}

/* Whether the calling thread's current context is one the fast path knows,
 * in the process that called cuInit. */
static int zmlir_fast_current_known(void) {
  return ZMLIR_LOAD(zmlir_fast_enabled) && zmlir_fast_ctx != 0 &&
         zmlir_fast_ctx_epoch == ZMLIR_LOAD(zmlir_fast_epoch) && zmlir_fast_in_process();
}

/* cudart asks the current context around many calls (UnifiedMemoryStreams:
 * each task's allocations and events); with a sticky error the fast path
 * knows none, and Python answers (the stack's top, as NVIDIA's does). */
CUresult cuCtxGetCurrent(CUcontext *pctx) {
  CUresult result;
  zmlir_enter();
  if (pctx != NULL && zmlir_fast_current_known()) {
    *pctx = (CUcontext)zmlir_fast_ctx;
    __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
    result = 0;
  } else
    result = zmlir_py_cuCtxGetCurrent(pctx);
  zmlir_leave();
  return result;
}

CUresult cuCtxGetDevice(CUdevice *device) {
  CUresult result;
  zmlir_enter();
  if (device != NULL && zmlir_fast_current_known()) {
    *device = 0;
    __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
    result = 0;
  } else
    result = zmlir_py_cuCtxGetDevice(device);
  zmlir_leave();
  return result;
}

CUresult cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx) {
  CUresult result;
  zmlir_enter();
  if (device != NULL && ctx == NULL && zmlir_fast_current_known()) {
    *device = 0;
    __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
    result = 0;
  } else
    result = zmlir_py_cuCtxGetDevice_v2(device, ctx);
  zmlir_leave();
  return result;
}

/* -- a context's unique id (TOOLS_CONTEXT slot 4) ----------------------------------
 *
 * NVIDIA's cuBLASLt asks it as it looks at its per-context state, of
 * NVIDIA's own context, which NVIDIA's TOOLS_TLS gives it under the
 * passthrough: once a GEMM where that slot answers (74 times where it does
 * not and cuBLASLt looks again at each step); NVIDIA's cuFFT asks it of
 * ours. In Python that
 * was a callback each time (export_slots.py: _context_id). Answered here
 * while the fast path is on: NULL or the calling thread's current context
 * (known as for launches, so a live one of ours) is its handle, as
 * cuCtxGetId says; a context the Python body handed to NVIDIA's slot before
 * (not a handle of ours: zmlir_fast_vendor_context) goes to NVIDIA's slot
 * again. Everything else takes the Python body. */

#define ZMLIR_FAST_VENDOR_CONTEXTS 8

typedef CUresult (*zmlir_context_id_fn)(void *, unsigned long long *);

static zmlir_context_id_fn zmlir_fast_context_id_python, zmlir_fast_context_id_vendor;
static uintptr_t zmlir_fast_vendor_contexts[ZMLIR_FAST_VENDOR_CONTEXTS];

/* The Python body and NVIDIA's slot (0: none) the C slot falls back to. */
void zmlir_fast_context_id_configure(uintptr_t python, uintptr_t vendor) {
  pthread_mutex_lock(&zmlir_fast_write);
  ZMLIR_STORE(zmlir_fast_context_id_python, (zmlir_context_id_fn)python);
  ZMLIR_STORE(zmlir_fast_context_id_vendor, (zmlir_context_id_fn)vendor);
  pthread_mutex_unlock(&zmlir_fast_write);
}

/* Context `ctx` is NVIDIA's, not ours (add), or may be ours from now on
 * (forget; ctx 0: every one). When the table is full the rest stay Python's. */
void zmlir_fast_vendor_context(uintptr_t ctx, int add) {
  pthread_mutex_lock(&zmlir_fast_write);
  int known = 0;
  for (int i = 0; i < ZMLIR_FAST_VENDOR_CONTEXTS; ++i) {
    uintptr_t c = ZMLIR_LOAD(zmlir_fast_vendor_contexts[i]);
    if (c != 0 && (ctx == 0 || c == ctx)) {
      if (add)
        known = 1;
      else
        ZMLIR_STORE(zmlir_fast_vendor_contexts[i], (uintptr_t)0);
    }
  }
  for (int i = 0; add && !known && ctx && i < ZMLIR_FAST_VENDOR_CONTEXTS; ++i)
    if (ZMLIR_LOAD(zmlir_fast_vendor_contexts[i]) == 0) {
      ZMLIR_STORE(zmlir_fast_vendor_contexts[i], ctx);
      break;
    }
  pthread_mutex_unlock(&zmlir_fast_write);
}

static int zmlir_fast_is_vendor_context(uintptr_t ctx) {
  for (int i = 0; ctx && i < ZMLIR_FAST_VENDOR_CONTEXTS; ++i)
    if (ZMLIR_LOAD(zmlir_fast_vendor_contexts[i]) == ctx)
      return 1;
  return 0;
}

CUresult zmlir_fast_context_id(void *ctx, unsigned long long *id) {
  uintptr_t c = (uintptr_t)ctx;
  zmlir_context_id_fn vendor = ZMLIR_LOAD(zmlir_fast_context_id_vendor);
  CUresult result;
  zmlir_enter();
  /* As for a launch: on, and the calling thread's context known (so live). */
  int known = ZMLIR_LOAD(zmlir_fast_enabled) && zmlir_fast_ctx != 0 &&
              zmlir_fast_ctx_epoch == ZMLIR_LOAD(zmlir_fast_epoch);
  if (id != NULL && known && (c == 0 || c == zmlir_fast_ctx)) {
    *id = zmlir_fast_ctx;
    __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
    result = 0;
  } else if (vendor != NULL && ZMLIR_LOAD(zmlir_fast_enabled) && zmlir_fast_is_vendor_context(c)) {
    __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
    result = vendor(ctx, id);
  } else {
    zmlir_context_id_fn python = ZMLIR_LOAD(zmlir_fast_context_id_python);
    result = python ? python(ctx, id) : 400; /* CUDA_ERROR_INVALID_HANDLE */
  }
  zmlir_leave();
  return result;
}

/* -- function attributes ------------------------------------------------------------
 *
 * llm.c's layernorm_forward6 and fused_residual_forward6 opt their kernel in to
 * dynamic shared memory (cudaFuncSetAttribute, MAX_DYNAMIC_SHARED_SIZE_BYTES)
 * before every launch, with the value already set, inside the region they
 * time: a call that changes nothing. It is answered here where the function
 * is registered with that opt-in (the Python driver registers the function
 * again whenever its opt-in changes); every other call takes the Python path. */

static int zmlir_fast_optin_unchanged(void *f, int attrib, int value) {
  /* As a launch's: the calling thread's context known, no capture, no fault. */
  if (attrib != 8 /* MAX_DYNAMIC_SHARED_SIZE_BYTES */ || value < 0 ||
      !zmlir_fast_applies_in_capture(NULL))
    return 0;
  struct zmlir_fast_entry *e = zmlir_fast_find_function((uintptr_t)f);
  if (e == NULL || (unsigned int)value != e->optin)
    return 0;
  __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
  return 1;
}

/* -- NVIDIA's machine code's function attributes ------------------------------------
 *
 * NVIDIA's cuBLAS, in every GEMM, reads its kernel's attributes
 * (cudaFuncGetAttributes: 16 cuKernelGetAttribute, twice in a
 * cublasSgemmStridedBatched) and sets NON_PORTABLE_CLUSTER_SIZE_ALLOWED
 * (cuKernelSetAttribute). A native function's attributes are NVIDIA's
 * driver's, which the Python path asks each time (backends/cuda.py:
 * native_function_attribute, native_set_function_attribute); so here, for
 * a registered native function where the fast path applies, but
 * MAX_DYNAMIC_SHARED_SIZE_BYTES's set (zmlir_fast_set_optin, below, for
 * every registered function). NVIDIA's success is the answer; anything else
 * takes the Python path, which asks again and answers as it always does. */

static struct zmlir_fast_entry *zmlir_fast_native(void *f) {
  struct zmlir_fast_entry *e =
      zmlir_fast_applies_in_capture(NULL) ? zmlir_fast_find((uintptr_t)f, ZMLIR_FAST_CUDA) : NULL;
  return e && e->native ? e : NULL;
}

static int zmlir_fast_get_attribute(int *pi, int attrib, void *f) {
  zmlir_cu_func_get_attribute_fn get =
      (zmlir_cu_func_get_attribute_fn)zmlir_fast_backend.func_get_attribute;
  struct zmlir_fast_entry *e = pi && get ? zmlir_fast_native(f) : NULL;
  if (e == NULL || get(pi, attrib, (void *)e->target) != 0)
    return 0;
  __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
  return 1;
}

/* cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES) of a registered function
 * under the passthrough, as the Python path (function.py) does it: the real
 * function is opted in to the window at once (for our kernels their static
 * shared memory too, which the real driver sees as dynamic), and launches up
 * to it stay here. A program timing one launch sets it inside the timed
 * region (cudaTensorCoreGemm: 67-89 us through Python against 12-16 natively
 * on an H100). Python reads the value back where it needs it
 * (zmlir_fast_optin). A value above the device's limit, or one the real
 * driver refuses, takes the Python path, which answers. */
static int zmlir_fast_set_optin(void *f, int value) {
  zmlir_cu_func_set_attribute_fn set =
      (zmlir_cu_func_set_attribute_fn)zmlir_fast_backend.func_set_attribute;
  uintptr_t limit = ZMLIR_LOAD(zmlir_fast_backend.shared_optin);
  if (set == NULL || limit == 0 || value < 0 || !zmlir_fast_applies_in_capture(NULL))
    return 0;
  struct zmlir_fast_entry *e = zmlir_fast_find((uintptr_t)f, ZMLIR_FAST_CUDA);
  if (e == NULL)
    return 0;
  unsigned long long window = (unsigned long long)e->static_shared + (unsigned int)value;
  if (window > limit || set((void *)e->target, 8, (int)window) != 0)
    return 0;
  pthread_mutex_lock(&zmlir_fast_write);
  if (ZMLIR_LOAD(e->key) == (uintptr_t)f) {
    ZMLIR_STORE(e->shared_limit, (unsigned int)window);
    ZMLIR_STORE(e->optin, (unsigned int)value);
    ZMLIR_STORE(e->optin_set_here, 1);
  }
  pthread_mutex_unlock(&zmlir_fast_write);
  __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
  return 1;
}

/* The MAX_DYNAMIC_SHARED_SIZE_BYTES set here for function `handle` since
 * Python last registered it: 1 and *optin, else 0. */
int zmlir_fast_optin(uintptr_t handle, unsigned int *optin) {
  pthread_mutex_lock(&zmlir_fast_write);
  struct zmlir_fast_entry *e = handle ? zmlir_fast_slot(handle, 0) : NULL;
  int set = e != NULL && ZMLIR_LOAD(e->kind) != ZMLIR_FAST_NONE && e->optin_set_here;
  if (set)
    *optin = e->optin;
  pthread_mutex_unlock(&zmlir_fast_write);
  return set;
}

static int zmlir_fast_set_attribute(void *f, int attrib, int value) {
  zmlir_cu_func_set_attribute_fn set =
      (zmlir_cu_func_set_attribute_fn)zmlir_fast_backend.func_set_attribute;
  struct zmlir_fast_entry *e = attrib != 8 && set ? zmlir_fast_native(f) : NULL;
  if (e == NULL || set((void *)e->target, attrib, value) != 0)
    return 0;
  __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
  return 1;
}

/* -- occupancy ----------------------------------------------------------------------
 *
 * CUB's algorithms ask their kernels' occupancy before launching them (each
 * of Thrust's sorts: radixSortThrust's timed loop). Under the passthrough a
 * registered function's answer is the real driver's for its CUfunction where
 * the fast path applies: NVIDIA's machine code's as it is; our NVPTX kernels
 * hold their static shared memory as dynamic (backends/cuda.py: occupancy),
 * so it is added, within the 48 KiB a kernel has without opting in (above,
 * the Python path opts the kernel in first). Any answer but success takes the
 * Python path. */

static int zmlir_fast_occupancy(int *blocks, void *f, int block, size_t dynamic,
                                unsigned int flags, CUresult *result) {
  zmlir_cu_occupancy_fn occupancy = (zmlir_cu_occupancy_fn)zmlir_fast_backend.occupancy;
  struct zmlir_fast_entry *e =
      blocks && occupancy && block > 0 && zmlir_fast_applies_in_capture(NULL)
          ? zmlir_fast_find((uintptr_t)f, ZMLIR_FAST_CUDA)
          : NULL;
  if (e == NULL)
    return 0;
  size_t window = e->native ? dynamic : e->static_shared + dynamic;
  if ((!e->native && window > 48 * 1024) ||
      occupancy(blocks, (void *)e->target, block, window, flags) != 0)
    return 0;
  *result = 0;
  __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
  return 1;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func,
                                                     int blockSize, size_t dynamicSMemSize) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_occupancy(numBlocks, func, blockSize, dynamicSMemSize, 0, &result))
    result = zmlir_py_cuOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, func, blockSize,
                                                                  dynamicSMemSize);
  zmlir_leave();
  return result;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func,
                                                              int blockSize,
                                                              size_t dynamicSMemSize,
                                                              unsigned int flags) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_occupancy(numBlocks, func, blockSize, dynamicSMemSize, flags, &result))
    result = zmlir_py_cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
        numBlocks, func, blockSize, dynamicSMemSize, flags);
  zmlir_leave();
  return result;
}

CUresult cuFuncGetAttribute(int *pi, int attrib, CUfunction hfunc) {
  CUresult result = 0;
  zmlir_enter();
  if (!zmlir_fast_get_attribute(pi, attrib, hfunc))
    result = zmlir_py_cuFuncGetAttribute(pi, attrib, hfunc);
  zmlir_leave();
  return result;
}

/* `dev` is not looked at, as by the Python path. */
CUresult cuKernelGetAttribute(int *pi, int attrib, CUkernel kernel, CUdevice dev) {
  CUresult result = 0;
  zmlir_enter();
  if (!zmlir_fast_get_attribute(pi, attrib, (void *)kernel))
    result = zmlir_py_cuKernelGetAttribute(pi, attrib, kernel, dev);
  zmlir_leave();
  return result;
}

CUresult cuFuncSetAttribute(CUfunction hfunc, int attrib, int value) {
  CUresult result = 0;
  zmlir_enter();
  if (!zmlir_fast_optin_unchanged(hfunc, attrib, value) &&
      !(attrib == 8 ? zmlir_fast_set_optin(hfunc, value)
                    : zmlir_fast_set_attribute(hfunc, attrib, value)))
    result = zmlir_py_cuFuncSetAttribute(hfunc, attrib, value);
  zmlir_leave();
  return result;
}

CUresult cuKernelSetAttribute(int attrib, int val, CUkernel kernel, CUdevice dev) {
  CUresult result = 0;
  zmlir_enter();
  if (dev != 0 || (!zmlir_fast_optin_unchanged((void *)kernel, attrib, val) &&
                   !(attrib == 8 ? zmlir_fast_set_optin((void *)kernel, val)
                                 : zmlir_fast_set_attribute((void *)kernel, attrib, val))))
    result = zmlir_py_cuKernelSetAttribute(attrib, val, kernel, dev);
  zmlir_leave();
  return result;
}

/* -- a stream's capture ---------------------------------------------------------------
 *
 * NVIDIA's cuBLAS asks whether its stream captures five times in every GEMM
 * (cuStreamGetCaptureInfo_v2). While no capture is under way anywhere, on a
 * default stream or one of ours, with the calling thread's context known,
 * in the process that called cuInit, the answer is the Python path's for a
 * stream that does not capture: status NONE, no graph, no dependencies.
 * While the real driver captures streams of ours (below), a created stream's
 * answer is the real driver's: its graph and nodes are the handles the
 * Python driver gives them when it takes the graph over. */

static int zmlir_fast_capture_info(void *stream, int *status, unsigned long long *id,
                                   CUgraph *graph, const CUgraphNode **dependencies,
                                   const void **edges, size_t *count, CUresult *result) {
  if (!zmlir_fast_applies_in_capture(stream) || !zmlir_fast_in_process())
    return 0;
  if (ZMLIR_LOAD(zmlir_fast_vendor_captures) == 0) {
    if (status != NULL)
      *status = 0; /* CU_STREAM_CAPTURE_STATUS_NONE */
    if (graph != NULL)
      *graph = NULL;
    if (dependencies != NULL)
      *dependencies = NULL;
    if (edges != NULL)
      *edges = NULL;
    if (count != NULL)
      *count = 0;
    *result = 0;
  } else {
    zmlir_cu_capture_info_fn info = (zmlir_cu_capture_info_fn)zmlir_fast_backend.capture_info;
    void *queue = zmlir_fast_queue(stream);
    if (info == NULL || queue == NULL)
      return 0;
    pthread_mutex_lock(&zmlir_capture_lock);
    *result = info(queue, status, id, (void **)graph, (const void **)dependencies, count);
    pthread_mutex_unlock(&zmlir_capture_lock);
    if (*result != 0)
      return 0;
    if (edges != NULL)
      *edges = NULL; /* every edge a default one */
  }
  __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
  return 1;
}

CUresult cuStreamGetCaptureInfo(CUstream hStream, int *captureStatus_out,
                                unsigned long long *id_out) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_capture_info(hStream, captureStatus_out, id_out, NULL, NULL, NULL, NULL,
                               &result))
    result = zmlir_py_cuStreamGetCaptureInfo(hStream, captureStatus_out, id_out);
  zmlir_leave();
  return result;
}

CUresult cuStreamGetCaptureInfo_v2(CUstream hStream, int *captureStatus_out,
                                   unsigned long long *id_out, CUgraph *graph_out,
                                   const CUgraphNode **dependencies_out,
                                   size_t *numDependencies_out) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out,
                               NULL, numDependencies_out, &result))
    result = zmlir_py_cuStreamGetCaptureInfo_v2(hStream, captureStatus_out, id_out, graph_out,
                                                dependencies_out, numDependencies_out);
  zmlir_leave();
  return result;
}

CUresult cuStreamGetCaptureInfo_v3(CUstream hStream, int *captureStatus_out,
                                   unsigned long long *id_out, CUgraph *graph_out,
                                   const CUgraphNode **dependencies_out, const void **edgeData_out,
                                   size_t *numDependencies_out) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_capture_info(hStream, captureStatus_out, id_out, graph_out, dependencies_out,
                               edgeData_out, numDependencies_out, &result))
    result = zmlir_py_cuStreamGetCaptureInfo_v3(hStream, captureStatus_out, id_out, graph_out,
                                                dependencies_out, edgeData_out,
                                                numDependencies_out);
  zmlir_leave();
  return result;
}

CUresult cuStreamIsCapturing(CUstream hStream, int *captureStatus) {
  CUresult result;
  zmlir_enter();
  if (captureStatus == NULL || !zmlir_fast_capture_info(hStream, captureStatus, NULL, NULL, NULL,
                                                        NULL, NULL, &result))
    result = zmlir_py_cuStreamIsCapturing(hStream, captureStatus);
  zmlir_leave();
  return result;
}

/* A kernel (cuLibraryGetKernel's) is its function in our driver: cudart asks
 * for the function before each cudaFuncSetAttribute and cudaFuncGetAttributes. */
CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel) {
  CUresult result = 0;
  zmlir_enter();
  if (pFunc != NULL && zmlir_fast_applies_in_capture(NULL) &&
      zmlir_fast_find_function((uintptr_t)kernel) != NULL) {
    *pFunc = (CUfunction)kernel;
    __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
  } else
    result = zmlir_py_cuKernelGetFunction(pFunc, kernel);
  zmlir_leave();
  return result;
}

/* -- a library's kernels by name ------------------------------------------------------
 *
 * cudart asks for a kernel (cuLibraryGetKernel) at its first use, often in a
 * region the program times (a sample timing its first launch); in Python that
 * made the kernel's function then (0.2 ms: NVIDIA's function, the parameter
 * layout, registration here). The Python driver now makes the functions of
 * a library it compiled as it loads it and registers them here by (library,
 * name); an unloaded library's are forgotten. Slots are never reused. */

#define ZMLIR_FAST_KERNEL_SLOTS 4096 /* a power of two */

struct zmlir_fast_kernel_name {
  uintptr_t library; /* 0: free slot */
  uintptr_t kernel;  /* 0: forgotten */
  uint64_t hash;
  char *name;
};

static struct zmlir_fast_kernel_name zmlir_fast_kernel_names[ZMLIR_FAST_KERNEL_SLOTS];

static uint64_t zmlir_fast_name_hash(uintptr_t library, const char *name) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)library;
  for (const unsigned char *c = (const unsigned char *)name; *c; ++c)
    h = (h ^ *c) * 1099511628211ull;
  return h;
}

/* Registers kernel `kernel` of `library` by `name`; 0 on success, -1 if full. */
int zmlir_fast_library_kernel(uintptr_t library, const char *name, uintptr_t kernel) {
  if (library == 0 || kernel == 0 || name == NULL)
    return -1;
  uint64_t hash = zmlir_fast_name_hash(library, name);
  int result = -1;
  pthread_mutex_lock(&zmlir_fast_write);
  size_t i = (size_t)hash & (ZMLIR_FAST_KERNEL_SLOTS - 1);
  for (size_t n = 0; n < ZMLIR_FAST_KERNEL_SLOTS; ++n, i = (i + 1) & (ZMLIR_FAST_KERNEL_SLOTS - 1)) {
    struct zmlir_fast_kernel_name *e = &zmlir_fast_kernel_names[i];
    if (ZMLIR_LOAD(e->library) != 0)
      continue;
    e->name = strdup(name);
    if (e->name == NULL)
      break;
    e->hash = hash;
    ZMLIR_STORE(e->kernel, kernel);
    ZMLIR_STORE(e->library, library);
    result = 0;
    break;
  }
  pthread_mutex_unlock(&zmlir_fast_write);
  return result;
}

/* Forgets every kernel registered for `library`. */
void zmlir_fast_forget_library(uintptr_t library) {
  pthread_mutex_lock(&zmlir_fast_write);
  for (size_t i = 0; i < ZMLIR_FAST_KERNEL_SLOTS; ++i)
    if (ZMLIR_LOAD(zmlir_fast_kernel_names[i].library) == library)
      ZMLIR_STORE(zmlir_fast_kernel_names[i].kernel, (uintptr_t)0);
  pthread_mutex_unlock(&zmlir_fast_write);
}

static uintptr_t zmlir_fast_find_kernel(uintptr_t library, const char *name) {
  uint64_t hash = zmlir_fast_name_hash(library, name);
  size_t i = (size_t)hash & (ZMLIR_FAST_KERNEL_SLOTS - 1);
  for (size_t n = 0; n < ZMLIR_FAST_KERNEL_SLOTS; ++n, i = (i + 1) & (ZMLIR_FAST_KERNEL_SLOTS - 1)) {
    struct zmlir_fast_kernel_name *e = &zmlir_fast_kernel_names[i];
    uintptr_t l = ZMLIR_LOAD(e->library);
    if (l == 0)
      return 0;
    if (l == library && e->hash == hash && strcmp(e->name, name) == 0)
      return ZMLIR_LOAD(e->kernel);
  }
  return 0;
}

CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name) {
  CUresult result = 0;
  zmlir_enter();
  uintptr_t kernel = 0;
  if (pKernel != NULL && name != NULL && library != NULL && zmlir_fast_applies_in_capture(NULL))
    kernel = zmlir_fast_find_kernel((uintptr_t)library, name);
  if (kernel != 0) {
    *pKernel = (CUkernel)kernel;
    __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
  } else
    result = zmlir_py_cuLibraryGetKernel(pKernel, library, name);
  zmlir_leave();
  return result;
}

/* -- the module loading mode ----------------------------------------------------------
 *
 * The Python driver answers NVIDIA's default, lazy (module.py: told eager,
 * the runtime inside NVIDIA's cuBLAS loads its ~2800 images at once). But a
 * runtime loading lazily loads the application's fatbin at the first use of
 * one of its kernels, and the first use is often inside a region the
 * program times (a sample timing one launch): there our load costs
 * (the NVPTX cache and NVIDIA's JIT cache under the passthrough: 2-14 ms on
 * an H200, where loading nvcc's machine code costs NVIDIA's driver next to
 * nothing; a compile on the CPU). So the application's own runtime (the
 * executable's static one, or libcudart.so) is told eager: its modules load
 * as it starts. Libraries with a runtime of their own inside (cuBLAS,
 * cuFFT) stay lazy, and so does everything under CUDA_MODULE_LOADING=LAZY. */

static int zmlir_called_from_application(void *caller) {
  Dl_info info;
  if (!dladdr(caller, &info) || info.dli_fname == NULL)
    return 0;
  if (info.dli_fname[0] == 0)
    return 1; /* the main program */
  const char *base = strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  if (strncmp(base, "libcudart.so", 12) == 0)
    return 1;
  char exe[4096], object[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0 || realpath(info.dli_fname, object) == NULL)
    return 0;
  exe[n] = 0;
  return strcmp(exe, object) == 0;
}

CUresult cuModuleGetLoadingMode(int *mode) {
  void *caller = __builtin_return_address(0);
  CUresult result;
  zmlir_enter();
  result = zmlir_py_cuModuleGetLoadingMode(mode);
  if (result == 0 && mode != NULL && *mode == 2 /* CU_MODULE_LAZY_LOADING */) {
    const char *asked = getenv("CUDA_MODULE_LOADING");
    if ((asked == NULL || strcasecmp(asked, "LAZY") != 0) && zmlir_called_from_application(caller))
      *mode = 1; /* CU_MODULE_EAGER_LOADING */
  }
  zmlir_leave();
  return result;
}

/* An optional export table's slot of no known meaning, untraced (export_slots.py). */
CUresult zmlir_fast_not_supported(void) {
  return 801; /* CUDA_ERROR_NOT_SUPPORTED */
}

/* UNKNOWN_CHECKS slot 2, which cudart 13 asks in every cudaDeviceSynchronize:
 * export_slots.py's _context_check (no check failed, nothing to report). */
CUresult zmlir_fast_context_check(void *ctx, unsigned int *failed, void **detail) {
  (void)ctx;
  if (failed == NULL || detail == NULL)
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  *failed = 0;
  *detail = NULL;
  return 0;
}

/* -- graph launches ---------------------------------------------------------------
 *
 * An executable graph the Python driver replays as the real driver's own
 * (graph/vendor.py: registered at its first launch, forgotten when it
 * changes) launches here with the real cuGraphLaunch on the stream's own
 * stream, when zmlir_fast_applies. Any answer but success is the Python
 * path's to give (it launches again and reports it). */

CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
  zmlir_cu_graph_launch_fn launch = (zmlir_cu_graph_launch_fn)zmlir_fast_backend.graph_launch;
  CUresult result = 1;
  zmlir_enter();
  struct zmlir_fast_entry *e = NULL;
  if (launch && zmlir_fast_applies(hStream))
    e = zmlir_fast_find((uintptr_t)hGraphExec, ZMLIR_FAST_GRAPH);
  if (e && (result = launch((void *)e->target, zmlir_fast_queue(hStream))) == 0)
    __atomic_add_fetch(&zmlir_fast_count, 1, __ATOMIC_RELAXED);
  else
    result = zmlir_py_cuGraphLaunch(hGraphExec, hStream);
  zmlir_leave();
  return result;
}

/* An executable graph's kernel node's new parameters (jacobiCudaGraphs sets
 * them before each launch) go to the real driver's node here when the graph
 * replays as the real driver's, the node and the function are registered
 * and the launch would fit the function (as zmlir_fast_launch checks); the
 * Python driver's copy of the graph takes them from a journal before it next
 * looks at an executable graph (zmlir_fast_graph_take, in order). Anything
 * else, or the real driver's refusal, is the Python path's. */

#define ZMLIR_GRAPH_JOURNAL 64
#define ZMLIR_GRAPH_ARG_BYTES 512

struct zmlir_graph_record {
  uintptr_t graph, node, func;
  unsigned int grid[3], block[3], shared, nargs;
  unsigned int sizes[ZMLIR_FAST_MAX_PARAMS];
  unsigned char args[ZMLIR_GRAPH_ARG_BYTES];
};

static struct zmlir_graph_record zmlir_graph_journal[ZMLIR_GRAPH_JOURNAL];
static size_t zmlir_graph_journal_length;
static pthread_mutex_t zmlir_graph_lock = PTHREAD_MUTEX_INITIALIZER;

static int zmlir_fast_graph_set_kernel(void *graph, void *node,
                                       const struct zmlir_kernel_node_params *p, void *kern) {
  zmlir_cu_graph_set_kernel_fn set =
      (zmlir_cu_graph_set_kernel_fn)zmlir_fast_backend.graph_set_kernel;
  if (!set || !p || p->extra || !zmlir_fast_applies(NULL))
    return 0;
  struct zmlir_fast_entry *g = zmlir_fast_find((uintptr_t)graph, ZMLIR_FAST_GRAPH);
  struct zmlir_fast_entry *n = zmlir_fast_find((uintptr_t)node, ZMLIR_FAST_GRAPH_NODE);
  uintptr_t func = (uintptr_t)(p->func ? p->func : kern);
  struct zmlir_fast_entry *f = zmlir_fast_find(func, ZMLIR_FAST_CUDA);
  if (!g || !n || n->variant != (uintptr_t)graph || !f || (f->nparams && !p->params))
    return 0;
  unsigned long long threads = (unsigned long long)p->block[0] * p->block[1] * p->block[2];
  if (!p->grid[0] || !p->grid[1] || !p->grid[2] || !threads || threads > f->max_threads ||
      (unsigned long long)f->static_shared + p->shared > ZMLIR_LOAD(f->shared_limit))
    return 0;
  /* Filled as far as it is read (sizes[nargs], args[at]): jacobiCudaGraphs
   * sets parameters before each launch, where zeroing and copying the
   * whole record cost a microsecond. */
  struct zmlir_graph_record r;
  r.graph = (uintptr_t)graph;
  r.node = (uintptr_t)node;
  r.func = func;
  memcpy(r.grid, p->grid, sizeof r.grid);
  memcpy(r.block, p->block, sizeof r.block);
  r.shared = p->shared;
  r.nargs = f->nparams;
  size_t at = 0;
  for (unsigned int i = 0; i < f->nparams; ++i) {
    unsigned int size = f->sizes[i];
    if (at + size > sizeof r.args || p->params[i] == NULL)
      return 0;
    r.sizes[i] = size;
    memcpy(r.args + at, p->params[i], size);
    at += size;
  }
  struct zmlir_kernel_node_params real = *p;
  real.func = (void *)f->target;
  real.shared = f->static_shared + p->shared;
  pthread_mutex_lock(&zmlir_graph_lock);
  /* A node's newer parameters replace its record not yet taken: a loop that
   * sets them before each launch (jacobiCudaGraphs) keeps one record. */
  size_t slot = 0;
  while (slot < zmlir_graph_journal_length && (zmlir_graph_journal[slot].graph != r.graph ||
                                               zmlir_graph_journal[slot].node != r.node))
    ++slot;
  int done = slot < ZMLIR_GRAPH_JOURNAL && set((void *)g->target, (void *)n->target, &real) == 0;
  if (done) {
    memcpy(&zmlir_graph_journal[slot], &r, offsetof(struct zmlir_graph_record, args) + at);
    if (slot == zmlir_graph_journal_length)
      ++zmlir_graph_journal_length;
  }
  pthread_mutex_unlock(&zmlir_graph_lock);
  if (done)
    __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
  return done;
}

CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                        const CUDA_KERNEL_NODE_PARAMS *nodeParams) {
  CUresult result;
  zmlir_enter();
  if (zmlir_fast_graph_set_kernel(hGraphExec, hNode,
                                  (const struct zmlir_kernel_node_params *)nodeParams, NULL))
    result = 0;
  else
    result = zmlir_py_cuGraphExecKernelNodeSetParams(hGraphExec, hNode, nodeParams);
  zmlir_leave();
  return result;
}

CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                           const CUDA_KERNEL_NODE_PARAMS_v2 *nodeParams) {
  const struct zmlir_kernel_node_params_v2 *p =
      (const struct zmlir_kernel_node_params_v2 *)nodeParams;
  CUresult result;
  zmlir_enter();
  if (p && zmlir_fast_graph_set_kernel(hGraphExec, hNode, &p->v1, p->kern))
    result = 0;
  else
    result = zmlir_py_cuGraphExecKernelNodeSetParams_v2(hGraphExec, hNode, nodeParams);
  zmlir_leave();
  return result;
}

/* Whether the journal holds records (read without the lock: a hint). */
int zmlir_fast_graph_pending(void) {
  return __atomic_load_n(&zmlir_graph_journal_length, __ATOMIC_RELAXED) != 0;
}

/* Python takes the journal: up to `room` records, oldest first; how many. */
size_t zmlir_fast_graph_take(struct zmlir_graph_record *out, size_t room) {
  pthread_mutex_lock(&zmlir_graph_lock);
  size_t n = zmlir_graph_journal_length < room ? zmlir_graph_journal_length : room;
  memcpy(out, zmlir_graph_journal, n * sizeof *out);
  memmove(zmlir_graph_journal, zmlir_graph_journal + n,
          (zmlir_graph_journal_length - n) * sizeof *out);
  zmlir_graph_journal_length -= n;
  pthread_mutex_unlock(&zmlir_graph_lock);
  return n;
}

/* -- stream capture under the passthrough -----------------------------------------
 *
 * A capture of one of our created streams is the real driver's capture of
 * its vendor stream (jacobiCudaGraphs captures, updates and launches a graph
 * in every iteration): cuStreamBeginCapture begins it (in relaxed mode: the
 * Python driver may have to end it from any thread, below), the stream's
 * work on the fast path (launches without `extra` or a cluster, asynchronous
 * copies and fills) goes where it always goes and the real driver records
 * it, and cuStreamEndCapture hands the application the real driver's graph
 * as its CUgraph, whose nodes' handles are the real driver's too. The
 * Python driver takes such a graph over (graph/vendor.py: imported) the
 * first time it is asked about it; until then cuGraphExecUpdate of an
 * executable graph the real driver replays (graph/vendor.py) from it is the
 * real driver's update, which the Python driver's copy takes when it next
 * looks at that executable graph (zmlir_fast_update_take), and its
 * cuGraphDestroy is the real driver's.
 *
 * Any call that reaches the Python driver while such captures are under way
 * first turns them into its own captures (graph/capture.py:
 * demote_vendor_captures): it ends the real driver's, takes the graph
 * recorded so far and each stream's dependencies, and records what follows.
 * zmlir_capture_lock keeps that from happening in the middle of a stream's
 * work here. */

/* Captured graphs the Python driver has not taken over: the real driver's
 * CUgraph, the executable graphs whose update from it the Python driver's
 * copies have not taken yet, and whether the application destroyed it (the
 * real driver's graph then lives until those are taken). Open addressing;
 * a removed graph leaves a tombstone (graph 1). Under zmlir_capture_lock. */
struct zmlir_captured {
  uintptr_t graph;
  int references, destroyed;
};
static struct zmlir_captured *zmlir_captured;
static size_t zmlir_captured_size, zmlir_captured_used;
/* Executable graphs with an update (or a failed one) the Python driver has not taken. */
static int zmlir_updates_pending;

static struct zmlir_captured *zmlir_captured_find(uintptr_t graph) {
  if (graph <= 1 || zmlir_captured_size == 0)
    return NULL;
  size_t i = zmlir_fast_hash(graph) & (zmlir_captured_size - 1);
  for (size_t n = 0; n < zmlir_captured_size; ++n, i = (i + 1) & (zmlir_captured_size - 1)) {
    if (zmlir_captured[i].graph == graph)
      return &zmlir_captured[i];
    if (zmlir_captured[i].graph == 0)
      return NULL;
  }
  return NULL;
}

static int zmlir_captured_add(uintptr_t graph) {
  if (graph <= 1 || zmlir_captured_find(graph) != NULL)
    return graph > 1;
  if (2 * (zmlir_captured_used + 1) > zmlir_captured_size) { /* grow, dropping tombstones */
    size_t size = zmlir_captured_size ? 2 * zmlir_captured_size : 64;
    struct zmlir_captured *old = zmlir_captured, *table = calloc(size, sizeof *table);
    if (table == NULL)
      return 0;
    size_t old_size = zmlir_captured_size;
    zmlir_captured = table;
    zmlir_captured_size = size;
    zmlir_captured_used = 0;
    for (size_t k = 0; k < old_size; ++k)
      if (old[k].graph > 1) {
        size_t i = zmlir_fast_hash(old[k].graph) & (size - 1);
        while (table[i].graph != 0)
          i = (i + 1) & (size - 1);
        table[i] = old[k];
        ++zmlir_captured_used;
      }
    free(old);
  }
  size_t i = zmlir_fast_hash(graph) & (zmlir_captured_size - 1);
  while (zmlir_captured[i].graph > 1)
    i = (i + 1) & (zmlir_captured_size - 1);
  if (zmlir_captured[i].graph == 0)
    ++zmlir_captured_used;
  zmlir_captured[i] = (struct zmlir_captured){graph, 0, 0};
  return 1;
}

/* One reference fewer to `graph` (0: none): a destroyed graph none refers
 * to goes. */
static void zmlir_captured_release(uintptr_t graph) {
  struct zmlir_captured *c = zmlir_captured_find(graph);
  if (c != NULL && c->references > 0)
    --c->references;
  if (c != NULL && c->destroyed && c->references == 0) {
    ((zmlir_cu_graph_destroy_fn)zmlir_fast_backend.graph_destroy)((void *)graph);
    c->graph = 1;
  }
}

static int zmlir_fast_begin_capture(void *stream, int mode, CUresult *result) {
  zmlir_cu_begin_capture_fn begin = (zmlir_cu_begin_capture_fn)zmlir_fast_backend.begin_capture;
  if (!begin || !zmlir_fast_backend.end_capture || !ZMLIR_LOAD(zmlir_fast_vendor_capture_on) ||
      mode < 0 || mode > 2 || (uintptr_t)stream <= 2)
    return 0;
  int done = 0;
  pthread_mutex_lock(&zmlir_capture_lock);
  struct zmlir_fast_entry *e = zmlir_fast_applies_in_capture(stream)
                                   ? zmlir_fast_find((uintptr_t)stream, ZMLIR_FAST_STREAM)
                                   : NULL;
  if (e != NULL && e->target != 0 && e->vendor_capture == 0 &&
      begin((void *)e->target, 2 /* CU_STREAM_CAPTURE_MODE_RELAXED */) == 0) {
    e->vendor_capture = 1 + mode;
    __atomic_add_fetch(&zmlir_fast_vendor_captures, 1, __ATOMIC_ACQ_REL);
    *result = 0;
    done = 1;
  }
  pthread_mutex_unlock(&zmlir_capture_lock);
  return done;
}

CUresult cuStreamBeginCapture_v2(CUstream hStream, int mode) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_begin_capture(hStream, mode, &result))
    result = zmlir_py_cuStreamBeginCapture_v2(hStream, mode);
  zmlir_leave();
  return result;
}

CUresult cuStreamBeginCapture(CUstream hStream) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_begin_capture(hStream, 0 /* GLOBAL */, &result))
    result = zmlir_py_cuStreamBeginCapture(hStream);
  zmlir_leave();
  return result;
}

/* The real driver's end of its capture of stream `e`, under zmlir_capture_lock:
 * its answer, its graph (NULL: none) in *graph, kept among the captured
 * graphs not taken over where `keep`; -1 where it captures nothing. */
static int zmlir_fast_end_capture_locked(struct zmlir_fast_entry *e, void **graph, int keep) {
  if (e == NULL || e->vendor_capture == 0)
    return -1;
  *graph = NULL;
  int code = ((zmlir_cu_end_capture_fn)zmlir_fast_backend.end_capture)((void *)e->target, graph);
  e->vendor_capture = 0; /* whatever the answer, the capture is over */
  __atomic_sub_fetch(&zmlir_fast_vendor_captures, 1, __ATOMIC_ACQ_REL);
  if (keep && code == 0 && *graph != NULL && !zmlir_captured_add((uintptr_t)*graph))
    code = 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  return code;
}

CUresult cuStreamEndCapture(CUstream hStream, CUgraph *phGraph) {
  CUresult result;
  int code = -1;
  zmlir_enter();
  if (phGraph != NULL && (uintptr_t)hStream > 2 && ZMLIR_LOAD(zmlir_fast_vendor_captures) != 0 &&
      zmlir_fast_applies_in_capture(hStream)) {
    pthread_mutex_lock(&zmlir_capture_lock);
    void *graph = NULL;
    code = zmlir_fast_end_capture_locked(
        zmlir_fast_find((uintptr_t)hStream, ZMLIR_FAST_STREAM), &graph, 1);
    pthread_mutex_unlock(&zmlir_capture_lock);
    if (code >= 0)
      *phGraph = graph;
  }
  result = code >= 0 ? (CUresult)code : zmlir_py_cuStreamEndCapture(hStream, phGraph);
  zmlir_leave();
  return result;
}

/* An update of an executable graph the real driver replays (registered: its
 * launches are here) from a captured graph not taken over. Where the real
 * driver refuses it, its copy may have changed in part: the Python driver
 * drops it (update_failed) and answers the update. */
static int zmlir_fast_exec_update(void *exec, void *graph, void *info, CUresult *result) {
  zmlir_cu_exec_update_fn update = (zmlir_cu_exec_update_fn)zmlir_fast_backend.exec_update;
  if (!update || info == NULL || !zmlir_fast_applies(NULL) || zmlir_fast_graph_pending())
    return 0;
  struct zmlir_fast_entry *x = zmlir_fast_find((uintptr_t)exec, ZMLIR_FAST_GRAPH);
  if (x == NULL)
    return 0;
  int done = 0;
  pthread_mutex_lock(&zmlir_capture_lock);
  struct zmlir_captured *c = zmlir_captured_find((uintptr_t)graph);
  if (c != NULL && !c->destroyed && !x->update_failed) {
    if (x->pending_update == 0)
      __atomic_add_fetch(&zmlir_updates_pending, 1, __ATOMIC_ACQ_REL);
    if (update((void *)x->target, graph, info) == 0) {
      ++c->references;
      zmlir_captured_release(x->pending_update);
      x->pending_update = (uintptr_t)graph;
      *result = 0;
      done = 1;
    } else
      x->update_failed = 1;
  }
  pthread_mutex_unlock(&zmlir_capture_lock);
  if (done)
    __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
  return done;
}

CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                              CUgraphExecUpdateResultInfo *resultInfo) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_exec_update(hGraphExec, hGraph, resultInfo, &result))
    result = zmlir_py_cuGraphExecUpdate_v2(hGraphExec, hGraph, resultInfo);
  zmlir_leave();
  return result;
}

/* The first form (CUDA 11's cudart): the same update, its answer in two outputs. */
CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
                           int *updateResult_out) {
  CUresult result;
  CUgraphExecUpdateResultInfo info;
  zmlir_enter();
  if (zmlir_fast_exec_update(hGraphExec, hGraph, &info, &result)) {
    if (hErrorNode_out != NULL)
      *hErrorNode_out = NULL;
    if (updateResult_out != NULL)
      *updateResult_out = 0; /* CU_GRAPH_EXEC_UPDATE_SUCCESS */
  } else
    result = zmlir_py_cuGraphExecUpdate(hGraphExec, hGraph, hErrorNode_out, updateResult_out);
  zmlir_leave();
  return result;
}

CUresult cuGraphDestroy(CUgraph hGraph) {
  CUresult result = 0;
  int done = 0;
  zmlir_enter();
  if (zmlir_fast_backend.graph_destroy && ZMLIR_LOAD(zmlir_fast_enabled)) {
    pthread_mutex_lock(&zmlir_capture_lock);
    struct zmlir_captured *c = zmlir_captured_find((uintptr_t)hGraph);
    if (c != NULL && !c->destroyed) {
      c->destroyed = 1;
      ++c->references;
      zmlir_captured_release((uintptr_t)hGraph); /* gone unless an update is not yet taken */
      done = 1;
    }
    pthread_mutex_unlock(&zmlir_capture_lock);
  }
  if (!done)
    result = zmlir_py_cuGraphDestroy(hGraph);
  zmlir_leave();
  return result;
}

/* -- called by the Python driver (graph/capture.py, graph/executable.py) -- */

/* Whether captures of our streams on the real driver may begin here. */
void zmlir_fast_vendor_capture_enable(int on) {
  ZMLIR_STORE(zmlir_fast_vendor_capture_on, on);
}

/* The Python driver's cuStreamBeginCapture_v2 (its first, which decides
 * whether captures are the real driver's): 0 where the capture began here. */
int zmlir_fast_begin_vendor_capture(uintptr_t stream, int mode) {
  CUresult result;
  return zmlir_fast_begin_capture((void *)stream, mode, &result) ? 0 : -1;
}

int zmlir_fast_vendor_captures_under_way(void) {
  return ZMLIR_LOAD(zmlir_fast_vendor_captures);
}

/* Held while the Python driver ends the real driver's captures (demote). */
void zmlir_fast_capture_lock(int lock) {
  if (lock)
    pthread_mutex_lock(&zmlir_capture_lock);
  else
    pthread_mutex_unlock(&zmlir_capture_lock);
}

/* Under the capture lock: the mode of the real driver's capture of `stream`
 * (-1: none); with `end`, ends it, the real driver's answer in *code and its
 * graph in *graph, which the Python driver takes over. */
int zmlir_fast_stream_capture(uintptr_t stream, int end, int *code, uintptr_t *graph) {
  struct zmlir_fast_entry *e = zmlir_fast_find(stream, ZMLIR_FAST_STREAM);
  if (e == NULL || e->vendor_capture == 0)
    return -1;
  int mode = e->vendor_capture - 1;
  if (end) {
    void *g = NULL;
    *code = zmlir_fast_end_capture_locked(e, &g, 0);
    *graph = (uintptr_t)g;
  }
  return mode;
}

/* Takes captured graph `graph` over (the Python driver's now, which destroys
 * the real driver's graph with its own): 1, or 0 where it is none not taken
 * (or one the application destroyed). */
int zmlir_fast_captured_take(uintptr_t graph) {
  pthread_mutex_lock(&zmlir_capture_lock);
  struct zmlir_captured *c = zmlir_captured_find(graph);
  int taken = c != NULL && !c->destroyed;
  if (taken)
    c->graph = 1;
  pthread_mutex_unlock(&zmlir_capture_lock);
  return taken;
}

/* The captured graph executable graph `exec` was last updated from here
 * (0: none since last asked), and whether an update failed (the real
 * driver's copy is to go); *destroyed: the application destroyed that graph
 * (zmlir_fast_update_done releases it once read). */
uintptr_t zmlir_fast_update_take(uintptr_t exec, int *failed, int *destroyed) {
  pthread_mutex_lock(&zmlir_capture_lock);
  struct zmlir_fast_entry *x = zmlir_fast_find(exec, ZMLIR_FAST_GRAPH);
  uintptr_t graph = x ? x->pending_update : 0;
  *failed = x ? x->update_failed : 0;
  if (x != NULL && (x->pending_update != 0 || x->update_failed)) {
    __atomic_sub_fetch(&zmlir_updates_pending, 1, __ATOMIC_ACQ_REL);
    x->pending_update = 0;
    x->update_failed = 0;
  }
  struct zmlir_captured *c = zmlir_captured_find(graph);
  *destroyed = c != NULL && c->destroyed;
  pthread_mutex_unlock(&zmlir_capture_lock);
  return graph;
}

int zmlir_fast_updates_pending(void) {
  return ZMLIR_LOAD(zmlir_updates_pending);
}

void zmlir_fast_update_done(uintptr_t graph) {
  pthread_mutex_lock(&zmlir_capture_lock);
  zmlir_captured_release(graph);
  pthread_mutex_unlock(&zmlir_capture_lock);
}

/* -- synchronisations --------------------------------------------------------------
 *
 * Under the CUDA passthrough a created stream's work is on its own real
 * stream (its launches, event records, fills and 1D and pitched copies, from
 * here or from the Python driver); the rest of what the Python driver does
 * for it (other copies, graphs it replays, our reads and writes of device
 * memory) is on the real context's NULL stream, which the stream waits for
 * (NVIDIA's blocking order, or backends/cuda.py's fences) only where its own
 * later work follows. So a created stream's synchronisation is the real driver's
 * cuStreamSynchronize of its stream while no call of the Python driver has
 * ended since the context's last synchronisation here or the stream's last
 * one in Python; otherwise the Python driver's, which waits for the stream
 * and for the event after our last work on the NULL stream (backends/cuda.py:
 * stream_synchronize): as natively, a thread waiting for its stream no longer
 * waits for other threads' streams (a kernel there may wait for the host).
 * A loop of launches and synchronisations after one Python call (creating
 * the stream) thus goes through Python once, not each time (13-17 us an
 * iteration instead of 9-10 on an H100). The NULL
 * stream's and the context's synchronisations are cuCtxSynchronize. Thrust's
 * algorithms make several in each call (radixSortThrust's timed sorts).
 * fastpath.c calls them directly when zmlir_fast_applies (a known stream, no
 * capture, a known current context without a sticky error) and a
 * synchronisation point has no Python work (zmlir_fast_sync_work: device
 * printf output, memory pools); any answer but success takes the Python
 * path, which synchronises again and reports it (a kernel's fault becomes
 * the sticky error). Trap words, the other thing a synchronisation looks
 * at, are SPIR-V's (traps.py): that backend hands no entry point over. */

static int zmlir_fast_synchronize(void *stream, CUresult *result) {
  zmlir_cu_synchronize_fn synchronize = (zmlir_cu_synchronize_fn)zmlir_fast_backend.ctx_synchronize;
  zmlir_cu_stream_synchronize_fn stream_synchronize =
      (zmlir_cu_stream_synchronize_fn)zmlir_fast_backend.stream_synchronize;
  if (!synchronize || ZMLIR_LOAD(zmlir_fast_sync_work) != 0 || !zmlir_fast_applies(stream))
    return 0;
  unsigned long long calls = __atomic_load_n(&zmlir_python_calls, __ATOMIC_SEQ_CST);
  struct zmlir_fast_entry *e = zmlir_fast_stream_entry(stream);
  void *queue = stream_synchronize && e ? (void *)e->target : NULL;
  if (queue != NULL && (calls == __atomic_load_n(&zmlir_python_calls_synced, __ATOMIC_SEQ_CST) ||
                        calls == ZMLIR_LOAD(e->synced_calls))) {
    if (stream_synchronize(queue) != 0)
      return 0;
  } else if (queue != NULL) {
    /* Python calls since: the Python driver waits for the stream and for
     * its share of our work on the NULL stream (state.own_work_waited), not
     * for the whole context (another stream's kernel may wait for the host). */
    return 0;
  } else {
    if (synchronize() != 0)
      return 0;
    /* Every Python call that had ended when it began is covered. */
    unsigned long long synced = __atomic_load_n(&zmlir_python_calls_synced, __ATOMIC_SEQ_CST);
    while (synced < calls && !__atomic_compare_exchange_n(&zmlir_python_calls_synced, &synced,
                                                          calls, 0, __ATOMIC_SEQ_CST,
                                                          __ATOMIC_SEQ_CST))
      ;
  }
  *result = 0;
  __atomic_add_fetch(&zmlir_fast_query_count, 1, __ATOMIC_RELAXED);
  return 1;
}

CUresult cuStreamSynchronize(CUstream hStream) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_synchronize(hStream, &result)) {
    unsigned long long before = __atomic_load_n(&zmlir_python_calls, __ATOMIC_SEQ_CST);
    result = zmlir_py_cuStreamSynchronize(hStream);
    /* Its own call alone ended meanwhile (each counts itself): it covered
     * every Python call before it. */
    unsigned long long after = __atomic_load_n(&zmlir_python_calls, __ATOMIC_SEQ_CST);
    struct zmlir_fast_entry *e = zmlir_fast_stream_entry(hStream);
    if (result == 0 && after == before + 1 && e != NULL)
      ZMLIR_STORE(e->synced_calls, after);
  }
  zmlir_leave();
  return result;
}

CUresult cuCtxSynchronize(void) {
  CUresult result;
  zmlir_enter();
  if (!zmlir_fast_synchronize(NULL, &result))
    result = zmlir_py_cuCtxSynchronize();
  zmlir_leave();
  return result;
}

/* CUDA 13's: a context to synchronise (NULL: the current one). cudart 13's
 * cudaDeviceSynchronize names the current one; another is Python's to judge. */
CUresult cuCtxSynchronize_v2(CUcontext ctx) {
  CUresult result;
  zmlir_enter();
  if ((ctx != NULL && (uintptr_t)ctx != zmlir_fast_ctx) || !zmlir_fast_synchronize(NULL, &result))
    result = zmlir_py_cuCtxSynchronize_v2(ctx);
  zmlir_leave();
  return result;
}

/* The exported address of a function of this file: cffi's ffi.addressof
 * gives that of its own wrapper, and cuGetProcAddress must hand out the
 * symbol itself (cudart and the tracing interposer compare addresses). */
uintptr_t zmlir_fast_address(const char *name) {
  static const struct {
    const char *name;
    uintptr_t address;
  } exported[] = {
      {"cuLaunchKernel", (uintptr_t)&cuLaunchKernel},
      {"cuLaunchKernelEx", (uintptr_t)&cuLaunchKernelEx},
      {"cuEventRecord", (uintptr_t)&cuEventRecord},
      {"cuEventRecordWithFlags", (uintptr_t)&cuEventRecordWithFlags},
      {"cuEventQuery", (uintptr_t)&cuEventQuery},
      {"cuEventSynchronize", (uintptr_t)&cuEventSynchronize},
      {"cuEventElapsedTime", (uintptr_t)&cuEventElapsedTime},
      {"cuEventElapsedTime_v2", (uintptr_t)&cuEventElapsedTime_v2},
      {"cuMemAlloc_v2", (uintptr_t)&cuMemAlloc_v2},
      {"cuMemFree_v2", (uintptr_t)&cuMemFree_v2},
      {"cuMemAllocAsync", (uintptr_t)&cuMemAllocAsync},
      {"cuMemFreeAsync", (uintptr_t)&cuMemFreeAsync},
      {"cuMemPrefetchAsync", (uintptr_t)&cuMemPrefetchAsync},
      {"cuMemPrefetchAsync_v2", (uintptr_t)&cuMemPrefetchAsync_v2},
      {"cuMemAdvise", (uintptr_t)&cuMemAdvise},
      {"cuMemAdvise_v2", (uintptr_t)&cuMemAdvise_v2},
      {"cuMemsetD8_v2", (uintptr_t)&cuMemsetD8_v2},
      {"cuMemsetD16_v2", (uintptr_t)&cuMemsetD16_v2},
      {"cuMemsetD32_v2", (uintptr_t)&cuMemsetD32_v2},
      {"cuMemsetD8Async", (uintptr_t)&cuMemsetD8Async},
      {"cuMemsetD16Async", (uintptr_t)&cuMemsetD16Async},
      {"cuMemsetD32Async", (uintptr_t)&cuMemsetD32Async},
      {"cuMemcpyAsync", (uintptr_t)&cuMemcpyAsync},
      {"cuMemcpyHtoDAsync_v2", (uintptr_t)&cuMemcpyHtoDAsync_v2},
      {"cuMemcpyDtoHAsync_v2", (uintptr_t)&cuMemcpyDtoHAsync_v2},
      {"cuMemcpyDtoDAsync_v2", (uintptr_t)&cuMemcpyDtoDAsync_v2},
      {"cuMemcpy", (uintptr_t)&cuMemcpy},
      {"cuMemcpyHtoD_v2", (uintptr_t)&cuMemcpyHtoD_v2},
      {"cuMemcpyDtoH_v2", (uintptr_t)&cuMemcpyDtoH_v2},
      {"cuMemcpyDtoD_v2", (uintptr_t)&cuMemcpyDtoD_v2},
      {"cuStreamSynchronize", (uintptr_t)&cuStreamSynchronize},
      {"cuGraphLaunch", (uintptr_t)&cuGraphLaunch},
      {"cuGraphExecKernelNodeSetParams", (uintptr_t)&cuGraphExecKernelNodeSetParams},
      {"cuGraphExecKernelNodeSetParams_v2", (uintptr_t)&cuGraphExecKernelNodeSetParams_v2},
      {"cuCtxSynchronize", (uintptr_t)&cuCtxSynchronize},
      {"cuCtxSynchronize_v2", (uintptr_t)&cuCtxSynchronize_v2},
      {"cuDeviceGetAttribute", (uintptr_t)&cuDeviceGetAttribute},
      {"cuCtxGetCurrent", (uintptr_t)&cuCtxGetCurrent},
      {"cuCtxGetDevice", (uintptr_t)&cuCtxGetDevice},
      {"cuFuncSetAttribute", (uintptr_t)&cuFuncSetAttribute},
      {"cuKernelSetAttribute", (uintptr_t)&cuKernelSetAttribute},
      {"cuFuncGetAttribute", (uintptr_t)&cuFuncGetAttribute},
      {"cuKernelGetAttribute", (uintptr_t)&cuKernelGetAttribute},
      {"cuOccupancyMaxActiveBlocksPerMultiprocessor",
       (uintptr_t)&cuOccupancyMaxActiveBlocksPerMultiprocessor},
      {"cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
       (uintptr_t)&cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags},
      {"cuStreamGetCaptureInfo", (uintptr_t)&cuStreamGetCaptureInfo},
      {"cuStreamGetCaptureInfo_v2", (uintptr_t)&cuStreamGetCaptureInfo_v2},
      {"cuStreamGetCaptureInfo_v3", (uintptr_t)&cuStreamGetCaptureInfo_v3},
      {"cuStreamIsCapturing", (uintptr_t)&cuStreamIsCapturing},
      {"cuStreamBeginCapture", (uintptr_t)&cuStreamBeginCapture},
      {"cuStreamBeginCapture_v2", (uintptr_t)&cuStreamBeginCapture_v2},
      {"cuStreamEndCapture", (uintptr_t)&cuStreamEndCapture},
      {"cuGraphExecUpdate_v2", (uintptr_t)&cuGraphExecUpdate_v2},
      {"cuGraphExecUpdate", (uintptr_t)&cuGraphExecUpdate},
      {"cuGraphDestroy", (uintptr_t)&cuGraphDestroy},
      {"cuCtxGetDevice_v2", (uintptr_t)&cuCtxGetDevice_v2},
      {"zmlir_fast_cls_get", (uintptr_t)&zmlir_fast_cls_get},
      {"zmlir_fast_context_id", (uintptr_t)&zmlir_fast_context_id},
      {"zmlir_fast_not_supported", (uintptr_t)&zmlir_fast_not_supported},
      {"zmlir_fast_context_check", (uintptr_t)&zmlir_fast_context_check},
      {"cuKernelGetFunction", (uintptr_t)&cuKernelGetFunction},
      {"cuModuleGetLoadingMode", (uintptr_t)&cuModuleGetLoadingMode},
      {"cuLibraryGetKernel", (uintptr_t)&cuLibraryGetKernel},
  };
  for (size_t i = 0; i < sizeof exported / sizeof *exported; ++i)
    if (strcmp(name, exported[i].name) == 0)
      return exported[i].address;
  return 0;
}
