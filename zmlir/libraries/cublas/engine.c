/* The host route's engine: the GEMM on the host BLAS, run as jobs in stream
 * order (zmlir_enqueue, route.c). Device memory is host memory on this route
 * (USM), so the BLAS works on the application's pointers in place. Under
 * ZMLIR_LIBRARY_ROUTE=sycl its f32 GEMMs run on oneMKL's SYCL BLAS instead
 * (sgemm below). */
#define _GNU_SOURCE /* dladdr */
#include "engine.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#define ZMLIR_CAT2(a, b) a##b
#define ZMLIR_CAT(a, b) ZMLIR_CAT2(a, b)
#define CBLAS(name) ZMLIR_CAT(ZMLIR_BLAS_PREFIX, ZMLIR_CAT(cblas_, name))

cublasStatus_t zmlir_submit(CUstream stream, struct zmlir_job *job, int wait) {
  return zmlir_enqueue(stream, job, wait) == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS
                                                          : CUBLAS_STATUS_EXECUTION_FAILED;
}

void zmlir_scalar_set(struct zmlir_scalar *s, const void *pointer, size_t size, int device) {
  if (device) {
    s->at = pointer;
  } else {
    memcpy(s->bytes, pointer, size);
    s->at = s->bytes;
  }
}

/* -- status strings (cuBLAS and cuBLASLt share them) ------------------------------ */

const char *zmlir_status_name(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_LICENSE_ERROR:
    return "CUBLAS_STATUS_LICENSE_ERROR";
  default:
    return "<unknown>";
  }
}

const char *zmlir_status_string(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "success";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "the library was not initialized";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "the resource allocation failed";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "an invalid numeric value was used as an argument";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "an absent device architectural feature is required";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "an access to GPU memory space failed";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "the GPU program failed to execute";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "an internal operation failed";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "the functionality requested is not supported";
  case CUBLAS_STATUS_LICENSE_ERROR:
    return "error detected trying to check the license";
  default:
    return "<unknown>";
  }
}

/* -- 16-bit floats ------------------------------------------------------------ */

static float bf16_to_f32(uint16_t bits) {
  uint32_t word = (uint32_t)bits << 16;
  float value;
  memcpy(&value, &word, sizeof value);
  return value;
}

/* Round to nearest even; a NaN is NVIDIA's canonical 0x7fff. */
static uint16_t f32_to_bf16(float value) {
  uint32_t word;
  memcpy(&word, &value, sizeof word);
  if (isnan(value))
    return 0x7fff;
  word += 0x7fff + ((word >> 16) & 1);
  return (uint16_t)(word >> 16);
}

/* -- 8-bit floats (OCP FP8: E4M3 without infinities, E5M2 with) -------------------- */

int zmlir_type_fp8(cudaDataType_t type) {
  return type == CUDA_R_8F_E4M3 || type == CUDA_R_8F_E5M2;
}

static float fp8_to_f32(uint8_t bits, int e5m2) {
  int mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
  int e = (bits & 0x7f) >> mbits, m = bits & ((1 << mbits) - 1);
  float sign = bits & 0x80 ? -1.0f : 1.0f;
  if (e5m2 && e == 31)
    return m ? NAN : sign * INFINITY;
  if (!e5m2 && e == 15 && m == 7)
    return NAN;
  if (e == 0)
    return sign * ldexpf((float)m, 1 - bias - mbits);
  return sign * ldexpf((float)(m + (1 << mbits)), e - bias - mbits);
}

/* Round to nearest even, saturated to the largest finite value (NVIDIA's
 * FP8 outputs); NaN stays NaN. */
static uint8_t f32_to_fp8(float v, int e5m2) {
  int mbits = e5m2 ? 2 : 3, bias = e5m2 ? 15 : 7;
  float largest = e5m2 ? 57344.0f : 448.0f;
  if (isnan(v))
    return e5m2 ? 0x7e : 0x7f;
  uint8_t sign = signbit(v) ? 0x80 : 0;
  float a = fabsf(v) > largest ? largest : fabsf(v);
  int exponent;
  frexpf(a, &exponent);
  exponent -= 1; /* a = 1.f * 2^exponent */
  if (a == 0 || exponent < 1 - bias)
    exponent = 1 - bias; /* subnormal: the step of the smallest normal */
  int q = (int)nearbyintf(ldexpf(a, mbits - exponent));
  if (q == 2 << mbits)
    q >>= 1, exponent += 1;
  if (q < (1 << mbits)) /* subnormal (or zero) */
    return sign | (uint8_t)q;
  return sign | (uint8_t)(((exponent + bias) << mbits) | (q - (1 << mbits)));
}

