// Stream synchronisation: microseconds per iteration of a 1-block kernel's
// launch on a created stream and cudaStreamSynchronize of that stream, the
// loop starting right after a call zmlir's driver makes in Python (creating
// a stream). Prints that figure, then the same loop's after a
// cudaDeviceSynchronize.
#include <chrono>
#include <cstdio>
#include <cstdlib>
__global__ void tick(int* p) {
  if (threadIdx.x == 0)
    ++*p;
}
static double loop(cudaStream_t s, int* d, int n) {
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    tick<<<1, 32, 0, s>>>(d);
    cudaStreamSynchronize(s);
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
             .count() / n;
}
int main(int argc, char** argv) {
  int n = argc > 1 ? std::atoi(argv[1]) : 2000;
  int* d;
  cudaStream_t s, other;
  if (cudaMalloc(&d, sizeof(int)) != cudaSuccess || cudaMemset(d, 0, sizeof(int)) != cudaSuccess ||
      cudaStreamCreate(&s) != cudaSuccess) {
    std::puts("error");
    return 1;
  }
  loop(s, d, 100);  // module load and first-launch costs stay out of the timing
  cudaStreamCreate(&other);
  cudaStreamDestroy(other);
  double after_call = loop(s, d, n);
  cudaDeviceSynchronize();
  double after_device_sync = loop(s, d, n);
  int count = 0;
  cudaMemcpy(&count, d, sizeof(int), cudaMemcpyDeviceToHost);
  if (count != 100 + 2 * n) {
    std::printf("error: %d launches counted, %d made\n", count, 100 + 2 * n);
    return 1;
  }
  std::printf("%.3f %.3f\n", after_call, after_device_sync);
  return 0;
}
