// cuBLAS through our libcublas.so.13: each call checked against a host
// reference in double precision. Prints "PASS <case>" per case and "FAIL
// <case>: <why>" otherwise; exits non-zero on any failure. `--nvidia`: on
// NVIDIA's cuBLAS (natively, or through the passthrough), which implements
// what ours answers CUBLAS_STATUS_NOT_SUPPORTED to.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static int failures = 0;
static bool nvidia = false;

#define CHECK_CUDA(x)                                                                              \
  do {                                                                                             \
    cudaError_t error_ = (x);                                                                      \
    if (error_ != cudaSuccess) {                                                                   \
      printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(error_));                  \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)
#define CHECK_BLAS(x)                                                                              \
  do {                                                                                             \
    cublasStatus_t status_ = (x);                                                                  \
    if (status_ != CUBLAS_STATUS_SUCCESS) {                                                        \
      printf("FAIL %s:%d: %s -> %s\n", __FILE__, __LINE__, #x, cublasGetStatusName(status_));      \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

static void report(const char *name, bool ok, const char *why = "") {
  if (ok) {
    printf("PASS %s\n", name);
  } else {
    printf("FAIL %s: %s\n", name, why);
    ++failures;
  }
}

static double frand(unsigned &state) {
  state = state * 1664525u + 1013904223u;
  return ((state >> 8) & 0xffff) / 32768.0 - 1.0;
}

template <typename T>
static T *device_copy(const std::vector<T> &host) {
  T *p;
  CHECK_CUDA(cudaMalloc(&p, host.size() * sizeof(T) + 1));
  CHECK_CUDA(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}

template <typename T>
static std::vector<T> host_copy(const T *p, size_t n) {
  std::vector<T> out(n);
  CHECK_CUDA(cudaMemcpy(out.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
  return out;
}

static double to_double(float v) {
  return v;
}
static double to_double(double v) {
  return v;
}
static double to_double(__half v) {
  return __half2float(v);
}
static double to_double(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

// op(X)(i, j) of a column-major X with leading dimension ld.
template <typename T>
static double at(const std::vector<T> &x, cublasOperation_t op, int ld, int i, int j) {
  return to_double(op == CUBLAS_OP_N ? x[(size_t)j * ld + i] : x[(size_t)i * ld + j]);
}

// The reference: C = alpha op(A) op(B) + beta C, in double.
template <typename TA, typename TC>
static std::vector<double> reference(cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                     int k, double alpha, const std::vector<TA> &a, int lda,
                                     const std::vector<TA> &b, int ldb, double beta,
                                     const std::vector<TC> &c, int ldc) {
  std::vector<double> out(c.size());
  for (size_t i = 0; i < c.size(); ++i)
    out[i] = to_double(c[i]);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int l = 0; l < k; ++l)
        sum += at(a, ta, lda, i, l) * at(b, tb, ldb, l, j);
      out[(size_t)j * ldc + i] = alpha * sum +
                                 (beta != 0 ? beta * to_double(c[(size_t)j * ldc + i]) : 0);
    }
  return out;
}

template <typename T>
static bool close(const std::vector<T> &got, const std::vector<double> &want, double tol,
                  char *why) {
  for (size_t i = 0; i < want.size(); ++i) {
    double g = to_double(got[i]);
    if (!(fabs(g - want[i]) <= tol * (1 + fabs(want[i])))) {
      snprintf(why, 200, "element %zu: got %.8g, want %.8g", i, g, want[i]);
      return false;
    }
  }
  return true;
}

template <typename T>
static std::vector<T> random_vector(size_t n, unsigned seed) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = (T)frand(seed);
  return v;
}

__global__ void fill(float *x, int n, float value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = value;
}

__global__ void twice(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= 2;
}

// Exported by NVIDIA's libcublas.so.13 for cuSOLVER, not in its header.
extern "C" cublasStatus_t cublasSetEnvironmentMode(cublasHandle_t, int);
extern "C" cublasStatus_t cublasGetEnvironmentMode(cublasHandle_t, int *);

static void test_handle(cublasHandle_t h) {
  int version = 0;
  CHECK_BLAS(cublasGetVersion(h, &version));
  report("version", version / 10000 == 13);
  cudaStream_t s, got;
  CHECK_CUDA(cudaStreamCreate(&s));
  CHECK_BLAS(cublasSetStream(h, s));
  CHECK_BLAS(cublasGetStream(h, &got));
  report("stream", got == s);
  CHECK_BLAS(cublasSetStream(h, 0));
  CHECK_CUDA(cudaStreamDestroy(s));
  cublasPointerMode_t mode;
  CHECK_BLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
  CHECK_BLAS(cublasGetPointerMode(h, &mode));
  bool ok = mode == CUBLAS_POINTER_MODE_DEVICE;
  CHECK_BLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  report("pointer mode", ok);
  cublasMath_t math;
  CHECK_BLAS(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
  CHECK_BLAS(cublasGetMathMode(h, &math));
  report("math mode", math == CUBLAS_TF32_TENSOR_OP_MATH);
  CHECK_BLAS(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  int environment = -1;
  bool kept = cublasSetEnvironmentMode(h, 1) == CUBLAS_STATUS_SUCCESS &&
              cublasGetEnvironmentMode(h, &environment) == CUBLAS_STATUS_SUCCESS &&
              environment == 1;
  report("environment mode",
         kept && cublasSetEnvironmentMode(h, 2) == CUBLAS_STATUS_INVALID_VALUE &&
             cublasGetEnvironmentMode(h, nullptr) == CUBLAS_STATUS_INVALID_VALUE &&
             cublasSetEnvironmentMode(h, 0) == CUBLAS_STATUS_SUCCESS);
  void *workspace;
  CHECK_CUDA(cudaMalloc(&workspace, 1 << 20));
  report("workspace", cublasSetWorkspace(h, workspace, 1 << 20) == CUBLAS_STATUS_SUCCESS);
  report("status name", strcmp(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE),
                               "CUBLAS_STATUS_INVALID_VALUE") == 0);
  report("status string", strlen(cublasGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED)) > 0);
  report("null handle", cublasSetStream(nullptr, 0) == CUBLAS_STATUS_NOT_INITIALIZED);
  // NVIDIA's argument checks: lda smaller than op(A)'s rows.
  float one = 1;
  report("invalid lda", cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, (float *)workspace,
                                    3, (float *)workspace, 4, &one, (float *)workspace,
                                    4) == CUBLAS_STATUS_INVALID_VALUE);
  // The ILP64 entry points: the lower triangle [2 0; 1 4] solves b = (2, 9)
  // to (1, 2) (cuSOLVER's potrs calls this one).
  double *tri = (double *)workspace, *rhs = tri + 4, done = 1;
  const double tri_host[] = {2, 1, -7, 4}, rhs_host[] = {2, 9};
  CHECK_CUDA(cudaMemcpy(tri, tri_host, sizeof tri_host, cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(rhs, rhs_host, sizeof rhs_host, cudaMemcpyHostToDevice));
  cublasStatus_t solved = cublasDtrsm_64(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                         CUBLAS_DIAG_NON_UNIT, 2, 1, &done, tri, 2, rhs, 2);
  double x[2] = {0, 0};
  CHECK_CUDA(cudaMemcpy(x, rhs, sizeof x, cudaMemcpyDeviceToHost));
  report("Dtrsm_64", solved == CUBLAS_STATUS_SUCCESS && x[0] == 1 && x[1] == 2);
  // What ours cannot do (a size beyond the host BLAS's 32-bit integers) says so.
  if (!nvidia)
    report("unsupported",
           cublasStrsm_64(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                          CUBLAS_DIAG_NON_UNIT, 1, 1LL << 32, &one, (float *)workspace, 1,
                          (float *)workspace, 1) == CUBLAS_STATUS_NOT_SUPPORTED);
  CHECK_CUDA(cudaFree(workspace));
}

template <typename T>
static void test_gemm(cublasHandle_t h, const char *name,
                      cublasStatus_t (*gemm)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                             int, int, int, const T *, const T *, int, const T *,
                                             int, const T *, T *, int),
                      double tol) {
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
  int m = 13, n = 7, k = 9;
  for (cublasOperation_t ta : ops)
    for (cublasOperation_t tb : ops) {
      int lda = (ta == CUBLAS_OP_N ? m : k) + 3, ldb = (tb == CUBLAS_OP_N ? k : n) + 2, ldc = m + 1;
      auto a = random_vector<T>((size_t)lda * (ta == CUBLAS_OP_N ? k : m), 1);
      auto b = random_vector<T>((size_t)ldb * (tb == CUBLAS_OP_N ? n : k), 2);
      auto c = random_vector<T>((size_t)ldc * n, 3);
      T alpha = (T)0.75, beta = (T)-0.5;
      auto want = reference(ta, tb, m, n, k, 0.75, a, lda, b, ldb, -0.5, c, ldc);
      T *da = device_copy(a), *db = device_copy(b), *dc = device_copy(c);
      CHECK_BLAS(gemm(h, ta, tb, m, n, k, &alpha, da, lda, db, ldb, &beta, dc, ldc));
      char why[256], label[64];
      snprintf(label, sizeof label, "%s op(%d,%d)", name, ta, tb);
      report(label, close(host_copy(dc, c.size()), want, tol, why), why);
      cudaFree(da), cudaFree(db), cudaFree(dc);
    }
}

// Complex GEMMs: op(X) = X, X^T or X^H, against a complex<double> reference;
// `batch` strided problems (Cgemm/Zgemm are batch 1).
template <typename T, typename Gemm>
static void test_complex_gemm(const char *name, int batch, double tol, Gemm gemm) {
  typedef std::complex<double> Z;
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C};
  int m = 6, n = 5, k = 7, ld = 9; // every operand 9 x 9 (column-major), batches apart
  long long stride = ld * ld;
  unsigned seed = 7;
  for (cublasOperation_t ta : ops)
    for (cublasOperation_t tb : ops) {
      std::vector<T> a(stride * batch), b(stride * batch), c(stride * batch);
      for (std::vector<T> *x : {&a, &b, &c})
        for (T &v : *x)
          v.x = frand(seed), v.y = frand(seed);
      T alpha = {0.5, -1.25}, beta = {-0.75, 0.5};
      auto element = [&](const std::vector<T> &x, cublasOperation_t op, int s, int i, int j) {
        const T &v = x[s * stride + (op == CUBLAS_OP_N ? (size_t)j * ld + i : (size_t)i * ld + j)];
        return op == CUBLAS_OP_C ? Z(v.x, -v.y) : Z(v.x, v.y);
      };
      T *da = device_copy(a), *db = device_copy(b), *dc = device_copy(c);
      cublasStatus_t status = gemm(ta, tb, m, n, k, &alpha, da, ld, stride, db, ld, stride, &beta,
                                   dc, ld, stride, batch);
      auto got = host_copy(dc, c.size());
      char why[256] = "", label[64];
      bool ok = status == CUBLAS_STATUS_SUCCESS;
      if (!ok)
        snprintf(why, sizeof why, "status %d", status);
      for (int s = 0; s < batch && ok; ++s)
        for (int j = 0; j < n && ok; ++j)
          for (int i = 0; i < m && ok; ++i) {
            Z sum = 0;
            for (int l = 0; l < k; ++l)
              sum += element(a, ta, s, i, l) * element(b, tb, s, l, j);
            size_t at = s * stride + (size_t)j * ld + i;
            Z want = Z(alpha.x, alpha.y) * sum + Z(beta.x, beta.y) * Z(c[at].x, c[at].y);
            Z have(got[at].x, got[at].y);
            if (!(std::abs(have - want) <= tol * (1 + std::abs(want)))) {
              snprintf(why, sizeof why, "batch %d (%d, %d): got %g%+gi, want %g%+gi", s, i, j,
                       have.real(), have.imag(), want.real(), want.imag());
              ok = false;
            }
          }
      snprintf(label, sizeof label, "%s op(%d,%d)", name, ta, tb);
      report(label, ok, why);
      cudaFree(da), cudaFree(db), cudaFree(dc);
    }
}

static void test_complex_gemms(cublasHandle_t h) {
  test_complex_gemm<cuComplex>(
      "Cgemm", 1, 1e-5,
      [h](cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const cuComplex *alpha,
          const cuComplex *a, int lda, long long, const cuComplex *b, int ldb, long long,
          const cuComplex *beta, cuComplex *c, int ldc, long long,
          int) { return cublasCgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); });
  test_complex_gemm<cuDoubleComplex>(
      "Zgemm", 1, 1e-12,
      [h](cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
          const cuDoubleComplex *alpha, const cuDoubleComplex *a, int lda, long long,
          const cuDoubleComplex *b, int ldb, long long, const cuDoubleComplex *beta,
          cuDoubleComplex *c, int ldc, long long,
          int) { return cublasZgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc); });
  test_complex_gemm<cuComplex>("CgemmStridedBatched", 3, 1e-5,
                               [h](auto... args) { return cublasCgemmStridedBatched(h, args...); });
  test_complex_gemm<cuComplex>(
      "GemmStridedBatchedEx c32", 2, 1e-5,
      [h](cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const cuComplex *alpha,
          const cuComplex *a, int lda, long long sa, const cuComplex *b, int ldb, long long sb,
          const cuComplex *beta, cuComplex *c, int ldc, long long sc, int batch) {
        return cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, alpha, a, CUDA_C_32F, lda, sa, b,
                                          CUDA_C_32F, ldb, sb, beta, c, CUDA_C_32F, ldc, sc, batch,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      });
}

