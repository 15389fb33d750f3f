// Eight host threads each create a stream, launch a kernel, copy back and
// check. NVIDIA: every call succeeds on every thread (the runtime makes the
// primary context current on each new thread itself).
#include <cstdio>
#include <thread>
#include <vector>

#include "check.h"

__global__ void fill(int *out, int n, int value) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = value + i;
}

static void worker(int id, int *failed) {
  const int n = 1000;
  cudaStream_t stream;
  cudaError_t err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (err != cudaSuccess) {  // NVIDIA: cudaSuccess
    std::fprintf(stderr, "thread %d: cudaStreamCreateWithFlags: %s\n", id,
                 cudaGetErrorName(err));
    *failed = 1;
    return;
  }
  int *d = nullptr;
  if ((err = cudaMalloc(&d, n * sizeof(int))) != cudaSuccess) {
    std::fprintf(stderr, "thread %d: cudaMalloc: %s\n", id, cudaGetErrorName(err));
    *failed = 1;
    return;
  }
  fill<<<(n + 127) / 128, 128, 0, stream>>>(d, n, id * 10000);
  if ((err = cudaGetLastError()) != cudaSuccess) {
    std::fprintf(stderr, "thread %d: launch: %s\n", id, cudaGetErrorName(err));
    *failed = 1;
    return;
  }
  std::vector<int> h(n);
  if ((err = cudaMemcpyAsync(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost, stream)) !=
          cudaSuccess ||
      (err = cudaStreamSynchronize(stream)) != cudaSuccess) {
    std::fprintf(stderr, "thread %d: copy back: %s\n", id, cudaGetErrorName(err));
    *failed = 1;
    return;
  }
  for (int i = 0; i < n; ++i)
    if (h[i] != id * 10000 + i) {
      std::fprintf(stderr, "thread %d: out[%d] = %d\n", id, i, h[i]);
      *failed = 1;
      return;
    }
  cudaFree(d);
  cudaStreamDestroy(stream);
}

int main() {
  const int threads = 8;
  int failed[threads] = {};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back(worker, t, &failed[t]);
  for (auto &t : pool)
    t.join();
  for (int t = 0; t < threads; ++t)
    EXPECT(!failed[t], "thread %d failed", t);
  std::printf("PASS\n");
  return 0;
}
