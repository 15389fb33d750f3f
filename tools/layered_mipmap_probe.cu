// Layered and cube-map mipmapped arrays through texture objects: tex.level
// on .a1d, .a2d, .cube and .acube and tex.grad on .a2d, in hand-written PTX
// (cuModuleLoadData), every lookup printed one per line. Run on an H200 and
// under zmlir; test/runtime/test_texref.py checks ours.
//   nvcc -arch=sm_75 tools/layered_mipmap_probe.cu -o layered_mipmap_probe -lcuda
// Texel (x, y) of layer (or face, or cube array face) l at level k holds
// 1000 l + 100 k + x + 10 y.
#include "probe_common.h"

static const char *kPtx = R"PTX(
.version 7.0
.target sm_75
.address_size 64

// Each thread reads params[8 * tid ...]: (layer, x, y, z, lod) for .level
// (a geometry's unused coordinates 0), (layer, u, v, dudx, dvdx, dudy, dvdy)
// for .grad; the layer as a float.
.visible .entry level_a1d(.param .u64 tex, .param .u64 out, .param .u64 params)
{
  .reg .b32 %r<4>; .reg .f32 %f<12>; .reg .b64 %rd<8>;
  ld.param.u64 %rd7, [tex]; ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [params];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 32; add.s64 %rd4, %rd2, %rd3;
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4]; ld.global.f32 %f5, [%rd4+16];
  cvt.rzi.u32.f32 %r2, %f1;
  tex.level.a1d.v4.f32.f32 {%f6, %f7, %f8, %f9}, [%rd7, {%r2, %f2}], %f5;
  mul.wide.u32 %rd5, %r1, 16; add.s64 %rd6, %rd1, %rd5;
  st.global.v4.f32 [%rd6], {%f6, %f7, %f8, %f9};
  ret;
}

.visible .entry level_a2d(.param .u64 tex, .param .u64 out, .param .u64 params)
{
  .reg .b32 %r<4>; .reg .f32 %f<12>; .reg .b64 %rd<8>;
  ld.param.u64 %rd7, [tex]; ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [params];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 32; add.s64 %rd4, %rd2, %rd3;
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4]; ld.global.f32 %f5, [%rd4+16];
  cvt.rzi.u32.f32 %r2, %f1;
  tex.level.a2d.v4.f32.f32 {%f6, %f7, %f8, %f9}, [%rd7, {%r2, %f2, %f3, %f3}], %f5;
  mul.wide.u32 %rd5, %r1, 16; add.s64 %rd6, %rd1, %rd5;
  st.global.v4.f32 [%rd6], {%f6, %f7, %f8, %f9};
  ret;
}

.visible .entry level_cube(.param .u64 tex, .param .u64 out, .param .u64 params)
{
  .reg .b32 %r<4>; .reg .f32 %f<12>; .reg .b64 %rd<8>;
  ld.param.u64 %rd7, [tex]; ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [params];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 32; add.s64 %rd4, %rd2, %rd3;
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4]; ld.global.f32 %f5, [%rd4+16];
  tex.level.cube.v4.f32.f32 {%f6, %f7, %f8, %f9}, [%rd7, {%f2, %f3, %f4, %f4}], %f5;
  mul.wide.u32 %rd5, %r1, 16; add.s64 %rd6, %rd1, %rd5;
  st.global.v4.f32 [%rd6], {%f6, %f7, %f8, %f9};
  ret;
}

.visible .entry level_acube(.param .u64 tex, .param .u64 out, .param .u64 params)
{
  .reg .b32 %r<4>; .reg .f32 %f<12>; .reg .b64 %rd<8>;
  ld.param.u64 %rd7, [tex]; ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [params];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 32; add.s64 %rd4, %rd2, %rd3;
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4]; ld.global.f32 %f5, [%rd4+16];
  cvt.rzi.u32.f32 %r2, %f1;
  tex.level.acube.v4.f32.f32 {%f6, %f7, %f8, %f9}, [%rd7, {%r2, %f2, %f3, %f4}], %f5;
  mul.wide.u32 %rd5, %r1, 16; add.s64 %rd6, %rd1, %rd5;
  st.global.v4.f32 [%rd6], {%f6, %f7, %f8, %f9};
  ret;
}

