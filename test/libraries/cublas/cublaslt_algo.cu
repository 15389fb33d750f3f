// cuBLASLt's algorithm API and pointer-array batches through our
// libcublasLt.so.13: ids, cublasLtMatmulAlgoInit, the configuration's
// attributes (kept, sizes checked, the id read-only), cublasLtMatmulAlgoCheck,
// a matmul with a preset algorithm, a batch of pointer arrays, and matrix
// transforms between orders and types, each checked against a reference loop
// of ours; FP8 matmuls with their scales and amax against NVIDIA's header
// conversions.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "../check.h"
#include "../report.h"

static unsigned seed = 7;

static std::vector<float> random_matrix(int count) {
  std::vector<float> v(count);
  for (auto &x : v)
    x = (float)frand(seed);
  return v;
}

// D = alpha A B + beta C, column-major, no transposes.
static std::vector<float> reference(int m, int n, int k, float alpha, const float *a,
                                    const float *b, float beta, const float *c) {
  std::vector<float> d(m * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int l = 0; l < k; ++l)
        sum += (double)a[l * m + i] * b[j * k + l];
      d[j * m + i] = (float)(alpha * sum + beta * c[j * m + i]);
    }
  return d;
}

static bool same(const float *got, const std::vector<float> &want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-4f * (1 + std::fabs(want[i]))))
      return false;
  return true;
}

static void test_algo(cublasLtHandle_t lt) {
  int ids[4], count = 0;
  CHECK(cublasLtMatmulAlgoGetIds(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                                 CUDA_R_32F, CUDA_R_32F, 4, ids, &count));
  report("AlgoGetIds f32", count >= 1);
  cublasLtMatmulAlgo_t algo;
  CHECK(cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                               CUDA_R_32F, CUDA_R_32F, ids[0], &algo));
  int32_t id = -1, splitk = 0;
  size_t written = 0;
  CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id,
                                             &written));
  CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                             sizeof splitk, nullptr));
  report("AlgoInit: the id, split-K 1", id == ids[0] && splitk == 1 && written == sizeof id);
  uint32_t tile = CUBLASLT_MATMUL_TILE_64x64, reduction = CUBLASLT_REDUCTION_SCHEME_INPLACE;
  splitk = 4;
  CHECK(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                             sizeof tile));
  CHECK(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                             sizeof splitk));
  CHECK(cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                                             &reduction, sizeof reduction));
  uint32_t tile_back = 0;
  int32_t splitk_back = 0;
  CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile_back,
                                             sizeof tile_back, nullptr));
  CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk_back,
                                             sizeof splitk_back, nullptr));
  report("AlgoConfig kept", tile_back == tile && splitk_back == 4);
  size_t needed = 0;
  CHECK(cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, nullptr, 0,
                                             &needed));
  report("AlgoConfig size query", needed == sizeof(uint16_t));
  uint64_t wide = 0;
  report("AlgoConfig wrong size",
         cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &wide,
                                              sizeof wide) == CUBLAS_STATUS_INVALID_VALUE);
  report("AlgoConfig id read-only",
         cublasLtMatmulAlgoConfigSetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id) ==
             CUBLAS_STATUS_INVALID_VALUE);
  report("AlgoInit int8 to f16 unsupported",
         cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32I, CUDA_R_32I, CUDA_R_8I, CUDA_R_8I,
                                CUDA_R_16F, CUDA_R_16F, 0, &algo) == CUBLAS_STATUS_NOT_SUPPORTED);

  // The preset algorithm runs the product.
  CHECK(cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F,
                               CUDA_R_32F, CUDA_R_32F, ids[0], &algo));
  const int m = 5, n = 4, k = 3;
  std::vector<float> a = random_matrix(m * k), b = random_matrix(k * n), c = random_matrix(m * n);
  float *da, *db, *dc;
  CHECK(cudaMallocManaged(&da, a.size() * 4));
  CHECK(cudaMallocManaged(&db, b.size() * 4));
  CHECK(cudaMallocManaged(&dc, c.size() * 4));
  std::copy(a.begin(), a.end(), da), std::copy(b.begin(), b.end(), db);
  std::copy(c.begin(), c.end(), dc);
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t la, lb, lc;
  CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, m, k, m));
  CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, k));
  CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, m, n, m));
  cublasLtMatmulHeuristicResult_t result;
  CHECK(cublasLtMatmulAlgoCheck(lt, desc, la, lb, lc, lc, &algo, &result));
  report("AlgoCheck", result.state == CUBLAS_STATUS_SUCCESS && result.workspaceSize == 0);
  float alpha = 1.5f, beta = -0.5f;
  CHECK(cublasLtMatmul(lt, desc, &alpha, da, la, db, lb, &beta, dc, lc, dc, lc, &algo, nullptr, 0,
                       0));
  CHECK(cudaDeviceSynchronize());
  report("Matmul with a preset algo",
         same(dc, reference(m, n, k, alpha, a.data(), b.data(), beta, c.data())));
  cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  cudaFree(da), cudaFree(db), cudaFree(dc);
}

