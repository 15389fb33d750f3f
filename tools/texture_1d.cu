// Prints the border's weight (in 1/256) in linear fetches of 1D textures
// whose texels are 0 and border colour 3: a plain 1D array under each pair
// of x and y address modes, unnormalized and normalized coordinates, and a
// mipmapped one through tex1DLod and tex1DGrad with normalizedCoords unset.
// An H200 filters a 1D array as a 2D one of height 1 at y = 0 (the y mode
// decides whether the row above is border), and reads a mipmapped texture's
// coordinates as normalized (tools/texture_1d.h200.txt; docs/textures.md).
//
//   nvcc -arch=sm_90 -o t1d tools/texture_1d.cu && ./t1d > h200.txt
//   nvcc -arch=sm_75 -o t1d tools/texture_1d.cu && zmlir run -- ./t1d > ours.txt
#include <cstdio>
#include <cuda_runtime.h>
__global__ void f1(cudaTextureObject_t t, const float* x, float* o, int n, float scale) {
  int i = threadIdx.x; if (i < n) o[i] = tex1D<float>(t, x[i] * scale);
}
__global__ void f1lod(cudaTextureObject_t t, const float* x, float* o, int n) {
  int i = threadIdx.x; if (i < n) o[i] = tex1DLod<float>(t, x[i], 0.0f);
}
__global__ void f1grad(cudaTextureObject_t t, const float* x, float* o, int n) {
  int i = threadIdx.x; if (i < n) o[i] = tex1DGrad<float>(t, x[i], 0.0f, 0.0f);
}
int main() {
  const int W = 16, N = 40;
  float hx[N], ho[N], zero[W] = {0};
  for (int i = 0; i < N; ++i) hx[i] = -1.0f + i * 0.05f;
  float *dx, *dout; cudaMalloc(&dx, sizeof hx); cudaMalloc(&dout, sizeof ho);
  cudaMemcpy(dx, hx, sizeof hx, cudaMemcpyHostToDevice);
  cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
  struct { const char* name; cudaTextureAddressMode m0, m1; bool norm; int kind; } cases[] = {
    {"x border y clamp", cudaAddressModeBorder, cudaAddressModeClamp, false, 0},
    {"x clamp y border", cudaAddressModeClamp, cudaAddressModeBorder, false, 0},
    {"x border y border norm", cudaAddressModeBorder, cudaAddressModeBorder, true, 0},
    {"x wrap y border norm", cudaAddressModeWrap, cudaAddressModeBorder, true, 0},
    {"x border y wrap norm", cudaAddressModeBorder, cudaAddressModeWrap, true, 0},
    {"mipmapped lod x,y border", cudaAddressModeBorder, cudaAddressModeBorder, false, 1},
    {"mipmapped grad x,y border", cudaAddressModeBorder, cudaAddressModeBorder, false, 2},
  };
  for (auto& c : cases) {
    cudaArray_t a = nullptr; cudaMipmappedArray_t m = nullptr;
    cudaResourceDesc r = {};
    if (c.kind == 0) {
      cudaMallocArray(&a, &f, W);
      cudaMemcpy2DToArray(a, 0, 0, zero, W * 4, W * 4, 1, cudaMemcpyHostToDevice);
      r.resType = cudaResourceTypeArray; r.res.array.array = a;
    } else {
      cudaMallocMipmappedArray(&m, &f, make_cudaExtent(W, 0, 0), 2);
      for (int l = 0; l < 2; ++l) { cudaArray_t lv; cudaGetMipmappedArrayLevel(&lv, m, l);
        cudaMemcpy2DToArray(lv, 0, 0, zero, (W >> l) * 4, (W >> l) * 4, 1, cudaMemcpyHostToDevice); }
      r.resType = cudaResourceTypeMipmappedArray; r.res.mipmap.mipmap = m;
    }
    cudaTextureDesc d = {}; d.addressMode[0] = c.m0; d.addressMode[1] = d.addressMode[2] = c.m1;
    d.filterMode = cudaFilterModeLinear; d.readMode = cudaReadModeElementType;
    d.normalizedCoords = c.norm; d.mipmapFilterMode = cudaFilterModePoint; d.maxMipmapLevelClamp = 1;
    for (float& b : d.borderColor) b = 3.0f;
    cudaTextureObject_t t; cudaError_t e = cudaCreateTextureObject(&t, &r, &d, nullptr);
    if (e) { printf("%s: create: %s\n", c.name, cudaGetErrorString(e)); continue; }
    if (c.kind == 0) f1<<<1, N>>>(t, dx, dout, N, c.norm ? 1.0f / W : 1.0f);
    else if (c.kind == 1) f1lod<<<1, N>>>(t, dx, dout, N);
    else f1grad<<<1, N>>>(t, dx, dout, N);
    cudaMemcpy(ho, dout, sizeof ho, cudaMemcpyDeviceToHost);
    printf("%s:", c.name);
    for (int i = 0; i < N; ++i) printf(" %.2f:%g", hx[i], ho[i] / 3.0f * 256.0f);
    printf("\n%s\n", cudaGetErrorString(cudaGetLastError()));
    cudaDestroyTextureObject(t); if (a) cudaFreeArray(a); if (m) cudaFreeMipmappedArray(m);
  }
}