// alpha and beta in device memory (CUBLAS_POINTER_MODE_DEVICE), read when
// the GEMM runs: a kernel enqueued before it in the same stream sets them.
static void test_device_scalars_and_order(cublasHandle_t h) {
  int m = 32, n = 16, k = 8;
  auto a = random_vector<float>(m * k, 4), b = random_vector<float>(k * n, 5);
  std::vector<float> c(m * n, 1.0f);
  float *da = device_copy(a), *db = device_copy(b), *dc = device_copy(c), *scalars;
  CHECK_CUDA(cudaMalloc(&scalars, 2 * sizeof(float)));
  cudaStream_t s;
  CHECK_CUDA(cudaStreamCreate(&s));
  CHECK_BLAS(cublasSetStream(h, s));
  CHECK_BLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
  fill<<<1, 1, 0, s>>>(scalars, 1, 2.0f);            // alpha = 2
  fill<<<1, 1, 0, s>>>(scalars + 1, 1, 3.0f);        // beta = 3
  twice<<<(k * n + 63) / 64, 64, 0, s>>>(db, k * n); // B doubled before the GEMM reads it
  CHECK_BLAS(
      cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, scalars, da, m, db, k, scalars + 1, dc, m));
  twice<<<(m * n + 63) / 64, 64, 0, s>>>(dc, m * n); // C doubled after it wrote C
  CHECK_CUDA(cudaStreamSynchronize(s));
  for (float &v : b)
    v *= 2;
  auto want = reference(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, 2.0, a, m, b, k, 3.0, c, m);
  for (double &v : want)
    v *= 2;
  char why[256];
  report("device scalars, stream order", close(host_copy(dc, c.size()), want, 1e-5, why), why);
  CHECK_BLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  CHECK_BLAS(cublasSetStream(h, 0));
  CHECK_CUDA(cudaStreamDestroy(s));
  cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(scalars);
}

