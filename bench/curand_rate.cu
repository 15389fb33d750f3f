// cuRAND host API throughput: for each generator (XORWOW, Philox4x32-10,
// MRG32k3a; MTGP32's bits and uniforms, the values ours makes of it) and
// distribution (32-bit values, uniform float, normal float, uniform double,
// normal double, Poisson of lambda 10 and 5000), `n` values into device
// memory `reps` times
// in a row after one warm-up call, timed with events; prints GSamples/s.
// Built by nvcc and linked with -lcurand: which libcurand.so.10 it runs
// (ours, zmlir/libraries/curand/, or NVIDIA's) is the library path's choice
// (bench/results/curand.md says how each number was taken).
//
//   curand_rate [n=16777216] [reps=5]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#include <curand.h>

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], nullptr, 10) : (size_t)1 << 24;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  void *d;
  if (cudaMalloc(&d, n * 8) != cudaSuccess)
    return 1;
  struct {
    const char *name;
    curandRngType_t type;
    int kinds;
  } generators[] = {{"XORWOW", CURAND_RNG_PSEUDO_XORWOW, 7},
                    {"PHILOX4_32_10", CURAND_RNG_PSEUDO_PHILOX4_32_10, 7},
                    {"MRG32K3A", CURAND_RNG_PSEUDO_MRG32K3A, 7},
                    {"MTGP32", CURAND_RNG_PSEUDO_MTGP32, 2}};
  const char *kinds[] = {"bits",          "uniform",    "normal",      "uniform double",
                         "normal double", "poisson 10", "poisson 5000"};
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  for (auto &gen : generators) {
    curandGenerator_t g;
    if (curandCreateGenerator(&g, gen.type) != CURAND_STATUS_SUCCESS)
      return 1;
    curandSetPseudoRandomGeneratorSeed(g, 1234);
    for (int k = 0; k < gen.kinds; ++k) {
      float ms = 0;
      for (int rep = -1; rep < reps; ++rep) {
        if (rep == 0)
          cudaEventRecord(start);
        curandStatus_t s = k == 0   ? curandGenerate(g, (unsigned *)d, n)
                           : k == 1 ? curandGenerateUniform(g, (float *)d, n)
                           : k == 2 ? curandGenerateNormal(g, (float *)d, n, 0, 1)
                           : k == 3 ? curandGenerateUniformDouble(g, (double *)d, n)
                           : k == 4
                               ? curandGenerateNormalDouble(g, (double *)d, n, 0, 1)
                               : curandGeneratePoisson(g, (unsigned *)d, n, k == 5 ? 10.0 : 5000.0);
        if (s != CURAND_STATUS_SUCCESS) {
          printf("%s %s: status %d\n", gen.name, kinds[k], (int)s);
          return 1;
        }
      }
      cudaEventRecord(stop);
      cudaEventSynchronize(stop);
      cudaEventElapsedTime(&ms, start, stop);
      printf("%-14s %-15s %8.3f GSamples/s\n", gen.name, kinds[k], n * (double)reps / ms / 1e6);
    }
    curandDestroyGenerator(g);
  }
  return 0;
}
