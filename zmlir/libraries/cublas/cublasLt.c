/* libcublasLt.so.13 on the host route: NVIDIA's C ABI (cublasLt.h) over the
 * GEMM of engine.c. Descriptors live inside NVIDIA's semi-opaque structs, so
 * the *Init_internal forms work on the application's own storage; one
 * algorithm (the host BLAS, no workspace) whose configuration is kept;
 * strided or pointer-array batches; FP8 operands with their scales and amax
 * (in f32); complex operands, interleaved or planar (in complex double);
 * epilogues BIAS, RELU, GELU (tanh form, as NVIDIA's), their AUX forms (the
 * value before the activation to the aux matrix) and BGRADB; matrix
 * transforms between the COL, ROW and COL32 orders. */
#include "engine.h"
#include "route.h"

#include <cblas.h>
#include <cublasLt.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ZMLIR_CAT2(a, b) a##b
#define ZMLIR_CAT(a, b) ZMLIR_CAT2(a, b)
#define CBLAS(name) ZMLIR_CAT(ZMLIR_BLAS_PREFIX, ZMLIR_CAT(cblas_, name))

struct cublasLtContext {
  int unused;
};

struct layout {
  cudaDataType_t type;
  int32_t order;
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch;
  int64_t stride, plane_offset;
  uint32_t batch_mode; /* cublasLtBatchMode_t */
};
_Static_assert(sizeof(struct layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "layout");

struct desc {
  int32_t compute, scale, pointer_mode, transa, transb, transc, fill;
  uint32_t epilogue;
  const void *bias;
  int64_t bias_stride;
  void *aux;
  int64_t aux_ld, aux_stride, alpha_stride;
  int32_t sm_count;
  const void *scale_a, *scale_b, *scale_c, *scale_d, *amax_d;
  int32_t aux_type, bias_type;
  int8_t fast_accum;
};
_Static_assert(sizeof(struct desc) <= sizeof(cublasLtMatmulDescOpaque_t), "desc");

struct preference {
  uint32_t search_mode, reduction_mask, align_a, align_b, align_c, align_d;
  uint64_t max_workspace, impl_mask;
  float max_waves;
};
_Static_assert(sizeof(struct preference) <= sizeof(cublasLtMatmulPreferenceOpaque_t), "pref");

/* An algorithm: its id and configuration, kept for the application to read
 * back; every one is the host BLAS's GEMM. */
struct algo {
  int32_t id;
  uint32_t tile, reduction, swizzle, custom, stages;
  int32_t splitk;
  uint16_t inner_shape, cluster_shape;
};
_Static_assert(sizeof(struct algo) <= sizeof(cublasLtMatmulAlgo_t), "algo");

/* An attribute: where it lives in our struct and its size, which the caller
 * must give exactly (as NVIDIA's checks). */
struct attribute {
  int id;
  size_t offset, size;
};

#define ATTR(id, type, field) {id, offsetof(type, field), sizeof(((type *)0)->field)}

static const struct attribute layout_attributes[] = {
    ATTR(CUBLASLT_MATRIX_LAYOUT_TYPE, struct layout, type),
    ATTR(CUBLASLT_MATRIX_LAYOUT_ORDER, struct layout, order),
    ATTR(CUBLASLT_MATRIX_LAYOUT_ROWS, struct layout, rows),
    ATTR(CUBLASLT_MATRIX_LAYOUT_COLS, struct layout, cols),
    ATTR(CUBLASLT_MATRIX_LAYOUT_LD, struct layout, ld),
    ATTR(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, struct layout, batch),
    ATTR(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, struct layout, stride),
    ATTR(CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, struct layout, plane_offset),
    ATTR(CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, struct layout, batch_mode),
    {-1, 0, 0}};

static const struct attribute desc_attributes[] = {
    ATTR(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, struct desc, compute),
    ATTR(CUBLASLT_MATMUL_DESC_SCALE_TYPE, struct desc, scale),
    ATTR(CUBLASLT_MATMUL_DESC_POINTER_MODE, struct desc, pointer_mode),
    ATTR(CUBLASLT_MATMUL_DESC_TRANSA, struct desc, transa),
    ATTR(CUBLASLT_MATMUL_DESC_TRANSB, struct desc, transb),
    ATTR(CUBLASLT_MATMUL_DESC_TRANSC, struct desc, transc),
    ATTR(CUBLASLT_MATMUL_DESC_FILL_MODE, struct desc, fill),
    ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE, struct desc, epilogue),
    ATTR(CUBLASLT_MATMUL_DESC_BIAS_POINTER, struct desc, bias),
    ATTR(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, struct desc, bias_stride),
    ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, struct desc, aux),
    ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, struct desc, aux_ld),
    ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, struct desc, aux_stride),
    ATTR(CUBLASLT_MATMUL_DESC_ALPHA_VECTOR_BATCH_STRIDE, struct desc, alpha_stride),
    ATTR(CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, struct desc, sm_count),
    ATTR(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, struct desc, scale_a),
    ATTR(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, struct desc, scale_b),
    ATTR(CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, struct desc, scale_c),
    ATTR(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, struct desc, scale_d),
    ATTR(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, struct desc, amax_d),
    ATTR(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, struct desc, aux_type),
    ATTR(CUBLASLT_MATMUL_DESC_FAST_ACCUM, struct desc, fast_accum),
    ATTR(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, struct desc, bias_type),
    {-1, 0, 0}};

static const struct attribute preference_attributes[] = {
    ATTR(CUBLASLT_MATMUL_PREF_SEARCH_MODE, struct preference, search_mode),
    ATTR(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, struct preference, max_workspace),
    ATTR(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, struct preference, reduction_mask),
    ATTR(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, struct preference, align_a),
    ATTR(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, struct preference, align_b),
    ATTR(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, struct preference, align_c),
    ATTR(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, struct preference, align_d),
    ATTR(CUBLASLT_MATMUL_PREF_MAX_WAVES_COUNT, struct preference, max_waves),
    ATTR(CUBLASLT_MATMUL_PREF_IMPL_MASK, struct preference, impl_mask),
    {-1, 0, 0}};

