// What our libcurand hands to NVIDIA's (zmlir/libraries/curand/curand.c):
// generator types ours lacks (MTGP32, MT19937, the Sobol generators), the
// orderings ours lacks (MRG32k3a's LEGACY, SEEDED, DYNAMIC), the Poisson
// methods ours lacks, a host generator's normals, direction vectors and
// scramble constants; a generator of ours handed over after it made values
// of every kind (Poisson included), so that NVIDIA's must continue from
// where ours stopped; and what ours makes (Poisson; XORWOW's and Philox's
// LEGACY) on the same cases. Each case prints the checksum of every call's
// values and the statuses. Built twice by test_curand.py, linked with ours
// and with NVIDIA's: the outputs must be equal line for line.
//
// `refused`: what ours answers where NVIDIA's library is not found.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <curand.h>
#include <vector>

static void *device;
static std::vector<unsigned char> host(40 << 20);

static uint64_t fnv1a(const void *p, size_t n) {
  const unsigned char *c = (const unsigned char *)p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i)
    h = (h ^ c[i]) * 1099511628211ull;
  return h;
}

// One call: its kind and count; `P` Poisson (lambda in `x`; `A` and `T` by
// the methods CURAND_DEVICE_API and CURAND_3RD, which ours lacks), `O` an offset,
// `R` an ordering (in n), `D` quasi-random dimensions (in n), `S` a seed (n).
struct Call {
  char kind; // b bits, u uniform, d uniform double, n normal, N normal double,
             // l log-normal, L log-normal double, q 64-bit, P, A, T, O, R, D, S
  size_t n;
  double x;
};