static float load(const void *base, cudaDataType_t type, int64_t index) {
  switch (type) {
  case CUDA_R_32F:
    return ((const float *)base)[index];
  case CUDA_R_64F:
    return (float)((const double *)base)[index];
  case CUDA_R_16F:
    return (float)((const _Float16 *)base)[index];
  case CUDA_R_16BF:
    return bf16_to_f32(((const uint16_t *)base)[index]);
  case CUDA_R_8F_E4M3:
  case CUDA_R_8F_E5M2:
    return fp8_to_f32(((const uint8_t *)base)[index], type == CUDA_R_8F_E5M2);
  default:
    return 0;
  }
}

static void store(void *base, cudaDataType_t type, int64_t index, float value) {
  switch (type) {
  case CUDA_R_32F:
    ((float *)base)[index] = value;
    break;
  case CUDA_R_64F:
    ((double *)base)[index] = value;
    break;
  case CUDA_R_16F:
    ((_Float16 *)base)[index] = (_Float16)value;
    break;
  case CUDA_R_16BF:
    ((uint16_t *)base)[index] = f32_to_bf16(value);
    break;
  case CUDA_R_8F_E4M3:
  case CUDA_R_8F_E5M2:
    ((uint8_t *)base)[index] = f32_to_fp8(value, type == CUDA_R_8F_E5M2);
    break;
  default:
    break;
  }
}

double zmlir_scalar_value(const struct zmlir_scalar *s, cudaDataType_t type) {
  if (type == CUDA_R_64F)
    return *(const double *)s->at;
  return load(s->at, type, 0);
}

int zmlir_type_supported(cudaDataType_t type) {
  return type == CUDA_R_32F || type == CUDA_R_64F || type == CUDA_R_16F || type == CUDA_R_16BF;
}

size_t zmlir_type_size(cudaDataType_t type) {
  switch (type) {
  case CUDA_C_64F:
    return 16;
  case CUDA_C_32F:
  case CUDA_R_64F:
    return 8;
  case CUDA_R_32F:
    return 4;
  case CUDA_R_16F:
  case CUDA_R_16BF:
    return 2;
  case CUDA_R_32I:
    return 4;
  case CUDA_R_8I:
  case CUDA_R_8F_E4M3:
  case CUDA_R_8F_E5M2:
    return 1;
  default:
    return 0;
  }
}

/* -- GEMM ---------------------------------------------------------------------- */

static const void *batch_at(const struct zmlir_operand *o, int64_t b) {
  if (o->array)
    return o->array[b];
  return (const char *)o->ptr + b * o->stride * (int64_t)zmlir_type_size(o->type);
}

/* A rows x cols matrix as packed f32 (leading dimension rows). */
static float *packed_f32(const void *src, cudaDataType_t type, int64_t rows, int64_t cols,
                         int64_t ld) {
  float *out = malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * sizeof *out);
  if (!out)
    return NULL;
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i)
      out[j * rows + i] = load(src, type, j * ld + i);
  return out;
}

static CBLAS_TRANSPOSE blas_op(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
}

/* GELU's tanh form, as cuBLASLt's epilogue computes it. */
static float gelu(float x) {
  const float s = 0.7978845608028654f; /* sqrt(2 / pi) */
  return 0.5f * x * (1.0f + tanhf(s * (x + 0.044715f * x * x * x)));
}

static void epilogue(const struct zmlir_gemm *g, int64_t b, float *d, int64_t ldd) {
  const void *bias = g->bias ? (const char *)g->bias +
                                   b * g->bias_stride * (int64_t)zmlir_type_size(g->bias_type)
                             : NULL;
  void *aux = g->aux.ptr ? (void *)batch_at(&g->aux, b) : NULL;
  for (int64_t j = 0; j < g->n; ++j) {
    for (int64_t i = 0; i < g->m; ++i) {
      float v = d[j * ldd + i];
      if ((g->epilogue & ZMLIR_EPI_BIAS) && bias)
        v += load(bias, g->bias_type, i);
      if ((g->epilogue & ZMLIR_EPI_AUX) && aux)
        store(aux, g->aux.type, j * g->aux.ld + i, v);
      if (g->epilogue & ZMLIR_EPI_GELU)
        v = gelu(v);
      if (g->epilogue & ZMLIR_EPI_RELU)
        v = v > 0 ? v : 0;
      d[j * ldd + i] = v;
    }
  }
}

