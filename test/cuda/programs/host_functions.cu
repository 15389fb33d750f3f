// Host functions and stream callbacks (cudaLaunchHostFunc, cudaStreamAddCallback):
// the call returns at once and the function runs later, from another thread
// (one that waits for the caller's next step returns); functions run in their
// stream's order, after the work before them, and the work after them waits
// for their return. Every check holds on NVIDIA's driver too.
#include "check.h"
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

static std::atomic<int> flag{0}, waited{0};
static std::thread::id caller;

static void wait_for_flag() {
  auto start = std::chrono::steady_clock::now();
  while (!flag.load())
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(5)) {
      waited = -1;  // the caller never got to set it: the function ran in its call
      return;
    }
  waited = std::this_thread::get_id() == caller ? -2 : 1;
}

static void CUDART_CB waiting_function(void*) { wait_for_flag(); }

struct Step {
  int index;
  int* seen;          // written by the kernel before this function (mapped memory)
  int* value;         // read by the kernel after it
  std::vector<int>* order;
};

static void CUDART_CB record(void* data) {
  Step* step = static_cast<Step*>(data);
  step->order->push_back(step->seen[0] == step->index ? step->index : -1 - step->index);
  step->value[0] = 1000 + step->index;  // the next kernel must see it
}

static void CUDART_CB callback(cudaStream_t stream, cudaError_t status, void* data) {
  auto* got = static_cast<std::pair<cudaStream_t, cudaError_t>*>(data);
  *got = {stream, status};
}

__global__ void mark(int* seen, int index) { seen[0] = index; }
__global__ void take(const int* value, int* out, int index) { out[index] = value[0]; }

int main() {
  caller = std::this_thread::get_id();
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));

  // A function that waits for the caller's next step.
  CHECK(cudaLaunchHostFunc(s, waiting_function, nullptr));
  flag = 1;
  CHECK(cudaStreamSynchronize(s));
  EXPECT(waited == 1, "the host function %s", waited == -1 ? "ran in its call"
                                              : "ran in the caller's thread");

  // Stream order around 32 functions.
  const int steps = 32;
  int *seen, *value, *out;
  CHECK(cudaMallocHost(&seen, sizeof(int)));
  CHECK(cudaMallocHost(&value, sizeof(int)));
  CHECK(cudaMalloc(&out, steps * sizeof(int)));
  std::vector<int> order;
  std::vector<Step> data(steps);
  for (int i = 0; i < steps; ++i) {
    data[i] = {i, seen, value, &order};
    mark<<<1, 1, 0, s>>>(seen, i);
    CHECK(cudaLaunchHostFunc(s, record, &data[i]));
    take<<<1, 1, 0, s>>>(value, out, i);
  }
  CHECK(cudaStreamSynchronize(s));
  EXPECT((int)order.size() == steps, "%d of %d functions ran", (int)order.size(), steps);
  for (int i = 0; i < steps; ++i)
    EXPECT(order[i] == i, "function %d: %d (negative: before its kernel ended)", i, order[i]);
  std::vector<int> got(steps);
  CHECK(cudaMemcpy(got.data(), out, steps * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < steps; ++i)
    EXPECT(got[i] == 1000 + i, "kernel %d read %d: it ran before the function", i, got[i]);

  // A stream callback gets its stream and the status.
  std::pair<cudaStream_t, cudaError_t> seen_by_callback{nullptr, cudaErrorUnknown};
  CHECK(cudaStreamAddCallback(s, callback, &seen_by_callback, 0));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(seen_by_callback.first == s && seen_by_callback.second == cudaSuccess,
         "callback: stream %p, status %d", (void*)seen_by_callback.first,
         (int)seen_by_callback.second);

  CHECK(cudaFree(out));
  CHECK(cudaFreeHost(seen));
  CHECK(cudaFreeHost(value));
  CHECK(cudaStreamDestroy(s));
  std::printf("PASS\n");
}
