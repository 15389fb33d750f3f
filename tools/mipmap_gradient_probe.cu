// The level of detail tex.grad takes from its gradients: each level of a
// 64x64 mipmapped array holds 100 k, so a linear mipmap filter reads 100 x
// LOD. tools/mipmap_gradient_probe.h200.txt: an H200 (driver 580.159.04),
// the data for the rule docs/textures.md says ours does not yet follow.
// Also: cuMipmappedArrayCreate with more levels than the extent has.
#include "probe_common.h"

static const char *kPtx = R"PTX(
.version 7.0
.target sm_75
.address_size 64
.visible .entry by_gradient(.param .u64 tex, .param .u64 out, .param .u64 params)
{
  .reg .b32 %r<2>; .reg .f32 %f<12>; .reg .b64 %rd<8>;
  ld.param.u64 %rd7, [tex];
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [params];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 24; add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4]; ld.global.f32 %f2, [%rd4+4];
  ld.global.f32 %f7, [%rd4+8]; ld.global.f32 %f8, [%rd4+12];
  ld.global.f32 %f9, [%rd4+16]; ld.global.f32 %f10, [%rd4+20];
  tex.grad.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [%rd7, {%f1, %f2}], {%f7, %f8}, {%f9, %f10};
  mul.wide.u32 %rd5, %r1, 16; add.s64 %rd6, %rd1, %rd5;
  st.global.v4.f32 [%rd6], {%f3, %f4, %f5, %f6};
  ret;
}
)PTX";
int main() {
  CUmodule mod; CUfunction f;
  if (probe_context()) return 1;
  CK(cuModuleLoadData(&mod, kPtx)); CK(cuModuleGetFunction(&f, mod, "by_gradient"));
  // too many levels
  {
    CUDA_ARRAY3D_DESCRIPTOR md = {8, 4, 0, CU_AD_FORMAT_FLOAT, 1, 0};
    CUmipmappedArray mm2;
    printf("too_many create %d\n", (int)cuMipmappedArrayCreate(&mm2, &md, 5));
    for (unsigned l = 0; l < 7; ++l) {
      CUarray level; CUresult r = cuMipmappedArrayGetLevel(&level, mm2, l);
      if (r) { printf("too_many level %u rc %d\n", l, (int)r); continue; }
      CUDA_ARRAY3D_DESCRIPTOR o; CK(cuArray3DGetDescriptor(&o, level));
      printf("too_many level %u rc 0 %zu %zu %zu\n", l, o.Width, o.Height, o.Depth);
    }
    CUDA_ARRAY3D_DESCRIPTOR m9 = {8, 4, 0, CU_AD_FORMAT_FLOAT, 1, 0};
    CUmipmappedArray mm3;
    printf("too_many9 create %d\n", (int)cuMipmappedArrayCreate(&mm3, &m9, 9));
    for (unsigned l = 0; l < 10; ++l) {
      CUarray level; CUresult r = cuMipmappedArrayGetLevel(&level, mm3, l);
      if (r) { printf("too_many9 level %u rc %d\n", l, (int)r); continue; }
      CUDA_ARRAY3D_DESCRIPTOR o; CK(cuArray3DGetDescriptor(&o, level));
      printf("too_many9 level %u rc 0 %zu %zu %zu\n", l, o.Width, o.Height, o.Depth);
    }
  }
  const int S = 64, L = 7;
  CUDA_ARRAY3D_DESCRIPTOR md = {S, S, 0, CU_AD_FORMAT_FLOAT, 1, 0};
  CUmipmappedArray mm; CK(cuMipmappedArrayCreate(&mm, &md, L));
  static float host[S * S];
  for (int k = 0; k < L; ++k) {
    CUarray level; CK(cuMipmappedArrayGetLevel(&level, mm, k));
    int w = S >> k; for (int i = 0; i < w * w; ++i) host[i] = 100.f * k;
    CK(copy_to_array(level, host, w * 4, w));
  }
  // gradients in texels of level 0 (S)
  const float g[][4] = {
    {1,0,0,1},{2,0,0,1},{1.6f,0.8f,0.4f,2.4f},{1.6f,0.8f,0,0},{0.4f,2.4f,0,0},{0,0,0.4f,2.4f},
    {1,1,0,0},{2,2,0,0},{3,4,0,0},{4,3,0,0},{1,2,0,0},{2,1,0,0},{1,3,0,0},{3,1,0,0},
    {1,0,0,0},{0,1,0,0},{2,0,0,0},{0,2,0,0},{3,0,0,0},{5,0,0,0},{1.5f,0,0,0},{2.5f,0,0,0},
    {2,0,0,2},{2,0,0,1.5f},{2,0,0,1},{2,0,0,0.5f},{2,0,0,0.25f},{4,0,0,1},{8,0,0,1},{16,0,0,1},
    {2,0,1,0},{2,0,2,0},{2,0,-2,0},{2,0,0,-2},{2,1,1,2},{2,1,-1,2},{2,2,2,-2},{1,1,1,-1},
    {3,0,0,3},{3,1,0,3},{3,2,0,3},{3,3,0,3},{1,1,-1,1},{4,0,0,4},{4,1,1,4},{0.5f,0,0,4},
    {1.2f,0.5f,0.3f,1.1f},{2.2f,-0.7f,0.9f,1.9f},{6,0,0,0.7f},{1.7f,1.7f,0,0},{2.4f,0.4f,0,0},
    {2.4f,0,0.4f,0},{2.4f,0,0,0.4f},{0,2.4f,0.4f,0},{1.6f,0.4f,0.8f,2.4f},{2.4f,0.8f,0.4f,1.6f}};
  const int n = sizeof g / sizeof g[0];
  float params[64 * 6], out[64 * 4];
  for (int i = 0; i < n; ++i) {
    params[6*i] = 0.5f; params[6*i+1] = 0.5f;
    for (int k = 0; k < 4; ++k) params[6*i+2+k] = g[i][k] / S;
  }
  CUdeviceptr d_out, d_params; CK(cuMemAlloc(&d_out, sizeof out)); CK(cuMemAlloc(&d_params, sizeof params));
  CK(cuMemcpyHtoD(d_params, params, sizeof params));
  for (int aniso = 0; aniso < 5; aniso += (aniso == 0 ? 1 : 3)) {
    for (int mipf = 0; mipf < 2; ++mipf) {
    CUDA_RESOURCE_DESC res; memset(&res, 0, sizeof res);
    res.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY; res.res.mipmap.hMipmappedArray = mm;
    CUDA_TEXTURE_DESC td; memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
    td.filterMode = CU_TR_FILTER_MODE_POINT; td.flags = CU_TRSF_NORMALIZED_COORDINATES;
    td.mipmapFilterMode = mipf ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT; td.maxMipmapLevelClamp = L - 1;
    td.maxAnisotropy = aniso;
    CUtexObject t; CK(cuTexObjectCreate(&t, &res, &td, 0));
    void *args[] = {&t, &d_out, &d_params};
    CK(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, 0, args, 0));
    CK(cuMemcpyDtoH(out, d_out, sizeof out));
    for (int i = 0; i < n; ++i)
      printf("grad aniso %d mip %d dx %g %g dy %g %g -> %.9g\n", aniso, mipf, g[i][0], g[i][1], g[i][2], g[i][3], out[4*i]);
    CK(cuTexObjectDestroy(t));
    }
  }
  printf("done\n");
  return 0;
}
