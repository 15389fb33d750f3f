// Independent texture mode: `.texref` and `.samplerref` module variables and
// tex/tld4 with a separate sampler (`[tex, smp, {u, v}]`), txq on samplers,
// in hand-written PTX (cuModuleLoadData); every answer printed one per line.
// Run on an H200 and under zmlir; test/runtime/test_texref.py checks ours.
//   nvcc -arch=sm_75 tools/samplerref_probe.cu -o samplerref_probe -lcuda
// The texture is a 4x4 float array, texel (x, y) = x + 10 y, bound to the
// reference with a LINEAR filter and WRAP addressing of its own, which the
// samplers' settings replace.
//
// NVIDIA's driver (580) refused the module: cuModuleLoadDataEx answered
// CUDA_ERROR_NOT_SUPPORTED with an empty log, although ptxas assembles it.
// So each module is loaded three ways, every answer printed: from PTX
// (cuModuleLoadDataEx), through the linker (cuLink*), and as the cubin
// `ptxas` (where one is on PATH) makes of it; the first that loads is used.
// Small modules first say which part of independent mode a driver refuses.
// A kernel the driver does not find prints its lookup's answer instead.
#include "probe_common.h"

#include <stdlib.h>
#include <unistd.h>

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

// Small modules, each one step further into independent mode (and a
// unified-mode control): which of them a driver loads.
static const char *kSteps[][2] = {
    {"unified_texref", ".version 7.0\n.target sm_75\n.address_size 64\n.global .texref t2;\n"},
    {"independent_plain", ".version 7.0\n.target sm_75, texmode_independent\n"
                          ".address_size 64\n"},
    {"independent_sm90", ".version 7.8\n.target sm_90, texmode_independent\n"
                         ".address_size 64\n"},
    {"independent_texref", ".version 7.0\n.target sm_75, texmode_independent\n"
                           ".address_size 64\n.global .texref t2;\n"},
    {"independent_samplerref", ".version 7.0\n.target sm_75, texmode_independent\n"
                               ".address_size 64\n.global .texref t2;\n"
                               ".global .samplerref s = { filter_mode = nearest };\n"},
};
// The kernel each step's module ends with: it stores 7 (no texture used).
static const char *kStepKernel = R"PTX(
.visible .entry store7(.param .u64 out)
{
  .reg .b32 %r<2>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, 7;
  st.global.u32 [%rd1], %r1;
  ret;
}
)PTX";

// `ptx` loaded by cuModuleLoadDataEx, by cuLink* and cuModuleLoadData of
// its cubin, and as ptxas's cubin, each answer printed ("api WAY_tag
// STATUS"); *mod the first that loaded (the others unloaded), or the
// first failure's answer returned.
static CUresult load(CUmodule *mod, const char *ptx, const char *tag) {
  static char log[8192];
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, (void *)(size_t)sizeof log};
  CUmodule mods[3] = {0, 0, 0};
  CUresult r[3];
  log[0] = 0;
  r[0] = cuModuleLoadDataEx(&mods[0], ptx, 2, opts, vals);
  printf("api ModuleLoadDataEx_%s %d\n", tag, (int)r[0]);
  if (r[0] != CUDA_SUCCESS && log[0]) printf("jit log: %s\n", log);

  log[0] = 0;
  CUlinkState link;
  r[1] = cuLinkCreate(2, opts, vals, &link);
  if (r[1] == CUDA_SUCCESS) {
    r[1] = cuLinkAddData(link, CU_JIT_INPUT_PTX, (void *)ptx, strlen(ptx) + 1, tag, 0, 0, 0);
    void *cubin;
    size_t size;
    if (r[1] == CUDA_SUCCESS) r[1] = cuLinkComplete(link, &cubin, &size);
    if (r[1] == CUDA_SUCCESS) r[1] = cuModuleLoadData(&mods[1], cubin);
    cuLinkDestroy(link);
  }
  printf("api link_%s %d\n", tag, (int)r[1]);
  if (r[1] != CUDA_SUCCESS && log[0]) printf("link log: %s\n", log);

  // ptxas's cubin, for the device's architecture.
  bool assembled = false;
  r[2] = CUDA_ERROR_NOT_FOUND;
  CUdevice dev;
  int major = 0, minor = 0;
  cuCtxGetDevice(&dev);
  cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  char dir[] = "/tmp/samplerref_probe.XXXXXX", cmd[512], path[128];
  if (mkdtemp(dir)) {
    snprintf(path, sizeof path, "%s/m.ptx", dir);
    FILE *out = fopen(path, "w");
    if (out) {
      fputs(ptx, out);
      fclose(out);
      snprintf(cmd, sizeof cmd, "ptxas -arch=sm_%d%d %s/m.ptx -o %s/m.cubin >/dev/null 2>&1",
               major, minor, dir, dir);
      assembled = system(cmd) == 0;
      if (assembled) {
        snprintf(path, sizeof path, "%s/m.cubin", dir);
        FILE *in = fopen(path, "rb");
        static char cubin[1 << 20];
        size_t n = in ? fread(cubin, 1, sizeof cubin, in) : 0;
        if (in) fclose(in);
        r[2] = n ? cuModuleLoadData(&mods[2], cubin) : CUDA_ERROR_FILE_NOT_FOUND;
        unlink(path);
      }
      snprintf(path, sizeof path, "%s/m.ptx", dir);
      unlink(path);
    }
    rmdir(dir);
  }
  if (assembled)
    printf("api ptxas_cubin_%s %d\n", tag, (int)r[2]);
  else
    printf("api ptxas_cubin_%s ptxas_failed\n", tag);

  *mod = 0;
  CUresult first = CUDA_SUCCESS;
  for (int i = 0; i < 3; ++i) {
    if (r[i] == CUDA_SUCCESS && !*mod)
      *mod = mods[i];
    else if (r[i] == CUDA_SUCCESS)
      cuModuleUnload(mods[i]);
    else if (first == CUDA_SUCCESS)
      first = r[i];
  }
  return *mod ? CUDA_SUCCESS : first;
}