/* The bias gradient of BGRADB: the sum of op(B) over k, one per column of D. */
static void bias_gradient_b(const struct zmlir_gemm *g, int64_t b, const float *bf, int64_t ldb) {
  void *bias = (char *)g->bias + b * g->bias_stride * (int64_t)zmlir_type_size(g->bias_type);
  for (int64_t j = 0; j < g->n; ++j) {
    float sum = 0;
    for (int64_t l = 0; l < g->k; ++l)
      sum += g->transb == CUBLAS_OP_N ? bf[j * ldb + l] : bf[l * ldb + j];
    store(bias, g->bias_type, j, sum);
  }
}

static void gemm_f64(struct zmlir_gemm *g) {
  double alpha = zmlir_scalar_value(&g->alpha, g->scale_type);
  double beta = zmlir_scalar_value(&g->beta, g->scale_type);
  for (int64_t b = 0; b < g->batch; ++b) {
    double *d = (double *)batch_at(&g->d, b);
    const double *c = batch_at(&g->c, b);
    if (beta != 0 && c != d)
      for (int64_t j = 0; j < g->n; ++j)
        memcpy(d + j * g->d.ld, c + j * g->c.ld, (size_t)g->m * sizeof *d);
    CBLAS(dgemm)(CblasColMajor, blas_op(g->transa), blas_op(g->transb), (int)g->m, (int)g->n,
                 (int)g->k, alpha, batch_at(&g->a, b), (int)g->a.ld, batch_at(&g->b, b),
                 (int)g->b.ld, beta, d, (int)g->d.ld);
  }
}

/* FP8's scaling after the product and epilogue: amax, then scale_d. */
static void scale_d(const struct zmlir_gemm *g, float *d, int64_t ldd) {
  float scale = g->scale_d ? *g->scale_d : 1.0f, amax = 0;
  for (int64_t j = 0; j < g->n; ++j)
    for (int64_t i = 0; i < g->m; ++i) {
      float v = d[j * ldd + i];
      amax = fabsf(v) > amax ? fabsf(v) : amax;
      d[j * ldd + i] = v * scale;
    }
  if (g->amax_d && amax > *g->amax_d)
    *g->amax_d = amax;
}

/* The SYCL route (ZMLIR_LIBRARY_ROUTE=sycl; docs/library-backends.md): the
 * f32 GEMMs whose operands are the application's own (no conversion) run on
 * oneMKL's SYCL BLAS (libzmlir_sycl_blas.so beside us, sycl/sycl_blas.cpp)
 * on the backend's own device, in our driver's context (its USM pointers
 * are the application's device pointers), inside the same stream-ordered
 * job; the rest of the job (epilogues, scaling) stays on the host, as does
 * every other routine. Asked for and unavailable, those GEMMs answer
 * CUBLAS_STATUS_NOT_SUPPORTED, said once on stderr. */
typedef int (*sycl_open_fn)(const char *backend, void *const *handles, size_t count, char *why,
                            size_t size);
typedef const char *(*sycl_device_fn)(void);
typedef int (*sycl_sgemm_fn)(int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                             const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                             float *c, int64_t ldc, char *why, size_t size);
static pthread_once_t sycl_once = PTHREAD_ONCE_INIT;
static int sycl_asked;
static sycl_sgemm_fn sycl_sgemm; /* set once the route is open */

