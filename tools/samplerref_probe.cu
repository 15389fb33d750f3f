// Independent texture mode: `.texref` and `.samplerref` module variables and
// tex/tld4 with a separate sampler (`[tex, smp, {u, v}]`), txq on samplers,
// in hand-written PTX (cuModuleLoadData); every answer printed one per line.
// Run on an H200 and under zmlir; test/runtime/test_texref.py checks ours.
//   nvcc -arch=sm_75 tools/samplerref_probe.cu -o samplerref_probe -lcuda
// The texture is a 4x4 float array, texel (x, y) = x + 10 y, bound to the
// reference with a LINEAR filter and WRAP addressing of its own, which the
// samplers' settings replace.
#include "probe_common.h"

#include <stdlib.h>

// Samplers: name and initializer.
static const char *kSamplers[][2] = {
    {"s_point", "{ addr_mode_0 = clamp_to_edge, addr_mode_1 = clamp_to_edge, filter_mode = "
                "nearest }"},
    {"s_linear", "{ addr_mode_0 = clamp_to_edge, addr_mode_1 = clamp_to_edge, filter_mode = "
                 "linear }"},
    {"s_wrap", "{ addr_mode_0 = wrap, addr_mode_1 = wrap, filter_mode = nearest }"},
    {"s_mirror", "{ addr_mode_0 = mirror, addr_mode_1 = mirror, filter_mode = nearest }"},
    {"s_border", "{ addr_mode_0 = clamp_to_border, addr_mode_1 = clamp_to_border, "
                 "filter_mode = linear }"},
    {"s_mixed", "{ addr_mode_0 = wrap, addr_mode_1 = clamp_to_border, filter_mode = nearest }"},
    {"s_unnorm", "{ addr_mode_0 = clamp_to_edge, addr_mode_1 = clamp_to_edge, filter_mode = "
                 "linear, force_unnormalized_coords = 1 }"},
    {"s_default", ""},
};
static const int kNumSamplers = sizeof kSamplers / sizeof kSamplers[0];

static const char *kHeader = ".version 7.0\n.target sm_75, texmode_independent\n"
                             ".address_size 64\n.global .texref t2;\n";

// One lookup kernel (tex or tld4.r) and one query kernel per sampler.
static const char *kKernels = R"PTX(
.visible .entry tex_%1$s(.param .u64 out, .param .u64 params)
{
  .reg .b32 %%r<2>; .reg .f32 %%f<8>; .reg .b64 %%rd<8>;
  ld.param.u64 %%rd1, [out]; ld.param.u64 %%rd2, [params];
  mov.u32 %%r1, %%tid.x;
  mul.wide.u32 %%rd3, %%r1, 8; add.s64 %%rd4, %%rd2, %%rd3;
  ld.global.v2.f32 {%%f1, %%f2}, [%%rd4];
  tex.2d.v4.f32.f32 {%%f3, %%f4, %%f5, %%f6}, [t2, %1$s, {%%f1, %%f2}];
  mul.wide.u32 %%rd5, %%r1, 16; add.s64 %%rd6, %%rd1, %%rd5;
  st.global.v4.f32 [%%rd6], {%%f3, %%f4, %%f5, %%f6};
  ret;
}
.visible .entry tld4_%1$s(.param .u64 out, .param .u64 params)
{
  .reg .b32 %%r<2>; .reg .f32 %%f<8>; .reg .b64 %%rd<8>;
  ld.param.u64 %%rd1, [out]; ld.param.u64 %%rd2, [params];
  mov.u32 %%r1, %%tid.x;
  mul.wide.u32 %%rd3, %%r1, 8; add.s64 %%rd4, %%rd2, %%rd3;
  ld.global.v2.f32 {%%f1, %%f2}, [%%rd4];
  tld4.r.2d.v4.f32.f32 {%%f3, %%f4, %%f5, %%f6}, [t2, %1$s, {%%f1, %%f2}];
  mul.wide.u32 %%rd5, %%r1, 16; add.s64 %%rd6, %%rd1, %%rd5;
  st.global.v4.f32 [%%rd6], {%%f3, %%f4, %%f5, %%f6};
  ret;
}
.visible .entry txq_%1$s(.param .u64 out)
{
  .reg .b32 %%r<8>; .reg .b64 %%rd<2>;
  ld.param.u64 %%rd1, [out];
  txq.filter_mode.b32 %%r1, [%1$s];
  txq.addr_mode_0.b32 %%r2, [%1$s];
  txq.addr_mode_1.b32 %%r3, [%1$s];
  txq.force_unnormalized_coords.b32 %%r4, [%1$s];
  txq.width.b32 %%r5, [t2];
  txq.normalized_coords.b32 %%r6, [t2];
  st.global.v4.u32 [%%rd1], {%%r1, %%r2, %%r3, %%r4};
  st.global.v2.u32 [%%rd1+16], {%%r5, %%r6};
  ret;
}
)PTX";

// The OpenGL clamp in a module of its own (zmlir does not compile it).
static const char *kOgl = ".version 7.0\n.target sm_75, texmode_independent\n"
                          ".address_size 64\n.global .texref t2;\n"
                          ".global .samplerref s_ogl = { addr_mode_0 = clamp_ogl, "
                          "addr_mode_1 = clamp_ogl, filter_mode = linear };\n";

static const float kCoords[][2] = {
    {0.3f, 0.6f},  {-0.2f, 0.5f}, {1.3f, 0.1f},  {0.55f, 0.3f}, {0.5f, 0.5f},  {0.01f, 0.99f},
    {1.5f, 2.5f},  {2.2f, 0.7f},  {5.0f, -1.0f}, {3.9f, 3.4f},  {-0.7f, 1.2f}, {0.125f, 0.875f}};
