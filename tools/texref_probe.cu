// Texture and surface references, and mipmapped arrays, through the driver
// API: hand-written PTX (nvcc 13 no longer emits .texref) loaded with
// cuModuleLoadData, every lookup and API answer printed one per line.
// Run on an H200 and under zmlir; test/runtime/test_texref.py checks ours
// where the answer follows from the rules (point sampling, integer reads).
//   nvcc -arch=sm_75 -Wno-deprecated-declarations tools/texref_probe.cu -o texref_probe -lcuda
#include "probe_common.h"

static const char *kPtx = R"PTX(
.version 7.0
.target sm_75
.address_size 64

.global .texref tex_arr;
.global .texref tex_lin;
.global .texref tex_pitch;
.global .surfref surf;
.global .texref tex_mip;
.global .texref tex_unused;

.visible .entry sample_arr(.param .u64 out, .param .u64 coords)
{
  .reg .b32 %r<2>; .reg .f32 %f<7>; .reg .b64 %rd<7>;
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [coords];
  cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd2, %rd2;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 8; add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4]; ld.global.f32 %f2, [%rd4+4];
  tex.2d.v4.f32.f32 {%f3, %f4, %f5, %f6}, [tex_arr, {%f1, %f2}];
  mul.wide.u32 %rd5, %r1, 16; add.s64 %rd6, %rd1, %rd5;
  st.global.v4.f32 [%rd6], {%f3, %f4, %f5, %f6};
  ret;
}

// tex_mip at (0.3, 0.6) at LOD tid.x
.visible .entry level_mip(.param .u64 out)
{
  .reg .b32 %r<2>; .reg .f32 %f<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  cvt.rn.f32.u32 %f1, %r1;
  mov.f32 %f2, 0f3E99999A;
  mov.f32 %f3, 0f3F19999A;
  tex.level.2d.v4.f32.f32 {%f4, %f5, %f6, %f7}, [tex_mip, {%f2, %f3}], %f1;
  mul.wide.u32 %rd2, %r1, 16; add.s64 %rd3, %rd1, %rd2;
  st.global.v4.f32 [%rd3], {%f4, %f5, %f6, %f7};
  ret;
}

.visible .entry fetch_lin(.param .u64 out)
{
  .reg .b32 %r<6>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  tex.1d.v4.s32.s32 {%r2, %r3, %r4, %r5}, [tex_lin, {%r1}];
  mul.wide.u32 %rd2, %r1, 16; add.s64 %rd3, %rd1, %rd2;
  st.global.v4.s32 [%rd3], {%r2, %r3, %r4, %r5};
  ret;
}

.visible .entry sample_pitch(.param .u64 out)
{
  .reg .b32 %r<9>; .reg .f32 %f<3>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x; mov.u32 %r2, %tid.y; mov.u32 %r3, %ntid.x;
  cvt.rn.f32.u32 %f1, %r1; add.f32 %f1, %f1, 0f3F000000;
  cvt.rn.f32.u32 %f2, %r2; add.f32 %f2, %f2, 0f3F000000;
  tex.2d.v4.u32.f32 {%r4, %r5, %r6, %r7}, [tex_pitch, {%f1, %f2}];
  mad.lo.u32 %r8, %r2, %r3, %r1;
  mul.wide.u32 %rd2, %r8, 16; add.s64 %rd3, %rd1, %rd2;
  st.global.v4.u32 [%rd3], {%r4, %r5, %r6, %r7};
  ret;
}

.visible .entry query(.param .u64 out)
{
  .reg .b32 %r<8>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd1, %rd1;
  txq.width.b32 %r1, [tex_arr];
  txq.height.b32 %r2, [tex_arr];
  txq.width.b32 %r3, [tex_lin];
  suq.width.b32 %r4, [surf];
  suq.height.b32 %r5, [surf];
  txq.width.b32 %r6, [tex_pitch];
  txq.height.b32 %r7, [tex_pitch];
  st.global.v4.u32 [%rd1], {%r1, %r2, %r3, %r4};
  st.global.v4.u32 [%rd1+16], {%r5, %r6, %r7, %r7};
  ret;
}

.visible .entry surf_write()
{
  .reg .b32 %r<5>;
  mov.u32 %r1, %tid.x; mov.u32 %r2, %tid.y;
  mad.lo.u32 %r3, %r2, 100, %r1; add.u32 %r3, %r3, 7;
  shl.b32 %r4, %r1, 2;
  sust.b.2d.b32.trap [surf, {%r4, %r2}], {%r3};
  ret;
}

