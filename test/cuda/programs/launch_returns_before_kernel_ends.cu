// A launch returns while its kernel runs, as on NVIDIA's GPUs. The first
// kernel waits for a flag the host sets only once the launch has returned
// (cuda-samples UnifiedMemoryPerf's spinWhileLessThanOne does this): a
// driver whose launches wait for their kernels never lets the host set it,
// and the kernel gives up after its timeout. The second spins for a while
// between two events: the launch returns at once, the stream is not ready
// until the kernel ends, and the events time the kernel on the device.
#include <chrono>

#include "check.h"
#include "waits.h"

__global__ void spin_for(unsigned long long ns, int* done) {
  unsigned long long start = now_ns();
  while (now_ns() - start < ns) {
  }
  *done = 1;
}

static double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

int main() {
  int *flag, *seen;
  CHECK(cudaHostAlloc(&flag, sizeof *flag, cudaHostAllocMapped));
  CHECK(cudaHostAlloc(&seen, sizeof *seen, cudaHostAllocMapped));
  *flag = 0;
  *seen = 0;
  int *device_flag, *device_seen;
  CHECK(cudaHostGetDevicePointer(&device_flag, flag, 0));
  CHECK(cudaHostGetDevicePointer(&device_seen, seen, 0));

  wait_for_host<<<1, 1>>>(device_flag, device_seen, 20ull * 1000 * 1000 * 1000);
  CHECK(cudaGetLastError());
  EXPECT(cudaStreamQuery(0) == cudaErrorNotReady, "the waiting kernel's stream is ready");
  *(volatile int*)flag = 7;
  CHECK(cudaDeviceSynchronize());
  EXPECT(*seen == 7, "the kernel saw %d, not the host's 7: the launch waited for its kernel",
         *seen);
  CHECK(cudaStreamQuery(0));

  const unsigned long long spin_ns = 200ull * 1000 * 1000;
  int* done;
  CHECK(cudaMallocManaged(&done, sizeof *done));
  *done = 0;
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start));
  auto launched = std::chrono::steady_clock::now();
  spin_for<<<1, 1>>>(spin_ns, done);
  double launch_ms = ms_since(launched);
  CHECK(cudaEventRecord(stop));
  EXPECT(launch_ms < 100, "the launch took %.1f ms of the kernel's 200", launch_ms);
  EXPECT(cudaEventQuery(stop) == cudaErrorNotReady, "the event after the kernel is reached");
  CHECK(cudaEventSynchronize(stop));
  EXPECT(*done == 1, "the kernel had not ended at its event");
  float elapsed_ms = 0;
  CHECK(cudaEventElapsedTime(&elapsed_ms, start, stop));
  EXPECT(elapsed_ms >= 190 && elapsed_ms < 2000, "the events time the kernel at %.1f ms",
         elapsed_ms);
  CHECK(cudaStreamQuery(0));

  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFree(done));
  CHECK(cudaFreeHost(flag));
  CHECK(cudaFreeHost(seen));
  std::printf("launch returned in %.2f ms; events timed %.1f ms\nPASS\n", launch_ms, elapsed_ms);
  return 0;
}
