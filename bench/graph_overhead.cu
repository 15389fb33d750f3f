// Graph overhead: host microseconds per iteration of the three ways
// jacobiCudaGraphs drives a small kernel, over many iterations then one
// synchronize: stream launches (a fill, a kernel, a copy back), an
// executable graph whose kernel node gets new parameters before each launch,
// and a stream capture per iteration turned into an update of one
// executable graph (cudaGraphExecUpdate); and jacobiCudaGraphs' own
// -gpumethod=0 loop: new parameters, a launch and a stream synchronize per
// iteration, the graph's copy going to pageable memory (a stack variable).
// Prints "stream set_params capture set_params_sync".
#include <chrono>
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                  \
  do {                                                                               \
    cudaError_t e_ = (call);                                                         \
    if (e_ != cudaSuccess) {                                                         \
      std::printf("%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));        \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

__global__ void step(const float* in, float* out, float* sum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = 0.5f * in[i] + 1.0f;
    if (i == 0) atomicAdd(sum, out[i]);
  }
}

using Clock = std::chrono::steady_clock;

static double per_iteration(Clock::time_point start, int n) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() / n;
}

int main(int argc, char** argv) {
  int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
  const int n = 256;
  float *a, *b, *sum, *host_sum;
  CHECK(cudaMalloc(&a, n * sizeof(float)));
  CHECK(cudaMalloc(&b, n * sizeof(float)));
  CHECK(cudaMalloc(&sum, sizeof(float)));
  CHECK(cudaMallocHost(&host_sum, sizeof(float)));
  CHECK(cudaMemset(a, 0, n * sizeof(float)));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  auto body = [&](int k) {
    float* in = k % 2 ? b : a;
    float* out = k % 2 ? a : b;
    CHECK(cudaMemsetAsync(sum, 0, sizeof(float), stream));
    step<<<1, n, 0, stream>>>(in, out, sum, n);
    CHECK(cudaMemcpyAsync(host_sum, sum, sizeof(float), cudaMemcpyDeviceToHost, stream));
  };

  // Each way runs its iterations from zeros; alternating buffers then end
  // with 2 - 2^(1-k) in the one written last (a, for an even count).
  auto reset = [&] {
    CHECK(cudaMemsetAsync(a, 0, n * sizeof(float), stream));
    CHECK(cudaMemsetAsync(b, 0, n * sizeof(float), stream));
    CHECK(cudaStreamSynchronize(stream));
  };
  int wrong = 0;
  auto expect = [&](const char* way) {
    float last;
    CHECK(cudaMemcpy(&last, iterations % 2 ? b : a, sizeof(float), cudaMemcpyDeviceToHost));
    if (!(last > 1.99f && last <= 2.0f)) {
      std::printf("%s: wrong result %f\n", way, last);
      wrong = 1;
    }
  };

  body(0);  // module load and first-launch costs stay out of the timings
  CHECK(cudaStreamSynchronize(stream));
  reset();
  auto start = Clock::now();
  for (int k = 0; k < iterations; ++k) body(k);
  CHECK(cudaStreamSynchronize(stream));
  double stream_us = per_iteration(start, iterations);
  expect("stream");

  // One graph of the same three nodes, its copy into `copy_to`; the kernel
  // node's arguments swap before each launch, and with `synchronize` a
  // stream synchronize follows each (jacobiCudaGraphs -gpumethod=0's loop).
  cudaMemsetParams fill = {};
  fill.dst = sum;
  fill.value = 0;
  fill.elementSize = 1;
  fill.width = sizeof(float);
  fill.height = 1;
  int count = n;
  void* args_even[] = {&a, &b, &sum, &count};
  void* args_odd[] = {&b, &a, &sum, &count};
  auto set_params_way = [&](float* copy_to, bool synchronize) {
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    cudaGraphNode_t fill_node, kernel_node, copy_node;
    CHECK(cudaGraphAddMemsetNode(&fill_node, graph, nullptr, 0, &fill));
    cudaKernelNodeParams kernel = {};
    kernel.func = reinterpret_cast<void*>(step);
    kernel.gridDim = dim3(1);
    kernel.blockDim = dim3(n);
    kernel.kernelParams = args_even;
    CHECK(cudaGraphAddKernelNode(&kernel_node, graph, &fill_node, 1, &kernel));
    CHECK(cudaGraphAddMemcpyNode1D(&copy_node, graph, &kernel_node, 1, copy_to, sum,
                                   sizeof(float), cudaMemcpyDeviceToHost));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphLaunch(exec, stream));
    reset();
    auto start = Clock::now();
    for (int k = 0; k < iterations; ++k) {
      kernel.kernelParams = k % 2 ? args_odd : args_even;
      CHECK(cudaGraphExecKernelNodeSetParams(exec, kernel_node, &kernel));
      CHECK(cudaGraphLaunch(exec, stream));
      if (synchronize)
        CHECK(cudaStreamSynchronize(stream));
    }
    if (!synchronize)  // the last launch's end, which the loop did not wait for
      CHECK(cudaStreamSynchronize(stream));
    double us = per_iteration(start, iterations);
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    return us;
  };
  double set_params_us = set_params_way(host_sum, false);
  expect("set_params");
  float pageable_sum = 0.0f;
  double set_params_sync_us = set_params_way(&pageable_sum, true);
  expect("set_params_sync");
  if (!(pageable_sum > 0.99f && pageable_sum <= 2.0f)) {
    std::printf("set_params_sync: wrong copied sum %f\n", pageable_sum);
    wrong = 1;
  }

  // A capture per iteration, updating one executable graph.
  cudaGraph_t graph;
  cudaGraphExec_t exec = nullptr;
  reset();
  start = Clock::now();
  for (int k = 0; k < iterations; ++k) {
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    body(k);
    CHECK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExecUpdateResultInfo info;
    if (exec == nullptr || cudaGraphExecUpdate(exec, graph, &info) != cudaSuccess) {
      if (exec != nullptr) CHECK(cudaGraphExecDestroy(exec));
      CHECK(cudaGraphInstantiate(&exec, graph, 0));
    }
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaGraphDestroy(graph));
  }
  CHECK(cudaStreamSynchronize(stream));
  double capture_us = per_iteration(start, iterations);

  expect("capture");
  std::printf("%.3f %.3f %.3f %.3f\n", stream_us, set_params_us, capture_us, set_params_sync_us);
  return wrong;
}
