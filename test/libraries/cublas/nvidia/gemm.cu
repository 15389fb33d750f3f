// NVIDIA's own cuBLAS (the wheel's, linked by its path) on our driver: one
// SGEMM and one DGEMM against a host product. Prints PASS/FAIL per case.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime.h>

template <typename T>
static bool gemm_case(cublasHandle_t handle, const char *name, cublasOperation_t ta,
                      cublasOperation_t tb, int m, int n, int k, double tolerance) {
  int ar = ta == CUBLAS_OP_N ? m : k, ac = ta == CUBLAS_OP_N ? k : m;
  int br = tb == CUBLAS_OP_N ? k : n, bc = tb == CUBLAS_OP_N ? n : k;
  int lda = ar + 1, ldb = br + 2, ldc = m + 3;
  std::vector<T> a(lda * ac), b(ldb * bc), c(ldc * n);
  srand(7);
  for (auto *v : {&a, &b, &c})
    for (T &x : *v)
      x = (T)(rand() % 17 - 8) / (T)4;
  T alpha = (T)1.5, beta = (T)-0.5;
  std::vector<double> want(c.begin(), c.end());
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0;
      for (int p = 0; p < k; ++p) {
        double x = ta == CUBLAS_OP_N ? a[i + p * lda] : a[p + i * lda];
        double y = tb == CUBLAS_OP_N ? b[p + j * ldb] : b[j + p * ldb];
        sum += x * y;
      }
      want[i + j * ldc] = alpha * sum + beta * c[i + j * ldc];
    }
  T *da, *db, *dc;
  cudaMalloc(&da, a.size() * sizeof(T));
  cudaMalloc(&db, b.size() * sizeof(T));
  cudaMalloc(&dc, c.size() * sizeof(T));
  cudaMemcpy(da, a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemcpy(dc, c.data(), c.size() * sizeof(T), cudaMemcpyHostToDevice);
  cublasStatus_t status;
  if constexpr (sizeof(T) == 4)
    status = cublasSgemm(handle, ta, tb, m, n, k, &alpha, da, lda, db, ldb, &beta, dc, ldc);
  else
    status = cublasDgemm(handle, ta, tb, m, n, k, &alpha, da, lda, db, ldb, &beta, dc, ldc);
  cudaMemcpy(c.data(), dc, c.size() * sizeof(T), cudaMemcpyDeviceToHost);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  double worst = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      worst = fmax(worst, fabs(c[i + j * ldc] - want[i + j * ldc]));
  bool ok = status == CUBLAS_STATUS_SUCCESS && worst <= tolerance;
  printf("%s %s (status %d, worst error %g)\n", ok ? "PASS" : "FAIL", name, (int)status, worst);
  return ok;
}

// --create-only: cublasCreate and cublasDestroy alone (a driver whose kernels
// do not run, the stand-in NVIDIA driver).
int main(int argc, char **argv) {
  cublasHandle_t handle;
  cublasStatus_t created = cublasCreate(&handle);
  printf("%s cublasCreate (status %d)\n", created == CUBLAS_STATUS_SUCCESS ? "PASS" : "FAIL",
         (int)created);
  if (created != CUBLAS_STATUS_SUCCESS)
    return 1;
  if (argc > 1 && strcmp(argv[1], "--create-only") == 0)
    return cublasDestroy(handle) == CUBLAS_STATUS_SUCCESS ? 0 : 1;
  bool ok = gemm_case<float>(handle, "Sgemm 64x48x40 nn", CUBLAS_OP_N, CUBLAS_OP_N, 64, 48, 40,
                             1e-3);
  ok &= gemm_case<double>(handle, "Dgemm 33x17x29 nt", CUBLAS_OP_N, CUBLAS_OP_T, 33, 17, 29,
                          1e-10);
  cublasDestroy(handle);
  printf(ok ? "ALL PASSED\n" : "SOME FAILED\n");
  return ok ? 0 : 1;
}