static void sycl_open(void) {
  const char *asked = getenv("ZMLIR_LIBRARY_ROUTE");
  if (!asked || !asked[0] || strcmp(asked, "host") == 0)
    return;
  if (strcmp(asked, "sycl") != 0) {
    zmlir_log(1, "ZMLIR_LIBRARY_ROUTE=%s: not a route (host, sycl); the host route", asked);
    return;
  }
  sycl_asked = 1;
  char path[4096] = "", why[512] = "";
  Dl_info self;
  if (dladdr((void *)&sycl_open, &self) && self.dli_fname) {
    const char *slash = strrchr(self.dli_fname, '/');
    int dir = slash ? (int)(slash - self.dli_fname) : 0;
    snprintf(path, sizeof path, "%.*s%slibzmlir_sycl_blas.so", dir, self.dli_fname,
             slash ? "/" : "");
  }
  void *plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  const char *error = plugin ? NULL : dlerror();
  sycl_open_fn open = plugin ? (sycl_open_fn)dlsym(plugin, "zmlir_sycl_open") : NULL;
  sycl_device_fn device = plugin ? (sycl_device_fn)dlsym(plugin, "zmlir_sycl_device") : NULL;
  sycl_sgemm_fn sgemm = plugin ? (sycl_sgemm_fn)dlsym(plugin, "zmlir_sycl_sgemm") : NULL;
  const char *backend = "";
  void *handles[3] = {0};
  if (!plugin) {
    /* dlerror's last part (the path is ours, beside us). */
    const char *tail = error ? strrchr(error, ':') : NULL;
    snprintf(why, sizeof why, "no libzmlir_sycl_blas.so (%s; build it with ZMLIR_SYCL_ROOT set)",
             tail ? tail + 2 : "dlopen failed");
  } else if (!open || !device || !sgemm) {
    snprintf(why, sizeof why, "libzmlir_sycl_blas.so lacks zmlir_sycl_open, _device or _sgemm");
  } else if (zmlir_native_handles(&backend, handles, 3) != 0) {
    snprintf(why, sizeof why, "the %s backend gives no native handles",
             backend[0] ? backend : "driver's");
  } else if (open(backend, handles, 3, why, sizeof why) == 0) {
    sycl_sgemm = sgemm;
    zmlir_log(0, "f32 GEMMs on oneMKL's SYCL BLAS (%s, the %s backend's context)", device(),
              backend);
    return;
  }
  zmlir_log(1, "ZMLIR_LIBRARY_ROUTE=sycl: %s; f32 GEMMs return NOT_SUPPORTED", why);
}

/* An f32 GEMM of the job: on the SYCL route where asked and the operands
 * are the application's (`direct`), else (and should SYCL fail, said on
 * stderr) on the host BLAS. */
static void sgemm(const struct zmlir_gemm *g, int direct, float alpha, const float *a, int64_t lda,
                  const float *b, int64_t ldb, float beta, float *d, int64_t ldd) {
  char why[512] = "";
  if (direct && sycl_sgemm &&
      sycl_sgemm((int)g->transa, (int)g->transb, g->m, g->n, g->k, alpha, a, lda, b, ldb, beta, d,
                 ldd, why, sizeof why) == 0)
    return;
  if (direct && sycl_sgemm)
    zmlir_log(1, "ZMLIR_LIBRARY_ROUTE=sycl: %s; that GEMM ran on the host BLAS", why);
  CBLAS(sgemm)(CblasColMajor, blas_op(g->transa), blas_op(g->transb), (int)g->m, (int)g->n,
               (int)g->k, alpha, a, (int)lda, b, (int)ldb, beta, d, (int)ldd);
}

