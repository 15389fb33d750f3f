// tex.grad's level of detail, swept finely: the data to fit NVIDIA's rule
// (docs/textures.md: ours takes log2 of the longer Euclidean gradient;
// NVIDIA's length and log2 are approximations, and parallel gradients
// lengthen it). A 64x64 float mipmapped texture whose level k reads 100 k
// everywhere, a linear mipmap filter: each lookup reads 100 x LOD with the
// LOD's fraction truncated to 1/256, so 2.56 x the answer is floor(256 LOD).
// Gradients are given in level-0 texels. Every answer printed, one per line.
//   nvcc -arch=sm_75 tools/lod_sweep_probe.cu -o lod_sweep_probe -lcuda
#include "probe_common.h"

#include <math.h>

static const char *kPtx = R"PTX(
.version 7.0
.target sm_75
.address_size 64
.visible .entry by_gradient(.param .u64 tex, .param .u64 out, .param .u64 params)
{
  .reg .b32 %r<3>; .reg .f32 %f<12>; .reg .b64 %rd<8>;
  ld.param.u64 %rd7, [tex]; ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [params];
  mov.u32 %r1, %ctaid.x; mov.u32 %r0, %ntid.x; mov.u32 %r2, %tid.x;
  mad.lo.u32 %r1, %r1, %r0, %r2;  // ptxas takes no special register in mad
  mul.wide.u32 %rd3, %r1, 16; add.s64 %rd4, %rd2, %rd3;
  ld.global.v4.f32 {%f7, %f8, %f9, %f10}, [%rd4];
  mov.f32 %f1, 0f3F000000;
  tex.grad.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [%rd7, {%f1, %f1}], {%f7, %f8}, {%f9, %f10};
  add.s64 %rd6, %rd1, %rd3;
  st.global.v4.f32 [%rd6], {%f3, %f4, %f5, %f6};
  ret;
}
)PTX";

enum { kS = 64, kLevels = 7, kMax = 4096 };
static float g[kMax][4];
static const char *names[kMax];
static int idx[kMax];
static int n = 0;

