// tex.grad on a cube map: how NVIDIA takes the LOD from 3D gradients
// (docs/textures.md: layered_mipmap_probe's 12 grad_cube lines fit finite
// differences of the face coordinates on the lookup's face, s(P + dP) -
// s(P), but for one whose P + dP lies on another face). A cube map of 64x64
// float faces, 7 levels, every texel of level k 100 k, a linear mipmap
// filter: each lookup reads 100 x LOD with the LOD's fraction truncated to
// 1/256, so 2.56 x the answer is floor(256 LOD). Every answer printed, one
// per line: "cube i P dPdx dPdy -> answer".
//   nvcc -arch=sm_75 -Itools tools/cube_grad_probe.cu -o cube_grad_probe -lcuda
#include "probe_common.h"

#include <math.h>

static const char *kPtx = R"PTX(
.version 7.0
.target sm_75
.address_size 64
// params per thread: x, y, z, pad, dPdx (3), pad, dPdy (3), pad
.visible .entry grad_cube(.param .u64 tex, .param .u64 out, .param .u64 params)
{
  .reg .b32 %r<3>; .reg .f32 %f<16>; .reg .b64 %rd<8>;
  ld.param.u64 %rd7, [tex]; ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [params];
  mov.u32 %r1, %ctaid.x; mov.u32 %r0, %ntid.x; mov.u32 %r2, %tid.x;
  mad.lo.u32 %r1, %r1, %r0, %r2;  // ptxas takes no special register in mad
  mul.wide.u32 %rd3, %r1, 48; add.s64 %rd4, %rd2, %rd3;
  ld.global.v4.f32 {%f1, %f2, %f3, %f0}, [%rd4];
  ld.global.v4.f32 {%f4, %f5, %f6, %f0}, [%rd4+16];
  ld.global.v4.f32 {%f7, %f8, %f9, %f0}, [%rd4+32];
  tex.grad.cube.v4.f32.f32 {%f10, %f11, %f12, %f13}, [%rd7, {%f1, %f2, %f3, %f3}],
      {%f4, %f5, %f6, %f6}, {%f7, %f8, %f9, %f9};
  mul.wide.u32 %rd5, %r1, 4; add.s64 %rd6, %rd1, %rd5;
  st.global.f32 [%rd6], %f10;
  ret;
}
)PTX";

enum { kS = 64, kLevels = 7, kMax = 4096 };
static float rows[kMax][12];
static int n = 0;

static void add(float x, float y, float z, float ax, float ay, float az, float bx, float by,
                float bz) {
  float *r = rows[n++];
  r[0] = x; r[1] = y; r[2] = z; r[4] = ax; r[5] = ay; r[6] = az; r[8] = bx; r[9] = by;
  r[10] = bz;
}

// Lookup points, one or two per face and at other distances: (x, y, z).
static const float kPoints[][3] = {{1, 0.3f, -0.6f}, {1, 0, 0},        {2, 0.6f, -1.2f},
                                   {0.5f, 0.15f, -0.3f}, {-1, 0.3f, 0.6f}, {0.3f, 1, -0.6f},
                                   {0.3f, -1, 0.6f},  {0.2f, 0.5f, 1},   {-0.6f, 0.5f, -1},
                                   {1, 0.9f, 0.9f}};
enum { kPointCount = sizeof kPoints / sizeof kPoints[0] };

// The major axis of a point (ties to z, then y, as the programming guide's table).
static int major_axis(const float *p) {
  float ax = fabsf(p[0]), ay = fabsf(p[1]), az = fabsf(p[2]);
  if (az >= ax && az >= ay) return 2;
  return ay >= ax ? 1 : 0;
}