.visible .entry grad_a2d(.param .u64 tex, .param .u64 out, .param .u64 params)
{
  .reg .b32 %r<4>; .reg .f32 %f<16>; .reg .b64 %rd<8>;
  ld.param.u64 %rd7, [tex]; ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [params];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 32; add.s64 %rd4, %rd2, %rd3;
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];
  ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd4+16];
  cvt.rzi.u32.f32 %r2, %f1;
  tex.grad.a2d.v4.f32.f32 {%f10, %f11, %f12, %f13}, [%rd7, {%r2, %f2, %f3, %f3}],
      {%f4, %f5}, {%f6, %f7};
  mul.wide.u32 %rd5, %r1, 16; add.s64 %rd6, %rd1, %rd5;
  st.global.v4.f32 [%rd6], {%f10, %f11, %f12, %f13};
  ret;
}
)PTX";

// txq on each texture: one kernel per attribute, in a module of its own.
// NVIDIA's driver (580) finds no kernel that asks txq.array_size or
// txq.num_mipmap_levels (cuModuleGetFunction: CUDA_ERROR_NOT_FOUND; ptxas
// leaves those a relocation against the undefined
// `.nv.unified.texrefDescSize`), so each lookup is printed, in the module
// cuModuleLoadDataEx gives and in the one cuLink* gives, and an attribute
// with neither prints "-" for its value.
static const char *kQueryHeader = ".version 7.0\n.target sm_75\n.address_size 64\n";
static const char *kQueryKernel = R"PTX(
.visible .entry txq_%1$s(.param .u64 tex, .param .u64 out)
{
  .reg .b32 %%r<2>; .reg .b64 %%rd<3>;
  ld.param.u64 %%rd2, [tex]; ld.param.u64 %%rd1, [out];
  txq.%1$s.b32 %%r1, [%%rd2];
  st.global.u32 [%%rd1], %%r1;
  ret;
}
)PTX";
static const char *kAttributes[] = {"width", "height", "depth", "array_size",
                                    "num_mipmap_levels"};
enum { kNumAttributes = sizeof kAttributes / sizeof kAttributes[0] };

// tex.grad on a cube map, in a module of its own (a driver that does not
// compile it prints grad_cube_usable 0); docs/textures.md gives the rule.
// Each thread reads params[12 * tid ...]: x, y, z, the x gradient, the y one.
static const char *kCubeGradPtx = R"PTX(
.version 7.0
.target sm_75
.address_size 64
.visible .entry grad_cube(.param .u64 tex, .param .u64 out, .param .u64 params)
{
  .reg .b32 %r<2>; .reg .f32 %f<16>; .reg .b64 %rd<8>;
  ld.param.u64 %rd7, [tex]; ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [params];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 48; add.s64 %rd4, %rd2, %rd3;
  ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];
  ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd4+16];
  ld.global.v4.f32 {%f9, %f10, %f11, %f12}, [%rd4+32];
  tex.grad.cube.v4.f32.f32 {%f13, %f14, %f15, %f0}, [%rd7, {%f1, %f2, %f3, %f3}],
      {%f4, %f5, %f6, %f6}, {%f7, %f8, %f9, %f9};
  mul.wide.u32 %rd5, %r1, 16; add.s64 %rd6, %rd1, %rd5;
  st.global.v4.f32 [%rd6], {%f13, %f14, %f15, %f0};
  ret;
}
)PTX";

static CUfunction f_query[kNumAttributes];  // 0 where neither module has the kernel
static CUdeviceptr d_out, d_params;

static int query(const char *tag, CUtexObject tex) {
  for (int a = 0; a < kNumAttributes; ++a) {
    if (!f_query[a]) {
      printf("query_%s %s -\n", tag, kAttributes[a]);
      continue;
    }
    unsigned out;
    void *args[] = {&tex, &d_out};
    CK(cuLaunchKernel(f_query[a], 1, 1, 1, 1, 1, 1, 0, 0, args, 0));
    CK(cuMemcpyDtoH(&out, d_out, sizeof out));
    printf("query_%s %s %u\n", tag, kAttributes[a], out);
  }
  return 0;
}

// `ptx` linked by cuLink* into a cubin, loaded (the log printed on failure).
static CUresult load_linked(CUmodule *mod, const char *ptx) {
  static char log[8192];
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, (void *)(size_t)sizeof log};
  CUlinkState link;
  CUresult r = cuLinkCreate(2, opts, vals, &link);
  if (r != CUDA_SUCCESS) return r;
  r = cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, "txq", 0, 0, 0);
  void *cubin;
  size_t size;
  if (r == CUDA_SUCCESS) r = cuLinkComplete(link, &cubin, &size);
  if (r == CUDA_SUCCESS) r = cuModuleLoadData(mod, cubin);
  if (r != CUDA_SUCCESS && log[0]) printf("link log: %s\n", log);
  cuLinkDestroy(link);
  return r;
}