// Three products of one shape, each matrix through a device array of pointers.
static void test_pointer_array(cublasLtHandle_t lt) {
  const int m = 3, n = 4, k = 2, batch = 3;
  float **arrays;
  CHECK(cudaMallocManaged(&arrays, 4 * batch * sizeof(float *)));
  std::vector<std::vector<float>> want;
  for (int i = 0; i < batch; ++i) {
    std::vector<float> a = random_matrix(m * k), b = random_matrix(k * n), c = random_matrix(m * n);
    float *p[4];
    const std::vector<float> *sources[3] = {&a, &b, &c};
    for (int j = 0; j < 4; ++j) {
      size_t count = j == 0 ? a.size() : j == 1 ? b.size() : c.size();
      CHECK(cudaMallocManaged(&p[j], count * 4));
      if (j < 3)
        std::copy(sources[j]->begin(), sources[j]->end(), p[j]);
      arrays[j * batch + i] = p[j];
    }
    want.push_back(reference(m, n, k, 2.0f, a.data(), b.data(), 1.0f, c.data()));
  }
  cublasLtMatmulDesc_t desc;
  CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtMatrixLayout_t layouts[4];
  int rows[4] = {m, k, m, m}, cols[4] = {k, n, n, n};
  uint32_t mode = CUBLASLT_BATCH_MODE_POINTER_ARRAY;
  int32_t count = batch;
  for (int j = 0; j < 4; ++j) {
    CHECK(cublasLtMatrixLayoutCreate(&layouts[j], CUDA_R_32F, rows[j], cols[j], rows[j]));
    CHECK(cublasLtMatrixLayoutSetAttribute(layouts[j], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                           sizeof count));
    CHECK(cublasLtMatrixLayoutSetAttribute(layouts[j], CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode,
                                           sizeof mode));
  }
  float alpha = 2, beta = 1;
  CHECK(cublasLtMatmul(lt, desc, &alpha, arrays, layouts[0], arrays + batch, layouts[1], &beta,
                       arrays + 2 * batch, layouts[2], arrays + 3 * batch, layouts[3], nullptr,
                       nullptr, 0, 0));
  CHECK(cudaDeviceSynchronize());
  bool ok = true;
  for (int i = 0; i < batch; ++i)
    ok = ok && same(arrays[3 * batch + i], want[i]);
  report("pointer-array batch", ok);
  uint32_t strided = CUBLASLT_BATCH_MODE_STRIDED;
  CHECK(cublasLtMatrixLayoutSetAttribute(layouts[0], CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &strided,
                                         sizeof strided));
  report("strided and pointer arrays mixed",
         cublasLtMatmul(lt, desc, &alpha, arrays, layouts[0], arrays + batch, layouts[1], &beta,
                        arrays + 2 * batch, layouts[2], arrays + 3 * batch, layouts[3], nullptr,
                        nullptr, 0, 0) == CUBLAS_STATUS_NOT_SUPPORTED);
  for (int j = 0; j < 4; ++j)
    cublasLtMatrixLayoutDestroy(layouts[j]);
  cublasLtMatmulDescDestroy(desc);
  for (int i = 0; i < 4 * batch; ++i)
    cudaFree(arrays[i]);
  cudaFree(arrays);
}

