// Allocation overhead: microseconds per cycle of what llm.c's
// layernorm_backward does in its timed call (cudaMalloc, cudaMemset and
// cudaFree of a small buffer), timed on the host over many cycles, then one
// synchronize. The first cycle (context creation) stays out of the timing.
#include <chrono>
#include <cstdio>
#include <cstdlib>
int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  void* warm = nullptr;
  if (cudaMalloc(&warm, 4096) != cudaSuccess || cudaFree(warm) != cudaSuccess) {
    std::puts("error");
    return 1;
  }
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    void* p = nullptr;
    if (cudaMalloc(&p, 65536) != cudaSuccess || cudaMemset(p, 0, 65536) != cudaSuccess ||
        cudaFree(p) != cudaSuccess) {
      std::puts("error");
      return 1;
    }
  }
  if (cudaDeviceSynchronize() != cudaSuccess) { std::puts("error"); return 1; }
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.3f\n", us / n);
  return 0;
}