// The query kernels, each looked up in both modules; the answers printed.
static int load_queries() {
  static char ptx[1 << 13];
  char *at = ptx + snprintf(ptx, sizeof ptx, "%s", kQueryHeader);
  for (int a = 0; a < kNumAttributes; ++a)
    at += snprintf(at, sizeof ptx - (at - ptx), kQueryKernel, kAttributes[a]);
  static char log[8192];
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, (void *)(size_t)sizeof log};
  CUmodule mod, linked;
  CUresult loaded = cuModuleLoadDataEx(&mod, ptx, 2, opts, vals);
  RC("ModuleLoadDataEx_query", loaded);
  if (loaded != CUDA_SUCCESS && log[0]) printf("jit log: %s\n", log);
  CUresult link_loaded = load_linked(&linked, ptx);
  RC("link_ModuleLoadData_query", link_loaded);
  for (int a = 0; a < kNumAttributes; ++a) {
    char name[64];
    snprintf(name, sizeof name, "txq_%s", kAttributes[a]);
    CUfunction direct = 0, via_link = 0;
    CUresult r1 = loaded == CUDA_SUCCESS ? cuModuleGetFunction(&direct, mod, name) : loaded;
    CUresult r2 =
        link_loaded == CUDA_SUCCESS ? cuModuleGetFunction(&via_link, linked, name) : link_loaded;
    printf("api GetFunction_%s %d link %d\n", name, (int)r1, (int)r2);
    f_query[a] = r1 == CUDA_SUCCESS ? direct : r2 == CUDA_SUCCESS ? via_link : 0;
  }
  return 0;
}

// A texture object of the plain (not mipmapped) `width` x `height` x
// `depth` float array of `flags`.
static CUtexObject plain_texture(CUarray *arr, int width, int height, int depth, unsigned flags) {
  CUDA_ARRAY3D_DESCRIPTOR d = {(size_t)width, (size_t)height, (size_t)depth, CU_AD_FORMAT_FLOAT,
                               1, flags};
  CUtexObject t = 0;
  if (cuArray3DCreate(arr, &d) != CUDA_SUCCESS) return 0;
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_ARRAY;
  res.res.array.hArray = *arr;
  CUDA_TEXTURE_DESC td;
  memset(&td, 0, sizeof td);
  if (cuTexObjectCreate(&t, &res, &td, 0) != CUDA_SUCCESS) return 0;
  return t;
}

static CUfunction f_a1d, f_a2d, f_cube, f_acube, f_grad;

// Runs `f` on `n` rows of `per` values, value k in params slot slots[k],
// printing each row and its result.
static int run(const char *tag, CUfunction f, CUtexObject tex, const float *rows, int per,
               int n, const int *slots) {
  float params[64 * 8], out[64 * 4];
  memset(params, 0, sizeof params);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < per; ++k) params[8 * i + slots[k]] = rows[per * i + k];
  CK(cuMemcpyHtoD(d_params, params, sizeof params));
  void *args[] = {&tex, &d_out, &d_params};
  CK(cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, 0, args, 0));
  CK(cuMemcpyDtoH(out, d_out, n * 16));
  for (int i = 0; i < n; ++i) {
    printf("%s %d", tag, i);
    for (int k = 0; k < per; ++k) printf(" %.9g", rows[i * per + k]);
    printf(" -> %.9g %.9g %.9g %.9g\n", out[4 * i], out[4 * i + 1], out[4 * i + 2],
           out[4 * i + 3]);
  }
  return 0;
}

