// cuBLAS's level 1, 2 and 3 beyond GEMM and their Ex forms through our
// libcublas.so.13 (zmlir/libraries/cublas/blas.c), each checked against a
// reference of ours in complex double (loops over dense matrices: the
// triangle, band or packed form unfolded), for S, D, C and Z where NVIDIA has
// them, scalars in both pointer modes, and NVIDIA's invalid-argument statuses.
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cctype>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "../check.h"
#include "../report.h"

typedef std::complex<double> cd;
typedef std::vector<cd> Mat; // column-major

static cd get(float v) {
  return v;
}
static cd get(double v) {
  return v;
}
static cd get(cuComplex v) {
  return cd(v.x, v.y);
}
static cd get(cuDoubleComplex v) {
  return cd(v.x, v.y);
}
static void put(float &o, cd v) {
  o = (float)v.real();
}
static void put(double &o, cd v) {
  o = v.real();
}
static void put(cuComplex &o, cd v) {
  o = make_cuComplex((float)v.real(), (float)v.imag());
}
static void put(cuDoubleComplex &o, cd v) {
  o = make_cuDoubleComplex(v.real(), v.imag());
}

template <typename T>
constexpr bool is_complex() {
  return std::is_same<T, cuComplex>::value || std::is_same<T, cuDoubleComplex>::value;
}
template <typename T>
constexpr bool is_single() {
  return std::is_same<T, float>::value || std::is_same<T, cuComplex>::value;
}
template <typename T>
static double tolerance() {
  return is_single<T>() ? 2e-4 : 1e-10;
}

static unsigned seed = 12345;

// Managed memory: the library's device pointers, read here after a sync.
template <typename T>
struct Buf {
  T *p = nullptr;
  size_t n;
  explicit Buf(size_t count, bool random = true) : n(count) {
    CHECK(cudaMallocManaged(&p, sizeof(T) * (n ? n : 1)));
    for (size_t i = 0; i < n; ++i)
      put(p[i], random ? cd(frand(seed), is_complex<T>() ? frand(seed) : 0) : cd(0));
  }
  ~Buf() { cudaFree(p); }
  Mat mat() const {
    Mat m(n);
    for (size_t i = 0; i < n; ++i)
      m[i] = get(p[i]);
    return m;
  }
};

template <typename T>
static T scalar_of(cd v) {
  T t;
  put(t, v);
  return t;
}

template <typename T>
static bool close(const Buf<T> &got, const Mat &want, std::string &why) {
  CHECK(cudaDeviceSynchronize());
  double scale = 1, worst = 0;
  for (size_t i = 0; i < want.size(); ++i)
    scale = std::max(scale, std::abs(want[i]));
  size_t at = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double d = std::abs(get(got.p[i]) - want[i]);
    if (!(d <= worst)) // NaN counts as worst
      worst = d, at = i;
  }
  if (worst <= tolerance<T>() * scale)
    return true;
  char text[160];
  snprintf(text, sizeof text, "element %zu: got (%g,%g), want (%g,%g)", at, get(got.p[at]).real(),
           get(got.p[at]).imag(), want[at].real(), want[at].imag());
  why = text;
  return false;
}

template <typename T>
static void expect(const char *name, const Buf<T> &got, const Mat &want) {
  std::string why;
  bool ok = close(got, want, why);
  report(name, ok, why);
}

// -- the reference's dense forms ------------------------------------------------

static cd at(const Mat &a, int ld, int i, int j) {
  return a[(size_t)j * ld + i];
}

// op(A) of a rows x cols A, dense (leading dimension its rows).
static Mat op_of(const Mat &a, int ld, int rows, int cols, cublasOperation_t op) {
  bool t = op != CUBLAS_OP_N;
  int r = t ? cols : rows, c = t ? rows : cols;
  Mat out((size_t)r * c);
  for (int j = 0; j < c; ++j)
    for (int i = 0; i < r; ++i) {
      cd v = t ? at(a, ld, j, i) : at(a, ld, i, j);
      out[(size_t)j * r + i] = op == CUBLAS_OP_C ? std::conj(v) : v;
    }
  return out;
}

static Mat mul(const Mat &a, const Mat &b, int m, int k, int n) {
  Mat c((size_t)m * n);
  for (int j = 0; j < n; ++j)
    for (int l = 0; l < k; ++l)
      for (int i = 0; i < m; ++i)
        c[(size_t)j * m + i] += a[(size_t)l * m + i] * b[(size_t)j * k + l];
  return c;
}

static bool in_triangle(cublasFillMode_t uplo, int i, int j) {
  return uplo == CUBLAS_FILL_MODE_UPPER ? i <= j : i >= j;
}

// The symmetric (or Hermitian) matrix the uplo triangle of A stands for.
static Mat symmetric(const Mat &a, int ld, int n, cublasFillMode_t uplo, bool herm) {
  Mat out((size_t)n * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      cd v = in_triangle(uplo, i, j) ? at(a, ld, i, j) : at(a, ld, j, i);
      if (!in_triangle(uplo, i, j) && herm)
        v = std::conj(v);
      if (i == j && herm)
        v = v.real();
      out[(size_t)j * n + i] = v;
    }
  return out;
}