static const struct attribute algo_attributes[] = {
    ATTR(CUBLASLT_ALGO_CONFIG_ID, struct algo, id),
    ATTR(CUBLASLT_ALGO_CONFIG_TILE_ID, struct algo, tile),
    ATTR(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, struct algo, splitk),
    ATTR(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, struct algo, reduction),
    ATTR(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, struct algo, swizzle),
    ATTR(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, struct algo, custom),
    ATTR(CUBLASLT_ALGO_CONFIG_STAGES_ID, struct algo, stages),
    ATTR(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, struct algo, inner_shape),
    ATTR(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, struct algo, cluster_shape),
    {-1, 0, 0}};

static const struct attribute *find_attribute(const struct attribute *table, int id) {
  for (; table->id >= 0; ++table)
    if (table->id == id)
      return table;
  return NULL;
}

static cublasStatus_t set_attribute(const struct attribute *table, void *object, int id,
                                    const void *buf, size_t size) {
  const struct attribute *a = find_attribute(table, id);
  if (!object)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!a || !buf || size != a->size)
    return CUBLAS_STATUS_INVALID_VALUE;
  memcpy((char *)object + a->offset, buf, size);
  return CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t get_attribute(const struct attribute *table, const void *object, int id,
                                    void *buf, size_t size, size_t *written) {
  const struct attribute *a = find_attribute(table, id);
  if (!object)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!a)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (size == 0 && written) { /* asks for the size */
    *written = a->size;
    return CUBLAS_STATUS_SUCCESS;
  }
  if (!buf || size < a->size)
    return CUBLAS_STATUS_INVALID_VALUE;
  memcpy(buf, (const char *)object + a->offset, a->size);
  if (written)
    *written = a->size;
  return CUBLAS_STATUS_SUCCESS;
}

/* -- the handle, versions --------------------------------------------------------- */

cublasStatus_t IMPL(cublasLtCreate)(cublasLtHandle_t *handle) {
  if (!handle)
    return CUBLAS_STATUS_INVALID_VALUE;
  *handle = calloc(1, sizeof **handle);
  return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}
ABI_CHECK(cublasLtCreate);

cublasStatus_t IMPL(cublasLtDestroy)(cublasLtHandle_t handle) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  free(handle);
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtDestroy);

size_t IMPL_ALWAYS(cublasLtGetVersion)(void) {
  return CUBLAS_VERSION;
}
ABI_CHECK_ALWAYS(cublasLtGetVersion);

size_t IMPL_ALWAYS(cublasLtGetCudartVersion)(void) {
  return CUDART_VERSION;
}
ABI_CHECK_ALWAYS(cublasLtGetCudartVersion);