static const int kNumCoords = sizeof kCoords / sizeof kCoords[0];

static CUdeviceptr d_out, d_params;

static int lookups(CUmodule mod, const char *kind, const char *sampler, const char *tag) {
  char name[64];
  snprintf(name, sizeof name, "%s_%s", kind, sampler);
  CUfunction f;
  CK(cuModuleGetFunction(&f, mod, name));
  void *args[] = {&d_out, &d_params};
  CK(cuLaunchKernel(f, 1, 1, 1, kNumCoords, 1, 1, 0, 0, args, 0));
  float out[64 * 4];
  CK(cuMemcpyDtoH(out, d_out, kNumCoords * 16));
  for (int i = 0; i < kNumCoords; ++i)
    printf("%s_%s_%s %d %.9g %.9g -> %.9g %.9g %.9g %.9g\n", kind, sampler, tag, i,
           kCoords[i][0], kCoords[i][1], out[4 * i], out[4 * i + 1], out[4 * i + 2],
           out[4 * i + 3]);
  return 0;
}

static int query(CUmodule mod, const char *sampler, const char *tag) {
  char name[64];
  snprintf(name, sizeof name, "txq_%s", sampler);
  CUfunction f;
  CK(cuModuleGetFunction(&f, mod, name));
  void *args[] = {&d_out};
  CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, args, 0));
  unsigned out[6];
  CK(cuMemcpyDtoH(out, d_out, sizeof out));
  printf("txq_%s_%s filter %u addr0 %u addr1 %u force_unnormalized %u tex_width %u "
         "tex_normalized %u\n",
         sampler, tag, out[0], out[1], out[2], out[3], out[4], out[5]);
  return 0;
}

// Binds the 4x4 array to `name` of `mod`, normalized coordinates or not,
// with a linear filter and wrap addressing the samplers override.
static int bind(CUmodule mod, const char *name, CUarray arr, unsigned flags) {
  CUtexref ref;
  CK(cuModuleGetTexRef(&ref, mod, name));
  CK(cuTexRefSetArray(ref, arr, CU_TRSA_OVERRIDE_FORMAT));
  CK(cuTexRefSetFormat(ref, CU_AD_FORMAT_FLOAT, 1));
  CK(cuTexRefSetFilterMode(ref, CU_TR_FILTER_MODE_LINEAR));
  CK(cuTexRefSetAddressMode(ref, 0, CU_TR_ADDRESS_MODE_WRAP));
  CK(cuTexRefSetAddressMode(ref, 1, CU_TR_ADDRESS_MODE_WRAP));
  CK(cuTexRefSetFlags(ref, flags));
  return 0;
}

int main() {
  if (probe_context())
    return 1;
  // The module: the texture, the samplers, their kernels.
  size_t size = 1 << 16;
  char *ptx = (char *)malloc(size), *at = ptx;
  at += snprintf(at, size - (at - ptx), "%s", kHeader);
  for (int s = 0; s < kNumSamplers; ++s)
    at += snprintf(at, size - (at - ptx), ".global .samplerref %s%s%s;\n", kSamplers[s][0],
                   kSamplers[s][1][0] ? " = " : "", kSamplers[s][1]);
  for (int s = 0; s < kNumSamplers; ++s)
    at += snprintf(at, size - (at - ptx), kKernels, kSamplers[s][0]);
  static char log[8192];
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, (void *)(size_t)sizeof log};
  CUmodule mod;
  CUresult loaded = cuModuleLoadDataEx(&mod, ptx, 2, opts, vals);
  RC("load_samplers", loaded);
  if (loaded != CUDA_SUCCESS) {
    printf("jit log: %s\n", log);
    return 1;
  }
  CK(cuMemAlloc(&d_out, 64 * 16));
  CK(cuMemAlloc(&d_params, 64 * 8));
  CK(cuMemcpyHtoD(d_params, kCoords, sizeof kCoords));

  CUDA_ARRAY_DESCRIPTOR ad = {4, 4, CU_AD_FORMAT_FLOAT, 1};
  CUarray arr;
  CK(cuArrayCreate(&arr, &ad));
  float host[16];
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) host[4 * y + x] = x + 10 * y;
  CK(copy_to_array(arr, host, 16, 4));

  const struct {
    const char *tag;
    unsigned flags;
  } passes[] = {{"norm", CU_TRSF_NORMALIZED_COORDINATES}, {"unnorm", 0}};
  for (int p = 0; p < 2; ++p) {
    if (bind(mod, "t2", arr, passes[p].flags)) return 1;
    for (int s = 0; s < kNumSamplers; ++s)
      if (lookups(mod, "tex", kSamplers[s][0], passes[p].tag) ||
          lookups(mod, "tld4", kSamplers[s][0], passes[p].tag) ||
          query(mod, kSamplers[s][0], passes[p].tag))
        return 1;
  }

  // clamp_ogl: NVIDIA's answer, where its module loads (ours does not).
  at = ptx + snprintf(ptx, size, "%s", kOgl);
  snprintf(at, size - (at - ptx), kKernels, "s_ogl");
  CUmodule ogl;
  CUresult ogl_loaded = cuModuleLoadData(&ogl, ptx);
  if (ogl_loaded == CUDA_SUCCESS) {
    if (bind(ogl, "t2", arr, CU_TRSF_NORMALIZED_COORDINATES) ||
        lookups(ogl, "tex", "s_ogl", "norm") || query(ogl, "s_ogl", "norm"))
      return 1;
    CK(cuModuleUnload(ogl));
  }
  CK(cuModuleUnload(mod));
  CK(cuArrayDestroy(arr));
  free(ptx);
  printf("done\n");
  return 0;
}