static Mat triangular(const Mat &a, int ld, int n, cublasFillMode_t uplo, cublasDiagType_t diag) {
  Mat out((size_t)n * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      out[(size_t)j * n + i] = i == j && diag == CUBLAS_DIAG_UNIT ? cd(1)
                               : in_triangle(uplo, i, j)          ? at(a, ld, i, j)
                                                                  : cd(0);
  return out;
}

// A's uplo triangle from `full`, the rest of A as it was.
static Mat merge_triangle(const Mat &a, int ld, int n, cublasFillMode_t uplo, const Mat &full,
                          bool real_diagonal) {
  Mat out = a;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (in_triangle(uplo, i, j))
        out[(size_t)j * ld + i] = i == j && real_diagonal ? cd(full[(size_t)j * n + i].real())
                                                          : full[(size_t)j * n + i];
  return out;
}

// Packed columns of the uplo triangle of a dense n x n matrix, and back.
static Mat pack(const Mat &a, int ld, int n, cublasFillMode_t uplo) {
  Mat out;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (in_triangle(uplo, i, j))
        out.push_back(at(a, ld, i, j));
  return out;
}
static Mat unpack(const Mat &ap, int n, cublasFillMode_t uplo) {
  Mat out((size_t)n * n);
  size_t k = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      if (in_triangle(uplo, i, j))
        out[(size_t)j * n + i] = ap[k++];
  return out;
}

// A vector's elements (n at stride inc), as a column.
static Mat gather(const Mat &v, int n, int inc) {
  Mat out(n);
  for (int i = 0; i < n; ++i)
    out[i] = v[(size_t)i * inc];
  return out;
}
static Mat scatter(Mat v, const Mat &col, int inc) {
  for (size_t i = 0; i < col.size(); ++i)
    v[i * inc] = col[i];
  return v;
}
static Mat axpby(cd alpha, const Mat &x, cd beta, const Mat &y) {
  Mat out(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    out[i] = alpha * x[i] + (beta == cd(0) ? cd(0) : beta * y[i]);
  return out;
}

// A scalar in host or device memory, by the handle's pointer mode.
template <typename S>
struct Scalar {
  S *device;
  S host;
  bool on_device;
  Scalar(cublasHandle_t h, cd v) {
    cublasPointerMode_t mode;
    cublasGetPointerMode(h, &mode);
    on_device = mode == CUBLAS_POINTER_MODE_DEVICE;
    put(host, v);
    CHECK(cudaMallocManaged(&device, sizeof(S)));
    *device = host;
  }
  ~Scalar() { cudaFree(device); }
  const S *ptr() const { return on_device ? device : &host; }
};

static std::string named(const char *routine, cublasHandle_t h) {
  cublasPointerMode_t mode;
  cublasGetPointerMode(h, &mode);
  return std::string(routine) + (mode == CUBLAS_POINTER_MODE_DEVICE ? " device" : " host");
}

const cd ALPHA(0.75, -0.5), BETA(-1.25, 0.25);
template <typename T>
static cd alpha_of() {
  return is_complex<T>() ? ALPHA : cd(ALPHA.real());
}
template <typename T>
static cd beta_of() {
  return is_complex<T>() ? BETA : cd(BETA.real());
}

// -- level 1 --------------------------------------------------------------------

template <typename T, typename S>
static void test_level1(cublasHandle_t h, const char *t,
                        cublasStatus_t (*copy)(cublasHandle_t, int, const T *, int, T *, int),
                        cublasStatus_t (*swap)(cublasHandle_t, int, T *, int, T *, int),
                        cublasStatus_t (*scal)(cublasHandle_t, int, const S *, T *, int),
                        cublasStatus_t (*amin)(cublasHandle_t, int, const T *, int, int *)) {
  const int n = 7;
  Buf<T> x(n * 2), y(n * 3);
  Mat x0 = x.mat(), y0 = y.mat();
  CHECK(copy(h, n, x.p, 2, y.p, 3));
  expect((std::string(t) + "copy").c_str(), y, scatter(y0, gather(x0, n, 2), 3));
  Mat y1 = y.mat();
  CHECK(swap(h, n, x.p, 2, y.p, 3));
  CHECK(cudaDeviceSynchronize());
  expect((std::string(t) + "swap").c_str(), x, scatter(x0, gather(y1, n, 3), 2));
  Mat x1 = x.mat();
  cd alpha = std::is_same<S, T>::value ? alpha_of<T>() : cd(ALPHA.real());
  Scalar<S> a(h, alpha);
  CHECK(scal(h, n, a.ptr(), x.p, 2));
  Mat scaled = gather(x1, n, 2);
  for (auto &v : scaled)
    v *= alpha;
  expect(named((std::string(t) + "scal").c_str(), h).c_str(), x, scatter(x1, scaled, 2));
  // amin: 1-based, the first smallest |re| + |im|.
  int *result;
  CHECK(cudaMallocManaged(&result, sizeof(int)));
  Mat xs = x.mat();
  put(x.p[2 * 4], cd(0.001, 0));
  int want = 5;
  CHECK(amin(h, n, x.p, 2, result));
  CHECK(cudaDeviceSynchronize());
  report(named((std::string("I") + (char)tolower(t[0]) + "amin").c_str(), h), *result == want,
         std::to_string(*result));
  cudaFree(result);
}

template <typename T>
static void test_dot(cublasHandle_t h, const char *name,
                     cublasStatus_t (*dot)(cublasHandle_t, int, const T *, int, const T *, int,
                                           T *),
                     bool conjugate) {
  const int n = 9;
  Buf<T> x(n), y(n * 2), r(1);
  Mat xm = x.mat(), ym = y.mat();
  cd want = 0;
  for (int i = 0; i < n; ++i)
    want += (conjugate ? std::conj(xm[i]) : xm[i]) * ym[(size_t)i * 2];
  cublasPointerMode_t mode;
  cublasGetPointerMode(h, &mode);
  T host;
  CHECK(dot(h, n, x.p, 1, y.p, 2, mode == CUBLAS_POINTER_MODE_DEVICE ? r.p : &host));
  if (mode == CUBLAS_POINTER_MODE_HOST) // there when the call returns
    r.p[0] = host;
  expect(named(name, h).c_str(), r, Mat{want});
}

template <typename T, typename R>
static void test_nrm2_asum(cublasHandle_t h, const char *t,
                           cublasStatus_t (*nrm2)(cublasHandle_t, int, const T *, int, R *),
                           cublasStatus_t (*asum)(cublasHandle_t, int, const T *, int, R *)) {
  const int n = 6;
  Buf<T> x(n * 2);
  Buf<R> r(2);
  Mat xm = x.mat();
  double sum2 = 0, sum1 = 0;
  for (int i = 0; i < n; ++i)
    sum2 += std::norm(xm[(size_t)i * 2]),
        sum1 += std::abs(xm[(size_t)i * 2].real()) + std::abs(xm[(size_t)i * 2].imag());
  CHECK(nrm2(h, n, x.p, 2, r.p));
  CHECK(asum(h, n, x.p, 2, r.p + 1));
  expect(named((std::string(t) + "nrm2, asum").c_str(), h).c_str(), r, Mat{std::sqrt(sum2), sum1});
}

// x' = c x + s y, y' = c y - conj(s) x.
template <typename T, typename R, typename S>
static void test_rot(cublasHandle_t h, const char *name,
                     cublasStatus_t (*rot)(cublasHandle_t, int, T *, int, T *, int, const R *,
                                           const S *)) {
  const int n = 5;
  Buf<T> x(n), y(n);
  Mat xm = x.mat(), ym = y.mat();
  cd c = 0.6, s = std::is_same<S, T>::value && is_complex<T>() ? cd(0.48, 0.64) : cd(0.8);
  Scalar<R> cs(h, c);
  Scalar<S> ss(h, s);
  CHECK(rot(h, n, x.p, 1, y.p, 1, cs.ptr(), ss.ptr()));
  Mat xw(n), yw(n);
  for (int i = 0; i < n; ++i)
    xw[i] = c * xm[i] + s * ym[i], yw[i] = c * ym[i] - std::conj(s) * xm[i];
  Mat both = xw;
  both.insert(both.end(), yw.begin(), yw.end());
  Buf<T> got(2 * n, false);
  CHECK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i)
    got.p[i] = x.p[i], got.p[n + i] = y.p[i];
  expect(named(name, h).c_str(), got, both);
}

// -- level 2 --------------------------------------------------------------------

template <typename T>
static void test_gbmv(cublasHandle_t h, const char *name,
                      cublasStatus_t (*gbmv)(cublasHandle_t, cublasOperation_t, int, int, int, int,
                                             const T *, const T *, int, const T *, int, const T *,
                                             T *, int)) {
  const int m = 6, n = 5, kl = 2, ku = 1, lda = kl + ku + 2;
  for (cublasOperation_t op : {CUBLAS_OP_N, CUBLAS_OP_C}) {
    Buf<T> a(lda * n), x(op == CUBLAS_OP_N ? n : m), y(op == CUBLAS_OP_N ? m : n);
    Mat am = a.mat(), dense((size_t)m * n);
    for (int j = 0; j < n; ++j)
      for (int i = std::max(0, j - ku); i < std::min(m, j + kl + 1); ++i)
        dense[(size_t)j * m + i] = at(am, lda, ku + i - j, j);
    Mat opa = op_of(dense, m, m, n, op);
    int rows = op == CUBLAS_OP_N ? m : n, cols = op == CUBLAS_OP_N ? n : m;
    Scalar<T> alpha(h, alpha_of<T>()), beta(h, beta_of<T>());
    Mat want = axpby(alpha_of<T>(), mul(opa, x.mat(), rows, cols, 1), beta_of<T>(), y.mat());
    CHECK(gbmv(h, op, m, n, kl, ku, alpha.ptr(), a.p, lda, x.p, 1, beta.ptr(), y.p, 1));
    expect((named(name, h) + (op == CUBLAS_OP_N ? " N" : " C")).c_str(), y, want);
  }
}

// ger(u/c): A += alpha x y^T (y^H).
template <typename T>
static void test_ger(cublasHandle_t h, const char *name,
                     cublasStatus_t (*ger)(cublasHandle_t, int, int, const T *, const T *, int,
                                           const T *, int, T *, int),
                     bool conjugate) {
  const int m = 4, n = 3, lda = 5;
  Buf<T> x(m), y(n * 2), a(lda * n);
  Mat want = a.mat(), xm = x.mat(), ym = y.mat();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      want[(size_t)j * lda + i] += alpha_of<T>() * xm[i] *
                                   (conjugate ? std::conj(ym[(size_t)j * 2]) : ym[(size_t)j * 2]);
  Scalar<T> alpha(h, alpha_of<T>());
  CHECK(ger(h, m, n, alpha.ptr(), x.p, 1, y.p, 2, a.p, lda));
  expect(named(name, h).c_str(), a, want);
}

// symv, hemv: y = alpha A x + beta y.
template <typename T>
static void test_symv(cublasHandle_t h, const char *name,
                      cublasStatus_t (*symv)(cublasHandle_t, cublasFillMode_t, int, const T *,
                                             const T *, int, const T *, int, const T *, T *, int),
                      bool herm) {
  const int n = 5, lda = 6;
  for (cublasFillMode_t uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER}) {
    Buf<T> a(lda * n), x(n), y(n);
    Mat full = symmetric(a.mat(), lda, n, uplo, herm);
    Scalar<T> alpha(h, alpha_of<T>()), beta(h, beta_of<T>());
    Mat want = axpby(alpha_of<T>(), mul(full, x.mat(), n, n, 1), beta_of<T>(), y.mat());
    CHECK(symv(h, uplo, n, alpha.ptr(), a.p, lda, x.p, 1, beta.ptr(), y.p, 1));
    expect((named(name, h) + (uplo ? " upper" : " lower")).c_str(), y, want);
  }
}

// spmv, hpmv: symv on the packed triangle.
template <typename T>
static void test_spmv(cublasHandle_t h, const char *name,
                      cublasStatus_t (*spmv)(cublasHandle_t, cublasFillMode_t, int, const T *,
                                             const T *, const T *, int, const T *, T *, int),
                      bool herm) {
  const int n = 5;
  cublasFillMode_t uplo = CUBLAS_FILL_MODE_UPPER;
  Buf<T> ap(n * (n + 1) / 2), x(n), y(n);
  Mat full = symmetric(unpack(ap.mat(), n, uplo), n, n, uplo, herm);
  Scalar<T> alpha(h, alpha_of<T>()), beta(h, beta_of<T>());
  Mat want = axpby(alpha_of<T>(), mul(full, x.mat(), n, n, 1), beta_of<T>(), y.mat());
  CHECK(spmv(h, uplo, n, alpha.ptr(), ap.p, x.p, 1, beta.ptr(), y.p, 1));
  expect(named(name, h).c_str(), y, want);
}

// syr2, her2: A += alpha x y^H + conj(alpha) y x^H (real: alpha x y^T + alpha y x^T).
template <typename T>
static void test_syr2(cublasHandle_t h, const char *name,
                      cublasStatus_t (*syr2)(cublasHandle_t, cublasFillMode_t, int, const T *,
                                             const T *, int, const T *, int, T *, int),
                      bool herm) {
  const int n = 4, lda = 5;
  cublasFillMode_t uplo = CUBLAS_FILL_MODE_LOWER;
  Buf<T> a(lda * n), x(n), y(n);
  Mat xm = x.mat(), ym = y.mat(), update((size_t)n * n);
  cd al = alpha_of<T>();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      update[(size_t)j * n + i] = herm ? al * xm[i] * std::conj(ym[j]) +
                                             std::conj(al) * ym[i] * std::conj(xm[j])
                                       : al * (xm[i] * ym[j] + ym[i] * xm[j]);
  Mat am = a.mat();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      update[(size_t)j * n + i] += at(am, lda, i, j);
  Mat want = merge_triangle(am, lda, n, uplo, update, herm);
  Scalar<T> alpha(h, al);
  CHECK(syr2(h, uplo, n, alpha.ptr(), x.p, 1, y.p, 1, a.p, lda));
  expect(named(name, h).c_str(), a, want);
}