cublasStatus_t IMPL_ALWAYS(cublasLtGetProperty)(libraryPropertyType type, int *value) {
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
ABI_CHECK_ALWAYS(cublasLtGetProperty);

const char *IMPL_ALWAYS(cublasLtGetStatusName)(cublasStatus_t status) {
  return zmlir_status_name(status);
}
ABI_CHECK_ALWAYS(cublasLtGetStatusName);

const char *IMPL_ALWAYS(cublasLtGetStatusString)(cublasStatus_t status) {
  return zmlir_status_string(status);
}
ABI_CHECK_ALWAYS(cublasLtGetStatusString);

/* -- matrix layouts ----------------------------------------------------------------- */

cublasStatus_t IMPL(cublasLtMatrixLayoutInit_internal)(cublasLtMatrixLayout_t layout, size_t size,
                                                       cudaDataType type, uint64_t rows,
                                                       uint64_t cols, int64_t ld) {
  if (!layout || size < sizeof(struct layout))
    return CUBLAS_STATUS_INVALID_VALUE;
  struct layout *l = (struct layout *)layout;
  memset(layout, 0, size);
  l->type = type, l->order = CUBLASLT_ORDER_COL, l->rows = rows, l->cols = cols, l->ld = ld;
  l->batch = 1;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatrixLayoutInit_internal);

cublasStatus_t IMPL(cublasLtMatrixLayoutCreate)(cublasLtMatrixLayout_t *layout, cudaDataType type,
                                                uint64_t rows, uint64_t cols, int64_t ld) {
  if (!layout)
    return CUBLAS_STATUS_INVALID_VALUE;
  cublasLtMatrixLayout_t l = malloc(sizeof *l);
  if (!l)
    return CUBLAS_STATUS_ALLOC_FAILED;
  IMPL(cublasLtMatrixLayoutInit_internal)(l, sizeof *l, type, rows, cols, ld);
  *layout = l;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatrixLayoutCreate);

cublasStatus_t IMPL(cublasLtMatrixLayoutDestroy)(cublasLtMatrixLayout_t layout) {
  free(layout);
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatrixLayoutDestroy);

cublasStatus_t IMPL(cublasLtMatrixLayoutSetAttribute)(cublasLtMatrixLayout_t layout,
                                                      cublasLtMatrixLayoutAttribute_t attr,
                                                      const void *buf, size_t size) {
  return set_attribute(layout_attributes, layout, attr, buf, size);
}
ABI_CHECK(cublasLtMatrixLayoutSetAttribute);

cublasStatus_t IMPL(cublasLtMatrixLayoutGetAttribute)(cublasLtMatrixLayout_t layout,
                                                      cublasLtMatrixLayoutAttribute_t attr,
                                                      void *buf, size_t size, size_t *written) {
  return get_attribute(layout_attributes, layout, attr, buf, size, written);
}
ABI_CHECK(cublasLtMatrixLayoutGetAttribute);

/* -- matmul descriptors -------------------------------------------------------------- */

cublasStatus_t IMPL(cublasLtMatmulDescInit_internal)(cublasLtMatmulDesc_t desc, size_t size,
                                                     cublasComputeType_t compute,
                                                     cudaDataType_t scale) {
  if (!desc || size < sizeof(struct desc))
    return CUBLAS_STATUS_INVALID_VALUE;
  memset(desc, 0, size);
  struct desc *d = (struct desc *)desc;
  d->compute = compute, d->scale = scale, d->pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  d->transa = d->transb = d->transc = CUBLAS_OP_N;
  d->fill = CUBLAS_FILL_MODE_FULL;
  d->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  d->aux_type = d->bias_type = -1; /* unset: D's type */
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatmulDescInit_internal);

cublasStatus_t IMPL(cublasLtMatmulDescCreate)(cublasLtMatmulDesc_t *desc,
                                              cublasComputeType_t compute, cudaDataType_t scale) {
  if (!desc)
    return CUBLAS_STATUS_INVALID_VALUE;
  cublasLtMatmulDesc_t d = malloc(sizeof *d);
  if (!d)
    return CUBLAS_STATUS_ALLOC_FAILED;
  IMPL(cublasLtMatmulDescInit_internal)(d, sizeof *d, compute, scale);
  *desc = d;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatmulDescCreate);

cublasStatus_t IMPL(cublasLtMatmulDescDestroy)(cublasLtMatmulDesc_t desc) {
  free(desc);
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatmulDescDestroy);

cublasStatus_t IMPL(cublasLtMatmulDescSetAttribute)(cublasLtMatmulDesc_t desc,
                                                    cublasLtMatmulDescAttributes_t attr,
                                                    const void *buf, size_t size) {
  return set_attribute(desc_attributes, desc, attr, buf, size);
}
ABI_CHECK(cublasLtMatmulDescSetAttribute);

cublasStatus_t IMPL(cublasLtMatmulDescGetAttribute)(cublasLtMatmulDesc_t desc,
                                                    cublasLtMatmulDescAttributes_t attr, void *buf,
                                                    size_t size, size_t *written) {
  return get_attribute(desc_attributes, desc, attr, buf, size, written);
}
ABI_CHECK(cublasLtMatmulDescGetAttribute);

/* -- preferences ---------------------------------------------------------------------- */

cublasStatus_t IMPL(cublasLtMatmulPreferenceInit_internal)(cublasLtMatmulPreference_t pref,
                                                           size_t size) {
  if (!pref || size < sizeof(struct preference))
    return CUBLAS_STATUS_INVALID_VALUE;
  memset(pref, 0, size);
  ((struct preference *)pref)->impl_mask = ~0ull;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatmulPreferenceInit_internal);

cublasStatus_t IMPL(cublasLtMatmulPreferenceCreate)(cublasLtMatmulPreference_t *pref) {
  if (!pref)
    return CUBLAS_STATUS_INVALID_VALUE;
  cublasLtMatmulPreference_t p = malloc(sizeof *p);
  if (!p)
    return CUBLAS_STATUS_ALLOC_FAILED;
  IMPL(cublasLtMatmulPreferenceInit_internal)(p, sizeof *p);
  *pref = p;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatmulPreferenceCreate);

cublasStatus_t IMPL(cublasLtMatmulPreferenceDestroy)(cublasLtMatmulPreference_t pref) {
  free(pref);
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatmulPreferenceDestroy);

cublasStatus_t IMPL(cublasLtMatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t pref,
                                                          cublasLtMatmulPreferenceAttributes_t attr,
                                                          const void *buf, size_t size) {
  return set_attribute(preference_attributes, pref, attr, buf, size);
}
ABI_CHECK(cublasLtMatmulPreferenceSetAttribute);

cublasStatus_t IMPL(cublasLtMatmulPreferenceGetAttribute)(cublasLtMatmulPreference_t pref,
                                                          cublasLtMatmulPreferenceAttributes_t attr,
                                                          void *buf, size_t size, size_t *written) {
  return get_attribute(preference_attributes, pref, attr, buf, size, written);
}
ABI_CHECK(cublasLtMatmulPreferenceGetAttribute);

/* -- matmul ----------------------------------------------------------------------------- */

/* The epilogues we compute (zmlir_epilogue_flags), or -1. */
static int epilogue_flags(uint32_t epilogue) {
  switch (epilogue) {
  case CUBLASLT_EPILOGUE_DEFAULT:
    return 0;
  case CUBLASLT_EPILOGUE_BIAS:
    return ZMLIR_EPI_BIAS;
  case CUBLASLT_EPILOGUE_RELU:
    return ZMLIR_EPI_RELU;
  case CUBLASLT_EPILOGUE_RELU_BIAS:
    return ZMLIR_EPI_RELU | ZMLIR_EPI_BIAS;
  case CUBLASLT_EPILOGUE_GELU:
    return ZMLIR_EPI_GELU;
  case CUBLASLT_EPILOGUE_GELU_BIAS:
    return ZMLIR_EPI_GELU | ZMLIR_EPI_BIAS;
  case CUBLASLT_EPILOGUE_GELU_AUX:
    return ZMLIR_EPI_GELU | ZMLIR_EPI_AUX;
  case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
    return ZMLIR_EPI_GELU | ZMLIR_EPI_AUX | ZMLIR_EPI_BIAS;
  case CUBLASLT_EPILOGUE_BGRADB:
    return ZMLIR_EPI_BGRADB;
  default: /* RELU_AUX's bit mask, the gradients DRELU, DGELU, BGRADA */
    return -1;
  }
}

static int compute_supported(int32_t compute, int32_t scale) {
  switch (compute) {
  case CUBLAS_COMPUTE_32F:
  case CUBLAS_COMPUTE_32F_PEDANTIC:
  case CUBLAS_COMPUTE_32F_FAST_16F:
  case CUBLAS_COMPUTE_32F_FAST_16BF:
  case CUBLAS_COMPUTE_32F_FAST_TF32:
    return scale == CUDA_R_32F || scale == CUDA_C_32F;
  case CUBLAS_COMPUTE_64F:
  case CUBLAS_COMPUTE_64F_PEDANTIC:
    return scale == CUDA_R_64F || scale == CUDA_C_64F;
  case CUBLAS_COMPUTE_16F:
  case CUBLAS_COMPUTE_16F_PEDANTIC:
    return scale == CUDA_R_16F;
  case CUBLAS_COMPUTE_32I:
  case CUBLAS_COMPUTE_32I_PEDANTIC:
    return scale == CUDA_R_32I || scale == CUDA_R_32F;
  default:
    return 0;
  }
}

/* A matrix type we compute: cuBLAS's, and FP8 (E4M3, E5M2) in f32. */
static int lt_type_supported(cudaDataType_t type, int32_t scale) {
  return zmlir_type_supported(type) || (zmlir_type_fp8(type) && scale == CUDA_R_32F) ||
         type == CUDA_R_8I || type == CUDA_R_32I;
}

/* int8: A and B R_8I, C and D R_32I (R_32I scalars) or R_32F (R_32F). */
static int int8_ok(const struct desc *d, const struct layout *a, const struct layout *b,
                   const struct layout *c, const struct layout *dl) {
  int any = a->type == CUDA_R_8I || b->type == CUDA_R_8I || c->type == CUDA_R_8I ||
            dl->type == CUDA_R_8I || c->type == CUDA_R_32I || dl->type == CUDA_R_32I ||
            d->scale == CUDA_R_32I;
  cudaDataType_t out = d->scale == CUDA_R_32I ? CUDA_R_32I : CUDA_R_32F;
  return !any || (a->type == CUDA_R_8I && b->type == CUDA_R_8I && c->type == out &&
                  dl->type == out && (d->scale == CUDA_R_32I || d->scale == CUDA_R_32F) &&
                  d->epilogue == CUBLASLT_EPILOGUE_DEFAULT && !d->bias && !d->scale_a &&
                  !d->scale_b && !d->scale_c && !d->scale_d && !d->amax_d);
}

/* Complex matmuls: C_16F, C_32F (f32 scalars) and C_64F, each operand
 * interleaved or planar (PLANE_OFFSET: the imaginary plane's distance in
 * bytes), computed in complex double. */
static int lt_complex_scale(int32_t scale) {
  return scale == CUDA_C_32F || scale == CUDA_C_64F;
}
static int lt_complex(cudaDataType_t type) {
  return type == CUDA_C_16F || type == CUDA_C_32F || type == CUDA_C_64F;
}

/* The problem's checks (INVALID_VALUE: shapes that do not fit together;
 * NOT_SUPPORTED: what the host route does not compute), and its sizes. */
static cublasStatus_t check(const struct desc *d, const struct layout *a, const struct layout *b,
                            const struct layout *c, const struct layout *dl, int64_t *m, int64_t *n,
                            int64_t *k) {
  if (!d || !a || !b || !c || !dl)
    return CUBLAS_STATUS_INVALID_VALUE;
  *m = (int64_t)dl->rows, *n = (int64_t)dl->cols;
  *k = (int64_t)(d->transa == CUBLAS_OP_N ? a->cols : a->rows);
  uint64_t a_m = d->transa == CUBLAS_OP_N ? a->rows : a->cols;
  uint64_t b_k = d->transb == CUBLAS_OP_N ? b->rows : b->cols;
  uint64_t b_n = d->transb == CUBLAS_OP_N ? b->cols : b->rows;
  if (a_m != dl->rows || b_k != (uint64_t)*k || b_n != dl->cols || c->rows != dl->rows ||
      c->cols != dl->cols)
    return CUBLAS_STATUS_INVALID_VALUE;
  const struct layout *all[] = {a, b, c, dl};
  for (int i = 0; i < 4; ++i) {
    if (all[i]->ld < (int64_t)(all[i]->rows > 1 ? all[i]->rows : 1))
      return CUBLAS_STATUS_INVALID_VALUE;
    int ok = lt_complex_scale(d->scale)
                 ? lt_complex(all[i]->type)
                 : lt_type_supported(all[i]->type, d->scale) && !all[i]->plane_offset;
    if (all[i]->order != CUBLASLT_ORDER_COL || !ok)
      return CUBLAS_STATUS_NOT_SUPPORTED;
    if (all[i]->batch != dl->batch || (all[i]->batch_mode != CUBLASLT_BATCH_MODE_STRIDED &&
                                       all[i]->batch_mode != CUBLASLT_BATCH_MODE_POINTER_ARRAY))
      return CUBLAS_STATUS_INVALID_VALUE;
    if (all[i]->batch_mode != dl->batch_mode) /* strided and pointer arrays mixed */
      return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  if (!compute_supported(d->compute, d->scale) || epilogue_flags(d->epilogue) < 0 ||
      !int8_ok(d, a, b, c, dl) || d->transc != CUBLAS_OP_N ||
      ((d->scale_a || d->scale_b || d->scale_c || d->scale_d || d->amax_d) &&
       d->scale != CUDA_R_32F) ||
      (lt_complex_scale(d->scale) && (d->epilogue != CUBLASLT_EPILOGUE_DEFAULT || d->bias)) ||
      (d->pointer_mode != CUBLASLT_POINTER_MODE_HOST &&
       d->pointer_mode != CUBLASLT_POINTER_MODE_DEVICE))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return CUBLAS_STATUS_SUCCESS;
}

static void algo_init(cublasLtMatmulAlgo_t *algo, int id) {
  memset(algo, 0, sizeof *algo);
  struct algo *a = (struct algo *)algo;
  a->id = id;
  a->splitk = 1;
}

/* One algorithm, id 0, for every combination the host route computes. */
static int types_supported(cublasComputeType_t compute, cudaDataType_t scale, cudaDataType_t a,
                           cudaDataType_t b, cudaDataType_t c, cudaDataType_t d) {
  int any8 = a == CUDA_R_8I || b == CUDA_R_8I || c == CUDA_R_8I || d == CUDA_R_8I ||
             c == CUDA_R_32I || d == CUDA_R_32I || scale == CUDA_R_32I;
  cudaDataType_t out = scale == CUDA_R_32I ? CUDA_R_32I : CUDA_R_32F;
  if (any8) /* int8 (int8_ok) */
    return compute_supported(compute, scale) && a == CUDA_R_8I && b == CUDA_R_8I && c == out &&
           d == out;
  return compute_supported(compute, scale) && lt_type_supported(a, scale) &&
         lt_type_supported(b, scale) && lt_type_supported(c, scale) && lt_type_supported(d, scale);
}

cublasStatus_t IMPL(cublasLtMatmulAlgoGetIds)(cublasLtHandle_t handle, cublasComputeType_t compute,
                                              cudaDataType_t scale, cudaDataType_t a,
                                              cudaDataType_t b, cudaDataType_t c, cudaDataType_t d,
                                              int requested, int ids[], int *count) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (requested <= 0 || !ids || !count)
    return CUBLAS_STATUS_INVALID_VALUE;
  *count = 0;
  if (types_supported(compute, scale, a, b, c, d))
    ids[(*count)++] = 0;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatmulAlgoGetIds);

cublasStatus_t IMPL(cublasLtMatmulAlgoInit)(cublasLtHandle_t handle, cublasComputeType_t compute,
                                            cudaDataType_t scale, cudaDataType_t a,
                                            cudaDataType_t b, cudaDataType_t c, cudaDataType_t d,
                                            int id, cublasLtMatmulAlgo_t *algo) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!algo || id < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!types_supported(compute, scale, a, b, c, d))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  /* NVIDIA's ids name its kernels; each is the host BLAS here. */
  algo_init(algo, id);
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatmulAlgoInit);

