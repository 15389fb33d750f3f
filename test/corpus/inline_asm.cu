// Inline PTX: scoped blocks with their own registers and labels, predicates
// without '%', carry chains, bit-field and permute instructions, cache and
// eviction hints, memory-model qualified loads and stores, special registers.
__global__ void asm_blocks(int* p, unsigned long long* q) {
    int r;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.s32 q, %1, 0;\n\tselp.s32 %0, 1, 2, q;\n\t}"
                 : "=r"(r) : "r"(p[0]));
    int loop = p[1];
    asm volatile("{\n\t.reg .pred again;\n"
                 "LOOP_%=:\n\t"
                 "sub.s32 %0, %0, 1;\n\t"
                 "setp.gt.s32 again, %0, 0;\n\t"
                 "@again bra.uni LOOP_%=;\n\t}" : "+r"(loop));
    unsigned lo, hi;
    unsigned long long a = q[0], b = q[1];
    asm("add.cc.u32 %0, %2, %4;\n\taddc.u32 %1, %3, %5;"
        : "=r"(lo), "=r"(hi)
        : "r"((unsigned)a), "r"((unsigned)(a >> 32)), "r"((unsigned)b), "r"((unsigned)(b >> 32)));
    unsigned m;
    asm("mad.lo.cc.u32 %0, %1, %2, %3;\n\tmadc.hi.u32 %0, %1, %2, %0;" : "=r"(m) : "r"(lo), "r"(hi), "r"(7u));
    unsigned bf, bi, pr, lop, sh;
    asm("bfe.u32 %0, %1, 4, 8;" : "=r"(bf) : "r"(lo));
    asm("bfi.b32 %0, %1, %2, 8, 4;" : "=r"(bi) : "r"(lo), "r"(hi));
    asm("prmt.b32 %0, %1, %2, 0x5140;" : "=r"(pr) : "r"(lo), "r"(hi));
    asm("lop3.b32 %0, %1, %2, %3, 0xE8;" : "=r"(lop) : "r"(lo), "r"(hi), "r"(m));
    asm("shf.l.wrap.b32 %0, %1, %2, %3;" : "=r"(sh) : "r"(lo), "r"(hi), "r"(m));
    int t;
    asm("{ .reg .pred %%px; testp.finite.f32 %%px, %1; selp.s32 %0, -1, 0, %%px; }"
        : "=r"(t) : "f"(__int_as_float(p[2])));
    float cs;
    asm("copysign.f32 %0, %1, %2;" : "=f"(cs) : "f"(1.0f), "f"(__int_as_float(p[3])));
    int sw;
    asm volatile("{\n\t.reg .u32 idx;\n\tand.b32 idx, %1, 1;\n"
                 "TS_%=: .branchtargets L0_%=, L1_%=;\n\t"
                 "brx.idx idx, TS_%=;\n"
                 "L0_%=:\n\tmov.u32 %0, 10;\n\tbra.uni END_%=;\n"
                 "L1_%=:\n\tmov.u32 %0, 20;\n"
                 "END_%=:\n\t}" : "=r"(sw) : "r"(p[5]));
    p[4] = sw + r + loop + lo + hi + m + bf + bi + pr + lop + sh + t + (int)cs;
    q[2] = ((unsigned long long)hi << 32) | lo;
}

__global__ void asm_memory(const float* in, float* out, int* flag) {
    float v, w;
    asm volatile("ld.global.nc.L1::no_allocate.f32 %0, [%1];" : "=f"(v) : "l"(in + threadIdx.x));
    asm volatile("ld.global.cg.f32 %0, [%1+4];" : "=f"(w) : "l"(in + threadIdx.x));
    asm volatile("st.global.cs.f32 [%0], %1;" ::"l"(out + threadIdx.x), "f"(v + w));
    asm volatile("prefetch.global.L2 [%0];" ::"l"(in + 64));
    asm volatile("st.global.wb.v2.f32 [%0], {%1, %2};" ::"l"(out + 64 + 2 * threadIdx.x), "f"(v), "f"(w));
    int f;
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(f) : "l"(flag));
    asm volatile("st.release.sys.global.s32 [%0], %1;" ::"l"(flag + 1), "r"(f + 1));
    asm volatile("ld.volatile.global.s32 %0, [%1];" : "=r"(f) : "l"(flag + 2));
    asm volatile("ld.relaxed.cta.global.s32 %0, [%1];" : "=r"(f) : "l"(flag + 3));
    asm volatile("membar.gl;");
    asm volatile("membar.cta;");
    asm volatile("fence.acq_rel.gpu;");
    asm volatile("fence.sc.sys;");
    asm volatile("red.relaxed.gpu.global.add.s32 [%0], %1;" ::"l"(flag + 4), "r"(f));
    int old;
    asm volatile("atom.acquire.sys.global.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "l"(flag + 5), "r"(0), "r"(1));
    asm volatile("atom.global.exch.b64 %0, [%1], %2;" : "=l"(*(long long*)(out + 100)) : "l"(flag + 6), "l"(2ll));
#if __CUDA_ARCH__ >= 800
    unsigned long long policy;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    asm volatile("ld.global.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(in), "l"(policy));
    asm volatile("ld.global.L1::evict_last.L2::256B.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v), "=f"(w), "=f"(v), "=f"(w) : "l"(in));
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(out + 128));
#endif
    out[threadIdx.x + 256] = v + old + w;
}

__global__ void asm_misc(unsigned* out) {
    unsigned e, n, d;
    asm volatile("mov.u32 %0, %%envreg0;" : "=r"(e));
    asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(d));
    unsigned long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
    asm volatile("bar.warp.sync %0;" ::"r"(0xffffffffu));
    asm volatile("bar.sync 1, 64;");
    asm volatile("barrier.sync.aligned 2;");
    asm volatile("{ .reg .pred p; setp.ne.u32 p, %1, 0; bar.red.popc.u32 %0, 0, p; }" : "=r"(n) : "r"(e & 1));
    asm volatile("{ .reg .pred p; setp.eq.u32 p, %1, 0; vote.sync.ballot.b32 %0, p, 0xffffffff; }"
                 : "=r"(d) : "r"(e));
    unsigned a = out[0];
    asm("mul.wide.u16 %0, %1, %2;" : "=r"(a) : "h"((unsigned short)a), "h"((unsigned short)7));
    asm("min.u32 %0, %0, %1;" : "+r"(a) : "r"(-1u));
    asm("abs.s32 %0, %0;" : "+r"(a));
    asm("mov.b32 %0, 0x7fffffff;" : "=r"(d));
    asm("xor.b32 %0, %0, 017;" : "+r"(d));
    asm("and.b32 %0, %0, 0b1010;" : "+r"(d));
    asm("add.s32 %0, %0, -0x10;" : "+r"(d));
    out[threadIdx.x] = e + n + d + (unsigned)t + a;
}