// her: A += alpha x x^H, alpha real.
template <typename T, typename R>
static void test_her(cublasHandle_t h, const char *name,
                     cublasStatus_t (*her)(cublasHandle_t, cublasFillMode_t, int, const R *,
                                           const T *, int, T *, int)) {
  const int n = 4, lda = 4;
  cublasFillMode_t uplo = CUBLAS_FILL_MODE_UPPER;
  Buf<T> a(lda * n), x(n * 2);
  Mat am = a.mat(), xm = x.mat(), update((size_t)n * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      update[(size_t)j * n + i] = at(am, lda, i, j) +
                                  ALPHA.real() * xm[(size_t)i * 2] * std::conj(xm[(size_t)j * 2]);
  Scalar<R> alpha(h, ALPHA.real());
  CHECK(her(h, uplo, n, alpha.ptr(), x.p, 2, a.p, lda));
  expect(named(name, h).c_str(), a, merge_triangle(am, lda, n, uplo, update, true));
}

// trmv and trsv: x = op(A) x, then back with the solve.
template <typename T>
static void
test_trmv_trsv(cublasHandle_t h, const char *t,
               cublasStatus_t (*trmv)(cublasHandle_t, cublasFillMode_t, cublasOperation_t,
                                      cublasDiagType_t, int, const T *, int, T *, int),
               cublasStatus_t (*trsv)(cublasHandle_t, cublasFillMode_t, cublasOperation_t,
                                      cublasDiagType_t, int, const T *, int, T *, int)) {
  const int n = 5, lda = 5;
  for (cublasOperation_t op : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C}) {
    Buf<T> a(lda * n), x(n);
    for (int i = 0; i < n; ++i) // well conditioned
      put(a.p[i * lda + i], cd(3 + i, 0.5));
    Mat x0 = x.mat();
    Mat full = op_of(triangular(a.mat(), lda, n, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT), n,
                     n, n, op);
    CHECK(trmv(h, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_NON_UNIT, n, a.p, lda, x.p, 1));
    std::string suffix = std::string(" op ") + std::to_string((int)op);
    expect((std::string(t) + "trmv" + suffix).c_str(), x, mul(full, x0, n, n, 1));
    CHECK(trsv(h, CUBLAS_FILL_MODE_LOWER, op, CUBLAS_DIAG_NON_UNIT, n, a.p, lda, x.p, 1));
    expect((std::string(t) + "trsv" + suffix).c_str(), x, x0);
  }
}

// tbmv (band, k superdiagonals) and tpmv (packed), unit diagonal, upper.
template <typename T>
static void
test_tbmv_tpmv(cublasHandle_t h, const char *t,
               cublasStatus_t (*tbmv)(cublasHandle_t, cublasFillMode_t, cublasOperation_t,
                                      cublasDiagType_t, int, int, const T *, int, T *, int),
               cublasStatus_t (*tpmv)(cublasHandle_t, cublasFillMode_t, cublasOperation_t,
                                      cublasDiagType_t, int, const T *, T *, int)) {
  const int n = 6, k = 2, lda = 3;
  cublasFillMode_t up = CUBLAS_FILL_MODE_UPPER;
  Buf<T> band(lda * n), x(n), ap(n * (n + 1) / 2), y(n);
  Mat bm = band.mat(), dense((size_t)n * n);
  for (int j = 0; j < n; ++j)
    for (int i = std::max(0, j - k); i <= j; ++i)
      dense[(size_t)j * n + i] = at(bm, lda, k + i - j, j);
  Mat full = op_of(triangular(dense, n, n, up, CUBLAS_DIAG_UNIT), n, n, n, CUBLAS_OP_T);
  Mat want = mul(full, x.mat(), n, n, 1);
  CHECK(tbmv(h, up, CUBLAS_OP_T, CUBLAS_DIAG_UNIT, n, k, band.p, lda, x.p, 1));
  expect((std::string(t) + "tbmv").c_str(), x, want);
  Mat pfull = triangular(unpack(ap.mat(), n, up), n, n, up, CUBLAS_DIAG_UNIT);
  Mat pwant = mul(pfull, y.mat(), n, n, 1);
  CHECK(tpmv(h, up, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, n, ap.p, y.p, 1));
  expect((std::string(t) + "tpmv").c_str(), y, pwant);
}

// gemv over batches: pointer arrays and strides.
template <typename T>
static void
test_gemv_batched(cublasHandle_t h, const char *t,
                  cublasStatus_t (*batched)(cublasHandle_t, cublasOperation_t, int, int, const T *,
                                            const T *const[], int, const T *const[], int, const T *,
                                            T *const[], int, int),
                  cublasStatus_t (*strided)(cublasHandle_t, cublasOperation_t, int, int, const T *,
                                            const T *, int, long long, const T *, int, long long,
                                            const T *, T *, int, long long, int)) {
  const int m = 4, n = 3, lda = 5, batch = 3;
  const long long sa = lda * n + 1, sx = n + 2, sy = m + 1;
  Buf<T> a(sa * batch), x(sx * batch), y(sy * batch);
  Mat am = a.mat(), xm = x.mat(), want = y.mat();
  cublasOperation_t op = CUBLAS_OP_C; // y: n long
  for (int b = 0; b < batch; ++b) {
    Mat ab(am.begin() + b * sa, am.begin() + b * sa + lda * n);
    Mat opa = op_of(ab, lda, m, n, op);
    Mat xb(xm.begin() + b * sx, xm.begin() + b * sx + m);
    Mat prod = mul(opa, xb, n, m, 1);
    for (int i = 0; i < n; ++i)
      want[b * sy + i] = alpha_of<T>() * prod[i] + beta_of<T>() * want[b * sy + i];
  }
  Scalar<T> alpha(h, alpha_of<T>()), beta(h, beta_of<T>());
  CHECK(strided(h, op, m, n, alpha.ptr(), a.p, lda, sa, x.p, 1, sx, beta.ptr(), y.p, 1, sy, batch));
  expect(named((std::string(t) + "gemvStridedBatched").c_str(), h).c_str(), y, want);
  // The same products again, through arrays of pointers (y back as it was).
  Buf<T> y2(sy * batch);
  Mat y2m = y2.mat();
  const T **ap, **xp;
  T **yp;
  CHECK(cudaMallocManaged(&ap, batch * sizeof *ap));
  CHECK(cudaMallocManaged(&xp, batch * sizeof *xp));
  CHECK(cudaMallocManaged(&yp, batch * sizeof *yp));
  Mat want3 = y2m;
  for (int b = 0; b < batch; ++b) {
    ap[b] = a.p + b * sa, xp[b] = x.p + b * sx, yp[b] = y2.p + b * sy;
    Mat ab(am.begin() + b * sa, am.begin() + b * sa + lda * n);
    Mat xb(xm.begin() + b * sx, xm.begin() + b * sx + m);
    Mat prod = mul(op_of(ab, lda, m, n, op), xb, n, m, 1);
    for (int i = 0; i < n; ++i)
      want3[b * sy + i] = alpha_of<T>() * prod[i] + beta_of<T>() * want3[b * sy + i];
  }
  CHECK(batched(h, op, m, n, alpha.ptr(), ap, lda, xp, 1, beta.ptr(), yp, 1, batch));
  expect(named((std::string(t) + "gemvBatched").c_str(), h).c_str(), y2, want3);
  cudaFree(ap), cudaFree(xp), cudaFree(yp);
}

// Complex geam: C = alpha op(A) + beta op(B); in place as C = alpha C + beta op(B).
template <typename T>
static void test_geam(cublasHandle_t h, const char *name,
                      cublasStatus_t (*geam)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                             int, int, const T *, const T *, int, const T *,
                                             const T *, int, T *, int)) {
  const int m = 3, n = 4, ldc = 5;
  Buf<T> a(n * m), b(m * n), c(ldc * n);
  Mat opa = op_of(a.mat(), n, n, m, CUBLAS_OP_C), want = c.mat(), bm = b.mat();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      want[(size_t)j * ldc + i] = ALPHA * opa[(size_t)j * m + i] + BETA * bm[(size_t)j * m + i];
  Scalar<T> alpha(h, ALPHA), beta(h, BETA);
  CHECK(geam(h, CUBLAS_OP_C, CUBLAS_OP_N, m, n, alpha.ptr(), a.p, n, beta.ptr(), b.p, m, c.p, ldc));
  expect(named(name, h).c_str(), c, want);
  Mat before = c.mat(), opb = op_of(a.mat(), n, n, m, CUBLAS_OP_T);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      before[(size_t)j * ldc + i] = ALPHA * before[(size_t)j * ldc + i] +
                                    BETA * opb[(size_t)j * m + i];
  CHECK(
      geam(h, CUBLAS_OP_N, CUBLAS_OP_T, m, n, alpha.ptr(), c.p, ldc, beta.ptr(), a.p, n, c.p, ldc));
  expect((named(name, h) + " in place").c_str(), c, before);
}

// -- level 3 --------------------------------------------------------------------

// symm, hemm: C = alpha A B + beta C (left) or alpha B A + beta C.
template <typename T>
static void test_symm(cublasHandle_t h, const char *name,
                      cublasStatus_t (*symm)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t,
                                             int, int, const T *, const T *, int, const T *, int,
                                             const T *, T *, int),
                      bool herm) {
  const int m = 4, n = 3, ldc = 5;
  for (cublasSideMode_t side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT}) {
    int ka = side == CUBLAS_SIDE_LEFT ? m : n;
    Buf<T> a(ka * ka), b(m * n), c(ldc * n);
    Mat full = symmetric(a.mat(), ka, ka, CUBLAS_FILL_MODE_UPPER, herm);
    Mat prod = side == CUBLAS_SIDE_LEFT ? mul(full, b.mat(), m, m, n) : mul(b.mat(), full, m, n, n);
    Mat want = c.mat();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i)
        want[(size_t)j * ldc + i] = alpha_of<T>() * prod[(size_t)j * m + i] +
                                    beta_of<T>() * want[(size_t)j * ldc + i];
    Scalar<T> alpha(h, alpha_of<T>()), beta(h, beta_of<T>());
    CHECK(symm(h, side, CUBLAS_FILL_MODE_UPPER, m, n, alpha.ptr(), a.p, ka, b.p, m, beta.ptr(), c.p,
               ldc));
    expect((named(name, h) + (side ? " right" : " left")).c_str(), c, want);
  }
}

