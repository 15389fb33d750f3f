/* Our cuRAND's host API: generators as kernels of ours (kernels.cu, its PTX
 * embedded by build.py) that run in the generator's stream through the
 * driver API, on every backend of our driver and on NVIDIA's (route.c:
 * under zmlir's CUDA passthrough, NVIDIA's own library where it is found).
 * XORWOW, Philox4x32-10 and MRG32k3a, with NVIDIA's default ordering
 * (CURAND_ORDERING_PSEUDO_BEST is the same) or LEGACY, Poisson included, and
 * MTGP32 (but its Poisson) give NVIDIA's sequences bit for bit (kernels.cu
 * says how they are laid out); curandCreatePoissonDistribution gives
 * NVIDIA's distributions.
 *
 * What ours does not make (the other generator types, MTGP32's Poisson, the
 * orderings SEEDED and DYNAMIC, Poisson methods but the default, direction
 * vectors) NVIDIA's libcurand makes where our driver finds it (route.c:
 * zmlir_vendor_library; under `zmlir run` it runs through its own PTX on
 * every backend): a generator of a type ours lacks is NVIDIA's from its
 * creation; one of ours whose ordering or distribution ours lacks is handed
 * to a generator of NVIDIA's, made to be in the state NVIDIA's would be in
 * (the calls since its seed or offset was last set replayed onto it), and
 * every later call on it goes there. Where NVIDIA's library is not found,
 * those calls answer CURAND_STATUS_ARCH_MISMATCH ("not supported here") with
 * their name said once on stderr.
 *
 * A host generator (curandCreateGeneratorHost) runs the same kernels into
 * device memory and copies the values out before returning, as NVIDIA's
 * host generators give their values on return. Its raw bits and uniforms
 * are NVIDIA's; NVIDIA's host generators compute normals with the host's
 * libm, so a host generator's normals are NVIDIA's library's where it is
 * found (HOST_NORMALS), else NVIDIA's device normals (last bits differ). */
#include "route.h"

#include <curand.h>
#include <curand_mtgp32.h>
#include <curand_mtgp32dc_p_11213.h>

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char zmlir_curand_ptx[]; /* kernels.cu, compiled (build.py) */

/* kernels.cu's distributions and parameter block. */
enum kind {
  KIND_BITS,
  KIND_UNIFORM,
  KIND_UNIFORM_DOUBLE,
  KIND_NORMAL,
  KIND_NORMAL_DOUBLE,
  KIND_LOG_NORMAL,
  KIND_LOG_NORMAL_DOUBLE,
  KIND_POISSON,        /* lambda < POISSON_TABLE_LIMIT: NVIDIA's table */
  KIND_POISSON_NORMAL, /* larger: rounded normals */
  KIND_SEED,           /* in a history only: MTGP32's seed set (in n) */
};
struct params {
  float mean, stddev;
  double mean_double, stddev_double;
  double lambda;
  uint64_t V, K; /* the table's, in device memory (KIND_POISSON) */
  unsigned shift, length;
};

enum {
  XORWOW_STATES = 4096,
  MRG_STATES = 81920,
  MRG_LEGACY_STATES = 4096,
  MTGP32_STATES = 192, /* NVIDIA's host generator's (measured) */
  PHILOX_SUBSEQUENCES = 65536,
  STATE_BYTES = 48,
  BLOCK = 256
};

/* A call that moved a generator's states: replayed onto NVIDIA's. */
struct call {
  enum kind kind;
  size_t n;
  double lambda; /* Poisson's */
};
enum { HISTORY_LIMIT = 1 << 20 };

struct curandGenerator_st {
  curandRngType_t type;
  /* NVIDIA's generator once it answers for this one (every call goes
   * there), else NULL. */
  curandGenerator_t vendor;
  curandOrdering_t ordering;
  /* The offset last set (0 when the seed was), and the calls since. */
  unsigned long long offset_set;
  struct call *history;
  size_t history_count, history_capacity;
  int history_lost;                /* more than HISTORY_LIMIT calls of changing kinds */
  struct curandGenerator_st *next; /* ours, all of them (`generators`) */
  int host;                        /* curandCreateGeneratorHost: the output is in host memory */
  CUcontext context;
  CUmodule module;
  CUfunction init, generate;
  CUstream stream;
  unsigned long long seed;
  unsigned long long history_seed; /* the seed when the history began */
  /* The offset, in kernels.cu's units: set by the application, then
   * advanced by each generation. */
  unsigned long long offset;
  /* state_count's; 0 until first used. XORWOW's and MRG32k3a's are read
   * from states[current] and written to the other (kernels.cu), Philox's
   * updated in place in states[0]. */
  CUdeviceptr states[2];
  int current;
  unsigned resident;  /* threads the device keeps running at once */
  int states_current; /* at `seed` and `offset` */
  /* The Poisson table last used (poisson_table()), in device memory: V's
   * doubles, then K's. */
  double table_lambda;
  CUdeviceptr table;
  unsigned table_shift, table_length;
  /* MTGP32's parameter sets, each state's last round and rounds made
   * (kernels.cu); its states are states[0], its position `offset`. */
  CUdeviceptr mtgp32_params, mtgp32_last, mtgp32_rounds;
  pthread_mutex_t lock;
};

/* Every generator of ours, so that a handle of NVIDIA's (its own calls into
 * its exports that share our names, route.c) is told apart and handed back. */
static struct curandGenerator_st *generators;
static pthread_mutex_t generators_lock = PTHREAD_MUTEX_INITIALIZER;
static void *nvidia; /* NVIDIA's libcurand, once a generator needed it */

static void *nvidia_library(void) {
  if (!nvidia)
    __atomic_store_n(&nvidia, zmlir_vendor_library(), __ATOMIC_RELEASE);
  return nvidia;
}

/* NVIDIA's own function `name`, or NULL. */
#define NVIDIA(name) ((__typeof__(&name))nvidia_symbol(#name))
static void *nvidia_symbol(const char *name) {
  void *library = nvidia_library();
  void *f = library ? dlsym(library, name) : NULL;
  if (library && !f)
    zmlir_log(1, "NVIDIA's libcurand has no %s", name);
  return f;
}

static int ours(curandGenerator_t g) {
  pthread_mutex_lock(&generators_lock);
  struct curandGenerator_st *p = generators;
  while (p && p != g)
    p = p->next;
  pthread_mutex_unlock(&generators_lock);
  return p != NULL;
}

/* The handle NVIDIA's library answers for `g`, or NULL where ours does:
 * NVIDIA's generator of ours, or a generator of NVIDIA's itself. */
static curandGenerator_t nvidias(curandGenerator_t g) {
  if (!g || !__atomic_load_n(&nvidia, __ATOMIC_ACQUIRE))
    return NULL;
  if (!ours(g))
    return g;
  return __atomic_load_n(&g->vendor, __ATOMIC_ACQUIRE);
}

