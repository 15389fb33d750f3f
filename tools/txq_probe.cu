// txq on texture objects: which numbers NVIDIA answers for each attribute.
// The PTX ISA gives txq.addr_mode_N "an integer from enum { wrap, mirror,
// clamp_ogl, clamp_to_edge, clamp_to_border }" and channel_data_type and
// channel_order "the source language's" enums; zmlir answers CUDA's own
// (CU_TR_ADDRESS_MODE, CUarray_format, the channel count). Hand-written
// PTX (cuModuleLoadData), every answer printed one per line.
//   nvcc -arch=sm_75 tools/txq_probe.cu -o txq_probe -lcuda
#include "probe_common.h"

static const char *kPtx = R"PTX(
.version 7.0
.target sm_75
.address_size 64
.visible .entry query(.param .u64 tex, .param .u64 out)
{
  .reg .b32 %r<12>; .reg .b64 %rd<3>;
  ld.param.u64 %rd2, [tex]; ld.param.u64 %rd1, [out];
  txq.width.b32 %r1, [%rd2];
  txq.height.b32 %r2, [%rd2];
  txq.depth.b32 %r3, [%rd2];
  txq.channel_data_type.b32 %r4, [%rd2];
  txq.channel_order.b32 %r5, [%rd2];
  txq.normalized_coords.b32 %r6, [%rd2];
  txq.filter_mode.b32 %r7, [%rd2];
  txq.addr_mode_0.b32 %r8, [%rd2];
  txq.addr_mode_1.b32 %r9, [%rd2];
  txq.addr_mode_2.b32 %r10, [%rd2];
  txq.array_size.b32 %r11, [%rd2];
  st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
  st.global.v4.u32 [%rd1+16], {%r5, %r6, %r7, %r8};
  st.global.v2.u32 [%rd1+32], {%r9, %r10};
  st.global.u32 [%rd1+40], %r11;
  ret;
}
)PTX";

static CUfunction f;
static CUdeviceptr d_out;

static int query(const char *tag, CUtexObject t) {
  unsigned out[11];
  void *args[] = {&t, &d_out};
  CK(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, args, 0));
  CK(cuMemcpyDtoH(out, d_out, sizeof out));
  printf("%s width %u height %u depth %u data_type %u order %u normalized %u filter %u "
         "addr %u %u %u array_size %u\n",
         tag, out[0], out[1], out[2], out[3], out[4], out[5], out[6], out[7], out[8], out[9],
         out[10]);
  return 0;
}

int main() {
  CUmodule mod;
  if (probe_context()) return 1;
  CK(cuModuleLoadData(&mod, kPtx));
  CK(cuModuleGetFunction(&f, mod, "query"));
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
