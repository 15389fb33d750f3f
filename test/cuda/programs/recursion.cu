// Recursive device functions: a function calling itself twice (fib), a walk
// of a tree in device memory, two functions calling each other, and one
// adding into the calling kernel's own variable through a pointer, each
// checked against the host. Then a recursion deeper than any stack: the
// launch succeeds and the next synchronising call (and every later one)
// returns cudaErrorIllegalAddress, as on an H200, and the process lives on.
#include <cstdio>

#include "check.h"

struct Node {
  int left, right, value;
};

__device__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__device__ int tree_sum(const Node* tree, int i) {
  if (i < 0) return 0;
  return tree[i].value + tree_sum(tree, tree[i].left) + tree_sum(tree, tree[i].right);
}

__device__ bool is_odd(int n);
__device__ bool is_even(int n) { return n == 0 ? true : is_odd(n - 1); }
__device__ bool is_odd(int n) { return n == 0 ? false : is_even(n - 1); }

// Adds 1 + 2 + ... + n to *sum, which is the calling kernel's own variable
// (its private memory, handed to a recursive function).
__device__ __noinline__ void accumulate(int n, int* sum) {
  if (n == 0) return;
  accumulate(n - 1, sum);
  *sum += n;
}

__global__ void recurse(int* out, const Node* tree, int nodes) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int sum = 0;
  accumulate(i % 40, &sum);
  out[4 * i] = fib(i % 20);
  out[4 * i + 1] = tree_sum(tree, i % nodes);
  out[4 * i + 2] = is_even(i % 50);
  out[4 * i + 3] = sum;
}

// Not a tail call: the store after it keeps every frame live.
__device__ int descend(int n, int* trail) {
  if (n == 0) return 0;
  int below = descend(n - 1, trail);
  trail[n % 64] = below;
  return below + 1;
}

__global__ void too_deep(int* out, int* trail, int n) { out[threadIdx.x] = descend(n, trail); }

static int host_fib(int n) { return n < 2 ? n : host_fib(n - 1) + host_fib(n - 2); }
static int host_tree_sum(const Node* tree, int i) {
  return i < 0 ? 0 : tree[i].value + host_tree_sum(tree, tree[i].left) + host_tree_sum(tree, tree[i].right);
}

int main() {
  const int kNodes = 31, kThreads = 256;
  Node tree[kNodes];
  for (int i = 0; i < kNodes; ++i)
    tree[i] = {2 * i + 1 < kNodes ? 2 * i + 1 : -1, 2 * i + 2 < kNodes ? 2 * i + 2 : -1, i * 7 + 1};
  Node* d_tree;
  int* d_out;
  CHECK(cudaMalloc(&d_tree, sizeof tree));
  CHECK(cudaMalloc(&d_out, 4 * kThreads * sizeof(int)));
  CHECK(cudaMemcpy(d_tree, tree, sizeof tree, cudaMemcpyHostToDevice));
  recurse<<<kThreads / 64, 64>>>(d_out, d_tree, kNodes);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  static int out[4 * kThreads];
  CHECK(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost));
  for (int i = 0; i < kThreads; ++i) {
    EXPECT(out[4 * i] == host_fib(i % 20), "fib(%d) = %d", i % 20, out[4 * i]);
    EXPECT(out[4 * i + 1] == host_tree_sum(tree, i % kNodes), "tree_sum(%d) = %d, want %d",
           i % kNodes, out[4 * i + 1], host_tree_sum(tree, i % kNodes));
    EXPECT(out[4 * i + 2] == ((i % 50) % 2 == 0), "is_even(%d) = %d", i % 50, out[4 * i + 2]);
    int n = i % 40;
    EXPECT(out[4 * i + 3] == n * (n + 1) / 2, "accumulate(%d) = %d", n, out[4 * i + 3]);
  }

  int* d_trail;
  CHECK(cudaMalloc(&d_trail, 64 * sizeof(int)));
  too_deep<<<1, 32>>>(d_out, d_trail, 100000000);
  CHECK(cudaGetLastError());
  cudaError_t synced = cudaDeviceSynchronize();
  void* later = nullptr;
  cudaError_t allocated = cudaMalloc(&later, 256);
  EXPECT(synced == cudaErrorIllegalAddress && allocated == synced,
         "a recursion 10^8 deep: synchronize %d (%s), a later cudaMalloc %d", synced,
         cudaGetErrorName(synced), allocated);
  printf("too deep: %s\nPASS\n", cudaGetErrorName(synced));
  return 0;
}