// C = alpha op(A) + beta op(B) between orders (COL, ROW, COL32) and types.
static void test_transform(cublasLtHandle_t lt) {
  const int rows = 3, cols = 40; // two COL32 tiles
  std::vector<float> a = random_matrix(rows * cols), b = random_matrix(rows * cols);
  float *da, *db, *dc;
  int8_t *d8;
  CHECK(cudaMallocManaged(&da, a.size() * 4));
  CHECK(cudaMallocManaged(&db, b.size() * 4));
  CHECK(cudaMallocManaged(&dc, a.size() * 4));
  CHECK(cudaMallocManaged(&d8, 64 * rows));
  std::copy(a.begin(), a.end(), da), std::copy(b.begin(), b.end(), db);
  cublasLtMatrixTransformDesc_t desc;
  CHECK(cublasLtMatrixTransformDescCreate(&desc, CUDA_R_32F));
  cublasLtMatrixLayout_t la, lb, lc, l8;
  CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, rows, cols, rows)); // COL
  CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, cols, rows, cols)); // B^T, COL
  CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, rows, cols, cols)); // ROW
  int32_t row = CUBLASLT_ORDER_ROW, col32 = CUBLASLT_ORDER_COL32,
          tiled = CUBLASLT_ORDER_COL4_4R2_8C;
  CHECK(cublasLtMatrixLayoutSetAttribute(lc, CUBLASLT_MATRIX_LAYOUT_ORDER, &row, sizeof row));
  int32_t trans = CUBLAS_OP_T;
  CHECK(cublasLtMatrixTransformDescSetAttribute(desc, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSB, &trans,
                                                sizeof trans));
  float alpha = 2, beta = -1;
  CHECK(cublasLtMatrixTransform(lt, desc, &alpha, da, la, &beta, db, lb, dc, lc, 0));
  CHECK(cudaDeviceSynchronize());
  bool ok = true;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      ok = ok && std::fabs(dc[i * cols + j] - (2 * a[j * rows + i] - b[i * cols + j])) < 1e-5f;
  report("MatrixTransform COL + COL^T to ROW", ok);
  // To int8 in COL32 tiles: rounded, saturated; alpha in device memory.
  for (int i = 0; i < rows * cols; ++i)
    da[i] = i % 4 == 0 ? 200.0f : i % 4 == 1 ? -300.0f : (float)(i % 7) - 3.4f;
  CHECK(cublasLtMatrixLayoutCreate(&l8, CUDA_R_8I, rows, cols, 32 * rows));
  CHECK(cublasLtMatrixLayoutSetAttribute(l8, CUBLASLT_MATRIX_LAYOUT_ORDER, &col32, sizeof col32));
  int32_t device = CUBLASLT_POINTER_MODE_DEVICE;
  CHECK(cublasLtMatrixTransformDescSetAttribute(desc, CUBLASLT_MATRIX_TRANSFORM_DESC_POINTER_MODE,
                                                &device, sizeof device));
  float *scalars;
  CHECK(cudaMallocManaged(&scalars, 2 * sizeof(float)));
  scalars[0] = 1, scalars[1] = 0;
  CHECK(
      cublasLtMatrixTransform(lt, desc, scalars, da, la, scalars + 1, nullptr, nullptr, d8, l8, 0));
  CHECK(cudaDeviceSynchronize());
  ok = true;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      float v = std::nearbyint(da[j * rows + i]);
      int want = v > 127 ? 127 : v < -128 ? -128 : (int)v;
      ok = ok && d8[(j / 32) * 32 * rows + i * 32 + j % 32] == want;
    }
  report("MatrixTransform f32 to int8 COL32", ok);
  CHECK(cublasLtMatrixLayoutSetAttribute(l8, CUBLASLT_MATRIX_LAYOUT_ORDER, &tiled, sizeof tiled));
  report("MatrixTransform COL4_4R2_8C unsupported",
         cublasLtMatrixTransform(lt, desc, scalars, da, la, scalars + 1, nullptr, nullptr, d8, l8,
                                 0) == CUBLAS_STATUS_NOT_SUPPORTED);
  cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc), cublasLtMatrixLayoutDestroy(l8);
  cublasLtMatrixTransformDescDestroy(desc);
  cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(d8), cudaFree(scalars);
}