int main() {
  CUmodule mod;
  CUfunction f;
  if (probe_context()) return 1;
  // A driver that does not compile tex.grad.cube fails here, saying so.
  CK(cuModuleLoadData(&mod, kPtx));
  CK(cuModuleGetFunction(&f, mod, "grad_cube"));
  CUDA_ARRAY3D_DESCRIPTOR md = {kS, kS, 6, CU_AD_FORMAT_FLOAT, 1, CUDA_ARRAY3D_CUBEMAP};
  CUmipmappedArray mm;
  CK(cuMipmappedArrayCreate(&mm, &md, kLevels));
  static float host[kS * kS * 6];
  for (int k = 0; k < kLevels; ++k) {
    CUarray level;
    CK(cuMipmappedArrayGetLevel(&level, mm, k));
    int w = kS >> k;
    for (int i = 0; i < w * w * 6; ++i) host[i] = 100.f * k;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = w * 4;
    c.srcHeight = w;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = level;
    c.WidthInBytes = w * 4;
    c.Height = w;
    c.Depth = 6;
    CK(cuMemcpy3D(&c));
  }
  for (int pi = 0; pi < kPointCount; ++pi) {
    const float *p = kPoints[pi];
    int m = major_axis(p), t1 = (m + 1) % 3, t2 = (m + 2) % 3;
    float e[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    // 1. dPdx along the major axis only, -0.9 to 2 of the point's major
    // component (toward and away from the centre), dPdy 0.
    for (int i = -29; i <= 64; ++i) {
      float t = i / 32.f * p[m];
      add(p[0], p[1], p[2], t * e[m][0], t * e[m][1], t * e[m][2], 0, 0, 0);
    }
    // 2. A tangential part of 1/32 to 1/4 (1 to 8 level-0 texels at unit
    // distance) with major-axis parts of each sign.
    const float tangents[] = {1 / 32.f, 1 / 16.f, 1 / 8.f, 1 / 4.f};
    const float majors[] = {-0.75f, -0.5f, -0.25f, 0, 0.25f, 0.5f, 1};
    for (float a : tangents)
      for (float b : majors)
        for (int which = 0; which < 2; ++which) {
          int t = which ? t2 : t1;
          float v[3] = {0, 0, 0};
          v[t] = a * fabsf(p[m]);
          v[m] = b * p[m];
          add(p[0], p[1], p[2], v[0], v[1], v[2], 0, 0, 0);
        }
    // 3. Both gradients tangential (the isotropic rule on a face), then with
    // a major-axis part in dPdy only.
    for (int i = 1; i <= 16; ++i) {
      float a = i / 64.f * fabsf(p[m]);
      add(p[0], p[1], p[2], a * e[t1][0], a * e[t1][1], a * e[t1][2], a * e[t2][0],
          a * e[t2][1], a * e[t2][2]);
      add(p[0], p[1], p[2], a * e[t1][0], a * e[t1][1], a * e[t1][2],
          0.5f * p[m] * e[m][0], 0.5f * p[m] * e[m][1], 0.5f * p[m] * e[m][2]);
      add(p[0], p[1], p[2], a * e[t1][0], a * e[t1][1], a * e[t1][2],
          -0.5f * p[m] * e[m][0], -0.5f * p[m] * e[m][1], -0.5f * p[m] * e[m][2]);
    }
    // 4. Tangential gradients long enough that P + dP crosses to the next face.
    for (int i = 1; i <= 24; ++i) {
      float a = i / 16.f * fabsf(p[m]);
      add(p[0], p[1], p[2], a * e[t1][0], a * e[t1][1], a * e[t1][2], 0, 0, 0);
      add(p[0], p[1], p[2], -a * e[t2][0], -a * e[t2][1], -a * e[t2][2], 0, 0, 0);
    }
  }
  // 5. Pseudo-random points and gradient pairs (a fixed LCG): for checking a
  // fitted rule.
  unsigned seed = 12345;
  for (int i = 0; i < 512; ++i) {
    float v[9];
    for (int k = 0; k < 9; ++k) {
      seed = seed * 1664525u + 1013904223u;
      v[k] = ((seed >> 8) / 16777216.f * 2 - 1);
    }
    float scale = 0.25f;
    add(v[0], v[1], v[2], scale * v[3], scale * v[4], scale * v[5], scale * v[6],
        scale * v[7], scale * v[8]);
  }

  static float out[kMax];
  CUdeviceptr d_out, d_rows;
  CK(cuMemAlloc(&d_out, sizeof out));
  CK(cuMemAlloc(&d_rows, sizeof rows));
  CK(cuMemcpyHtoD(d_rows, rows, sizeof rows));
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
  res.res.mipmap.hMipmappedArray = mm;
  CUDA_TEXTURE_DESC td;
  memset(&td, 0, sizeof td);
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = CU_TR_ADDRESS_MODE_CLAMP;
  td.filterMode = CU_TR_FILTER_MODE_POINT;
  td.flags = CU_TRSF_NORMALIZED_COORDINATES;
  td.mipmapFilterMode = CU_TR_FILTER_MODE_LINEAR;
  td.maxMipmapLevelClamp = kLevels - 1;
  CUtexObject t;
  CK(cuTexObjectCreate(&t, &res, &td, 0));
  printf("count %d\n", n);
  void *args[] = {&t, &d_out, &d_rows};
  CK(cuLaunchKernel(f, (n + 255) / 256, 1, 1, 256, 1, 1, 0, 0, args, 0));
  CK(cuMemcpyDtoH(out, d_out, n * 4));
  for (int i = 0; i < n; ++i) {
    const float *r = rows[i];
    printf("cube %d %.9g %.9g %.9g dx %.9g %.9g %.9g dy %.9g %.9g %.9g -> %.9g\n", i, r[0], r[1],
           r[2], r[4], r[5], r[6], r[8], r[9], r[10], out[i]);
  }
  CK(cuTexObjectDestroy(t));
  CK(cuMipmappedArrayDestroy(mm));
  printf("done\n");
  return 0;
}
