// Shared by our test programs: the device's clock, and a kernel that waits
// for a flag in mapped host memory, giving up after a timeout.
#pragma once

__device__ inline unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Writes the flag's value to `seen` once the host has set it, or -1 after
// `timeout_ns` of waiting.
__global__ void wait_for_host(volatile int* flag, int* seen, unsigned long long timeout_ns) {
  unsigned long long start = now_ns();
  while (*flag == 0) {
    if (now_ns() - start > timeout_ns) {
      *seen = -1;
      return;
    }
  }
  *seen = *flag;
}