static void add(const char *name, int i, float a, float b, float c, float d) {
  g[n][0] = a; g[n][1] = b; g[n][2] = c; g[n][3] = d;
  names[n] = name; idx[n] = i; ++n;
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
  static float host[kS * kS];
  for (int k = 0; k < kLevels; ++k) {
    CUarray level;
    CK(cuMipmappedArrayGetLevel(&level, mm, k));
    int w = kS >> k;
    for (int i = 0; i < w * w; ++i) host[i] = 100.f * k;
    CK(copy_to_array(level, host, w * 4, w));
  }
  // 1. One gradient along x, lengths 1 + i/256 over an octave: log2's approximation.
  for (int i = 0; i < 256; ++i) add("axis", i, 1 + i / 256.f, 0, 0, 0);
  // ... and in the next octave, along y, and in dy: the same answers?
  for (int i = 0; i < 64; ++i) add("axis2", i, 2 + i / 32.f, 0, 0, 0);
  for (int i = 0; i < 64; ++i) add("axis_y", i, 0, 1 + i / 64.f, 0, 0);
  for (int i = 0; i < 64; ++i) add("axis_dy", i, 0, 0, 1 + i / 64.f, 0);
  // 2. One gradient (2, 2t): the length's dependence on direction.
  for (int i = 0; i <= 128; ++i) add("slope", i, 2, 2 * i / 128.f, 0, 0);
  // ... unit length by angle over a quarter turn.
  for (int i = 0; i <= 64; ++i) {
    float t = (float)(M_PI / 2 * i / 64);
    add("angle", i, 2 * cosf(t), 2 * sinf(t), 0, 0);
  }
  // 3. Two gradients: dx = (2, 0), dy of length 2 and 1 at angles over a half turn.
  for (int i = 0; i <= 128; ++i) {
    float t = (float)(M_PI * i / 128);
    add("pair2", i, 2, 0, 2 * cosf(t), 2 * sinf(t));
  }
  for (int i = 0; i <= 128; ++i) {
    float t = (float)(M_PI * i / 128);
    add("pair1", i, 2, 0, cosf(t), sinf(t));
  }
  // ... parallel gradients, the second's length swept.
  for (int i = 0; i <= 128; ++i) add("parallel", i, 2, 0, 2 * i / 128.f, 0);
  for (int i = 0; i <= 128; ++i) add("antiparallel", i, 2, 0, -2 * i / 128.f, 0);
  // ... parallel along the diagonal.
  for (int i = 0; i <= 64; ++i) add("diag_parallel", i, 1.5f, 1.5f, 1.5f * i / 64, 1.5f * i / 64);
  // ... orthogonal, the second's length swept.
  for (int i = 0; i <= 128; ++i) add("orthogonal", i, 2, 0, 0, 2 * i / 128.f);
  // 4. Pseudo-random pairs (a fixed LCG): for checking a fitted rule.
  unsigned seed = 12345;
  for (int i = 0; i < 256; ++i) {
    float v[4];
    for (int k = 0; k < 4; ++k) {
      seed = seed * 1664525u + 1013904223u;
      v[k] = ((seed >> 8) / 16777216.f * 2 - 1) * 4;
    }
    add("random", i, v[0], v[1], v[2], v[3]);
  }

  static float params[kMax * 4], out[kMax * 4];
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 4; ++k) params[4 * i + k] = g[i][k] / kS;
  CUdeviceptr d_out, d_params;
  CK(cuMemAlloc(&d_out, sizeof out));
  CK(cuMemAlloc(&d_params, sizeof params));
  CK(cuMemcpyHtoD(d_params, params, sizeof params));
  const int anisos[] = {0, 2, 4, 16};
  for (int a = 0; a < 4; ++a) {
    CUDA_RESOURCE_DESC res;
    memset(&res, 0, sizeof res);
    res.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
    res.res.mipmap.hMipmappedArray = mm;
    CUDA_TEXTURE_DESC td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
    td.filterMode = CU_TR_FILTER_MODE_POINT;
    td.flags = CU_TRSF_NORMALIZED_COORDINATES;
    td.mipmapFilterMode = CU_TR_FILTER_MODE_LINEAR;
    td.maxMipmapLevelClamp = kLevels - 1;
    td.maxAnisotropy = anisos[a];
    // A driver may refuse anisotropy (zmlir does, for mipmapped arrays):
    // its answer is printed and the sweep goes on.
    CUtexObject t;
    CUresult created = cuTexObjectCreate(&t, &res, &td, 0);
    printf("api TexObjectCreate_aniso_%d %d\n", anisos[a], (int)created);
    if (created == CUDA_SUCCESS) {
      void *args[] = {&t, &d_out, &d_params};
      int blocks = (n + 255) / 256;
      CK(cuLaunchKernel(f, blocks, 1, 1, 256, 1, 1, 0, 0, args, 0));
      CK(cuMemcpyDtoH(out, d_out, sizeof out));
      for (int i = 0; i < n; ++i)
        printf("aniso %d %s %d dx %.9g %.9g dy %.9g %.9g -> %.9g\n", anisos[a], names[i],
               idx[i], g[i][0], g[i][1], g[i][2], g[i][3], out[4 * i]);
      CK(cuTexObjectDestroy(t));
    }
    // Only aniso 0 sweeps everything; the others the pairs and the random set.
    if (a == 0) {
      int m = 0;
      for (int i = 0; i < n; ++i)
        if (!strncmp(names[i], "pair", 4) || !strcmp(names[i], "random") ||
            !strcmp(names[i], "parallel") || !strcmp(names[i], "orthogonal")) {
          for (int k = 0; k < 4; ++k) g[m][k] = g[i][k];
          names[m] = names[i]; idx[m] = idx[i]; ++m;
        }
      n = m;
      for (int i = 0; i < n; ++i)
        for (int k = 0; k < 4; ++k) params[4 * i + k] = g[i][k] / kS;
      CK(cuMemcpyHtoD(d_params, params, sizeof params));
    }
  }
  CK(cuMipmappedArrayDestroy(mm));
  printf("done\n");
  return 0;
}