// The rank-k family on C's uplo triangle: C = alpha op(A) op(B)^T (^H) + beta C;
// syr2k adds alpha op(B) op(A)^T (her2k: conj(alpha) op(B) op(A)^H).
enum rank_kind { SYRK, SYR2K, SYRKX };
template <typename T>
static Mat rank_reference(rank_kind kind, bool herm, cublasOperation_t op, int n, int k,
                          const Buf<T> &a, const Buf<T> &b, const Buf<T> &c, int ldc, cd alpha,
                          cd beta) {
  int lda = op == CUBLAS_OP_N ? n : k, cols = op == CUBLAS_OP_N ? k : n;
  Mat opa = op_of(a.mat(), lda, lda, cols, op);                          // n x k
  Mat opb = op_of(kind == SYRK ? a.mat() : b.mat(), lda, lda, cols, op); // n x k
  Mat opa_t(opa.size()), opb_t(opb.size());                              // k x n, ^T or ^H
  for (int j = 0; j < n; ++j)
    for (int l = 0; l < k; ++l) {
      cd av = opa[(size_t)l * n + j], bv = opb[(size_t)l * n + j];
      opa_t[(size_t)j * k + l] = herm ? std::conj(av) : av;
      opb_t[(size_t)j * k + l] = herm ? std::conj(bv) : bv;
    }
  Mat full = mul(opa, opb_t, n, k, n), other = mul(opb, opa_t, n, k, n);
  for (size_t i = 0; i < full.size(); ++i)
    full[i] = alpha * full[i] +
              (kind == SYR2K ? (herm ? std::conj(alpha) : alpha) * other[i] : cd(0));
  Mat cm = c.mat();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      full[(size_t)j * n + i] += beta * cm[(size_t)j * ldc + i];
  return merge_triangle(cm, ldc, n, CUBLAS_FILL_MODE_LOWER, full, herm);
}

template <typename T, typename S>
static void test_syrk(cublasHandle_t h, const char *name,
                      cublasStatus_t (*syrk)(cublasHandle_t, cublasFillMode_t, cublasOperation_t,
                                             int, int, const S *, const T *, int, const S *, T *,
                                             int),
                      bool herm) {
  const int n = 4, k = 3, ldc = 5;
  cublasOperation_t op = herm ? CUBLAS_OP_C : CUBLAS_OP_T;
  for (cublasOperation_t o : {CUBLAS_OP_N, op}) {
    int lda = o == CUBLAS_OP_N ? n : k;
    Buf<T> a(lda * (o == CUBLAS_OP_N ? k : n)), c(ldc * n);
    cd al = herm ? cd(ALPHA.real()) : alpha_of<T>(), be = herm ? cd(BETA.real()) : beta_of<T>();
    Mat want = rank_reference(SYRK, herm, o, n, k, a, a, c, ldc, al, be);
    Scalar<S> alpha(h, al), beta(h, be);
    CHECK(syrk(h, CUBLAS_FILL_MODE_LOWER, o, n, k, alpha.ptr(), a.p, lda, beta.ptr(), c.p, ldc));
    expect((named(name, h) + " op " + std::to_string((int)o)).c_str(), c, want);
  }
}

// syr2k, her2k, syrkx, herkx: beta of type U (her2k, herkx: real).
template <typename T, typename U>
static void test_rank2(cublasHandle_t h, const char *name,
                       cublasStatus_t (*fn)(cublasHandle_t, cublasFillMode_t, cublasOperation_t,
                                            int, int, const T *, const T *, int, const T *, int,
                                            const U *, T *, int),
                       bool herm, rank_kind kind) {
  const int n = 4, k = 3, ldc = 4;
  cublasOperation_t o = herm ? CUBLAS_OP_C : CUBLAS_OP_N;
  int lda = o == CUBLAS_OP_N ? n : k;
  Buf<T> a(lda * (o == CUBLAS_OP_N ? k : n)), b(lda * (o == CUBLAS_OP_N ? k : n)), c(ldc * n);
  cd be = herm ? cd(BETA.real()) : beta_of<T>();
  Mat want = rank_reference(kind, herm, o, n, k, a, b, c, ldc, alpha_of<T>(), be);
  Scalar<T> alpha(h, alpha_of<T>());
  Scalar<U> beta(h, be);
  CHECK(fn(h, CUBLAS_FILL_MODE_LOWER, o, n, k, alpha.ptr(), a.p, lda, b.p, lda, beta.ptr(), c.p,
           ldc));
  expect(named(name, h).c_str(), c, want);
}

// trmm out of place, then trsm back in place; trsmBatched on two.
template <typename T>
static void
test_trmm_trsm(cublasHandle_t h, const char *t,
               cublasStatus_t (*trmm)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t,
                                      cublasOperation_t, cublasDiagType_t, int, int, const T *,
                                      const T *, int, const T *, int, T *, int),
               cublasStatus_t (*trsm)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t,
                                      cublasOperation_t, cublasDiagType_t, int, int, const T *,
                                      const T *, int, T *, int),
               cublasStatus_t (*batched)(cublasHandle_t, cublasSideMode_t, cublasFillMode_t,
                                         cublasOperation_t, cublasDiagType_t, int, int, const T *,
                                         const T *const[], int, T *const[], int, int)) {
  const int m = 4, n = 3, ldb = 4, ldc = 6;
  for (cublasSideMode_t side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT}) {
    int ka = side == CUBLAS_SIDE_LEFT ? m : n;
    Buf<T> a(ka * ka), b(ldb * n), c(ldc * n);
    for (int i = 0; i < ka; ++i)
      put(a.p[i * ka + i], cd(2 + i, -0.5));
    Mat tri = op_of(triangular(a.mat(), ka, ka, CUBLAS_FILL_MODE_UPPER, CUBLAS_DIAG_NON_UNIT), ka,
                    ka, ka, CUBLAS_OP_C);
    Mat prod = side == CUBLAS_SIDE_LEFT ? mul(tri, b.mat(), m, m, n) : mul(b.mat(), tri, m, n, n);
    Mat want = c.mat();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i)
        want[(size_t)j * ldc + i] = alpha_of<T>() * prod[(size_t)j * m + i];
    Scalar<T> alpha(h, alpha_of<T>()), inverse(h, 1.0 / alpha_of<T>());
    std::string s = std::string(side ? " right" : " left");
    CHECK(trmm(h, side, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_C, CUBLAS_DIAG_NON_UNIT, m, n,
               alpha.ptr(), a.p, ka, b.p, ldb, c.p, ldc));
    expect(named((std::string(t) + "trmm" + s).c_str(), h).c_str(), c, want);
    Mat bm = b.mat();
    CHECK(trsm(h, side, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_C, CUBLAS_DIAG_NON_UNIT, m, n,
               inverse.ptr(), a.p, ka, c.p, ldc));
    Mat back = c.mat();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i)
        back[(size_t)j * ldc + i] = bm[(size_t)j * ldb + i];
    expect(named((std::string(t) + "trsm" + s).c_str(), h).c_str(), c, back);
  }
  // Batched: two left solves of op(A) X = alpha B.
  Buf<T> a0(m * m), a1(m * m), b0(m * n), b1(m * n);
  Buf<T> *as[] = {&a0, &a1}, *bs[] = {&b0, &b1};
  const T **ap;
  T **bp;
  CHECK(cudaMallocManaged(&ap, 2 * sizeof *ap));
  CHECK(cudaMallocManaged(&bp, 2 * sizeof *bp));
  Mat wants[2];
  for (int i = 0; i < 2; ++i) {
    for (int d = 0; d < m; ++d)
      put(as[i]->p[d * m + d], cd(3 + d, 0.25));
    ap[i] = as[i]->p, bp[i] = bs[i]->p;
    wants[i] = bs[i]->mat();
    Mat tri = triangular(as[i]->mat(), m, m, CUBLAS_FILL_MODE_LOWER, CUBLAS_DIAG_NON_UNIT);
    Mat rhs = mul(tri, wants[i], m, m, n);
    for (int e = 0; e < m * n; ++e) {
      put(bs[i]->p[e], rhs[e] / alpha_of<T>());
    }
  }
  Scalar<T> alpha(h, alpha_of<T>());
  CHECK(batched(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, m,
                n, alpha.ptr(), ap, m, bp, m, 2));
  std::string why;
  bool ok = close(b0, wants[0], why) && close(b1, wants[1], why);
  report(named((std::string(t) + "trsmBatched").c_str(), h), ok, why);
  cudaFree(ap), cudaFree(bp);
}

template <typename T>
static void test_dgmm_pack(cublasHandle_t h, const char *t,
                           cublasStatus_t (*dgmm)(cublasHandle_t, cublasSideMode_t, int, int,
                                                  const T *, int, const T *, int, T *, int),
                           cublasStatus_t (*tpttr)(cublasHandle_t, cublasFillMode_t, int, const T *,
                                                   T *, int),
                           cublasStatus_t (*trttp)(cublasHandle_t, cublasFillMode_t, int, const T *,
                                                   int, T *)) {
  const int m = 4, n = 3, lda = 5, ldc = 4;
  for (cublasSideMode_t side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT}) {
    Buf<T> a(lda * n), x(2 * (side == CUBLAS_SIDE_LEFT ? m : n)), c(ldc * n);
    Mat am = a.mat(), xm = x.mat(), want((size_t)ldc * n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i)
        want[(size_t)j * ldc + i] = at(am, lda, i, j) * xm[(size_t)2 * (side ? j : i)];
    CHECK(dgmm(h, side, m, n, a.p, lda, x.p, 2, c.p, ldc));
    expect((std::string(t) + "dgmm" + (side ? " right" : " left")).c_str(), c, want);
  }
  const int N = 5, ld = 6;
  for (cublasFillMode_t uplo : {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER}) {
    Buf<T> full(ld * N), ap(N * (N + 1) / 2), back(ld * N);
    Mat fm = full.mat();
    CHECK(trttp(h, uplo, N, full.p, ld, ap.p));
    expect((std::string(t) + "trttp" + (uplo ? " upper" : " lower")).c_str(), ap,
           pack(fm, ld, N, uplo));
    Mat dense((size_t)N * N);
    for (int j = 0; j < N; ++j)
      for (int i = 0; i < N; ++i)
        dense[(size_t)j * N + i] = at(fm, ld, i, j);
    Mat want = merge_triangle(back.mat(), ld, N, uplo, dense, false);
    CHECK(tpttr(h, uplo, N, ap.p, back.p, ld));
    expect((std::string(t) + "tpttr" + (uplo ? " upper" : " lower")).c_str(), back, want);
  }
}