// D (E4M3) = scale_d (alpha scale_a scale_b A^T B + beta scale_c C (bf16)),
// amax_d the largest |value| before scale_d; D saturates at 448.
static void test_fp8(cublasLtHandle_t lt) {
  const int m = 4, n = 3, k = 8;
  __nv_fp8_e4m3 *a, *b, *d;
  __nv_bfloat16 *c;
  float *scales; // a, b, c, d, amax
  CHECK(cudaMallocManaged(&a, k * m));
  CHECK(cudaMallocManaged(&b, k * n));
  CHECK(cudaMallocManaged(&d, m * n));
  CHECK(cudaMallocManaged(&c, m * n * sizeof(__nv_bfloat16)));
  CHECK(cudaMallocManaged(&scales, 5 * sizeof(float)));
  for (int i = 0; i < k * m; ++i)
    a[i] = __nv_fp8_e4m3((float)frand(seed) * 4);
  for (int i = 0; i < k * n; ++i)
    b[i] = __nv_fp8_e4m3((float)frand(seed) * 4);
  for (int i = 0; i < m * n; ++i)
    c[i] = __float2bfloat16((float)frand(seed));
  scales[0] = 0.5f, scales[1] = 2.0f, scales[2] = 4.0f, scales[3] = 8.0f, scales[4] = -1;
  // Column 0 of B large: those products saturate.
  for (int l = 0; l < k; ++l)
    b[l] = __nv_fp8_e4m3(l % 2 ? 448.0f : 400.0f);
  float alpha = 0.75f, beta = 0.5f;
  std::vector<double> v(m * n);
  double amax = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int l = 0; l < k; ++l)
        sum += (double)(float)a[i * k + l] * (double)(float)b[j * k + l];
      v[j * m + i] = alpha * 0.5 * 2.0 * sum + beta * 4.0 * __bfloat162float(c[j * m + i]);
      amax = std::max(amax, std::fabs(v[j * m + i]));
    }
  cublasLtMatmulDesc_t desc;
  CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  int32_t t = CUBLAS_OP_T;
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
  cublasLtMatmulDescAttributes_t which[5] = {
      CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
      CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
      CUBLASLT_MATMUL_DESC_AMAX_D_POINTER};
  for (int i = 0; i < 5; ++i) {
    void *p = scales + i;
    CHECK(cublasLtMatmulDescSetAttribute(desc, which[i], &p, sizeof p));
  }
  cublasLtMatrixLayout_t la, lb, lc, ld;
  CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, k, m, k));
  CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, k, n, k));
  CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, m, n, m));
  CHECK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_8F_E4M3, m, n, m));
  CHECK(
      cublasLtMatmul(lt, desc, &alpha, a, la, b, lb, &beta, c, lc, d, ld, nullptr, nullptr, 0, 0));
  CHECK(cudaDeviceSynchronize());
  bool ok = true, saturated = true;
  int large = 0;
  for (int i = 0; i < m * n; ++i) {
    // The nearest E4M3 (NVIDIA's conversion, saturating), or its neighbour
    // where f32 and double round a tie apart.
    __nv_fp8_e4m3 want(__nv_fp8_e4m3((float)(v[i] * 8.0)));
    int got_bits = d[i].__x, want_bits = want.__x;
    ok = ok && (got_bits == want_bits ||
                ((got_bits ^ want_bits) < 0x80 && std::abs(got_bits - want_bits) <= 1));
    if (std::fabs(v[i] * 8.0) > 448)
      ++large, saturated = saturated && std::fabs((float)d[i]) == 448.0f;
  }
  report("FP8 E4M3 matmul with scales", ok);
  report("FP8 saturates at 448", saturated && large > 0, std::to_string(large));
  report("FP8 amax_d", std::fabs(scales[4] - amax) <= 1e-5 * amax,
         std::to_string(scales[4]) + " vs " + std::to_string(amax));
  cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc), cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(desc);
  cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(d), cudaFree(scales);
}

