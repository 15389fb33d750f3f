/* libcublas.so.13 on the host route: NVIDIA's C ABI (cublas_api.h) over the
 * host BLAS, column-major with NVIDIA's transposes, leading dimensions,
 * argument checks and pointer modes. Calls are ordered in the handle's stream
 * (engine.c); route.c decides whether these functions are the ones called. */
#include "engine.h"
#include "route.h"

#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <cublasXt.h>

#define ZMLIR_CAT2(a, b) a##b
#define ZMLIR_CAT(a, b) ZMLIR_CAT2(a, b)
#define CBLAS(name) ZMLIR_CAT(ZMLIR_BLAS_PREFIX, ZMLIR_CAT(cblas_, name))

struct cublasContext {
  CUstream stream;
  cublasPointerMode_t pointer_mode;
  cublasMath_t math_mode;
  cublasAtomicsMode_t atomics_mode;
  void *workspace;
  size_t workspace_bytes;
  int sm_count_target;
  cublasEmulationStrategy_t emulation;
  int environment_mode;
};

#define CHECK_HANDLE(h)                                                                            \
  do {                                                                                             \
    if (!(h))                                                                                      \
      return CUBLAS_STATUS_NOT_INITIALIZED;                                                        \
  } while (0)

/* -- the handle ----------------------------------------------------------------- */

CUstream zmlir_handle_stream(cublasHandle_t handle) {
  return handle->stream;
}

cublasPointerMode_t zmlir_handle_pointer_mode(cublasHandle_t handle) {
  return handle->pointer_mode;
}

cublasStatus_t IMPL(cublasCreate_v2)(cublasHandle_t *handle) {
  if (!handle)
    return CUBLAS_STATUS_INVALID_VALUE;
  struct cublasContext *h = calloc(1, sizeof *h);
  if (!h)
    return CUBLAS_STATUS_ALLOC_FAILED;
  h->pointer_mode = CUBLAS_POINTER_MODE_HOST;
  h->math_mode = CUBLAS_DEFAULT_MATH;
  *handle = h;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasCreate_v2);

cublasStatus_t IMPL(cublasDestroy_v2)(cublasHandle_t handle) {
  CHECK_HANDLE(handle);
  /* NVIDIA's synchronises the device before it frees the handle. */
  cuStreamSynchronize(handle->stream);
  free(handle);
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasDestroy_v2);

cublasStatus_t IMPL(cublasSetStream_v2)(cublasHandle_t handle, cudaStream_t stream) {
  CHECK_HANDLE(handle);
  handle->stream = (CUstream)stream;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasSetStream_v2);

cublasStatus_t IMPL(cublasGetStream_v2)(cublasHandle_t handle, cudaStream_t *stream) {
  CHECK_HANDLE(handle);
  if (!stream)
    return CUBLAS_STATUS_INVALID_VALUE;
  *stream = (cudaStream_t)handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasGetStream_v2);

cublasStatus_t IMPL(cublasSetPointerMode_v2)(cublasHandle_t handle, cublasPointerMode_t mode) {
  CHECK_HANDLE(handle);
  if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
    return CUBLAS_STATUS_INVALID_VALUE;
  handle->pointer_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasSetPointerMode_v2);

cublasStatus_t IMPL(cublasGetPointerMode_v2)(cublasHandle_t handle, cublasPointerMode_t *mode) {
  CHECK_HANDLE(handle);
  if (!mode)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->pointer_mode;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasGetPointerMode_v2);

cublasStatus_t IMPL(cublasSetMathMode)(cublasHandle_t handle, cublasMath_t mode) {
  CHECK_HANDLE(handle);
  /* Every mode computes in f32 or f64 here: TF32 and reduced-precision
   * reductions are allowances, not requirements. */
  handle->math_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasSetMathMode);

cublasStatus_t IMPL(cublasGetMathMode)(cublasHandle_t handle, cublasMath_t *mode) {
  CHECK_HANDLE(handle);
  if (!mode)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->math_mode;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasGetMathMode);

cublasStatus_t IMPL(cublasSetAtomicsMode)(cublasHandle_t handle, cublasAtomicsMode_t mode) {
  CHECK_HANDLE(handle);
  handle->atomics_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasSetAtomicsMode);

cublasStatus_t IMPL(cublasGetAtomicsMode)(cublasHandle_t handle, cublasAtomicsMode_t *mode) {
  CHECK_HANDLE(handle);
  if (!mode)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->atomics_mode;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasGetAtomicsMode);

cublasStatus_t IMPL(cublasSetWorkspace_v2)(cublasHandle_t handle, void *workspace, size_t bytes) {
  CHECK_HANDLE(handle);
  if (bytes && !workspace)
    return CUBLAS_STATUS_INVALID_VALUE;
  /* The host BLAS keeps its own buffers. */
  handle->workspace = workspace;
  handle->workspace_bytes = bytes;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasSetWorkspace_v2);

