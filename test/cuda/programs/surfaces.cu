#include "check.h"
#include <vector>
// Surface objects: surf1D/2D/3D/2DLayered writes and reads on arrays
// (x in bytes), the zero and clamp boundary modes, and copies back out of
// the arrays; a surface and a texture on one array see the same data.

__global__ void write2d(cudaSurfaceObject_t s, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) surf2Dwrite(make_uchar4(x, y, x + y, 7), s, x * 4, y);
}
__global__ void invert2d(cudaSurfaceObject_t s, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < w && y < h) {
    uchar4 v = surf2Dread<uchar4>(s, x * 4, y);
    surf2Dwrite(make_uchar4(255 - v.x, 255 - v.y, 255 - v.z, v.w), s, x * 4, y);
  }
}
__global__ void boundary(cudaSurfaceObject_t s, int w, int* out) {
  int i = threadIdx.x;  // x from -2 to w + 1
  int x = i - 2;
  out[i] = surf1Dread<int>(s, x * 4, cudaBoundaryModeZero);
  out[32 + i] = surf1Dread<int>(s, x * 4, cudaBoundaryModeClamp);
}
__global__ void boundaryWrite(cudaSurfaceObject_t s) {
  int x = (int)threadIdx.x - 2;
  surf1Dwrite(1000 + x, s, x * 4, cudaBoundaryModeZero);  // out of range: nothing
}
__global__ void write3d(cudaSurfaceObject_t s, int w, int h, int d, bool layered) {
  int x = threadIdx.x, y = threadIdx.y, z = blockIdx.x;
  float v = x + 10 * y + 100 * z;
  if (layered)
    surf2DLayeredwrite(v, s, x * 4, y, z);
  else
    surf3Dwrite(v, s, x * 4, y, z);
}
__global__ void read3d(cudaSurfaceObject_t s, float* out, int w, int h, bool layered) {
  int x = threadIdx.x, y = threadIdx.y, z = blockIdx.x;
  out[(z * h + y) * w + x] = layered ? surf2DLayeredread<float>(s, x * 4, y, z)
                                     : surf3Dread<float>(s, x * 4, y, z);
}
__global__ void viaTexture(cudaTextureObject_t t, uchar4* out, int w) {
  int x = threadIdx.x, y = blockIdx.x;
  out[y * w + x] = tex2D<uchar4>(t, x + 0.5f, y + 0.5f);
}

static cudaSurfaceObject_t surface(cudaArray_t a) {
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = a;
  cudaSurfaceObject_t s;
  CHECK(cudaCreateSurfaceObject(&s, &res));
  return s;
}