// Two groups of GEMMs: sizes and transposes per group, alpha and beta per group.
template <typename T>
static void test_grouped(cublasHandle_t h, const char *name,
                         cublasStatus_t (*grouped)(cublasHandle_t, const cublasOperation_t[],
                                                   const cublasOperation_t[], const int[],
                                                   const int[], const int[], const T[],
                                                   const T *const[], const int[], const T *const[],
                                                   const int[], const T[], T *const[], const int[],
                                                   int, const int[])) {
  cublasOperation_t ta[] = {CUBLAS_OP_N, CUBLAS_OP_T}, tb[] = {CUBLAS_OP_T, CUBLAS_OP_N};
  int m[] = {3, 2}, n[] = {2, 4}, k[] = {4, 3}, size[] = {2, 1};
  int lda[] = {3, 3}, ldb[] = {2, 3}, ldc[] = {3, 2};
  T alpha[] = {(T)1.5, (T)-0.5}, beta[] = {(T)0.5, (T)0};
  std::vector<Buf<T> *> bufs;
  const T **ap, **bp;
  T **cp;
  CHECK(cudaMallocManaged(&ap, 3 * sizeof *ap));
  CHECK(cudaMallocManaged(&bp, 3 * sizeof *bp));
  CHECK(cudaMallocManaged(&cp, 3 * sizeof *cp));
  Mat wants[3];
  int e = 0;
  for (int g = 0; g < 2; ++g)
    for (int i = 0; i < size[g]; ++i, ++e) {
      auto *a = new Buf<T>(lda[g] * (ta[g] == CUBLAS_OP_N ? k[g] : m[g]));
      auto *b = new Buf<T>(ldb[g] * (tb[g] == CUBLAS_OP_N ? n[g] : k[g]));
      auto *c = new Buf<T>(ldc[g] * n[g]);
      bufs.push_back(a), bufs.push_back(b), bufs.push_back(c);
      ap[e] = a->p, bp[e] = b->p, cp[e] = c->p;
      Mat opa = op_of(a->mat(), lda[g], ta[g] == CUBLAS_OP_N ? m[g] : k[g],
                      ta[g] == CUBLAS_OP_N ? k[g] : m[g], ta[g]);
      Mat opb = op_of(b->mat(), ldb[g], tb[g] == CUBLAS_OP_N ? k[g] : n[g],
                      tb[g] == CUBLAS_OP_N ? n[g] : k[g], tb[g]);
      Mat prod = mul(opa, opb, m[g], k[g], n[g]);
      wants[e] = c->mat();
      for (int j = 0; j < n[g]; ++j)
        for (int r = 0; r < m[g]; ++r)
          wants[e][(size_t)j * ldc[g] + r] = (double)alpha[g] * prod[(size_t)j * m[g] + r] +
                                             (double)beta[g] * wants[e][(size_t)j * ldc[g] + r];
    }
  CHECK(grouped(h, ta, tb, m, n, k, alpha, ap, lda, bp, ldb, beta, cp, ldc, 2, size));
  std::string why;
  bool ok = true;
  for (int i = 0; i < 3 && ok; ++i)
    ok = close(*bufs[3 * i + 2], wants[i], why);
  report(name, ok, why);
  for (auto *b : bufs)
    delete b;
  cudaFree(ap), cudaFree(bp), cudaFree(cp);
}

// -- rotations with computed parameters --------------------------------------------

// rotg: [c s; -conj(s) c] [a; b] = [r; 0], r back in a.
template <typename T, typename R>
static void test_rotg(cublasHandle_t h, const char *name,
                      cublasStatus_t (*rotg)(cublasHandle_t, T *, T *, R *, T *)) {
  Buf<T> v(2); // a, b, in device or host memory by the pointer mode
  Buf<R> c(1);
  Buf<T> s(1);
  Mat ab = v.mat();
  cublasPointerMode_t mode;
  cublasGetPointerMode(h, &mode);
  T a = v.p[0], b = v.p[1], sh;
  R ch;
  bool device = mode == CUBLAS_POINTER_MODE_DEVICE;
  CHECK(rotg(h, device ? v.p : &a, device ? v.p + 1 : &b, device ? c.p : &ch, device ? s.p : &sh));
  if (device) {
    CHECK(cudaDeviceSynchronize());
    a = v.p[0], ch = c.p[0], sh = s.p[0];
  }
  cd r = get(a), cv = get(ch), sv = get(sh);
  double e1 = std::abs(cv * ab[0] + sv * ab[1] - r),
         e2 = std::abs(-std::conj(sv) * ab[0] + cv * ab[1]);
  report(named(name, h),
         e1 < tolerance<T>() * 10 && e2 < tolerance<T>() * 10 &&
             std::abs(std::norm(cv) + std::norm(sv) - 1) < tolerance<T>() * 10,
         std::to_string(e1) + " " + std::to_string(e2));
}

// rotmg's H, applied by rotm to (x1, y1), zeroes y1 and gives the new x1.
template <typename T>
static void test_rotmg_rotm(cublasHandle_t h, const char *t,
                            cublasStatus_t (*rotmg)(cublasHandle_t, T *, T *, T *, const T *, T *),
                            cublasStatus_t (*rotm)(cublasHandle_t, int, T *, int, T *, int,
                                                   const T *)) {
  Buf<T> v(4); // d1, d2, x1, y1
  for (int i = 0; i < 4; ++i)
    v.p[i] = (T)(i < 2 ? 1.5 + i : 0.7 + 0.4 * i);
  T x0 = v.p[2], y0 = v.p[3];
  Buf<T> param(5, false), x(1, false), y(1, false);
  CHECK(rotmg(h, v.p, v.p + 1, v.p + 2, v.p + 3, param.p));
  CHECK(cudaDeviceSynchronize());
  x.p[0] = x0, y.p[0] = y0;
  cublasPointerMode_t mode;
  cublasGetPointerMode(h, &mode);
  T host_param[5];
  memcpy(host_param, param.p, sizeof host_param);
  CHECK(rotm(h, 1, x.p, 1, y.p, 1, mode == CUBLAS_POINTER_MODE_DEVICE ? param.p : host_param));
  CHECK(cudaDeviceSynchronize());
  double scale = std::abs((double)x0) + std::abs((double)y0);
  report(named((std::string(t) + "rotmg, rotm").c_str(), h),
         std::abs((double)y.p[0]) < tolerance<T>() * scale &&
             std::abs((double)(x.p[0] - v.p[2])) < tolerance<T>() * scale,
         std::to_string((double)x.p[0]) + " " + std::to_string((double)y.p[0]));
}

// -- the Ex forms ----------------------------------------------------------------

static void test_ex(cublasHandle_t h) {
  const int n = 6;
  Buf<cuComplex> x(n), y(n);
  Mat xm = x.mat(), ym = y.mat();
  cuComplex alpha = scalar_of<cuComplex>(ALPHA);
  CHECK(cublasAxpyEx(h, n, &alpha, CUDA_C_32F, x.p, CUDA_C_32F, 1, y.p, CUDA_C_32F, 1, CUDA_C_32F));
  expect("AxpyEx c32", y, axpby(ALPHA, xm, 1, ym));
  Buf<cuDoubleComplex> zx(n), zy(n), zr(1);
  Mat zxm = zx.mat(), zym = zy.mat();
  cd dot = 0;
  for (int i = 0; i < n; ++i)
    dot += std::conj(zxm[i]) * zym[i];
  cuDoubleComplex result;
  CHECK(cublasDotcEx(h, n, zx.p, CUDA_C_64F, 1, zy.p, CUDA_C_64F, 1, &result, CUDA_C_64F,
                     CUDA_C_64F));
  zr.p[0] = result;
  expect("DotcEx c64", zr, Mat{dot});
  Buf<float> norm(1);
  double sum = 0;
  for (int i = 0; i < n; ++i)
    sum += std::norm(xm[i]);
  float nr;
  CHECK(cublasNrm2Ex(h, n, x.p, CUDA_C_32F, 1, &nr, CUDA_R_32F, CUDA_R_32F));
  norm.p[0] = nr;
  expect("Nrm2Ex c32", norm, Mat{std::sqrt(sum)});
  double real_alpha = -2.5;
  CHECK(cublasScalEx(h, n, &real_alpha, CUDA_R_64F, zx.p, CUDA_C_64F, 1, CUDA_C_64F));
  Mat scaled = zxm;
  for (auto &v : scaled)
    v *= real_alpha;
  expect("ScalEx c64 by a real", zx, scaled);
  Buf<double> dx(n), dy(n);
  Mat dxm = dx.mat(), dym = dy.mat();
  double c = 0.6, s = 0.8;
  CHECK(
      cublasRotEx(h, n, dx.p, CUDA_R_64F, 1, dy.p, CUDA_R_64F, 1, &c, &s, CUDA_R_64F, CUDA_R_64F));
  Mat rotated(n);
  for (int i = 0; i < n; ++i)
    rotated[i] = c * dxm[i] + s * dym[i];
  expect("RotEx f64", dx, rotated);
  // CherkEx: C = alpha A A^H + beta C on C's lower triangle.
  const int k = 3;
  Buf<cuComplex> a(n * k), cm(n * n);
  Mat want = rank_reference(SYRK, true, CUBLAS_OP_N, n, k, a, a, cm, n, 0.5, 0);
  float half = 0.5f, zero = 0;
  CHECK(cublasCherkEx(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &half, a.p, CUDA_C_32F, n,
                      &zero, cm.p, CUDA_C_32F, n));
  expect("CherkEx", cm, want);
  // The rest of the Ex forms, by type.
  Buf<double> ex(n), ey(n, false);
  CHECK(cublasCopyEx(h, n, ex.p, CUDA_R_64F, 1, ey.p, CUDA_R_64F, 1));
  expect("CopyEx f64", ey, ex.mat());
  int index = 0;
  put(zy.p[3], cd(1e-3, -1e-3));
  CHECK(cublasIaminEx(h, n, zy.p, CUDA_C_64F, 1, &index));
  report("IaminEx c64", index == 4, std::to_string(index));
  float asum = 0;
  CHECK(cublasAsumEx(h, n, x.p, CUDA_C_32F, 1, &asum, CUDA_R_32F, CUDA_R_32F));
  double want_asum = 0;
  for (int i = 0; i < n; ++i)
    want_asum += std::abs(get(x.p[i]).real()) + std::abs(get(x.p[i]).imag());
  report("AsumEx c32", std::abs(asum - want_asum) < 1e-4 * want_asum);
  Buf<float> rx(n), ry(n);
  Mat rxm = rx.mat(), rym = ry.mat();
  float param[5] = {-1, 0.5f, -0.25f, 2, 0.75f}; // flag, h11, h21, h12, h22
  CHECK(
      cublasRotmEx(h, n, rx.p, CUDA_R_32F, 1, ry.p, CUDA_R_32F, 1, param, CUDA_R_32F, CUDA_R_32F));
  Mat rotm(n);
  for (int i = 0; i < n; ++i)
    rotm[i] = 0.5 * rxm[i] + 2.0 * rym[i];
  expect("RotmEx f32", rx, rotm);
  // Types the host BLAS does not have are refused, never approximated.
  report("AxpyEx f16 unsupported",
         cublasAxpyEx(h, n, &alpha, CUDA_R_16F, x.p, CUDA_R_16F, 1, y.p, CUDA_R_16F, 1,
                      CUDA_R_32F) == CUBLAS_STATUS_NOT_SUPPORTED);
  report("CsyrkEx c8i unsupported",
         cublasCsyrkEx(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n, k, &alpha, a.p, CUDA_C_8I, n,
                       &alpha, cm.p, CUDA_C_32F, n) == CUBLAS_STATUS_NOT_SUPPORTED);
}