static void gemm_f32(struct zmlir_gemm *g) {
  float alpha = (float)zmlir_scalar_value(&g->alpha, g->scale_type);
  float beta = (float)zmlir_scalar_value(&g->beta, g->scale_type);
  alpha *= (g->scale_a ? *g->scale_a : 1.0f) * (g->scale_b ? *g->scale_b : 1.0f);
  beta *= g->scale_c ? *g->scale_c : 1.0f;
  if (g->amax_d)
    *g->amax_d = 0; /* over every batch */
  int64_t arows = g->transa == CUBLAS_OP_N ? g->m : g->k;
  int64_t acols = g->transa == CUBLAS_OP_N ? g->k : g->m;
  int64_t brows = g->transb == CUBLAS_OP_N ? g->k : g->n;
  int64_t bcols = g->transb == CUBLAS_OP_N ? g->n : g->k;
  for (int64_t b = 0; b < g->batch; ++b) {
    const void *a = batch_at(&g->a, b), *bm = batch_at(&g->b, b), *c = batch_at(&g->c, b);
    void *d = (void *)batch_at(&g->d, b);
    float *af = NULL, *bf = NULL, *t = NULL;
    const float *ap = a, *bp = bm;
    int64_t lda = g->a.ld, ldb = g->b.ld;
    if (g->a.type != CUDA_R_32F) {
      ap = af = packed_f32(a, g->a.type, arows, acols, g->a.ld);
      lda = arows > 1 ? arows : 1;
    }
    if (g->b.type != CUDA_R_32F) {
      bp = bf = packed_f32(bm, g->b.type, brows, bcols, g->b.ld);
      ldb = brows > 1 ? brows : 1;
    }
    float *dp = d;
    int64_t ldd = g->d.ld;
    if (g->d.type != CUDA_R_32F) {
      /* Computed in f32, rounded once into D. */
      dp = t = beta != 0 ? packed_f32(c, g->c.type, g->m, g->n, g->c.ld)
                         : calloc((size_t)(g->m * g->n > 0 ? g->m * g->n : 1), sizeof *t);
      ldd = g->m > 1 ? g->m : 1;
    } else if (beta != 0 && c != d) {
      for (int64_t j = 0; j < g->n; ++j)
        for (int64_t i = 0; i < g->m; ++i)
          dp[j * ldd + i] = load(c, g->c.type, j * g->c.ld + i);
    }
    if ((g->a.type != CUDA_R_32F && !af) || (g->b.type != CUDA_R_32F && !bf) ||
        (g->d.type != CUDA_R_32F && !t)) {
      free(af), free(bf), free(t);
      continue; /* out of host memory: D is left as it was */
    }
    sgemm(g, !af && !bf && !t, alpha, ap, lda, bp, ldb, beta, dp, ldd);
    if (g->epilogue & ~ZMLIR_EPI_BGRADB)
      epilogue(g, b, dp, ldd);
    if ((g->epilogue & ZMLIR_EPI_BGRADB) && g->bias)
      bias_gradient_b(g, b, bp, ldb);
    if (g->scale_d || g->amax_d)
      scale_d(g, dp, ldd);
    if (t) {
      for (int64_t j = 0; j < g->n; ++j)
        for (int64_t i = 0; i < g->m; ++i)
          store(d, g->d.type, j * g->d.ld + i, t[j * ldd + i]);
    }
    free(af), free(bf), free(t);
  }
}

static int is_complex(cudaDataType_t type) {
  return type == CUDA_C_32F || type == CUDA_C_64F;
}

static CBLAS_TRANSPOSE blas_op_complex(cublasOperation_t op) {
  return op == CUBLAS_OP_N ? CblasNoTrans : op == CUBLAS_OP_T ? CblasTrans : CblasConjTrans;
}

/* Complex GEMMs: every operand and the scalars of one type (submit checks). */
static void gemm_complex(struct zmlir_gemm *g) {
  int single = g->d.type == CUDA_C_32F;
  size_t elem = zmlir_type_size(g->d.type);
  const void *alpha = g->alpha.at, *beta = g->beta.at;
  int beta_zero = single ? ((const float *)beta)[0] == 0 && ((const float *)beta)[1] == 0
                         : ((const double *)beta)[0] == 0 && ((const double *)beta)[1] == 0;
  for (int64_t b = 0; b < g->batch; ++b) {
    char *d = (char *)batch_at(&g->d, b);
    const char *c = batch_at(&g->c, b);
    if (!beta_zero && c != d)
      for (int64_t j = 0; j < g->n; ++j)
        memcpy(d + j * g->d.ld * elem, c + j * g->c.ld * elem, (size_t)g->m * elem);
    if (single)
      CBLAS(cgemm)(CblasColMajor, blas_op_complex(g->transa), blas_op_complex(g->transb), (int)g->m,
                   (int)g->n, (int)g->k, alpha, batch_at(&g->a, b), (int)g->a.ld,
                   batch_at(&g->b, b), (int)g->b.ld, beta, d, (int)g->d.ld);
    else
      CBLAS(zgemm)(CblasColMajor, blas_op_complex(g->transa), blas_op_complex(g->transb), (int)g->m,
                   (int)g->n, (int)g->k, alpha, batch_at(&g->a, b), (int)g->a.ld,
                   batch_at(&g->b, b), (int)g->b.ld, beta, d, (int)g->d.ld);
  }
}

/* int8 GEMMs: A and B R_8I, sums exact in 64 bits; with R_32I scalars and
 * C, D R_32I in int32 arithmetic (wrapping, as the GPU's), with R_32F
 * scalars and C, D R_32F in f32. */