/* The configuration is kept (tiles, split-K, reduction): the host BLAS
 * chooses its own blocking. */
cublasStatus_t IMPL(cublasLtMatmulAlgoConfigSetAttribute)(cublasLtMatmulAlgo_t *algo,
                                                          cublasLtMatmulAlgoConfigAttributes_t attr,
                                                          const void *buf, size_t size) {
  if (!algo)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (attr == CUBLASLT_ALGO_CONFIG_ID)
    return CUBLAS_STATUS_INVALID_VALUE; /* read-only, set by cublasLtMatmulAlgoInit */
  return set_attribute(algo_attributes, algo, attr, buf, size);
}
ABI_CHECK(cublasLtMatmulAlgoConfigSetAttribute);

cublasStatus_t IMPL(cublasLtMatmulAlgoConfigGetAttribute)(const cublasLtMatmulAlgo_t *algo,
                                                          cublasLtMatmulAlgoConfigAttributes_t attr,
                                                          void *buf, size_t size, size_t *written) {
  if (!algo || (size == 0 && !written))
    return CUBLAS_STATUS_INVALID_VALUE;
  cublasStatus_t status = get_attribute(algo_attributes, algo, attr, buf, size, written);
  /* Sizes must match exactly, as NVIDIA's. */
  if (status == CUBLAS_STATUS_SUCCESS && size &&
      size != find_attribute(algo_attributes, attr)->size)
    return CUBLAS_STATUS_INVALID_VALUE;
  return status;
}
ABI_CHECK(cublasLtMatmulAlgoConfigGetAttribute);

