// txq on texture objects: which numbers NVIDIA answers for each attribute.
// The PTX ISA gives txq.addr_mode_N "an integer from enum { wrap, mirror,
// clamp_ogl, clamp_to_edge, clamp_to_border }" and channel_data_type and
// channel_order "the source language's" enums; zmlir answers CUDA's own
// (CU_TR_ADDRESS_MODE, CUarray_format, the channel count). Hand-written
// PTX, one kernel per attribute, every answer printed one per line.
// NVIDIA's driver (580) loads such a module but finds no kernel whose txq
// asks more than the geometry (width, height, depth): cuModuleGetFunction
// answers CUDA_ERROR_NOT_FOUND. Those are the kernels ptxas leaves a
// relocation against the undefined `.nv.unified.texrefDescSize`.
// So each attribute's lookup is printed, in the module cuModuleLoadDataEx
// gives and in the one the linker (cuLink*) gives, and an attribute with
// neither prints "-" for its value.
//   nvcc -arch=sm_75 tools/txq_probe.cu -o txq_probe -lcuda
#include "probe_common.h"

static const char *kHeader = ".version 7.0\n.target sm_75\n.address_size 64\n";
static const char *kKernel = R"PTX(
.visible .entry txq_%1$s(.param .u64 tex, .param .u64 out)
{
  .reg .b32 %%r<2>; .reg .b64 %%rd<3>;
  ld.param.u64 %%rd2, [tex]; ld.param.u64 %%rd1, [out];
  txq.%1$s.b32 %%r1, [%%rd2];
  st.global.u32 [%%rd1], %%r1;
  ret;
}
)PTX";
static const char *kAttributes[] = {"width",         "height",           "depth",
                                    "channel_data_type", "channel_order", "normalized_coords",
                                    "filter_mode",   "addr_mode_0",      "addr_mode_1",
                                    "addr_mode_2",   "array_size"};
enum { kNumAttributes = sizeof kAttributes / sizeof kAttributes[0] };

static CUfunction f[kNumAttributes];  // 0 where neither module has the kernel
static CUdeviceptr d_out;

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

static int query(const char *tag, CUtexObject t) {
  for (int a = 0; a < kNumAttributes; ++a) {
    if (!f[a]) {
      printf("%s %s -\n", tag, kAttributes[a]);
      continue;
    }
    unsigned out;
    void *args[] = {&t, &d_out};
    CK(cuLaunchKernel(f[a], 1, 1, 1, 1, 1, 1, 0, 0, args, 0));
    CK(cuMemcpyDtoH(&out, d_out, sizeof out));
    printf("%s %s %u\n", tag, kAttributes[a], out);
  }
  return 0;
}

int main() {
  CUmodule mod;
  if (probe_context()) return 1;
  static char ptx[1 << 14];
  char *at = ptx + snprintf(ptx, sizeof ptx, "%s", kHeader);
  for (int a = 0; a < kNumAttributes; ++a)
    at += snprintf(at, sizeof ptx - (at - ptx), kKernel, kAttributes[a]);
  static char log[8192];
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[] = {log, (void *)(size_t)sizeof log};
  CUresult loaded = cuModuleLoadDataEx(&mod, ptx, 2, opts, vals);
  RC("ModuleLoadDataEx", loaded);
  if (loaded != CUDA_SUCCESS && log[0]) printf("jit log: %s\n", log);
  CUmodule linked;
  CUresult link_loaded = load_linked(&linked, ptx);
  RC("link_ModuleLoadData", link_loaded);
  for (int a = 0; a < kNumAttributes; ++a) {
    char name[64];
    snprintf(name, sizeof name, "txq_%s", kAttributes[a]);
    CUfunction direct = 0, via_link = 0;
    CUresult r1 = loaded == CUDA_SUCCESS ? cuModuleGetFunction(&direct, mod, name) : loaded;
    CUresult r2 =
        link_loaded == CUDA_SUCCESS ? cuModuleGetFunction(&via_link, linked, name) : link_loaded;
    printf("api GetFunction_%s %d link %d\n", name, (int)r1, (int)r2);
    f[a] = r1 == CUDA_SUCCESS ? direct : r2 == CUDA_SUCCESS ? via_link : 0;
  }
  CK(cuMemAlloc(&d_out, 64));
  const struct {
    const char *name;
    CUarray_format format;
    unsigned channels;
  } formats[] = {{"float1", CU_AD_FORMAT_FLOAT, 1},         {"float4", CU_AD_FORMAT_FLOAT, 4},
                 {"uchar4", CU_AD_FORMAT_UNSIGNED_INT8, 4}, {"char2", CU_AD_FORMAT_SIGNED_INT8, 2},
                 {"ushort1", CU_AD_FORMAT_UNSIGNED_INT16, 1}, {"half2", CU_AD_FORMAT_HALF, 2},
                 {"int1", CU_AD_FORMAT_SIGNED_INT32, 1}};
  const char *modes[] = {"wrap", "clamp", "mirror", "border"};
  for (unsigned fi = 0; fi < sizeof formats / sizeof formats[0]; ++fi) {
    CUDA_ARRAY3D_DESCRIPTOR d = {6, 5, 0, formats[fi].format, formats[fi].channels, 0};
    CUarray arr;
    CK(cuArray3DCreate(&arr, &d));
    for (int mode = 0; mode < 4; ++mode)
      for (int linear = 0; linear < 2; ++linear)
        for (int norm = 0; norm < 2; ++norm) {
          // Integer formats filter by point only unless read as normalized floats.
          CUDA_RESOURCE_DESC res;
          memset(&res, 0, sizeof res);
          res.resType = CU_RESOURCE_TYPE_ARRAY;
          res.res.array.hArray = arr;
          CUDA_TEXTURE_DESC td;
          memset(&td, 0, sizeof td);
          td.addressMode[0] = (CUaddress_mode)mode;
          td.addressMode[1] = (CUaddress_mode)((mode + 1) % 4);
          td.addressMode[2] = (CUaddress_mode)((mode + 2) % 4);
          td.filterMode = linear ? CU_TR_FILTER_MODE_LINEAR : CU_TR_FILTER_MODE_POINT;
          td.flags = norm ? CU_TRSF_NORMALIZED_COORDINATES : 0;
          CUtexObject t;
          CUresult r = cuTexObjectCreate(&t, &res, &td, 0);
          char tag[96];
          snprintf(tag, sizeof tag, "%s-%s-%s-%s", formats[fi].name, modes[mode],
                   linear ? "linear" : "point", norm ? "norm" : "unnorm");
          if (r != CUDA_SUCCESS) {
            printf("%s create %d\n", tag, (int)r);
            continue;
          }
          if (query(tag, t)) return 1;
          CK(cuTexObjectDestroy(t));
        }
    CK(cuArrayDestroy(arr));
  }
  printf("done\n");
  return 0;
}