static int gemm_i8_types(const struct zmlir_gemm *g) {
  cudaDataType_t out = g->scale_type == CUDA_R_32I ? CUDA_R_32I : CUDA_R_32F;
  return g->a.type == CUDA_R_8I && g->b.type == CUDA_R_8I && g->c.type == out && g->d.type == out &&
         (g->scale_type == CUDA_R_32I || g->scale_type == CUDA_R_32F) && !g->epilogue &&
         !g->scale_a && !g->scale_b && !g->scale_c && !g->scale_d && !g->amax_d;
}

static void gemm_i8(struct zmlir_gemm *g) {
  int integer = g->scale_type == CUDA_R_32I;
  int32_t ialpha = integer ? *(const int32_t *)g->alpha.at : 0;
  int32_t ibeta = integer ? *(const int32_t *)g->beta.at : 0;
  float falpha = integer ? 0 : *(const float *)g->alpha.at;
  float fbeta = integer ? 0 : *(const float *)g->beta.at;
  for (int64_t b = 0; b < g->batch; ++b) {
    const int8_t *a = batch_at(&g->a, b), *bm = batch_at(&g->b, b);
    const void *c = batch_at(&g->c, b);
    void *d = (void *)batch_at(&g->d, b);
    for (int64_t j = 0; j < g->n; ++j)
      for (int64_t i = 0; i < g->m; ++i) {
        int64_t sum = 0;
        for (int64_t l = 0; l < g->k; ++l)
          sum += (int64_t)a[g->transa == CUBLAS_OP_N ? l * g->a.ld + i : i * g->a.ld + l] *
                 bm[g->transb == CUBLAS_OP_N ? j * g->b.ld + l : l * g->b.ld + j];
        if (integer) {
          uint32_t v = (uint32_t)ialpha * (uint32_t)sum;
          if (ibeta)
            v += (uint32_t)ibeta * (uint32_t)((const int32_t *)c)[j * g->c.ld + i];
          ((int32_t *)d)[j * g->d.ld + i] = (int32_t)v;
        } else {
          float v = falpha * (float)sum;
          if (fbeta != 0)
            v += fbeta * ((const float *)c)[j * g->c.ld + i];
          ((float *)d)[j * g->d.ld + i] = v;
        }
      }
  }
}

static void gemm_run(struct zmlir_job *job) {
  struct zmlir_gemm *g = (struct zmlir_gemm *)job;
  if (g->m <= 0 || g->n <= 0)
    return;
  if (g->a.type == CUDA_R_8I)
    gemm_i8(g);
  else if (is_complex(g->d.type))
    gemm_complex(g);
  else if (g->d.type == CUDA_R_64F)
    gemm_f64(g);
  else
    gemm_f32(g);
}

cublasStatus_t zmlir_gemm_submit(CUstream stream, struct zmlir_gemm *g) {
  int f64 = g->d.type == CUDA_R_64F;
  int cplx = is_complex(g->d.type);
  const struct zmlir_operand *operands[] = {&g->a, &g->b, &g->c, &g->d};
  int i8 = g->a.type == CUDA_R_8I || g->b.type == CUDA_R_8I;
  if (i8 && !gemm_i8_types(g)) {
    free(g);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  for (size_t i = 0; i < 4 && !i8; ++i) {
    cudaDataType_t type = operands[i]->type;
    /* Complex: one type throughout, as the host BLAS computes it, no epilogue. */
    int ok = cplx ? type == g->d.type && g->scale_type == type && !g->epilogue
                  : (zmlir_type_supported(type) || (g->fp8 && zmlir_type_fp8(type))) &&
                        (type == CUDA_R_64F) == f64;
    if (!ok) {
      free(g);
      return CUBLAS_STATUS_NOT_SUPPORTED;
    }
  }
  if (g->m == 0 || g->n == 0 || g->batch == 0) {
    free(g);
    return CUBLAS_STATUS_SUCCESS;
  }
  pthread_once(&sycl_once, sycl_open);
  if (sycl_asked && !sycl_sgemm && !i8 && !cplx && !f64 && g->a.type == CUDA_R_32F &&
      g->b.type == CUDA_R_32F && g->d.type == CUDA_R_32F) {
    free(g);
    return CUBLAS_STATUS_NOT_SUPPORTED; /* sycl_open said why */
  }
  g->job.run = gemm_run;
  return zmlir_submit(stream, &g->job, 0);
}
