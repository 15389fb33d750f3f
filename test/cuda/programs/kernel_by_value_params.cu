#include "check.h"
#include <cstdint>
#include <cuda_fp16.h>
#include <vector>
// Kernel parameters passed by value as byte arrays (`.param .align N .b8
// p[K]`): __half and __half2, a struct of mixed fields at odd offsets, one of
// pointers and extents (CuPy's CArray), and one of 400 bytes (too big for
// the launch fast path's byte-sized parameter sizes), which nvcc reads
// through its address (`mov.b64 %rd, param`), with constant and computed
// indices; and a 4-aligned struct after an int (`.param .align 4 .b8
// v[12]` at offset 4, read 4 bytes at a time, not at an assumed 8), and a
// 16-aligned one of two float4 after an int (`.align 16`, ld.param.v4.f32 at
// offset 16: the copy must be as aligned as declared). Intel's OpenCL
// compiler aborted on a kernel taking an array by value.
struct Mixed {
  int8_t tag;
  int16_t count;
  double weight;
  float scale;
};
struct View {
  float* data;
  int64_t size;
  int64_t shape[2];
  int64_t strides[2];
};
struct Table {
  int32_t values[100];
};
struct Vec3 {
  float x, y, z;
};
struct Quads {
  float4 low, high;
};

__global__ void halves(__half h, __half2 pair, float* out) {
  out[threadIdx.x] = __half2float(h) * threadIdx.x + __low2float(pair) - __high2float(pair);
}

__global__ void mixed(Mixed m, int n, double* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = m.tag + m.count * i + m.weight * m.scale;
}

__global__ void scale(View v, float factor) {
  int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < v.size) {
    int64_t row = i / v.shape[1], col = i % v.shape[1];
    float* p = v.data + row * v.strides[0] + col * v.strides[1];
    *p *= factor;
  }
}

__global__ void offset(int base, Vec3 v, float* out) {
  int i = threadIdx.x;
  out[i] = base + v.x * i + v.y - v.z;
}

__global__ void quads(int base, Quads q, float* out) {
  int i = threadIdx.x;
  out[i] = base + q.low.x * i + q.low.w - q.high.y + q.high.z * q.low.y;
}

__global__ void ends(Table t, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = t.values[0] + t.values[57] * i - t.values[99];
}

__global__ void lookup(Table t, const int* index, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = t.values[index[i]];
}

int main() {
  // __half and __half2
  float* dhalf;
  CHECK(cudaMalloc(&dhalf, 32 * sizeof(float)));
  halves<<<1, 32>>>(__float2half(1.5f), __floats2half2_rn(10.0f, 0.25f), dhalf);
  CHECK(cudaGetLastError());
  std::vector<float> half_out(32);
  CHECK(cudaMemcpy(half_out.data(), dhalf, 32 * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 32; ++i)
    EXPECT(half_out[i] == 1.5f * i + 9.75f, "halves[%d] = %g, expected %g", i, half_out[i],
           1.5f * i + 9.75f);

  // A 4-aligned struct after an int
  offset<<<1, 32>>>(7, Vec3{0.5f, 100.0f, 0.25f}, dhalf);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(half_out.data(), dhalf, 32 * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 32; ++i)
    EXPECT(half_out[i] == 7 + 0.5f * i + 99.75f, "offset[%d] = %g, expected %g", i, half_out[i],
           7 + 0.5f * i + 99.75f);

  // A 16-aligned struct of two float4 after an int
  quads<<<1, 32>>>(3, Quads{{2.0f, 5.0f, 0.0f, 1.5f}, {0.0f, 0.25f, 4.0f, 0.0f}}, dhalf);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(half_out.data(), dhalf, 32 * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < 32; ++i)
    EXPECT(half_out[i] == 3 + 2.0f * i + 21.25f, "quads[%d] = %g, expected %g", i, half_out[i],
           3 + 2.0f * i + 21.25f);

  // A struct of mixed fields
  const int n = 300;
  double* dmixed;
  CHECK(cudaMalloc(&dmixed, n * sizeof(double)));
  Mixed m{-7, 1234, 0.5, 3.0f};
  mixed<<<(n + 127) / 128, 128>>>(m, n, dmixed);
  CHECK(cudaGetLastError());
  std::vector<double> mixed_out(n);
  CHECK(cudaMemcpy(mixed_out.data(), dmixed, n * sizeof(double), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    double expected = -7 + 1234.0 * i + 0.5 * 3.0;
    EXPECT(mixed_out[i] == expected, "mixed[%d] = %g, expected %g", i, mixed_out[i], expected);
  }

  // Pointers and extents: the transpose view of a 6x5 matrix
  const int rows = 6, cols = 5;
  std::vector<float> matrix(rows * cols);
  for (int i = 0; i < rows * cols; ++i)
    matrix[i] = static_cast<float>(i);
  float* dmatrix;
  CHECK(cudaMalloc(&dmatrix, matrix.size() * sizeof(float)));
  CHECK(cudaMemcpy(dmatrix, matrix.data(), matrix.size() * sizeof(float), cudaMemcpyHostToDevice));
  View v{dmatrix, rows * cols, {cols, rows}, {1, cols}};
  scale<<<1, 64>>>(v, -2.0f);
  CHECK(cudaGetLastError());
  std::vector<float> scaled(matrix.size());
  CHECK(cudaMemcpy(scaled.data(), dmatrix, scaled.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int i = 0; i < rows * cols; ++i)
    EXPECT(scaled[i] == -2.0f * i, "scaled[%d] = %g, expected %g", i, scaled[i], -2.0f * i);

  // 400 bytes by value
  Table t;
  for (int i = 0; i < 100; ++i)
    t.values[i] = i * i - 50;
  int* dends;
  CHECK(cudaMalloc(&dends, n * sizeof(int)));
  ends<<<(n + 127) / 128, 128>>>(t, dends, n);
  CHECK(cudaGetLastError());
  std::vector<int> ends_out(n);
  CHECK(cudaMemcpy(ends_out.data(), dends, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    int expected = t.values[0] + t.values[57] * i - t.values[99];
    EXPECT(ends_out[i] == expected, "ends[%d] = %d, expected %d", i, ends_out[i], expected);
  }
  std::vector<int> index(n);
  for (int i = 0; i < n; ++i)
    index[i] = (i * 37) % 100;
  int *dindex, *dlookup;
  CHECK(cudaMalloc(&dindex, n * sizeof(int)));
  CHECK(cudaMalloc(&dlookup, n * sizeof(int)));
  CHECK(cudaMemcpy(dindex, index.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  lookup<<<(n + 127) / 128, 128>>>(t, dindex, dlookup, n);
  CHECK(cudaGetLastError());
  std::vector<int> looked(n);
  CHECK(cudaMemcpy(looked.data(), dlookup, n * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    EXPECT(looked[i] == t.values[index[i]], "lookup[%d] = %d, expected %d", i, looked[i],
           t.values[index[i]]);
  std::printf("PASS\n");
}
