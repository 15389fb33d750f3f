/* Our cuRAND's host API: generators as kernels of ours (kernels.cu, its PTX
 * embedded by build.py) that run in the generator's stream through the
 * driver API, on every backend of our driver and on NVIDIA's (route.c:
 * under zmlir's CUDA passthrough, NVIDIA's own library where it is found).
 * XORWOW, Philox4x32-10 and MRG32k3a, with NVIDIA's default ordering, give
 * NVIDIA's sequences bit for bit (kernels.cu says how they are laid out);
 * the other generator types, orderings and Poisson answer
 * CURAND_STATUS_ARCH_MISMATCH ("not supported here") with their name said
 * once on stderr.
 *
 * A host generator (curandCreateGeneratorHost) runs the same kernels into
 * device memory and copies the values out before returning, as NVIDIA's
 * host generators give their values on return. Its raw bits and uniforms
 * are NVIDIA's; its normals are NVIDIA's device normals, where NVIDIA's host
 * generators compute theirs with the host's libm (last bits differ). */
#include "route.h"

#include <curand.h>

#include <pthread.h>
#include <stdint.h>
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
};
struct params {
  float mean, stddev;
  double mean_double, stddev_double;
};

enum {
  XORWOW_STATES = 4096,
  MRG_STATES = 81920,
  PHILOX_SUBSEQUENCES = 65536,
  STATE_BYTES = 48,
  BLOCK = 256
};

struct curandGenerator_st {
  curandRngType_t type;
  int host; /* curandCreateGeneratorHost: the output is in host memory */
  CUcontext context;
  CUmodule module;
  CUfunction init, generate;
  CUstream stream;
  unsigned long long seed;
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
  pthread_mutex_t lock;
};

/* States per generator (kernels.cu): XORWOW's and MRG32k3a's device API
 * states, Philox's counters. */
