// Anisotropic filtering's probe line off the axes (docs/textures.md: for
// dx = (4, 1) and (2, 1), dy = (0, 1), the probes lie on a line that is
// neither dx's direction nor the ellipse's major axis, and no rule was
// found from aniso_footprint_probe's eight cases). A 64x64 float mipmapped
// texture, level 0 zero but texel (32, 32) of 1, the other levels 0;
// linear filtering, maxAnisotropy 16. Each lookup's answer is the weight
// the filter gives that texel; lookups around it on a 1/4-texel grid,
// nonzero answers printed: "dir CASE dx dy at X Y -> weight".
// 1. Orthogonal pairs, |dy| = 1: dx = 4 (cos t, sin t), t = 0 to 45
//    degrees in 1.5-degree steps; dx of 2, 3, 6 and 8 texels at 10, 20
//    and 30 degrees.
// 2. dx = (4, k / 4), k = 0 to 16, dy = (0, 1): skewed pairs.
// Gradients in level-0 texels.
//   nvcc -arch=sm_75 -Itools tools/aniso_direction_probe.cu -o aniso_direction_probe -lcuda
#include "probe_by_gradient.h"
#include "probe_common.h"

#include <math.h>


enum { kS = 64, kLevels = 7, kMax = 4096 };
static CUfunction f;
static CUdeviceptr d_out, d_params;
static float params[kMax * 8], out[kMax];

static int run(CUtexObject t, int n) {
  CK(cuMemcpyHtoD(d_params, params, n * 32));
  void *args[] = {&t, &d_out, &d_params};
  CK(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, 0, args, 0));
  CK(cuMemcpyDtoH(out, d_out, n * 4));
  return 0;
}

// The impulse's weight around it for gradients g = {dx.x, dx.y, dy.x, dy.y},
// on a 1/4-texel grid reaching past the footprint.
static int sweep(CUtexObject t, int index, const float g[4]) {
  float len = sqrtf(g[0] * g[0] + g[1] * g[1]);
  int reach = (int)ceilf((len / 2 + 1.5f) * 4), side = 2 * reach + 1, total = side * side;
  for (int first = 0; first < total; first += kMax) {
    int count = total - first < kMax ? total - first : kMax;
    for (int m = 0; m < count; ++m) {
      int i = (first + m) % side - reach, j = (first + m) / side - reach;
      float *p = params + 8 * m;
      p[0] = (32.5f + i / 4.f) / kS;
      p[1] = (32.5f + j / 4.f) / kS;
      for (int k = 0; k < 4; ++k)
        p[2 + k] = g[k] / kS;
    }
    if (run(t, count))
      return 1;
    for (int m = 0; m < count; ++m) {
      if (out[m] == 0)
        continue;
      int i = (first + m) % side - reach, j = (first + m) / side - reach;
      printf("dir %d dx %.9g %.9g dy %.9g %.9g at %g %g -> %.9g\n", index, g[0], g[1], g[2], g[3],
             i / 4.f, j / 4.f, out[m]);
    }
  }
  return 0;
}

int main() {
  CUmodule mod;
  if (probe_context())
    return 1;
  CK(cuModuleLoadData(&mod, kPtx));
  CK(cuModuleGetFunction(&f, mod, "by_gradient"));
  CK(cuMemAlloc(&d_out, sizeof out));
  CK(cuMemAlloc(&d_params, sizeof params));
  CUDA_ARRAY3D_DESCRIPTOR md = {kS, kS, 0, CU_AD_FORMAT_FLOAT, 1, 0};
  CUmipmappedArray mm;
  CK(cuMipmappedArrayCreate(&mm, &md, kLevels));
  static float host[kS * kS];
  for (int k = 0; k < kLevels; ++k) {
    CUarray level;
    CK(cuMipmappedArrayGetLevel(&level, mm, k));
    int w = kS >> k;
    memset(host, 0, sizeof host);
    if (k == 0)
      host[32 * kS + 32] = 1.f;
    CK(copy_to_array(level, host, w * 4, w));
  }
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
  res.res.mipmap.hMipmappedArray = mm;
  CUDA_TEXTURE_DESC td;
  memset(&td, 0, sizeof td);
  td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
  td.filterMode = CU_TR_FILTER_MODE_LINEAR;
  td.flags = CU_TRSF_NORMALIZED_COORDINATES;
  td.mipmapFilterMode = CU_TR_FILTER_MODE_LINEAR;
  td.maxMipmapLevelClamp = kLevels - 1;
  td.maxAnisotropy = 16;
  CUtexObject t;
  CUresult created = cuTexObjectCreate(&t, &res, &td, 0);
  printf("api TexObjectCreate_aniso_16 %d\n", (int)created);
  if (created == CUDA_SUCCESS) {
    int index = 0;
    for (int k = 0; k <= 30; ++k) {
      float th = (float)(M_PI / 120 * k), c = cosf(th), s = sinf(th);
      const float g[4] = {4 * c, 4 * s, -s, c};
      if (sweep(t, index++, g))
        return 1;
    }
    const float lengths[] = {2, 3, 6, 8}, degrees[] = {10, 20, 30};
    for (float len : lengths)
      for (float deg : degrees) {
        float th = (float)(M_PI / 180 * deg), c = cosf(th), s = sinf(th);
        const float g[4] = {len * c, len * s, -s, c};
        if (sweep(t, index++, g))
          return 1;
      }
    for (int k = 0; k <= 16; ++k) {
      const float g[4] = {4, k / 4.f, 0, 1};
      if (sweep(t, index++, g))
        return 1;
    }
    CK(cuTexObjectDestroy(t));
  }
  CK(cuMipmappedArrayDestroy(mm));
  printf("done\n");
  return 0;
}