cublasStatus_t IMPL(cublasLtMatmulAlgoCheck)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                             cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                             cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                             const cublasLtMatmulAlgo_t *algo,
                                             cublasLtMatmulHeuristicResult_t *result) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!algo || !result)
    return CUBLAS_STATUS_INVALID_VALUE;
  int64_t m, n, k;
  cublasStatus_t status = check((struct desc *)desc, (struct layout *)a, (struct layout *)b,
                                (struct layout *)c, (struct layout *)d, &m, &n, &k);
  if (status != CUBLAS_STATUS_SUCCESS)
    return status;
  cublasLtMatmulAlgo_t kept = *algo; /* algo may be result->algo, never updated */
  memset(result, 0, sizeof *result);
  result->algo = kept;
  result->workspaceSize = 0;
  result->state = CUBLAS_STATUS_SUCCESS;
  result->wavesCount = 1.0f;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatmulAlgoCheck);

cublasStatus_t
IMPL(cublasLtMatmulAlgoGetHeuristic)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                     cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                     cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                     cublasLtMatmulPreference_t pref, int requested,
                                     cublasLtMatmulHeuristicResult_t results[], int *count) {
  (void)pref;
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (requested <= 0 || !results || !count)
    return CUBLAS_STATUS_INVALID_VALUE;
  int64_t m, n, k;
  cublasStatus_t status = check((struct desc *)desc, (struct layout *)a, (struct layout *)b,
                                (struct layout *)c, (struct layout *)d, &m, &n, &k);
  *count = 0;
  if (status != CUBLAS_STATUS_SUCCESS)
    return status == CUBLAS_STATUS_INVALID_VALUE ? status : CUBLAS_STATUS_NOT_SUPPORTED;
  memset(&results[0], 0, sizeof results[0]);
  algo_init(&results[0].algo, 0); /* the host BLAS */
  results[0].workspaceSize = 0;
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *count = 1;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatmulAlgoGetHeuristic);

/* Strided, or (BATCH_MODE_POINTER_ARRAY) `ptr` is the device array of each
 * batch's pointer. */
static struct zmlir_operand lt_operand(const void *ptr, const struct layout *l) {
  struct zmlir_operand o = {ptr, NULL, l->type, l->ld, l->batch > 1 ? l->stride : 0};
  if (l->batch_mode == CUBLASLT_BATCH_MODE_POINTER_ARRAY)
    o.ptr = NULL, o.array = (const void *const *)ptr, o.stride = 0;
  return o;
}

struct complex_matmul {
  struct zmlir_job job;
  int32_t transa, transb, scale;
  int64_t m, n, k;
  struct layout a, b, c, d;
  const void *pa, *pb, *pc;
  void *pd;
  struct zmlir_scalar alpha, beta;
};

/* Where element e's real and imaginary parts are, and their size. */
static size_t complex_parts(const struct layout *l, const void *p, int64_t e, const char **re,
                            const char **im) {
  size_t part = l->type == CUDA_C_16F ? 2 : l->type == CUDA_C_32F ? 4 : 8;
  if (l->plane_offset) {
    *re = (const char *)p + e * (int64_t)part;
    *im = *re + l->plane_offset;
  } else {
    *re = (const char *)p + e * 2 * (int64_t)part;
    *im = *re + part;
  }
  return part;
}

static double complex_part(const char *at, size_t part) {
  return part == 2   ? (double)*(const _Float16 *)at
         : part == 4 ? *(const float *)at
                     : *(const double *)at;
}

/* A rows x cols operand of batch b as interleaved complex double. */
static double *complex_load(const struct layout *l, const void *p, int64_t rows, int64_t cols,
                            int64_t b) {
  double *out = malloc(sizeof(double) * 2 * (size_t)(rows * cols > 0 ? rows * cols : 1));
  for (int64_t j = 0; out && j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) {
      const char *re, *im;
      size_t part = complex_parts(l, p, b * l->stride + j * l->ld + i, &re, &im);
      out[2 * (j * rows + i)] = complex_part(re, part);
      out[2 * (j * rows + i) + 1] = complex_part(im, part);
    }
  return out;
}