// SgemmEx (f16 operands, f32 C), CgemmEx, Cgemm3mBatched, int8 GemmEx.
static void test_gemm_ex(cublasHandle_t h) {
  const int m = 3, n = 2, k = 4;
  __half *a, *b;
  CHECK(cudaMallocManaged(&a, m * k * sizeof(__half)));
  CHECK(cudaMallocManaged(&b, k * n * sizeof(__half)));
  Mat am(m * k), bm(k * n);
  for (int i = 0; i < m * k; ++i)
    a[i] = __float2half((float)frand(seed)), am[i] = __half2float(a[i]);
  for (int i = 0; i < k * n; ++i)
    b[i] = __float2half((float)frand(seed)), bm[i] = __half2float(b[i]);
  Buf<float> c(m * n);
  Mat want = axpby(1.5, mul(am, bm, m, k, n), -0.5, c.mat());
  float alpha = 1.5f, beta = -0.5f;
  CHECK(cublasSgemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, CUDA_R_16F, m, b, CUDA_R_16F,
                      k, &beta, c.p, CUDA_R_32F, m));
  expect("SgemmEx f16 f16 f32", c, want);
  report("SgemmEx int8 x f16 unsupported",
         cublasSgemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, CUDA_R_8I, m, b, CUDA_R_16F,
                       k, &beta, c.p, CUDA_R_32F, m) == CUBLAS_STATUS_NOT_SUPPORTED);
  Buf<cuComplex> ca(k * m), cb(k * n), cc(m * n);
  Mat cwant = axpby(ALPHA, mul(op_of(ca.mat(), k, k, m, CUBLAS_OP_C), cb.mat(), m, k, n), BETA,
                    cc.mat());
  cuComplex calpha = scalar_of<cuComplex>(ALPHA), cbeta = scalar_of<cuComplex>(BETA);
  CHECK(cublasCgemmEx(h, CUBLAS_OP_C, CUBLAS_OP_N, m, n, k, &calpha, ca.p, CUDA_C_32F, k, cb.p,
                      CUDA_C_32F, k, &cbeta, cc.p, CUDA_C_32F, m));
  expect("CgemmEx op C", cc, cwant);
  Buf<cuComplex> c2(m * n);
  Mat c2want = axpby(ALPHA, mul(op_of(ca.mat(), k, k, m, CUBLAS_OP_T), cb.mat(), m, k, n), BETA,
                     c2.mat());
  cuComplex **arrays;
  CHECK(cudaMallocManaged(&arrays, 3 * sizeof *arrays));
  arrays[0] = ca.p, arrays[1] = cb.p, arrays[2] = c2.p;
  CHECK(cublasCgemm3mBatched(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &calpha, arrays, k, arrays + 1,
                             k, &cbeta, arrays + 2, m, 1));
  expect("Cgemm3mBatched", c2, c2want);
  cudaFree(a), cudaFree(b), cudaFree(arrays);

  // int8 x int8: exact sums; int32 out (int32 scalars) or f32 out (f32 scalars).
  int8_t *ia, *ib;
  int32_t *ic;
  float *fc;
  CHECK(cudaMallocManaged(&ia, k * m));
  CHECK(cudaMallocManaged(&ib, k * n));
  CHECK(cudaMallocManaged(&ic, m * n * sizeof(int32_t)));
  CHECK(cudaMallocManaged(&fc, m * n * sizeof(float)));
  for (int i = 0; i < k * m; ++i)
    ia[i] = (int8_t)(i * 37 % 255 - 127);
  for (int i = 0; i < k * n; ++i)
    ib[i] = (int8_t)(i * 91 % 255 - 127);
  std::vector<long long> sums(m * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      for (int l = 0; l < k; ++l) // A is k x m, op T
        sums[j * m + i] += (long long)ia[i * k + l] * ib[j * k + l];
  for (int i = 0; i < m * n; ++i)
    ic[i] = 1000 + i, fc[i] = 0.5f * i;
  int32_t ialpha = 3, ibeta = -2;
  CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &ialpha, ia, CUDA_R_8I, k, ib, CUDA_R_8I,
                     k, &ibeta, ic, CUDA_R_32I, m, CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT));
  float falpha = 0.25f, fbeta = 2;
  CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &falpha, ia, CUDA_R_8I, k, ib, CUDA_R_8I,
                     k, &fbeta, fc, CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  CHECK(cudaDeviceSynchronize());
  bool exact = true, close_f = true;
  for (int i = 0; i < m * n; ++i) {
    exact = exact && ic[i] == (int32_t)(3 * sums[i] - 2 * (1000 + i));
    close_f = close_f && std::fabs(fc[i] - (0.25 * sums[i] + 2 * 0.5 * i)) < 1e-3;
  }
  report("GemmEx int8 -> int32 COMPUTE_32I", exact);
  report("GemmEx int8 -> f32 COMPUTE_32F", close_f);
  report("GemmEx int8 -> f16 unsupported",
         cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &falpha, ia, CUDA_R_8I, k, ib,
                      CUDA_R_8I, k, &fbeta, fc, CUDA_R_16F, m, CUBLAS_COMPUTE_32F,
                      CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_NOT_SUPPORTED);
  cudaFree(ia), cudaFree(ib), cudaFree(ic), cudaFree(fc);
}

// Batched LU: getrf (pivoted or not), getrs, getri, matinv; checked by
// products with A (A X = B, A inv(A) = I).
template <typename T>
static void
test_lu(cublasHandle_t h, const char *t,
        cublasStatus_t (*getrf)(cublasHandle_t, int, T *const[], int, int *, int *, int),
        cublasStatus_t (*getrs)(cublasHandle_t, cublasOperation_t, int, int, const T *const[], int,
                                const int *, T *const[], int, int *, int),
        cublasStatus_t (*matinv)(cublasHandle_t, int, const T *const[], int, T *const[], int, int *,
                                 int)) {
  const int n = 5, nrhs = 2, lda = 6, batch = 2;
  Buf<T> a0(lda * n), a1(lda * n), b0(n * nrhs), b1(n * nrhs), inv0(n * n), inv1(n * n);
  Buf<T> *as[] = {&a0, &a1}, *bs[] = {&b0, &b1}, *invs[] = {&inv0, &inv1};
  T **ap, **bp, **ip;
  int *pivots, *info;
  CHECK(cudaMallocManaged(&ap, batch * sizeof *ap));
  CHECK(cudaMallocManaged(&bp, batch * sizeof *bp));
  CHECK(cudaMallocManaged(&ip, batch * sizeof *ip));
  CHECK(cudaMallocManaged(&pivots, batch * n * sizeof(int)));
  CHECK(cudaMallocManaged(&info, batch * sizeof(int)));
  Mat am[2], bm[2];
  for (int i = 0; i < batch; ++i) {
    ap[i] = as[i]->p, bp[i] = bs[i]->p, ip[i] = invs[i]->p;
    am[i] = as[i]->mat(), bm[i] = bs[i]->mat();
  }
  // matinv first (A is only read), then getrf in place and getrs.
  CHECK(matinv(h, n, (const T *const *)ap, lda, ip, n, info, batch));
  std::string why;
  bool ok = true;
  for (int i = 0; i < batch && ok; ++i) {
    Mat dense((size_t)n * n), eye((size_t)n * n);
    for (int j = 0; j < n; ++j)
      for (int r = 0; r < n; ++r)
        dense[(size_t)j * n + r] = at(am[i], lda, r, j), eye[(size_t)j * n + r] = r == j;
    Buf<T> product(n * n, false);
    CHECK(cudaDeviceSynchronize());
    Mat pm = mul(dense, invs[i]->mat(), n, n, n);
    for (int e = 0; e < n * n; ++e)
      put(product.p[e], pm[e]);
    ok = close(product, eye, why) && info[i] == 0;
  }
  report((std::string(t) + "matinvBatched A inv(A) = I").c_str(), ok, why);
  int host_info = -99;
  CHECK(getrf(h, n, ap, lda, pivots, info, batch));
  CHECK(
      getrs(h, CUBLAS_OP_N, n, nrhs, (const T *const *)ap, lda, pivots, bp, n, &host_info, batch));
  CHECK(cudaDeviceSynchronize());
  ok = host_info == 0;
  for (int i = 0; i < batch && ok; ++i) {
    Mat dense((size_t)n * n);
    for (int j = 0; j < n; ++j)
      for (int r = 0; r < n; ++r)
        dense[(size_t)j * n + r] = am[i][(size_t)j * lda + r];
    Buf<T> product(n * nrhs, false);
    Mat pm = mul(dense, bs[i]->mat(), n, n, nrhs);
    for (int e = 0; e < n * nrhs; ++e)
      put(product.p[e], pm[e]);
    ok = close(product, bm[i], why) && info[i] == 0;
  }
  report((std::string(t) + "getrfBatched, getrsBatched A X = B").c_str(), ok, why);
  report((std::string(t) + "getrsBatched lda < n: info -6").c_str(),
         getrs(h, CUBLAS_OP_N, n, nrhs, (const T *const *)ap, n - 1, pivots, bp, n, &host_info,
               batch) == CUBLAS_STATUS_INVALID_VALUE &&
             host_info == -6);
  report((std::string(t) + "matinvBatched n > 32").c_str(),
         matinv(h, 33, (const T *const *)ap, 33, ip, 33, info, 1) == CUBLAS_STATUS_INVALID_VALUE);
  cudaFree(ap), cudaFree(bp), cudaFree(ip), cudaFree(pivots), cudaFree(info);
}

