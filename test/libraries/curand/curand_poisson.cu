// cuRAND's curandGeneratePoisson on XORWOW, Philox4x32-10 and MRG32k3a, case
// by case: each case runs a series of calls (Poisson at lambdas on both sides
// of NVIDIA's table limit of 2000, between bits and normals, at odd sizes and
// offsets, in a host generator) on a new generator and prints a checksum of
// every call's values; then the statuses of bad arguments; then
// curandCreatePoissonDistribution's distributions, drawn from by the device
// API's curand_discrete in a kernel of ours. Built twice by
// test_curand.py, linked with our libcurand.so.10 and with NVIDIA's: the
// outputs must be equal line for line. curand_poisson.nvidia.txt is NVIDIA's
// output, which ours must give also where NVIDIA's library is not found.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <curand.h>
#include <curand_kernel.h>
#include <vector>

enum Kind { BITS, NORMAL, UDOUBLE, POISSON, OFFSET, SEED };
struct Step {
  Kind kind;
  size_t n;          // values, or the offset or seed
  double lambda = 0; // Poisson's
};

// Eight values of `d` per thread, from Philox states curand_init(seed, i, 0).
__global__ void discrete(curandDiscreteDistribution_t d, unsigned *out, unsigned long long seed) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  curandStatePhilox4_32_10_t state;
  curand_init(seed, i, 0, &state);
  for (int k = 0; k < 8; ++k)
    out[i * 8 + k] = curand_discrete(&state, d);
}

static uint64_t fnv1a(const unsigned char *p, size_t bytes) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// The steps on a new generator; each call's checksum and every status printed.
static void run(const char *name, curandRngType_t type, bool host, const std::vector<Step> &steps,
                void *device) {
  curandGenerator_t g;
  std::vector<int> statuses;
  std::vector<uint64_t> sums;
  int s = host ? curandCreateGeneratorHost(&g, type) : curandCreateGenerator(&g, type);
  statuses.push_back(s);
  if (s == 0) {
    statuses.push_back(curandSetPseudoRandomGeneratorSeed(g, 20261204ull));
    std::vector<unsigned char> h;
    for (const Step &step : steps) {
      if (step.kind == OFFSET || step.kind == SEED) {
        statuses.push_back(step.kind == OFFSET ? curandSetGeneratorOffset(g, step.n)
                                               : curandSetPseudoRandomGeneratorSeed(g, step.n));
        continue;
      }
      size_t bytes = step.n * (step.kind == UDOUBLE ? 8 : 4);
      h.assign(bytes, 0);
      void *at = host ? (void *)h.data() : device;
      switch (step.kind) {
      case BITS:
        s = curandGenerate(g, (unsigned *)at, step.n);
        break;
      case NORMAL:
        s = curandGenerateNormal(g, (float *)at, step.n, 0.5f, 2.0f);
        break;
      case UDOUBLE:
        s = curandGenerateUniformDouble(g, (double *)at, step.n);
        break;
      default:
        s = curandGeneratePoisson(g, (unsigned *)at, step.n, step.lambda);
        break;
      }
      statuses.push_back(s);
      if (!host && s == 0)
        cudaMemcpy(h.data(), device, bytes, cudaMemcpyDeviceToHost);
      sums.push_back(fnv1a(h.data(), h.size()));
    }
    curandDestroyGenerator(g);
  }
  printf("%s: fnv", name);
  for (uint64_t x : sums)
    printf(" %016llx", (unsigned long long)x);
  printf(", statuses");
  for (int x : statuses)
    printf(" %d", x);
  printf("\n");
}

