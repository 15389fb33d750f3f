// Prints texture fetches bit for bit, for comparing zmlir's emulation with
// an NVIDIA GPU's texture units (docs/textures.md):
//
//   nvcc -arch=sm_90 -o texture_grid tools/texture_grid.cu && ./texture_grid > h200.txt
//   nvcc -arch=sm_75 -o texture_grid tools/texture_grid.cu && zmlir run -- ./texture_grid > ours.txt
//   diff h200.txt ours.txt
//
// Each line: the case, the coordinate, and the fetched channels' bits.
// Covered: a 5x4 float texture (each address mode, point and linear,
// unnormalized and normalized coordinates, sub-texel steps of 1/16 across
// and past both edges, so the 1/256 weights' rounding shows); uchar4, char,
// ushort and short read as normalized floats (point and linear); half; a
// 3D and a layered fetch; a cube map's face edges; tex2Dgather; 1- and
// 2-channel textures' missing channels.
#include <cstdio>
#include <cstring>
#include <cuda_fp16.h>
#include <vector>

#define CHECK(call)                                                                        \
  do {                                                                                     \
    cudaError_t e = (call);                                                                \
    if (e != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                   \
                   cudaGetErrorString(e));                                                 \
      return 1;                                                                            \
    }                                                                                      \
  } while (0)

__global__ void fetch2d(cudaTextureObject_t t, const float2* at, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, at[i].x, at[i].y);
}
__global__ void fetch3d(cudaTextureObject_t t, const float4* at, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<float4>(t, at[i].x, at[i].y, at[i].z);
}
__global__ void fetchLayered(cudaTextureObject_t t, const float4* at, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<float4>(t, at[i].x, at[i].y, (int)at[i].z);
}
__global__ void fetchCube(cudaTextureObject_t t, const float4* at, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texCubemap<float4>(t, at[i].x, at[i].y, at[i].z);
}
__global__ void gather2d(cudaTextureObject_t t, const float2* at, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2Dgather<float4>(t, at[i].x, at[i].y, 0);
}

static unsigned bitsOf(float f) {
  unsigned u;
  std::memcpy(&u, &f, 4);
  return u;
}

static cudaTextureObject_t texture(cudaArray_t a, cudaTextureAddressMode mode, bool linear,
                                   bool normalized, cudaTextureReadMode read) {
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = a;
  cudaTextureDesc tex = {};
  tex.addressMode[0] = tex.addressMode[1] = tex.addressMode[2] = mode;
  tex.filterMode = linear ? cudaFilterModeLinear : cudaFilterModePoint;
  tex.readMode = read;
  tex.normalizedCoords = normalized;
  tex.borderColor[0] = 0.75f;
  tex.borderColor[1] = -2.0f;
  tex.borderColor[2] = 0.5f;
  tex.borderColor[3] = 1.0f;
  cudaTextureObject_t t = 0;
  cudaCreateTextureObject(&t, &res, &tex, nullptr);
  return t;
}

