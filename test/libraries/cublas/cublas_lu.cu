// Batched LU through our libcublas.so.13: cublas<S,D>getrfBatched with and
// without pivoting and cublas<S,D>getriBatched, in a stream, checked against
// a partial-pivoting LU in double on the host (the pivots, 1-based, and
// P A = L U) and the inverse against A inv(A) = I; a singular matrix's info
// (the first zero of U's diagonal, 1-based) and a refused leading dimension.
// Prints "PASS <case>" or "FAIL <case>: <why>"; exits non-zero on any failure.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "../check.h"
#include "../report.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

// LAPACK's getf2 in double on a column-major n x n matrix: the pivots
// (1-based) of partial pivoting.
static std::vector<int> host_pivots(std::vector<double> a, int n, int lda) {
  std::vector<int> pivots(n);
  for (int k = 0; k < n; ++k) {
    int p = k;
    for (int i = k + 1; i < n; ++i)
      if (fabs(a[(size_t)k * lda + i]) > fabs(a[(size_t)k * lda + p]))
        p = i;
    pivots[k] = p + 1;
    for (int j = 0; j < n; ++j)
      std::swap(a[(size_t)j * lda + k], a[(size_t)j * lda + p]);
    for (int i = k + 1; i < n; ++i) {
      double l = a[(size_t)k * lda + i] /= a[(size_t)k * lda + k];
      for (int j = k + 1; j < n; ++j)
        a[(size_t)j * lda + i] -= l * a[(size_t)j * lda + k];
    }
  }
  return pivots;
}

// max |P A - L U| / max |A|, P from the 1-based pivots (none: identity).
template <typename T>
static double lu_error(const std::vector<T> &a, const std::vector<T> &lu, const int *pivots, int n,
                       int lda) {
  std::vector<double> pa(a.begin(), a.end());
  for (int k = 0; pivots && k < n; ++k)
    for (int j = 0; j < n; ++j)
      std::swap(pa[(size_t)j * lda + k], pa[(size_t)j * lda + pivots[k] - 1]);
  double err = 0, scale = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int k = 0; k <= std::min(i, j); ++k)
        sum += (k == i ? 1.0 : (double)lu[(size_t)k * lda + i]) * (double)lu[(size_t)j * lda + k];
      err = fmax(err, fabs(sum - pa[(size_t)j * lda + i]));
      scale = fmax(scale, fabs(pa[(size_t)j * lda + i]));
    }
  return err / scale;
}

// max |A X - I| of an n x n A (lda) and X (ldx).
template <typename T>
static double inverse_error(const std::vector<T> &a, int lda, const std::vector<T> &x, int ldx,
                            int n) {
  double err = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int k = 0; k < n; ++k)
        sum += (double)a[(size_t)k * lda + i] * (double)x[(size_t)j * ldx + k];
      err = fmax(err, fabs(sum - (i == j ? 1.0 : 0.0)));
    }
  return err;
}

template <typename T>
struct Lu;
template <>
struct Lu<float> {
  static constexpr const char *name = "S";
  static constexpr double tolerance = 1e-5;
  static cublasStatus_t getrf(cublasHandle_t h, int n, float *const a[], int lda, int *p, int *info,
                              int batch) {
    return cublasSgetrfBatched(h, n, a, lda, p, info, batch);
  }
  static cublasStatus_t getri(cublasHandle_t h, int n, const float *const a[], int lda,
                              const int *p, float *const c[], int ldc, int *info, int batch) {
    return cublasSgetriBatched(h, n, a, lda, p, c, ldc, info, batch);
  }
};
template <>
struct Lu<double> {
  static constexpr const char *name = "D";
  static constexpr double tolerance = 1e-12;
  static cublasStatus_t getrf(cublasHandle_t h, int n, double *const a[], int lda, int *p,
                              int *info, int batch) {
    return cublasDgetrfBatched(h, n, a, lda, p, info, batch);
  }
  static cublasStatus_t getri(cublasHandle_t h, int n, const double *const a[], int lda,
                              const int *p, double *const c[], int ldc, int *info, int batch) {
    return cublasDgetriBatched(h, n, a, lda, p, c, ldc, info, batch);
  }
};

// Device pointers to `batch` matrices of `size` elements each in `base`,
// as a device array.
template <typename T>
static T **pointer_array(T *base, size_t size, int batch) {
  std::vector<T *> host(batch);
  for (int b = 0; b < batch; ++b)
    host[b] = base + b * size;
  T **array;
  CHECK(cudaMalloc(&array, sizeof(T *) * batch));
  CHECK(cudaMemcpy(array, host.data(), sizeof(T *) * batch, cudaMemcpyHostToDevice));
  return array;
}

