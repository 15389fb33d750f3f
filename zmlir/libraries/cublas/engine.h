/* The host route's work: jobs run in stream order (cuLaunchHostFunc) on the
 * host BLAS, and the GEMM every cuBLAS and cuBLASLt entry point comes down to. */
#ifndef ZMLIR_CUBLAS_ENGINE_H
#define ZMLIR_CUBLAS_ENGINE_H

#include <cublas_v2.h>
#include <cuda.h>
#include <stdint.h>

/* Our implementation of an exported function: type-checked against
 * NVIDIA's prototype (ABI_CHECK), found by build.py by its symbol's prefix. */
#define IMPL(name) zmlir_impl_##name
#define ABI_CHECK(name) ABI_CHECK_AS(IMPL(name), name)
#define ABI_CHECK_AS(ours, name)                                                                   \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&ours), __typeof__(&name)),               \
                 #name ": not NVIDIA's signature")
/* Ours on every route but NVIDIA's: needs no device. */
#define IMPL_ALWAYS(name) zmlir_always_##name
#define ABI_CHECK_ALWAYS(name) ABI_CHECK_AS(IMPL_ALWAYS(name), name)
/* Our wrapper of NVIDIA's function on the NVIDIA route. */
#define NVIDIA_WRAPPER(name) zmlir_forward_##name

/* A unit of work, run once the work already in its stream is done. */
struct zmlir_job {
  void (*run)(struct zmlir_job *);
  int keep; /* recorded by a stream capture: a graph may replay it */
};

/* Enqueues `job` (heap-allocated, freed after it runs unless captured) in
 * `stream`; with `wait`, returns once it ran (a result read by the host). */
cublasStatus_t zmlir_submit(CUstream stream, struct zmlir_job *job, int wait);

/* A scalar argument: its value copied at the call (host pointer mode), or
 * read when the job runs (device pointer mode), as NVIDIA's kernels do. */
struct zmlir_scalar {
  unsigned char bytes[16];
  const void *at;
};
void zmlir_scalar_set(struct zmlir_scalar *s, const void *pointer, size_t size, int device);
double zmlir_scalar_value(const struct zmlir_scalar *s, cudaDataType_t type);

/* One operand of a GEMM: column-major, `ld` elements between columns, batch
 * `b` at `ptr + b * stride` elements, or at `array[b]` when `array` is set. */
struct zmlir_operand {
  const void *ptr;
  const void *const *array;
  cudaDataType_t type;
  int64_t ld, stride;
};

enum zmlir_epilogue_flags {
  ZMLIR_EPI_BIAS = 1,
  ZMLIR_EPI_GELU = 2,
  ZMLIR_EPI_RELU = 4,
  ZMLIR_EPI_AUX = 8, /* the value before GELU/ReLU to the aux matrix */
  ZMLIR_EPI_BGRADB = 16,
};

/* D = epilogue(alpha op(A) op(B) + beta C) for each batch. */
struct zmlir_gemm {
  struct zmlir_job job;
  cublasOperation_t transa, transb;
  int64_t m, n, k, batch;
  struct zmlir_operand a, b, c, d;
  cudaDataType_t scale_type;
  struct zmlir_scalar alpha, beta;
  int epilogue; /* zmlir_epilogue_flags */
  const void *bias;
  cudaDataType_t bias_type;
  int64_t bias_stride;
  struct zmlir_operand aux;
};

/* Checks what the host BLAS can compute (CUBLAS_STATUS_NOT_SUPPORTED if not),
 * then enqueues it. */
cublasStatus_t zmlir_gemm_submit(CUstream stream, struct zmlir_gemm *gemm);
int zmlir_type_supported(cudaDataType_t type);
size_t zmlir_type_size(cudaDataType_t type);

const char *zmlir_status_name(cublasStatus_t status);
const char *zmlir_status_string(cublasStatus_t status);

#endif