static void complex_store(const struct layout *l, void *p, const double *v, int64_t rows,
                          int64_t cols, int64_t b) {
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) {
      const char *re, *im;
      size_t part = complex_parts(l, p, b * l->stride + j * l->ld + i, &re, &im);
      char *parts[2] = {(char *)re, (char *)im};
      for (int x = 0; x < 2; ++x) {
        double value = v[2 * (j * rows + i) + x];
        if (part == 2)
          *(_Float16 *)parts[x] = (_Float16)(float)value;
        else if (part == 4)
          *(float *)parts[x] = (float)value;
        else
          *(double *)parts[x] = value;
      }
    }
}

static void complex_matmul_run(struct zmlir_job *job) {
  struct complex_matmul *g = (struct complex_matmul *)job;
  double alpha[2], beta[2];
  for (int x = 0; x < 2; ++x) {
    alpha[x] = g->scale == CUDA_C_32F ? ((const float *)g->alpha.at)[x]
                                      : ((const double *)g->alpha.at)[x];
    beta[x] = g->scale == CUDA_C_32F ? ((const float *)g->beta.at)[x]
                                     : ((const double *)g->beta.at)[x];
  }
  int64_t arows = g->transa == CUBLAS_OP_N ? g->m : g->k,
          acols = g->transa == CUBLAS_OP_N ? g->k : g->m;
  int64_t brows = g->transb == CUBLAS_OP_N ? g->k : g->n,
          bcols = g->transb == CUBLAS_OP_N ? g->n : g->k;
  int64_t batch = g->d.batch > 0 ? g->d.batch : 1;
  for (int64_t b = 0; b < batch; ++b) {
    double *a = complex_load(&g->a, g->pa, arows, acols, b);
    double *bm = complex_load(&g->b, g->pb, brows, bcols, b);
    double *c = beta[0] != 0 || beta[1] != 0 ? complex_load(&g->c, g->pc, g->m, g->n, b)
                                             : calloc(2 * (size_t)(g->m * g->n), sizeof(double));
    if (a && bm && c) {
      CBLAS_TRANSPOSE ta = g->transa == CUBLAS_OP_N   ? CblasNoTrans
                           : g->transa == CUBLAS_OP_T ? CblasTrans
                                                      : CblasConjTrans;
      CBLAS_TRANSPOSE tb = g->transb == CUBLAS_OP_N   ? CblasNoTrans
                           : g->transb == CUBLAS_OP_T ? CblasTrans
                                                      : CblasConjTrans;
      CBLAS(zgemm)(CblasColMajor, ta, tb, (int)g->m, (int)g->n, (int)g->k, alpha, a,
                   (int)(arows > 1 ? arows : 1), bm, (int)(brows > 1 ? brows : 1), beta, c,
                   (int)(g->m > 1 ? g->m : 1));
      complex_store(&g->d, g->pd, c, g->m, g->n, b);
    } /* out of host memory: D is left as it was */
    free(a), free(bm), free(c);
  }
}

static cublasStatus_t complex_matmul(const struct desc *d, const void *alpha, const void *A,
                                     const struct layout *a, const void *B, const struct layout *b,
                                     const void *beta, const void *C, const struct layout *c,
                                     void *D, const struct layout *dl, int64_t m, int64_t n,
                                     int64_t k, CUstream stream) {
  if (a->batch_mode != CUBLASLT_BATCH_MODE_STRIDED || m > INT32_MAX || n > INT32_MAX ||
      k > INT32_MAX)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (m == 0 || n == 0)
    return CUBLAS_STATUS_SUCCESS;
  struct complex_matmul *g = calloc(1, sizeof *g);
  if (!g)
    return CUBLAS_STATUS_ALLOC_FAILED;
  g->job.run = complex_matmul_run;
  g->transa = d->transa, g->transb = d->transb, g->scale = d->scale;
  g->m = m, g->n = n, g->k = k;
  g->a = *a, g->b = *b, g->c = *c, g->d = *dl;
  g->pa = A, g->pb = B, g->pc = C, g->pd = D;
  int device = d->pointer_mode == CUBLASLT_POINTER_MODE_DEVICE;
  size_t size = d->scale == CUDA_C_32F ? 8 : 16;
  zmlir_scalar_set(&g->alpha, alpha, size, device);
  zmlir_scalar_set(&g->beta, beta, size, device);
  return zmlir_submit(stream, &g->job, 0);
}

