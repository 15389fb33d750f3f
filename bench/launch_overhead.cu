// Launch overhead: microseconds per launch of an empty kernel, timed on the
// host over many launches, then one synchronize.
#include <chrono>
#include <cstdio>
#include <cstdlib>
__global__ void empty() {}
int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 2000;
  empty<<<1, 32>>>();  // module load and first-launch costs stay out of the timing
  if (cudaDeviceSynchronize() != cudaSuccess) { std::puts("error"); return 1; }
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) empty<<<1, 32>>>();
  if (cudaDeviceSynchronize() != cudaSuccess) { std::puts("error"); return 1; }
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  std::printf("%.3f\n", us / n);
  return 0;
}
