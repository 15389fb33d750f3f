// Warp collectives in every mode, for targets whose warps are emulated:
// out[t] packs what thread t's warp gives it. Launch with any block size
// (a partial last warp included) and one block or more.
extern "C" __global__ void warp_ops(const int* in, int* ballots, int* xors, int* ups,
                                    int* idxs, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int v = t < n ? in[t] : 0;
    unsigned lane = threadIdx.x % 32;
    ballots[t] = __ballot_sync(__activemask(), v & 1);
    xors[t] = __shfl_xor_sync(__activemask(), v, 1);
    ups[t] = __shfl_up_sync(__activemask(), v, 3);
    idxs[t] = __shfl_sync(__activemask(), v, (lane * 7) % 32);
}

// Thread `which` of the grid traps; the others write their index.
extern "C" __global__ void trap_one(int* out, int which) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t == which) {
        __trap();
    }
    out[t] = t;
}