.visible .entry surf_read(.param .u64 out)
{
  .reg .b32 %r<7>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x; mov.u32 %r2, %tid.y; mov.u32 %r3, %ntid.x;
  sub.u32 %r4, %r3, 1; sub.u32 %r4, %r4, %r1; shl.b32 %r4, %r4, 2;
  suld.b.2d.b32.trap {%r5}, [surf, {%r4, %r2}];
  mad.lo.u32 %r6, %r2, %r3, %r1;
  mul.wide.u32 %rd2, %r6, 4; add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r5;
  ret;
}
)PTX";

static CUfunction f_arr, f_lin, f_pitch, f_query, f_sw, f_sr, f_mip;
static CUdeviceptr d_out, d_coords;

// Samples tex_arr at n (u, v) pairs; prints "tag i u v r g b a".
static int sample(const char *tag, const float *uv, int n) {
  float out[64 * 4];
  CK(cuMemcpyHtoD(d_coords, uv, n * 8));
  void *args[] = {&d_out, &d_coords};
  CK(cuLaunchKernel(f_arr, 1, 1, 1, n, 1, 1, 0, 0, args, 0));
  CK(cuMemcpyDtoH(out, d_out, n * 16));
  for (int i = 0; i < n; ++i)
    printf("%s %d %.9g %.9g %.9g %.9g %.9g %.9g\n", tag, i, uv[2 * i], uv[2 * i + 1],
           out[4 * i], out[4 * i + 1], out[4 * i + 2], out[4 * i + 3]);
  return 0;
}

