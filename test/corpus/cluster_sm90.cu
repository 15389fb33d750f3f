// corpus-min-arch: 90
// Thread block clusters: cluster dimensions, cluster barriers, distributed
// shared memory, elect, griddepcontrol, register reallocation hints.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void __cluster_dims__(2, 1, 1) cluster_kernel(int* out) {
    __shared__ int smem[64];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    smem[threadIdx.x % 64] = rank * 100 + threadIdx.x;
    cluster.sync();
    int* peer = cluster.map_shared_rank(smem, rank ^ 1);
    out[blockIdx.x * blockDim.x + threadIdx.x] = peer[threadIdx.x % 64] + cluster.num_blocks() +
                                                 cluster.dim_blocks().x;
    cluster.sync();
}

__global__ void __launch_bounds__(256) hopper_misc(int* out) {
    cudaGridDependencySynchronize();
    unsigned elected;
    asm volatile("{ .reg .pred p; .reg .b32 lane; elect.sync lane|p, 0xffffffff; selp.u32 %0, 1, 0, p; }"
                 : "=r"(elected));
    unsigned crank, cid;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(crank));
    asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
    asm volatile("barrier.cluster.arrive.release;\n\tbarrier.cluster.wait.acquire;");
    asm volatile("fence.mbarrier_init.release.cluster;");
    out[threadIdx.x] = elected + crank + cid;
    cudaTriggerProgrammaticLaunchCompletion();
}
