#include "check.h"
#include <vector>
// llm.c's trimat_forward (matmul_tri4) loads 128x32 tiles with two
// threadIdx.y values per warp: row threadIdx.y / 2 + 8k, column half
// (threadIdx.y % 2) * 16. LLVM's loop strength reduction in llc rewrote the
// loop's start with zext(trunc(%tid.y to i1)), which LLVM 22's SPIR-V
// backend emits as an OpBitwiseAnd of mismatched widths: Intel's OpenCL
// runtime rejected the module ("Invalid binary operator record").
__global__ void __launch_bounds__(256, 2)
    tile_dots(float* out, const float* k, const float* q, int QS, int KS, int HS) {
  q += 128 * blockIdx.x * QS;
  k += 128 * blockIdx.y * KS;
  __shared__ float lhs_s[128][32];
  __shared__ float rhs_s[128][32];
  float acc = 0.0f;
  for (int so = 0; so < HS; so += 32) {
    __syncthreads();
    for (int y = threadIdx.y / 2; y < 128; y += 8) {
      int xo = (threadIdx.y % 2) * 16;
      lhs_s[y][threadIdx.x + xo] = q[y * QS + so + threadIdx.x + xo];
      rhs_s[y][threadIdx.x + xo] = k[y * KS + so + threadIdx.x + xo];
    }
    __syncthreads();
    for (int si = 0; si < 32; ++si)
      acc += lhs_s[8 * threadIdx.x][(si + threadIdx.x) % 32] *
             rhs_s[8 * threadIdx.y][(si + threadIdx.x) % 32];
  }
  out[((blockIdx.y * gridDim.x + blockIdx.x) * 16 + threadIdx.y) * 16 + threadIdx.x] = acc;
}

int main() {
  const int blocks = 2, rows = 128 * blocks, HS = 64, QS = HS, KS = HS;
  std::vector<float> q(rows * QS), k(rows * KS);
  for (int i = 0; i < rows * HS; ++i) {
    q[i] = static_cast<float>((i * 7) % 5) - 2.0f;
    k[i] = static_cast<float>((i * 3) % 7) - 3.0f;
  }
  float *dq, *dk, *dout;
  const int outputs = blocks * blocks * 256;
  CHECK(cudaMalloc(&dq, q.size() * sizeof(float)));
  CHECK(cudaMalloc(&dk, k.size() * sizeof(float)));
  CHECK(cudaMalloc(&dout, outputs * sizeof(float)));
  CHECK(cudaMemcpy(dq, q.data(), q.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dk, k.data(), k.size() * sizeof(float), cudaMemcpyHostToDevice));
  tile_dots<<<dim3(blocks, blocks), dim3(16, 16)>>>(dout, dk, dq, QS, KS, HS);
  CHECK(cudaGetLastError());
  std::vector<float> out(outputs);
  CHECK(cudaMemcpy(out.data(), dout, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int by = 0; by < blocks; ++by)
    for (int bx = 0; bx < blocks; ++bx)
      for (int ty = 0; ty < 16; ++ty)
        for (int tx = 0; tx < 16; ++tx) {
          // Small integers: the sum is exact in any order.
          float expected = 0.0f;
          for (int c = 0; c < HS; ++c)
            expected += q[(128 * bx + 8 * tx) * QS + c] * k[(128 * by + 8 * ty) * KS + c];
          float got = out[((by * blocks + bx) * 16 + ty) * 16 + tx];
          EXPECT(got == expected, "block (%d, %d) thread (%d, %d): %g, expected %g", bx, by, tx,
                 ty, got, expected);
        }
  std::printf("PASS\n");
}
