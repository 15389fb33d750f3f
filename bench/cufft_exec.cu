// cufftExec* throughput through whichever libcufft.so.12 is loaded: for each
// case of cufft_cases.h, `reps` transforms back to back in one stream, then a
// synchronize; prints "<case> <plan ms> <ms per transform>" (best of rounds).
#include <cuda_runtime.h>
#include <cufft.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

extern "C" {
#include "cufft_cases.h"
}

static double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 10, rounds = argc > 2 ? atoi(argv[2]) : 3;
  for (int i = 0; i < FFT_CASES; ++i) {
    const struct fft_case *c = &fft_cases[i];
    long long points = fft_case_points(c);
    void *in, *out;
    cudaMalloc(&in, points * sizeof(float2));
    cudaMalloc(&out, points * sizeof(float2));
    cudaMemset(in, 0, points * sizeof(float2));
    cufftHandle plan;
    int n[2] = {c->n[0], c->n[1]};
    double start = now_ms();
    if (cufftPlanMany(&plan, c->rank, n, NULL, 1, 0, NULL, 1, 0, c->real ? CUFFT_R2C : CUFFT_C2C,
                      c->batch) != CUFFT_SUCCESS)
      return 1;
    double planned = now_ms() - start, best = 1e30;
    for (int round = 0; round <= rounds; ++round) { // round 0 warms up
      start = now_ms();
      for (int r = 0; r < reps; ++r)
        if ((c->real ? cufftExecR2C(plan, (float *)in, (cufftComplex *)out)
                     : cufftExecC2C(plan, (cufftComplex *)in, (cufftComplex *)out,
                                    CUFFT_FORWARD)) != CUFFT_SUCCESS)
          return 1;
      cudaDeviceSynchronize();
      if (round)
        best = best < (now_ms() - start) / reps ? best : (now_ms() - start) / reps;
    }
    printf("%s %.2f %.5f\n", c->name, planned, best);
    cufftDestroy(plan);
    cudaFree(in);
    cudaFree(out);
  }
  return 0;
}
