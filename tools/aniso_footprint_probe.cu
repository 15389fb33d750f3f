// Anisotropic filtering, the rest of what zmlir needs to implement it
// (docs/textures.md: aniso_probe and lod_sweep_probe fitted the LOD for
// maxAnisotropy 2, 4 and 16 and the footprint of axis-aligned gradients;
// not the sharpening for other maxAnisotropy values, nor the probes'
// direction for gradients off the axes). 64x64 float mipmapped textures.
// 1. "lod": every texel of level k reads 100 k, a linear mipmap filter, a
//    lookup at the centre: 2.56 x the answer is floor(256 LOD); for
//    maxAnisotropy 2, 3, 4, 5, 6, 8, 12, 16 over orthogonal, stretched,
//    rotated, skewed and pseudo-random gradient pairs.
// 2. "impulse": level 0 zero but for texel (32, 32) of 1, the other levels
//    0; linear filtering; lookups around the impulse on a 1/8-texel grid,
//    each answer the weight the filter gives that texel (nonzero ones
//    printed), for gradients off the axes at LOD about 0, maxAnisotropy 16;
//    "ones" (level 0 all 1) gives level 0's share at the centre.
// 3. "plain": maxAnisotropy 16 on a texture that is not mipmapped.
// Gradients in level-0 texels. Every answer printed, one per line.
//   nvcc -arch=sm_75 -Itools tools/aniso_footprint_probe.cu -o aniso_footprint_probe -lcuda
#include "probe_by_gradient.h"
#include "probe_common.h"

#include <math.h>


enum { kS = 64, kLevels = 7, kMax = 4096 };
static CUfunction f;
static CUdeviceptr d_out, d_params;
static float params[kMax * 8], out[kMax];

// Level k of `mm` filled: "lod" 100 k everywhere; "impulse" level 0 zero
// but texel (32, 32), the others 0; "ones" level 0 all 1, the others 0.
static int fill(CUmipmappedArray mm, const char *pattern) {
  static float host[kS * kS];
  for (int k = 0; k < kLevels; ++k) {
    CUarray level;
    CK(cuMipmappedArrayGetLevel(&level, mm, k));
    int w = kS >> k;
    for (int i = 0; i < w * w; ++i)
      host[i] = !strcmp(pattern, "lod") ? 100.f * k : (k == 0 && !strcmp(pattern, "ones"));
    if (k == 0 && !strcmp(pattern, "impulse")) host[32 * kS + 32] = 1.f;
    CK(copy_to_array(level, host, w * 4, w));
  }
  return 0;
}

static CUtexObject make(CUmipmappedArray mm, CUfilter_mode filter, int aniso) {
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
  res.res.mipmap.hMipmappedArray = mm;
  CUDA_TEXTURE_DESC td;
  memset(&td, 0, sizeof td);
  td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
  td.filterMode = filter;
  td.flags = CU_TRSF_NORMALIZED_COORDINATES;
  td.mipmapFilterMode = CU_TR_FILTER_MODE_LINEAR;
  td.maxMipmapLevelClamp = kLevels - 1;
  td.maxAnisotropy = aniso;
  CUtexObject t = 0;
  CUresult created = cuTexObjectCreate(&t, &res, &td, 0);
  printf("api TexObjectCreate_aniso_%d %d\n", aniso, (int)created);
  return created == CUDA_SUCCESS ? t : 0;
}

// Runs the first n rows of `params` on `t` into `out`.
static int run(CUtexObject t, int n) {
  CK(cuMemcpyHtoD(d_params, params, n * 32));
  void *args[] = {&t, &d_out, &d_params};
  CK(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, 0, args, 0));
  CK(cuMemcpyDtoH(out, d_out, n * 4));
  return 0;
}

static void set(int m, float u, float v, const float g[4]) {
  float *p = params + 8 * m;
  p[0] = u / kS;
  p[1] = v / kS;
  for (int k = 0; k < 4; ++k) p[2 + k] = g[k] / kS;
}