static CUdeviceptr d_out, d_params;

static int lookups(CUmodule mod, const char *kind, const char *sampler, const char *tag) {
  char name[64];
  snprintf(name, sizeof name, "%s_%s", kind, sampler);
  CUfunction f;
  CUresult found = cuModuleGetFunction(&f, mod, name);
  if (found != CUDA_SUCCESS) {
    printf("api GetFunction_%s_%s %d\n", name, tag, (int)found);
    return 0;
  }
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
  CUresult found = cuModuleGetFunction(&f, mod, name);
  if (found != CUDA_SUCCESS) {
    printf("api GetFunction_%s_%s %d\n", name, tag, (int)found);
    return 0;
  }
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
// with a linear filter and wrap addressing the samplers override; 1 (the
// refused call printed) where the driver refuses.
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
  CK(cuMemAlloc(&d_out, 64 * 16));
  CK(cuMemAlloc(&d_params, 64 * 8));
  CK(cuMemcpyHtoD(d_params, kCoords, sizeof kCoords));
  size_t size = 1 << 16;
  char *ptx = (char *)malloc(size), *at = ptx;

  // Which part of independent mode loads: each step's module, its kernel run.
  for (unsigned i = 0; i < sizeof kSteps / sizeof kSteps[0]; ++i) {
    snprintf(ptx, size, "%s%s", kSteps[i][1], kStepKernel);
    CUmodule step;
    if (load(&step, ptx, kSteps[i][0]) != CUDA_SUCCESS) continue;
    CUfunction f;
    unsigned seven = 0;
    void *args[] = {&d_out};
    CK(cuModuleGetFunction(&f, step, "store7"));
    CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, args, 0));
    CK(cuMemcpyDtoH(&seven, d_out, sizeof seven));
    printf("step_%s stored %u\n", kSteps[i][0], seven);
    CK(cuModuleUnload(step));
  }

  // The module: the texture, the samplers, their kernels.
  at += snprintf(at, size - (at - ptx), "%s", kHeader);
  for (int s = 0; s < kNumSamplers; ++s)
    at += snprintf(at, size - (at - ptx), ".global .samplerref %s%s%s;\n", kSamplers[s][0],
                   kSamplers[s][1][0] ? " = " : "", kSamplers[s][1]);
  for (int s = 0; s < kNumSamplers; ++s)
    at += snprintf(at, size - (at - ptx), kKernels, kSamplers[s][0]);
  CUmodule mod;
  CUresult loaded = load(&mod, ptx, "samplers");

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
  for (int p = 0; loaded == CUDA_SUCCESS && p < 2; ++p) {
    if (bind(mod, "t2", arr, passes[p].flags)) continue;  // the refusal printed
    for (int s = 0; s < kNumSamplers; ++s)
      if (lookups(mod, "tex", kSamplers[s][0], passes[p].tag) ||
          lookups(mod, "tld4", kSamplers[s][0], passes[p].tag) ||
          query(mod, kSamplers[s][0], passes[p].tag))
        return 1;
  }
  if (loaded == CUDA_SUCCESS) CK(cuModuleUnload(mod));

  // clamp_ogl: NVIDIA's answer, where its module loads (ours does not).
  at = ptx + snprintf(ptx, size, "%s", kOgl);
  snprintf(at, size - (at - ptx), kKernels, "s_ogl");
  CUmodule ogl;
  if (load(&ogl, ptx, "ogl") == CUDA_SUCCESS) {
    if (!bind(ogl, "t2", arr, CU_TRSF_NORMALIZED_COORDINATES) &&
        (lookups(ogl, "tex", "s_ogl", "norm") || query(ogl, "s_ogl", "norm")))
      return 1;
    CK(cuModuleUnload(ogl));
  }
  CK(cuArrayDestroy(arr));
  free(ptx);
  printf("done\n");
  return 0;
}
