// Warp-level intrinsics: shuffles, votes, ballot, match, reduce, and the
// integer bit-manipulation intrinsics.
__global__ void shuffles(float* f, int* i, double* d, long long* l) {
    unsigned full = 0xffffffffu;
    float v = f[threadIdx.x];
    v += __shfl_sync(full, v, 0);
    v += __shfl_up_sync(full, v, 1);
    v += __shfl_down_sync(full, v, 2, 16);
    v += __shfl_xor_sync(full, v, 4);
    f[threadIdx.x] = v;
    d[threadIdx.x] = __shfl_xor_sync(full, d[threadIdx.x], 1);
    l[threadIdx.x] = __shfl_down_sync(full, l[threadIdx.x], 3);
    i[threadIdx.x] = __shfl_sync(__activemask(), i[threadIdx.x], threadIdx.x ^ 1, 8);
}

__global__ void votes(const int* in, unsigned* out) {
    int x = in[threadIdx.x];
    unsigned m = __ballot_sync(0xffffffffu, x > 0);
    int all = __all_sync(0xffffffffu, x != 0);
    int any = __any_sync(0xffffffffu, x < 0);
    int uni = __uni_sync(0xffffffffu, x);
    unsigned act = __activemask();
    unsigned same = __match_any_sync(0xffffffffu, x);
    int pred;
    unsigned all_same = __match_all_sync(0xffffffffu, (long long)x, &pred);
    __syncwarp();
    __syncwarp(m | 1u);
    out[threadIdx.x] = m + all + any + uni + act + same + all_same + pred;
}

__global__ void reduces(const unsigned* in, unsigned* out, int* sout) {
#if __CUDA_ARCH__ >= 800
    unsigned x = in[threadIdx.x];
    out[threadIdx.x] = __reduce_add_sync(0xffffffffu, x) + __reduce_min_sync(0xffffffffu, x) +
                       __reduce_max_sync(0xffffffffu, x) + __reduce_and_sync(0xffffffffu, x) +
                       __reduce_or_sync(0xffffffffu, x) + __reduce_xor_sync(0xffffffffu, x);
    sout[threadIdx.x] = __reduce_min_sync(0xffffffffu, (int)x) + __reduce_max_sync(0xffffffffu, (int)x);
#endif
}

__global__ void bits(const unsigned* in, unsigned long long* in64, int* out) {
    unsigned x = in[threadIdx.x];
    unsigned long long y = in64[threadIdx.x];
    out[threadIdx.x] = __popc(x) + __popcll(y) + __clz(x) + __clzll(y) + __ffs(x) + __ffsll(y) +
                       __brev(x) + (int)__brevll(y) + __byte_perm(x, x >> 3, 0x3210) +
                       __funnelshift_l(x, x + 1, 5) + __funnelshift_rc(x, x + 2, 40) +
                       __umulhi(x, 7u) + __mulhi((int)x, 9) + (int)__umul64hi(y, y) +
                       __mul24((int)x, 3) + __umul24(x, 5u) + __sad((int)x, 4, 1u) +
                       __usad(x, 4u, 2u) + __fns(x, 0, 2) + __dp4a((int)x, 0x01020304, 3) +
                       __dp2a_lo((int)x, 0x00010002, 1) + __hadd((int)x, 5) + __urhadd(x, 9u) +
                       __vabsdiffu4(x, 0x01010101u) + __vadd2(x, 0x00010001u) + __vcmpgtu4(x, 0x80808080u);
}

__global__ void lane_info(unsigned* out, long long* t) {
    unsigned lane, warp, sm, lt;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    asm("mov.u32 %0, %%warpid;" : "=r"(warp));
    asm("mov.u32 %0, %%smid;" : "=r"(sm));
    asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lt));
    out[threadIdx.x] = lane + warp + sm + lt;
    t[threadIdx.x] = clock64() + clock();
    unsigned long long g;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
    t[threadIdx.x] += g;
    __nanosleep(100);
}
