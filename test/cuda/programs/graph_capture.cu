#include "check.h"
#include <vector>
// A CUDA graph built by stream capture (with a fork and join through events),
// instantiated once and launched several times.
__global__ void axpb(float* x, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}
__global__ void add(float* x, const float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}
int main() {
  const int n = 1000, blocks = (n + 127) / 128;
  std::vector<float> h(n), y(n);
  for (int i = 0; i < n; ++i) { h[i] = i; y[i] = 1; }
  float *dx, *dy;
  CHECK(cudaMalloc(&dx, n * 4)); CHECK(cudaMalloc(&dy, n * 4));
  CHECK(cudaMemcpy(dx, h.data(), n * 4, cudaMemcpyHostToDevice));
  cudaStream_t s1, s2;
  CHECK(cudaStreamCreate(&s1)); CHECK(cudaStreamCreate(&s2));
  cudaEvent_t fork, join;
  CHECK(cudaEventCreate(&fork)); CHECK(cudaEventCreate(&join));
  cudaGraph_t graph;
  CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
  cudaStreamCaptureStatus status;
  CHECK(cudaStreamIsCapturing(s1, &status));
  EXPECT(status == cudaStreamCaptureStatusActive, "not capturing");
  axpb<<<blocks, 128, 0, s1>>>(dx, 2.0f, 1.0f, n);             // x = 2x + 1
  CHECK(cudaEventRecord(fork, s1));
  CHECK(cudaStreamWaitEvent(s2, fork, 0));
  CHECK(cudaMemcpyAsync(dy, y.data(), n * 4, cudaMemcpyHostToDevice, s2));
  CHECK(cudaEventRecord(join, s2));
  CHECK(cudaStreamWaitEvent(s1, join, 0));
  add<<<blocks, 128, 0, s1>>>(dx, dy, n);                      // x += 1
  CHECK(cudaStreamEndCapture(s1, &graph));
  size_t nodes = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  EXPECT(nodes >= 3, "graph has %zu nodes", nodes);
  // Nothing ran while capturing.
  CHECK(cudaMemcpy(h.data(), dx, n * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) EXPECT(h[i] == i, "captured work ran early: x[%d]=%f", i, h[i]);
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  for (int r = 0; r < 3; ++r) CHECK(cudaGraphLaunch(exec, s1));
  CHECK(cudaStreamSynchronize(s1));
  CHECK(cudaMemcpy(h.data(), dx, n * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    float v = i;
    for (int r = 0; r < 3; ++r) v = 2 * v + 2;
    EXPECT(h[i] == v, "x[%d]=%f expected %f", i, h[i], v);
  }
  CHECK(cudaGraphExecDestroy(exec)); CHECK(cudaGraphDestroy(graph));
  std::printf("PASS\n");
}
