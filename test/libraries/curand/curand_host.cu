// cuRAND's host API (NVIDIA's libcurand.so.10) and its device API
// (curand_kernel.h): every generator, distribution and precision with
// seeds and offsets set, printed as checksums of the raw bits and a few
// samples, so that the output compares line by line with an NVIDIA GPU's
// (test_curand.py keeps an H200's). The statistics and the device API's
// skip-ahead identities are checked here too: a line `FAIL ...` on any.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <curand.h>
#include <curand_kernel.h>
#include <vector>

static int failures = 0;
static std::vector<float> device_xorwow_uniform; // thread t's first curand_uniform

#define CHECK_CUDA(x)                                                                              \
  do {                                                                                             \
    cudaError_t e = (x);                                                                           \
    if (e != cudaSuccess) {                                                                        \
      printf("FAIL %s -> %s\n", #x, cudaGetErrorName(e));                                          \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

// A status other than success is printed, not fatal: NVIDIA's answer is
// part of the comparison (MTGP32 takes no offset).
static bool ok(curandStatus_t s, const char *what) {
  if (s != CURAND_STATUS_SUCCESS)
    printf("  %s -> status %d\n", what, (int)s);
  return s == CURAND_STATUS_SUCCESS;
}

static uint64_t fnv1a(const void *data, size_t bytes) {
  const unsigned char *p = (const unsigned char *)data;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static void expect(bool condition, const char *gen, const char *what, double value) {
  if (!condition) {
    printf("FAIL %s %s: %.6f\n", gen, what, value);
    ++failures;
  }
}

template <typename T>
static void moments(const std::vector<T> &v, double *mean, double *var) {
  double s = 0, s2 = 0;
  for (T x : v) {
    s += (double)x;
    s2 += (double)x * (double)x;
  }
  *mean = s / v.size();
  *var = s2 / v.size() - *mean * *mean;
}

template <typename T>
static void report(const char *gen, const char *kind, const std::vector<T> &v) {
  uint64_t h = fnv1a(v.data(), v.size() * sizeof(T));
  if (sizeof(T) == 8)
    printf("  %-15s fnv %016llx  %.17g %.17g %.17g\n", kind, (unsigned long long)h, (double)v[0],
           (double)v[1], (double)v[v.size() - 1]);
  else
    printf("  %-15s fnv %016llx  %.9g %.9g %.9g\n", kind, (unsigned long long)h, (double)v[0],
           (double)v[1], (double)v[v.size() - 1]);
  (void)gen;
}

// One generator through every distribution; n values each (n even, a
// multiple of the quasi-random dimensions).
static int exercise(const char *gen, curandRngType_t type, bool quasi, size_t n) {
  curandGenerator_t g;
  if (!ok(curandCreateGenerator(&g, type), "curandCreateGenerator")) {
    printf("FAIL %s: no generator\n", gen);
    ++failures;
    return 0;
  }
  printf("%s\n", gen);
  if (quasi) {
    ok(curandSetQuasiRandomGeneratorDimensions(g, 4), "SetQuasiRandomGeneratorDimensions");
  } else {
    ok(curandSetPseudoRandomGeneratorSeed(g, 20261202ull), "SetPseudoRandomGeneratorSeed");
  }
  ok(curandSetGeneratorOffset(g, 4096), "SetGeneratorOffset(4096)");

  void *d = nullptr;
  cudaMalloc(&d, n * sizeof(double));
  std::vector<unsigned> u32(n);
  std::vector<float> f(n);
  std::vector<double> dd(n);
  double mean, var;

  if (ok(curandGenerate(g, (unsigned *)d, n), "Generate")) {
    cudaMemcpy(u32.data(), d, n * 4, cudaMemcpyDeviceToHost);
    report(gen, "bits", u32);
  }
  if (ok(curandGenerateUniform(g, (float *)d, n), "GenerateUniform")) {
    cudaMemcpy(f.data(), d, n * 4, cudaMemcpyDeviceToHost);
    report(gen, "uniform", f);
    moments(f, &mean, &var);
    expect(fabs(mean - 0.5) < 0.01 && fabs(var - 1.0 / 12) < 0.01, gen, "uniform mean", mean);
    bool in_range = true;
    for (float x : f)
      in_range &= x > 0.0f && x <= 1.0f;
    expect(in_range, gen, "uniform in (0, 1]", 0);
  }
  if (ok(curandGenerateNormal(g, (float *)d, n, 1.5f, 2.0f), "GenerateNormal")) {
    cudaMemcpy(f.data(), d, n * 4, cudaMemcpyDeviceToHost);
    report(gen, "normal", f);
    moments(f, &mean, &var);
    expect(fabs(mean - 1.5) < 0.05 && fabs(var - 4.0) < 0.2, gen, "normal mean", mean);
  }
  if (ok(curandGenerateLogNormal(g, (float *)d, n, 0.0f, 0.5f), "GenerateLogNormal")) {
    cudaMemcpy(f.data(), d, n * 4, cudaMemcpyDeviceToHost);
    report(gen, "lognormal", f);
    moments(f, &mean, &var);
    expect(fabs(mean - exp(0.125)) < 0.02, gen, "lognormal mean", mean);
  }
  if (ok(curandGeneratePoisson(g, (unsigned *)d, n, 7.5), "GeneratePoisson")) {
    cudaMemcpy(u32.data(), d, n * 4, cudaMemcpyDeviceToHost);
    report(gen, "poisson", u32);
    moments(u32, &mean, &var);
    expect(fabs(mean - 7.5) < 0.1 && fabs(var - 7.5) < 0.3, gen, "poisson mean", mean);
  }
  if (ok(curandGenerateUniformDouble(g, (double *)d, n), "GenerateUniformDouble")) {
    cudaMemcpy(dd.data(), d, n * 8, cudaMemcpyDeviceToHost);
    report(gen, "uniform double", dd);
    moments(dd, &mean, &var);
    expect(fabs(mean - 0.5) < 0.01, gen, "uniform double mean", mean);
  }
  if (ok(curandGenerateNormalDouble(g, (double *)d, n, -1.0, 0.25), "GenerateNormalDouble")) {
    cudaMemcpy(dd.data(), d, n * 8, cudaMemcpyDeviceToHost);
    report(gen, "normal double", dd);
    moments(dd, &mean, &var);
    expect(fabs(mean + 1.0) < 0.01 && fabs(var - 0.0625) < 0.005, gen, "normal double mean", mean);
  }
  if (ok(curandGenerateLogNormalDouble(g, (double *)d, n, 0.0, 0.5), "GenerateLogNormalDouble")) {
    cudaMemcpy(dd.data(), d, n * 8, cudaMemcpyDeviceToHost);
    report(gen, "lognormal dbl", dd);
  }
  // A new generator with the same seed gives the same numbers.
  if (!quasi) {
    std::vector<float> a(n), b(n);
    for (std::vector<float> *out : {&a, &b}) {
      curandGenerator_t again = nullptr;
      if (ok(curandCreateGenerator(&again, type), "curandCreateGenerator (seed 7)") &&
          ok(curandSetPseudoRandomGeneratorSeed(again, 7ull), "SetPseudoRandomGeneratorSeed(7)") &&
          ok(curandGenerateUniform(again, (float *)d, n), "GenerateUniform (seed 7)"))
        cudaMemcpy(out->data(), d, n * 4, cudaMemcpyDeviceToHost);
      if (again)
        curandDestroyGenerator(again);
    }
    expect(memcmp(a.data(), b.data(), n * 4) == 0, gen, "same seed, same sequence", 0);
    report(gen, "seed 7", a);
  }
  cudaFree(d);
  curandDestroyGenerator(g);
  return 0;
}

// The device API: thread t's state from curand_init(seed, t, 0), and the
// same from curand_init(seed, 0, 0) and skipahead_sequence(t): equal.
template <typename State>
__global__ void device_draws(unsigned long long seed, int skip_by_hand, float *uniform,
                             unsigned *bits, float *normal) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  State s;
  if (skip_by_hand) {
    curand_init(seed, 0, 0, &s);
    skipahead_sequence((unsigned long long)t, &s);
  } else {
    curand_init(seed, t, 0, &s);
  }
  uniform[t] = curand_uniform(&s);
  bits[t] = curand(&s);
  normal[t] = curand_normal(&s);
}

template <typename State>
static int device_api(const char *name) {
  const int threads = 128;
  float *u, *nrm;
  unsigned *b;
  CHECK_CUDA(cudaMalloc(&u, threads * 4));
  CHECK_CUDA(cudaMalloc(&nrm, threads * 4));
  CHECK_CUDA(cudaMalloc(&b, threads * 4));
  std::vector<float> hu[2], hn[2];
  std::vector<unsigned> hb[2];
  for (int by_hand = 0; by_hand < 2; ++by_hand) {
    device_draws<State><<<threads / 64, 64>>>(1234ull, by_hand, u, b, nrm);
    CHECK_CUDA(cudaDeviceSynchronize());
    hu[by_hand].resize(threads);
    hn[by_hand].resize(threads);
    hb[by_hand].resize(threads);
    cudaMemcpy(hu[by_hand].data(), u, threads * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(hn[by_hand].data(), nrm, threads * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(hb[by_hand].data(), b, threads * 4, cudaMemcpyDeviceToHost);
  }
  if (sizeof(State) == sizeof(curandStateXORWOW_t))
    device_xorwow_uniform = hu[0];
  printf("device %s\n", name);
  report(name, "curand_uniform", hu[0]);
  report(name, "curand", hb[0]);
  report(name, "curand_normal", hn[0]);
  expect(hu[0] == hu[1] && hb[0] == hb[1] && hn[0] == hn[1], name,
         "curand_init(seed, t, 0) == skipahead_sequence(t)", 0);
  cudaFree(u);
  cudaFree(nrm);
  cudaFree(b);
  return 0;
}

int main() {
  const size_t n = 1 << 16;
  int version = 0;
  curandGetVersion(&version);
  printf("cuRAND %d\n", version);
  exercise("XORWOW", CURAND_RNG_PSEUDO_XORWOW, false, n);
  exercise("PHILOX4_32_10", CURAND_RNG_PSEUDO_PHILOX4_32_10, false, n);
  exercise("MRG32K3A", CURAND_RNG_PSEUDO_MRG32K3A, false, n);
  exercise("MTGP32", CURAND_RNG_PSEUDO_MTGP32, false, n);
  exercise("SOBOL32", CURAND_RNG_QUASI_SOBOL32, true, n);
  if (device_api<curandStateXORWOW_t>("XORWOW") || device_api<curandStatePhilox4_32_10_t>("PHILOX"))
    return 1;
  // The host API's XORWOW (libcurand's kernels) gives thread t's draws
  // of the device API's curand_init(seed, t, 0) first.
  {
    curandGenerator_t g = nullptr;
    float *d;
    std::vector<float> host(n);
    CHECK_CUDA(cudaMalloc(&d, n * 4));
    if (ok(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_XORWOW), "curandCreateGenerator") &&
        ok(curandSetPseudoRandomGeneratorSeed(g, 1234ull), "SetPseudoRandomGeneratorSeed") &&
        ok(curandGenerateUniform(g, d, n), "GenerateUniform"))
      cudaMemcpy(host.data(), d, n * 4, cudaMemcpyDeviceToHost);
    if (g)
      curandDestroyGenerator(g);
    cudaFree(d);
    bool same = !device_xorwow_uniform.empty() && memcmp(host.data(), device_xorwow_uniform.data(),
                                                         device_xorwow_uniform.size() * 4) == 0;
    expect(same, "XORWOW", "host API == device API, thread by thread", 0);
  }
  printf(failures ? "FAILED %d\n" : "PASSED\n", failures);
  return failures != 0;
}
