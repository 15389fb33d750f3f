// exit() while other host threads are still launching: the process ends
// cleanly with exit()'s status, as with NVIDIA's driver (no "Pure virtual
// function called!", no crash, no hang).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "check.h"

__global__ void bump(int *counter) { atomicAdd(counter, 1); }

int main() {
  int *counter;
  CHECK(cudaMalloc(&counter, sizeof(int)));
  CHECK(cudaMemset(counter, 0, sizeof(int)));
  std::atomic<int> launched{0};
  for (int t = 0; t < 4; ++t)
    std::thread([counter, &launched] {
      cudaStream_t stream;
      if (cudaStreamCreate(&stream) != cudaSuccess)
        return;
      for (;;) {
        bump<<<1, 32, 0, stream>>>(counter);
        cudaStreamSynchronize(stream);
        ++launched;
      }
    }).detach();
  while (launched < 64)
    std::this_thread::yield();
  std::printf("PASS\n");
  std::fflush(stdout);
  std::exit(0);
}