static void run(const char *name, curandRngType_t type, bool on_host,
                const std::vector<Call> &calls) {
  curandGenerator_t g;
  int s = on_host ? curandCreateGeneratorHost(&g, type) : curandCreateGenerator(&g, type);
  printf("%s: create %d", name, s);
  if (s) {
    printf("\n");
    return;
  }
  if (type < CURAND_RNG_QUASI_DEFAULT)
    printf(", seed %d", (int)curandSetPseudoRandomGeneratorSeed(g, 20261204ull));
  for (const Call &c : calls) {
    void *at = on_host ? (void *)host.data() : device;
    size_t bytes = c.n * (strchr("dNLq", c.kind) ? 8 : 4);
    switch (c.kind) {
    case 'b':
      s = curandGenerate(g, (unsigned *)at, c.n);
      break;
    case 'u':
      s = curandGenerateUniform(g, (float *)at, c.n);
      break;
    case 'd':
      s = curandGenerateUniformDouble(g, (double *)at, c.n);
      break;
    case 'n':
      s = curandGenerateNormal(g, (float *)at, c.n, 0.5f, 1.5f);
      break;
    case 'N':
      s = curandGenerateNormalDouble(g, (double *)at, c.n, 0.5, 1.5);
      break;
    case 'l':
      s = curandGenerateLogNormal(g, (float *)at, c.n, 0.0f, 0.5f);
      break;
    case 'L':
      s = curandGenerateLogNormalDouble(g, (double *)at, c.n, 0.0, 0.5);
      break;
    case 'q':
      s = curandGenerateLongLong(g, (unsigned long long *)at, c.n);
      break;
    case 'P':
      s = curandGeneratePoisson(g, (unsigned *)at, c.n, c.x);
      break;
    case 'A':
    case 'T':
      s = curandGeneratePoissonMethod(g, (unsigned *)at, c.n, c.x,
                                      c.kind == 'A' ? CURAND_DEVICE_API : CURAND_3RD);
      break;
    case 'O':
      printf(", offset %d", (int)curandSetGeneratorOffset(g, c.n));
      continue;
    case 'R':
      printf(", ordering %zu: %d", c.n, (int)curandSetGeneratorOrdering(g, (curandOrdering_t)c.n));
      continue;
    case 'S':
      printf(", seed %d", (int)curandSetPseudoRandomGeneratorSeed(g, c.n));
      continue;
    case 'D':
      printf(", dimensions %d", (int)curandSetQuasiRandomGeneratorDimensions(g, (unsigned)c.n));
      continue;
    }
    if (s == 0 && !on_host)
      cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost);
    if (s == 0)
      printf(", %c%zu %016llx", c.kind, c.n, (unsigned long long)fnv1a(host.data(), bytes));
    else
      printf(", %c%zu status %d", c.kind, c.n, s);
  }
  printf(", destroy %d\n", (int)curandDestroyGenerator(g));
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "refused") == 0) {
    // Where NVIDIA's library is not found: CURAND_STATUS_ARCH_MISMATCH (204).
    curandGenerator_t g;
    printf("MT19937: %d\n", (int)curandCreateGenerator(&g, CURAND_RNG_PSEUDO_MT19937));
    // MTGP32's values are ours (test_curand.py knows NVIDIA's), its Poisson
    // NVIDIA's.
    {
      curandGenerator_t h;
      void *bits;
      cudaMalloc(&bits, 4 * 100003);
      curandCreateGenerator(&h, CURAND_RNG_PSEUDO_MTGP32);
      curandSetPseudoRandomGeneratorSeed(h, 17);
      int s = (int)curandGenerate(h, (unsigned *)bits, 100001);
      s = s ? s : (int)curandGenerateNormal(h, (float *)bits + 100001, 2, 0.5f, 2.0f);
      cudaMemcpy(host.data(), bits, 4 * 100003, cudaMemcpyDeviceToHost);
      printf("MTGP32 (ours): %d %016llx, Poisson %d\n", s,
             s ? 0ull : (unsigned long long)fnv1a(host.data(), 4 * 100003),
             (int)curandGeneratePoisson(h, (unsigned *)bits, 2, 3.0));
      cudaFree(bits);
      curandDestroyGenerator(h);
    }
    printf("SOBOL32: %d\n", (int)curandCreateGenerator(&g, CURAND_RNG_QUASI_SOBOL32));
    if (curandCreateGenerator(&g, CURAND_RNG_PSEUDO_XORWOW) != 0)
      return 1;
    printf("ordering BEST: %d\n", (int)curandSetGeneratorOrdering(g, CURAND_ORDERING_PSEUDO_BEST));
    printf("ordering SEEDED: %d\n",
           (int)curandSetGeneratorOrdering(g, CURAND_ORDERING_PSEUDO_SEEDED));
    // LEGACY is ours: its values (test_curand.py knows NVIDIA's).
    for (curandRngType_t type :
         {CURAND_RNG_PSEUDO_XORWOW, CURAND_RNG_PSEUDO_PHILOX4_32_10, CURAND_RNG_PSEUDO_MRG32K3A}) {
      curandGenerator_t h;
      void *bits;
      cudaMalloc(&bits, 4 * 100003);
      curandCreateGenerator(&h, type);
      curandSetPseudoRandomGeneratorSeed(h, 17);
      int s = (int)curandSetGeneratorOrdering(h, CURAND_ORDERING_PSEUDO_LEGACY);
      s = s ? s : (int)curandGenerate(h, (unsigned *)bits, 100003);
      cudaMemcpy(host.data(), bits, 4 * 100003, cudaMemcpyDeviceToHost);
      printf("ordering LEGACY (%d): %d %016llx\n", (int)type, s,
             s ? 0ull : (unsigned long long)fnv1a(host.data(), 4 * 100003));
      cudaFree(bits);
      curandDestroyGenerator(h);
    }
    void *values;
    cudaMalloc(&values, 16);
    printf("Poisson (ours): %d\n", (int)curandGeneratePoisson(g, (unsigned *)values, 4, 2.0));
    curandDirectionVectors32_t *vectors;
    printf("direction vectors: %d\n",
           (int)curandGetDirectionVectors32(&vectors, CURAND_DIRECTION_VECTORS_32_JOEKUO6));
    curandDestroyGenerator(g);
    return 0;
  }
  cudaMalloc(&device, host.size());
  const curandRngType_t X = CURAND_RNG_PSEUDO_XORWOW, P = CURAND_RNG_PSEUDO_PHILOX4_32_10,
                        M = CURAND_RNG_PSEUDO_MRG32K3A;
  // Every kind of value ours makes, at odd sizes: what a handed-over
  // generator's NVIDIA twin must make again.
  const std::vector<Call> mixed = {{'O', 5}, {'b', 1001}, {'d', 333}, {'n', 998}, {'N', 1002},
                                   {'u', 7}, {'l', 10},   {'L', 4},   {'b', 4097}};
  auto with = [](std::vector<Call> a, const std::vector<Call> &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  // MTGP32's values are ours but Poisson (NVIDIA's, the generator handed over).
  run("MTGP32", CURAND_RNG_PSEUDO_MTGP32, false,
      {{'b', 100000}, {'u', 4099}, {'n', 65536}, {'d', 1000}, {'P', 10000, 4.5}});
  run("MTGP32 every kind", CURAND_RNG_PSEUDO_MTGP32, false,
      {{'b', 1000},
       {'b', 1000},
       {'u', 300},
       {'n', 46852},
       {'u', 5},
       {'b', 100000},
       {'S', 9},
       {'N', 778},
       {'u', 50001},
       {'l', 6},
       {'L', 10},
       {'d', 3},
       {'O', 5},
       {'b', 3}});
  // Types ours lacks: NVIDIA's from their creation.
  // Handed over after a seed set among calls of ours: the rest of the round
  // reached is the old seed's (NVIDIA's twin sees the calls before too).
  run("MTGP32 Poisson after seeds", CURAND_RNG_PSEUDO_MTGP32, false,
      {{'b', 50000},
       {'S', 9},
       {'u', 777},
       {'S', 11},
       {'b', 3},
       {'n', 1000},
       {'N', 998},
       {'l', 10},
       {'L', 4},
       {'d', 333},
       {'P', 1000, 4.5},
       {'b', 5}});
  run("MTGP32 host bits and uniforms", CURAND_RNG_PSEUDO_MTGP32, true,
      {{'b', 70001}, {'u', 3}, {'b', 49152}});
  run("MT19937", CURAND_RNG_PSEUDO_MT19937, false, {{'b', 200000}, {'n', 1000}});
  run("SOBOL32", CURAND_RNG_QUASI_SOBOL32, false,
      {{'D', 3}, {'u', 30000}, {'b', 3000}, {'O', 17}, {'n', 3000}, {'P', 3000, 7.0}});
  run("SCRAMBLED_SOBOL32", CURAND_RNG_QUASI_SCRAMBLED_SOBOL32, false, {{'D', 2}, {'d', 20000}});
  run("SOBOL64", CURAND_RNG_QUASI_SOBOL64, false, {{'D', 4}, {'q', 40000}, {'d', 4000}});
  run("SCRAMBLED_SOBOL64", CURAND_RNG_QUASI_SCRAMBLED_SOBOL64, false, {{'q', 5000}});
  run("SOBOL32 host", CURAND_RNG_QUASI_SOBOL32, true, {{'D', 2}, {'u', 5000}, {'n', 500}});
  run("MTGP32 host", CURAND_RNG_PSEUDO_MTGP32, true, {{'b', 5000}, {'n', 500}});
  // Poisson: a fresh generator, and one that made every kind of value first.
  for (auto [name, type] : {std::pair{"XORWOW", X}, {"PHILOX", P}, {"MRG32K3A", M}}) {
    char label[64];
    snprintf(label, sizeof label, "%s Poisson", name);
    run(label, type, false, {{'P', 100000, 2.5}, {'P', 5000, 400.0}, {'b', 1000}});
    snprintf(label, sizeof label, "%s Poisson after ours", name);
    run(label, type, false, with(mixed, {{'P', 10001, 3.25}, {'n', 2000}, {'d', 999}}));
    snprintf(label, sizeof label, "%s Poisson methods after ours", name);
    run(label, type, false,
        with(mixed, {{'P', 999, 2.5}, {'A', 5001, 30.0}, {'P', 77, 3000.0}, {'T', 4099, 8.5}}));
    // Poisson among the calls a handed-over generator's twin replays.
    snprintf(label, sizeof label, "%s ordering LEGACY after ours' Poisson", name);
    run(label, type, false,
        with(mixed, {{'P', 10001, 3.25},
                     {'P', 4099, 2500.0},
                     {'b', 3},
                     {'P', 7, 2500.0},
                     {'R', CURAND_ORDERING_PSEUDO_LEGACY},
                     {'b', 5000},
                     {'P', 999, 9.5}}));
    snprintf(label, sizeof label, "%s ordering SEEDED", name);
    run(label, type, false, {{'R', CURAND_ORDERING_PSEUDO_SEEDED}, {'b', 70000}, {'n', 5000}});
    snprintf(label, sizeof label, "%s ordering LEGACY", name);
    run(label, type, false,
        {{'R', CURAND_ORDERING_PSEUDO_LEGACY},
         {'O', 5},
         {'b', 70001},
         {'n', 5000},
         {'d', 333},
         {'P', 999, 9.5},
         {'u', 7},
         {'N', 4098},
         {'P', 5001, 2222.0},
         {'l', 6}});
    snprintf(label, sizeof label, "%s ordering LEGACY after ours", name);
    run(label, type, false,
        with(mixed, {{'R', CURAND_ORDERING_PSEUDO_LEGACY}, {'b', 70000}, {'N', 5000}}));
    snprintf(label, sizeof label, "%s ordering DYNAMIC", name);
    run(label, type, false, {{'R', CURAND_ORDERING_PSEUDO_DYNAMIC}, {'b', 1000}});
    snprintf(label, sizeof label, "%s ordering BEST then DEFAULT after ours", name);
    run(label, type, false,
        with(mixed, {{'R', CURAND_ORDERING_PSEUDO_BEST}, {'d', 3001}, {'R', 101}, {'b', 999}}));
    snprintf(label, sizeof label, "%s ordering BEST, offset, seed", name);
    run(label, type, false,
        {{'R', CURAND_ORDERING_PSEUDO_BEST}, {'O', 11}, {'u', 9000}, {'n', 4096}});
    // Calls longer than the pieces NVIDIA's twin replays them in.
    snprintf(label, sizeof label, "%s Poisson after long calls", name);
    run(label, type, false,
        {{'O', 5}, {'b', 4194307}, {'n', 4194310}, {'d', 10}, {'P', 1000, 5.0}, {'b', 100}});
    // Ours alone: a seed set after an offset and values keeps the offset.
    snprintf(label, sizeof label, "%s seed after offset and values", name);
    run(label, type, false, {{'O', 100}, {'b', 1000}, {'n', 998}, {'S', 5}, {'b', 4}, {'n', 100}});
    snprintf(label, sizeof label, "%s host normals after ours", name);
    run(label, type, true,
        {{'O', 3}, {'b', 1001}, {'d', 77}, {'n', 1000}, {'N', 998}, {'l', 8}, {'L', 6}, {'b', 5}});
  }
  // What needs no generator.
  curandDirectionVectors32_t *v32;
  curandDirectionVectors64_t *v64;
  unsigned *c32;
  unsigned long long *c64;
  int s = curandGetDirectionVectors32(&v32, CURAND_SCRAMBLED_DIRECTION_VECTORS_32_JOEKUO6);
  printf("direction vectors 32: %d %016llx\n", s,
         s ? 0ull : (unsigned long long)fnv1a(v32, 100 * sizeof *v32));
  s = curandGetDirectionVectors64(&v64, CURAND_DIRECTION_VECTORS_64_JOEKUO6);
  printf("direction vectors 64: %d %016llx\n", s,
         s ? 0ull : (unsigned long long)fnv1a(v64, 100 * sizeof *v64));
  s = curandGetScrambleConstants32(&c32);
  printf("scramble constants 32: %d %016llx\n", s,
         s ? 0ull : (unsigned long long)fnv1a(c32, 100 * sizeof *c32));
  s = curandGetScrambleConstants64(&c64);
  printf("scramble constants 64: %d %016llx\n", s,
         s ? 0ull : (unsigned long long)fnv1a(c64, 100 * sizeof *c64));
  curandDiscreteDistribution_t distribution;
  s = curandCreatePoissonDistribution(12.5, &distribution);
  printf("Poisson distribution: %d, destroyed %d\n", s,
         s ? -1 : (int)curandDestroyDistribution(distribution));
  cudaError_t error = cudaGetLastError();
  printf(error ? "FAILED %d\n" : "DONE\n", (int)error);
  return error != cudaSuccess;
}