cublasStatus_t IMPL(cublasLtMatmul)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                    const void *alpha, const void *A, cublasLtMatrixLayout_t adesc,
                                    const void *B, cublasLtMatrixLayout_t bdesc, const void *beta,
                                    const void *C, cublasLtMatrixLayout_t cdesc, void *D,
                                    cublasLtMatrixLayout_t ddesc, const cublasLtMatmulAlgo_t *algo,
                                    void *workspace, size_t workspace_bytes, cudaStream_t stream) {
  (void)algo, (void)workspace, (void)workspace_bytes;
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  const struct desc *d = (const struct desc *)desc;
  const struct layout *a = (const struct layout *)adesc, *b = (const struct layout *)bdesc,
                      *c = (const struct layout *)cdesc, *dl = (const struct layout *)ddesc;
  int64_t m, n, k;
  cublasStatus_t status = check(d, a, b, c, dl, &m, &n, &k);
  if (status != CUBLAS_STATUS_SUCCESS)
    return status;
  if (!alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  int flags = epilogue_flags(d->epilogue);
  /* NVIDIA's refuses a bias pointer that the epilogue would not use (H200:
   * "NOT allowed for EPILOGUE_DEFAULT"). */
  if (flags >= 0 && d->bias && !(flags & (ZMLIR_EPI_BIAS | ZMLIR_EPI_BGRADB)))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (((flags & (ZMLIR_EPI_BIAS | ZMLIR_EPI_BGRADB)) && !d->bias) ||
      ((flags & ZMLIR_EPI_AUX) && (!d->aux || d->aux_ld < (m > 1 ? m : 1))))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (lt_complex_scale(d->scale))
    return complex_matmul(d, alpha, A, a, B, b, beta, C, c, D, dl, m, n, k, (CUstream)stream);
  struct zmlir_gemm *g = calloc(1, sizeof *g);
  if (!g)
    return CUBLAS_STATUS_ALLOC_FAILED;
  g->transa = d->transa, g->transb = d->transb;
  g->m = m, g->n = n, g->k = k, g->batch = dl->batch > 0 ? dl->batch : 1;
  g->a = lt_operand(A, a), g->b = lt_operand(B, b), g->c = lt_operand(C, c);
  g->d = lt_operand(D, dl);
  g->scale_type = d->scale;
  int device = d->pointer_mode == CUBLASLT_POINTER_MODE_DEVICE;
  zmlir_scalar_set(&g->alpha, alpha, zmlir_type_size(d->scale), device);
  zmlir_scalar_set(&g->beta, beta, zmlir_type_size(d->scale), device);
  g->epilogue = flags;
  g->scale_a = d->scale_a, g->scale_b = d->scale_b, g->scale_c = d->scale_c;
  g->scale_d = d->scale_d, g->amax_d = (float *)d->amax_d, g->fp8 = 1;
  g->bias = d->bias;
  g->bias_type = d->bias_type >= 0 ? (cudaDataType_t)d->bias_type : dl->type;
  g->bias_stride = d->bias_stride;
  struct zmlir_operand aux = {d->aux, NULL,
                              d->aux_type >= 0 ? (cudaDataType_t)d->aux_type : dl->type, d->aux_ld,
                              d->aux_stride};
  g->aux = aux;
  /* A bias or aux matrix in use: of a type we write (FP8's D type is no bias type). */
  if ((g->bias && !zmlir_type_supported(g->bias_type)) ||
      ((flags & ZMLIR_EPI_AUX) && !zmlir_type_supported(g->aux.type))) {
    free(g);
    return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  return zmlir_gemm_submit((CUstream)stream, g);
}
ABI_CHECK(cublasLtMatmul);

/* -- matrix transforms: C = alpha op(A) + beta op(B), between orders ---------------- */

struct transform_desc {
  int32_t scale, pointer_mode, transa, transb;
};
_Static_assert(sizeof(struct transform_desc) <= sizeof(cublasLtMatrixTransformDescOpaque_t),
               "transform");

static const struct attribute transform_attributes[] = {
    ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_SCALE_TYPE, struct transform_desc, scale),
    ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE, struct transform_desc, pointer_mode),
    ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, struct transform_desc, transa),
    ATTR(CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB, struct transform_desc, transb),
    {-1, 0, 0}};

cublasStatus_t IMPL(cublasLtMatrixTransformDescInit_internal)(cublasLtMatrixTransformDesc_t desc,
                                                              size_t size, cudaDataType scale) {
  if (!desc || size < sizeof(struct transform_desc))
    return CUBLAS_STATUS_ALLOC_FAILED;
  memset(desc, 0, size);
  struct transform_desc *t = (struct transform_desc *)desc;
  t->scale = scale, t->pointer_mode = CUBLASLT_POINTER_MODE_HOST;
  t->transa = t->transb = CUBLAS_OP_N;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatrixTransformDescInit_internal);

cublasStatus_t IMPL(cublasLtMatrixTransformDescCreate)(cublasLtMatrixTransformDesc_t *desc,
                                                       cudaDataType scale) {
  if (!desc)
    return CUBLAS_STATUS_INVALID_VALUE;
  cublasLtMatrixTransformDesc_t t = malloc(sizeof *t);
  if (!t)
    return CUBLAS_STATUS_ALLOC_FAILED;
  IMPL(cublasLtMatrixTransformDescInit_internal)(t, sizeof *t, scale);
  *desc = t;
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatrixTransformDescCreate);

cublasStatus_t IMPL(cublasLtMatrixTransformDescDestroy)(cublasLtMatrixTransformDesc_t desc) {
  free(desc);
  return CUBLAS_STATUS_SUCCESS;
}
ABI_CHECK(cublasLtMatrixTransformDescDestroy);

cublasStatus_t
IMPL(cublasLtMatrixTransformDescSetAttribute)(cublasLtMatrixTransformDesc_t desc,
                                              cublasLtMatrixTransformDescAttributes_t attr,
                                              const void *buf, size_t size) {
  return set_attribute(transform_attributes, desc, attr, buf, size);
}
ABI_CHECK(cublasLtMatrixTransformDescSetAttribute);

cublasStatus_t
IMPL(cublasLtMatrixTransformDescGetAttribute)(cublasLtMatrixTransformDesc_t desc,
                                              cublasLtMatrixTransformDescAttributes_t attr,
                                              void *buf, size_t size, size_t *written) {
  return get_attribute(transform_attributes, desc, attr, buf, size, written);
}
ABI_CHECK(cublasLtMatrixTransformDescGetAttribute);

/* The element types a transform reads and writes (in double, exactly). */
static int transform_type(cudaDataType_t type) {
  return type == CUDA_R_32F || type == CUDA_R_64F || type == CUDA_R_16F || type == CUDA_R_16BF ||
         type == CUDA_R_8I || type == CUDA_R_32I;
}

/* Where element (i, j) of batch b lives: COL, ROW, or COL32 (tiles of 32
 * columns, row-major inside, `ld` elements between tiles). */
static int64_t element_at(const struct layout *l, int64_t i, int64_t j, int64_t b) {
  int64_t base = b * l->stride;
  switch (l->order) {
  case CUBLASLT_ORDER_ROW:
    return base + i * l->ld + j;
  case CUBLASLT_ORDER_COL32:
    return base + (j / 32) * l->ld + i * 32 + j % 32;
  default:
    return base + j * l->ld + i;
  }
}

static double read_element(const void *p, cudaDataType_t type, int64_t at) {
  switch (type) {
  case CUDA_R_8I:
    return ((const int8_t *)p)[at];
  case CUDA_R_32I:
    return ((const int32_t *)p)[at];
  case CUDA_R_64F:
    return ((const double *)p)[at];
  default: {
    struct zmlir_scalar s;
    zmlir_scalar_set(&s, (const char *)p + at * (int64_t)zmlir_type_size(type),
                     zmlir_type_size(type), 0);
    return zmlir_scalar_value(&s, type);
  }
  }
}