template <typename TA, typename TC>
static void test_gemm_ex(cublasHandle_t h, const char *name, cudaDataType ta, cudaDataType tc,
                         double tol) {
  int m = 24, n = 10, k = 33, lda = k, ldb = k, ldc = m;
  auto a = random_vector<float>(lda * m, 6), b = random_vector<float>(ldb * n, 7),
       c = random_vector<float>(ldc * n, 8);
  std::vector<TA> a16(a.begin(), a.end()), b16(b.begin(), b.end());
  std::vector<TC> c16(c.begin(), c.end());
  float alpha = 1.5f, beta = 0.25f;
  auto want = reference(CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, 1.5, a16, lda, b16, ldb, 0.25, c16, ldc);
  TA *da = device_copy(a16), *db = device_copy(b16);
  TC *dc = device_copy(c16);
  CHECK_BLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, da, ta, lda, db, ta, ldb,
                          &beta, dc, tc, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  char why[256];
  report(name, close(host_copy(dc, c16.size()), want, tol, why), why);
  cudaFree(da), cudaFree(db), cudaFree(dc);
}

static void test_batched(cublasHandle_t h) {
  int m = 8, n = 5, k = 6, batch = 3;
  long long sa = m * k + 4, sb = k * n, sc = m * n + 2;
  auto a = random_vector<float>(sa * batch, 9), b = random_vector<float>(sb * batch, 10),
       c = random_vector<float>(sc * batch, 11);
  float alpha = 1, beta = 2;
  float *da = device_copy(a), *db = device_copy(b), *dc = device_copy(c);
  std::vector<float> strided = c, ex = c;
  CHECK_BLAS(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, m, sa, db,
                                       k, sb, &beta, dc, m, sc, batch));
  strided = host_copy(dc, c.size());
  CHECK_CUDA(cudaMemcpy(dc, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
  CHECK_BLAS(cublasGemmStridedBatchedEx(
      h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, da, CUDA_R_32F, m, sa, db, CUDA_R_32F, k, sb,
      &beta, dc, CUDA_R_32F, m, sc, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  ex = host_copy(dc, c.size());
  // GemmBatchedEx: arrays of pointers in device memory, batches in reverse.
  CHECK_CUDA(cudaMemcpy(dc, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
  std::vector<const void *> pa(batch), pb(batch);
  std::vector<void *> pc(batch);
  for (int i = 0; i < batch; ++i) {
    pa[i] = da + sa * (batch - 1 - i), pb[i] = db + sb * (batch - 1 - i);
    pc[i] = dc + sc * (batch - 1 - i);
  }
  const void **dpa = device_copy(pa), **dpb = device_copy(pb);
  void **dpc = device_copy(pc);
  CHECK_BLAS(cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, dpa, CUDA_R_32F, m,
                                 dpb, CUDA_R_32F, k, &beta, dpc, CUDA_R_32F, m, batch,
                                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  auto pointers = host_copy(dc, c.size());
  bool ok_strided = true, ok_ex = true, ok_pointers = true;
  char why[256] = "";
  for (int i = 0; i < batch; ++i) {
    std::vector<float> ai(a.begin() + sa * i, a.begin() + sa * i + m * k),
        bi(b.begin() + sb * i, b.begin() + sb * i + k * n),
        ci(c.begin() + sc * i, c.begin() + sc * i + m * n);
    auto want = reference(CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, 1.0, ai, m, bi, k, 2.0, ci, m);
    std::vector<float> s(strided.begin() + sc * i, strided.begin() + sc * i + m * n),
        e(ex.begin() + sc * i, ex.begin() + sc * i + m * n),
        p(pointers.begin() + sc * i, pointers.begin() + sc * i + m * n);
    ok_strided = ok_strided && close(s, want, 1e-5, why);
    ok_ex = ok_ex && close(e, want, 1e-5, why);
    ok_pointers = ok_pointers && close(p, want, 1e-5, why);
  }
  // The gap between batches of C is left alone.
  ok_strided = ok_strided && strided[m * n] == c[m * n] && strided[m * n + 1] == c[m * n + 1];
  report("SgemmStridedBatched", ok_strided, why);
  report("GemmStridedBatchedEx", ok_ex, why);
  report("GemmBatchedEx", ok_pointers, why);
  cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(dpa), cudaFree(dpb), cudaFree(dpc);
}

static void test_hgemm(cublasHandle_t h) {
  int m = 16, n = 8, k = 12;
  auto a = random_vector<float>(m * k, 12), b = random_vector<float>(k * n, 13),
       c = random_vector<float>(m * n, 14);
  std::vector<__half> a16(a.begin(), a.end()), b16(b.begin(), b.end()), c16(c.begin(), c.end());
  __half alpha = __float2half(1.0f), beta = __float2half(0.5f);
  auto want = reference(CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, 1.0, a16, m, b16, n, 0.5, c16, m);
  __half *da = device_copy(a16), *db = device_copy(b16), *dc = device_copy(c16);
  CHECK_BLAS(cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k, &alpha, da, m, db, n, &beta, dc, m));
  char why[256];
  report("Hgemm", close(host_copy(dc, c16.size()), want, 1e-2, why), why);
  cudaFree(da), cudaFree(db), cudaFree(dc);
}

static void test_level1_and_2(cublasHandle_t h) {
  int n = 37;
  auto x = random_vector<float>(2 * n, 15), y = random_vector<float>(3 * n, 16);
  float *dx = device_copy(x), *dy = device_copy(y);
  char why[256];
  // AXPY with strides: y[3i] += 0.5 x[2i].
  float alpha = 0.5f;
  CHECK_BLAS(cublasSaxpy(h, n, &alpha, dx, 2, dy, 3));
  std::vector<double> want(y.begin(), y.end());
  for (int i = 0; i < n; ++i)
    want[3 * i] += 0.5 * x[2 * i];
  report("Saxpy", close(host_copy(dy, y.size()), want, 1e-6, why), why);
  CHECK_CUDA(cudaMemcpy(dy, y.data(), y.size() * 4, cudaMemcpyHostToDevice));
  double dot = 0, nrm = 0, asum = 0;
  int imax = 1;
  for (int i = 0; i < n; ++i) {
    dot += (double)x[2 * i] * y[3 * i];
    nrm += (double)x[2 * i] * x[2 * i];
    asum += fabs(x[2 * i]);
    if (fabs(x[2 * i]) > fabs(x[2 * (imax - 1)]))
      imax = i + 1;
  }
  float result;
  CHECK_BLAS(cublasSdot(h, n, dx, 2, dy, 3, &result));
  report("Sdot", fabs(result - dot) < 1e-4);
  CHECK_BLAS(cublasSnrm2(h, n, dx, 2, &result));
  report("Snrm2", fabs(result - sqrt(nrm)) < 1e-4);
  CHECK_BLAS(cublasSasum(h, n, dx, 2, &result));
  report("Sasum", fabs(result - asum) < 1e-4);
  int index;
  CHECK_BLAS(cublasIsamax(h, n, dx, 2, &index));
  report("Isamax (1-based)", index == imax);
  // The result in device memory (device pointer mode).
  float *dresult;
  CHECK_CUDA(cudaMalloc(&dresult, sizeof(float)));
  CHECK_BLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
  CHECK_BLAS(cublasSdot(h, n, dx, 2, dy, 3, dresult));
  CHECK_BLAS(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  report("Sdot, device result", fabs(host_copy(dresult, 1)[0] - dot) < 1e-4);
  float scale = -2;
  CHECK_BLAS(cublasSscal(h, n, &scale, dx, 2));
  auto scaled = host_copy(dx, x.size());
  bool ok = true;
  for (int i = 0; i < 2 * n; ++i)
    ok = ok && scaled[i] == (i % 2 ? x[i] : -2 * x[i]);
  report("Sscal", ok);
  std::vector<double> xd(x.begin(), x.begin() + n);
  double *dxd = device_copy(xd), dnrm;
  CHECK_BLAS(cublasDnrm2(h, n, dxd, 1, &dnrm));
  double want_nrm = 0;
  for (double v : xd)
    want_nrm += v * v;
  report("Dnrm2", fabs(dnrm - sqrt(want_nrm)) < 1e-12);
  // GEMV, both ways.
  int m = 11, cols = 6, lda = 13;
  auto a = random_vector<float>(lda * cols, 17), v = random_vector<float>(m, 18),
       w = random_vector<float>(m, 19);
  float *da = device_copy(a), *dv = device_copy(v), *dw = device_copy(w);
  float beta = 0.5f;
  alpha = 2;
  CHECK_BLAS(cublasSgemv(h, CUBLAS_OP_T, m, cols, &alpha, da, lda, dv, 1, &beta, dw, 2));
  std::vector<double> gemv_want(w.begin(), w.end());
  for (int j = 0; j < cols; ++j) {
    double sum = 0;
    for (int i = 0; i < m; ++i)
      sum += (double)a[j * lda + i] * v[i];
    gemv_want[2 * j] = 2 * sum + 0.5 * w[2 * j];
  }
  report("Sgemv (T, incy 2)", close(host_copy(dw, w.size()), gemv_want, 1e-5, why), why);
  // GEAM: C = 2 A^T + 0.5 B.
  int gm = 5, gn = 4;
  auto ga = random_vector<float>(gn * gm, 20), gb = random_vector<float>(gm * gn, 21);
  float *dga = device_copy(ga), *dgb = device_copy(gb), *dgc;
  CHECK_CUDA(cudaMalloc(&dgc, gm * gn * 4));
  CHECK_BLAS(
      cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, gm, gn, &alpha, dga, gn, &beta, dgb, gm, dgc, gm));
  std::vector<double> geam_want(gm * gn);
  for (int j = 0; j < gn; ++j)
    for (int i = 0; i < gm; ++i)
      geam_want[j * gm + i] = 2.0 * ga[i * gn + j] + 0.5 * gb[j * gm + i];
  report("Sgeam", close(host_copy(dgc, gm * gn), geam_want, 1e-6, why), why);
  cudaFree(dx), cudaFree(dy), cudaFree(dresult), cudaFree(dxd), cudaFree(da), cudaFree(dv);
  cudaFree(dw), cudaFree(dga), cudaFree(dgb), cudaFree(dgc);
}

static void test_set_get_matrix() {
  int rows = 3, cols = 4, lda = 5, ldb = 3;
  std::vector<float> a(lda * cols), back(lda * cols, -1);
  for (int i = 0; i < lda * cols; ++i)
    a[i] = (float)i;
  float *db;
  CHECK_CUDA(cudaMalloc(&db, ldb * cols * 4));
  CHECK_BLAS(cublasSetMatrix(rows, cols, 4, a.data(), lda, db, ldb));
  CHECK_BLAS(cublasGetMatrix(rows, cols, 4, db, ldb, back.data(), lda));
  bool ok = true;
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < lda; ++i)
      ok = ok && back[j * lda + i] == (i < rows ? a[j * lda + i] : -1);
  report("Set/GetMatrix", ok);
  cudaFree(db);
}

int main(int argc, char **argv) {
  nvidia = argc > 1 && strcmp(argv[1], "--nvidia") == 0;
  cublasHandle_t h;
  CHECK_BLAS(cublasCreate(&h));
  test_handle(h);
  test_gemm<float>(h, "Sgemm", cublasSgemm, 1e-5);
  test_gemm<double>(h, "Dgemm", cublasDgemm, 1e-12);
  test_complex_gemms(h);
  test_device_scalars_and_order(h);
  test_gemm_ex<float, float>(h, "GemmEx f32", CUDA_R_32F, CUDA_R_32F, 1e-5);
  test_gemm_ex<__half, __half>(h, "GemmEx f16", CUDA_R_16F, CUDA_R_16F, 1e-2);
  test_gemm_ex<__nv_bfloat16, __nv_bfloat16>(h, "GemmEx bf16", CUDA_R_16BF, CUDA_R_16BF, 2e-2);
  test_gemm_ex<__nv_bfloat16, float>(h, "GemmEx bf16 -> f32", CUDA_R_16BF, CUDA_R_32F, 1e-5);
  test_batched(h);
  test_hgemm(h);
  test_level1_and_2(h);
  test_set_get_matrix();
  CHECK_BLAS(cublasDestroy(h));
  printf("%d failed\n", failures);
  return failures != 0;
}
