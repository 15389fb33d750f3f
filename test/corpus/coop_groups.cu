// Cooperative groups: thread blocks, tiles, coalesced groups, reductions,
// grid-wide sync.
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;

__global__ void tiles(const int* in, int* out) {
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
    cg::thread_block_tile<4> quad = cg::tiled_partition<4>(warp);
    int x = in[block.thread_rank()];
    int s = cg::reduce(warp, x, cg::plus<int>());
    int m = cg::reduce(quad, x, cg::greater<int>());
    int p = cg::inclusive_scan(warp, x);
    int e = cg::exclusive_scan(quad, x, cg::bit_xor<int>());
    block.sync();
    warp.sync();
    int v = warp.shfl_down(x, 1) + quad.shfl(x, 0) + warp.ballot(x > 0) + warp.any(x) + warp.all(x);
    out[block.thread_rank()] = s + m + p + e + v + (int)warp.meta_group_rank() + quad.num_threads();
}

__global__ void coalesced(const int* in, int* out) {
    if (in[threadIdx.x] & 1) {
        cg::coalesced_group active = cg::coalesced_threads();
        int r = cg::reduce(active, in[threadIdx.x], cg::plus<int>());
        if (active.thread_rank() == 0) atomicAdd(out, r);
        cg::coalesced_group sub = cg::labeled_partition(active, in[threadIdx.x] % 3);
        out[1 + threadIdx.x] = sub.size();
    }
}

__global__ void grid_sync(int* data, int n) {
    cg::grid_group grid = cg::this_grid();
    for (int i = grid.thread_rank(); i < n; i += grid.size()) data[i] += 1;
    grid.sync();
    for (int i = grid.thread_rank(); i < n; i += grid.size()) data[i] *= 2;
}
