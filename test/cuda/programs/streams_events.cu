#include "check.h"
#include <vector>
__global__ void scale(float* x, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}
int main() {
  const int n = 4096, chunks = 4, chunk = n / chunks;
  float* h;
  CHECK(cudaMallocHost(&h, n * sizeof(float)));
  for (int i = 0; i < n; ++i) h[i] = i;
  float* d;
  CHECK(cudaMalloc(&d, n * sizeof(float)));
  cudaStream_t streams[chunks];
  for (auto& s : streams) CHECK(cudaStreamCreate(&s));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start)); CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, 0));
  for (int c = 0; c < chunks; ++c) {
    float* dp = d + c * chunk; float* hp = h + c * chunk;
    CHECK(cudaMemcpyAsync(dp, hp, chunk * 4, cudaMemcpyHostToDevice, streams[c]));
    scale<<<(chunk + 127) / 128, 128, 0, streams[c]>>>(dp, 2.0f, chunk);
    CHECK(cudaMemcpyAsync(hp, dp, chunk * 4, cudaMemcpyDeviceToHost, streams[c]));
  }
  CHECK(cudaEventRecord(stop, 0));
  for (auto& s : streams) CHECK(cudaStreamSynchronize(s));
  CHECK(cudaEventSynchronize(stop));
  float ms = -1;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  EXPECT(ms >= 0, "elapsed %f", ms);
  for (int i = 0; i < n; ++i) EXPECT(h[i] == 2.0f * i, "h[%d]=%f", i, h[i]);
  for (auto& s : streams) CHECK(cudaStreamDestroy(s));
  CHECK(cudaEventDestroy(start)); CHECK(cudaEventDestroy(stop));
  CHECK(cudaFreeHost(h)); CHECK(cudaFree(d));
  std::printf("PASS\n");
}
