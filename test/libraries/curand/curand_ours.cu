// cuRAND's host API, case by case: each case runs a series of calls (seeds,
// offsets, every distribution and precision, odd sizes, streams, a host
// generator) on a new generator and prints a checksum of every value it
// made; then the status codes of bad arguments. Built twice by
// test_curand.py, linked with our libcurand.so.10 (zmlir/libraries/curand/)
// and with NVIDIA's, the two outputs must be equal line for line (and equal
// to an H200's, with NVIDIA's library and driver).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <curand.h>
#include <vector>

struct Api {
  curandStatus_t (*create)(curandGenerator_t *, curandRngType_t);
  curandStatus_t (*create_host)(curandGenerator_t *, curandRngType_t);
  curandStatus_t (*destroy)(curandGenerator_t);
  curandStatus_t (*seed)(curandGenerator_t, unsigned long long);
  curandStatus_t (*offset)(curandGenerator_t, unsigned long long);
  curandStatus_t (*stream)(curandGenerator_t, cudaStream_t);
  curandStatus_t (*bits)(curandGenerator_t, unsigned *, size_t);
  curandStatus_t (*uniform)(curandGenerator_t, float *, size_t);
  curandStatus_t (*uniform_double)(curandGenerator_t, double *, size_t);
  curandStatus_t (*normal)(curandGenerator_t, float *, size_t, float, float);
  curandStatus_t (*normal_double)(curandGenerator_t, double *, size_t, double, double);
  curandStatus_t (*log_normal)(curandGenerator_t, float *, size_t, float, float);
  curandStatus_t (*log_normal_double)(curandGenerator_t, double *, size_t, double, double);
  curandStatus_t (*ordering)(curandGenerator_t, curandOrdering_t);
};

static Api curand_api = {curandCreateGenerator,
                         curandCreateGeneratorHost,
                         curandDestroyGenerator,
                         curandSetPseudoRandomGeneratorSeed,
                         curandSetGeneratorOffset,
                         curandSetStream,
                         curandGenerate,
                         curandGenerateUniform,
                         curandGenerateUniformDouble,
                         curandGenerateNormal,
                         curandGenerateNormalDouble,
                         curandGenerateLogNormal,
                         curandGenerateLogNormalDouble,
                         curandSetGeneratorOrdering};

// One step of a case: a distribution and a count (or an offset to set).
enum Kind { BITS, UNIFORM, UDOUBLE, NORMAL, NDOUBLE, LOGNORMAL, LNDOUBLE, OFFSET };
struct Step {
  Kind kind;
  size_t n; // values, or the offset
};
static size_t bytes_of(Kind k) {
  return k == UDOUBLE || k == NDOUBLE || k == LNDOUBLE ? 8 : 4;
}

static uint64_t fnv1a(const std::vector<unsigned char> &v) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : v)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

// Runs the steps on a new generator of `api`; each step's checksum appended
// to `out`, statuses to `statuses`.
static void run(const Api &api, curandRngType_t type, bool host, unsigned long long seed,
                const std::vector<Step> &steps, std::vector<uint64_t> *out,
                std::vector<int> *statuses, void *device, cudaStream_t stream) {
  curandGenerator_t g;
  int s = host ? api.create_host(&g, type) : api.create(&g, type);
  statuses->push_back(s);
  if (s)
    return;
  statuses->push_back(api.seed(g, seed));
  if (stream)
    statuses->push_back(api.stream(g, stream));
  std::vector<unsigned char> h;
  for (const Step &step : steps) {
    if (step.kind == OFFSET) {
      statuses->push_back(api.offset(g, step.n));
      continue;
    }
    size_t bytes = step.n * bytes_of(step.kind);
    h.assign(bytes, 0);
    void *at = host ? (void *)h.data() : device;
    switch (step.kind) {
    case BITS:
      s = api.bits(g, (unsigned *)at, step.n);
      break;
    case UNIFORM:
      s = api.uniform(g, (float *)at, step.n);
      break;
    case UDOUBLE:
      s = api.uniform_double(g, (double *)at, step.n);
      break;
    case NORMAL:
      s = api.normal(g, (float *)at, step.n, 1.5f, 2.0f);
      break;
    case NDOUBLE:
      s = api.normal_double(g, (double *)at, step.n, -1.0, 0.25);
      break;
    case LOGNORMAL:
      s = api.log_normal(g, (float *)at, step.n, 0.0f, 0.5f);
      break;
    case LNDOUBLE:
      s = api.log_normal_double(g, (double *)at, step.n, 0.0, 0.5);
      break;
    default:
      break;
    }
    statuses->push_back(s);
    if (!host && s == 0)
      cudaMemcpyAsync(h.data(), device, bytes, cudaMemcpyDeviceToHost, stream),
          cudaStreamSynchronize(stream);
    out->push_back(fnv1a(h));
  }
  api.destroy(g);
}

