// Mipmapped arrays through texture objects: tex.level, tex.grad and
// txq.num_mipmap_levels in hand-written PTX (cuModuleLoadData), every
// lookup printed one per line. Run on an H200 and under zmlir;
// test/runtime/test_texref.py checks ours where the answer follows from the
// rules (point filtering, levels whose LOD is not a tie).
//   nvcc -arch=sm_75 tools/mipmap_probe.cu -o mipmap_probe -lcuda
#include "probe_common.h"

static const char *kPtx = R"PTX(
.version 7.0
.target sm_75
.address_size 64

// params: (u, v, lod) per thread
.visible .entry by_level(.param .u64 tex, .param .u64 out, .param .u64 params)
{
  .reg .b32 %r<2>; .reg .f32 %f<8>; .reg .b64 %rd<8>;
  ld.param.u64 %rd7, [tex];
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [params];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 12; add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4]; ld.global.f32 %f2, [%rd4+4]; ld.global.f32 %f7, [%rd4+8];
  tex.level.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [%rd7, {%f1, %f2}], %f7;
  mul.wide.u32 %rd5, %r1, 16; add.s64 %rd6, %rd1, %rd5;
  st.global.v4.f32 [%rd6], {%f3, %f4, %f5, %f6};
  ret;
}

// params: (u, v, dudx, dvdx, dudy, dvdy) per thread
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

.visible .entry query(.param .u64 tex, .param .u64 out)
{
  .reg .b32 %r<4>; .reg .b64 %rd<3>;
  ld.param.u64 %rd2, [tex];
  ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd1, %rd1;
  txq.num_mipmap_levels.b32 %r1, [%rd2];
  txq.width.b32 %r2, [%rd2];
  txq.height.b32 %r3, [%rd2];
  st.global.v2.u32 [%rd1], {%r1, %r2};
  st.global.u32 [%rd1+8], %r3;
  ret;
}
)PTX";

static CUfunction f_level, f_grad, f_query;
static CUdeviceptr d_out, d_params;

static int run(const char *tag, CUfunction f, CUtexObject tex, const float *params,
               int per, int n) {
  float out[64 * 4];
  CK(cuMemcpyHtoD(d_params, params, n * per * 4));
  void *args[] = {&tex, &d_out, &d_params};
  CK(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, 0, args, 0));
  CK(cuMemcpyDtoH(out, d_out, n * 16));
  for (int i = 0; i < n; ++i) {
    printf("%s %d", tag, i);
    for (int k = 0; k < per; ++k) printf(" %.9g", params[i * per + k]);
    printf(" -> %.9g %.9g %.9g %.9g\n", out[4 * i], out[4 * i + 1], out[4 * i + 2],
           out[4 * i + 3]);
  }
  return 0;
}

static int query(const char *tag, CUtexObject tex) {
  unsigned out[3];
  void *args[] = {&tex, &d_out};
  CK(cuLaunchKernel(f_query, 1, 1, 1, 1, 1, 1, 0, 0, args, 0));
  CK(cuMemcpyDtoH(out, d_out, sizeof out));
  printf("%s levels %u width %u height %u\n", tag, out[0], out[1], out[2]);
  return 0;
}

static CUtexObject make(CUmipmappedArray mm, CUarray plain, CUfilter_mode mip, float bias,
                        float lo, float hi) {
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  if (mm) {
    res.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
    res.res.mipmap.hMipmappedArray = mm;
  } else {
    res.resType = CU_RESOURCE_TYPE_ARRAY;
    res.res.array.hArray = plain;
  }
  CUDA_TEXTURE_DESC td;
  memset(&td, 0, sizeof td);
  td.addressMode[0] = td.addressMode[1] = CU_TR_ADDRESS_MODE_CLAMP;
  td.filterMode = CU_TR_FILTER_MODE_POINT;
  td.flags = CU_TRSF_NORMALIZED_COORDINATES;
  td.mipmapFilterMode = mip;
  td.mipmapLevelBias = bias;
  td.minMipmapLevelClamp = lo;
  td.maxMipmapLevelClamp = hi;
  CUtexObject t = 0;
  CUresult r = cuTexObjectCreate(&t, &res, &td, 0);
  if (r != CUDA_SUCCESS) printf("FAIL cuTexObjectCreate = %d\n", (int)r);
  return t;
}