int main() {
  void *device;
  cudaMalloc(&device, 32 << 20);
  struct {
    const char *name;
    curandRngType_t type;
  } generators[] = {{"XORWOW", CURAND_RNG_PSEUDO_XORWOW},
                    {"PHILOX4_32_10", CURAND_RNG_PSEUDO_PHILOX4_32_10},
                    {"MRG32K3A", CURAND_RNG_PSEUDO_MRG32K3A}};
  struct Case {
    const char *name;
    std::vector<Step> steps;
    bool host;
  } cases[] = {
      {"lambdas",
       {{POISSON, 100000, 0.001},
        {POISSON, 100000, 0.5},
        {POISSON, 100000, 3.7},
        {POISSON, 100000, 10},
        {POISSON, 100000, 64},
        {POISSON, 100000, 250.25},
        {POISSON, 100000, 1000},
        {POISSON, 100000, 1999.99},
        {POISSON, 100000, 2000},
        {POISSON, 100000, 4000.5},
        {POISSON, 100000, 400000}},
       false},
      {"between other calls",
       {{BITS, 1001},
        {POISSON, 5003, 7.25},
        {NORMAL, 998},
        {POISSON, 4097, 2500},
        {UDOUBLE, 333},
        {POISSON, 7, 2500},
        {POISSON, 9000, 2500},
        {BITS, 7},
        {POISSON, 3, 0.75},
        {NORMAL, 10000}},
       false},
      {"offsets",
       {{OFFSET, 5},
        {POISSON, 1, 42},
        {POISSON, 2, 42},
        {POISSON, 77777, 42},
        {OFFSET, 123456789},
        {POISSON, 100001, 5000},
        {OFFSET, 3},
        {POISSON, 6, 3000},
        {POISSON, 65539, 3000},
        {SEED, 7},
        {POISSON, 300000, 12}},
       false},
      {"host generator",
       {{OFFSET, 9}, {POISSON, 70001, 3.5}, {BITS, 7}, {POISSON, 4099, 1500}},
       true},
  };
  for (auto &gen : generators)
    for (auto &c : cases) {
      char name[128];
      snprintf(name, sizeof name, "%s %s", gen.name, c.name);
      run(name, gen.type, c.host, c.steps, device);
    }
  // Statuses of bad arguments and of the other method.
  curandGenerator_t g;
  curandCreateGenerator(&g, CURAND_RNG_PSEUDO_XORWOW);
  printf("status lambda 0: %d\n", (int)curandGeneratePoisson(g, (unsigned *)device, 4, 0.0));
  printf("status lambda -1: %d\n", (int)curandGeneratePoisson(g, (unsigned *)device, 4, -1.0));
  printf("status n 0: %d\n", (int)curandGeneratePoisson(g, (unsigned *)device, 0, 5.0));
  printf("status lambda 400000: %d\n",
         (int)curandGeneratePoisson(g, (unsigned *)device, 4, 400000.0));
  printf("status lambda 400000.5: %d\n",
         (int)curandGeneratePoisson(g, (unsigned *)device, 4, 400000.5));
  printf("status null generator: %d\n", (int)curandGeneratePoisson(nullptr, nullptr, 4, 5.0));
  curandDestroyGenerator(g);
  // curandGeneratePoissonMethod: CURAND_CHOOSE_BEST is curandGeneratePoisson
  // (fresh generators, the same seed); CURAND_POISSON is refused.
  for (curandMethod_t method : {CURAND_CHOOSE_BEST, CURAND_POISSON, CURAND_M2}) {
    curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10);
    curandSetPseudoRandomGeneratorSeed(g, 5);
    std::vector<unsigned> h(1001);
    int s = curandGeneratePoissonMethod(g, (unsigned *)device, h.size(), 6.5, method);
    cudaMemcpy(h.data(), device, h.size() * 4, cudaMemcpyDeviceToHost);
    printf("method %d: %d %016llx\n", (int)method, s,
           s ? 0ull : (unsigned long long)fnv1a((unsigned char *)h.data(), h.size() * 4));
    curandDestroyGenerator(g);
  }
  // The discrete distributions: the table below 2000, normals from it on.
  for (double lambda : {0.5, 12.5, 1999.0, 2500.0}) {
    curandDiscreteDistribution_t d;
    int s = curandCreatePoissonDistribution(lambda, &d);
    std::vector<unsigned> h(4096 * 8);
    if (s == 0) {
      discrete<<<16, 256>>>(d, (unsigned *)device, 7);
      cudaMemcpy(h.data(), device, h.size() * 4, cudaMemcpyDeviceToHost);
    }
    printf("distribution %g: %d %016llx, destroy %d\n", lambda, s,
           s ? 0ull : (unsigned long long)fnv1a((unsigned char *)h.data(), h.size() * 4),
           s ? -1 : (int)curandDestroyDistribution(d));
  }
  curandDiscreteDistribution_t d;
  printf("distribution 0: %d\n", (int)curandCreatePoissonDistribution(0.0, &d));
  printf("destroy null: %d\n", (int)curandDestroyDistribution(nullptr));
  printf(cudaGetLastError() == cudaSuccess ? "DONE\n" : "FAILED\n");
  return 0;
}
