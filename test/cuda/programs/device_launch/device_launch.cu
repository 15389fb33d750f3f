// Device-side launches (CUDA dynamic parallelism, CDP2), built with
// -rdc=true -lcudadevrt: kernels launching grids with parameters of every
// kind (pointer, int, double, float, a by-value struct), dynamic shared
// memory, the tail-launch and fire-and-forget streams, nested launches
// (a grid launching itself, 6 deep), many launches from many threads, and
// a device-side copy (cudaMemcpyAsync) a grid in its stream reads.
// A parent grid cannot wait for its children (CDP2), so the host checks
// what they wrote once the parent's launch is synchronised.
#include <cstdio>
#include <cstring>

#include "check.h"

struct Pair {
  char tag;
  long long value;
};

__global__ void fill(int* out, int base, double scale, float offset, Pair pair) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[base + i] = base + static_cast<int>(i * scale + offset) + pair.tag + (int)pair.value;
}

__global__ void fill_from_every_block(int* out) {
  if (threadIdx.x == 0) {
    Pair pair = {3, 1000};
    fill<<<2, 8>>>(out, blockIdx.x * 16, 2.0, 0.5f, pair);
  }
}

// Each block reverses its slice of `in` through dynamic shared memory.
__global__ void reverse_slice(const int* in, int* out, int n) {
  extern __shared__ int slice[];
  slice[threadIdx.x] = in[blockIdx.x * n + threadIdx.x];
  __syncthreads();
  out[blockIdx.x * n + threadIdx.x] = slice[n - 1 - threadIdx.x];
}

__global__ void launch_reverse(const int* in, int* out, int n, int blocks) {
  reverse_slice<<<blocks, n, n * sizeof(int), cudaStreamTailLaunch>>>(in, out, n);
}

__global__ void countdown(int* out, int depth) {
  out[depth] = depth + 100;
  if (depth > 0) countdown<<<1, 1, 0, cudaStreamFireAndForget>>>(out, depth - 1);
}

__global__ void add_one(unsigned* counter, unsigned amount) { atomicAdd(counter, amount); }

__global__ void launch_from_every_thread(unsigned* counter) {
  add_one<<<1, 2>>>(counter, threadIdx.x + 1);
}

__global__ void double_each(const int* in, int* out) { out[threadIdx.x] = 2 * in[threadIdx.x]; }

__global__ void copy_then_double(const int* src, int* staging, int* out, int n, char* message) {
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaError_t err = cudaMemcpyAsync(staging, src, n * sizeof(int), cudaMemcpyDeviceToDevice, s);
  double_each<<<1, n, 0, s>>>(staging, out);
  const char* text = cudaGetErrorString(err);
  int i = 0;
  for (; text[i] && i < 31; ++i) message[i] = text[i];
  message[i] = 0;
  cudaStreamDestroy(s);
}

int main() {
  int *out, *in, *reversed;
  unsigned* counter;
  CHECK(cudaMalloc(&out, 64 * 16 * sizeof(int)));
  CHECK(cudaMalloc(&in, 8 * 32 * sizeof(int)));
  CHECK(cudaMalloc(&reversed, 8 * 32 * sizeof(int)));
  CHECK(cudaMalloc(&counter, sizeof(unsigned)));

  CHECK(cudaMemset(out, 0xff, 64 * 16 * sizeof(int)));
  fill_from_every_block<<<64, 32>>>(out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  static int got[64 * 16];
  CHECK(cudaMemcpy(got, out, sizeof got, cudaMemcpyDeviceToHost));
  for (int b = 0; b < 64; ++b)
    for (int i = 0; i < 16; ++i) {
      int want = b * 16 + static_cast<int>(i * 2.0 + 0.5f) + 3 + 1000;
      EXPECT(got[b * 16 + i] == want, "fill: out[%d] = %d, want %d", b * 16 + i,
             got[b * 16 + i], want);
    }

  static int values[8 * 32], back[8 * 32];
  for (int i = 0; i < 8 * 32; ++i) values[i] = i * 7 - 50;
  CHECK(cudaMemcpy(in, values, sizeof values, cudaMemcpyHostToDevice));
  launch_reverse<<<1, 1>>>(in, reversed, 32, 8);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(back, reversed, sizeof back, cudaMemcpyDeviceToHost));
  for (int b = 0; b < 8; ++b)
    for (int i = 0; i < 32; ++i)
      EXPECT(back[b * 32 + i] == values[b * 32 + 31 - i], "reverse: [%d][%d] = %d", b, i,
             back[b * 32 + i]);

  CHECK(cudaMemset(out, 0, 8 * sizeof(int)));
  countdown<<<1, 1>>>(out, 5);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(got, out, 8 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int d = 0; d <= 5; ++d) EXPECT(got[d] == d + 100, "countdown: out[%d] = %d", d, got[d]);
  EXPECT(got[6] == 0, "countdown went past its end: out[6] = %d", got[6]);

  // 16 blocks of 64 threads, each thread a grid of 2 threads adding tid + 1.
  CHECK(cudaMemset(counter, 0, sizeof(unsigned)));
  launch_from_every_thread<<<16, 64>>>(counter);
  CHECK(cudaDeviceSynchronize());
  unsigned total = 0;
  CHECK(cudaMemcpy(&total, counter, sizeof total, cudaMemcpyDeviceToHost));
  EXPECT(total == 16u * 2u * (64u * 65u / 2u), "counter = %u, want %u", total,
         16u * 2u * (64u * 65u / 2u));

  // A copy into staging, then a grid in the same stream doubling what it copied.
  char* message;
  CHECK(cudaMalloc(&message, 32));
  CHECK(cudaMemset(reversed, 0, 32 * sizeof(int)));
  copy_then_double<<<1, 1>>>(in, out, reversed, 32, message);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(back, reversed, 32 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 32; ++i)
    EXPECT(back[i] == 2 * values[i], "copy then double: [%d] = %d, want %d", i, back[i],
           2 * values[i]);
  char text[32];
  CHECK(cudaMemcpy(text, message, sizeof text, cudaMemcpyDeviceToHost));
  EXPECT(std::strcmp(text, "no error") == 0, "cudaGetErrorString(cudaSuccess) = \"%s\"", text);
  CHECK(cudaFree(message));

  CHECK(cudaFree(out));
  CHECK(cudaFree(in));
  CHECK(cudaFree(reversed));
  CHECK(cudaFree(counter));
  std::printf("PASS\n");
  return 0;
}