int main() {
  const int W = 13, H = 6;
  cudaChannelFormatDesc u8x4 = cudaCreateChannelDesc<uchar4>();
  cudaArray_t a;
  CHECK(cudaMallocArray(&a, &u8x4, W, H, cudaArraySurfaceLoadStore));
  cudaSurfaceObject_t s = surface(a);
  write2d<<<dim3(1, H), 32>>>(s, W, H);
  invert2d<<<dim3(1, H), 32>>>(s, W, H);
  CHECK(cudaGetLastError());
  std::vector<uchar4> got(W * H);
  CHECK(cudaMemcpy2DFromArray(got.data(), W * 4, a, 0, 0, W * 4, H, cudaMemcpyDeviceToHost));
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      uchar4 v = got[y * W + x];
      EXPECT(v.x == 255 - x && v.y == 255 - y && v.z == 255 - x - y && v.w == 7,
             "2d (%d,%d) = %d %d %d %d", x, y, v.x, v.y, v.z, v.w);
    }
  // The same array through a texture.
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = a;
  cudaTextureDesc tex = {};
  tex.readMode = cudaReadModeElementType;
  cudaTextureObject_t t;
  CHECK(cudaCreateTextureObject(&t, &res, &tex, nullptr));
  uchar4* dOut;
  CHECK(cudaMalloc(&dOut, W * H * sizeof(uchar4)));
  viaTexture<<<H, W>>>(t, dOut, W);
  std::vector<uchar4> viaTex(W * H);
  CHECK(cudaMemcpy(viaTex.data(), dOut, W * H * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < W * H; ++i)
    EXPECT(viaTex[i].x == got[i].x && viaTex[i].w == got[i].w, "texture [%d]", i);
  CHECK(cudaDestroyTextureObject(t));
  CHECK(cudaDestroySurfaceObject(s));
  CHECK(cudaFreeArray(a));

  // 1D boundary modes.
  const int N = 9;
  cudaChannelFormatDesc i32 = cudaCreateChannelDesc<int>();
  cudaArray_t a1;
  CHECK(cudaMallocArray(&a1, &i32, N, 0, cudaArraySurfaceLoadStore));
  std::vector<int> init(N);
  for (int i = 0; i < N; ++i) init[i] = 5 * i + 1;
  CHECK(cudaMemcpy2DToArray(a1, 0, 0, init.data(), N * 4, N * 4, 1, cudaMemcpyHostToDevice));
  s = surface(a1);
  int* dInts;
  CHECK(cudaMalloc(&dInts, 64 * sizeof(int)));
  boundary<<<1, N + 4>>>(s, N, dInts);
  boundaryWrite<<<1, N + 4>>>(s);
  std::vector<int> ints(64);
  CHECK(cudaMemcpy(ints.data(), dInts, 64 * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < N + 4; ++i) {
    int x = i - 2;
    bool in = x >= 0 && x < N;
    EXPECT(ints[i] == (in ? init[x] : 0), "zero mode [%d] = %d", x, ints[i]);
    int c = x < 0 ? 0 : x >= N ? N - 1 : x;
    EXPECT(ints[32 + i] == init[c], "clamp mode [%d] = %d", x, ints[32 + i]);
  }
  std::vector<int> after(N);
  CHECK(cudaMemcpy2DFromArray(after.data(), N * 4, a1, 0, 0, N * 4, 1, cudaMemcpyDeviceToHost));
  for (int x = 0; x < N; ++x) EXPECT(after[x] == 1000 + x, "after [%d] = %d", x, after[x]);
  CHECK(cudaDestroySurfaceObject(s));
  CHECK(cudaFreeArray(a1));

  // 3D and 2D layered.
  const int X = 5, Y = 4, Z = 3;
  cudaChannelFormatDesc f32 = cudaCreateChannelDesc<float>();
  float* dF;
  CHECK(cudaMalloc(&dF, X * Y * Z * sizeof(float)));
  for (int layered = 0; layered < 2; ++layered) {
    cudaArray_t a3;
    CHECK(cudaMalloc3DArray(&a3, &f32, make_cudaExtent(X, Y, Z),
                            cudaArraySurfaceLoadStore | (layered ? cudaArrayLayered : 0)));
    s = surface(a3);
    write3d<<<Z, dim3(X, Y)>>>(s, X, Y, Z, layered);
    read3d<<<Z, dim3(X, Y)>>>(s, dF, X, Y, layered);
    std::vector<float> vals(X * Y * Z), copied(X * Y * Z);
    CHECK(cudaMemcpy(vals.data(), dF, vals.size() * 4, cudaMemcpyDeviceToHost));
    cudaMemcpy3DParms p = {};
    p.srcArray = a3;
    p.dstPtr = make_cudaPitchedPtr(copied.data(), X * 4, X, Y);
    p.extent = make_cudaExtent(X, Y, Z);
    p.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&p));
    for (int z = 0; z < Z; ++z)
      for (int y = 0; y < Y; ++y)
        for (int x = 0; x < X; ++x) {
          float want = x + 10 * y + 100 * z;
          int i = (z * Y + y) * X + x;
          EXPECT(vals[i] == want && copied[i] == want, "%s (%d,%d,%d) = %g / %g",
                 layered ? "layered" : "3d", x, y, z, vals[i], copied[i]);
        }
    CHECK(cudaDestroySurfaceObject(s));
    CHECK(cudaFreeArray(a3));
  }
  std::printf("PASS\n");
  return 0;
}