// Complex matmuls: C_16F planar (real and imaginary planes PLANE_OFFSET
// bytes apart), OP_C on A; C_64F interleaved in a strided batch of two.
typedef std::complex<double> cd;
static void test_complex(cublasLtHandle_t lt) {
  const int m = 3, n = 2, k = 4;
  // A is k x m (op C), planes of k*m halves; B k x n, C m x n, likewise.
  __half *a, *b, *c;
  CHECK(cudaMallocManaged(&a, 2 * k * m * sizeof(__half)));
  CHECK(cudaMallocManaged(&b, 2 * k * n * sizeof(__half)));
  CHECK(cudaMallocManaged(&c, 2 * m * n * sizeof(__half)));
  std::vector<cd> am(k * m), bm(k * n), cm(m * n);
  auto fill = [](__half *p, std::vector<cd> &v) {
    int count = (int)v.size();
    for (int i = 0; i < count; ++i) {
      p[i] = __float2half((float)frand(seed)), p[count + i] = __float2half((float)frand(seed));
      v[i] = cd(__half2float(p[i]), __half2float(p[count + i]));
    }
  };
  fill(a, am), fill(b, bm), fill(c, cm);
  cuComplex alpha = {1.5f, -0.5f}, beta = {0.5f, 0.25f};
  cd al(1.5, -0.5), be(0.5, 0.25);
  std::vector<cd> want(m * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      cd sum = 0;
      for (int l = 0; l < k; ++l)
        sum += std::conj(am[i * k + l]) * bm[j * k + l];
      want[j * m + i] = al * sum + be * cm[j * m + i];
    }
  cublasLtMatmulDesc_t desc;
  CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_C_32F));
  int32_t op_c = CUBLAS_OP_C;
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_c, sizeof op_c));
  cublasLtMatrixLayout_t la, lb, lc;
  CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_C_16F, k, m, k));
  CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_C_16F, k, n, k));
  CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_C_16F, m, n, m));
  int64_t planes[3] = {k * m * 2, k * n * 2, m * n * 2};
  cublasLtMatrixLayout_t layouts[3] = {la, lb, lc};
  for (int i = 0; i < 3; ++i)
    CHECK(cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET,
                                           &planes[i], sizeof planes[i]));
  CHECK(
      cublasLtMatmul(lt, desc, &alpha, a, la, b, lb, &beta, c, lc, c, lc, nullptr, nullptr, 0, 0));
  CHECK(cudaDeviceSynchronize());
  bool ok = true;
  for (int i = 0; i < m * n; ++i) {
    cd got(__half2float(c[i]), __half2float(c[m * n + i]));
    ok = ok && std::abs(got - want[i]) <= 2e-3 * (1 + std::abs(want[i]));
  }
  report("planar C_16F matmul, op C", ok);
  cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);

  // C_64F, a strided batch of two, scalars in device memory.
  const int batch = 2;
  cd *za, *zb, *zc, *scalars;
  CHECK(cudaMallocManaged(&za, batch * m * k * sizeof(cd)));
  CHECK(cudaMallocManaged(&zb, batch * k * n * sizeof(cd)));
  CHECK(cudaMallocManaged(&zc, batch * m * n * sizeof(cd)));
  CHECK(cudaMallocManaged(&scalars, 2 * sizeof(cd)));
  for (int i = 0; i < batch * m * k; ++i)
    za[i] = cd(frand(seed), frand(seed));
  for (int i = 0; i < batch * k * n; ++i)
    zb[i] = cd(frand(seed), frand(seed));
  for (int i = 0; i < batch * m * n; ++i)
    zc[i] = cd(frand(seed), frand(seed));
  scalars[0] = cd(0.5, 1), scalars[1] = cd(-1, 0);
  std::vector<cd> zwant(batch * m * n);
  for (int t = 0; t < batch; ++t)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        cd sum = 0;
        for (int l = 0; l < k; ++l)
          sum += za[t * m * k + l * m + i] * zb[t * k * n + j * k + l];
        zwant[t * m * n + j * m + i] = scalars[0] * sum + scalars[1] * zc[t * m * n + j * m + i];
      }
  CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_64F, CUDA_C_64F));
  int32_t device = CUBLASLT_POINTER_MODE_DEVICE;
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &device,
                                       sizeof device));
  int rows[3] = {m, k, m}, cols[3] = {k, n, n};
  int32_t count = batch;
  for (int i = 0; i < 3; ++i) {
    CHECK(cublasLtMatrixLayoutCreate(&layouts[i], CUDA_C_64F, rows[i], cols[i], rows[i]));
    int64_t stride = rows[i] * cols[i];
    CHECK(cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                           sizeof count));
    CHECK(cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                           &stride, sizeof stride));
  }
  CHECK(cublasLtMatmul(lt, desc, scalars, za, layouts[0], zb, layouts[1], scalars + 1, zc,
                       layouts[2], zc, layouts[2], nullptr, nullptr, 0, 0));
  CHECK(cudaDeviceSynchronize());
  ok = true;
  for (int i = 0; i < batch * m * n; ++i)
    ok = ok && std::abs(zc[i] - zwant[i]) <= 1e-12 * (1 + std::abs(zwant[i]));
  report("C_64F strided batch, device scalars", ok);
  int32_t epilogue = CUBLASLT_EPILOGUE_RELU;
  CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                       sizeof epilogue));
  report("complex with an epilogue unsupported",
         cublasLtMatmul(lt, desc, scalars, za, layouts[0], zb, layouts[1], scalars + 1, zc,
                        layouts[2], zc, layouts[2], nullptr, nullptr, 0,
                        0) == CUBLAS_STATUS_NOT_SUPPORTED);
  for (int i = 0; i < 3; ++i)
    cublasLtMatrixLayoutDestroy(layouts[i]);
  cublasLtMatmulDescDestroy(desc);
  cudaFree(a), cudaFree(b), cudaFree(c), cudaFree(za), cudaFree(zb), cudaFree(zc);
  cudaFree(scalars);
}

