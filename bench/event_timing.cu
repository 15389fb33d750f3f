// Event timing: a small kernel timed with cudaEventRecord around each launch,
// as programs time their kernels. Prints the median of the event-measured
// times and of the host's wall time per timed launch, in microseconds.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void scale(float *x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 500;
  const int n = 1 << 16;
  float *x;
  cudaEvent_t start, stop;
  if (cudaMalloc(&x, n * sizeof(float)) != cudaSuccess || cudaEventCreate(&start) != cudaSuccess ||
      cudaEventCreate(&stop) != cudaSuccess) {
    std::puts("error");
    return 1;
  }
  cudaMemset(x, 0, n * sizeof(float));
  scale<<<n / 256, 256>>>(x, n, 1.0f);  // module load and first launch stay out
  cudaDeviceSynchronize();
  std::vector<double> device_us, wall_us;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    cudaEventRecord(start);
    scale<<<n / 256, 256>>>(x, n, 1.0001f);
    cudaEventRecord(stop);
    if (cudaEventSynchronize(stop) != cudaSuccess) {
      std::puts("error");
      return 1;
    }
    auto t1 = std::chrono::steady_clock::now();
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    device_us.push_back(ms * 1000.0);
    wall_us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::printf("%.3f %.3f\n", median(device_us), median(wall_us));
  return 0;
}