// Runs `kernel` on the points and prints one line per point.
template <typename P, typename K>
static int run(const char* name, K kernel, cudaTextureObject_t t, const std::vector<P>& at) {
  int n = at.size();
  P* dAt;
  float4* dOut;
  CHECK(cudaMalloc(&dAt, n * sizeof(P)));
  CHECK(cudaMalloc(&dOut, n * sizeof(float4)));
  CHECK(cudaMemcpy(dAt, at.data(), n * sizeof(P), cudaMemcpyHostToDevice));
  kernel<<<(n + 127) / 128, 128>>>(t, dAt, dOut, n);
  CHECK(cudaGetLastError());
  std::vector<float4> out(n);
  CHECK(cudaMemcpy(out.data(), dOut, n * sizeof(float4), cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    const float* c = (const float*)&at[i];
    std::printf("%s", name);
    for (size_t k = 0; k < sizeof(P) / 4; ++k) std::printf(" %08x", bitsOf(c[k]));
    std::printf(" : %08x %08x %08x %08x\n", bitsOf(out[i].x), bitsOf(out[i].y), bitsOf(out[i].z),
                bitsOf(out[i].w));
  }
  CHECK(cudaFree(dAt));
  CHECK(cudaFree(dOut));
  return 0;
}

template <typename T>
static cudaArray_t array2d(const std::vector<T>& data, int w, int h, cudaChannelFormatDesc d) {
  cudaArray_t a = nullptr;
  cudaMallocArray(&a, &d, w, h);
  cudaMemcpy2DToArray(a, 0, 0, data.data(), w * sizeof(T), w * sizeof(T), h,
                      cudaMemcpyHostToDevice);
  return a;
}

int main() {
  const int W = 5, H = 4;
  std::vector<float> image(W * H);
  for (int i = 0; i < W * H; ++i) image[i] = (float)((i * 7) % 11) - 3.0f + 0.125f * i;
  cudaArray_t af = array2d(image, W, H, cudaCreateChannelDesc<float>());
  // x from -1.5 to W + 1.5 by 1/16 on three rows; y likewise on one column.
  std::vector<float2> at, atNorm;
  for (int row = 0; row < 3; ++row)
    for (int i = -24; i <= 16 * W + 24; ++i) at.push_back(make_float2(i / 16.0f, 0.5f + row * 1.3f));
  for (int j = -24; j <= 16 * H + 24; ++j) at.push_back(make_float2(2.5f, j / 16.0f));
  for (float2 p : at) atNorm.push_back(make_float2(p.x / W, p.y / H));
  const char* modeNames[] = {"wrap", "clamp", "mirror", "border"};
  for (int mode = 0; mode < 4; ++mode)
    for (int linear = 0; linear < 2; ++linear)
      for (int norm = 0; norm < 2; ++norm) {
        char name[64];
        std::snprintf(name, sizeof name, "f32-%s-%s-%s", modeNames[mode],
                      linear ? "linear" : "point", norm ? "norm" : "unnorm");
        cudaTextureObject_t t = texture(af, (cudaTextureAddressMode)mode, linear, norm,
                                        cudaReadModeElementType);
        if (run(name, fetch2d, t, norm ? atNorm : at)) return 1;
        cudaDestroyTextureObject(t);
      }
  // Integer data read as normalized floats.
  std::vector<uchar4> u8(W * H);
  std::vector<char2> s8(W * H);
  std::vector<unsigned short> u16(W * H);
  std::vector<short> s16(W * H);
  std::vector<__half> f16(W * H);
  std::vector<float2> f2(W * H);
  for (int i = 0; i < W * H; ++i) {
    u8[i] = make_uchar4(i * 53 % 256, 255 - 13 * i, i == 3 ? 255 : i, 128);
    s8[i] = make_char2((char)(i * 37 % 256 - 128), (char)(-i * 9));
    u16[i] = (unsigned short)(i * 3331 % 65536);
    s16[i] = (short)(i * 3331 % 65536 - 32768);
    f16[i] = __float2half(image[i] / 3.0f);
    f2[i] = make_float2(image[i], -image[i]);
  }
  struct Case { const char* name; cudaArray_t a; };
  Case cases[] = {
      {"uchar4", array2d(u8, W, H, cudaCreateChannelDesc<uchar4>())},
      {"char2", array2d(s8, W, H, cudaCreateChannelDesc<char2>())},
      {"ushort", array2d(u16, W, H, cudaCreateChannelDesc<unsigned short>())},
      {"short", array2d(s16, W, H, cudaCreateChannelDesc<short>())},
      {"half", array2d(f16, W, H, cudaCreateChannelDescHalf())},
      {"float2", array2d(f2, W, H, cudaCreateChannelDesc<float2>())},
  };
  for (Case c : cases)
    for (int linear = 0; linear < 2; ++linear) {
      char name[64];
      std::snprintf(name, sizeof name, "%s-%s", c.name, linear ? "linear" : "point");
      bool floats = !std::strcmp(c.name, "half") || !std::strcmp(c.name, "float2");
      cudaTextureObject_t t = texture(c.a, cudaAddressModeClamp, linear, false,
                                      floats ? cudaReadModeElementType : cudaReadModeNormalizedFloat);
      if (run(name, fetch2d, t, at)) return 1;
      cudaDestroyTextureObject(t);
    }
  // 3D and layered: a 5x4x3 volume.
  const int D = 3;
  std::vector<float> volume(W * H * D);
  for (int i = 0; i < W * H * D; ++i) volume[i] = (float)((i * 13) % 17) * 0.25f;
  cudaChannelFormatDesc fd = cudaCreateChannelDesc<float>();
  std::vector<float4> at3;
  for (int k = -8; k <= 16 * D + 8; k += 3)
    for (int i = -8; i <= 16 * W + 8; i += 5) at3.push_back(make_float4(i / 16.0f, 1.3f, k / 16.0f, 0));
  for (int layered = 0; layered < 2; ++layered) {
    cudaArray_t a;
    CHECK(cudaMalloc3DArray(&a, &fd, make_cudaExtent(W, H, D), layered ? cudaArrayLayered : 0));
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(volume.data(), W * 4, W, H);
    p.dstArray = a;
    p.extent = make_cudaExtent(W, H, D);
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));
    cudaTextureObject_t t = texture(a, cudaAddressModeClamp, true, false, cudaReadModeElementType);
    if (layered) {
      std::vector<float4> atl;
      for (float4 q : at3) atl.push_back(make_float4(q.x, q.y, (float)((int)(q.z * 2) % D), 0));
      if (run("layered-linear", fetchLayered, t, atl)) return 1;
    } else if (run("3d-linear", fetch3d, t, at3)) {
      return 1;
    }
    cudaDestroyTextureObject(t);
    cudaFreeArray(a);
  }
  // A cube map of 4x4 faces: directions sweeping across each face's edges.
  {
    const int S = 4;
    std::vector<float> faces(6 * S * S);
    for (int i = 0; i < 6 * S * S; ++i) faces[i] = (float)i;
    cudaArray_t a;
    CHECK(cudaMalloc3DArray(&a, &fd, make_cudaExtent(S, S, 6), cudaArrayCubemap));
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(faces.data(), S * 4, S, S);
    p.dstArray = a;
    p.extent = make_cudaExtent(S, S, 6);
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));
    std::vector<float4> dirs;
    for (int major = 0; major < 3; ++major)
      for (int sign = -1; sign <= 1; sign += 2)
        for (int u = -9; u <= 9; u += 3)
          for (int v = -9; v <= 9; v += 6) {
            float c[3];
            c[major] = sign;
            c[(major + 1) % 3] = u / 9.0f;
            c[(major + 2) % 3] = v / 9.0f;
            dirs.push_back(make_float4(c[0], c[1], c[2], 0));
          }
    for (int linear = 0; linear < 2; ++linear) {
      cudaTextureObject_t t = texture(a, cudaAddressModeClamp, linear, true, cudaReadModeElementType);
      if (run(linear ? "cube-linear" : "cube-point", fetchCube, t, dirs)) return 1;
      cudaDestroyTextureObject(t);
    }
    cudaFreeArray(a);
  }
  {
    cudaTextureObject_t t = texture(af, cudaAddressModeClamp, false, false, cudaReadModeElementType);
    if (run("gather", gather2d, t, at)) return 1;
    cudaDestroyTextureObject(t);
  }
  return 0;
}
