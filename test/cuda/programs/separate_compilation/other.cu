#include "shared.h"

__device__ int bias = 105;
static __device__ __noinline__ int helper(int x) { return 2 * x; }
__device__ __noinline__ int scale(int x) { return 3 * x + helper(3) + square(0); }