int main(int argc, char **argv) {
  const Api &api = curand_api;
  if (argc > 1 && strcmp(argv[1], "unsupported") == 0) {
    // A generator type ours does not make (NVIDIA's answers 0 here).
    curandGenerator_t g;
    printf("unsupported MT19937: %d\n", (int)curandCreateGenerator(&g, CURAND_RNG_PSEUDO_MT19937));
    printf("unsupported SOBOL32: %d\n", (int)curandCreateGenerator(&g, CURAND_RNG_QUASI_SOBOL32));
    printf("unsupported ordering SEEDED: %d\n",
           curandCreateGenerator(&g, CURAND_RNG_PSEUDO_XORWOW) == 0
               ? (int)curandSetGeneratorOrdering(g, CURAND_ORDERING_PSEUDO_SEEDED)
               : -1);
    return 0;
  }
  void *device;
  cudaMalloc(&device, 64 << 20);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  struct {
    const char *name;
    curandRngType_t type;
  } generators[] = {{"XORWOW", CURAND_RNG_PSEUDO_XORWOW},
                    {"PHILOX4_32_10", CURAND_RNG_PSEUDO_PHILOX4_32_10},
                    {"MRG32K3A", CURAND_RNG_PSEUDO_MRG32K3A}};
  struct Case {
    const char *name;
    std::vector<Step> steps;
    bool host, in_stream;
  } cases[] = {
      {"bits 1M", {{BITS, 1 << 20}}, false, false},
      {"every distribution 64K",
       {{BITS, 65536},
        {UNIFORM, 65536},
        {NORMAL, 65536},
        {LOGNORMAL, 65536},
        {UDOUBLE, 65536},
        {NDOUBLE, 65536},
        {LNDOUBLE, 65536}},
       false,
       false},
      {"offset 4096, every distribution",
       {{OFFSET, 4096},
        {BITS, 65536},
        {UNIFORM, 65536},
        {NORMAL, 65536},
        {LOGNORMAL, 65536},
        {UDOUBLE, 65536},
        {NDOUBLE, 65536},
        {LNDOUBLE, 65536}},
       false,
       false},
      {"odd sizes and offsets",
       {{OFFSET, 5},
        {BITS, 1001},
        {NORMAL, 998},
        {UDOUBLE, 333},
        {BITS, 7},
        {NDOUBLE, 1002},
        {UNIFORM, 100003},
        {LNDOUBLE, 4},
        {LOGNORMAL, 10},
        {BITS, 300000}},
       false,
       false},
      {"tiny calls inside units",
       {{OFFSET, 7},
        {UDOUBLE, 1},
        {UDOUBLE, 1},
        {UDOUBLE, 2},
        {BITS, 3},
        {NDOUBLE, 2},
        {UDOUBLE, 5},
        {UNIFORM, 3},
        {NORMAL, 2},
        {LNDOUBLE, 6},
        {BITS, 600000}},
       false,
       false},
      {"large offset",
       {{OFFSET, 123456789}, {BITS, 100000}, {NORMAL, 100000}, {UDOUBLE, 100000}},
       false,
       false},
      {"offset set twice",
       {{BITS, 5000}, {OFFSET, 77}, {UNIFORM, 9000}, {OFFSET, 0}, {BITS, 9000}},
       false,
       false},
      {"long run, doubles", {{UDOUBLE, 1 << 20}, {NDOUBLE, 1 << 20}}, false, false},
      {"in a stream", {{OFFSET, 3}, {NORMAL, 4096}, {BITS, 4097}}, false, true},
      // NVIDIA's host generators make their normals with the host's libm, not
      // the device API's approximations (ours run the device's kernels): raw
      // bits and uniforms only.
      {"host generator",
       {{OFFSET, 9}, {BITS, 70000}, {UNIFORM, 7001}, {UDOUBLE, 7000}, {BITS, 7}},
       true,
       false},
  };
  int failures = 0;
  for (auto &gen : generators) {
    for (auto &c : cases) {
      std::vector<uint64_t> sums;
      std::vector<int> statuses;
      cudaStream_t st = c.in_stream ? stream : nullptr;
      run(api, gen.type, c.host, 20261203ull, c.steps, &sums, &statuses, device, st);
      printf("%s %s: fnv", gen.name, c.name);
      for (uint64_t h : sums)
        printf(" %016llx", (unsigned long long)h);
      printf(", statuses");
      for (int s : statuses)
        printf(" %d", s);
      printf("\n");
      if (cudaGetLastError() != cudaSuccess)
        ++failures;
    }
  }
  // Statuses of bad arguments, NVIDIA's and ours.
  struct Call {
    const char *name;
    int (*call)(const Api &, curandGenerator_t);
  } calls[] = {
      {"normal odd n",
       [](const Api &api, curandGenerator_t g) { return (int)api.normal(g, nullptr, 3, 0, 1); }},
      {"normal double odd n",
       [](const Api &api, curandGenerator_t g) {
         return (int)api.normal_double(g, nullptr, 5, 0, 1);
       }},
      {"lognormal odd n",
       [](const Api &api, curandGenerator_t g) {
         return (int)api.log_normal(g, nullptr, 7, 0, 1);
       }},
      {"ordering 0", [](const Api &api,
                        curandGenerator_t g) { return (int)api.ordering(g, (curandOrdering_t)0); }},
      {"ordering quasi",
       [](const Api &api, curandGenerator_t g) {
         return (int)api.ordering(g, CURAND_ORDERING_QUASI_DEFAULT);
       }},
      {"ordering default",
       [](const Api &api, curandGenerator_t g) {
         return (int)api.ordering(g, CURAND_ORDERING_PSEUDO_DEFAULT);
       }},
      {"bits n 0",
       [](const Api &api, curandGenerator_t g) { return (int)api.bits(g, nullptr, 0); }},
  };
  curandGenerator_t g;
  for (auto &c : calls) {
    int status = -1;
    if (api.create(&g, CURAND_RNG_PSEUDO_XORWOW) == 0)
      status = c.call(api, g), api.destroy(g);
    printf("status %s: %d\n", c.name, status);
  }
  printf("status bad type: %d\n", (int)api.create(&g, (curandRngType_t)7));
  printf("status null generator: %d\n", (int)api.bits(nullptr, nullptr, 4));
  int value = -1;
  int status = curandGetProperty(MAJOR_VERSION, &value);
  printf("property major: %d %d\n", status, value);
  printf(failures ? "FAILED %d\n" : "DONE\n", failures);
  return failures != 0;
}