// Complex getrf without pivots, then getri: A inv(A) = I.
template <typename T>
static void test_complex_lu(cublasHandle_t h, const char *t,
                            cublasStatus_t (*getrf)(cublasHandle_t, int, T *const[], int, int *,
                                                    int *, int),
                            cublasStatus_t (*getri)(cublasHandle_t, int, const T *const[], int,
                                                    const int *, T *const[], int, int *, int)) {
  const int n = 4;
  Buf<T> a(n * n), c(n * n);
  for (int i = 0; i < n; ++i)
    put(a.p[i * n + i], cd(4 + i, 1)); // no pivoting needed
  Mat dense = a.mat(), eye((size_t)n * n);
  for (int i = 0; i < n; ++i)
    eye[(size_t)i * n + i] = 1;
  T **ap, **cp;
  int *info;
  CHECK(cudaMallocManaged(&ap, sizeof *ap));
  CHECK(cudaMallocManaged(&cp, sizeof *cp));
  CHECK(cudaMallocManaged(&info, 2 * sizeof(int)));
  ap[0] = a.p, cp[0] = c.p;
  CHECK(getrf(h, n, ap, n, nullptr, info, 1));
  CHECK(getri(h, n, (const T *const *)ap, n, nullptr, cp, n, info + 1, 1));
  CHECK(cudaDeviceSynchronize());
  Buf<T> product(n * n, false);
  Mat pm = mul(dense, c.mat(), n, n, n);
  for (int e = 0; e < n * n; ++e)
    put(product.p[e], pm[e]);
  std::string why;
  bool ok = close(product, eye, why) && info[0] == 0 && info[1] == 0;
  report((std::string(t) + "getrfBatched unpivoted, getriBatched").c_str(), ok, why);
  cudaFree(ap), cudaFree(cp), cudaFree(info);
}

// geqrf: R (A's upper triangle after) with A^H A = R^H R; gels: the least
// squares solution's residual orthogonal to A's columns (A^H (A x - c) = 0).
template <typename T>
static void test_qr(cublasHandle_t h, const char *t,
                    cublasStatus_t (*geqrf)(cublasHandle_t, int, int, T *const[], int, T *const[],
                                            int *, int),
                    cublasStatus_t (*gels)(cublasHandle_t, cublasOperation_t, int, int, int,
                                           T *const[], int, T *const[], int, int *, int *, int)) {
  const int m = 6, n = 3, lda = 7;
  Buf<T> a(lda * n), tau(n), a2(lda * n), c(lda * 1);
  Mat am = a.mat(), cm = c.mat();
  for (int i = 0; i < lda * n; ++i)
    a2.p[i] = a.p[i];
  T **ap, **tp, **a2p, **cp;
  int *dev_info, info = -99;
  CHECK(cudaMallocManaged(&ap, sizeof *ap));
  CHECK(cudaMallocManaged(&tp, sizeof *tp));
  CHECK(cudaMallocManaged(&a2p, sizeof *a2p));
  CHECK(cudaMallocManaged(&cp, sizeof *cp));
  CHECK(cudaMallocManaged(&dev_info, sizeof(int)));
  ap[0] = a.p, tp[0] = tau.p, a2p[0] = a2.p, cp[0] = c.p;
  CHECK(geqrf(h, m, n, ap, lda, tp, &info, 1));
  CHECK(cudaDeviceSynchronize());
  Mat r = a.mat(), gram_a((size_t)n * n), gram_r((size_t)n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      for (int l = 0; l < m; ++l)
        gram_a[(size_t)j * n + i] += std::conj(at(am, lda, l, i)) * at(am, lda, l, j);
      for (int l = 0; l <= std::min(i, j); ++l)
        gram_r[(size_t)j * n + i] += std::conj(at(r, lda, l, i)) * at(r, lda, l, j);
    }
  Buf<T> got(n * n, false);
  for (int e = 0; e < n * n; ++e)
    put(got.p[e], gram_r[e]);
  std::string why;
  report((std::string(t) + "geqrfBatched A^H A = R^H R").c_str(),
         close(got, gram_a, why) && info == 0, why);
  CHECK(gels(h, CUBLAS_OP_N, m, n, 1, a2p, lda, cp, lda, &info, dev_info, 1));
  CHECK(cudaDeviceSynchronize());
  Mat x = c.mat(), residual(m), normal(n);
  for (int i = 0; i < m; ++i) {
    residual[i] = -cm[i];
    for (int j = 0; j < n; ++j)
      residual[i] += at(am, lda, i, j) * x[j];
  }
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i)
      normal[j] += std::conj(at(am, lda, i, j)) * residual[i];
  Buf<T> normal_got(n, false);
  for (int j = 0; j < n; ++j)
    put(normal_got.p[j], normal[j]);
  report((std::string(t) + "gelsBatched A^H (A x - c) = 0").c_str(),
         close(normal_got, Mat(n), why) && info == 0 && *dev_info == 0, why);
  report((std::string(t) + "gelsBatched m < n unsupported").c_str(),
         gels(h, CUBLAS_OP_N, 2, 3, 1, a2p, lda, cp, lda, &info, dev_info, 1) ==
             CUBLAS_STATUS_NOT_SUPPORTED);
  report((std::string(t) + "gelsBatched ldc < m: info -9").c_str(),
         gels(h, CUBLAS_OP_N, m, n, 1, a2p, lda, cp, m - 1, &info, dev_info, 1) ==
                 CUBLAS_STATUS_INVALID_VALUE &&
             info == -9);
  cudaFree(ap), cudaFree(tp), cudaFree(a2p), cudaFree(cp), cudaFree(dev_info);
}

// -- NVIDIA's argument checks ------------------------------------------------------

static void test_invalid(cublasHandle_t h) {
  const cublasStatus_t INVALID = CUBLAS_STATUS_INVALID_VALUE;
  Buf<double> d(64);
  Buf<cuComplex> c(64);
  float one = 1;
  double done = 1;
  cuComplex cone = make_cuComplex(1, 0);
  float *f = (float *)d.p;
  report("symm uplo FULL", cublasSsymm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_FULL, 2, 2, &one, f, 2,
                                       f, 2, &one, f, 2) == INVALID);
  report("symm lda < n (right)", cublasDsymm(h, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, 2, 3,
                                             &done, d.p, 2, d.p, 2, &done, d.p, 2) == INVALID);
  report("gbmv lda < kl + ku + 1",
         cublasDgbmv(h, CUBLAS_OP_N, 4, 4, 1, 1, &done, d.p, 2, d.p, 1, &done, d.p, 1) == INVALID);
  report("gbmv trans", cublasDgbmv(h, (cublasOperation_t)7, 4, 4, 1, 1, &done, d.p, 3, d.p, 1,
                                   &done, d.p, 1) == INVALID);
  report("trmv diag", cublasCtrmv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, (cublasDiagType_t)5, 2,
                                  c.p, 2, c.p, 1) == INVALID);
  report("trsv incx 0", cublasStrsv(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, 2, f,
                                    2, f, 0) == INVALID);
  report("Csyrk op C", cublasCsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_C, 2, 2, &cone, c.p, 2,
                                   &cone, c.p, 2) == INVALID);
  report("Cherk op T", cublasCherk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, 2, 2, &one, c.p, 2, &one,
                                   c.p, 2) == INVALID);
  report("Ssyrk op C (a transpose)", cublasSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_C, 2, 2, &one,
                                                 f, 2, &one, f + 16, 2) == CUBLAS_STATUS_SUCCESS);
  report("syrk lda < k (op T)", cublasDsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, 2, 3, &done,
                                            d.p, 2, &done, d.p, 2) == INVALID);
  report("syrkx ldc < n", cublasCsyrkx(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, 3, 1, &cone, c.p, 3,
                                       c.p, 3, &cone, c.p, 2) == INVALID);
  report("trsm ldb < m", cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                     CUBLAS_DIAG_UNIT, 3, 2, &one, f, 3, f, 2) == INVALID);
  report("trmm side",
         cublasDtrmm(h, (cublasSideMode_t)2, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT,
                     2, 2, &done, d.p, 2, d.p, 2, d.p + 8, 2) == INVALID);
  report("ger incy 0", cublasSger(h, 2, 2, &one, f, 1, f, 0, f, 2) == INVALID);
  report("tbmv k < 0", cublasDtbmv(h, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, 2, -1,
                                   d.p, 1, d.p, 1) == INVALID);
  report("spr n < 0", cublasDspr(h, CUBLAS_FILL_MODE_UPPER, -1, &done, d.p, 1, d.p) == INVALID);
  report("dgmm ldc < m", cublasSdgmm(h, CUBLAS_SIDE_LEFT, 3, 2, f, 3, f, 1, f + 8, 2) == INVALID);
  report("tpttr lda < n", cublasZtpttr(h, CUBLAS_FILL_MODE_LOWER, 3, (cuDoubleComplex *)d.p,
                                       (cuDoubleComplex *)d.p + 8, 2) == INVALID);
  cublasOperation_t n_op = CUBLAS_OP_N;
  int two = 2, neg = -1;
  const float *arr[1] = {f};
  float *carr[1] = {f};
  report("grouped group size < 0",
         cublasSgemmGroupedBatched(h, &n_op, &n_op, &two, &two, &two, &one, arr, &two, arr, &two,
                                   &one, carr, &two, 1, &neg) == INVALID);
  report("null handle", cublasIcamin(nullptr, 2, c.p, 1, nullptr) == CUBLAS_STATUS_NOT_INITIALIZED);
  // An empty problem is done at once.
  report("n == 0", cublasZhemv(h, CUBLAS_FILL_MODE_UPPER, 0, nullptr, nullptr, 1, nullptr, 1,
                               nullptr, nullptr, 1) == CUBLAS_STATUS_SUCCESS);
}

