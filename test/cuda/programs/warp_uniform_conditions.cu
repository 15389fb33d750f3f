// Tests of a thread's warp (`threadIdx.x < 32`, `threadIdx.x / 32 == 1`)
// decide the same branches as on NVIDIA's hardware, in every block shape.
// The SPIR-V target runs such a kernel's body with those tests made on
// (x - lane) & 992 where that is x & ~31 for every block shape a sub-group
// layout could give (one-dimensional blocks, %ntid.x a multiple of 32), and
// the body as it was elsewhere (zmlir-warp-uniform-conditions): both run here.
#include "check.h"

// Each thread's branches, one store each (the store under the test: a
// branch); its warp's shuffle makes the kernel's warps sub-groups (of a value
// the same in every lane, which any layout of the lanes reads alike).
constexpr int kTests = 8;

__global__ void branches(int *out) {
  int block = __shfl_sync(__activemask(), (int)blockIdx.x, 0);
  int threads = blockDim.x * blockDim.y * blockDim.z;
  int linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  int *mine = out + (block * threads + linear) * kTests;
  if (threadIdx.x < 32)
    mine[0] = block;
  if (threadIdx.x >= 64)
    mine[1] = block;
  if (threadIdx.x > 95)
    mine[2] = block;
  if (threadIdx.x / 32 == 1)
    mine[3] = block;
  if ((threadIdx.x >> 5) == 2)
    mine[4] = block;
  if ((threadIdx.x & ~31u) == 96)
    mine[5] = block;
  if (threadIdx.x <= 63)
    mine[6] = block;
  if (threadIdx.x < 40) // not a warp's test
    mine[7] = block;
}

static bool expected_test(int k, unsigned x) {
  switch (k) {
  case 0:
    return x < 32;
  case 1:
    return x >= 64;
  case 2:
    return x > 95;
  case 3:
    return x / 32 == 1;
  case 4:
    return (x >> 5) == 2;
  case 5:
    return (x & ~31u) == 96;
  case 6:
    return x <= 63;
  default:
    return x < 40;
  }
}

// Each row of the block sums its values: a shared-memory tree down to one
// warp, then that warp's shuffles under `if (threadIdx.x < 32)`.
__global__ void row_sums(float *sums, const float *in) {
  extern __shared__ float partial[];
  float *row = partial + threadIdx.y * blockDim.x;
  int rows = blockDim.y;
  float sum = in[(blockIdx.x * rows + threadIdx.y) * blockDim.x + threadIdx.x];
  row[threadIdx.x] = sum;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride >= 32; stride /= 2) {
    if (threadIdx.x < stride)
      row[threadIdx.x] = sum = sum + row[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x < 32) {
    for (int offset = 16; offset > 0; offset /= 2)
      sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x == 0)
      sums[blockIdx.x * rows + threadIdx.y] = sum;
  }
}

static void check_branches(int *out, dim3 block) {
  const int blocks = 3, threads = block.x * block.y * block.z, count = blocks * threads * kTests;
  CHECK(cudaMemset(out, 0xff, count * sizeof(int)));
  branches<<<blocks, block>>>(out);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  static int got[3 * 1024 * kTests];
  CHECK(cudaMemcpy(got, out, count * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b)
    for (int i = 0; i < threads; ++i)
      for (int k = 0; k < kTests; ++k) {
        unsigned x = i % block.x;
        int want = expected_test(k, x) ? b : -1;
        EXPECT(got[(b * threads + i) * kTests + k] == want,
               "block (%u,%u,%u), block %d thread %d test %d: %d, not %d", block.x, block.y,
               block.z, b, i, k, got[(b * threads + i) * kTests + k], want);
      }
}

static void check_row_sums(float *sums, float *in, dim3 block) {
  const int blocks = 4, rows = blocks * block.y;
  static float values[4 * 1024], got[4 * 16];
  for (int i = 0; i < rows * (int)block.x; ++i)
    values[i] = (float)(i % 7 + 1); // small integers: every order sums exactly
  CHECK(cudaMemcpy(in, values, rows * block.x * sizeof(float), cudaMemcpyHostToDevice));
  row_sums<<<blocks, block, block.x * block.y * sizeof(float)>>>(sums, in);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemcpy(got, sums, rows * sizeof(float), cudaMemcpyDeviceToHost));
  for (int r = 0; r < rows; ++r) {
    float want = 0;
    for (unsigned x = 0; x < block.x; ++x)
      want += values[r * block.x + x];
    EXPECT(got[r] == want, "block (%u,%u): row %d sums to %g, not %g", block.x, block.y, r,
           got[r], want);
  }
}

int main() {
  int *out;
  float *sums, *in;
  CHECK(cudaMalloc(&out, 3 * 1024 * kTests * sizeof(int)));
  CHECK(cudaMalloc(&sums, 4 * 16 * sizeof(float)));
  CHECK(cudaMalloc(&in, 4 * 1024 * sizeof(float)));
  // One-dimensional or %ntid.x a multiple of 32: the body with the tests
  // made uniform.
  for (dim3 block : {dim3(256), dim3(40), dim3(96), dim3(64, 2), dim3(32, 2, 3)})
    check_branches(out, block);
  // Any other shape: the body as it was.
  for (dim3 block : {dim3(48, 2), dim3(40, 3), dim3(16, 16), dim3(100, 2, 2)})
    check_branches(out, block);
  for (dim3 block : {dim3(256), dim3(64), dim3(128, 2), dim3(64, 4)})
    check_row_sums(sums, in, block);
  CHECK(cudaFree(out));
  CHECK(cudaFree(sums));
  CHECK(cudaFree(in));
  std::printf("PASS\n");
}
