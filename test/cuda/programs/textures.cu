#include "check.h"
#include <cmath>
#include <cuda_fp16.h>
#include <vector>
// Texture objects on arrays, pitched and linear memory: 1D, 2D, 3D,
// layered and cube-map geometries, point and linear filtering, each address
// mode, normalized coordinates, normalized-float reads of 8/16-bit data,
// half data, integer reads and tex2Dgather. The expected values follow the
// CUDA programming guide's "Texture Fetching": linear filtering weights in
// 9-bit fixed point (1/256), address modes applied to each texel index.

// -- the host's reference ------------------------------------------------------

// A texel index under an address mode (N texels): -1 for a border texel.
static int address(int i, int n, cudaTextureAddressMode mode, bool normalized) {
  if (!normalized && (mode == cudaAddressModeWrap || mode == cudaAddressModeMirror))
    mode = cudaAddressModeClamp;
  switch (mode) {
  case cudaAddressModeWrap: return ((i % n) + n) % n;
  case cudaAddressModeMirror: {
    int p = ((i % (2 * n)) + 2 * n) % (2 * n);
    return p >= n ? 2 * n - 1 - p : p;
  }
  case cudaAddressModeBorder: return i < 0 || i >= n ? -1 : i;
  default: return i < 0 ? 0 : i >= n ? n - 1 : i;
  }
}

struct Axis {
  int i[2];
  float a;
};

static Axis axis(float x, int n, cudaTextureAddressMode mode, bool normalized, bool linear,
                 bool gather = false) {
  // A normalized coordinate truncated to 21 fraction bits first (an H200's).
  float u = normalized ? std::floor(x * 2097152.0f) / 2097152.0f * n : x;
  // Linear in clamp mode: the coordinate clamps to the texel centres (a
  // gather's footprint clamps each index).
  bool clamps = mode == cudaAddressModeClamp ||
                (!normalized && (mode == cudaAddressModeWrap || mode == cudaAddressModeMirror));
  if (linear && clamps && !gather) u = std::fmin(std::fmax(u, 0.5f), n - 0.5f);
  float t = linear ? u - 0.5f : u;
  float f = std::floor(t);
  Axis r;
  r.i[0] = address((int)f, n, mode, normalized);
  r.i[1] = address((int)f + 1, n, mode, normalized);
  r.a = std::floor((t - f) * 256.0f + 0.5f) / 256.0f;
  return r;
}

// The corner weights (in 1/256) of a linear fetch, corner bit k: the second
// texel on axis k. An H200 splits each z slice's weight between x's texels,
// x1's share rounded to the nearest 1/256, a tie up (x0 takes the rest), then
// each share between y's texels, a tie up where the corner's x and y bits
// agree, else down; in 2D x's shares are exact (fitted to all 2^24 fraction
// triples in 3D).
static void cornerWeights(const Axis* axes, int dims, double* w) {
  auto rounded = [](double p, bool up) { return up ? std::floor(p + 0.5) : std::ceil(p - 0.5); };
  for (int k = 0; k < (1 << dims); ++k) {
    double a[3];
    for (int d = 0; d < dims; ++d) a[d] = (k >> d & 1) ? axes[d].a * 256.0 : 256.0 - axes[d].a * 256.0;
    bool x1 = k & 1, y1 = k >> 1 & 1;
    double share = dims > 2 ? rounded(a[2] * a[0] / 256.0, x1) : a[0];
    w[k] = dims > 1 ? rounded(share * a[1] / 256.0, x1 == y1) : share;
  }
}