// A mipmapped float array of `levels` levels, `width` x `height` (0: 1D)
// texels of `layers` layers (`flags`: LAYERED and/or CUBEMAP), filled as the
// header says.
static int make_array(CUmipmappedArray *mm, int width, int height, int layers, int levels,
                      unsigned flags) {
  CUDA_ARRAY3D_DESCRIPTOR d = {(size_t)width, (size_t)height, (size_t)layers, CU_AD_FORMAT_FLOAT,
                               1, flags};
  CK(cuMipmappedArrayCreate(mm, &d, levels));
  for (int k = 0; k < levels; ++k) {
    CUarray level;
    CK(cuMipmappedArrayGetLevel(&level, *mm, k));
    int w = width >> k, h = height ? height >> k : 1;
    if (w < 1) w = 1;
    if (h < 1) h = 1;
    static float host[64 * 64 * 12];
    for (int l = 0; l < layers; ++l)
      for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) host[(l * h + y) * w + x] = 1000 * l + 100 * k + x + 10 * y;
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_HOST;
    c.srcHost = host;
    c.srcPitch = w * 4;
    c.srcHeight = h;
    c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
    c.dstArray = level;
    c.WidthInBytes = w * 4;
    c.Height = h;
    c.Depth = layers;
    CK(cuMemcpy3D(&c));
  }
  return 0;
}

static CUtexObject make(CUmipmappedArray mm, CUfilter_mode filter, CUfilter_mode mip) {
  CUDA_RESOURCE_DESC res;
  memset(&res, 0, sizeof res);
  res.resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
  res.res.mipmap.hMipmappedArray = mm;
  CUDA_TEXTURE_DESC td;
  memset(&td, 0, sizeof td);
  td.addressMode[0] = td.addressMode[1] = td.addressMode[2] = CU_TR_ADDRESS_MODE_CLAMP;
  td.filterMode = filter;
  td.flags = CU_TRSF_NORMALIZED_COORDINATES;
  td.mipmapFilterMode = mip;
  td.maxMipmapLevelClamp = 16;
  CUtexObject t = 0;
  CUresult r = cuTexObjectCreate(&t, &res, &td, 0);
  if (r != CUDA_SUCCESS) printf("FAIL cuTexObjectCreate = %d\n", (int)r);
  return t;
}