int main() {
  CUmodule mod;
  if (probe_context()) return 1;
  CK(cuModuleLoadData(&mod, kPtx));
  CK(cuModuleGetFunction(&f, mod, "by_gradient"));
  CUDA_ARRAY3D_DESCRIPTOR md = {kS, kS, 0, CU_AD_FORMAT_FLOAT, 1, 0};
  CUmipmappedArray mm;
  CK(cuMipmappedArrayCreate(&mm, &md, kLevels));
  CK(cuMemAlloc(&d_out, sizeof out));
  CK(cuMemAlloc(&d_params, sizeof params));

  // 1. The LOD.
  static float g[kMax][4];
  static const char *names[kMax];
  static int idx[kMax];
  int n = 0;
#define ADD(name, i, a, b, c, d)                                                                   \
  do {                                                                                             \
    g[n][0] = (a); g[n][1] = (b); g[n][2] = (c); g[n][3] = (d);                                    \
    names[n] = (name); idx[n] = (i); ++n;                                                          \
  } while (0)
  for (int i = 0; i <= 64; ++i) ADD("orth", i, 2, 0, 0, 1 + i / 64.f);
  for (int j = 0; j <= 80; ++j) ADD("ratio", j, powf(2, j / 16.f), 0, 0, 1);
  for (int k = 0; k <= 32; ++k) {
    float th = (float)(M_PI / 64 * k), c = cosf(th), s = sinf(th);
    ADD("rot", k, 4 * c, 4 * s, -s, c);
  }
  for (int k = 1; k < 32; ++k) {
    float ph = (float)(M_PI / 32 * k);
    ADD("skew", k, 4, 0, cosf(ph), sinf(ph));
  }
  unsigned seed = 12345;
  for (int i = 0; i < 128; ++i) {
    float v[4];
    for (int k = 0; k < 4; ++k) {
      seed = seed * 1664525u + 1013904223u;
      v[k] = ((seed >> 8) / 16777216.f * 2 - 1) * 4;
    }
    ADD("random", i, v[0], v[1], v[2], v[3]);
  }
  if (fill(mm, "lod")) return 1;
  const int anisos[] = {2, 3, 4, 5, 6, 8, 12, 16};
  for (int a : anisos) {
    CUtexObject t = make(mm, CU_TR_FILTER_MODE_POINT, a);
    if (!t) continue;
    for (int i = 0; i < n; ++i) set(i, 32, 32, g[i]);
    if (run(t, n)) return 1;
    for (int i = 0; i < n; ++i)
      printf("lod aniso %d %s %d dx %.9g %.9g dy %.9g %.9g -> %.9g\n", a, names[i], idx[i],
             g[i][0], g[i][1], g[i][2], g[i][3], out[i]);
    CK(cuTexObjectDestroy(t));
  }

  // 2. The footprint off the axes, at LOD about 0.
  const float r15 = 0.258819045f, c15 = 0.965925826f, r30 = 0.5f, c30 = 0.866025404f,
              r45 = 0.707106781f;
  const float cases[][4] = {{4, 1, 0, 1},          {4, 2, 0, 1},          {2, 1, 0, 1},
                            {4, 0, 1, 1},          {4 * c15, 4 * r15, -r15, c15},
                            {4 * c30, 4 * r30, -r30, c30}, {4 * r45, 4 * r45, -r45, r45},
                            {3 * r45, 3 * r45, -r45, r45}};
  for (const char *pattern : {"ones", "impulse"}) {
    if (fill(mm, pattern)) return 1;
    CUtexObject t = make(mm, CU_TR_FILTER_MODE_LINEAR, 16);
    if (!t) break;
    for (const float *gc : cases) {
      // Offsets from the impulse's centre on a 1/8 grid, a chunk at a time.
      int reach = !strcmp(pattern, "ones") ? 0 : 48, total = (2 * reach + 1) * (2 * reach + 1);
      for (int first = 0; first < total; first += kMax) {
        int count = total - first < kMax ? total - first : kMax;
        for (int m = 0; m < count; ++m) {
          int i = (first + m) % (2 * reach + 1) - reach, j = (first + m) / (2 * reach + 1) - reach;
          set(m, 32.5f + i / 8.f, 32.5f + j / 8.f, gc);
        }
        if (run(t, count)) return 1;
        for (int m = 0; m < count; ++m) {
          if (!strcmp(pattern, "impulse") && out[m] == 0) continue;
          int i = (first + m) % (2 * reach + 1) - reach, j = (first + m) / (2 * reach + 1) - reach;
          printf("%s aniso 16 grad %.9g %.9g %.9g %.9g at %g %g -> %.9g\n", pattern, gc[0], gc[1],
                 gc[2], gc[3], i / 8.f, j / 8.f, out[m]);
        }
      }
    }
    CK(cuTexObjectDestroy(t));
  }
  CK(cuMipmappedArrayDestroy(mm));

  // 3. "plain": maxAnisotropy 16 on a texture that is not mipmapped (zmlir
  // accepts it and reads level 0 as tex does): does tex.grad still spread
  // its probes? The impulse at (32, 32), dx = (4, 0), dy = (0, 1).
  {
    CUarray arr;
    CUDA_ARRAY_DESCRIPTOR ad = {kS, kS, CU_AD_FORMAT_FLOAT, 1};
    CK(cuArrayCreate(&arr, &ad));
    static float host[kS * kS];
    memset(host, 0, sizeof host);
    host[32 * kS + 32] = 1.f;
    CK(copy_to_array(arr, host, kS * 4, kS));
    CUDA_RESOURCE_DESC res;
    memset(&res, 0, sizeof res);
    res.resType = CU_RESOURCE_TYPE_ARRAY;
    res.res.array.hArray = arr;
    CUDA_TEXTURE_DESC td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
    td.filterMode = CU_TR_FILTER_MODE_LINEAR;
    td.flags = CU_TRSF_NORMALIZED_COORDINATES;
    td.maxAnisotropy = 16;
    CUtexObject t;
    CUresult created = cuTexObjectCreate(&t, &res, &td, 0);
    printf("api TexObjectCreate_plain_aniso_16 %d\n", (int)created);
    if (created == CUDA_SUCCESS) {
      const float grad[4] = {4, 0, 0, 1};
      int count = 0;
      for (int i = -24; i <= 24; ++i) set(count++, 32.5f + i / 8.f, 32.5f, grad);
      if (run(t, count)) return 1;
      for (int m = 0; m < count; ++m)
        if (out[m] != 0)
          printf("plain aniso 16 grad 4 0 0 1 at %g 0 -> %.9g\n", (m - 24) / 8.f, out[m]);
      CK(cuTexObjectDestroy(t));
    }
    CK(cuArrayDestroy(arr));
  }
  printf("done\n");
  return 0;
}
