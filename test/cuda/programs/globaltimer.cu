#include "check.h"
#include <chrono>
#include <cstdint>
#include <vector>
// %globaltimer: nanoseconds at the host's rate, monotonic in a thread, one
// clock for every thread and block. On SPIR-V it is the device clock put
// through the calibration the driver measures (zmlir/runtime/cuda/globaltimer.py);
// a clock running 20% fast or slow fails the spin below.

__device__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ unsigned globaltimer_half(bool high) {
  unsigned t;
  if (high)
    asm volatile("mov.u32 %0, %%globaltimer_hi;" : "=r"(t));
  else
    asm volatile("mov.u32 %0, %%globaltimer_lo;" : "=r"(t));
  return t;
}

// Thread 0 of the one block spins until %globaltimer has advanced `ns`.
__global__ void spin(unsigned long long ns, unsigned long long* out) {
  unsigned long long start = globaltimer(), now = start;
  while (now - start < ns)
    now = globaltimer();
  out[0] = start;
  out[1] = now;
}

// Every thread: two reads, and the high half read between them.
__global__ void stamps(unsigned long long* out, unsigned* high) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[2 * i] = globaltimer();
  high[i] = globaltimer_half(true);
  (void)globaltimer_half(false);
  out[2 * i + 1] = globaltimer();
}

int main() {
  unsigned long long* d;
  unsigned* h;
  const int blocks = 16, threads = 64, n = blocks * threads;
  CHECK(cudaMalloc(&d, 2 * n * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&h, n * sizeof(unsigned)));

  // Warm up (the first launch compiles), then time a 100 ms spin on the host.
  spin<<<1, 1>>>(0, d);
  CHECK(cudaDeviceSynchronize());
  const unsigned long long spin_ns = 100000000ull;
  auto before = std::chrono::steady_clock::now();
  spin<<<1, 1>>>(spin_ns, d);
  CHECK(cudaDeviceSynchronize());
  double host_ms = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - before).count();
  unsigned long long span[2];
  CHECK(cudaMemcpy(span, d, sizeof span, cudaMemcpyDeviceToHost));
  EXPECT(span[0] != 0, "%%globaltimer read 0");
  EXPECT(span[1] - span[0] >= spin_ns, "the spin ended early");
  EXPECT(host_ms >= 80.0 && host_ms <= 150.0,
         "a 100 ms spin by %%globaltimer took %.1f ms of host time", host_ms);

  before = std::chrono::steady_clock::now();
  stamps<<<blocks, threads>>>(d, h);
  CHECK(cudaDeviceSynchronize());
  double launch_ns = std::chrono::duration<double, std::nano>(
                         std::chrono::steady_clock::now() - before).count();
  std::vector<unsigned long long> t(2 * n);
  std::vector<unsigned> high(n);
  CHECK(cudaMemcpy(t.data(), d, t.size() * sizeof t[0], cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(high.data(), h, high.size() * sizeof high[0], cudaMemcpyDeviceToHost));
  unsigned long long lo = ~0ull, hi = 0;
  for (int i = 0; i < n; ++i) {
    EXPECT(t[2 * i] <= t[2 * i + 1], "thread %d: %%globaltimer went back", i);
    EXPECT(t[2 * i] >> 32 <= high[i] && high[i] <= t[2 * i + 1] >> 32,
           "thread %d: %%globaltimer_hi %u outside its neighbours", i, high[i]);
    EXPECT(t[2 * i] > span[1], "thread %d read a time before the last launch ended", i);
    lo = t[2 * i] < lo ? t[2 * i] : lo;
    hi = t[2 * i + 1] > hi ? t[2 * i + 1] : hi;
  }
  // One clock: every block's readings fall within the launch's host time.
  EXPECT(hi - lo <= launch_ns, "readings span %llu ns in a launch of %.0f ns", hi - lo,
         launch_ns);
  std::printf("a 100 ms spin took %.1f ms; %d threads read within %llu ns\n", host_ms, n,
              hi - lo);
  CHECK(cudaFree(d));
  CHECK(cudaFree(h));
  std::printf("PASS\n");
  return 0;
}