// int8 x int8 -> int32 through cublasLtMatmul (column-major).
static void test_int8(cublasLtHandle_t lt) {
  const int m = 4, n = 3, k = 5;
  int8_t *a, *b;
  int32_t *c;
  CHECK(cudaMallocManaged(&a, m * k));
  CHECK(cudaMallocManaged(&b, k * n));
  CHECK(cudaMallocManaged(&c, m * n * sizeof(int32_t)));
  for (int i = 0; i < m * k; ++i)
    a[i] = (int8_t)(i * 53 % 255 - 127);
  for (int i = 0; i < k * n; ++i)
    b[i] = (int8_t)(i * 29 % 255 - 127);
  std::vector<int32_t> want(m * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      int32_t sum = 0;
      for (int l = 0; l < k; ++l)
        sum += a[l * m + i] * b[j * k + l];
      c[j * m + i] = 7 * i - j;
      want[j * m + i] = 2 * sum + c[j * m + i];
    }
  cublasLtMatmulDesc_t desc;
  CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32I, CUDA_R_32I));
  cublasLtMatrixLayout_t la, lb, lc;
  CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8I, m, k, m));
  CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8I, k, n, k));
  CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32I, m, n, m));
  int32_t alpha = 2, beta = 1;
  CHECK(
      cublasLtMatmul(lt, desc, &alpha, a, la, b, lb, &beta, c, lc, c, lc, nullptr, nullptr, 0, 0));
  CHECK(cudaDeviceSynchronize());
  bool ok = true;
  for (int i = 0; i < m * n; ++i)
    ok = ok && c[i] == want[i];
  report("int8 matmul COMPUTE_32I", ok);
  cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  cudaFree(a), cudaFree(b), cudaFree(c);
}

int main() {
  cublasLtHandle_t lt;
  CHECK(cublasLtCreate(&lt));
  test_algo(lt);
  test_pointer_array(lt);
  test_transform(lt);
  test_fp8(lt);
  test_complex(lt);
  test_int8(lt);
  CHECK(cublasLtDestroy(lt));
  printf("%d failures\n", failures);
  return failures != 0;
}
