// Tensor cores: wmma of every fragment type the arch has, mma.sync and
// ldmatrix through inline PTX.
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;

__global__ void wmma_f16(const __half* a, const __half* b, float* c, __half* ch) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fragment<wmma::accumulator, 16, 16, 16, __half> fh;
    wmma::fill_fragment(fc, 0.0f);
    wmma::fill_fragment(fh, __float2half(0.0f));
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::mma_sync(fh, fa, fb, fh);
    for (int i = 0; i < fc.num_elements; i++) fc.x[i] *= 2.0f;
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
    wmma::store_matrix_sync(ch, fh, 16, wmma::mem_col_major);
}

__global__ void wmma_shapes(const __half* a, const __half* b, float* c) {
    wmma::fragment<wmma::matrix_a, 32, 8, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 32, 8, 16, __half, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 32, 8, 16, float> fc;
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 8);
    wmma::load_matrix_sync(fc, c, 8, wmma::mem_row_major);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 8, wmma::mem_row_major);
}

__global__ void wmma_int8(const signed char* a, const signed char* b, int* c) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> fc;
    wmma::fill_fragment(fc, 0);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc, true);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

__global__ void wmma_ampere(const __nv_bfloat16* a, const __nv_bfloat16* b, const float* ta,
                            const float* tb, const double* da, const double* db, float* c,
                            double* dc) {
#if __CUDA_ARCH__ >= 800
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> ta_f;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> tb_f;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> tc;
    wmma::fill_fragment(tc, 0.0f);
    wmma::load_matrix_sync(ta_f, ta, 8);
    wmma::load_matrix_sync(tb_f, tb, 16);
    for (int i = 0; i < ta_f.num_elements; i++) ta_f.x[i] = wmma::__float_to_tf32(ta_f.x[i]);
    wmma::mma_sync(tc, ta_f, tb_f, tc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
    wmma::store_matrix_sync(c + 256, tc, 16, wmma::mem_row_major);
    wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> dfa;
    wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> dfb;
    wmma::fragment<wmma::accumulator, 8, 8, 4, double> dfc;
    wmma::fill_fragment(dfc, 0.0);
    wmma::load_matrix_sync(dfa, da, 4);
    wmma::load_matrix_sync(dfb, db, 4);
    wmma::mma_sync(dfc, dfa, dfb, dfc);
    wmma::store_matrix_sync(dc, dfc, 8, wmma::mem_row_major);
#endif
}

__global__ void mma_asm(const unsigned* a, const unsigned* b, float* c) {
    __shared__ unsigned short tile[8 * 8 * 4];
    tile[threadIdx.x] = (unsigned short)a[threadIdx.x];
    __syncthreads();
    unsigned r0, r1, r2, r3;
    unsigned addr = (unsigned)__cvta_generic_to_shared(&tile[(threadIdx.x % 32) * 8 % 256]);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr));
    unsigned t0, t1;
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(t0), "=r"(t1) : "r"(addr));
    float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "r"(r0), "r"(r1), "r"(b[0]));
#if __CUDA_ARCH__ >= 800
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
                 : "r"(r0), "r"(r1), "r"(r2), "r"(r3), "r"(t0), "r"(t1));
    int i0 = 0, i1 = 0, i2 = 0, i3 = 0;
    asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+r"(i0), "+r"(i1), "+r"(i2), "+r"(i3)
                 : "r"(r0), "r"(r1), "r"(r2), "r"(r3), "r"(t0), "r"(t1));
    d0 += i0 + i1 + i2 + i3;
#endif
#if __CUDA_ARCH__ >= 900
    asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" ::"r"(addr), "r"(r0));
#endif
    c[threadIdx.x] = d0 + d1 + d2 + d3;
}
