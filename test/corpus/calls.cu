// Device function calls: non-inlined calls with struct arguments and
// results, recursion, function pointers, virtual functions, printf, assert,
// malloc/free, dynamically indexed local arrays; __constant__, __managed__ and
// initialised __device__ globals (including pointers to other globals).
#include <cassert>
#include <cstdio>

struct Pair {
    float a;
    double b;
    int c[3];
};

__constant__ float coeffs[16] = {1.0f, 2.0f, 0.5f, -1.0f};
__constant__ Pair cpair = {1.5f, 2.5, {1, 2, 3}};
__managed__ int managed_counter = 7;
__managed__ float managed_array[32];
__device__ int device_table[4] = {10, 20, 30, 40};
__device__ int* device_ptr = &device_table[2];
__device__ const char* device_str = "hello";
__device__ unsigned long long big_table[3] = {0xffffffffffffffffull, 1ull << 40, 0};
__device__ double dtab[2] = {3.141592653589793, -0.0};

__device__ __noinline__ Pair make_pair(float a, double b, int c) {
    Pair p;
    p.a = a;
    p.b = b;
    p.c[0] = c;
    p.c[1] = c * 2;
    p.c[2] = c * 3;
    return p;
}

__device__ __noinline__ float use_pair(Pair p, const float* v) { return p.a + p.b + p.c[1] + v[0]; }

__device__ __noinline__ int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }

__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

typedef float (*unary_fn)(float);
__device__ float twice(float x) { return 2 * x; }
__device__ float square(float x) { return x * x; }
__device__ float negate(float x) { return -x; }
__device__ unary_fn fn_table[3] = {twice, square, negate};

struct Shape {
    __device__ virtual float area() const = 0;
    __device__ virtual ~Shape() {}
};
struct Square : Shape {
    float s;
    __device__ Square(float s) : s(s) {}
    __device__ float area() const override { return s * s; }
};
struct Circle : Shape {
    float r;
    __device__ Circle(float r) : r(r) {}
    __device__ float area() const override { return 3.14159f * r * r; }
};

__global__ void calls(float* out, int k, int n) {
    Pair p = make_pair(out[0], 2.0, k);
    out[1] = use_pair(p, coeffs + (k & 7)) + cpair.b + cpair.c[k % 3];
    out[2] = fact(k) + fib(n);
    out[3] = fn_table[k % 3](out[4]);
    unary_fn local = k > 2 ? twice : negate;
    out[4] = local(out[5]);
    Square sq(out[6]);
    Circle ci(out[7]);
    Shape* s = k & 1 ? (Shape*)&sq : (Shape*)&ci;
    out[5] = s->area();
    out[6] = *device_ptr + device_table[k & 3] + managed_counter + managed_array[k & 31] +
             (float)big_table[k % 3] + dtab[k & 1] + device_str[k % 5];
}

__global__ void printing(const int* v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i == 0) printf("n=%d first=%d %f %s %lld %c %p\n", n, v[0], 1.5, "str", 1ll << 40, 'x', v);
    assert(i < n || v[0] >= 0);
    if (v[i % n] < 0) __trap();
    if (v[i % n] == 12345) __brkpt();
}

__global__ void heap(int n, int* out) {
    int* p = (int*)malloc(n * sizeof(int));
    if (p == nullptr) return;
    for (int i = 0; i < n; i++) p[i] = i * threadIdx.x;
    int local[64];
    for (int i = 0; i < 64; i++) local[i] = p[i % n];
    out[threadIdx.x] = local[(threadIdx.x * 7) & 63];
    free(p);
}

__global__ void managed_update(int delta) {
    atomicAdd(&managed_counter, delta);
    managed_array[threadIdx.x % 32] += delta;
}
