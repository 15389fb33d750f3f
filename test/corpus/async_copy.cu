// Asynchronous copies: cp.async through the pipeline primitives and
// cooperative groups, cuda::memcpy_async with a barrier, bulk copies and
// mbarriers through inline PTX on sm_90+.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>
#include <cuda_pipeline.h>
namespace cg = cooperative_groups;

__global__ void pipeline(const float4* in, float4* out) {
    __shared__ float4 buf[2][128];
    __pipeline_memcpy_async(&buf[0][threadIdx.x], &in[threadIdx.x], sizeof(float4));
    __pipeline_commit();
    __pipeline_memcpy_async(&buf[1][threadIdx.x], &in[128 + threadIdx.x], sizeof(float4));
    __pipeline_commit();
    __pipeline_wait_prior(1);
    out[threadIdx.x] = buf[0][threadIdx.x];
    __pipeline_wait_prior(0);
    out[128 + threadIdx.x] = buf[1][threadIdx.x];
}

__global__ void cp_async_sizes(const int* in, int* out) {
    __shared__ int s4[128];
    __shared__ int2 s8[128];
    __shared__ int4 s16[128];
    __pipeline_memcpy_async(&s4[threadIdx.x], &in[threadIdx.x], 4);
    __pipeline_memcpy_async(&s8[threadIdx.x], (const int2*)in + threadIdx.x, 8);
    __pipeline_memcpy_async(&s16[threadIdx.x], (const int4*)in + threadIdx.x, 16, 8);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[threadIdx.x] = s4[threadIdx.x] + s8[threadIdx.x].y + s16[threadIdx.x].w;
}

__global__ void cg_memcpy(const float* in, float* out, int n) {
    extern __shared__ float tile[];
    cg::thread_block block = cg::this_thread_block();
    cg::memcpy_async(block, tile, in + blockIdx.x * n, sizeof(float) * n);
    cg::wait(block);
    out[blockIdx.x * n + threadIdx.x] = tile[threadIdx.x] * 2.0f;
}

__global__ void barrier_copy(const int* in, int* out) {
    __shared__ int data[256];
#pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0) init(&bar, block.size());
    block.sync();
    cuda::memcpy_async(block, data, in, sizeof(data), bar);
    bar.arrive_and_wait();
    out[threadIdx.x] = data[threadIdx.x] + 1;
}

__global__ void bulk_sm90(const int4* in, int4* out) {
#if __CUDA_ARCH__ >= 900
    __shared__ alignas(128) int4 buf[64];
    __shared__ alignas(8) unsigned long long mbar;
    unsigned bar = (unsigned)__cvta_generic_to_shared(&mbar);
    unsigned dst = (unsigned)__cvta_generic_to_shared(buf);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(1));
        asm volatile("fence.proxy.async.shared::cta;");
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(1024));
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     ::"r"(dst), "l"(in), "r"(1024), "r"(bar) : "memory");
    }
    __syncthreads();
    asm volatile("{\n\t.reg .pred done;\n"
                 "WAIT_%=:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
                 "@!done bra WAIT_%=;\n\t}" ::"r"(bar), "r"(0));
    out[threadIdx.x] = buf[threadIdx.x % 64];
    if (threadIdx.x == 0) {
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                     ::"l"(out + 64), "r"(dst), "r"(1024) : "memory");
        asm volatile("cp.async.bulk.commit_group;");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
#endif
}

__global__ void tensor_map_sm90(const __grid_constant__ unsigned long long tmap[16], int4* out) {
#if __CUDA_ARCH__ >= 900
    __shared__ alignas(128) int4 buf[64];
    __shared__ alignas(8) unsigned long long mbar;
    unsigned bar = (unsigned)__cvta_generic_to_shared(&mbar);
    unsigned dst = (unsigned)__cvta_generic_to_shared(buf);
    if (threadIdx.x == 0) {
        asm volatile("prefetch.tensormap [%0];" ::"l"(tmap));
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                     " [%0], [%1, {%2, %3}], [%4];"
                     ::"r"(dst), "l"(tmap), "r"(0), "r"(blockIdx.x), "r"(bar) : "memory");
    }
    out[threadIdx.x] = buf[threadIdx.x % 64];
#endif
}
