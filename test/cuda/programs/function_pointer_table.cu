#include "check.h"
#include <vector>
// Addresses of symbols in initializers: a __device__ table of function
// pointers (`.global .u64 ops[4] = {f, g, h, k}`) called through by index,
// and device pointers initialised to other variables' addresses, one of
// them past the start (`generic(primes)+8`).
typedef int (*Op)(int, int);
__device__ __noinline__ int add(int a, int b) { return a + b; }
__device__ __noinline__ int sub(int a, int b) { return a - b; }
__device__ __noinline__ int mul(int a, int b) { return a * b; }
__device__ __noinline__ int mix(int a, int b) { return (a ^ b) + 3; }
__device__ Op ops[4] = {add, sub, mul, mix};
__device__ int primes[6] = {2, 3, 5, 7, 11, 13};
__device__ const int* third_prime = primes + 2;
__device__ int* tables[2] = {primes, primes + 4};
__global__ void kernel(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    Op op = ops[(in[i] >> 8) & 3];
    out[i] = op(in[i] & 0xff, *third_prime + tables[i & 1][i % 2]);
  }
}
static int reference(int x, int i) {
  const int primes[6] = {2, 3, 5, 7, 11, 13};
  int a = x & 0xff, b = primes[2] + ((i & 1) ? primes[4 + i % 2] : primes[i % 2]);
  switch ((x >> 8) & 3) {
  case 0: return a + b;
  case 1: return a - b;
  case 2: return a * b;
  default: return (a ^ b) + 3;
  }
}
int main() {
  const int n = 400;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 37) & 0x3ff;
  int *din, *dout;
  CHECK(cudaMalloc(&din, n * 4));
  CHECK(cudaMalloc(&dout, n * 4));
  CHECK(cudaMemcpy(din, h.data(), n * 4, cudaMemcpyHostToDevice));
  kernel<<<(n + 127) / 128, 128>>>(din, dout, n);
  CHECK(cudaGetLastError());
  std::vector<int> got(n);
  CHECK(cudaMemcpy(got.data(), dout, n * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    EXPECT(got[i] == reference(h[i], i), "out[%d]=%d expected %d", i, got[i], reference(h[i], i));
  std::printf("PASS\n");
}
