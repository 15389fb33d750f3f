#include "check.h"
#include <vector>
#define T 32
__global__ void transpose(const int* in, int* out, int w, int h) {
  __shared__ int tile[T][T + 1];
  int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
  if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = in[y * w + x];
  __syncthreads();
  x = blockIdx.y * T + threadIdx.x; y = blockIdx.x * T + threadIdx.y;
  if (x < h && y < w) out[y * h + x] = tile[threadIdx.x][threadIdx.y];
}
int main() {
  const int w = 100, h = 67;
  std::vector<int> a(w * h), b(w * h);
  for (int i = 0; i < w * h; ++i) a[i] = i;
  int *da, *db;
  CHECK(cudaMalloc(&da, a.size() * 4)); CHECK(cudaMalloc(&db, b.size() * 4));
  CHECK(cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  transpose<<<dim3((w + T - 1) / T, (h + T - 1) / T), dim3(T, T)>>>(da, db, w, h);
  CHECK(cudaMemcpy(b.data(), db, b.size() * 4, cudaMemcpyDeviceToHost));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) EXPECT(b[x * h + y] == a[y * w + x], "(%d,%d)", x, y);
  std::printf("PASS\n");
}