// The BF16x9 emulation of f32 GEMMs: a strategy kept, the product f32's.
static void test_emulation(cublasHandle_t h) {
  cublasEmulationStrategy_t strategy;
  CHECK(cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_EAGER));
  CHECK(cublasGetEmulationStrategy(h, &strategy));
  report("emulation strategy kept", strategy == CUBLAS_EMULATION_STRATEGY_EAGER);
  report("emulation strategy invalid",
         cublasSetEmulationStrategy(h, (cublasEmulationStrategy_t)9) ==
             CUBLAS_STATUS_INVALID_VALUE);
  const int m = 3, n = 2, k = 4;
  Buf<float> a(m * k), b(k * n), c(m * n);
  Mat want = mul(a.mat(), b.mat(), m, k, n);
  float one = 1, zero = 0;
  CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, a.p, CUDA_R_32F, m, b.p,
                     CUDA_R_32F, k, &zero, c.p, CUDA_R_32F, m, CUBLAS_COMPUTE_32F_EMULATED_16BFX9,
                     CUBLAS_GEMM_DEFAULT));
  expect("GemmEx COMPUTE_32F_EMULATED_16BFX9", c, want);
  CHECK(cublasSetEmulationStrategy(h, CUBLAS_EMULATION_STRATEGY_DEFAULT));
}

// -- every type, both pointer modes ----------------------------------------------

static void with_scalars(cublasHandle_t h) {
  test_level1<float, float>(h, "S", cublasScopy, cublasSswap, cublasSscal, cublasIsamin);
  test_level1<double, double>(h, "D", cublasDcopy, cublasDswap, cublasDscal, cublasIdamin);
  test_level1<cuComplex, cuComplex>(h, "C", cublasCcopy, cublasCswap, cublasCscal, cublasIcamin);
  test_level1<cuDoubleComplex, double>(h, "Z", cublasZcopy, cublasZswap, cublasZdscal,
                                       cublasIzamin);
  test_dot<cuComplex>(h, "Cdotu", cublasCdotu, false);
  test_dot<cuComplex>(h, "Cdotc", cublasCdotc, true);
  test_dot<cuDoubleComplex>(h, "Zdotc", cublasZdotc, true);
  test_nrm2_asum<cuComplex, float>(h, "Sc", cublasScnrm2, cublasScasum);
  test_nrm2_asum<cuDoubleComplex, double>(h, "Dz", cublasDznrm2, cublasDzasum);
  test_rot<float, float, float>(h, "Srot", cublasSrot);
  test_rot<cuComplex, float, float>(h, "Csrot", cublasCsrot);
  test_rot<cuDoubleComplex, double, cuDoubleComplex>(h, "Zrot", cublasZrot);
  test_rotg<float, float>(h, "Srotg", cublasSrotg);
  test_rotg<cuComplex, float>(h, "Crotg", cublasCrotg);
  test_rotg<cuDoubleComplex, double>(h, "Zrotg", cublasZrotg);
  test_rotmg_rotm<float>(h, "S", cublasSrotmg, cublasSrotm);
  test_rotmg_rotm<double>(h, "D", cublasDrotmg, cublasDrotm);

  test_gbmv<double>(h, "Dgbmv", cublasDgbmv);
  test_gbmv<cuComplex>(h, "Cgbmv", cublasCgbmv);
  test_ger<float>(h, "Sger", cublasSger, false);
  test_ger<cuComplex>(h, "Cgeru", cublasCgeru, false);
  test_ger<cuDoubleComplex>(h, "Zgerc", cublasZgerc, true);
  test_symv<float>(h, "Ssymv", cublasSsymv, false);
  test_symv<cuComplex>(h, "Csymv", cublasCsymv, false);
  test_symv<cuDoubleComplex>(h, "Zhemv", cublasZhemv, true);
  test_spmv<double>(h, "Dspmv", cublasDspmv, false);
  test_spmv<cuComplex>(h, "Chpmv", cublasChpmv, true);
  test_syr2<double>(h, "Dsyr2", cublasDsyr2, false);
  test_syr2<cuDoubleComplex>(h, "Zsyr2", cublasZsyr2, false);
  test_syr2<cuComplex>(h, "Cher2", cublasCher2, true);
  test_her<cuComplex, float>(h, "Cher", cublasCher);

  test_symm<float>(h, "Ssymm", cublasSsymm, false);
  test_symm<cuDoubleComplex>(h, "Zsymm", cublasZsymm, false);
  test_symm<cuComplex>(h, "Chemm", cublasChemm, true);
  test_syrk<double, double>(h, "Dsyrk", cublasDsyrk, false);
  test_syrk<cuComplex, cuComplex>(h, "Csyrk", cublasCsyrk, false);
  test_syrk<cuDoubleComplex, double>(h, "Zherk", cublasZherk, true);
  test_rank2<float, float>(h, "Ssyr2k", cublasSsyr2k, false, SYR2K);
  test_rank2<cuComplex, float>(h, "Cher2k", cublasCher2k, true, SYR2K);
  test_rank2<double, double>(h, "Dsyrkx", cublasDsyrkx, false, SYRKX);
  test_rank2<cuDoubleComplex, cuDoubleComplex>(h, "Zsyrkx", cublasZsyrkx, false, SYRKX);
  test_rank2<cuComplex, float>(h, "Cherkx", cublasCherkx, true, SYRKX);
  test_trmm_trsm<float>(h, "S", cublasStrmm, cublasStrsm, cublasStrsmBatched);
  test_trmm_trsm<cuDoubleComplex>(h, "Z", cublasZtrmm, cublasZtrsm, cublasZtrsmBatched);
  test_gemv_batched<float>(h, "S", cublasSgemvBatched, cublasSgemvStridedBatched);
  test_gemv_batched<cuDoubleComplex>(h, "Z", cublasZgemvBatched, cublasZgemvStridedBatched);
  test_geam<cuComplex>(h, "Cgeam", cublasCgeam);
  test_geam<cuDoubleComplex>(h, "Zgeam", cublasZgeam);
}

int main() {
  cublasHandle_t h;
  cudaStream_t stream;
  CHECK(cublasCreate(&h));
  CHECK(cudaStreamCreate(&stream));
  CHECK(cublasSetStream(h, stream));
  for (cublasPointerMode_t mode : {CUBLAS_POINTER_MODE_HOST, CUBLAS_POINTER_MODE_DEVICE}) {
    CHECK(cublasSetPointerMode(h, mode));
    with_scalars(h);
  }
  CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  test_trmv_trsv<double>(h, "D", cublasDtrmv, cublasDtrsv);
  test_trmv_trsv<cuComplex>(h, "C", cublasCtrmv, cublasCtrsv);
  test_tbmv_tpmv<float>(h, "S", cublasStbmv, cublasStpmv);
  test_tbmv_tpmv<cuDoubleComplex>(h, "Z", cublasZtbmv, cublasZtpmv);
  test_dgmm_pack<double>(h, "D", cublasDdgmm, cublasDtpttr, cublasDtrttp);
  test_dgmm_pack<cuComplex>(h, "C", cublasCdgmm, cublasCtpttr, cublasCtrttp);
  test_grouped<float>(h, "SgemmGroupedBatched", cublasSgemmGroupedBatched);
  test_grouped<double>(h, "DgemmGroupedBatched", cublasDgemmGroupedBatched);
  test_ex(h);
  test_emulation(h);
  test_gemm_ex(h);
  test_lu<float>(h, "S", cublasSgetrfBatched, cublasSgetrsBatched, cublasSmatinvBatched);
  test_lu<cuComplex>(h, "C", cublasCgetrfBatched, cublasCgetrsBatched, cublasCmatinvBatched);
  test_lu<cuDoubleComplex>(h, "Z", cublasZgetrfBatched, cublasZgetrsBatched, cublasZmatinvBatched);
  test_complex_lu<cuComplex>(h, "C", cublasCgetrfBatched, cublasCgetriBatched);
  test_qr<double>(h, "D", cublasDgeqrfBatched, cublasDgelsBatched);
  test_qr<cuComplex>(h, "C", cublasCgeqrfBatched, cublasCgelsBatched);
  test_complex_lu<cuDoubleComplex>(h, "Z", cublasZgetrfBatched, cublasZgetriBatched);
  test_invalid(h);
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cublasDestroy(h));
  CHECK(cudaStreamDestroy(stream));
  printf("%d failures\n", failures);
  return failures != 0;
}