static unsigned state_count(curandRngType_t type) {
  return type == CURAND_RNG_PSEUDO_XORWOW     ? XORWOW_STATES
         : type == CURAND_RNG_PSEUDO_MRG32K3A ? MRG_STATES
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

static curandStatus_t create(curandGenerator_t *generator, curandRngType_t type, int host) {
  if (!generator)
    return CURAND_STATUS_NOT_INITIALIZED;
  if (type == CURAND_RNG_PSEUDO_DEFAULT)
    type = CURAND_RNG_PSEUDO_XORWOW;
  if (type != CURAND_RNG_PSEUDO_XORWOW && type != CURAND_RNG_PSEUDO_MRG32K3A &&
      type != CURAND_RNG_PSEUDO_PHILOX4_32_10) {
    const char *name = type_name(type);
    if (!name)
      return CURAND_STATUS_TYPE_ERROR;
    zmlir_log(1, "unsupported generator type: %s; returning " ZMLIR_NOT_SUPPORTED_NAME, name);
    return ZMLIR_NOT_SUPPORTED;
  }
  struct curandGenerator_st *g = calloc(1, sizeof *g);
  if (!g)
    return CURAND_STATUS_ALLOCATION_FAILED;
  curandStatus_t status = current_context(&g->context);
  if (status != CURAND_STATUS_SUCCESS) {
    free(g);
    return status;
  }
  const char *generate = type == CURAND_RNG_PSEUDO_XORWOW     ? "zmlir_curand_xorwow_generate"
                         : type == CURAND_RNG_PSEUDO_MRG32K3A ? "zmlir_curand_mrg32k3a_generate"
                                                              : "zmlir_curand_philox_generate";
  const char *init = type == CURAND_RNG_PSEUDO_XORWOW     ? "zmlir_curand_xorwow_init"
                     : type == CURAND_RNG_PSEUDO_MRG32K3A ? "zmlir_curand_mrg32k3a_init"
                                                          : "zmlir_curand_philox_init";
  CUresult result = cuModuleLoadData(&g->module, zmlir_curand_ptx);
  if (result == CUDA_SUCCESS)
    result = cuModuleGetFunction(&g->generate, g->module, generate);
  if (result == CUDA_SUCCESS)
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
  g->type = type;
  g->host = host;
  g->seed = 0; /* NVIDIA's default seed */
  pthread_mutex_init(&g->lock, NULL);
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
  /* Work queued in the generator's stream may still use the states. */
  cuCtxPushCurrent(g->context);
  cuStreamSynchronize(g->stream);
  for (int i = 0; i < 2; ++i)
    if (g->states[i])
      cuMemFree(g->states[i]);
  cuModuleUnload(g->module);
  CUcontext popped;
  cuCtxPopCurrent(&popped);
  pthread_mutex_destroy(&g->lock);
  free(g);
  return CURAND_STATUS_SUCCESS;
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
  g->stream = (CUstream)stream;
  return CURAND_STATUS_SUCCESS;
}
ABI_CHECK(curandSetStream);

curandStatus_t IMPL(curandSetPseudoRandomGeneratorSeed)(curandGenerator_t g,
                                                        unsigned long long seed) {
  if (!g)
    return CURAND_STATUS_NOT_INITIALIZED;
  pthread_mutex_lock(&g->lock);
  g->seed = seed;
  g->offset = 0;
  g->states_current = 0;
  pthread_mutex_unlock(&g->lock);
  return CURAND_STATUS_SUCCESS;
}
ABI_CHECK(curandSetPseudoRandomGeneratorSeed);

curandStatus_t IMPL(curandSetGeneratorOffset)(curandGenerator_t g, unsigned long long offset) {
  if (!g)
    return CURAND_STATUS_NOT_INITIALIZED;
  pthread_mutex_lock(&g->lock);
  g->offset = offset;
  g->states_current = 0;
  pthread_mutex_unlock(&g->lock);
  return CURAND_STATUS_SUCCESS;
}
ABI_CHECK(curandSetGeneratorOffset);

curandStatus_t IMPL(curandSetGeneratorOrdering)(curandGenerator_t g, curandOrdering_t order) {
  if (!g)
    return CURAND_STATUS_NOT_INITIALIZED;
  switch (order) {
  case CURAND_ORDERING_PSEUDO_DEFAULT:
    return CURAND_STATUS_SUCCESS;
  case CURAND_ORDERING_PSEUDO_BEST:
  case CURAND_ORDERING_PSEUDO_SEEDED:
  case CURAND_ORDERING_PSEUDO_LEGACY:
  case CURAND_ORDERING_PSEUDO_DYNAMIC:
    zmlir_log(1,
              "unsupported ordering %d (ours is CURAND_ORDERING_PSEUDO_DEFAULT); "
              "returning " ZMLIR_NOT_SUPPORTED_NAME,
              (int)order);
    return ZMLIR_NOT_SUPPORTED;
  default:
    return CURAND_STATUS_OUT_OF_RANGE;
  }
}
ABI_CHECK(curandSetGeneratorOrdering);

/* How many threads share a state's units (kernels.cu): one where the
 * device runs no more threads at once than there are states (a CPU), else
 * enough to fill it (an H200 keeps 132 x 2048 running), each thread with 32
 * units at least. ZMLIR_CURAND_SPLIT sets it (the tests' check that the
 * values do not depend on it). */
static unsigned threads_per_state(curandGenerator_t g, unsigned long long units_per_state) {
  const char *forced = getenv("ZMLIR_CURAND_SPLIT");
  if (forced && atoi(forced) > 0)
    return (unsigned)atoi(forced);
  unsigned split = g->resident / state_count(g->type);
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
  unsigned count = state_count(g->type);
  size_t bytes = (size_t)count * (philox ? 8 : STATE_BYTES);
  for (int i = 0; i < (philox ? 1 : 2) && result == CUDA_SUCCESS; ++i)
    if (!g->states[i])
      result = cuMemAlloc(&g->states[i], bytes);
  if (result == CUDA_SUCCESS && !g->states_current) {
    void *args[] = {&g->states[g->current], &g->seed, &g->offset};
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
    unsigned split = threads_per_state(g, units / count);
    void *args[] = {&g->states[g->current],
                    &g->states[!g->current],
                    &ikind,
                    &target,
                    &units,
                    &g->offset,
                    &p,
                    &split};
    result = launch(g->generate, count * split, g->stream, args);
    if (result == CUDA_SUCCESS)
      g->current = !g->current;
  }
  if (result == CUDA_SUCCESS)
    g->offset += units;
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

curandStatus_t IMPL(curandGenerate)(curandGenerator_t g, unsigned int *out, size_t n) {
  return generate(g, KIND_BITS, out, n, 4, 0, no_params);
}
ABI_CHECK(curandGenerate);

curandStatus_t IMPL(curandGenerateUniform)(curandGenerator_t g, float *out, size_t n) {
  return generate(g, KIND_UNIFORM, out, n, 4, 0, no_params);
}
ABI_CHECK(curandGenerateUniform);

curandStatus_t IMPL(curandGenerateUniformDouble)(curandGenerator_t g, double *out, size_t n) {
  return generate(g, KIND_UNIFORM_DOUBLE, out, n, 8, 0, no_params);
}
ABI_CHECK(curandGenerateUniformDouble);

curandStatus_t IMPL(curandGenerateNormal)(curandGenerator_t g, float *out, size_t n, float mean,
                                          float stddev) {
  struct params p = {.mean = mean, .stddev = stddev};
  return generate(g, KIND_NORMAL, out, n, 4, 1, p);
}
ABI_CHECK(curandGenerateNormal);

curandStatus_t IMPL(curandGenerateNormalDouble)(curandGenerator_t g, double *out, size_t n,
                                                double mean, double stddev) {
  struct params p = {.mean_double = mean, .stddev_double = stddev};
  return generate(g, KIND_NORMAL_DOUBLE, out, n, 8, 1, p);
}
ABI_CHECK(curandGenerateNormalDouble);

curandStatus_t IMPL(curandGenerateLogNormal)(curandGenerator_t g, float *out, size_t n, float mean,
                                             float stddev) {
  struct params p = {.mean = mean, .stddev = stddev};
  return generate(g, KIND_LOG_NORMAL, out, n, 4, 1, p);
}
ABI_CHECK(curandGenerateLogNormal);

curandStatus_t IMPL(curandGenerateLogNormalDouble)(curandGenerator_t g, double *out, size_t n,
                                                   double mean, double stddev) {
  struct params p = {.mean_double = mean, .stddev_double = stddev};
  return generate(g, KIND_LOG_NORMAL_DOUBLE, out, n, 8, 1, p);
}
ABI_CHECK(curandGenerateLogNormalDouble);

curandStatus_t IMPL(curandGenerateLongLong)(curandGenerator_t g, unsigned long long *out,
                                            size_t n) {
  (void)out, (void)n;
  /* 64-bit values come from the 64-bit quasi-random generators only. */
  return g ? CURAND_STATUS_TYPE_ERROR : CURAND_STATUS_NOT_INITIALIZED;
}
ABI_CHECK(curandGenerateLongLong);

curandStatus_t IMPL(curandSetQuasiRandomGeneratorDimensions)(curandGenerator_t g,
                                                             unsigned int dimensions) {
  (void)dimensions;
  /* Our generators are all pseudo-random. */
  return g ? CURAND_STATUS_TYPE_ERROR : CURAND_STATUS_NOT_INITIALIZED;
}
ABI_CHECK(curandSetQuasiRandomGeneratorDimensions);

curandStatus_t IMPL(curandGenerateSeeds)(curandGenerator_t g) {
  if (!g)
    return CURAND_STATUS_NOT_INITIALIZED;
  /* Seeding happens at the first generation after the seed or offset is
   * set; doing it now changes nothing that can be seen. */
  return CURAND_STATUS_SUCCESS;
}
ABI_CHECK(curandGenerateSeeds);