int main() {
  CUmodule mod;
  if (probe_context())
    return 1;
  static char log[8192];
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, (void *)(size_t)sizeof log};
  CK(cuModuleLoadDataEx(&mod, kPtx, 2, opts, vals));
  CK(cuModuleGetFunction(&f_level, mod, "by_level"));
  CK(cuModuleGetFunction(&f_grad, mod, "by_gradient"));
  CUresult found = cuModuleGetFunction(&f_query, mod, "query");
  RC("GetFunction_query", found);
  if (found != CUDA_SUCCESS && log[0]) printf("jit log: %s\n", log);
  CK(cuMemAlloc(&d_out, 64 * 16));
  CK(cuMemAlloc(&d_params, 64 * 24));

  // An 8x8 float array of 4 levels: texel (x, y) of level k is 100 k + x + 10 y.
  CUDA_ARRAY3D_DESCRIPTOR md = {8, 8, 0, CU_AD_FORMAT_FLOAT, 1, 0};
  CUmipmappedArray mm;
  CK(cuMipmappedArrayCreate(&mm, &md, 4));
  for (int k = 0; k < 4; ++k) {
    CUarray level;
    CK(cuMipmappedArrayGetLevel(&level, mm, k));
    int w = 8 >> k;
    float host[64];
    for (int y = 0; y < w; ++y)
      for (int x = 0; x < w; ++x) host[y * w + x] = 100 * k + x + 10 * y;
    CK(copy_to_array(level, host, w * 4, w));
  }
  CUDA_ARRAY_DESCRIPTOR pd = {8, 8, CU_AD_FORMAT_FLOAT, 1};
  CUarray plain;
  CK(cuArrayCreate(&plain, &pd));
  {
    float host[64];
    for (int i = 0; i < 64; ++i) host[i] = 1000 + i;
    // A 2D array copies with cuMemcpy2D; cuMemcpyHtoA takes 1D arrays only.
    RC("MemcpyHtoA_of_2d_array", cuMemcpyHtoA(plain, 0, host, sizeof host));
    CK(copy_to_array(plain, host, 32, 8));
  }

  const float lods[] = {0.3f, 0.6f, 0, 0.3f, 0.6f, 0.4f, 0.3f, 0.6f, 0.6f,
                        0.3f, 0.6f, 1, 0.3f, 0.6f, 1.4f, 0.3f, 0.6f, 2,
                        0.3f, 0.6f, 3, 0.3f, 0.6f, 7, 0.3f, 0.6f, -2,
                        0.3f, 0.6f, 0.5f, 0.3f, 0.6f, 1.5f, 0.3f, 0.6f, 2.25f};
  const int nlods = sizeof lods / sizeof lods[0] / 3;
  const float grads[] = {0.3f, 0.6f, 0.125f, 0, 0, 0.125f,
                         0.3f, 0.6f, 0.25f, 0, 0, 0.125f,
                         0.3f, 0.6f, 0.5f, 0, 0, 0.25f,
                         0.3f, 0.6f, 0, 0.125f, 1, 0,
                         0.3f, 0.6f, 0.0625f, 0, 0, 0.0625f,
                         0.3f, 0.6f, 0.2f, 0.1f, 0.05f, 0.3f,
                         0.3f, 0.6f, 0.35f, 0, 0, 0.1f};
  const int ngrads = sizeof grads / sizeof grads[0] / 6;

  CUtexObject t_point = make(mm, 0, CU_TR_FILTER_MODE_POINT, 0, 0, 3);
  CUtexObject t_bias = make(mm, 0, CU_TR_FILTER_MODE_POINT, 1, 0, 3);
  CUtexObject t_clamp = make(mm, 0, CU_TR_FILTER_MODE_POINT, 0, 1, 2);
  CUtexObject t_noclamp = make(mm, 0, CU_TR_FILTER_MODE_POINT, 0, 0, 0);
  CUtexObject t_linear = make(mm, 0, CU_TR_FILTER_MODE_LINEAR, 0, 0, 3);
  CUtexObject t_plain = make(0, plain, CU_TR_FILTER_MODE_POINT, 0, 0, 0);
  if (!t_point || !t_bias || !t_clamp || !t_noclamp || !t_linear || !t_plain) return 1;
  if (found == CUDA_SUCCESS &&
      (query("query_mipmapped", t_point) || query("query_plain", t_plain)))
    return 1;
  if (run("level_point", f_level, t_point, lods, 3, nlods)) return 1;
  if (run("level_bias1", f_level, t_bias, lods, 3, nlods)) return 1;
  if (run("level_clamp1_2", f_level, t_clamp, lods, 3, nlods)) return 1;
  if (run("level_maxclamp0", f_level, t_noclamp, lods, 3, nlods)) return 1;
  if (run("level_linear", f_level, t_linear, lods, 3, nlods)) return 1;
  if (run("level_plain", f_level, t_plain, lods, 3, nlods)) return 1;
  if (run("grad_point", f_grad, t_point, grads, 6, ngrads)) return 1;
  if (run("grad_linear", f_grad, t_linear, grads, 6, ngrads)) return 1;
  CK(cuTexObjectDestroy(t_point));
  CK(cuTexObjectDestroy(t_bias));
  CK(cuTexObjectDestroy(t_clamp));
  CK(cuTexObjectDestroy(t_noclamp));
  CK(cuTexObjectDestroy(t_linear));
  CK(cuTexObjectDestroy(t_plain));
  CK(cuMipmappedArrayDestroy(mm));
  CK(cuArrayDestroy(plain));
  printf("done\n");
  return 0;
}