// Three n x n matrices (lda n + 1), the last singular (column 2 zero),
// factored with or without pivots and inverted, all in one stream.
template <typename T>
static void run(cublasHandle_t handle, cudaStream_t stream, bool pivot) {
  const int n = 5, lda = n + 1, ldc = n + 2, batch = 3;
  const size_t size = (size_t)lda * n, csize = (size_t)ldc * n;
  std::string what = std::string(Lu<T>::name) + (pivot ? " pivoted" : " unpivoted");
  unsigned state = pivot ? 7 : 11;
  std::vector<T> a(size * batch);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = (T)frand(state);
  for (int b = 0; b < batch && !pivot; ++b) // no pivots: a dominant diagonal
    for (int k = 0; k < n; ++k)
      a[b * size + (size_t)k * lda + k] += (T)n;
  for (int i = 0; i < n; ++i)
    a[2 * size + 2 * (size_t)lda + i] = 0;
  T *da, *dc;
  int *dpiv, *dinfo;
  CHECK(cudaMalloc(&da, sizeof(T) * a.size()));
  CHECK(cudaMalloc(&dc, sizeof(T) * csize * batch));
  CHECK(cudaMalloc(&dpiv, sizeof(int) * n * batch));
  CHECK(cudaMalloc(&dinfo, sizeof(int) * batch * 2));
  T **arrays = pointer_array(da, size, batch), **inverses = pointer_array(dc, csize, batch);
  CHECK(cudaMemcpyAsync(da, a.data(), sizeof(T) * a.size(), cudaMemcpyHostToDevice, stream));
  CHECK(Lu<T>::getrf(handle, n, arrays, lda, pivot ? dpiv : nullptr, dinfo, batch));
  CHECK(Lu<T>::getri(handle, n, arrays, lda, pivot ? dpiv : nullptr, inverses, ldc, dinfo + batch,
                     batch));
  std::vector<T> lu(a.size()), inv(csize * batch);
  std::vector<int> pivots(n * batch), info(batch * 2);
  CHECK(cudaMemcpyAsync(lu.data(), da, sizeof(T) * lu.size(), cudaMemcpyDeviceToHost, stream));
  CHECK(cudaMemcpyAsync(inv.data(), dc, sizeof(T) * inv.size(), cudaMemcpyDeviceToHost, stream));
  CHECK(cudaMemcpyAsync(pivots.data(), dpiv, sizeof(int) * pivots.size(), cudaMemcpyDeviceToHost,
                        stream));
  CHECK(cudaMemcpyAsync(info.data(), dinfo, sizeof(int) * info.size(), cudaMemcpyDeviceToHost,
                        stream));
  CHECK(cudaStreamSynchronize(stream));
  char why[160];
  for (int b = 0; b < 2; ++b) {
    std::vector<T> one(a.begin() + b * size, a.begin() + (b + 1) * size);
    std::vector<T> factors(lu.begin() + b * size, lu.begin() + (b + 1) * size);
    std::vector<T> inverse(inv.begin() + b * csize, inv.begin() + (b + 1) * csize);
    const int *p = pivot ? &pivots[b * n] : nullptr;
    if (pivot) {
      std::vector<int> want = host_pivots(std::vector<double>(one.begin(), one.end()), n, lda);
      bool same = memcmp(want.data(), p, sizeof(int) * n) == 0;
      snprintf(why, sizeof why, "pivots %d %d %d %d %d, host %d %d %d %d %d", p[0], p[1], p[2],
               p[3], p[4], want[0], want[1], want[2], want[3], want[4]);
      report(what + " getrf pivots (1-based) #" + std::to_string(b), same, why);
    }
    double err = lu_error(one, factors, p, n, lda);
    snprintf(why, sizeof why, "info %d, |PA - LU| / |A| = %.3g", info[b], err);
    report(what + " getrf PA = LU #" + std::to_string(b), info[b] == 0 && err < Lu<T>::tolerance,
           why);
    err = inverse_error(one, lda, inverse, ldc, n);
    snprintf(why, sizeof why, "info %d, |A inv(A) - I| = %.3g", info[batch + b], err);
    report(what + " getri A inv(A) = I #" + std::to_string(b),
           info[batch + b] == 0 && err < 100 * Lu<T>::tolerance, why);
  }
  snprintf(why, sizeof why, "getrf info %d, getri info %d", info[2], info[batch + 2]);
  report(what + " singular: info 3 from getrf and getri", info[2] == 3 && info[batch + 2] == 3,
         why);
  CHECK(cudaFree(da));
  CHECK(cudaFree(dc));
  CHECK(cudaFree(dpiv));
  CHECK(cudaFree(dinfo));
  CHECK(cudaFree(arrays));
  CHECK(cudaFree(inverses));
}

int main() {
  cublasHandle_t handle;
  cudaStream_t stream;
  CHECK(cublasCreate(&handle));
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK(cublasSetStream(handle, stream));
  for (bool pivot : {true, false}) {
    run<float>(handle, stream, pivot);
    run<double>(handle, stream, pivot);
  }
  int info;
  double *none[1] = {nullptr};
  report("getrf lda < n is CUBLAS_STATUS_INVALID_VALUE",
         cublasDgetrfBatched(handle, 4, none, 3, nullptr, &info, 1) == CUBLAS_STATUS_INVALID_VALUE);
  CHECK(cublasDestroy(handle));
  CHECK(cudaStreamDestroy(stream));
  return failures ? 1 : 0;
}
