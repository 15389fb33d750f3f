// cuBLASXt through our libcublas.so.13 on one device: cublasXt<S,D>gemm on
// host memory (read back as soon as the call returns: Xt's calls block) and
// on device memory, every transpose pair, padded leading dimensions, checked
// against C = alpha op(A) op(B) + beta C in double on the host; the block
// dimension and pinning mode kept; a device that does not exist refused.
// Prints "PASS <case>" or "FAIL <case>: <why>"; exits non-zero on any failure.
#include <cublasXt.h>
#include <cuda_runtime.h>

#include "../check.h"
#include "../report.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

static cublasStatus_t xt_gemm(cublasXtHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                              size_t m, size_t n, size_t k, const float *alpha, const float *a,
                              size_t lda, const float *b, size_t ldb, const float *beta, float *c,
                              size_t ldc) {
  return cublasXtSgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
static cublasStatus_t xt_gemm(cublasXtHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                              size_t m, size_t n, size_t k, const double *alpha, const double *a,
                              size_t lda, const double *b, size_t ldb, const double *beta,
                              double *c, size_t ldc) {
  return cublasXtDgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// One GEMM, its operands in host memory or copied to device memory.
template <typename T>
static void gemm_case(cublasXtHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                      bool on_device, double tolerance) {
  const int m = 37, n = 29, k = 41;
  const int lda = (ta == CUBLAS_OP_N ? m : k) + 3, ldb = (tb == CUBLAS_OP_N ? k : n) + 2,
            ldc = m + 1;
  const int acols = ta == CUBLAS_OP_N ? k : m, bcols = tb == CUBLAS_OP_N ? n : k;
  unsigned state = 1 + ta * 3 + tb + on_device * 9;
  std::vector<T> a((size_t)lda * acols), b((size_t)ldb * bcols), c((size_t)ldc * n);
  for (T &x : a)
    x = (T)frand(state);
  for (T &x : b)
    x = (T)frand(state);
  for (T &x : c)
    x = (T)frand(state);
  const T alpha = (T)1.5, beta = (T)-0.5;
  std::vector<double> want(c.begin(), c.end());
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int p = 0; p < k; ++p)
        sum += (double)(ta == CUBLAS_OP_N ? a[(size_t)p * lda + i] : a[(size_t)i * lda + p]) *
               (double)(tb == CUBLAS_OP_N ? b[(size_t)j * ldb + p] : b[(size_t)p * ldb + j]);
      want[(size_t)j * ldc + i] = alpha * sum + beta * (double)c[(size_t)j * ldc + i];
    }
  std::vector<T> got = c;
  cublasStatus_t status;
  if (on_device) {
    T *da, *db, *dc;
    CHECK(cudaMalloc(&da, sizeof(T) * a.size()));
    CHECK(cudaMalloc(&db, sizeof(T) * b.size()));
    CHECK(cudaMalloc(&dc, sizeof(T) * c.size()));
    CHECK(cudaMemcpy(da, a.data(), sizeof(T) * a.size(), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, b.data(), sizeof(T) * b.size(), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dc, c.data(), sizeof(T) * c.size(), cudaMemcpyHostToDevice));
    status = xt_gemm(h, ta, tb, m, n, k, &alpha, da, lda, db, ldb, &beta, dc, ldc);
    CHECK(cudaMemcpy(got.data(), dc, sizeof(T) * c.size(), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));
  } else {
    status = xt_gemm(h, ta, tb, m, n, k, &alpha, a.data(), lda, b.data(), ldb, &beta, got.data(),
                     ldc);
  }
  double err = 0, scale = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    err = fmax(err, fabs((double)got[i] - want[i]));
    scale = fmax(scale, fabs(want[i]));
  }
  const char *ops = "NTC";
  char name[96], why[96];
  snprintf(name, sizeof name, "%sgemm %c%c %s memory", sizeof(T) == 8 ? "D" : "S", ops[ta], ops[tb],
           on_device ? "device" : "host");
  snprintf(why, sizeof why, "status %d, relative error %.3g", (int)status, err / scale);
  report(name, status == CUBLAS_STATUS_SUCCESS && err / scale < tolerance, why);
}

int main() {
  int count = 0;
  CHECK(cudaGetDeviceCount(&count));
  cublasXtHandle_t h;
  CHECK(cublasXtCreate(&h));
  int missing[1] = {count};
  report("DeviceSelect of a device that does not exist is CUBLAS_STATUS_INVALID_VALUE",
         cublasXtDeviceSelect(h, 1, missing) == CUBLAS_STATUS_INVALID_VALUE);
  int devices[1] = {0};
  CHECK(cublasXtDeviceSelect(h, 1, devices));
  int block = 0;
  CHECK(cublasXtSetBlockDim(h, 64));
  CHECK(cublasXtGetBlockDim(h, &block));
  report("block dimension kept", block == 64);
  cublasXtPinnedMemMode_t mode = CUBLASXT_PINNING_DISABLED;
  CHECK(cublasXtSetPinningMemMode(h, CUBLASXT_PINNING_ENABLED));
  CHECK(cublasXtGetPinningMemMode(h, &mode));
  report("pinning mode kept", mode == CUBLASXT_PINNING_ENABLED);
  const cublasOperation_t ops[] = {CUBLAS_OP_N, CUBLAS_OP_T};
  for (cublasOperation_t ta : ops)
    for (cublasOperation_t tb : ops)
      for (bool on_device : {false, true}) {
        gemm_case<float>(h, ta, tb, on_device, 1e-5);
        gemm_case<double>(h, ta, tb, on_device, 1e-13);
      }
  CHECK(cublasXtDestroy(h));
  return failures ? 1 : 0;
}