int main() {
  CUmodule mod;
  if (probe_context())
    return 1;
  CK(cuModuleLoadData(&mod, kPtx));
  CK(cuModuleGetFunction(&f_a1d, mod, "level_a1d"));
  CK(cuModuleGetFunction(&f_a2d, mod, "level_a2d"));
  CK(cuModuleGetFunction(&f_cube, mod, "level_cube"));
  CK(cuModuleGetFunction(&f_acube, mod, "level_acube"));
  CK(cuModuleGetFunction(&f_grad, mod, "grad_a2d"));
  if (load_queries()) return 1;
  CK(cuMemAlloc(&d_out, 64 * 16));
  CK(cuMemAlloc(&d_params, 64 * 32));

  CUmipmappedArray a1d, a2d, cube, acube;
  if (make_array(&a1d, 16, 0, 2, 5, CUDA_ARRAY3D_LAYERED) ||
      make_array(&a2d, 8, 8, 3, 4, CUDA_ARRAY3D_LAYERED) ||
      make_array(&cube, 8, 8, 6, 4, CUDA_ARRAY3D_CUBEMAP) ||
      make_array(&acube, 4, 4, 12, 3, CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED))
    return 1;
  {
    CUarray level;
    CUDA_ARRAY3D_DESCRIPTOR d;
    CK(cuMipmappedArrayGetLevel(&level, acube, 2));
    CK(cuArray3DGetDescriptor(&d, level));
    printf("acube_level2 %zu %zu %zu flags %u\n", d.Width, d.Height, d.Depth, d.Flags);
    RC("GetLevel_acube_3", cuMipmappedArrayGetLevel(&level, acube, 3));
  }

  // (layer, u, lod)
  const float a1d_rows[] = {0, 0.3f, 0,  1, 0.3f, 0,   1, 0.3f, 1,   0, 0.7f, 2,
                            1, 0.9f, 3,  1, 0.9f, 4,   1, 0.9f, 9,   0, 0.1f, 1.4f,
                            1, 0.6f, 0.6f, 5, 0.6f, 1, 1, 0.6f, -1};
  // (layer, u, v, lod)
  const float a2d_rows[] = {0, 0.3f, 0.6f, 0,   1, 0.3f, 0.6f, 0,   2, 0.3f, 0.6f, 1,
                            2, 0.8f, 0.1f, 2,   1, 0.8f, 0.1f, 3,   1, 0.8f, 0.1f, 7,
                            0, 0.3f, 0.6f, 1.6f, 7, 0.3f, 0.6f, 1,  2, 0.45f, 0.95f, 0.5f};
  // (unused, x, y, z, lod): each face, at several levels
  const float cube_rows[] = {0, 1, 0.3f, -0.6f, 0,     0, -1, 0.3f, -0.6f, 1,
                             0, 0.2f, 1, 0.7f, 2,      0, 0.2f, -1, 0.7f, 3,
                             0, 0.2f, 0.5f, 1, 0,      0, -0.6f, 0.5f, -1, 1,
                             0, 0.9f, -0.1f, 0.4f, 1.4f, 0, 0.5f, 0.5f, -1, 9,
                             0, 1, -0.9f, 0.9f, 0.6f};
  // (cube, x, y, z, lod)
  const float acube_rows[] = {0, 1, 0.3f, -0.6f, 0,    1, 1, 0.3f, -0.6f, 0,
                              1, -0.2f, -1, 0.7f, 1,   1, 0.2f, 0.5f, 1, 2,
                              0, -0.6f, 0.5f, -1, 1,   3, 0.2f, 0.5f, -1, 0};
  // (layer, u, v, dudx, dvdx, dudy, dvdy) on 8x8 levels
  const float grad_rows[] = {1, 0.3f, 0.6f, 0.125f, 0, 0, 0.125f,
                             2, 0.3f, 0.6f, 0.25f, 0, 0, 0.25f,
                             0, 0.8f, 0.1f, 0.5f, 0, 0, 0.5f,
                             1, 0.8f, 0.1f, 0, 0.0625f, 0.0625f, 0};

  CUtexObject t_a1d = make(a1d, CU_TR_FILTER_MODE_POINT, CU_TR_FILTER_MODE_POINT);
  CUtexObject t_a2d = make(a2d, CU_TR_FILTER_MODE_POINT, CU_TR_FILTER_MODE_POINT);
  CUtexObject t_a2d_linear = make(a2d, CU_TR_FILTER_MODE_POINT, CU_TR_FILTER_MODE_LINEAR);
  CUtexObject t_cube = make(cube, CU_TR_FILTER_MODE_POINT, CU_TR_FILTER_MODE_POINT);
  CUtexObject t_cube_linear = make(cube, CU_TR_FILTER_MODE_POINT, CU_TR_FILTER_MODE_LINEAR);
  CUtexObject t_acube = make(acube, CU_TR_FILTER_MODE_POINT, CU_TR_FILTER_MODE_POINT);
  if (!t_a1d || !t_a2d || !t_a2d_linear || !t_cube || !t_cube_linear || !t_acube) return 1;
  const int a1d_slots[] = {0, 1, 4}, a2d_slots[] = {0, 1, 2, 4}, all[] = {0, 1, 2, 3, 4, 5, 6};
  if (run("level_a1d", f_a1d, t_a1d, a1d_rows, 3, sizeof a1d_rows / sizeof(float) / 3,
          a1d_slots) ||
      run("level_a2d", f_a2d, t_a2d, a2d_rows, 4, sizeof a2d_rows / sizeof(float) / 4,
          a2d_slots) ||
      run("level_a2d_mip_linear", f_a2d, t_a2d_linear, a2d_rows, 4,
          sizeof a2d_rows / sizeof(float) / 4, a2d_slots) ||
      run("level_cube", f_cube, t_cube, cube_rows, 5, sizeof cube_rows / sizeof(float) / 5,
          all) ||
      run("level_cube_mip_linear", f_cube, t_cube_linear, cube_rows, 5,
          sizeof cube_rows / sizeof(float) / 5, all) ||
      run("level_acube", f_acube, t_acube, acube_rows, 5, sizeof acube_rows / sizeof(float) / 5,
          all) ||
      run("grad_a2d", f_grad, t_a2d, grad_rows, 7, sizeof grad_rows / sizeof(float) / 7, all))
    return 1;
  // tex.grad on the cube map (mip linear): where a module of it loads.
  {
    CUmodule grad_mod = 0;
    CUfunction f_grad_cube = 0;
    CUresult loaded = cuModuleLoadData(&grad_mod, kCubeGradPtx);
    RC("ModuleLoadData_grad_cube", loaded);
    if (loaded != CUDA_SUCCESS) grad_mod = 0;
    bool usable = loaded == CUDA_SUCCESS &&
                  cuModuleGetFunction(&f_grad_cube, grad_mod, "grad_cube") == CUDA_SUCCESS;
    printf("grad_cube_usable %d\n", usable ? 1 : 0);
    if (usable) {
      // (x, y, z, dx, dy): on +x and +z, gradients along each face axis
      // and the major axis, of 1/8 to 1 of the face (8 texels at level 0).
      const float rows[][9] = {
          {1, 0.3f, -0.6f, 0, 0.25f, 0, 0, 0, 0.25f},   {1, 0.3f, -0.6f, 0, 0.5f, 0, 0, 0, 0.5f},
          {1, 0.3f, -0.6f, 0, 1, 0, 0, 0, 1},           {1, 0.3f, -0.6f, 0, 0.125f, 0, 0, 0, 0.5f},
          {1, 0.3f, -0.6f, 0.5f, 0, 0, 0, 0, 0},        {1, 0.3f, -0.6f, 0.5f, 0.5f, 0, 0, 0, 0},
          {2, 0.6f, -1.2f, 0, 0.5f, 0, 0, 0, 0.5f},     {1, 0, 0, 0, 0.25f, 0, 0, 0, 0.25f},
          {0.2f, 0.5f, 1, 0.25f, 0, 0, 0, 0.25f, 0},   {0.2f, 0.5f, 1, 0.5f, 0, 0, 0, 0.5f, 0},
          {0.2f, 0.5f, 1, 0.25f, 0, 0.1f, 0, 0.25f, 0}, {-0.6f, 0.5f, -1, 0.5f, 0.5f, 0, 0, 0, 0.5f}};
      const int n = sizeof rows / sizeof rows[0];
      float params[64 * 12], out[64 * 4];
      memset(params, 0, sizeof params);
      for (int i = 0; i < n; ++i)
        for (int k = 0; k < 9; ++k) params[12 * i + k] = rows[i][k];
      CUdeviceptr d_rows;
      CK(cuMemAlloc(&d_rows, sizeof params));
      CK(cuMemcpyHtoD(d_rows, params, sizeof params));
      void *args[] = {&t_cube_linear, &d_out, &d_rows};
      CK(cuLaunchKernel(f_grad_cube, 1, 1, 1, n, 1, 1, 0, 0, args, 0));
      CK(cuMemcpyDtoH(out, d_out, n * 16));
      for (int i = 0; i < n; ++i) {
        printf("grad_cube %d", i);
        for (int k = 0; k < 9; ++k) printf(" %.9g", rows[i][k]);
        printf(" -> %.9g %.9g %.9g %.9g\n", out[4 * i], out[4 * i + 1], out[4 * i + 2],
               out[4 * i + 3]);
      }
      CK(cuMemFree(d_rows));
    }
    if (grad_mod) CK(cuModuleUnload(grad_mod));
  }
  if (query("mipmapped_a1d", t_a1d) || query("mipmapped_a2d", t_a2d) ||
      query("mipmapped_cube", t_cube) || query("mipmapped_acube", t_acube))
    return 1;
  // Plain arrays: 2D, 3D, layered 1D and 2D, cube map, cube-map array.
  const struct {
    const char *tag;
    int w, h, d;
    unsigned flags;
  } plain[] = {{"2d", 8, 4, 0, 0},
               {"3d", 4, 4, 3, 0},
               {"a1d", 8, 0, 2, CUDA_ARRAY3D_LAYERED},
               {"a2d", 4, 4, 3, CUDA_ARRAY3D_LAYERED},
               {"cube", 4, 4, 6, CUDA_ARRAY3D_CUBEMAP},
               {"acube", 4, 4, 12, CUDA_ARRAY3D_CUBEMAP | CUDA_ARRAY3D_LAYERED}};
  for (int i = 0; i < 6; ++i) {
    CUarray arr;
    CUtexObject t = plain_texture(&arr, plain[i].w, plain[i].h, plain[i].d, plain[i].flags);
    if (!t) {
      printf("FAIL plain texture %s\n", plain[i].tag);
      return 1;
    }
    if (query(plain[i].tag, t)) return 1;
    CK(cuTexObjectDestroy(t));
    CK(cuArrayDestroy(arr));
  }
  CK(cuTexObjectDestroy(t_a1d));
  CK(cuTexObjectDestroy(t_a2d));
  CK(cuTexObjectDestroy(t_a2d_linear));
  CK(cuTexObjectDestroy(t_cube));
  CK(cuTexObjectDestroy(t_cube_linear));
  CK(cuTexObjectDestroy(t_acube));
  CK(cuMipmappedArrayDestroy(a1d));
  CK(cuMipmappedArrayDestroy(a2d));
  CK(cuMipmappedArrayDestroy(cube));
  CK(cuMipmappedArrayDestroy(acube));
  printf("done\n");
  return 0;
}