/* Integers: rounded to nearest, saturated (as NVIDIA's conversions). */
static void write_element(void *p, cudaDataType_t type, int64_t at, double v) {
  switch (type) {
  case CUDA_R_8I:
    v = nearbyint(v);
    ((int8_t *)p)[at] = (int8_t)(v > 127 ? 127 : v < -128 ? -128 : v);
    break;
  case CUDA_R_32I:
    v = nearbyint(v);
    ((int32_t *)p)[at] = (int32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
    break;
  case CUDA_R_64F:
    ((double *)p)[at] = v;
    break;
  case CUDA_R_32F:
    ((float *)p)[at] = (float)v;
    break;
  case CUDA_R_16F:
    ((_Float16 *)p)[at] = (_Float16)(float)v;
    break;
  default: { /* bf16: round to nearest even through f32 */
    float f = (float)v;
    uint32_t w;
    memcpy(&w, &f, sizeof w);
    w = isnan(f) ? 0x7fff0000u : w + 0x7fff + ((w >> 16) & 1);
    ((uint16_t *)p)[at] = (uint16_t)(w >> 16);
  }
  }
}

struct transform {
  struct zmlir_job job;
  struct transform_desc desc;
  struct layout a, b, c;
  const void *pa, *pb;
  void *pc;
  struct zmlir_scalar alpha, beta;
};

static double transform_scalar(const struct zmlir_scalar *s, cudaDataType_t type) {
  if (type == CUDA_R_32I)
    return *(const int32_t *)s->at;
  return zmlir_scalar_value(s, type);
}

static void transform_run(struct zmlir_job *job) {
  struct transform *t = (struct transform *)job;
  double alpha = transform_scalar(&t->alpha, t->desc.scale);
  double beta = transform_scalar(&t->beta, t->desc.scale);
  int64_t batch = t->c.batch > 0 ? t->c.batch : 1;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < (int64_t)t->c.cols; ++j)
      for (int64_t i = 0; i < (int64_t)t->c.rows; ++i) {
        double v = 0; /* a zero scalar leaves its matrix unread (it may be NULL) */
        if (alpha != 0)
          v += alpha * read_element(t->pa, t->a.type,
                                    t->desc.transa == CUBLAS_OP_N ? element_at(&t->a, i, j, b)
                                                                  : element_at(&t->a, j, i, b));
        if (beta != 0)
          v += beta * read_element(t->pb, t->b.type,
                                   t->desc.transb == CUBLAS_OP_N ? element_at(&t->b, i, j, b)
                                                                 : element_at(&t->b, j, i, b));
        write_element(t->pc, t->c.type, element_at(&t->c, i, j, b), v);
      }
}

/* An operand's checks: its shape op(X) is C's, its order one we lay out. */
static cublasStatus_t transform_operand(const struct layout *x, int32_t op,
                                        const struct layout *c) {
  uint64_t rows = op == CUBLAS_OP_N ? x->rows : x->cols,
           cols = op == CUBLAS_OP_N ? x->cols : x->rows;
  if (rows != c->rows || cols != c->cols || (x->batch > 1 && x->batch != c->batch))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (!transform_type(x->type) ||
      (x->order != CUBLASLT_ORDER_COL && x->order != CUBLASLT_ORDER_ROW &&
       x->order != CUBLASLT_ORDER_COL32) ||
      x->plane_offset || x->batch_mode != CUBLASLT_BATCH_MODE_STRIDED)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t IMPL(cublasLtMatrixTransform)(cublasLtHandle_t handle,
                                             cublasLtMatrixTransformDesc_t desc, const void *alpha,
                                             const void *A, cublasLtMatrixLayout_t adesc,
                                             const void *beta, const void *B,
                                             cublasLtMatrixLayout_t bdesc, void *C,
                                             cublasLtMatrixLayout_t cdesc, cudaStream_t stream) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  const struct transform_desc *d = (const struct transform_desc *)desc;
  if (!d || !cdesc || !C || !alpha || !beta || (A && !adesc) || (B && !bdesc))
    return CUBLAS_STATUS_INVALID_VALUE;
  struct layout none = *(const struct layout *)cdesc; /* an absent operand */
  const struct layout *a = adesc ? (const struct layout *)adesc : &none;
  const struct layout *b = bdesc ? (const struct layout *)bdesc : &none;
  const struct layout *c = (const struct layout *)cdesc;
  cublasStatus_t status = transform_operand(c, CUBLAS_OP_N, c);
  if (status == CUBLAS_STATUS_SUCCESS && A)
    status = transform_operand(a, d->transa, c);
  if (status == CUBLAS_STATUS_SUCCESS && B)
    status = transform_operand(b, d->transb, c);
  if (status != CUBLAS_STATUS_SUCCESS)
    return status;
  if ((d->scale != CUDA_R_32F && d->scale != CUDA_R_64F && d->scale != CUDA_R_32I) ||
      (d->transa != CUBLAS_OP_N && d->transa != CUBLAS_OP_T) ||
      (d->transb != CUBLAS_OP_N && d->transb != CUBLAS_OP_T))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  struct transform *t = calloc(1, sizeof *t);
  if (!t)
    return CUBLAS_STATUS_ALLOC_FAILED;
  t->job.run = transform_run;
  t->desc = *d, t->a = *a, t->b = *b, t->c = *c;
  t->pa = A, t->pb = B, t->pc = C;
  int device = d->pointer_mode == CUBLASLT_POINTER_MODE_DEVICE;
  size_t size = d->scale == CUDA_R_32I ? 4 : zmlir_type_size(d->scale);
  zmlir_scalar_set(&t->alpha, alpha, size, device);
  zmlir_scalar_set(&t->beta, beta, size, device);
  /* An absent operand is never read: its scalar must be zero. */
  if (!A)
    memset(&t->alpha, 0, sizeof t->alpha), t->alpha.at = t->alpha.bytes;
  if (!B)
    memset(&t->beta, 0, sizeof t->beta), t->beta.at = t->beta.bytes;
  return zmlir_submit((CUstream)stream, &t->job, 0);
}
ABI_CHECK(cublasLtMatrixTransform);