// One channel of a float texture of extent (w, h, d): T(x, y, z).
struct Ref {
  const float* data;
  int w, h, d;
  cudaTextureAddressMode mode[3];
  bool normalized, linear;
  float border;
  bool fixed16 = false;
  bool halfPrecision = false;  // filtered values round to a half's precision
  float texel(int x, int y, int z) const {
    return x < 0 || y < 0 || z < 0 ? border : data[(z * h + y) * w + x];
  }
  float at(float x, float y = 0, float z = 0, int dims = 2) const {
    Axis ax = axis(x, w, mode[0], normalized, linear);
    Axis ay = dims > 1 ? axis(y, h, mode[1], normalized, linear) : Axis{{0, 0}, 0};
    Axis az = dims > 2 ? axis(z, d, mode[2], normalized, linear) : Axis{{0, 0}, 0};
    if (!linear) return texel(ax.i[0], ay.i[0], az.i[0]);
    Axis axes[3] = {ax, ay, az};
    double w[8];
    cornerWeights(axes, dims, w);
    double sum = 0;
    for (int k = 0; k < (1 << dims); ++k)
      sum += w[k] * texel(ax.i[k & 1], ay.i[(k >> 1) & 1], az.i[(k >> 2) & 1]);
    // uchar4 read normalized: 16-bit fixed point, rounded to whole steps.
    if (fixed16) return (float)std::floor(sum / 256.0 + 0.5) / 65535.0f;
    if (halfPrecision) return halfTiesAway(sum / 256.0);
    return (float)(sum / 256.0);
  }

  // `x` to a half's precision, ties away from zero, as an H200 rounds a
  // filtered half (tools/texture_grid.h200.txt.gz, half-linear).
  static float halfTiesAway(double x) {
    int e;
    std::frexp(std::fabs(x), &e);  // |x| = f 2^e, f in [0.5, 1)
    double spacing = std::ldexp(1.0, std::max(e - 1, -14) - 10);
    return (float)std::copysign(std::floor(std::fabs(x) / spacing + 0.5) * spacing, x);
  }
};

// -- kernels -------------------------------------------------------------------

__global__ void fetch2d(cudaTextureObject_t t, const float2* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float>(t, at[i].x, at[i].y);
}
// The isResident overloads (sparse arrays): `tex.2d ... {..}|%p`, and
// tex.level's on a texture that is not mipmapped (level 0).
__global__ void fetch2dResident(cudaTextureObject_t t, const float2* at, float* out,
                                int* resident, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  bool r2d = false, rLod = false;
  out[i] = tex2D<float>(t, at[i].x, at[i].y, &r2d);
  out[n + i] = tex2DLod<float>(t, at[i].x, at[i].y, 0.0f, &rLod);
  resident[i] = r2d + 2 * rLod;
}
__global__ void fetch2d4(cudaTextureObject_t t, const float2* at, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, at[i].x, at[i].y);
}
__global__ void fetch2du(cudaTextureObject_t t, const float2* at, uint4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<uint4>(t, at[i].x, at[i].y);
}
__global__ void fetch1d(cudaTextureObject_t t, const float* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1D<float>(t, at[i]);
}
__global__ void fetch1dInt(cudaTextureObject_t t, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<int>(t, i - 2);
}
__global__ void fetch1dFloat(cudaTextureObject_t t, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i - 2);
}
__global__ void fetch3d(cudaTextureObject_t t, const float4* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<float>(t, at[i].x, at[i].y, at[i].z);
}
__global__ void fetchLayered(cudaTextureObject_t t, const float4* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<float>(t, at[i].x, at[i].y, (int)at[i].z);
}
__global__ void fetch1dLayered(cudaTextureObject_t t, const float4* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1DLayered<float>(t, at[i].x, (int)at[i].z);
}
__global__ void fetchCube(cudaTextureObject_t t, const float4* at, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texCubemap<float>(t, at[i].x, at[i].y, at[i].z);
}
__global__ void gather(cudaTextureObject_t t, const float2* at, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2Dgather<float4>(t, at[i].x, at[i].y, 0);
}

// -- helpers -------------------------------------------------------------------

