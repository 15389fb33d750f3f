// Anisotropic filtering's footprint, measured: what zmlir needs to
// implement maxAnisotropy > 1 (it refuses it for mipmapped textures:
// docs/textures.md). A 64x64 float mipmapped texture, level 0 zero but for
// one texel (32, 32) of 1, the other levels 0 ("impulse"), or every level 0
// 1 and the others 0 ("ones": level 0's share of the blend). tex.grad at
// points around the impulse, for gradients whose LOD is about 0 with the
// anisotropy they allow: each answer is the weight the filter gives that
// texel, so the lines map the filter's kernel. Gradients in level-0
// texels; linear filtering, linear mipmap filter. Every answer printed.
//   nvcc -arch=sm_75 tools/aniso_probe.cu -o aniso_probe -lcuda
#include "probe_by_gradient.h"
#include "probe_common.h"


enum { kS = 64, kLevels = 7, kMax = 4096 };

static int fill(CUmipmappedArray mm, bool impulse) {
  static float host[kS * kS];
  for (int k = 0; k < kLevels; ++k) {
    CUarray level;
    CK(cuMipmappedArrayGetLevel(&level, mm, k));
    int w = kS >> k;
    for (int i = 0; i < w * w; ++i) host[i] = (k == 0 && !impulse) ? 1.f : 0.f;
    if (k == 0 && impulse) host[32 * kS + 32] = 1.f;
    CK(copy_to_array(level, host, w * 4, w));
  }
  return 0;
}

int main() {
  CUmodule mod;
  CUfunction f;
  if (probe_context()) return 1;
  CK(cuModuleLoadData(&mod, kPtx));
  CK(cuModuleGetFunction(&f, mod, "by_gradient"));
  CUDA_ARRAY3D_DESCRIPTOR md = {kS, kS, 0, CU_AD_FORMAT_FLOAT, 1, 0};
  CUmipmappedArray mm;
  CK(cuMipmappedArrayCreate(&mm, &md, kLevels));
  // (dudx, dvdx, dudy, dvdy) in texels.
  const float grads[][4] = {{2, 0, 0, 1}, {4, 0, 0, 1}, {8, 0, 0, 1}, {3, 0, 0, 1},
                            {0, 1, 4, 0}, {3, 3, -1, 1}, {4, 1, 0, 1}};
  const int anisos[] = {2, 4, 16};
  static float params[kMax * 8], out[kMax];
  CUdeviceptr d_out, d_params;
  CK(cuMemAlloc(&d_out, sizeof out));
  CK(cuMemAlloc(&d_params, sizeof params));
  for (int pattern = 0; pattern < 2; ++pattern) {
    if (fill(mm, pattern == 0)) return 1;
    for (int a = 0; a < 3; ++a) {
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
      td.maxAnisotropy = anisos[a];
      // A driver may refuse anisotropy (zmlir does, for mipmapped arrays):
      // its answer is printed and the probe goes on.
      CUtexObject t;
      CUresult created = cuTexObjectCreate(&t, &res, &td, 0);
      printf("api TexObjectCreate_%s_aniso_%d %d\n", pattern == 0 ? "impulse" : "ones",
             anisos[a], (int)created);
      if (created != CUDA_SUCCESS) continue;
      for (int gi = 0; gi < (int)(sizeof grads / sizeof grads[0]); ++gi) {
        // The lookup at the impulse's centre plus (ox, oy) texels ("ones":
        // at the centre only).
        int n = 0;
        int reach_x = pattern == 0 ? 40 : 0, reach_y = pattern == 0 ? 6 : 0;
        for (int j = -reach_y; j <= reach_y; ++j)
          for (int i = -reach_x; i <= reach_x; ++i) {
            float *p = params + 8 * n++;
            p[0] = (32.5f + i / 4.f) / kS;
            p[1] = (32.5f + j / 4.f) / kS;
            for (int k = 0; k < 4; ++k) p[2 + k] = grads[gi][k] / kS;
          }
        CK(cuMemcpyHtoD(d_params, params, n * 32));
        void *args[] = {&t, &d_out, &d_params};
        CK(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, 0, args, 0));
        CK(cuMemcpyDtoH(out, d_out, n * 4));
        for (int m = 0; m < n; ++m) {
          // Only the impulse's nonzero answers: the kernel's support.
          if (pattern == 0 && out[m] == 0) continue;
          printf("%s aniso %d grad %g %g %g %g at %.9g %.9g -> %.9g\n",
                 pattern == 0 ? "impulse" : "ones", anisos[a], grads[gi][0], grads[gi][1],
                 grads[gi][2], grads[gi][3], params[8 * m] * kS - 32.5f,
                 params[8 * m + 1] * kS - 32.5f, out[m]);
        }
      }
      CK(cuTexObjectDestroy(t));
    }
  }
  CK(cuMipmappedArrayDestroy(mm));
  printf("done\n");
  return 0;
}
