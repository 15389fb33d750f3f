#include "check.h"
#include <vector>
// Pitched allocations, 2D/3D copies and 2D memset.
__global__ void add_rows(float* img, size_t pitch, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float* row = (float*)((char*)img + y * pitch);
    row[x] += y;
  }
}
int main() {
  const int w = 37, h = 23;
  std::vector<float> host(w * h), back(w * h);
  for (int i = 0; i < w * h; ++i) host[i] = i;
  float* d; size_t pitch = 0;
  CHECK(cudaMallocPitch(&d, &pitch, w * sizeof(float), h));
  EXPECT(pitch >= w * sizeof(float), "pitch %zu", pitch);
  CHECK(cudaMemset2D(d, pitch, 0, w * sizeof(float), h));
  CHECK(cudaMemcpy2D(d, pitch, host.data(), w * sizeof(float), w * sizeof(float), h,
                     cudaMemcpyHostToDevice));
  add_rows<<<dim3((w + 15) / 16, (h + 15) / 16), dim3(16, 16)>>>(d, pitch, w, h);
  CHECK(cudaMemcpy2D(back.data(), w * sizeof(float), d, pitch, w * sizeof(float), h,
                     cudaMemcpyDeviceToHost));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      EXPECT(back[y * w + x] == host[y * w + x] + y, "(%d,%d)=%f", x, y, back[y * w + x]);
  // A 3D box copy out of a pitched 3D allocation.
  const int X = 5, Y = 4, Z = 3;
  cudaExtent extent = make_cudaExtent(X * sizeof(int), Y, Z);
  cudaPitchedPtr vol;
  CHECK(cudaMalloc3D(&vol, extent));
  std::vector<int> v(X * Y * Z), v2(X * Y * Z, -1);
  for (int i = 0; i < X * Y * Z; ++i) v[i] = 1000 + i;
  cudaMemcpy3DParms up = {};
  up.srcPtr = make_cudaPitchedPtr(v.data(), X * sizeof(int), X, Y);
  up.dstPtr = vol; up.extent = extent; up.kind = cudaMemcpyHostToDevice;
  CHECK(cudaMemcpy3D(&up));
  cudaMemcpy3DParms down = {};
  down.srcPtr = vol; down.dstPtr = make_cudaPitchedPtr(v2.data(), X * sizeof(int), X, Y);
  down.extent = extent; down.kind = cudaMemcpyDeviceToHost;
  CHECK(cudaMemcpy3D(&down));
  for (int i = 0; i < X * Y * Z; ++i) EXPECT(v2[i] == v[i], "v[%d]=%d", i, v2[i]);
  std::printf("PASS\n");
}