/* A call on a generator NVIDIA's library answers for goes there. */
#define FORWARD(name, g, ...)                                                                      \
  do {                                                                                             \
    curandGenerator_t theirs_ = nvidias(g);                                                        \
    if (theirs_) {                                                                                 \
      __typeof__(&name) f_ = NVIDIA(name);                                                         \
      return f_ ? f_(theirs_, ##__VA_ARGS__) : ZMLIR_NOT_SUPPORTED;                                \
    }                                                                                              \
  } while (0)

/* States per generator (kernels.cu): XORWOW's and MRG32k3a's device API
 * states, Philox's counters. MRG32k3a's LEGACY ordering has 4096 (measured:
 * its DEFAULT's layout otherwise); its states' memory is for MRG_STATES. */
static unsigned state_count(curandGenerator_t g) {
  return g->type == CURAND_RNG_PSEUDO_XORWOW ? XORWOW_STATES
         : g->type == CURAND_RNG_PSEUDO_MRG32K3A
             ? (g->ordering == CURAND_ORDERING_PSEUDO_LEGACY ? MRG_LEGACY_STATES : MRG_STATES)
             : PHILOX_SUBSEQUENCES;
}

static const char *type_name(curandRngType_t type) {
  switch (type) {
  case CURAND_RNG_TEST:
    return "CURAND_RNG_TEST";
  case CURAND_RNG_PSEUDO_MTGP32:
    return "CURAND_RNG_PSEUDO_MTGP32";
  case CURAND_RNG_PSEUDO_MT19937:
    return "CURAND_RNG_PSEUDO_MT19937";
  case CURAND_RNG_QUASI_DEFAULT:
  case CURAND_RNG_QUASI_SOBOL32:
    return "CURAND_RNG_QUASI_SOBOL32";
  case CURAND_RNG_QUASI_SCRAMBLED_SOBOL32:
    return "CURAND_RNG_QUASI_SCRAMBLED_SOBOL32";
  case CURAND_RNG_QUASI_SOBOL64:
    return "CURAND_RNG_QUASI_SOBOL64";
  case CURAND_RNG_QUASI_SCRAMBLED_SOBOL64:
    return "CURAND_RNG_QUASI_SCRAMBLED_SOBOL64";
  default:
    return NULL;
  }
}

static const char *ordering_name(curandOrdering_t order) {
  switch (order) {
  case CURAND_ORDERING_PSEUDO_BEST:
    return "CURAND_ORDERING_PSEUDO_BEST";
  case CURAND_ORDERING_PSEUDO_DEFAULT:
    return "CURAND_ORDERING_PSEUDO_DEFAULT";
  case CURAND_ORDERING_PSEUDO_SEEDED:
    return "CURAND_ORDERING_PSEUDO_SEEDED";
  case CURAND_ORDERING_PSEUDO_LEGACY:
    return "CURAND_ORDERING_PSEUDO_LEGACY";
  default:
    return "CURAND_ORDERING_PSEUDO_DYNAMIC";
  }
}

/* The context cudart would use: the current one, else device 0's primary
 * context, made current (as cudart's first call makes it). */
static curandStatus_t current_context(CUcontext *context) {
  if (cuInit(0) != CUDA_SUCCESS)
    return CURAND_STATUS_INITIALIZATION_FAILED;
  if (cuCtxGetCurrent(context) == CUDA_SUCCESS && *context)
    return CURAND_STATUS_SUCCESS;
  CUdevice device;
  if (cuDeviceGet(&device, 0) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(context, device) != CUDA_SUCCESS ||
      cuCtxSetCurrent(*context) != CUDA_SUCCESS)
    return CURAND_STATUS_INITIALIZATION_FAILED;
  return CURAND_STATUS_SUCCESS;
}

static void enlist(struct curandGenerator_st *g) {
  pthread_mutex_init(&g->lock, NULL);
  pthread_mutex_lock(&generators_lock);
  g->next = generators;
  generators = g;
  pthread_mutex_unlock(&generators_lock);
}

/* `what` ours does not make, where NVIDIA's library is not found. */
static curandStatus_t refuse(const char *what) {
  zmlir_log(
      1,
      "unsupported %s (NVIDIA's libcurand is not available); returning " ZMLIR_NOT_SUPPORTED_NAME,
      what);
  return ZMLIR_NOT_SUPPORTED;
}

static curandStatus_t create(curandGenerator_t *generator, curandRngType_t type, int host) {
  if (!generator)
    return CURAND_STATUS_NOT_INITIALIZED;
  if (type == CURAND_RNG_PSEUDO_DEFAULT)
    type = CURAND_RNG_PSEUDO_XORWOW;
  int mine = type == CURAND_RNG_PSEUDO_XORWOW || type == CURAND_RNG_PSEUDO_MRG32K3A ||
             type == CURAND_RNG_PSEUDO_PHILOX4_32_10 || type == CURAND_RNG_PSEUDO_MTGP32;
  char what[96];
  if (!mine) {
    const char *name = type_name(type);
    if (!name)
      return CURAND_STATUS_TYPE_ERROR;
    snprintf(what, sizeof what, "generator type: %s", name);
    if (!nvidia_library())
      return refuse(what);
  }
  struct curandGenerator_st *g = calloc(1, sizeof *g);
  if (!g)
    return CURAND_STATUS_ALLOCATION_FAILED;
  curandStatus_t status = current_context(&g->context);
  if (status != CURAND_STATUS_SUCCESS) {
    free(g);
    return status;
  }
  g->type = type;
  g->host = host;
  g->ordering = CURAND_ORDERING_PSEUDO_DEFAULT;
  if (!mine) {
    /* NVIDIA's from the start: every call goes there. */
    __typeof__(&curandCreateGenerator) make = host ? NVIDIA(curandCreateGeneratorHost)
                                                   : NVIDIA(curandCreateGenerator);
    status = make ? make(&g->vendor, type) : ZMLIR_NOT_SUPPORTED;
    if (status != CURAND_STATUS_SUCCESS) {
      free(g);
      return status;
    }
    zmlir_log(0, "%s: NVIDIA's", what);
    enlist(g);
    *generator = g;
    return CURAND_STATUS_SUCCESS;
  }
  const char *generate = type == CURAND_RNG_PSEUDO_XORWOW     ? "zmlir_curand_xorwow_generate"
                         : type == CURAND_RNG_PSEUDO_MRG32K3A ? "zmlir_curand_mrg32k3a_generate"
                         : type == CURAND_RNG_PSEUDO_MTGP32   ? "zmlir_curand_mtgp32_generate"
                                                              : "zmlir_curand_philox_generate";
  const char *init = type == CURAND_RNG_PSEUDO_XORWOW     ? "zmlir_curand_xorwow_init"
                     : type == CURAND_RNG_PSEUDO_MRG32K3A ? "zmlir_curand_mrg32k3a_init"
                                                          : "zmlir_curand_philox_init";
  CUresult result = cuModuleLoadData(&g->module, zmlir_curand_ptx);
  if (result == CUDA_SUCCESS)
    result = cuModuleGetFunction(&g->generate, g->module, generate);
  if (result == CUDA_SUCCESS && type != CURAND_RNG_PSEUDO_MTGP32)
    result = cuModuleGetFunction(&g->init, g->module, init);
  if (result != CUDA_SUCCESS) {
    zmlir_log(1, "our kernels did not load (CUresult %d)", (int)result);
    if (g->module)
      cuModuleUnload(g->module);
    free(g);
    return CURAND_STATUS_INITIALIZATION_FAILED;
  }
  CUdevice device;
  int processors = 1, threads = 2048;
  if (cuCtxGetDevice(&device) == CUDA_SUCCESS) {
    cuDeviceGetAttribute(&processors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
    cuDeviceGetAttribute(&threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, device);
  }
  g->resident = (unsigned)processors * (unsigned)threads;
  g->seed = 0; /* NVIDIA's default seed */
  enlist(g);
  *generator = g;
  return CURAND_STATUS_SUCCESS;
}

curandStatus_t IMPL(curandCreateGenerator)(curandGenerator_t *generator, curandRngType_t type) {
  return create(generator, type, 0);
}
ABI_CHECK(curandCreateGenerator);

curandStatus_t IMPL(curandCreateGeneratorHost)(curandGenerator_t *generator, curandRngType_t type) {
  return create(generator, type, 1);
}
ABI_CHECK(curandCreateGeneratorHost);

curandStatus_t IMPL(curandDestroyGenerator)(curandGenerator_t g) {
  if (!g)
    return CURAND_STATUS_NOT_INITIALIZED;
  if (nvidias(g) == g)
    FORWARD(curandDestroyGenerator, g);
  pthread_mutex_lock(&generators_lock);
  struct curandGenerator_st **p = &generators;
  while (*p && *p != g)
    p = &(*p)->next;
  if (*p)
    *p = g->next;
  pthread_mutex_unlock(&generators_lock);
  curandStatus_t status = CURAND_STATUS_SUCCESS;
  if (g->vendor) {
    __typeof__(&curandDestroyGenerator) destroy = NVIDIA(curandDestroyGenerator);
    status = destroy ? destroy(g->vendor) : ZMLIR_NOT_SUPPORTED;
  }
  /* Work queued in the generator's stream may still use the states. */
  cuCtxPushCurrent(g->context);
  if (g->module) {
    cuStreamSynchronize(g->stream);
    for (int i = 0; i < 2; ++i)
      if (g->states[i])
        cuMemFree(g->states[i]);
    if (g->table)
      cuMemFree(g->table);
    CUdeviceptr mtgp32[] = {g->mtgp32_params, g->mtgp32_last, g->mtgp32_rounds};
    for (int i = 0; i < 3; ++i)
      if (mtgp32[i])
        cuMemFree(mtgp32[i]);
    cuModuleUnload(g->module);
  }
  CUcontext popped;
  cuCtxPopCurrent(&popped);
  pthread_mutex_destroy(&g->lock);
  free(g->history);
  free(g);
  return status;
}
ABI_CHECK(curandDestroyGenerator);

curandStatus_t IMPL_ALWAYS(curandGetVersion)(int *version) {
  if (!version)
    return CURAND_STATUS_OUT_OF_RANGE;
  *version = CURAND_VERSION;
  return CURAND_STATUS_SUCCESS;
}
ABI_CHECK_ALWAYS(curandGetVersion);

curandStatus_t IMPL_ALWAYS(curandGetProperty)(libraryPropertyType type, int *value) {
  if (!value)
    return CURAND_STATUS_OUT_OF_RANGE;
  switch (type) {
  case MAJOR_VERSION:
    *value = CURAND_VER_MAJOR;
    return CURAND_STATUS_SUCCESS;
  case MINOR_VERSION:
    *value = CURAND_VER_MINOR;
    return CURAND_STATUS_SUCCESS;
  case PATCH_LEVEL:
    *value = CURAND_VER_PATCH;
    return CURAND_STATUS_SUCCESS;
  default:
    return CURAND_STATUS_OUT_OF_RANGE;
  }
}
ABI_CHECK_ALWAYS(curandGetProperty);

curandStatus_t IMPL(curandSetStream)(curandGenerator_t g, cudaStream_t stream) {
  if (!g)
    return CURAND_STATUS_NOT_INITIALIZED;
  if (nvidias(g) != g) /* ours (destroy waits for its stream) */
    g->stream = (CUstream)stream;
  FORWARD(curandSetStream, g, stream);
  return CURAND_STATUS_SUCCESS;
}
ABI_CHECK(curandSetStream);

static void remember(curandGenerator_t g, enum kind kind, size_t n, double lambda,
                     unsigned long long offset);

curandStatus_t IMPL(curandSetPseudoRandomGeneratorSeed)(curandGenerator_t g,
                                                        unsigned long long seed) {
  if (!g)
    return CURAND_STATUS_NOT_INITIALIZED;
  FORWARD(curandSetPseudoRandomGeneratorSeed, g, seed);
  pthread_mutex_lock(&g->lock);
  /* NVIDIA's starts the states over at the new seed and the offset it
   * keeps (measured: it is not set back to 0): XORWOW's and MRG32k3a's the
   * one reached; Philox's the offset last set plus the quads that ended
   * since, as if each were one value (offset 100, then 1000 values: 350). */
  g->seed = seed;
  g->states_current = 0;
  if (g->type == CURAND_RNG_PSEUDO_MTGP32) {
    /* The rest of the round reached stays the old seed's (kernels.cu): a
     * twin of NVIDIA's must see the calls before too. */
    remember(g, KIND_SEED, (size_t)seed, 0.0, g->offset);
    pthread_mutex_unlock(&g->lock);
    return CURAND_STATUS_SUCCESS;
  }
  if (g->type == CURAND_RNG_PSEUDO_PHILOX4_32_10)
    g->offset = g->offset_set + g->offset / 4 - g->offset_set / 4;
  g->offset_set = g->offset;
  g->history_seed = seed;
  g->history_count = 0;
  g->history_lost = 0;
  pthread_mutex_unlock(&g->lock);
  return CURAND_STATUS_SUCCESS;
}
ABI_CHECK(curandSetPseudoRandomGeneratorSeed);

curandStatus_t IMPL(curandSetGeneratorOffset)(curandGenerator_t g, unsigned long long offset) {
  if (!g)
    return CURAND_STATUS_NOT_INITIALIZED;
  FORWARD(curandSetGeneratorOffset, g, offset);
  if (g->type == CURAND_RNG_PSEUDO_MTGP32)
    return CURAND_STATUS_TYPE_ERROR; /* NVIDIA's answer */
  pthread_mutex_lock(&g->lock);
  g->offset = g->offset_set = offset;
  g->history_seed = g->seed;
  g->states_current = 0;
  g->history_count = 0;
  g->history_lost = 0;
  pthread_mutex_unlock(&g->lock);
  return CURAND_STATUS_SUCCESS;
}
ABI_CHECK(curandSetGeneratorOffset);

/* A call ours made, kept for twin(). Calls of one kind in a row are one
 * call of their sum (XORWOW's and MRG32k3a's states each take their units
 * in order; Philox's where the first ends on a quad, kernels.cu). */
static void remember(curandGenerator_t g, enum kind kind, size_t n, double lambda,
                     unsigned long long offset) {
  if (g->history_lost)
    return;
  struct call *last = g->history_count ? &g->history[g->history_count - 1] : NULL;
  if (last && last->kind == kind && kind != KIND_SEED && last->lambda == lambda &&
      (g->type != CURAND_RNG_PSEUDO_PHILOX4_32_10 || offset % 4 == 0)) {
    last->n += n;
    return;
  }
  if (g->history_count == g->history_capacity) {
    size_t capacity = g->history_capacity ? 2 * g->history_capacity : 16;
    struct call *grown = capacity <= HISTORY_LIMIT ? realloc(g->history, capacity * sizeof *grown)
                                                   : NULL;
    if (!grown) {
      g->history_lost = 1;
      return;
    }
    g->history = grown;
    g->history_capacity = capacity;
  }
  g->history[g->history_count++] = (struct call){kind, n, lambda};
}

/* A generator of NVIDIA's in the state NVIDIA's library would have `g`'s in
 * had it been NVIDIA's from its creation: its type, stream, seed, ordering
 * and offset set, then the calls ours made since the seed or offset was
 * last set made again into scratch memory. `what` names what ours lacks. */
static curandStatus_t twin(curandGenerator_t g, const char *what, curandGenerator_t *out) {
  if (!nvidia_library())
    return refuse(what);
  if (g->history_lost) {
    zmlir_log(1,
              "unsupported %s after more than %d calls of changing kinds (too many to replay "
              "onto NVIDIA's libcurand); returning " ZMLIR_NOT_SUPPORTED_NAME,
              what, HISTORY_LIMIT);
    return ZMLIR_NOT_SUPPORTED;
  }
  __typeof__(&curandCreateGenerator) make = g->host ? NVIDIA(curandCreateGeneratorHost)
                                                    : NVIDIA(curandCreateGenerator);
  __typeof__(&curandDestroyGenerator) destroy = NVIDIA(curandDestroyGenerator);
  __typeof__(&curandSetStream) set_stream = NVIDIA(curandSetStream);
  __typeof__(&curandSetPseudoRandomGeneratorSeed) set_seed = NVIDIA(
      curandSetPseudoRandomGeneratorSeed);
  __typeof__(&curandSetGeneratorOffset) set_offset = NVIDIA(curandSetGeneratorOffset);
  __typeof__(&curandSetGeneratorOrdering) set_ordering = NVIDIA(curandSetGeneratorOrdering);
  __typeof__(&curandGenerate) bits = NVIDIA(curandGenerate);
  __typeof__(&curandGenerateUniform) uniform = NVIDIA(curandGenerateUniform);
  __typeof__(&curandGenerateUniformDouble) uniform_double = NVIDIA(curandGenerateUniformDouble);
  __typeof__(&curandGenerateNormal) normal = NVIDIA(curandGenerateNormal);
  __typeof__(&curandGenerateNormalDouble) normal_double = NVIDIA(curandGenerateNormalDouble);
  __typeof__(&curandGenerateLogNormal) log_normal = NVIDIA(curandGenerateLogNormal);
  __typeof__(&curandGenerateLogNormalDouble) log_normal_double = NVIDIA(
      curandGenerateLogNormalDouble);
  __typeof__(&curandGeneratePoisson) poisson = NVIDIA(curandGeneratePoisson);
  if (!(make && destroy && set_stream && set_seed && set_offset && set_ordering && bits &&
        uniform && uniform_double && normal && normal_double && log_normal && log_normal_double &&
        poisson))
    return ZMLIR_NOT_SUPPORTED;
  if (cuCtxPushCurrent(g->context) != CUDA_SUCCESS)
    return CURAND_STATUS_PREEXISTING_FAILURE;
  curandGenerator_t v = NULL;
  curandStatus_t status = make(&v, g->type);
  if (status == CURAND_STATUS_SUCCESS)
    status = set_stream(v, (cudaStream_t)g->stream);
  if (status == CURAND_STATUS_SUCCESS)
    status = set_seed(v, g->history_seed);
  if (status == CURAND_STATUS_SUCCESS && g->ordering != CURAND_ORDERING_PSEUDO_DEFAULT)
    status = set_ordering(v, g->ordering);
  if (status == CURAND_STATUS_SUCCESS && g->type != CURAND_RNG_PSEUDO_MTGP32)
    status = set_offset(v, g->offset_set);
  /* In pieces of at most REPLAY_PIECE values, each ending where a call
   * could have (XORWOW's and MRG32k3a's units: anywhere, normals in pairs;
   * Philox's on a quad, else the whole call), into scratch memory for the
   * largest. */
  enum { REPLAY_PIECE = 1 << 22 };
  int philox = g->type == CURAND_RNG_PSEUDO_PHILOX4_32_10;
  unsigned long long position = g->offset_set; /* Philox: in values */
  void *scratch = NULL;
  size_t scratch_bytes = 0;
  for (size_t i = 0; i < g->history_count && status == CURAND_STATUS_SUCCESS; ++i) {
    enum kind kind = g->history[i].kind;
    int pairs = kind >= KIND_NORMAL && kind <= KIND_LOG_NORMAL_DOUBLE;
    if (kind == KIND_SEED) {
      status = set_seed(v, g->history[i].n);
      continue;
    }
    for (size_t left = g->history[i].n; left && status == CURAND_STATUS_SUCCESS;) {
      size_t n = left < REPLAY_PIECE ? left : REPLAY_PIECE;
      if (philox && n < left) {
        n -= (size_t)((position + n) % 4);
        if (pairs && n % 2)
          n = left;
      }
      if (n * 8 > scratch_bytes) {
        if (g->host) {
          free(scratch);
          scratch = malloc(n * 8);
        } else {
          if (scratch) {
            cuStreamSynchronize(g->stream);
            cuMemFree((CUdeviceptr)(uintptr_t)scratch);
          }
          CUdeviceptr device = 0;
          scratch = cuMemAlloc(&device, n * 8) == CUDA_SUCCESS ? (void *)(uintptr_t)device : NULL;
        }
        scratch_bytes = scratch ? n * 8 : 0;
        if (!scratch) {
          status = CURAND_STATUS_ALLOCATION_FAILED;
          break;
        }
      }
      switch (kind) {
      case KIND_BITS:
        status = bits(v, scratch, n);
        break;
      case KIND_UNIFORM:
        status = uniform(v, scratch, n);
        break;
      case KIND_UNIFORM_DOUBLE:
        status = uniform_double(v, scratch, n);
        break;
      case KIND_NORMAL:
        status = normal(v, scratch, n, 0.0f, 1.0f);
        break;
      case KIND_NORMAL_DOUBLE:
        status = normal_double(v, scratch, n, 0.0, 1.0);
        break;
      case KIND_LOG_NORMAL:
        status = log_normal(v, scratch, n, 0.0f, 1.0f);
        break;
      case KIND_LOG_NORMAL_DOUBLE:
        status = log_normal_double(v, scratch, n, 0.0, 1.0);
        break;
      case KIND_POISSON:
      case KIND_POISSON_NORMAL:
        status = poisson(v, scratch, n, g->history[i].lambda);
        break;
      case KIND_SEED: /* above */
        break;
      }
      position += n;
      left -= n;
    }
  }
  if (scratch && g->host) {
    free(scratch);
  } else if (scratch) {
    cuStreamSynchronize(g->stream);
    cuMemFree((CUdeviceptr)(uintptr_t)scratch);
  }
  CUcontext popped;
  cuCtxPopCurrent(&popped);
  if (status != CURAND_STATUS_SUCCESS) {
    if (v)
      destroy(v);
    return status;
  }
  zmlir_log(0, "%s: NVIDIA's, after %zu calls of ours replayed", what, g->history_count);
  *out = v;
  return CURAND_STATUS_SUCCESS;
}

/* `g` NVIDIA's from now on (g->lock held). */
static curandStatus_t hand_over(curandGenerator_t g, const char *what) {
  if (g->vendor)
    return CURAND_STATUS_SUCCESS;
  curandGenerator_t v;
  curandStatus_t status = twin(g, what, &v);
  if (status == CURAND_STATUS_SUCCESS)
    __atomic_store_n(&g->vendor, v, __ATOMIC_RELEASE);
  return status;
}

curandStatus_t IMPL(curandSetGeneratorOrdering)(curandGenerator_t g, curandOrdering_t order) {
  if (!g)
    return CURAND_STATUS_NOT_INITIALIZED;
  FORWARD(curandSetGeneratorOrdering, g, order);
  curandStatus_t status = CURAND_STATUS_SUCCESS;
  char what[96];
  /* LEGACY is ours: XORWOW's and Philox's is their DEFAULT, MRG32k3a's its
   * DEFAULT's layout over 4096 states (measured: the same values for every
   * kind of call, offsets, odd sizes). */
  if (order == CURAND_ORDERING_PSEUDO_SEEDED || order == CURAND_ORDERING_PSEUDO_DYNAMIC ||
      (g->type == CURAND_RNG_PSEUDO_MTGP32 && order != CURAND_ORDERING_PSEUDO_DEFAULT)) {
    /* NVIDIA's generator takes the ordering, or says why not (SEEDED but
     * for XORWOW: CURAND_STATUS_OUT_OF_RANGE) and ours stays. */
    snprintf(what, sizeof what, "ordering %s", ordering_name(order));
    pthread_mutex_lock(&g->lock);
    curandGenerator_t v;
    status = twin(g, what, &v);
    if (status == CURAND_STATUS_SUCCESS) {
      status = NVIDIA(curandSetGeneratorOrdering)(v, order);
      if (status == CURAND_STATUS_SUCCESS)
        __atomic_store_n(&g->vendor, v, __ATOMIC_RELEASE);
      else
        NVIDIA(curandDestroyGenerator)(v);
    }
    pthread_mutex_unlock(&g->lock);
    return status;
  }
  switch (order) {
  case CURAND_ORDERING_PSEUDO_DEFAULT:
  case CURAND_ORDERING_PSEUDO_BEST:
  case CURAND_ORDERING_PSEUDO_LEGACY:
    /* One ordering; but a change of ordering after values were made starts
     * XORWOW's and Philox's states over otherwise than setting the offset
     * does (measured): NVIDIA's makes the rest. */
    pthread_mutex_lock(&g->lock);
    if (order != g->ordering && g->history_count) {
      snprintf(what, sizeof what, "change of ordering to %s after values were made",
               ordering_name(order));
      status = hand_over(g, what);
    } else if (order != g->ordering) { /* no values since the seed or offset */
      g->ordering = order;
      g->states_current = 0; /* MRG32k3a's count may change */
    }
    pthread_mutex_unlock(&g->lock);
    break;
  default:
    return CURAND_STATUS_OUT_OF_RANGE;
  }
  if (status != CURAND_STATUS_SUCCESS)
    return status;
  if (g->vendor)
    FORWARD(curandSetGeneratorOrdering, g, order);
  return CURAND_STATUS_SUCCESS;
}
ABI_CHECK(curandSetGeneratorOrdering);

/* How many threads share a state's units (kernels.cu): one where the
 * device runs no more threads at once than there are states (a CPU), else
 * enough to fill it (an H200 keeps 132 x 2048 running), each thread with 32
 * units at least. ZMLIR_CURAND_SPLIT sets it (the tests' check that the
 * values do not depend on it). */
static unsigned threads_per_state(curandGenerator_t g, enum kind kind,
                                  unsigned long long units_per_state) {
  /* A Poisson normal's draws depend on the normal its state keeps. */
  if (kind == KIND_POISSON_NORMAL)
    return 1;
  const char *forced = getenv("ZMLIR_CURAND_SPLIT");
  if (forced && atoi(forced) > 0)
    return (unsigned)atoi(forced);
  unsigned split = g->resident / state_count(g);
  if (split > units_per_state / 32)
    split = (unsigned)(units_per_state / 32);
  if (split > 64)
    split = 64;
  return split ? split : 1;
}

static CUresult launch(CUfunction f, unsigned threads, CUstream stream, void **args) {
  unsigned blocks = (threads + BLOCK - 1) / BLOCK;
  return cuLaunchKernel(f, blocks, 1, 1, BLOCK, 1, 1, 0, stream, args, NULL);
}

/* n values of `kind` into `out` (element_size bytes each); `pairs`: the
 * distribution makes values two at a time (n must be even). */
/* MTGP32's states at `g->seed` (g->lock held; its memory made the first
 * time), as NVIDIA's
 * curandMakeMTGP32Constants and curandMakeMTGP32KernelState make them
 * (curand_mtgp32_host.h): state i with the header's parameter set i,
 * seeded with (seed ^ seed >> 32) + i + 1 by mtgp32_init_state's rule. */
static CUresult mtgp32_states(curandGenerator_t g) {
  const mtgp32_params_fast_t *sets = mtgp32dc_params_fast_11213;
  CUresult result = CUDA_SUCCESS;
  if (!g->mtgp32_params) {
    mtgp32_kernel_params_t *k = calloc(1, sizeof *k);
    if (!k)
      return CUDA_ERROR_OUT_OF_MEMORY;
    k->mask[0] = sets[0].mask;
    for (int i = 0; i < CURAND_NUM_MTGP32_PARAMS; ++i) {
      k->pos_tbl[i] = sets[i].pos;
      k->sh1_tbl[i] = sets[i].sh1;
      k->sh2_tbl[i] = sets[i].sh2;
      for (int j = 0; j < TBL_SIZE; ++j) {
        k->param_tbl[i][j] = sets[i].tbl[j];
        k->temper_tbl[i][j] = sets[i].tmp_tbl[j];
        k->single_temper_tbl[i][j] = sets[i].flt_tmp_tbl[j];
      }
    }
    result = cuMemAlloc(&g->mtgp32_params, sizeof *k);
    if (result == CUDA_SUCCESS)
      result = cuMemcpyHtoD(g->mtgp32_params, k, sizeof *k);
    free(k);
    if (result == CUDA_SUCCESS)
      result = cuMemAlloc(&g->mtgp32_last, MTGP32_STATES * 256 * sizeof(unsigned));
    if (result == CUDA_SUCCESS)
      result = cuMemAlloc(&g->mtgp32_rounds, MTGP32_STATES * sizeof(unsigned));
    if (result == CUDA_SUCCESS) /* none made: kept across seeds (kernels.cu) */
      result = cuMemsetD32(g->mtgp32_rounds, 0, MTGP32_STATES);
    if (result == CUDA_SUCCESS)
      result = cuMemAlloc(&g->states[0], MTGP32_STATES * sizeof(curandStateMtgp32_t));
    if (result != CUDA_SUCCESS)
      return result;
  }
  curandStateMtgp32_t *states = calloc(MTGP32_STATES, sizeof *states);
  if (!states)
    return CUDA_ERROR_OUT_OF_MEMORY;
  unsigned seed = (unsigned)(g->seed ^ (g->seed >> 32));
  for (int i = 0; i < MTGP32_STATES; ++i) {
    unsigned *state = states[i].s;
    int size = sets[i].mexp / 32 + 1;
    unsigned hidden_seed = sets[i].tbl[4] ^ (sets[i].tbl[8] << 16), tmp = hidden_seed;
    tmp += tmp >> 16;
    tmp += tmp >> 8;
    memset(state, tmp & 0xff, sizeof(unsigned) * size);
    state[0] = seed + i + 1;
    state[1] = hidden_seed;
    for (int j = 1; j < size; j++)
      state[j] ^= 1812433253u * (state[j - 1] ^ (state[j - 1] >> 30)) + j;
    states[i].offset = 0;
    states[i].pIdx = i;
    states[i].k = (mtgp32_kernel_params_t *)(uintptr_t)g->mtgp32_params;
  }
  result = cuMemcpyHtoD(g->states[0], states, MTGP32_STATES * sizeof *states);
  free(states);
  return result;
}

static curandStatus_t generate(curandGenerator_t g, enum kind kind, void *out, size_t n,
                               size_t element_size, int pairs, struct params p) {
  if (!g)
    return CURAND_STATUS_NOT_INITIALIZED;
  if (pairs && n % 2)
    return CURAND_STATUS_LENGTH_NOT_MULTIPLE;
  if (n == 0)
    return CURAND_STATUS_SUCCESS;
  CUresult result = cuCtxPushCurrent(g->context);
  if (result != CUDA_SUCCESS)
    return CURAND_STATUS_PREEXISTING_FAILURE;
  pthread_mutex_lock(&g->lock);
  CUdeviceptr target = g->host ? 0 : (CUdeviceptr)(uintptr_t)out;
  if (g->host)
    result = cuMemAlloc(&target, n * element_size);
  int ikind = kind;
  int philox = g->type == CURAND_RNG_PSEUDO_PHILOX4_32_10;
  unsigned count = state_count(g);
  if (g->type == CURAND_RNG_PSEUDO_MTGP32) {
    if (result == CUDA_SUCCESS && !g->states_current) {
      result = mtgp32_states(g);
      g->states_current = result == CUDA_SUCCESS;
    }
    unsigned long long values = n;
    void *args[] = {&g->states[0], &g->mtgp32_last, &g->mtgp32_rounds, &ikind,
                    &target,       &values,         &g->offset,        &p};
    if (result == CUDA_SUCCESS)
      result = launch(g->generate, MTGP32_STATES * 256, g->stream, args);
    goto generated;
  }
  size_t bytes = g->type == CURAND_RNG_PSEUDO_MRG32K3A ? (size_t)MRG_STATES * STATE_BYTES
                                                       : (size_t)count * (philox ? 8 : STATE_BYTES);
  for (int i = 0; i < (philox ? 1 : 2) && result == CUDA_SUCCESS; ++i)
    if (!g->states[i])
      result = cuMemAlloc(&g->states[i], bytes);
  if (result == CUDA_SUCCESS && !g->states_current) {
    void *args[] = {&g->states[g->current], &g->seed, &g->offset, &count};
    void *philox_args[] = {&g->states[0], &g->offset};
    result = launch(g->init, count, g->stream, philox ? philox_args : args);
    g->states_current = result == CUDA_SUCCESS;
  }
  /* XORWOW's and MRG32k3a's offsets count units (pairs for normals),
   * Philox's values (kernels.cu). */
  unsigned long long units = pairs && !philox ? n / 2 : n;
  if (result == CUDA_SUCCESS && philox) {
    void *args[] = {&g->states[0], &ikind, &target, &units, &g->offset, &g->seed, &p};
    result = launch(g->generate, count, g->stream, args);
  } else if (result == CUDA_SUCCESS) {
    unsigned split = threads_per_state(g, kind, units / count);
    void *args[] = {&g->states[g->current],
                    &g->states[!g->current],
                    &ikind,
                    &target,
                    &units,
                    &g->offset,
                    &p,
                    &split,
                    &count};
    result = launch(g->generate, count * split, g->stream, args);
    if (result == CUDA_SUCCESS)
      g->current = !g->current;
  }
generated:
  if (result == CUDA_SUCCESS) {
    remember(g, kind, n, p.lambda, g->offset);
    g->offset += g->type == CURAND_RNG_PSEUDO_MTGP32 ? n : units;
  }
  if (g->host && target) {
    if (result == CUDA_SUCCESS)
      result = cuMemcpyDtoHAsync(out, target, n * element_size, g->stream);
    if (result == CUDA_SUCCESS)
      result = cuStreamSynchronize(g->stream);
    cuMemFree(target);
  }
  pthread_mutex_unlock(&g->lock);
  CUcontext popped;
  cuCtxPopCurrent(&popped);
  if (result == CUDA_ERROR_OUT_OF_MEMORY)
    return CURAND_STATUS_ALLOCATION_FAILED;
  if (result != CUDA_SUCCESS)
    return CURAND_STATUS_LAUNCH_FAILURE;
  return CURAND_STATUS_SUCCESS;
}

static const struct params no_params;

/* NVIDIA's host generators make normals and log-normals with the host's
 * libm, ours with the device's Box-Muller (their last bits differ): where
 * NVIDIA's library is found, a host generator is handed to it at its first
 * normals. Elsewhere ours makes them. */
#define HOST_NORMALS(name, g, ...)                                                                 \
  do {                                                                                             \
    if (g && g->host && !g->vendor && nvidia_library()) {                                          \
      pthread_mutex_lock(&g->lock);                                                                \
      curandStatus_t status_ = hand_over(g, "a host generator's normals");                         \
      pthread_mutex_unlock(&g->lock);                                                              \
      if (status_ != CURAND_STATUS_SUCCESS)                                                        \
        return status_;                                                                            \
      FORWARD(name, g, __VA_ARGS__);                                                               \
    }                                                                                              \
  } while (0)

/* MTGP32's Poisson (another rule than the other generators'): NVIDIA's,
 * the generator handed over first. */
#define MTGP32_NVIDIAS(name, g, ...)                                                               \
  do {                                                                                             \
    if (g && g->type == CURAND_RNG_PSEUDO_MTGP32 && !g->vendor) {                                  \
      pthread_mutex_lock(&g->lock);                                                                \
      curandStatus_t status_ = hand_over(g, "MTGP32's " #name);                                    \
      pthread_mutex_unlock(&g->lock);                                                              \
      if (status_ != CURAND_STATUS_SUCCESS)                                                        \
        return status_;                                                                            \
      FORWARD(name, g, __VA_ARGS__);                                                               \
    }                                                                                              \
  } while (0)

curandStatus_t IMPL(curandGenerate)(curandGenerator_t g, unsigned int *out, size_t n) {
  FORWARD(curandGenerate, g, out, n);
  return generate(g, KIND_BITS, out, n, 4, 0, no_params);
}
ABI_CHECK(curandGenerate);

curandStatus_t IMPL(curandGenerateUniform)(curandGenerator_t g, float *out, size_t n) {
  FORWARD(curandGenerateUniform, g, out, n);
  return generate(g, KIND_UNIFORM, out, n, 4, 0, no_params);
}
ABI_CHECK(curandGenerateUniform);

curandStatus_t IMPL(curandGenerateUniformDouble)(curandGenerator_t g, double *out, size_t n) {
  FORWARD(curandGenerateUniformDouble, g, out, n);
  return generate(g, KIND_UNIFORM_DOUBLE, out, n, 8, 0, no_params);
}
ABI_CHECK(curandGenerateUniformDouble);

curandStatus_t IMPL(curandGenerateNormal)(curandGenerator_t g, float *out, size_t n, float mean,
                                          float stddev) {
  FORWARD(curandGenerateNormal, g, out, n, mean, stddev);
  HOST_NORMALS(curandGenerateNormal, g, out, n, mean, stddev);
  struct params p = {.mean = mean, .stddev = stddev};
  return generate(g, KIND_NORMAL, out, n, 4, 1, p);
}
ABI_CHECK(curandGenerateNormal);

curandStatus_t IMPL(curandGenerateNormalDouble)(curandGenerator_t g, double *out, size_t n,
                                                double mean, double stddev) {
  FORWARD(curandGenerateNormalDouble, g, out, n, mean, stddev);
  HOST_NORMALS(curandGenerateNormalDouble, g, out, n, mean, stddev);
  struct params p = {.mean_double = mean, .stddev_double = stddev};
  return generate(g, KIND_NORMAL_DOUBLE, out, n, 8, 1, p);
}
ABI_CHECK(curandGenerateNormalDouble);

curandStatus_t IMPL(curandGenerateLogNormal)(curandGenerator_t g, float *out, size_t n, float mean,
                                             float stddev) {
  FORWARD(curandGenerateLogNormal, g, out, n, mean, stddev);
  HOST_NORMALS(curandGenerateLogNormal, g, out, n, mean, stddev);
  struct params p = {.mean = mean, .stddev = stddev};
  return generate(g, KIND_LOG_NORMAL, out, n, 4, 1, p);
}
ABI_CHECK(curandGenerateLogNormal);

curandStatus_t IMPL(curandGenerateLogNormalDouble)(curandGenerator_t g, double *out, size_t n,
                                                   double mean, double stddev) {
  FORWARD(curandGenerateLogNormalDouble, g, out, n, mean, stddev);
  HOST_NORMALS(curandGenerateLogNormalDouble, g, out, n, mean, stddev);
  struct params p = {.mean_double = mean, .stddev_double = stddev};
  return generate(g, KIND_LOG_NORMAL_DOUBLE, out, n, 8, 1, p);
}
ABI_CHECK(curandGenerateLogNormalDouble);

curandStatus_t IMPL(curandGenerateLongLong)(curandGenerator_t g, unsigned long long *out,
                                            size_t n) {
  FORWARD(curandGenerateLongLong, g, out, n);
  /* 64-bit values come from the 64-bit quasi-random generators only. */
  return g ? CURAND_STATUS_TYPE_ERROR : CURAND_STATUS_NOT_INITIALIZED;
}
ABI_CHECK(curandGenerateLongLong);

curandStatus_t IMPL(curandSetQuasiRandomGeneratorDimensions)(curandGenerator_t g,
                                                             unsigned int dimensions) {
  FORWARD(curandSetQuasiRandomGeneratorDimensions, g, dimensions);
  /* Ours are all pseudo-random. */
  return g ? CURAND_STATUS_TYPE_ERROR : CURAND_STATUS_NOT_INITIALIZED;
}
ABI_CHECK(curandSetQuasiRandomGeneratorDimensions);

curandStatus_t IMPL(curandGenerateSeeds)(curandGenerator_t g) {
  if (!g)
    return CURAND_STATUS_NOT_INITIALIZED;
  FORWARD(curandGenerateSeeds, g);
  /* Seeding happens at the first generation after the seed or offset is
   * set; doing it now changes nothing that can be seen. */
  return CURAND_STATUS_SUCCESS;
}
ABI_CHECK(curandGenerateSeeds);

/* NVIDIA's Poisson, measured against its library (kernels.cu says how the
 * values are laid out): below POISSON_TABLE_LIMIT a table lookup per 32-bit
 * value, NVIDIA's table bit for bit; from it on rounded normals; above
 * POISSON_LAMBDA_LIMIT (or at 0 and below) CURAND_STATUS_OUT_OF_RANGE. */
enum { POISSON_TABLE_LIMIT = 2000, POISSON_LAMBDA_LIMIT = 400000 };

/* NVIDIA's table for `lambda` (curandCreatePoissonDistribution's and
 * curandGeneratePoisson's: every V and K equal, measured at 22 lambdas from
 * 0.001 to 1999): Marsaglia, Tsang and Wang's square histogram over the k
 * whose probability exp(k log(lambda) - lambda - log(k!)), log(k!) summed a
 * log at a time, is not 0 in double; cell j of n (a = 1/n) says
 * j if u < V[j] = j a + p_j, else K[j]. The cells are filled by sweeps in
 * index order, each poor cell (p < a) in turn topped up to a from the rich
 * cell of highest index, which becomes poor in its turn, until none is poor;
 * sweeps repeat for the cells that became poor behind the sweep. Returns 0
 * where memory runs out. The arithmetic must not be contracted into fused
 * multiply-adds (x86-64 has none by default; the pragmas say so elsewhere). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
static int poisson_table(double lambda, unsigned *shift, unsigned *length, double **V_out,
                         unsigned **K_out) {
  double log_lambda = log(lambda), log_factorial = 0.0;
  size_t capacity = 0, n = 0;
  double *p = NULL;
  unsigned first = 0;
  for (unsigned k = 0;; ++k) {
    if (k > 0)
      log_factorial += log((double)k);
    double pk = exp((double)k * log_lambda - lambda - log_factorial);
    if (pk == 0.0) {
      if (n || (double)k > lambda)
        break;
      continue;
    }
    if (!n)
      first = k;
    if (n == capacity) {
      capacity = capacity ? 2 * capacity : 1024;
      double *grown = realloc(p, capacity * sizeof *p);
      if (!grown) {
        free(p);
        return 0;
      }
      p = grown;
    }
    p[n++] = pk;
  }
  double *V = malloc(n * sizeof *V);
  unsigned *K = malloc(n * sizeof *K);
  unsigned *large = malloc(n * sizeof *large);
  char *done = calloc(n, 1);
  if (!V || !K || !large || !done) {
    free(p), free(V), free(K), free(large), free(done);
    return 0;
  }
  double a = 1.0 / (double)n;
  size_t top = 0;
  for (size_t i = 0; i < n; ++i) {
    K[i] = (unsigned)i;
    if (!(p[i] < a))
      large[top++] = (unsigned)i;
  }
  for (int progress = 1; progress;) {
    progress = 0;
    for (size_t j = 0; j < n; ++j) {
      if (done[j] || !(p[j] < a))
        continue;
      while (top && (done[large[top - 1]] || p[large[top - 1]] < a))
        --top;
      if (!top)
        break;
      unsigned k = large[top - 1];
      K[j] = k;
      V[j] = (double)j * a + p[j];
      done[j] = 1;
      p[k] -= a - p[j];
      progress = 1;
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (!done[i])
      V[i] = (double)i * a + p[i];
  free(p), free(large), free(done);
  *shift = first;
  *length = (unsigned)n;
  *V_out = V;
  *K_out = K;
  return 1;
}

/* `g`'s table for `lambda` in device memory (g->lock held). */
static curandStatus_t use_table(curandGenerator_t g, double lambda, struct params *p) {
  if (!g->table || g->table_lambda != lambda) {
    unsigned shift, length;
    double *V;
    unsigned *K;
    if (!poisson_table(lambda, &shift, &length, &V, &K))
      return CURAND_STATUS_ALLOCATION_FAILED;
    if (g->table) {
      cuStreamSynchronize(g->stream); /* calls queued may still read it */
      cuMemFree(g->table);
      g->table = 0;
    }
    size_t bytes = (size_t)length * (sizeof *V + sizeof *K);
    CUresult result = cuMemAlloc(&g->table, bytes);
    if (result == CUDA_SUCCESS)
      result = cuMemcpyHtoD(g->table, V, length * sizeof *V);
    if (result == CUDA_SUCCESS)
      result = cuMemcpyHtoD(g->table + length * sizeof *V, K, length * sizeof *K);
    free(V), free(K);
    if (result != CUDA_SUCCESS) {
      if (g->table)
        cuMemFree(g->table);
      g->table = 0;
      return result == CUDA_ERROR_OUT_OF_MEMORY ? CURAND_STATUS_ALLOCATION_FAILED
                                                : CURAND_STATUS_LAUNCH_FAILURE;
    }
    g->table_lambda = lambda;
    g->table_shift = shift;
    g->table_length = length;
  }
  p->V = g->table;
  p->K = g->table + g->table_length * sizeof(double);
  p->shift = g->table_shift;
  p->length = g->table_length;
  return CURAND_STATUS_SUCCESS;
}

static curandStatus_t poisson(curandGenerator_t g, unsigned int *out, size_t n, double lambda) {
  if (lambda <= 0.0 || lambda > POISSON_LAMBDA_LIMIT)
    return CURAND_STATUS_OUT_OF_RANGE;
  MTGP32_NVIDIAS(curandGeneratePoisson, g, out, n, lambda);
  struct params p = {.lambda = lambda};
  if (!(lambda < POISSON_TABLE_LIMIT)) { /* NaN too, as NVIDIA's */
    /* NVIDIA's host generators make normals with the host's libm. */
    HOST_NORMALS(curandGeneratePoisson, g, out, n, lambda);
    return generate(g, KIND_POISSON_NORMAL, out, n, 4, 0, p);
  }
  if (n == 0)
    return CURAND_STATUS_SUCCESS;
  if (cuCtxPushCurrent(g->context) != CUDA_SUCCESS)
    return CURAND_STATUS_PREEXISTING_FAILURE;
  pthread_mutex_lock(&g->lock);
  curandStatus_t status = use_table(g, lambda, &p);
  pthread_mutex_unlock(&g->lock);
  CUcontext popped;
  cuCtxPopCurrent(&popped);
  return status == CURAND_STATUS_SUCCESS ? generate(g, KIND_POISSON, out, n, 4, 0, p) : status;
}

curandStatus_t IMPL(curandGeneratePoissonMethod)(curandGenerator_t g, unsigned int *out, size_t n,
                                                 double lambda, curandMethod_t method) {
  if (!g)
    return CURAND_STATUS_NOT_INITIALIZED;
  FORWARD(curandGeneratePoissonMethod, g, out, n, lambda, method);
  /* NVIDIA's takes CURAND_CHOOSE_BEST (curandGeneratePoisson's), and
   * CURAND_DEVICE_API and CURAND_3RD, which ours hands over; the others are
   * CURAND_STATUS_OUT_OF_RANGE (measured). */
  if (method == CURAND_CHOOSE_BEST)
    return poisson(g, out, n, lambda);
  if (method != CURAND_DEVICE_API && method != CURAND_3RD)
    return CURAND_STATUS_OUT_OF_RANGE;
  pthread_mutex_lock(&g->lock);
  char what[96];
  snprintf(what, sizeof what, "curandGeneratePoissonMethod (method %d)", (int)method);
  curandStatus_t status = hand_over(g, what);
  pthread_mutex_unlock(&g->lock);
  if (status != CURAND_STATUS_SUCCESS)
    return status;
  FORWARD(curandGeneratePoissonMethod, g, out, n, lambda, method);
  return ZMLIR_NOT_SUPPORTED;
}
ABI_CHECK(curandGeneratePoissonMethod);

curandStatus_t IMPL(curandGeneratePoisson)(curandGenerator_t g, unsigned int *out, size_t n,
                                           double lambda) {
  if (!g)
    return CURAND_STATUS_NOT_INITIALIZED;
  FORWARD(curandGeneratePoisson, g, out, n, lambda);
  return poisson(g, out, n, lambda);
}
ABI_CHECK(curandGeneratePoisson);

/* What needs no generator and ours does not make: NVIDIA's, where found. */
#define NVIDIAS_ONLY(name, ...)                                                                    \
  do {                                                                                             \
    __typeof__(&name) f_ = nvidia_library() ? NVIDIA(name) : NULL;                                 \
    return f_ ? f_(__VA_ARGS__) : refuse(#name);                                                   \
  } while (0)

/* A Poisson distribution of ours (curandCreatePoissonDistribution): the
 * structs of curand_discrete.h in one device allocation (the distribution,
 * its M2 shift, its histogram, V, K), and their host copies, which the
 * device structs' host_* fields point to, as NVIDIA's do (measured). Below
 * POISSON_TABLE_LIMIT the square histogram (CURAND_M2, poisson_table's,
 * NVIDIA's bit for bit), from it on CURAND_DISCRETE_GAUSS with mean lambda
 * and standard deviation sqrt(lambda), as NVIDIA's. */
#include <curand_discrete.h>

struct distribution {
  struct curandDiscreteDistribution_st dist;
  struct curandDistributionM2Shift_st m2;
  struct curandHistogramM2_st histogram;
  double *V;
  unsigned *K;
  CUdeviceptr device;
  struct distribution *next;
};
static struct distribution *distributions;
static pthread_mutex_t distributions_lock = PTHREAD_MUTEX_INITIALIZER;

static void free_distribution(struct distribution *d) {
  if (d->device)
    cuMemFree(d->device);
  free(d->V), free(d->K), free(d);
}

curandStatus_t
IMPL(curandCreatePoissonDistribution)(double lambda,
                                      curandDiscreteDistribution_t *discrete_distribution) {
  if (!discrete_distribution)
    return CURAND_STATUS_NOT_INITIALIZED;
  if (!(lambda > 0.0))
    return CURAND_STATUS_OUT_OF_RANGE; /* NVIDIA's answer at 0 and below */
  CUcontext context;
  curandStatus_t status = current_context(&context);
  if (status != CURAND_STATUS_SUCCESS)
    return status;
  struct distribution *d = calloc(1, sizeof *d);
  if (!d)
    return CURAND_STATUS_ALLOCATION_FAILED;
  unsigned shift = 0, length = 0;
  if (lambda < POISSON_TABLE_LIMIT && !poisson_table(lambda, &shift, &length, &d->V, &d->K)) {
    free(d);
    return CURAND_STATUS_ALLOCATION_FAILED;
  }
  /* The device block: the three structs, then V and K. */
  enum { DIST = 0, M2 = 64, HISTOGRAM = 128, TABLE = 192 };
  size_t bytes = TABLE + (size_t)length * (sizeof(double) + sizeof(unsigned));
  CUresult result = cuMemAlloc(&d->device, bytes);
  if (result != CUDA_SUCCESS) {
    free_distribution(d);
    return CURAND_STATUS_ALLOCATION_FAILED;
  }
  CUdeviceptr V = d->device + TABLE, K = V + (size_t)length * sizeof(double);
  d->dist.self_host_ptr = &d->dist;
  if (length) {
    d->histogram.V = (double *)(uintptr_t)V;
    d->histogram.host_V = d->V;
    d->histogram.K = (unsigned *)(uintptr_t)K;
    d->histogram.host_K = d->K;
    d->m2.histogram = (curandHistogramM2_t)(uintptr_t)(d->device + HISTOGRAM);
    d->m2.host_histogram = &d->histogram;
    d->m2.shift = shift;
    d->m2.length = length;
    d->dist.M2 = (curandDistributionM2Shift_t)(uintptr_t)(d->device + M2);
    d->dist.host_M2 = &d->m2;
    d->dist.method = CURAND_M2;
  } else {
    d->dist.stddev = sqrt(lambda);
    d->dist.mean = lambda;
    d->dist.method = CURAND_DISCRETE_GAUSS;
  }
  result = cuMemcpyHtoD(d->device + DIST, &d->dist, sizeof d->dist);
  if (result == CUDA_SUCCESS && length)
    result = cuMemcpyHtoD(d->device + M2, &d->m2, sizeof d->m2);
  if (result == CUDA_SUCCESS && length)
    result = cuMemcpyHtoD(d->device + HISTOGRAM, &d->histogram, sizeof d->histogram);
  if (result == CUDA_SUCCESS && length)
    result = cuMemcpyHtoD(V, d->V, length * sizeof(double));
  if (result == CUDA_SUCCESS && length)
    result = cuMemcpyHtoD(K, d->K, length * sizeof(unsigned));
  if (result != CUDA_SUCCESS) {
    free_distribution(d);
    return CURAND_STATUS_INITIALIZATION_FAILED;
  }
  pthread_mutex_lock(&distributions_lock);
  d->next = distributions;
  distributions = d;
  pthread_mutex_unlock(&distributions_lock);
  *discrete_distribution = (curandDiscreteDistribution_t)(uintptr_t)d->device;
  return CURAND_STATUS_SUCCESS;
}
ABI_CHECK(curandCreatePoissonDistribution);

curandStatus_t IMPL(curandDestroyDistribution)(curandDiscreteDistribution_t discrete_distribution) {
  if (!discrete_distribution)
    return CURAND_STATUS_NOT_INITIALIZED;
  pthread_mutex_lock(&distributions_lock);
  struct distribution **p = &distributions;
  while (*p && (*p)->device != (CUdeviceptr)(uintptr_t)discrete_distribution)
    p = &(*p)->next;
  struct distribution *d = *p;
  if (d)
    *p = d->next;
  pthread_mutex_unlock(&distributions_lock);
  if (d) {
    free_distribution(d);
    return CURAND_STATUS_SUCCESS;
  }
  /* Not ours: NVIDIA's, where its library made it. */
  NVIDIAS_ONLY(curandDestroyDistribution, discrete_distribution);
}
ABI_CHECK(curandDestroyDistribution);

curandStatus_t IMPL(curandGetDirectionVectors32)(curandDirectionVectors32_t *vectors[],
                                                 curandDirectionVectorSet_t set) {
  NVIDIAS_ONLY(curandGetDirectionVectors32, vectors, set);
}
ABI_CHECK(curandGetDirectionVectors32);

curandStatus_t IMPL(curandGetDirectionVectors64)(curandDirectionVectors64_t *vectors[],
                                                 curandDirectionVectorSet_t set) {
  NVIDIAS_ONLY(curandGetDirectionVectors64, vectors, set);
}
ABI_CHECK(curandGetDirectionVectors64);

curandStatus_t IMPL(curandGetScrambleConstants32)(unsigned int **constants) {
  NVIDIAS_ONLY(curandGetScrambleConstants32, constants);
}
ABI_CHECK(curandGetScrambleConstants32);

curandStatus_t IMPL(curandGetScrambleConstants64)(unsigned long long **constants) {
  NVIDIAS_ONLY(curandGetScrambleConstants64, constants);
}
ABI_CHECK(curandGetScrambleConstants64);