cublasStatus_t IMPL(cublasSetSmCountTarget)(cublasHandle_t handle, int count) {
  CHECK_HANDLE(handle);
  if (count < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  handle->sm_count_target = count;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasSetSmCountTarget);

cublasStatus_t IMPL(cublasGetSmCountTarget)(cublasHandle_t handle, int *count) {
  CHECK_HANDLE(handle);
  if (!count)
    return CUBLAS_STATUS_INVALID_VALUE;
  *count = handle->sm_count_target;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasGetSmCountTarget);

/* cuSOLVER sets this on the cuBLAS handles it makes; NVIDIA's header has no
   prototype. Its libcublas.so.13 keeps a mode of 0 or 1 in the handle and
   answers INVALID_VALUE for any other (and for a null pointer to read it
   into): so does ours, which reads no environment either way. */
cublasStatus_t IMPL(cublasSetEnvironmentMode)(cublasHandle_t handle, int mode);
cublasStatus_t IMPL(cublasSetEnvironmentMode)(cublasHandle_t handle, int mode) {
  CHECK_HANDLE(handle);
  if ((unsigned)mode > 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  handle->environment_mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t IMPL(cublasGetEnvironmentMode)(cublasHandle_t handle, int *mode);
cublasStatus_t IMPL(cublasGetEnvironmentMode)(cublasHandle_t handle, int *mode) {
  CHECK_HANDLE(handle);
  if (!mode)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->environment_mode;
  return CUBLAS_STATUS_SUCCESS;
}

/* BF16x9 emulation of f32 GEMMs is NVIDIA's way to speed; the host BLAS
 * computes in f32 whatever the strategy. */
cublasStatus_t IMPL(cublasSetEmulationStrategy)(cublasHandle_t handle,
                                                cublasEmulationStrategy_t strategy) {
  CHECK_HANDLE(handle);
  if (strategy != CUBLAS_EMULATION_STRATEGY_DEFAULT &&
      strategy != CUBLAS_EMULATION_STRATEGY_PERFORMANT &&
      strategy != CUBLAS_EMULATION_STRATEGY_EAGER)
    return CUBLAS_STATUS_INVALID_VALUE;
  handle->emulation = strategy;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasSetEmulationStrategy);

cublasStatus_t IMPL(cublasGetEmulationStrategy)(cublasHandle_t handle,
                                                cublasEmulationStrategy_t *strategy) {
  CHECK_HANDLE(handle);
  if (!strategy)
    return CUBLAS_STATUS_INVALID_VALUE;
  *strategy = handle->emulation;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasGetEmulationStrategy);

/* -- versions and status strings (every route but NVIDIA's) ---------------------- */

cublasStatus_t IMPL_ALWAYS(cublasGetVersion_v2)(cublasHandle_t handle, int *version) {
  (void)handle;
  if (!version)
    return CUBLAS_STATUS_INVALID_VALUE;
  *version = CUBLAS_VERSION;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK_ALWAYS(cublasGetVersion_v2);

cublasStatus_t IMPL_ALWAYS(cublasGetProperty)(libraryPropertyType type, int *value) {
  if (!value)
    return CUBLAS_STATUS_INVALID_VALUE;
  switch (type) {
  case MAJOR_VERSION:
    *value = CUBLAS_VER_MAJOR;
    return CUBLAS_STATUS_SUCCESS;
  case MINOR_VERSION:
    *value = CUBLAS_VER_MINOR;
    return CUBLAS_STATUS_SUCCESS;
  case PATCH_LEVEL:
    *value = CUBLAS_VER_PATCH;
    return CUBLAS_STATUS_SUCCESS;
  default:
    return CUBLAS_STATUS_INVALID_VALUE;
  }
}
ABI_CHECK_ALWAYS(cublasGetProperty);

size_t IMPL_ALWAYS(cublasGetCudartVersion)(void) {
  return CUDART_VERSION;
}
ABI_CHECK_ALWAYS(cublasGetCudartVersion);

const char *IMPL_ALWAYS(cublasGetStatusName)(cublasStatus_t status) {
  return zmlir_status_name(status);
}
ABI_CHECK_ALWAYS(cublasGetStatusName);

const char *IMPL_ALWAYS(cublasGetStatusString)(cublasStatus_t status) {
  return zmlir_status_string(status);
}
ABI_CHECK_ALWAYS(cublasGetStatusString);

/* -- host <-> device copies (the driver's, in its order) --------------------------- */

static cublasStatus_t copy_2d(const void *src, int64_t src_pitch, CUmemorytype src_kind, void *dst,
                              int64_t dst_pitch, CUmemorytype dst_kind, int64_t width,
                              int64_t height, CUstream stream, int async) {
  if (width == 0 || height == 0)
    return CUBLAS_STATUS_SUCCESS;
  CUDA_MEMCPY2D copy;
  memset(&copy, 0, sizeof copy);
  copy.srcMemoryType = src_kind;
  copy.dstMemoryType = dst_kind;
  if (src_kind == CU_MEMORYTYPE_HOST)
    copy.srcHost = src;
  else
    copy.srcDevice = (CUdeviceptr)src;
  if (dst_kind == CU_MEMORYTYPE_HOST)
    copy.dstHost = dst;
  else
    copy.dstDevice = (CUdeviceptr)dst;
  copy.srcPitch = (size_t)src_pitch;
  copy.dstPitch = (size_t)dst_pitch;
  copy.WidthInBytes = (size_t)width;
  copy.Height = (size_t)height;
  CUresult r = async ? cuMemcpy2DAsync(&copy, stream) : cuMemcpy2D(&copy);
  return r == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_MAPPING_ERROR;
}

static cublasStatus_t copy_vector(int n, int elem, const void *x, int incx, void *y, int incy,
                                  int to_device, CUstream stream, int async) {
  if (n < 0 || elem <= 0 || incx <= 0 || incy <= 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  CUmemorytype host = CU_MEMORYTYPE_HOST, device = CU_MEMORYTYPE_DEVICE;
  CUmemorytype from = to_device ? host : device, to = to_device ? device : host;
  if (incx == 1 && incy == 1) { /* one row of n elements, not n rows of one */
    int64_t bytes = (int64_t)n * elem;
    return copy_2d(x, bytes, from, y, bytes, to, bytes, n > 0, stream, async);
  }
  return copy_2d(x, (int64_t)incx * elem, from, y, (int64_t)incy * elem, to, elem, n, stream,
                 async);
}

static cublasStatus_t copy_matrix(int rows, int cols, int elem, const void *a, int lda, void *b,
                                  int ldb, int to_device, CUstream stream, int async) {
  if (rows < 0 || cols < 0 || elem <= 0 || lda <= 0 || ldb <= 0 || lda < rows || ldb < rows)
    return CUBLAS_STATUS_INVALID_VALUE;
  CUmemorytype host = CU_MEMORYTYPE_HOST, device = CU_MEMORYTYPE_DEVICE;
  return copy_2d(a, (int64_t)lda * elem, to_device ? host : device, b, (int64_t)ldb * elem,
                 to_device ? device : host, (int64_t)rows * elem, cols, stream, async);
}

cublasStatus_t IMPL(cublasSetVector)(int n, int elem, const void *x, int incx, void *y, int incy) {
  return copy_vector(n, elem, x, incx, y, incy, 1, NULL, 0);
}
ABI_CHECK(cublasSetVector);

cublasStatus_t IMPL(cublasGetVector)(int n, int elem, const void *x, int incx, void *y, int incy) {
  return copy_vector(n, elem, x, incx, y, incy, 0, NULL, 0);
}
ABI_CHECK(cublasGetVector);

cublasStatus_t IMPL(cublasSetVectorAsync)(int n, int elem, const void *x, int incx, void *y,
                                          int incy, cudaStream_t stream) {
  return copy_vector(n, elem, x, incx, y, incy, 1, (CUstream)stream, 1);
}
ABI_CHECK(cublasSetVectorAsync);

cublasStatus_t IMPL(cublasGetVectorAsync)(int n, int elem, const void *x, int incx, void *y,
                                          int incy, cudaStream_t stream) {
  return copy_vector(n, elem, x, incx, y, incy, 0, (CUstream)stream, 1);
}
ABI_CHECK(cublasGetVectorAsync);

cublasStatus_t IMPL(cublasSetMatrix)(int rows, int cols, int elem, const void *a, int lda, void *b,
                                     int ldb) {
  return copy_matrix(rows, cols, elem, a, lda, b, ldb, 1, NULL, 0);
}
ABI_CHECK(cublasSetMatrix);

cublasStatus_t IMPL(cublasGetMatrix)(int rows, int cols, int elem, const void *a, int lda, void *b,
                                     int ldb) {
  return copy_matrix(rows, cols, elem, a, lda, b, ldb, 0, NULL, 0);
}
ABI_CHECK(cublasGetMatrix);

cublasStatus_t IMPL(cublasSetMatrixAsync)(int rows, int cols, int elem, const void *a, int lda,
                                          void *b, int ldb, cudaStream_t stream) {
  return copy_matrix(rows, cols, elem, a, lda, b, ldb, 1, (CUstream)stream, 1);
}
ABI_CHECK(cublasSetMatrixAsync);

cublasStatus_t IMPL(cublasGetMatrixAsync)(int rows, int cols, int elem, const void *a, int lda,
                                          void *b, int ldb, cudaStream_t stream) {
  return copy_matrix(rows, cols, elem, a, lda, b, ldb, 0, (CUstream)stream, 1);
}
ABI_CHECK(cublasGetMatrixAsync);

/* -- GEMM ------------------------------------------------------------------------ */

static int valid_op(cublasOperation_t op) {
  return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static int64_t at_least_1(int64_t v) {
  return v > 1 ? v : 1;
}

struct gemm_args {
  cublasOperation_t transa, transb;
  int64_t m, n, k, batch;
  const void *alpha, *beta;
  cudaDataType_t scale_type;
  struct zmlir_operand a, b, c;
};

/* NVIDIA's checks, then the job: C = alpha op(A) op(B) + beta C. */
static cublasStatus_t gemm(cublasHandle_t handle, const struct gemm_args *args) {
  CHECK_HANDLE(handle);
  if (!valid_op(args->transa) || !valid_op(args->transb) || args->m < 0 || args->n < 0 ||
      args->k < 0 || args->batch < 0 ||
      args->a.ld < at_least_1(args->transa == CUBLAS_OP_N ? args->m : args->k) ||
      args->b.ld < at_least_1(args->transb == CUBLAS_OP_N ? args->k : args->n) ||
      args->c.ld < at_least_1(args->m))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (args->m == 0 || args->n == 0 || args->batch == 0)
    return CUBLAS_STATUS_SUCCESS;
  if (!args->alpha || !args->beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  struct zmlir_gemm *g = calloc(1, sizeof *g);
  if (!g)
    return CUBLAS_STATUS_ALLOC_FAILED;
  g->transa = args->transa;
  g->transb = args->transb;
  g->m = args->m, g->n = args->n, g->k = args->k, g->batch = args->batch;
  g->a = args->a, g->b = args->b, g->c = args->c, g->d = args->c;
  g->scale_type = args->scale_type;
  int device = handle->pointer_mode == CUBLAS_POINTER_MODE_DEVICE;
  size_t size = zmlir_type_size(args->scale_type);
  zmlir_scalar_set(&g->alpha, args->alpha, size, device);
  zmlir_scalar_set(&g->beta, args->beta, size, device);
  return zmlir_gemm_submit(handle->stream, g);
}

static struct zmlir_operand operand(const void *ptr, cudaDataType_t type, int64_t ld,
                                    int64_t stride) {
  struct zmlir_operand o = {ptr, NULL, type, ld, stride};
  return o;
}

static struct zmlir_operand batched(const void *const *array, cudaDataType_t type, int64_t ld) {
  struct zmlir_operand o = {NULL, array, type, ld, 0};
  return o;
}

/* The scalars' type of a compute type (cublasComputeType_t), real. */
static int real_scale_type_of(cublasComputeType_t compute, cudaDataType_t *scale) {
  switch (compute) {
  case CUBLAS_COMPUTE_32F:
  case CUBLAS_COMPUTE_32F_PEDANTIC:
  case CUBLAS_COMPUTE_32F_FAST_16F:
  case CUBLAS_COMPUTE_32F_FAST_16BF:
  case CUBLAS_COMPUTE_32F_FAST_TF32:
  case CUBLAS_COMPUTE_32F_EMULATED_16BFX9: /* emulates f32: f32 here */
    *scale = CUDA_R_32F;
    return 1;
  case CUBLAS_COMPUTE_64F:
  case CUBLAS_COMPUTE_64F_PEDANTIC:
    *scale = CUDA_R_64F;
    return 1;
  case CUBLAS_COMPUTE_16F:
  case CUBLAS_COMPUTE_16F_PEDANTIC:
    *scale = CUDA_R_16F; /* computed in f32 here: more precise than NVIDIA's f16 */
    return 1;
  case CUBLAS_COMPUTE_32I:
  case CUBLAS_COMPUTE_32I_PEDANTIC:
    *scale = CUDA_R_32I; /* int8 x int8 -> int32 (engine.c) */
    return 1;
  default:
    return 0;
  }
}

/* The scalars' type with C of `ctype`: complex where C is (CUDA_C_32F with a
 * 32-bit compute type, CUDA_C_64F with a 64-bit one). */
static int scale_type_of(cublasComputeType_t compute, cudaDataType_t ctype, cudaDataType_t *scale) {
  if (!real_scale_type_of(compute, scale))
    return 0;
  if (ctype == CUDA_C_32F || ctype == CUDA_C_64F) {
    if (*scale != (ctype == CUDA_C_32F ? CUDA_R_32F : CUDA_R_64F))
      return 0;
    *scale = ctype;
  }
  return 1;
}

int zmlir_scale_type(cublasComputeType_t compute, cudaDataType_t ctype, cudaDataType_t *scale) {
  return scale_type_of(compute, ctype, scale);
}

#define GEMM_PARAMS(T)                                                                             \
  cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,  \
      const T *alpha, const T *A, int lda, const T *B, int ldb, const T *beta, T *C, int ldc

#define GEMM_BODY(TYPE, SCALE)                                                                     \
  struct gemm_args args = {transa,                                                                 \
                           transb,                                                                 \
                           m,                                                                      \
                           n,                                                                      \
                           k,                                                                      \
                           1,                                                                      \
                           alpha,                                                                  \
                           beta,                                                                   \
                           SCALE,                                                                  \
                           operand(A, TYPE, lda, 0),                                               \
                           operand(B, TYPE, ldb, 0),                                               \
                           operand(C, TYPE, ldc, 0)};                                              \
  return gemm(handle, &args)

cublasStatus_t IMPL(cublasSgemm_v2)(GEMM_PARAMS(float)) {
  GEMM_BODY(CUDA_R_32F, CUDA_R_32F);
}
ABI_CHECK(cublasSgemm_v2);

cublasStatus_t IMPL(cublasDgemm_v2)(GEMM_PARAMS(double)) {
  GEMM_BODY(CUDA_R_64F, CUDA_R_64F);
}
ABI_CHECK(cublasDgemm_v2);

cublasStatus_t IMPL(cublasCgemm_v2)(GEMM_PARAMS(cuComplex)) {
  GEMM_BODY(CUDA_C_32F, CUDA_C_32F);
}
ABI_CHECK(cublasCgemm_v2);

/* The 3M algorithm is a way to the same product: the host BLAS's. */
cublasStatus_t IMPL(cublasCgemm3m)(GEMM_PARAMS(cuComplex)) {
  GEMM_BODY(CUDA_C_32F, CUDA_C_32F);
}
ABI_CHECK(cublasCgemm3m);

cublasStatus_t IMPL(cublasZgemm_v2)(GEMM_PARAMS(cuDoubleComplex)) {
  GEMM_BODY(CUDA_C_64F, CUDA_C_64F);
}
ABI_CHECK(cublasZgemm_v2);

cublasStatus_t IMPL(cublasZgemm3m)(GEMM_PARAMS(cuDoubleComplex)) {
  GEMM_BODY(CUDA_C_64F, CUDA_C_64F);
}
ABI_CHECK(cublasZgemm3m);

/* cublas_api.h declares the __half functions for C++ only: their pointers to
 * __half are pointers to 16 bits here (the same ABI), checked by our tests. */
typedef uint16_t half_bits;

cublasStatus_t IMPL(cublasHgemm)(GEMM_PARAMS(half_bits)) {
  GEMM_BODY(CUDA_R_16F, CUDA_R_16F);
}

#define STRIDED_PARAMS(T)                                                                          \
  cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,  \
      const T *alpha, const T *A, int lda, long long stride_a, const T *B, int ldb,                \
      long long stride_b, const T *beta, T *C, int ldc, long long stride_c, int batch

#define STRIDED_BODY(TYPE)                                                                         \
  struct gemm_args args = {transa,                                                                 \
                           transb,                                                                 \
                           m,                                                                      \
                           n,                                                                      \
                           k,                                                                      \
                           batch,                                                                  \
                           alpha,                                                                  \
                           beta,                                                                   \
                           TYPE,                                                                   \
                           operand(A, TYPE, lda, stride_a),                                        \
                           operand(B, TYPE, ldb, stride_b),                                        \
                           operand(C, TYPE, ldc, stride_c)};                                       \
  return gemm(handle, &args)

cublasStatus_t IMPL(cublasSgemmStridedBatched)(STRIDED_PARAMS(float)) {
  STRIDED_BODY(CUDA_R_32F);
}
ABI_CHECK(cublasSgemmStridedBatched);

cublasStatus_t IMPL(cublasDgemmStridedBatched)(STRIDED_PARAMS(double)) {
  STRIDED_BODY(CUDA_R_64F);
}
ABI_CHECK(cublasDgemmStridedBatched);

cublasStatus_t IMPL(cublasCgemmStridedBatched)(STRIDED_PARAMS(cuComplex)) {
  STRIDED_BODY(CUDA_C_32F);
}
ABI_CHECK(cublasCgemmStridedBatched);

cublasStatus_t IMPL(cublasCgemm3mStridedBatched)(STRIDED_PARAMS(cuComplex)) {
  STRIDED_BODY(CUDA_C_32F);
}
ABI_CHECK(cublasCgemm3mStridedBatched);

cublasStatus_t IMPL(cublasZgemmStridedBatched)(STRIDED_PARAMS(cuDoubleComplex)) {
  STRIDED_BODY(CUDA_C_64F);
}
ABI_CHECK(cublasZgemmStridedBatched);

cublasStatus_t IMPL(cublasHgemmStridedBatched)(STRIDED_PARAMS(half_bits)) {
  STRIDED_BODY(CUDA_R_16F);
}

#define BATCHED_PARAMS(T)                                                                          \
  cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,  \
      const T *alpha, const T *const A[], int lda, const T *const B[], int ldb, const T *beta,     \
      T *const C[], int ldc, int batch

#define BATCHED_BODY(TYPE)                                                                         \
  struct gemm_args args = {transa,                                                                 \
                           transb,                                                                 \
                           m,                                                                      \
                           n,                                                                      \
                           k,                                                                      \
                           batch,                                                                  \
                           alpha,                                                                  \
                           beta,                                                                   \
                           TYPE,                                                                   \
                           batched((const void *const *)A, TYPE, lda),                             \
                           batched((const void *const *)B, TYPE, ldb),                             \
                           batched((const void *const *)C, TYPE, ldc)};                            \
  return gemm(handle, &args)

cublasStatus_t IMPL(cublasSgemmBatched)(BATCHED_PARAMS(float)) {
  BATCHED_BODY(CUDA_R_32F);
}
ABI_CHECK(cublasSgemmBatched);

cublasStatus_t IMPL(cublasDgemmBatched)(BATCHED_PARAMS(double)) {
  BATCHED_BODY(CUDA_R_64F);
}
ABI_CHECK(cublasDgemmBatched);

cublasStatus_t IMPL(cublasCgemmBatched)(BATCHED_PARAMS(cuComplex)) {
  BATCHED_BODY(CUDA_C_32F);
}
ABI_CHECK(cublasCgemmBatched);

cublasStatus_t IMPL(cublasZgemmBatched)(BATCHED_PARAMS(cuDoubleComplex)) {
  BATCHED_BODY(CUDA_C_64F);
}
ABI_CHECK(cublasZgemmBatched);

cublasStatus_t IMPL(cublasHgemmBatched)(BATCHED_PARAMS(half_bits)) {
  BATCHED_BODY(CUDA_R_16F);
}

cublasStatus_t IMPL(cublasGemmEx)(cublasHandle_t handle, cublasOperation_t transa,
                                  cublasOperation_t transb, int m, int n, int k, const void *alpha,
                                  const void *A, cudaDataType Atype, int lda, const void *B,
                                  cudaDataType Btype, int ldb, const void *beta, void *C,
                                  cudaDataType Ctype, int ldc, cublasComputeType_t compute,
                                  cublasGemmAlgo_t algo) {
  (void)algo; /* every algorithm is the host BLAS's */
  cudaDataType_t scale;
  if (!scale_type_of(compute, Ctype, &scale))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  struct gemm_args args = {transa,
                           transb,
                           m,
                           n,
                           k,
                           1,
                           alpha,
                           beta,
                           scale,
                           operand(A, Atype, lda, 0),
                           operand(B, Btype, ldb, 0),
                           operand(C, Ctype, ldc, 0)};
  return gemm(handle, &args);
}
ABI_CHECK(cublasGemmEx);

cublasStatus_t IMPL(cublasGemmStridedBatchedEx)(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void *alpha, const void *A, cudaDataType Atype, int lda, long long stride_a,
    const void *B, cudaDataType Btype, int ldb, long long stride_b, const void *beta, void *C,
    cudaDataType Ctype, int ldc, long long stride_c, int batch, cublasComputeType_t compute,
    cublasGemmAlgo_t algo) {
  (void)algo;
  cudaDataType_t scale;
  if (!scale_type_of(compute, Ctype, &scale))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  struct gemm_args args = {transa,
                           transb,
                           m,
                           n,
                           k,
                           batch,
                           alpha,
                           beta,
                           scale,
                           operand(A, Atype, lda, stride_a),
                           operand(B, Btype, ldb, stride_b),
                           operand(C, Ctype, ldc, stride_c)};
  return gemm(handle, &args);
}
ABI_CHECK(cublasGemmStridedBatchedEx);

cublasStatus_t IMPL(cublasGemmBatchedEx)(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const void *alpha, const void *const A[],
                                         cudaDataType Atype, int lda, const void *const B[],
                                         cudaDataType Btype, int ldb, const void *beta,
                                         void *const C[], cudaDataType Ctype, int ldc, int batch,
                                         cublasComputeType_t compute, cublasGemmAlgo_t algo) {
  (void)algo;
  cudaDataType_t scale;
  if (!scale_type_of(compute, Ctype, &scale))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  struct gemm_args args = {transa,
                           transb,
                           m,
                           n,
                           k,
                           batch,
                           alpha,
                           beta,
                           scale,
                           batched(A, Atype, lda),
                           batched(B, Btype, ldb),
                           batched((const void *const *)C, Ctype, ldc)};
  return gemm(handle, &args);
}
ABI_CHECK(cublasGemmBatchedEx);

/* SgemmEx, CgemmEx: f32 (complex f32) scalars, operands of the given types
 * where the host route computes them (engine.c says NOT_SUPPORTED otherwise). */
#define GEMM_EX(NAME, S, SCALE)                                                                    \
  cublasStatus_t IMPL(NAME)(                                                                       \
      cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,     \
      int k, const S *alpha, const void *A, cudaDataType Atype, int lda, const void *B,            \
      cudaDataType Btype, int ldb, const S *beta, void *C, cudaDataType Ctype, int ldc) {          \
    struct gemm_args args = {transa,                                                               \
                             transb,                                                               \
                             m,                                                                    \
                             n,                                                                    \
                             k,                                                                    \
                             1,                                                                    \
                             alpha,                                                                \
                             beta,                                                                 \
                             SCALE,                                                                \
                             operand(A, Atype, lda, 0),                                            \
                             operand(B, Btype, ldb, 0),                                            \
                             operand(C, Ctype, ldc, 0)};                                           \
    return gemm(handle, &args);                                                                    \
  }                                                                                                \
  ABI_CHECK(NAME)
GEMM_EX(cublasSgemmEx, float, CUDA_R_32F);
GEMM_EX(cublasCgemmEx, cuComplex, CUDA_C_32F);
GEMM_EX(cublasCgemm3mEx, cuComplex, CUDA_C_32F);

cublasStatus_t IMPL(cublasCgemm3mBatched)(BATCHED_PARAMS(cuComplex)) {
  BATCHED_BODY(CUDA_C_32F);
}
ABI_CHECK(cublasCgemm3mBatched);

/* -- level 1 and 2 ----------------------------------------------------------------- */

enum level1_op { AXPY, DOT, NRM2, SCAL, ASUM, IAMAX };

struct level1 {
  struct zmlir_job job;
  enum level1_op op;
  int f64, n, incx, incy;
  const void *x;
  void *y, *result;
  struct zmlir_scalar alpha;
};

static void level1_run(struct zmlir_job *job) {
  struct level1 *l = (struct level1 *)job;
  int n = l->n, incx = l->incx, incy = l->incy;
  /* NVIDIA's answer for an empty vector or a non-positive stride. */
  int empty = n <= 0 || incx <= 0;
  switch (l->op) {
  case AXPY:
    if (n > 0) {
      if (l->f64)
        CBLAS(daxpy)(n, *(const double *)l->alpha.at, l->x, incx, l->y, incy);
      else
        CBLAS(saxpy)(n, *(const float *)l->alpha.at, l->x, incx, l->y, incy);
    }
    break;
  case DOT:
    if (l->f64)
      *(double *)l->result = n > 0 ? CBLAS(ddot)(n, l->x, incx, l->y, incy) : 0;
    else
      *(float *)l->result = n > 0 ? CBLAS(sdot)(n, l->x, incx, l->y, incy) : 0;
    break;
  case NRM2:
    if (l->f64)
      *(double *)l->result = empty ? 0 : CBLAS(dnrm2)(n, l->x, incx);
    else
      *(float *)l->result = empty ? 0 : CBLAS(snrm2)(n, l->x, incx);
    break;
  case ASUM:
    if (l->f64)
      *(double *)l->result = empty ? 0 : CBLAS(dasum)(n, l->x, incx);
    else
      *(float *)l->result = empty ? 0 : CBLAS(sasum)(n, l->x, incx);
    break;
  case SCAL:
    if (!empty) {
      if (l->f64)
        CBLAS(dscal)(n, *(const double *)l->alpha.at, l->y, incx);
      else
        CBLAS(sscal)(n, *(const float *)l->alpha.at, l->y, incx);
    }
    break;
  case IAMAX: /* 1-based, as Fortran's */
    *(int *)l->result =
        empty ? 0 : (int)(l->f64 ? CBLAS(idamax)(n, l->x, incx) : CBLAS(isamax)(n, l->x, incx)) + 1;
    break;
  }
}

static cublasStatus_t level1(cublasHandle_t handle, enum level1_op op, int f64, int n,
                             const void *alpha, const void *x, int incx, void *y, int incy,
                             void *result) {
  CHECK_HANDLE(handle);
  int device = handle->pointer_mode == CUBLAS_POINTER_MODE_DEVICE;
  if ((op == AXPY || op == SCAL) ? !alpha : !result)
    return CUBLAS_STATUS_INVALID_VALUE;
  struct level1 *l = calloc(1, sizeof *l);
  if (!l)
    return CUBLAS_STATUS_ALLOC_FAILED;
  l->job.run = level1_run;
  l->op = op, l->f64 = f64, l->n = n, l->incx = incx, l->incy = incy;
  l->x = x, l->y = y, l->result = result;
  if (alpha)
    zmlir_scalar_set(&l->alpha, alpha, f64 ? 8 : 4, device);
  /* A result in host memory is there when the call returns. */
  int wait = result && !device;
  return zmlir_submit(handle->stream, &l->job, wait);
}

cublasStatus_t IMPL(cublasSaxpy_v2)(cublasHandle_t h, int n, const float *alpha, const float *x,
                                    int incx, float *y, int incy) {
  return level1(h, AXPY, 0, n, alpha, x, incx, y, incy, NULL);
}
ABI_CHECK(cublasSaxpy_v2);

cublasStatus_t IMPL(cublasDaxpy_v2)(cublasHandle_t h, int n, const double *alpha, const double *x,
                                    int incx, double *y, int incy) {
  return level1(h, AXPY, 1, n, alpha, x, incx, y, incy, NULL);
}
ABI_CHECK(cublasDaxpy_v2);

cublasStatus_t IMPL(cublasSdot_v2)(cublasHandle_t h, int n, const float *x, int incx,
                                   const float *y, int incy, float *result) {
  return level1(h, DOT, 0, n, NULL, x, incx, (void *)y, incy, result);
}
ABI_CHECK(cublasSdot_v2);

cublasStatus_t IMPL(cublasDdot_v2)(cublasHandle_t h, int n, const double *x, int incx,
                                   const double *y, int incy, double *result) {
  return level1(h, DOT, 1, n, NULL, x, incx, (void *)y, incy, result);
}
ABI_CHECK(cublasDdot_v2);

cublasStatus_t IMPL(cublasSnrm2_v2)(cublasHandle_t h, int n, const float *x, int incx,
                                    float *result) {
  return level1(h, NRM2, 0, n, NULL, x, incx, NULL, 0, result);
}
ABI_CHECK(cublasSnrm2_v2);

cublasStatus_t IMPL(cublasDnrm2_v2)(cublasHandle_t h, int n, const double *x, int incx,
                                    double *result) {
  return level1(h, NRM2, 1, n, NULL, x, incx, NULL, 0, result);
}
ABI_CHECK(cublasDnrm2_v2);

cublasStatus_t IMPL(cublasSasum_v2)(cublasHandle_t h, int n, const float *x, int incx,
                                    float *result) {
  return level1(h, ASUM, 0, n, NULL, x, incx, NULL, 0, result);
}
ABI_CHECK(cublasSasum_v2);

cublasStatus_t IMPL(cublasDasum_v2)(cublasHandle_t h, int n, const double *x, int incx,
                                    double *result) {
  return level1(h, ASUM, 1, n, NULL, x, incx, NULL, 0, result);
}
ABI_CHECK(cublasDasum_v2);

cublasStatus_t IMPL(cublasSscal_v2)(cublasHandle_t h, int n, const float *alpha, float *x,
                                    int incx) {
  return level1(h, SCAL, 0, n, alpha, NULL, incx, x, 0, NULL);
}
ABI_CHECK(cublasSscal_v2);

cublasStatus_t IMPL(cublasDscal_v2)(cublasHandle_t h, int n, const double *alpha, double *x,
                                    int incx) {
  return level1(h, SCAL, 1, n, alpha, NULL, incx, x, 0, NULL);
}
ABI_CHECK(cublasDscal_v2);

cublasStatus_t IMPL(cublasIsamax_v2)(cublasHandle_t h, int n, const float *x, int incx,
                                     int *result) {
  return level1(h, IAMAX, 0, n, NULL, x, incx, NULL, 0, result);
}
ABI_CHECK(cublasIsamax_v2);

cublasStatus_t IMPL(cublasIdamax_v2)(cublasHandle_t h, int n, const double *x, int incx,
                                     int *result) {
  return level1(h, IAMAX, 1, n, NULL, x, incx, NULL, 0, result);
}
ABI_CHECK(cublasIdamax_v2);

struct gemv {
  struct zmlir_job job;
  int f64;
  cublasOperation_t trans;
  int m, n, lda, incx, incy;
  const void *a, *x;
  void *y;
  struct zmlir_scalar alpha, beta;
};

static void gemv_run(struct zmlir_job *job) {
  struct gemv *g = (struct gemv *)job;
  CBLAS_TRANSPOSE t = g->trans == CUBLAS_OP_N ? CblasNoTrans : CblasTrans;
  if (g->f64)
    CBLAS(dgemv)(CblasColMajor, t, g->m, g->n, *(const double *)g->alpha.at, g->a, g->lda, g->x,
                 g->incx, *(const double *)g->beta.at, g->y, g->incy);
  else
    CBLAS(sgemv)(CblasColMajor, t, g->m, g->n, *(const float *)g->alpha.at, g->a, g->lda, g->x,
                 g->incx, *(const float *)g->beta.at, g->y, g->incy);
}

static cublasStatus_t gemv(cublasHandle_t handle, int f64, cublasOperation_t trans, int m, int n,
                           const void *alpha, const void *a, int lda, const void *x, int incx,
                           const void *beta, void *y, int incy) {
  CHECK_HANDLE(handle);
  if (!valid_op(trans) || m < 0 || n < 0 || lda < at_least_1(m) || incx == 0 || incy == 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0)
    return CUBLAS_STATUS_SUCCESS;
  if (!alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  struct gemv *g = calloc(1, sizeof *g);
  if (!g)
    return CUBLAS_STATUS_ALLOC_FAILED;
  g->job.run = gemv_run;
  g->f64 = f64, g->trans = trans, g->m = m, g->n = n, g->lda = lda, g->incx = incx, g->incy = incy;
  g->a = a, g->x = x, g->y = y;
  int device = handle->pointer_mode == CUBLAS_POINTER_MODE_DEVICE;
  zmlir_scalar_set(&g->alpha, alpha, f64 ? 8 : 4, device);
  zmlir_scalar_set(&g->beta, beta, f64 ? 8 : 4, device);
  return zmlir_submit(handle->stream, &g->job, 0);
}

cublasStatus_t IMPL(cublasSgemv_v2)(cublasHandle_t h, cublasOperation_t trans, int m, int n,
                                    const float *alpha, const float *A, int lda, const float *x,
                                    int incx, const float *beta, float *y, int incy) {
  return gemv(h, 0, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}
ABI_CHECK(cublasSgemv_v2);

cublasStatus_t IMPL(cublasDgemv_v2)(cublasHandle_t h, cublasOperation_t trans, int m, int n,
                                    const double *alpha, const double *A, int lda, const double *x,
                                    int incx, const double *beta, double *y, int incy) {
  return gemv(h, 1, trans, m, n, alpha, A, lda, x, incx, beta, y, incy);
}
ABI_CHECK(cublasDgemv_v2);

/* GEAM: C = alpha op(A) + beta op(B), element by element (in place where C is
 * A or B with the same leading dimension and no transpose, as NVIDIA allows). */
struct geam {
  struct zmlir_job job;
  int f64;
  cublasOperation_t transa, transb;
  int m, n, lda, ldb, ldc;
  const void *a, *b;
  void *c;
  struct zmlir_scalar alpha, beta;
};

static double element(const void *p, int f64, cublasOperation_t op, int ld, int i, int j) {
  int64_t index = op == CUBLAS_OP_N ? (int64_t)j * ld + i : (int64_t)i * ld + j;
  return f64 ? ((const double *)p)[index] : ((const float *)p)[index];
}

static void geam_run(struct zmlir_job *job) {
  struct geam *g = (struct geam *)job;
  double alpha = g->f64 ? *(const double *)g->alpha.at : *(const float *)g->alpha.at;
  double beta = g->f64 ? *(const double *)g->beta.at : *(const float *)g->beta.at;
  for (int j = 0; j < g->n; ++j)
    for (int i = 0; i < g->m; ++i) {
      /* A scalar of 0 leaves its matrix unread (it may be NULL). */
      double v = (alpha != 0 ? alpha * element(g->a, g->f64, g->transa, g->lda, i, j) : 0) +
                 (beta != 0 ? beta * element(g->b, g->f64, g->transb, g->ldb, i, j) : 0);
      if (g->f64)
        ((double *)g->c)[(int64_t)j * g->ldc + i] = v;
      else
        ((float *)g->c)[(int64_t)j * g->ldc + i] = (float)v;
    }
}

static cublasStatus_t geam(cublasHandle_t handle, int f64, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, const void *alpha, const void *a,
                           int lda, const void *beta, const void *b, int ldb, void *c, int ldc) {
  CHECK_HANDLE(handle);
  if (!valid_op(transa) || !valid_op(transb) || m < 0 || n < 0 || ldc < at_least_1(m) ||
      lda < at_least_1(transa == CUBLAS_OP_N ? m : n) ||
      ldb < at_least_1(transb == CUBLAS_OP_N ? m : n))
    return CUBLAS_STATUS_INVALID_VALUE;
  /* In place only as the untransposed operand with C's leading dimension. */
  if ((c == a && (transa != CUBLAS_OP_N || lda != ldc)) ||
      (c == b && (transb != CUBLAS_OP_N || ldb != ldc)))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0)
    return CUBLAS_STATUS_SUCCESS;
  if (!alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  struct geam *g = calloc(1, sizeof *g);
  if (!g)
    return CUBLAS_STATUS_ALLOC_FAILED;
  g->job.run = geam_run;
  g->f64 = f64, g->transa = transa, g->transb = transb, g->m = m, g->n = n;
  g->lda = lda, g->ldb = ldb, g->ldc = ldc, g->a = a, g->b = b, g->c = c;
  int device = handle->pointer_mode == CUBLAS_POINTER_MODE_DEVICE;
  zmlir_scalar_set(&g->alpha, alpha, f64 ? 8 : 4, device);
  zmlir_scalar_set(&g->beta, beta, f64 ? 8 : 4, device);
  return zmlir_submit(handle->stream, &g->job, 0);
}

cublasStatus_t IMPL(cublasSgeam)(cublasHandle_t h, cublasOperation_t transa,
                                 cublasOperation_t transb, int m, int n, const float *alpha,
                                 const float *A, int lda, const float *beta, const float *B,
                                 int ldb, float *C, int ldc) {
  return geam(h, 0, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}
ABI_CHECK(cublasSgeam);

cublasStatus_t IMPL(cublasDgeam)(cublasHandle_t h, cublasOperation_t transa,
                                 cublasOperation_t transb, int m, int n, const double *alpha,
                                 const double *A, int lda, const double *beta, const double *B,
                                 int ldb, double *C, int ldc) {
  return geam(h, 1, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);
}
ABI_CHECK(cublasDgeam);

/* -- batched LU: getrf and getri on the host LAPACK (OpenBLAS's) ------------------- */

/* LAPACK's, from the host BLAS's library (32-bit integers: scipy-openblas32). */
#define LAPACK(name) ZMLIR_CAT(ZMLIR_BLAS_PREFIX, ZMLIR_CAT(name, _))
void LAPACK(sgetrf)(const int *m, const int *n, float *a, const int *lda, int *ipiv, int *info);
void LAPACK(dgetrf)(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
void LAPACK(sgetri)(const int *n, float *a, const int *lda, const int *ipiv, float *work,
                    const int *lwork, int *info);
void LAPACK(dgetri)(const int *n, double *a, const int *lda, const int *ipiv, double *work,
                    const int *lwork, int *info);

struct lu_batch {
  struct zmlir_job job;
  int f64, n, lda, ldc, batch;
  void *const *a;       /* getrf: factored in place; getri: the factors */
  void *const *c;       /* getri: the inverses */
  int *pivots;          /* n per matrix, 1-based; NULL: no pivoting */
  const int *pivots_in; /* getri's */
  int *info;
};

static double get(const void *a, int f64, int64_t index) {
  return f64 ? ((const double *)a)[index] : ((const float *)a)[index];
}

static void put(void *a, int f64, int64_t index, double value) {
  if (f64)
    ((double *)a)[index] = value;
  else
    ((float *)a)[index] = (float)value;
}

/* LU without row exchanges (cuBLAS's P == NULL), as LAPACK's getf2 does it
 * but for the pivot search: a zero pivot sets info (the first, 1-based) and
 * leaves its column unscaled; the elimination goes on. In the matrix's
 * precision. */
static int lu_no_pivot(void *a, int f64, int n, int lda) {
  int info = 0;
  for (int k = 0; k < n; ++k) {
    double pivot = get(a, f64, (int64_t)k * lda + k);
    if (pivot == 0) {
      if (!info)
        info = k + 1;
    } else {
      for (int i = k + 1; i < n; ++i) {
        int64_t at = (int64_t)k * lda + i;
        put(a, f64, at, f64 ? get(a, 1, at) / pivot : (float)get(a, 0, at) / (float)pivot);
      }
    }
    for (int j = k + 1; j < n; ++j) {
      double u = get(a, f64, (int64_t)j * lda + k);
      for (int i = k + 1; i < n; ++i) {
        int64_t at = (int64_t)j * lda + i;
        double l = get(a, f64, (int64_t)k * lda + i);
        put(a, f64, at, f64 ? get(a, 1, at) - l * u : (float)get(a, 0, at) - (float)l * (float)u);
      }
    }
  }
  return info;
}

static void getrf_run(struct zmlir_job *job) {
  struct lu_batch *l = (struct lu_batch *)job;
  for (int b = 0; b < l->batch; ++b) {
    int info = 0;
    if (!l->pivots)
      info = lu_no_pivot(l->a[b], l->f64, l->n, l->lda);
    else if (l->f64)
      LAPACK(dgetrf)(&l->n, &l->n, l->a[b], &l->lda, l->pivots + (int64_t)b * l->n, &info);
    else
      LAPACK(sgetrf)(&l->n, &l->n, l->a[b], &l->lda, l->pivots + (int64_t)b * l->n, &info);
    l->info[b] = info;
  }
}

/* getri out of place: the factors copied to C, inverted there by LAPACK's
 * getri (identity pivots where getrf had none). info: the first zero on
 * U's diagonal, 1-based, as LAPACK's. */
static void getri_run(struct zmlir_job *job) {
  struct lu_batch *l = (struct lu_batch *)job;
  int n = l->n, lwork = 64 * n;
  size_t elem = l->f64 ? 8 : 4;
  int *identity = malloc(sizeof(int) * (size_t)n);
  void *work = malloc(elem * (size_t)lwork);
  for (int i = 0; i < n && identity; ++i)
    identity[i] = i + 1;
  for (int b = 0; b < l->batch; ++b) {
    int info = 0;
    if (!identity || !work) {
      l->info[b] = -1; /* out of host memory: said, not silently wrong */
      continue;
    }
    for (int j = 0; j < n; ++j)
      memcpy((char *)l->c[b] + elem * (size_t)j * l->ldc,
             (const char *)l->a[b] + elem * (size_t)j * l->lda, elem * (size_t)n);
    const int *pivots = l->pivots_in ? l->pivots_in + (int64_t)b * n : identity;
    if (l->f64)
      LAPACK(dgetri)(&n, l->c[b], &l->ldc, pivots, work, &lwork, &info);
    else
      LAPACK(sgetri)(&n, l->c[b], &l->ldc, pivots, work, &lwork, &info);
    l->info[b] = info;
  }
  free(identity), free(work);
}

static cublasStatus_t lu_batch(cublasHandle_t handle, int f64, int n, void *const *a, int lda,
                               int *pivots, const int *pivots_in, void *const *c, int ldc,
                               int *info, int batch, void (*run)(struct zmlir_job *)) {
  CHECK_HANDLE(handle);
  if (n < 0 || lda < at_least_1(n) || (c && ldc < at_least_1(n)) || batch < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (n == 0 || batch == 0)
    return CUBLAS_STATUS_SUCCESS;
  if (!a || !info || (run == getri_run && !c))
    return CUBLAS_STATUS_INVALID_VALUE;
  struct lu_batch *l = calloc(1, sizeof *l);
  if (!l)
    return CUBLAS_STATUS_ALLOC_FAILED;
  l->job.run = run;
  l->f64 = f64, l->n = n, l->lda = lda, l->ldc = ldc, l->batch = batch;
  l->a = a, l->c = c, l->pivots = pivots, l->pivots_in = pivots_in, l->info = info;
  return zmlir_submit(handle->stream, &l->job, 0);
}

cublasStatus_t IMPL(cublasSgetrfBatched)(cublasHandle_t h, int n, float *const A[], int lda, int *P,
                                         int *info, int batch) {
  return lu_batch(h, 0, n, (void *const *)A, lda, P, NULL, NULL, 0, info, batch, getrf_run);
}
ABI_CHECK(cublasSgetrfBatched);

cublasStatus_t IMPL(cublasDgetrfBatched)(cublasHandle_t h, int n, double *const A[], int lda,
                                         int *P, int *info, int batch) {
  return lu_batch(h, 1, n, (void *const *)A, lda, P, NULL, NULL, 0, info, batch, getrf_run);
}
ABI_CHECK(cublasDgetrfBatched);

cublasStatus_t IMPL(cublasSgetriBatched)(cublasHandle_t h, int n, const float *const A[], int lda,
                                         const int *P, float *const C[], int ldc, int *info,
                                         int batch) {
  return lu_batch(h, 0, n, (void *const *)A, lda, NULL, P, (void *const *)C, ldc, info, batch,
                  getri_run);
}
ABI_CHECK(cublasSgetriBatched);

cublasStatus_t IMPL(cublasDgetriBatched)(cublasHandle_t h, int n, const double *const A[], int lda,
                                         const int *P, double *const C[], int ldc, int *info,
                                         int batch) {
  return lu_batch(h, 1, n, (void *const *)A, lda, NULL, P, (void *const *)C, ldc, info, batch,
                  getri_run);
}
ABI_CHECK(cublasDgetriBatched);

/* -- cuBLASXt: the multi-GPU host API, on one device ------------------------------ */

/* Every device's memory is host memory on this route, so the GEMM runs on
 * the application's pointers (host or device) where they are, on the first
 * selected device, as one cuBLAS GEMM in that device's legacy stream (after
 * the work the application queued there), and the call returns when it is
 * done: Xt's calls block. The tiles (block dimension) are kept, not used. */
struct cublasXtContext {
  int device; /* the first selected, -1 before cublasXtDeviceSelect */
  int block_dim;
  cublasXtPinnedMemMode_t pinning;
};

cublasStatus_t IMPL(cublasXtCreate)(cublasXtHandle_t *handle) {
  if (!handle)
    return CUBLAS_STATUS_INVALID_VALUE;
  struct cublasXtContext *h = calloc(1, sizeof *h);
  if (!h)
    return CUBLAS_STATUS_ALLOC_FAILED;
  h->device = -1;
  h->block_dim = 1024;
  h->pinning = CUBLASXT_PINNING_DISABLED;
  *handle = h;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasXtCreate);

cublasStatus_t IMPL(cublasXtDestroy)(cublasXtHandle_t handle) {
  CHECK_HANDLE(handle);
  free(handle);
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasXtDestroy);

cublasStatus_t IMPL(cublasXtDeviceSelect)(cublasXtHandle_t handle, int count, int ids[]) {
  CHECK_HANDLE(handle);
  int devices = 0;
  if (count <= 0 || !ids || cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&devices) != CUDA_SUCCESS)
    return CUBLAS_STATUS_INVALID_VALUE;
  for (int i = 0; i < count; ++i)
    if (ids[i] < 0 || ids[i] >= devices)
      return CUBLAS_STATUS_INVALID_VALUE;
  handle->device = ids[0];
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasXtDeviceSelect);

cublasStatus_t IMPL(cublasXtSetBlockDim)(cublasXtHandle_t handle, int block_dim) {
  CHECK_HANDLE(handle);
  if (block_dim <= 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  handle->block_dim = block_dim;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasXtSetBlockDim);

cublasStatus_t IMPL(cublasXtGetBlockDim)(cublasXtHandle_t handle, int *block_dim) {
  CHECK_HANDLE(handle);
  if (!block_dim)
    return CUBLAS_STATUS_INVALID_VALUE;
  *block_dim = handle->block_dim;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasXtGetBlockDim);

cublasStatus_t IMPL(cublasXtSetPinningMemMode)(cublasXtHandle_t handle,
                                               cublasXtPinnedMemMode_t mode) {
  CHECK_HANDLE(handle);
  if (mode != CUBLASXT_PINNING_DISABLED && mode != CUBLASXT_PINNING_ENABLED)
    return CUBLAS_STATUS_INVALID_VALUE;
  handle->pinning = mode; /* nothing to pin: the host BLAS reads host memory */
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasXtSetPinningMemMode);

cublasStatus_t IMPL(cublasXtGetPinningMemMode)(cublasXtHandle_t handle,
                                               cublasXtPinnedMemMode_t *mode) {
  CHECK_HANDLE(handle);
  if (!mode)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->pinning;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasXtGetPinningMemMode);

/* One GEMM in the selected device's primary context, waited for. */
static cublasStatus_t xt_gemm(cublasXtHandle_t handle, const struct gemm_args *args) {
  CHECK_HANDLE(handle);
  if (handle->device < 0)
    return CUBLAS_STATUS_NOT_INITIALIZED; /* no cublasXtDeviceSelect yet */
  if (args->m > INT32_MAX || args->n > INT32_MAX || args->k > INT32_MAX)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  CUdevice device;
  CUcontext context;
  if (cuDeviceGet(&device, handle->device) != CUDA_SUCCESS ||
      cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS)
    return CUBLAS_STATUS_INTERNAL_ERROR;
  cublasStatus_t status = CUBLAS_STATUS_INTERNAL_ERROR;
  if (cuCtxPushCurrent(context) == CUDA_SUCCESS) {
    struct cublasContext one = {0};
    one.pointer_mode = CUBLAS_POINTER_MODE_HOST;
    status = gemm(&one, args);
    if (status == CUBLAS_STATUS_SUCCESS && cuStreamSynchronize(NULL) != CUDA_SUCCESS)
      status = CUBLAS_STATUS_EXECUTION_FAILED;
    cuCtxPopCurrent(&context);
  }
  cuDevicePrimaryCtxRelease(device);
  return status;
}

#define XT_GEMM(NAME, T, TYPE)                                                                     \
  cublasStatus_t IMPL(NAME)(cublasXtHandle_t handle, cublasOperation_t transa,                     \
                            cublasOperation_t transb, size_t m, size_t n, size_t k,                \
                            const T *alpha, const T *A, size_t lda, const T *B, size_t ldb,        \
                            const T *beta, T *C, size_t ldc) {                                     \
    struct gemm_args args = {transa,                                                               \
                             transb,                                                               \
                             (int64_t)m,                                                           \
                             (int64_t)n,                                                           \
                             (int64_t)k,                                                           \
                             1,                                                                    \
                             alpha,                                                                \
                             beta,                                                                 \
                             TYPE,                                                                 \
                             operand(A, TYPE, (int64_t)lda, 0),                                    \
                             operand(B, TYPE, (int64_t)ldb, 0),                                    \
                             operand(C, TYPE, (int64_t)ldc, 0)};                                   \
    return xt_gemm(handle, &args);                                                                 \
  }                                                                                                \
  ABI_CHECK(NAME)

XT_GEMM(cublasXtSgemm, float, CUDA_R_32F);
XT_GEMM(cublasXtDgemm, double, CUDA_R_64F);