template <typename T>
static T* device(const std::vector<T>& host) {
  T* d;
  CHECK(cudaMalloc(&d, host.size() * sizeof(T)));
  CHECK(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <typename T>
static std::vector<T> back(const T* d, size_t n) {
  std::vector<T> h(n);
  CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

static cudaTextureObject_t arrayTexture(cudaArray_t a, cudaTextureAddressMode mode, bool norm,
                                        bool linear, cudaTextureReadMode read = cudaReadModeElementType,
                                        float border = 0.0f) {
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = a;
  cudaTextureDesc tex = {};
  tex.addressMode[0] = tex.addressMode[1] = tex.addressMode[2] = mode;
  tex.filterMode = linear ? cudaFilterModeLinear : cudaFilterModePoint;
  tex.readMode = read;
  tex.normalizedCoords = norm;
  for (float& c : tex.borderColor) c = border;
  cudaTextureObject_t t;
  CHECK(cudaCreateTextureObject(&t, &res, &tex, nullptr));
  return t;
}

static void expectEqual(const char* what, float got, float want, int i) {
  EXPECT(got == want || (std::isnan(got) && std::isnan(want)), "%s[%d]: got %.9g, want %.9g",
         what, i, got, want);
}

int main() {
  const int W = 7, H = 5;
  std::vector<float> image(W * H);
  for (int i = 0; i < W * H; ++i) image[i] = (float)(i * i % 37) + 0.25f * (i % 3);
  cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>();
  cudaArray_t a2;
  CHECK(cudaMallocArray(&a2, &f1, W, H));
  CHECK(cudaMemcpy2DToArray(a2, 0, 0, image.data(), W * sizeof(float), W * sizeof(float), H,
                            cudaMemcpyHostToDevice));
  // Coordinates over and past the edges.
  std::vector<float2> at;
  for (int j = -3; j < 2 * H + 3; ++j)
    for (int i = -3; i < 2 * W + 3; ++i) at.push_back(make_float2(i * 0.5f + 0.13f, j * 0.5f - 0.29f));
  std::vector<float2> atNorm;
  for (float2 p : at) atNorm.push_back(make_float2(p.x / W, p.y / H));
  int n = at.size();
  float2 *dAt = device(at), *dAtNorm = device(atNorm);
  float* dOut;
  CHECK(cudaMalloc(&dOut, n * sizeof(float4)));
  const cudaTextureAddressMode modes[] = {cudaAddressModeWrap, cudaAddressModeClamp,
                                          cudaAddressModeMirror, cudaAddressModeBorder};
  // 1. 2D float: each address mode, point and linear, both kinds of coordinates.
  for (cudaTextureAddressMode mode : modes)
    for (int linear = 0; linear < 2; ++linear)
      for (int norm = 0; norm < 2; ++norm) {
        cudaTextureObject_t t = arrayTexture(a2, mode, norm, linear, cudaReadModeElementType, 9.5f);
        fetch2d<<<(n + 127) / 128, 128>>>(t, norm ? dAtNorm : dAt, dOut, n);
        CHECK(cudaGetLastError());
        std::vector<float> got = back(dOut, n);
        Ref ref{image.data(), W, H, 1, {mode, mode, mode}, (bool)norm, (bool)linear, 9.5f};
        for (int i = 0; i < n; ++i) {
          float2 p = norm ? atNorm[i] : at[i];
          char what[64];
          std::snprintf(what, sizeof what, "2d mode %d linear %d norm %d", mode, linear, norm);
          expectEqual(what, got[i], ref.at(p.x, p.y), i);
        }
        CHECK(cudaDestroyTextureObject(t));
      }
  // 1b. The same through the isResident overloads: every texel is resident.
  {
    cudaTextureObject_t t = arrayTexture(a2, cudaAddressModeClamp, true, true);
    int* dResident;
    CHECK(cudaMalloc(&dResident, n * sizeof(int)));
    fetch2dResident<<<(n + 127) / 128, 128>>>(t, dAtNorm, dOut, dResident, n);
    CHECK(cudaGetLastError());
    std::vector<float> got = back(dOut, 2 * n);
    std::vector<int> resident = back(dResident, n);
    Ref ref{image.data(), W, H, 1, {cudaAddressModeClamp, cudaAddressModeClamp}, true, true, 0};
    for (int i = 0; i < n; ++i) {
      expectEqual("2d isResident", got[i], ref.at(atNorm[i].x, atNorm[i].y), i);
      expectEqual("2d lod isResident", got[n + i], ref.at(atNorm[i].x, atNorm[i].y), i);
      EXPECT(resident[i] == 3, "isResident[%d]: %d, want both 1", i, resident[i]);
    }
    CHECK(cudaFree(dResident));
    CHECK(cudaDestroyTextureObject(t));
  }
  // 2. uchar4 and char read as normalized floats, and uchar4 as integers.
  std::vector<uchar4> rgba(W * H);
  for (int i = 0; i < W * H; ++i)
    rgba[i] = make_uchar4(i * 37 % 256, 255 - i, i * 11 % 256, (i * 101) % 256);
  cudaChannelFormatDesc u8x4 = cudaCreateChannelDesc<uchar4>();
  cudaArray_t a8;
  CHECK(cudaMallocArray(&a8, &u8x4, W, H));
  CHECK(cudaMemcpy2DToArray(a8, 0, 0, rgba.data(), W * 4, W * 4, H, cudaMemcpyHostToDevice));
  for (int linear = 0; linear < 2; ++linear) {
    cudaTextureObject_t t = arrayTexture(a8, cudaAddressModeClamp, false, linear,
                                         cudaReadModeNormalizedFloat);
    fetch2d4<<<(n + 127) / 128, 128>>>(t, dAt, (float4*)dOut, n);
    std::vector<float4> got = back((float4*)dOut, n);
    for (int c = 0; c < 4; ++c) {
      std::vector<float> channel(W * H);
      for (int i = 0; i < W * H; ++i)
        channel[i] = linear ? (float)((unsigned char*)&rgba[i])[c] * 257.0f
                            : (float)((unsigned char*)&rgba[i])[c] / 255.0f;
      Ref ref{channel.data(), W, H, 1, {cudaAddressModeClamp, cudaAddressModeClamp}, false,
              (bool)linear, 0, (bool)linear};
      for (int i = 0; i < n; ++i)
        expectEqual("uchar4 normalized", ((float*)&got[i])[c], ref.at(at[i].x, at[i].y), i);
    }
    CHECK(cudaDestroyTextureObject(t));
  }
  {
    cudaTextureObject_t t = arrayTexture(a8, cudaAddressModeBorder, false, false);
    fetch2du<<<(n + 127) / 128, 128>>>(t, dAt, (uint4*)dOut, n);
    std::vector<uint4> got = back((uint4*)dOut, n);
    for (int i = 0; i < n; ++i) {
      int x = (int)std::floor(at[i].x), y = (int)std::floor(at[i].y);
      bool in = x >= 0 && x < W && y >= 0 && y < H;
      uchar4 want = in ? rgba[y * W + x] : make_uchar4(0, 0, 0, 0);
      EXPECT(got[i].x == want.x && got[i].y == want.y && got[i].z == want.z && got[i].w == want.w,
             "uchar4 as integers [%d]: got %u %u %u %u", i, got[i].x, got[i].y, got[i].z, got[i].w);
    }
    CHECK(cudaDestroyTextureObject(t));
  }
  {
    std::vector<signed char> s8(W * H);
    for (int i = 0; i < W * H; ++i) s8[i] = (signed char)(i * 29 % 256 - 128);
    cudaChannelFormatDesc d = cudaCreateChannelDesc<signed char>();
    cudaArray_t a;
    CHECK(cudaMallocArray(&a, &d, W, H));
    CHECK(cudaMemcpy2DToArray(a, 0, 0, s8.data(), W, W, H, cudaMemcpyHostToDevice));
    cudaTextureObject_t t = arrayTexture(a, cudaAddressModeClamp, false, false,
                                         cudaReadModeNormalizedFloat);
    fetch2d<<<(n + 127) / 128, 128>>>(t, dAt, dOut, n);
    std::vector<float> got = back(dOut, n);
    for (int i = 0; i < n; ++i) {
      int x = std::min(std::max((int)std::floor(at[i].x), 0), W - 1);
      int y = std::min(std::max((int)std::floor(at[i].y), 0), H - 1);
      expectEqual("char normalized", got[i], std::fmax(s8[y * W + x] / 127.0f, -1.0f), i);
    }
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFreeArray(a));
  }
  // 3. half data on pitched memory, linear filtering.
  {
    std::vector<__half> h(W * H);
    std::vector<float> hf(W * H);
    for (int i = 0; i < W * H; ++i) {
      h[i] = __float2half(image[i] * 0.125f);
      hf[i] = __half2float(h[i]);
    }
    size_t pitch;
    void* d;
    CHECK(cudaMallocPitch(&d, &pitch, W * sizeof(__half), H));
    CHECK(cudaMemcpy2D(d, pitch, h.data(), W * 2, W * 2, H, cudaMemcpyHostToDevice));
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = d;
    res.res.pitch2D.desc = cudaCreateChannelDescHalf();
    res.res.pitch2D.width = W;
    res.res.pitch2D.height = H;
    res.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc tex = {};
    tex.addressMode[0] = tex.addressMode[1] = cudaAddressModeClamp;
    tex.filterMode = cudaFilterModeLinear;
    tex.readMode = cudaReadModeElementType;
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &res, &tex, nullptr));
    fetch2d<<<(n + 127) / 128, 128>>>(t, dAt, dOut, n);
    std::vector<float> got = back(dOut, n);
    Ref ref{hf.data(), W, H, 1, {cudaAddressModeClamp, cudaAddressModeClamp}, false, true, 0};
    ref.halfPrecision = true;  // half textures filter to a half
    for (int i = 0; i < n; ++i)
      expectEqual("half pitch2D", got[i], ref.at(at[i].x, at[i].y), i);
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFree(d));
  }
  // 4. tex1Dfetch on linear memory (out of range: zeros, whatever the address
  // mode, as an H200 reads: tools/texref_probe.h200.txt), tex1D on a 1D array.
  {
    std::vector<int> v(10);
    for (int i = 0; i < 10; ++i) v[i] = i * 1000 - 3;
    int* d = device(v);
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = d;
    res.res.linear.desc = cudaCreateChannelDesc<int>();
    res.res.linear.sizeInBytes = v.size() * sizeof(int);
    cudaTextureDesc tex = {};
    tex.readMode = cudaReadModeElementType;
    cudaTextureObject_t t;
    CHECK(cudaCreateTextureObject(&t, &res, &tex, nullptr));
    fetch1dInt<<<1, 14>>>(t, (int*)dOut, 14);
    std::vector<int> got = back((int*)dOut, 14);
    for (int i = 0; i < 14; ++i)
      EXPECT(got[i] == (i < 2 || i > 11 ? 0 : v[i - 2]), "tex1Dfetch[%d] = %d", i, got[i]);
    CHECK(cudaDestroyTextureObject(t));
    std::vector<float> vf(10);
    for (int i = 0; i < 10; ++i) vf[i] = i * 1.5f + 0.25f;
    float* df = device(vf);
    res.res.linear.devPtr = df;
    res.res.linear.desc = cudaCreateChannelDesc<float>();
    res.res.linear.sizeInBytes = vf.size() * sizeof(float);
    tex.addressMode[0] = cudaAddressModeClamp;
    CHECK(cudaCreateTextureObject(&t, &res, &tex, nullptr));
    fetch1dFloat<<<1, 14>>>(t, (float*)dOut, 14);
    std::vector<float> gotf = back((float*)dOut, 14);
    for (int i = 0; i < 14; ++i)
      EXPECT(gotf[i] == (i < 2 || i > 11 ? 0.0f : vf[i - 2]), "tex1Dfetch<float>[%d] = %g", i,
             gotf[i]);
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFree(df));
    cudaArray_t a1;
    CHECK(cudaMallocArray(&a1, &f1, W * H));
    CHECK(cudaMemcpyToArray(a1, 0, 0, image.data(), W * H * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float> xs;
    for (int i = -5; i < 2 * W * H + 5; ++i) xs.push_back(i * 0.5f + 0.2f);
    float* dXs = device(xs);
    for (cudaTextureAddressMode mode : modes) {
      t = arrayTexture(a1, mode, false, true, cudaReadModeElementType, 3.0f);
      fetch1d<<<1, xs.size()>>>(t, dXs, dOut, xs.size());
      std::vector<float> got1 = back(dOut, xs.size());
      // An H200 filters a 1D array as a 2D one of height 1 at y = 0: in
      // border mode the row above, border texels, takes half the weight
      // (its 1D layered arrays filter in x alone).
      Ref ref{image.data(), W * H, 1, 1, {mode, mode, mode}, false, true, 3.0f};
      for (size_t i = 0; i < xs.size(); ++i) expectEqual("1d linear", got1[i], ref.at(xs[i], 0), i);
      CHECK(cudaDestroyTextureObject(t));
    }
    CHECK(cudaFreeArray(a1));
    CHECK(cudaFree(d));
    CHECK(cudaFree(dXs));
  }
  // 5. 3D, linear; 2D and 1D layered.
  const int D = 3;
  std::vector<float> volume(W * H * D);
  for (int i = 0; i < W * H * D; ++i) volume[i] = (float)(i * 7 % 19) - 4.5f;
  std::vector<float4> at3;
  for (int k = -1; k < 2 * D + 1; ++k)
    for (int j = -1; j < 2 * H + 1; j += 2)
      for (int i = -1; i < 2 * W + 1; i += 2)
        at3.push_back(make_float4(i * 0.5f + 0.1f, j * 0.5f + 0.3f, k * 0.5f + 0.45f, 0));
  int n3 = at3.size();
  float4* dAt3 = device(at3);
  float* dOut3;
  CHECK(cudaMalloc(&dOut3, n3 * sizeof(float)));
  {
    cudaArray_t a3;
    cudaExtent e = make_cudaExtent(W, H, D);
    CHECK(cudaMalloc3DArray(&a3, &f1, e));
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(volume.data(), W * sizeof(float), W, H);
    p.dstArray = a3;
    p.extent = e;
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));
    cudaTextureObject_t t = arrayTexture(a3, cudaAddressModeClamp, false, true);
    fetch3d<<<(n3 + 127) / 128, 128>>>(t, dAt3, dOut3, n3);
    std::vector<float> got = back(dOut3, n3);
    Ref ref{volume.data(), W, H, D, {cudaAddressModeClamp, cudaAddressModeClamp,
            cudaAddressModeClamp}, false, true, 0};
    for (int i = 0; i < n3; ++i) expectEqual("3d linear", got[i], ref.at(at3[i].x, at3[i].y, at3[i].z, 3), i);
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFreeArray(a3));

    cudaArray_t al;
    CHECK(cudaMalloc3DArray(&al, &f1, make_cudaExtent(W, H, D), cudaArrayLayered));
    p.dstArray = al;
    CHECK(cudaMemcpy3D(&p));
    std::vector<float4> atl;
    for (int layer = 0; layer < D; ++layer)
      for (float2 q : at) atl.push_back(make_float4(q.x, q.y, (float)layer, 0));
    float4* dAtl = device(atl);
    float* dOutl;
    CHECK(cudaMalloc(&dOutl, atl.size() * sizeof(float)));
    t = arrayTexture(al, cudaAddressModeBorder, false, true, cudaReadModeElementType, -1.0f);
    fetchLayered<<<(atl.size() + 127) / 128, 128>>>(t, dAtl, dOutl, atl.size());
    got = back(dOutl, atl.size());
    for (size_t i = 0; i < atl.size(); ++i) {
      int layer = (int)atl[i].z;
      Ref r{volume.data() + layer * W * H, W, H, 1, {cudaAddressModeBorder, cudaAddressModeBorder},
            false, true, -1.0f};
      expectEqual("2d layered", got[i], r.at(atl[i].x, atl[i].y), i);
    }
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFreeArray(al));

    // 1D layered: D layers of W * H texels.
    cudaArray_t a1l;
    CHECK(cudaMalloc3DArray(&a1l, &f1, make_cudaExtent(W * H, 0, D), cudaArrayLayered));
    p.srcPtr = make_cudaPitchedPtr(volume.data(), W * H * sizeof(float), W * H, 1);
    p.dstArray = a1l;
    p.extent = make_cudaExtent(W * H, 1, D);
    CHECK(cudaMemcpy3D(&p));
    t = arrayTexture(a1l, cudaAddressModeClamp, false, false);
    fetch1dLayered<<<(atl.size() + 127) / 128, 128>>>(t, dAtl, dOutl, atl.size());
    got = back(dOutl, atl.size());
    for (size_t i = 0; i < atl.size(); ++i) {
      int layer = (int)atl[i].z;
      int x = std::min(std::max((int)std::floor(atl[i].x), 0), W * H - 1);
      expectEqual("1d layered", got[i], volume[layer * W * H + x], i);
    }
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFreeArray(a1l));
    CHECK(cudaFree(dAtl));
    CHECK(cudaFree(dOutl));
  }
  // 6. A cube map of 4x4 faces: the face's texel in each direction.
  {
    const int S = 4;
    std::vector<float> faces(6 * S * S);
    for (int i = 0; i < 6 * S * S; ++i) faces[i] = (float)i;
    cudaArray_t ac;
    CHECK(cudaMalloc3DArray(&ac, &f1, make_cudaExtent(S, S, 6), cudaArrayCubemap));
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(faces.data(), S * sizeof(float), S, S);
    p.dstArray = ac;
    p.extent = make_cudaExtent(S, S, 6);
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));
    // (direction, face, s, t): the guide's table of faces.
    struct Case { float x, y, z; int face; float s, t; };
    std::vector<Case> cases;
    const float o[] = {-0.7f, -0.2f, 0.1f, 0.6f};
    for (float u : o)
      for (float v : o) {
        cases.push_back({1, v, u, 0, -u, -v});
        cases.push_back({-1, v, u, 1, u, -v});
        cases.push_back({u, 1, v, 2, u, v});
        cases.push_back({u, -1, v, 3, u, -v});
        cases.push_back({u, v, 1, 4, u, -v});
        cases.push_back({u, v, -1, 5, -u, -v});
      }
    std::vector<float4> dirs;
    for (Case c : cases) dirs.push_back(make_float4(c.x * 2, c.y * 2, c.z * 2, 0));
    float4* dDirs = device(dirs);
    cudaTextureObject_t t = arrayTexture(ac, cudaAddressModeClamp, true, false);
    fetchCube<<<1, dirs.size()>>>(t, dDirs, dOut, dirs.size());
    std::vector<float> got = back(dOut, dirs.size());
    for (size_t i = 0; i < cases.size(); ++i) {
      int x = (int)std::floor((cases[i].s + 1) / 2 * S), y = (int)std::floor((cases[i].t + 1) / 2 * S);
      expectEqual("cube", got[i], faces[(cases[i].face * S + y) * S + x], i);
    }
    CHECK(cudaDestroyTextureObject(t));
    CHECK(cudaFreeArray(ac));
    CHECK(cudaFree(dDirs));
  }
  // 7. tex2Dgather: channel 0 of the bilinear footprint's texels.
  {
    cudaTextureObject_t t = arrayTexture(a2, cudaAddressModeClamp, false, false);
    gather<<<(n + 127) / 128, 128>>>(t, dAt, (float4*)dOut, n);
    std::vector<float4> got = back((float4*)dOut, n);
    for (int i = 0; i < n; ++i) {
      Axis ax = axis(at[i].x, W, cudaAddressModeClamp, false, true, true);
      Axis ay = axis(at[i].y, H, cudaAddressModeClamp, false, true, true);
      float want[4] = {image[ay.i[1] * W + ax.i[0]], image[ay.i[1] * W + ax.i[1]],
                       image[ay.i[0] * W + ax.i[1]], image[ay.i[0] * W + ax.i[0]]};
      for (int c = 0; c < 4; ++c) expectEqual("gather", ((float*)&got[i])[c], want[c], i);
    }
    CHECK(cudaDestroyTextureObject(t));
  }
  CHECK(cudaFreeArray(a2));
  CHECK(cudaFreeArray(a8));
  std::printf("PASS\n");
  return 0;
}
