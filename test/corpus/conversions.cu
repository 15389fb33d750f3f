// half, bf16 and fp8 (and fp6/fp4 where the headers have them) conversions,
// rounding-mode intrinsics, fast and precise math.
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#if __has_include(<cuda_fp4.h>)
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#define HAVE_FP4 1
#endif

__global__ void halves(const float* f, __half* h, __half2* h2, __nv_bfloat16* b, __nv_bfloat162* b2) {
    int t = threadIdx.x;
    __half x = __float2half(f[t]);
    __half y = __float2half_rz(f[t] * 2);
    h[t] = __hfma(x, y, __hmul(x, __float2half_rd(0.5f)));
    __half2 p = __floats2half2_rn(f[t], f[t + 1]);
    h2[t] = __hfma2(p, p, __hadd2(p, __habs2(p)));
    __nv_bfloat16 bx = __float2bfloat16(f[t]);
    b[t] = __hadd(bx, __float2bfloat16_rz(f[t + 2]));
    b2[t] = __hmul2(__floats2bfloat162_rn(f[t], 1.0f), __bfloat162bfloat162(bx));
    h[t + 1] = __float2half(__bfloat162float(bx) + __half2float(x) + (float)__half2int_rn(y));
    h[t + 2] = __hge(x, y) ? hsqrt(x) : hexp(y);
    h[t + 3] = __ushort_as_half(__half_as_ushort(x) ^ 0x8000);
}

__global__ void fp8(const float* f, __nv_fp8_e4m3* e4, __nv_fp8_e5m2* e5, float* back,
                    __nv_fp8x2_e4m3* e4x2) {
    int t = threadIdx.x;
    __nv_fp8_e4m3 a(f[t]);
    __nv_fp8_e5m2 b(f[t]);
    e4[t] = a;
    e5[t] = b;
    e4x2[t] = __nv_fp8x2_e4m3(make_float2(f[t], f[t + 1]));
    back[t] = float(a) + float(b) + __half2float(__half(__nv_fp8_e4m3(__float2half(f[t]))));
    __nv_fp8_storage_t s = __nv_cvt_float_to_fp8(f[t], __NV_SATFINITE, __NV_E5M2);
    back[t + 1] = __half2float(__nv_cvt_fp8_to_halfraw(s, __NV_E5M2));
#ifdef HAVE_FP4
    __nv_fp4_e2m1 q(f[t]);
    __nv_fp6_e2m3 r(f[t]);
    back[t + 2] = float(q) + float(r);
#endif
}

__global__ void rounding(const float* f, const double* d, int* i, long long* l, float* o, double* od,
                         unsigned* u) {
    int t = threadIdx.x;
    i[t] = __float2int_rn(f[t]) + __float2int_rz(f[t]) + __float2int_ru(f[t]) + __float2int_rd(f[t]);
    u[t] = __float2uint_rn(f[t]) + __double2uint_rz(d[t]);
    l[t] = __float2ll_rn(f[t]) + __double2ll_rd(d[t]) + (long long)__double2ull_ru(d[t]);
    o[t] = __int2float_rn(i[t]) + __uint2float_rz(u[t]) + __ll2float_rd(l[t]) + __double2float_ru(d[t]) +
           __fadd_rz(f[t], 1.0f) + __fmul_ru(f[t], f[t]) + __fdiv_rn(f[t], 3.0f) + __fsqrt_rd(f[t]) +
           __frcp_rn(f[t]) + __fmaf_rz(f[t], 2.0f, 1.0f) + __saturatef(f[t]) + __int_as_float(i[t]);
    od[t] = __dadd_rn(d[t], 1.0) + __dmul_rz(d[t], d[t]) + __ddiv_ru(d[t], 7.0) + __dsqrt_rd(d[t]) +
            __fma_rn(d[t], 2.0, 1.0) + __longlong_as_double(l[t]) + __hiloint2double(i[t], u[t]);
}

__global__ void math(const float* f, const double* d, float* o, double* od) {
    int t = threadIdx.x;
    float x = f[t];
    o[t] = sinf(x) + cosf(x) + __sinf(x) + __cosf(x) + expf(x) + __expf(x) + exp2f(x) + logf(x) +
           __logf(x) + log2f(x) + rsqrtf(x) + sqrtf(x) + __fdividef(x, 3.0f) + powf(x, 2.5f) +
           tanhf(x) + erff(x) + fabsf(x) + fminf(x, 1.0f) + fmaxf(x, -1.0f) + copysignf(x, -1.0f) +
           floorf(x) + ceilf(x) + truncf(x) + roundf(x) + rintf(x) + fmodf(x, 1.5f) + (float)isnan(x) +
           (float)isinf(x) + atan2f(x, 2.0f) + cbrtf(x) + ldexpf(x, 3) + normcdff(x);
    double y = d[t];
    od[t] = sin(y) + exp(y) + log(y) + sqrt(y) + rsqrt(y) + pow(y, 1.5) + fma(y, y, 1.0) + fabs(y) +
            floor(y) + fmin(y, 0.5) + tgamma(y) + lgamma(y) + erfc(y) + j0(y) + remainder(y, 2.0);
}