int main() {
  CUmodule mod;
  if (probe_context())
    return 1;
  CK(cuModuleLoadData(&mod, kPtx));
  CK(cuModuleGetFunction(&f_arr, mod, "sample_arr"));
  CK(cuModuleGetFunction(&f_lin, mod, "fetch_lin"));
  CK(cuModuleGetFunction(&f_pitch, mod, "sample_pitch"));
  CK(cuModuleGetFunction(&f_query, mod, "query"));
  CK(cuModuleGetFunction(&f_sw, mod, "surf_write"));
  CK(cuModuleGetFunction(&f_sr, mod, "surf_read"));
  CK(cuModuleGetFunction(&f_mip, mod, "level_mip"));
  CK(cuMemAlloc(&d_out, 64 * 16));
  CK(cuMemAlloc(&d_coords, 64 * 8));

  // -- looking references up ------------------------------------------------
  CUtexref t_arr, t_lin, t_pitch, t_other;
  CUsurfref s_ref, s_other;
  CK(cuModuleGetTexRef(&t_arr, mod, "tex_arr"));
  CK(cuModuleGetTexRef(&t_other, mod, "tex_arr"));
  printf("api same_handle %d\n", t_arr == t_other);
  CK(cuModuleGetTexRef(&t_lin, mod, "tex_lin"));
  CK(cuModuleGetTexRef(&t_pitch, mod, "tex_pitch"));
  CK(cuModuleGetSurfRef(&s_ref, mod, "surf"));
  RC("GetTexRef_unused", cuModuleGetTexRef(&t_other, mod, "tex_unused"));
  RC("GetTexRef_missing", cuModuleGetTexRef(&t_other, mod, "nope"));
  RC("GetTexRef_of_surfref", cuModuleGetTexRef(&t_other, mod, "surf"));
  RC("GetSurfRef_of_texref", cuModuleGetSurfRef(&s_other, mod, "tex_arr"));
  CUdeviceptr g;
  size_t gsz;
  RC("GetGlobal_of_texref", cuModuleGetGlobal(&g, &gsz, mod, "tex_arr"));
  {
    CUarray_format fmt = (CUarray_format)-1;
    int nc = -1, flt = -1, am0 = -1, am1 = -1;
    unsigned flags = 12345;
    RC("GetFormat_unset", cuTexRefGetFormat(&fmt, &nc, t_arr));
    RC("GetAddressMode_unset", cuTexRefGetAddressMode((CUaddress_mode *)&am0, t_arr, 0));
    RC("GetAddressMode1_unset", cuTexRefGetAddressMode((CUaddress_mode *)&am1, t_arr, 1));
    RC("GetFilterMode_unset", cuTexRefGetFilterMode((CUfilter_mode *)&flt, t_arr));
    RC("GetFlags_unset", cuTexRefGetFlags(&flags, t_arr));
    printf("unset format %d %d modes %d %d filter %d flags %u\n", (int)fmt, nc, am0, am1,
           flt, flags);
    CUarray none;
    RC("GetArray_unbound", cuTexRefGetArray(&none, t_arr));
  }

  // -- a 4x3 float array ----------------------------------------------------
  CUDA_ARRAY_DESCRIPTOR ad = {4, 3, CU_AD_FORMAT_FLOAT, 1};
  CUarray arr;
  CK(cuArrayCreate(&arr, &ad));
  float host[12];
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x) host[y * 4 + x] = x + 10 * y;
  CK(copy_to_array(arr, host, 16, 3));
  RC("SetArray_flags0", cuTexRefSetArray(t_arr, arr, 0));
  CK(cuTexRefSetArray(t_arr, arr, CU_TRSA_OVERRIDE_FORMAT));
  {
    CUarray got;
    CK(cuTexRefGetArray(&got, t_arr));
    CUarray_format fmt;
    int nc;
    CK(cuTexRefGetFormat(&fmt, &nc, t_arr));
    printf("arr getarray_same %d format %d %d\n", got == arr, (int)fmt, nc);
  }
  CK(cuTexRefSetFilterMode(t_arr, CU_TR_FILTER_MODE_POINT));
  CK(cuTexRefSetAddressMode(t_arr, 0, CU_TR_ADDRESS_MODE_CLAMP));
  CK(cuTexRefSetAddressMode(t_arr, 1, CU_TR_ADDRESS_MODE_CLAMP));
  CK(cuTexRefSetFlags(t_arr, 0));
  {
    float uv[32];
    int n = 0;
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x) {
        uv[2 * n] = x + 0.5f;
        uv[2 * n + 1] = y + 0.5f;
        ++n;
      }
    const float edges[] = {-3.0f, 0.5f, 7.5f, 2.5f, 2.5f, -1.0f, 1.25f, 9.0f};
    memcpy(uv + 2 * n, edges, sizeof edges);
    n += 4;
    if (sample("arr_point_clamp", uv, n)) return 1;
  }
  CK(cuTexRefSetFlags(t_arr, CU_TRSF_NORMALIZED_COORDINATES));
  CK(cuTexRefSetAddressMode(t_arr, 0, CU_TR_ADDRESS_MODE_WRAP));
  CK(cuTexRefSetAddressMode(t_arr, 1, CU_TR_ADDRESS_MODE_WRAP));
  {
    const float uv[] = {1.125f, 0.5f, -0.125f, 0.5f, 0.375f, 0.5f, 0.625f, 1.5f};
    if (sample("arr_point_wrap", uv, 4)) return 1;
  }
  CK(cuTexRefSetAddressMode(t_arr, 0, CU_TR_ADDRESS_MODE_BORDER));
  CK(cuTexRefSetAddressMode(t_arr, 1, CU_TR_ADDRESS_MODE_BORDER));
  {
    float border[4] = {1.5f, 2.5f, 3.5f, 4.5f}, back[4];
    CK(cuTexRefSetBorderColor(t_arr, border));
    CK(cuTexRefGetBorderColor(back, t_arr));
    printf("arr border %g %g %g %g\n", back[0], back[1], back[2], back[3]);
    const float uv[] = {-0.125f, 0.5f, 0.125f, 0.5f, 0.875f, 1.25f};
    if (sample("arr_point_border", uv, 3)) return 1;
  }
  CK(cuTexRefSetFilterMode(t_arr, CU_TR_FILTER_MODE_LINEAR));
  CK(cuTexRefSetAddressMode(t_arr, 0, CU_TR_ADDRESS_MODE_CLAMP));
  CK(cuTexRefSetAddressMode(t_arr, 1, CU_TR_ADDRESS_MODE_CLAMP));
  {
    const float uv[] = {0.375f, 0.5f, 0.3f, 0.4f, 0.1f, 0.9f, 0.55f, 0.2f};
    if (sample("arr_linear", uv, 4)) return 1;
  }

  // -- linear memory of 8 ints ---------------------------------------------
  CUdeviceptr d_lin;
  int lin[8];
  for (int i = 0; i < 8; ++i) lin[i] = i * i - 5;
  CK(cuMemAlloc(&d_lin, sizeof lin));
  CK(cuMemcpyHtoD(d_lin, lin, sizeof lin));
  CK(cuTexRefSetFormat(t_lin, CU_AD_FORMAT_SIGNED_INT32, 1));
  CK(cuTexRefSetFlags(t_lin, CU_TRSF_READ_AS_INTEGER));
  size_t offset = 99;
  CK(cuTexRefSetAddress(&offset, t_lin, d_lin, sizeof lin));
  {
    CUdeviceptr back;
    CK(cuTexRefGetAddress(&back, t_lin));
    printf("lin offset %zu getaddress_same %d\n", offset, back == d_lin);
    int out[10 * 4];
    void *args[] = {&d_out};
    CK(cuLaunchKernel(f_lin, 1, 1, 1, 10, 1, 1, 0, 0, args, 0));
    CK(cuMemcpyDtoH(out, d_out, sizeof out));
    for (int i = 0; i < 10; ++i)
      printf("lin %d %d %d %d %d\n", i, out[4 * i], out[4 * i + 1], out[4 * i + 2],
             out[4 * i + 3]);
  }

  // -- pitched 2D memory, 5x2 uchar ----------------------------------------
  {
    CUdeviceptr d_pitch;
    size_t pitch;
    CK(cuMemAllocPitch(&d_pitch, &pitch, 5, 2, 16));
    unsigned char px[10];
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 5; ++x) px[y * 5 + x] = (unsigned char)(3 * x + 50 * y);
    CUDA_MEMCPY2D p;
    memset(&p, 0, sizeof p);
    p.srcMemoryType = CU_MEMORYTYPE_HOST;
    p.srcHost = px;
    p.srcPitch = 5;
    p.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    p.dstDevice = d_pitch;
    p.dstPitch = pitch;
    p.WidthInBytes = 5;
    p.Height = 2;
    CK(cuMemcpy2D(&p));
    CUDA_ARRAY_DESCRIPTOR pd = {5, 2, CU_AD_FORMAT_UNSIGNED_INT8, 1};
    CK(cuTexRefSetAddress2D(t_pitch, &pd, d_pitch, pitch));
    CK(cuTexRefSetFlags(t_pitch, CU_TRSF_READ_AS_INTEGER));
    CK(cuTexRefSetFilterMode(t_pitch, CU_TR_FILTER_MODE_POINT));
    unsigned out[10 * 4];
    void *args[] = {&d_out};
    CK(cuLaunchKernel(f_pitch, 1, 1, 1, 5, 2, 1, 0, 0, args, 0));
    CK(cuMemcpyDtoH(out, d_out, sizeof out));
    for (int i = 0; i < 10; ++i)
      printf("pitch %d %d %u %u %u %u\n", i % 5, i / 5, out[4 * i], out[4 * i + 1],
             out[4 * i + 2], out[4 * i + 3]);
  }

  // -- a surface reference over a 4x2 int array ------------------------------
  {
    CUDA_ARRAY3D_DESCRIPTOR sd = {4, 2, 0, CU_AD_FORMAT_SIGNED_INT32, 1,
                                  CUDA_ARRAY3D_SURFACE_LDST};
    CUarray sarr, got;
    CK(cuArray3DCreate(&sarr, &sd));
    RC("SurfRefSetArray_of_texture_array", cuSurfRefSetArray(s_ref, arr, 0));
    CK(cuSurfRefSetArray(s_ref, sarr, 0));
    CK(cuSurfRefGetArray(&got, s_ref));
    printf("surf getarray_same %d\n", got == sarr);
    CK(cuLaunchKernel(f_sw, 1, 1, 1, 4, 2, 1, 0, 0, 0, 0));
    void *args[] = {&d_out};
    CK(cuLaunchKernel(f_sr, 1, 1, 1, 4, 2, 1, 0, 0, args, 0));
    int out[8], mem[8];
    CK(cuMemcpyDtoH(out, d_out, sizeof out));
    // A 2D array copies with cuMemcpy2D; cuMemcpyAtoH takes 1D arrays only.
    RC("MemcpyAtoH_of_2d_array", cuMemcpyAtoH(mem, sarr, 0, sizeof mem));
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
    c.srcArray = sarr;
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = mem;
    c.dstPitch = 16;
    c.WidthInBytes = 16;
    c.Height = 2;
    CK(cuMemcpy2D(&c));
    for (int i = 0; i < 8; ++i) printf("surf %d %d %d %d\n", i % 4, i / 4, out[i], mem[i]);
  }

  // -- txq and suq on references ---------------------------------------------
  {
    unsigned out[8];
    void *args[] = {&d_out};
    CK(cuLaunchKernel(f_query, 1, 1, 1, 1, 1, 1, 0, 0, args, 0));
    CK(cuMemcpyDtoH(out, d_out, sizeof out));
    printf("query arr %u %u lin %u surf %u %u pitch %u %u\n", out[0], out[1], out[2], out[3],
           out[4], out[5], out[6]);
  }

  // -- a mipmapped array bound to a reference: 4x4 floats, 3 levels ----------
  {
    CUtexref t_mip;
    CK(cuModuleGetTexRef(&t_mip, mod, "tex_mip"));
    CUDA_ARRAY3D_DESCRIPTOR md = {4, 4, 0, CU_AD_FORMAT_FLOAT, 1, 0};
    CUmipmappedArray mm, got;
    CK(cuMipmappedArrayCreate(&mm, &md, 3));
    for (int k = 0; k < 3; ++k) {
      CUarray level;
      CK(cuMipmappedArrayGetLevel(&level, mm, k));
      int w = 4 >> k;
      float host[16];
      for (int i = 0; i < w * w; ++i) host[i] = 100 * k + i % w + 10 * (i / w);
      CK(copy_to_array(level, host, w * 4, w));
    }
    CK(cuTexRefSetMipmappedArray(t_mip, mm, CU_TRSA_OVERRIDE_FORMAT));
    CK(cuTexRefGetMipmappedArray(&got, t_mip));
    CK(cuTexRefSetFlags(t_mip, CU_TRSF_NORMALIZED_COORDINATES));
    CK(cuTexRefSetMipmapFilterMode(t_mip, CU_TR_FILTER_MODE_POINT));
    CK(cuTexRefSetMipmapLevelClamp(t_mip, 0, 2));
    float lo, hi;
    CK(cuTexRefGetMipmapLevelClamp(&lo, &hi, t_mip));
    printf("mipref getmipmapped_same %d clamp %g %g\n", got == mm, lo, hi);
    float out[4 * 4];
    void *args[] = {&d_out};
    CK(cuLaunchKernel(f_mip, 1, 1, 1, 4, 1, 1, 0, 0, args, 0));
    CK(cuMemcpyDtoH(out, d_out, sizeof out));
    for (int i = 0; i < 4; ++i)
      printf("mipref %d %.9g %.9g %.9g %.9g\n", i, out[4 * i], out[4 * i + 1], out[4 * i + 2],
             out[4 * i + 3]);
  }

  // -- references of no module, mipmapped arrays ----------------------------
  {
    CUtexref own;
    RC("TexRefCreate", cuTexRefCreate(&own));
    RC("TexRefDestroy", cuTexRefDestroy(own));
    CUDA_ARRAY3D_DESCRIPTOR md = {8, 4, 0, CU_AD_FORMAT_FLOAT, 1, 0};
    CUmipmappedArray mm, mm2;
    RC("MipmappedArrayCreate", cuMipmappedArrayCreate(&mm, &md, 4));
    for (unsigned l = 0; l < 5; ++l) {
      CUarray level;
      CUresult r = cuMipmappedArrayGetLevel(&level, mm, l);
      if (r != CUDA_SUCCESS) {
        printf("mip level %u rc %d\n", l, (int)r);
        continue;
      }
      CUDA_ARRAY3D_DESCRIPTOR o;
      CK(cuArray3DGetDescriptor(&o, level));
      CUarray again;
      CK(cuMipmappedArrayGetLevel(&again, mm, l));
      printf("mip level %u rc 0 %zu %zu %zu format %d channels %u same %d\n", l, o.Width,
             o.Height, o.Depth, (int)o.Format, o.NumChannels, again == level);
    }
    RC("MipmappedArrayCreate_too_many_levels", cuMipmappedArrayCreate(&mm2, &md, 5));
    RC("MipmappedArrayDestroy", cuMipmappedArrayDestroy(mm));
  }
  CK(cuModuleUnload(mod));
  printf("done\n");
  return 0;
}
