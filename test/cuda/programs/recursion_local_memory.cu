// Recursive device functions with local memory, each frame its own: arrays
// indexed at run time (so they stay in local memory) that must survive the
// recursive calls below them, a Fibonacci passing each result through a
// pointer to its caller's local variable (as numba's device functions
// return), a frame handed to functions off the cycle, and two functions
// calling each other with frames of different sizes; 1024 threads each,
// checked against the host. The stack is raised to 32 KiB for a recursion
// 100 deep (an H200 has too little at its default 1 KiB), and the same runs
// again after a new size. Then a recursion whose frames outgrow the stack:
// the launch succeeds and the next synchronising call (and every later one)
// returns cudaErrorIllegalAddress, as on an H200.
#include <cstdio>

#include "check.h"

// 16 ints per frame, checked after the call below returns.
__device__ __noinline__ int nest(int n, int seed) {
  int buf[16];
  for (int k = 0; k < 16; ++k) buf[(k * 5 + seed) & 15] = seed * 31 + n * 7 + ((k * 5 + seed) & 15);
  int below = n == 0 ? 0 : nest(n - 1, seed + 1);
  int wrong = 0;
  for (int k = 0; k < 16; ++k) wrong += buf[(k + n) & 15] != seed * 31 + n * 7 + ((k + n) & 15);
  return below + 1 + 1000 * wrong;
}

// Each result goes through a pointer to the caller's local variable.
__device__ __noinline__ void fib_out(int n, long long* out) {
  if (n < 2) {
    *out = n;
    return;
  }
  long long a, b;
  fib_out(n - 1, &a);
  fib_out(n - 2, &b);
  *out = a + b;
}

// Mutual recursion, 8 and 24 ints a frame: each adds 1 per level and
// 1000 for every element of its frame found changed after the call.
__device__ void odd_step(int n, int* out);
__device__ __noinline__ void even_step(int n, int* out) {
  int mine[8];
  for (int k = 0; k < 8; ++k) mine[(k + n) & 7] = n * 3 + ((k + n) & 7);
  int below = 0;
  if (n > 0) odd_step(n - 1, &below);
  for (int k = 0; k < 8; ++k) below += 1000 * (mine[(k * 3 + n) & 7] != n * 3 + ((k * 3 + n) & 7));
  *out = below + 1;
}
__device__ __noinline__ void odd_step(int n, int* out) {
  int mine[24];
  for (int k = 0; k < 24; ++k) mine[(k + n) % 24] = n * 5 - ((k + n) % 24);
  int below = 0;
  if (n > 0) even_step(n - 1, &below);
  for (int k = 0; k < 24; ++k) below += 1000 * (mine[(k * 7 + n) % 24] != n * 5 - ((k * 7 + n) % 24));
  *out = below + 1;
}

// A frame handed to functions off the cycle, which write and read it.
__device__ __noinline__ void fill(int* a, int n, int v) {
  for (int k = 0; k < n; ++k) a[k] = v + k;
}
__device__ __noinline__ int sum(const int* a, int n) {
  int s = 0;
  for (int k = 0; k < n; ++k) s += a[k];
  return s;
}
__device__ __noinline__ int lend(int n, int v) {
  int buf[12];
  fill(buf, 12, v);
  int below = n == 0 ? 0 : lend(n - 1, v + 100);
  return below + (sum(buf, 12) == 12 * v + 66 ? 1 : 1000);
}

__global__ void recurse(int* out, long long* fibs) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[3 * i] = nest(100, i);
  even_step(i % 64, &out[3 * i + 1]);
  out[3 * i + 2] = lend(30, i);
  fib_out(i % 20, &fibs[i]);
}

__global__ void too_deep(int* out, int n) { out[threadIdx.x] = nest(n, threadIdx.x); }

int main() {
  const int kThreads = 1024;
  CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 32 << 10));
  size_t stack = 0;
  CHECK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
  EXPECT(stack == 32 << 10, "cudaLimitStackSize %zu after setting 32768", stack);
  int* d_out;
  long long* d_fibs;
  CHECK(cudaMalloc(&d_out, 3 * kThreads * sizeof(int)));
  CHECK(cudaMalloc(&d_fibs, kThreads * sizeof(long long)));
  long long fib[20] = {0, 1};
  for (int n = 2; n < 20; ++n) fib[n] = fib[n - 1] + fib[n - 2];
  // Twice: the second time on stacks of a new size (40004 bytes, which
  // an H200 rounds up to 16), set after the first launch.
  for (int round = 0; round < 2; ++round) {
    if (round == 1) {
      CHECK(cudaDeviceSetLimit(cudaLimitStackSize, 40004));
      CHECK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
      EXPECT(stack == 40016, "cudaLimitStackSize %zu after setting 40004", stack);
    }
    CHECK(cudaMemset(d_out, 0, 3 * kThreads * sizeof(int)));
    recurse<<<kThreads / 64, 64>>>(d_out, d_fibs);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    static int out[3 * kThreads];
    static long long fibs[kThreads];
    CHECK(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(fibs, d_fibs, sizeof fibs, cudaMemcpyDeviceToHost));
    for (int i = 0; i < kThreads; ++i) {
      EXPECT(out[3 * i] == 101, "thread %d: nest(100) = %d, want 101", i, out[3 * i]);
      EXPECT(out[3 * i + 1] == i % 64 + 1, "thread %d: even_step(%d) = %d, want %d", i, i % 64,
             out[3 * i + 1], i % 64 + 1);
      EXPECT(out[3 * i + 2] == 31, "thread %d: lend(30) = %d, want 31", i, out[3 * i + 2]);
      EXPECT(fibs[i] == fib[i % 20], "thread %d: fib(%d) = %lld, want %lld", i, i % 20, fibs[i],
             fib[i % 20]);
    }
  }

  // 1000 frames of at least 64 bytes: more than 40016 bytes.
  too_deep<<<1, 32>>>(d_out, 1000);
  CHECK(cudaGetLastError());
  cudaError_t synced = cudaDeviceSynchronize();
  void* later = nullptr;
  cudaError_t allocated = cudaMalloc(&later, 256);
  EXPECT(synced == cudaErrorIllegalAddress && allocated == synced,
         "a stack overflow: synchronize %d (%s), a later cudaMalloc %d", synced,
         cudaGetErrorName(synced), allocated);
  printf("stack overflow: %s\nPASS\n", cudaGetErrorName(synced));
  return 0;
}
