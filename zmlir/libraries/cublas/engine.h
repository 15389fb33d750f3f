/* The host route's work: jobs run in stream order (cuLaunchHostFunc) on the
 * host BLAS, and the GEMM every cuBLAS and cuBLASLt entry point comes down to. */
#ifndef ZMLIR_CUBLAS_ENGINE_H
#define ZMLIR_CUBLAS_ENGINE_H

#include "route.h"

#include <cublas_v2.h>
#include <cuda.h>
#include <stdint.h>

/* zmlir_enqueue (route.h), in cuBLAS's statuses. */
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
  /* cuBLASLt's FP8 scaling (device floats, read when the job runs; NULL: 1):
   * D = scale_d * epilogue(alpha scale_a scale_b op(A) op(B) + beta scale_c C),
   * amax_d the largest magnitude before scale_d. `fp8`: the operands may be
   * E4M3 or E5M2 (cuBLAS's own entry points take none). */
  const float *scale_a, *scale_b, *scale_c, *scale_d;
  float *amax_d;
  int fp8;
};

/* Checks what the host BLAS can compute (CUBLAS_STATUS_NOT_SUPPORTED if not),
 * then enqueues it. */
cublasStatus_t zmlir_gemm_submit(CUstream stream, struct zmlir_gemm *gemm);
int zmlir_type_supported(cudaDataType_t type);
int zmlir_type_fp8(cudaDataType_t type);
size_t zmlir_type_size(cudaDataType_t type);

/* cuBLAS's handle (cublas.c), for the routines of blas.c. */
CUstream zmlir_handle_stream(cublasHandle_t handle);
cublasPointerMode_t zmlir_handle_pointer_mode(cublasHandle_t handle);
/* The scalars' type of a GEMM with compute type `compute` and C of `ctype`
 * (0: none we compute). */
int zmlir_scale_type(cublasComputeType_t compute, cudaDataType_t ctype, cudaDataType_t *scale);

const char *zmlir_status_name(cublasStatus_t status);
const char *zmlir_status_string(cublasStatus_t status);

#endif
