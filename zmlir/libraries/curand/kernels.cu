// Our cuRAND's generators: CUDA C++ over NVIDIA's device API (curand_kernel.h),
// compiled to PTX by nvcc when the library is built (build.py) and loaded
// through the driver API by curand.c, so that they run on every backend of
// our driver and on NVIDIA's. The device API's arithmetic (curand_init's
// skip-ahead, Box-Muller through logf and __sincosf) is NVIDIA's own, as
// nvcc compiles it, which is what NVIDIA's host API runs too.
//
// The orderings are those of NVIDIA's host API (CURAND_ORDERING_PSEUDO_DEFAULT),
// measured against libcurand 10.4 (test/libraries/test_curand.py):
//
// XORWOW and MRG32k3a: T states (4096; MRG32k3a's 81920, in the ordering
// CURAND_ORDERING_PSEUDO_LEGACY 4096), state s on subsequence s of the seed. A call's output is
// made of units (one value; for normals and log-normals a Box-Muller pair of values); unit u of a
// call made at offset O (counted in units since the seed was set) comes from state (u + O) mod T,
// each state taking its units in order, and O grows by the call's units.
// States persist between calls: a unit takes as many draws as its value
// needs (double uniforms two 32-bit draws of XORWOW, normal double pairs
// four), whatever the next call's offset assumes. Setting the seed or the
// offset starts states over: state s skips the positions below O that are
// its own, O / T + (s < O mod T). A state's units of a call may be shared
// among threads, each starting from the state skipped ahead (skipahead)
// past the units before its own: the values do not change.
//
// Philox4x32-10: 65536 subsequences, each with a counter that persists
// between calls. Position p = O + element (O counted in elements) lies in
// unit p / 4, lane p mod 4; unit w is subsequence w mod 65536's, which makes
// it from its next Philox block (curand4) for floats (one lane each; normals
// Box-Muller on lanes 0,1 and 2,3), its next two for doubles (two lanes of
// 32 bits each). A unit that a call starts inside of is made from the block
// its position gives (w / 65536) instead; either way the counter then moves
// past the blocks the unit used (a double unit cut short after its second
// value used one). Setting the seed or the offset sets subsequence s's
// counter to the units below ceil(O / 4) that are its own.
//
// Poisson (curandGeneratePoisson), measured against NVIDIA's the same way:
// for lambda below 2000 one 32-bit value per result, laid out as raw bits
// are, looked up in Marsaglia, Tsang and Wang's square histogram
// (_curand_M2_double's arithmetic; curand.c builds the table as NVIDIA's
// curandCreatePoissonDistribution does); from 2000 on
// (unsigned)(sqrt(lambda) * z + lambda + 0.5) of float normals z: XORWOW's and
// MRG32k3a's one curand_normal per unit (the state keeps the second of a
// Box-Muller pair for its next unit, as the device API does, across calls),
// Philox's laid out as its normals are.
#include <curand_kernel.h>

namespace {

constexpr unsigned kPhiloxSubsequences = 65536;

enum Distribution : int {
  kBits = 0,
  kUniform = 1,
  kUniformDouble = 2,
  kNormal = 3,
  kNormalDouble = 4,
  kLogNormal = 5,
  kLogNormalDouble = 6,
  kPoisson = 7,       // lambda < 2000: the square histogram
  kPoissonNormal = 8, // lambda >= 2000: rounded normals
};

// curand.c's struct params.
struct Params {
  float mean, stddev;
  double mean_double, stddev_double;
  double lambda;
  const double *V; // the square histogram (kPoisson)
  const unsigned *K;
  unsigned shift, length;
};

// _curand_M2_double (curand_poisson.h) over our table.
__device__ unsigned poisson_m2(unsigned x, const Params &p) {
  double u = _curand_uniform_double(x);
  int j = (int)floor(p.length * u);
  return u < p.V[j] ? p.shift + j : p.shift + p.K[j];
}

__device__ unsigned poisson_normal(float z, const Params &p) {
  return (unsigned)((sqrt(p.lambda) * z) + p.lambda + 0.5);
}

// The states' first skip at offset O (in units): the positions below O that
// are state s's own.
__device__ unsigned long long first_skip(unsigned s, unsigned long long offset, unsigned count) {
  return offset / count + (s < offset % count ? 1 : 0);
}

template <typename State>
__device__ void init_states(State *states, unsigned long long seed, unsigned long long offset,
                            unsigned count) {
  unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= count)
    return;
  State state;
  curand_init(seed, s, first_skip(s, offset, count), &state);
  states[s] = state;
}

// A pair's two values, element by element: the application's pointer need
// only be aligned to one.
template <typename T>
__device__ void store(void *out, unsigned long long u, T x, T y) {
  ((T *)out)[2 * u] = x;
  ((T *)out)[2 * u + 1] = y;
}

// One unit of a stateful generator's distribution into `out` at unit u.
__device__ void unit(curandStateXORWOW_t *st, int kind, void *out, unsigned long long u,
                     const Params &p) {
  switch (kind) {
  case kPoisson:
    ((unsigned *)out)[u] = poisson_m2(curand(st), p);
    break;
  case kPoissonNormal:
    ((unsigned *)out)[u] = poisson_normal(curand_normal(st), p);
    break;
  case kBits:
    ((unsigned *)out)[u] = curand(st);
    break;
  case kUniform:
    ((float *)out)[u] = curand_uniform(st);
    break;
  case kUniformDouble:
    ((double *)out)[u] = curand_uniform_double(st);
    break;
  case kNormal: {
    float2 v = curand_normal2(st);
    store(out, u, v.x * p.stddev + p.mean, v.y * p.stddev + p.mean);
    break;
  }
  case kLogNormal: {
    float2 v = curand_log_normal2(st, p.mean, p.stddev);
    store(out, u, v.x, v.y);
    break;
  }
  case kNormalDouble: {
    double2 v = curand_normal2_double(st);
    store(out, u, v.x * p.stddev_double + p.mean_double, v.y * p.stddev_double + p.mean_double);
    break;
  }
  case kLogNormalDouble: {
    double2 v = curand_log_normal2_double(st, p.mean_double, p.stddev_double);
    store(out, u, v.x, v.y);
    break;
  }
  }
}

__device__ void unit(curandStateMRG32k3a_t *st, int kind, void *out, unsigned long long u,
                     const Params &p) {
  switch (kind) {
  case kPoisson:
    ((unsigned *)out)[u] = poisson_m2(curand(st), p);
    break;
  case kPoissonNormal:
    ((unsigned *)out)[u] = poisson_normal(curand_normal(st), p);
    break;
  case kBits:
    ((unsigned *)out)[u] = curand(st);
    break;
  case kUniform:
    ((float *)out)[u] = curand_uniform(st);
    break;
  case kUniformDouble:
    ((double *)out)[u] = curand_uniform_double(st);
    break;
  case kNormal: {
    float2 v = curand_normal2(st);
    store(out, u, v.x * p.stddev + p.mean, v.y * p.stddev + p.mean);
    break;
  }
  case kLogNormal: {
    float2 v = curand_log_normal2(st, p.mean, p.stddev);
    store(out, u, v.x, v.y);
    break;
  }
  case kNormalDouble: {
    double2 v = curand_normal2_double(st);
    store(out, u, v.x * p.stddev_double + p.mean_double, v.y * p.stddev_double + p.mean_double);
    break;
  }
  case kLogNormalDouble: {
    double2 v = curand_log_normal2_double(st, p.mean_double, p.stddev_double);
    store(out, u, v.x, v.y);
    break;
  }
  }
}

// 32-bit draws per unit of `kind` (the device API functions unit() calls);
// kPoissonNormal's depend on the state's kept normal: never split (curand.c).
__device__ unsigned draws(const curandStateXORWOW_t *, int kind) {
  return kind == kBits || kind == kUniform || kind == kPoisson ? 1
         : kind == kNormalDouble || kind == kLogNormalDouble   ? 4
                                                               : 2;
}
__device__ unsigned draws(const curandStateMRG32k3a_t *, int kind) {
  return kind == kNormal || kind == kLogNormal || kind == kNormalDouble || kind == kLogNormalDouble
             ? 2
             : 1;
}

// State s's units of a call: u = (s - O) mod T, then every T-th, below n;
// `split` threads share them, thread j taking the j-th run of them from the
// state skipped ahead past the runs before. The states are read from `in`
// and written to `out` (another buffer: a state's last thread may finish
// before its first reads).
template <typename State>
__device__ void generate_units(const State *in, State *states_out, int kind, void *out,
                               unsigned long long units, unsigned long long offset, const Params &p,
                               unsigned count, unsigned split) {
  unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  unsigned s = t % count, j = t / count;
  if (j >= split)
    return;
  unsigned long long u = (s + count - offset % count) % count;
  unsigned long long mine = u < units ? (units - u + count - 1) / count : 0;
  unsigned long long run = (mine + split - 1) / split;
  unsigned long long first = j * run, last = first + run < mine ? first + run : mine;
  if (mine == 0) {
    if (j == 0)
      states_out[s] = in[s];
    return;
  }
  if (first >= last)
    return;
  State state = in[s];
  if (first > 0)
    skipahead(first * draws(&state, kind), &state);
  for (u += first * count; first < last; ++first, u += count)
    unit(&state, kind, out, u, p);
  if (last == mine)
    states_out[s] = state;
}

__device__ double uniform_double(unsigned x, unsigned y) {
  return _curand_uniform_double_hq(x, y);
}

__device__ uint4 philox_block(unsigned long long seed, unsigned s, unsigned long long counter) {
  // curand_init(seed, s, 4 * counter)'s block, as curand4 returns it.
  return curand_Philox4x32_10(make_uint4((unsigned)counter, (unsigned)(counter >> 32), s, 0),
                              make_uint2((unsigned)seed, (unsigned)(seed >> 32)));
}

// A unit's four values from its first block `a` (and for doubles the next).
template <int Kind, typename T>
__device__ void philox_values(unsigned long long seed, unsigned s, unsigned long long at,
                              const Params &p, T v[4]) {
  uint4 a = philox_block(seed, s, at);
  if constexpr (Kind == kBits) {
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
  } else if constexpr (Kind == kPoisson) {
    v[0] = poisson_m2(a.x, p), v[1] = poisson_m2(a.y, p);
    v[2] = poisson_m2(a.z, p), v[3] = poisson_m2(a.w, p);
  } else if constexpr (Kind == kPoissonNormal) {
    float2 x = _curand_box_muller(a.x, a.y), y = _curand_box_muller(a.z, a.w);
    v[0] = poisson_normal(x.x, p), v[1] = poisson_normal(x.y, p);
    v[2] = poisson_normal(y.x, p), v[3] = poisson_normal(y.y, p);
  } else if constexpr (Kind == kUniform) {
    v[0] = _curand_uniform(a.x), v[1] = _curand_uniform(a.y);
    v[2] = _curand_uniform(a.z), v[3] = _curand_uniform(a.w);
  } else if constexpr (Kind == kNormal || Kind == kLogNormal) {
    float2 x = _curand_box_muller(a.x, a.y), y = _curand_box_muller(a.z, a.w);
    v[0] = x.x * p.stddev + p.mean, v[1] = x.y * p.stddev + p.mean;
    v[2] = y.x * p.stddev + p.mean, v[3] = y.y * p.stddev + p.mean;
    if constexpr (Kind == kLogNormal)
      v[0] = expf(v[0]), v[1] = expf(v[1]), v[2] = expf(v[2]), v[3] = expf(v[3]);
  } else {
    uint4 b = philox_block(seed, s, at + 1);
    if constexpr (Kind == kUniformDouble) {
      v[0] = uniform_double(a.x, a.y), v[1] = uniform_double(a.z, a.w);
      v[2] = uniform_double(b.x, b.y), v[3] = uniform_double(b.z, b.w);
    } else {
      double2 x = _curand_box_muller_double(a.x, a.y, a.z, a.w);
      double2 y = _curand_box_muller_double(b.x, b.y, b.z, b.w);
      v[0] = x.x * p.stddev_double + p.mean_double, v[1] = x.y * p.stddev_double + p.mean_double;
      v[2] = y.x * p.stddev_double + p.mean_double, v[3] = y.y * p.stddev_double + p.mean_double;
      if constexpr (Kind == kLogNormalDouble)
        v[0] = exp(v[0]), v[1] = exp(v[1]), v[2] = exp(v[2]), v[3] = exp(v[3]);
    }
  }
}

template <typename T>
__device__ T lane_of(const T v[4], unsigned lane) {
  return lane == 0 ? v[0] : lane == 1 ? v[1] : lane == 2 ? v[2] : v[3];
}

template <int Kind, typename T>
__device__ void philox_units(unsigned long long *counters, void *out, unsigned long long n,
                             unsigned long long offset, unsigned long long seed, const Params &p) {
  constexpr bool doubles = sizeof(T) == 8;
  unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= kPhiloxSubsequences)
    return;
  const unsigned long long first = offset / 4, last = (offset + n - 1) / 4;
  unsigned long long w = first + (s + kPhiloxSubsequences - first % kPhiloxSubsequences) %
                                     kPhiloxSubsequences;
  if (w > last)
    return;
  unsigned long long counter = counters[s];
  for (; w <= last; w += kPhiloxSubsequences) {
    // The lanes of this unit in [offset, offset + n).
    unsigned from = w == first ? offset % 4 : 0;
    unsigned to = w == last ? (offset + n - 1) % 4 : 3;
    // A call that starts inside a unit makes it from the block its position
    // gives; either way the counter moves past the blocks the unit used.
    unsigned long long at = from > 0 ? w / kPhiloxSubsequences : counter;
    counter = at + (doubles && to >= 2 ? 2 : 1);
    T v[4];
    philox_values<Kind, T>(seed, s, at, p, v);
    T *unit = (T *)out + (long long)(w * 4 - offset); // lanes below `from` unused
    if (from == 0 && to == 3) {
      unit[0] = v[0], unit[1] = v[1], unit[2] = v[2], unit[3] = v[3];
    } else {
      for (unsigned lane = from; lane <= to; ++lane)
        unit[lane] = lane_of(v, lane);
    }
  }
  counters[s] = counter;
}

} // namespace

extern "C" {

// MTGP32 (measured against NVIDIA's): 192 states, state b with the header's
// parameter set b (curand_mtgp32dc_p_11213.h), seeded by curand.c as
// curandMakeMTGP32KernelState does. Values come in rounds of 192 x 256: value
// p since the generator's creation is lane p mod 256 of state (p / 256) mod
// 192's round p / (256 * 192), each state's round one device API curand() by
// 256 threads. A call makes every state's rounds up to the last it touches
// (`rounds[b]` were made before, the last of them kept in `last`: a call may
// end inside it); a new seed starts the states over from their first round
// for the rounds not yet made (kept: the rest of the round reached). Every
// distribution but Poisson takes one value per result.
__global__ void zmlir_curand_mtgp32_generate(curandStateMtgp32_t *states, unsigned *last,
                                             unsigned *rounds, int kind, void *out,
                                             unsigned long long n, unsigned long long position,
                                             Params q) {
  const unsigned b = blockIdx.x, t = threadIdx.x, kStates = gridDim.x;
  const unsigned long long per_round = 256ull * kStates;
  unsigned long long r_first = position / per_round, r_end = (position + n - 1) / per_round + 1;
  unsigned done = rounds[b];
  unsigned long long r = done > 0 && done - 1 >= r_first ? done - 1 : done;
  for (; r < r_end; ++r) {
    unsigned v = r < done ? last[b * 256 + t] : curand(&states[b]);
    if (r >= done)
      last[b * 256 + t] = v;
    unsigned long long p = r * per_round + b * 256 + t;
    if (p >= position && p < position + n) {
      unsigned long long u = p - position;
      switch (kind) { // one value each, normals by the inverse CDF
      case kBits:
        ((unsigned *)out)[u] = v;
        break;
      case kUniform:
        ((float *)out)[u] = _curand_uniform(v);
        break;
      case kUniformDouble:
        ((double *)out)[u] = _curand_uniform_double(v);
        break;
      case kNormal:
        ((float *)out)[u] = _curand_normal_icdf(v) * q.stddev + q.mean;
        break;
      case kLogNormal:
        ((float *)out)[u] = expf(_curand_normal_icdf(v) * q.stddev + q.mean);
        break;
      case kNormalDouble:
        ((double *)out)[u] = _curand_normal_icdf_double(v) * q.stddev_double + q.mean_double;
        break;
      case kLogNormalDouble:
        ((double *)out)[u] = exp(_curand_normal_icdf_double(v) * q.stddev_double + q.mean_double);
        break;
      }
    }
  }
  __syncthreads();
  if (t == 0 && r_end > done)
    rounds[b] = (unsigned)r_end;
}

__global__ void zmlir_curand_xorwow_init(curandStateXORWOW_t *states, unsigned long long seed,
                                         unsigned long long offset, unsigned count) {
  init_states(states, seed, offset, count);
}

__global__ void zmlir_curand_xorwow_generate(const curandStateXORWOW_t *in,
                                             curandStateXORWOW_t *states, int kind, void *out,
                                             unsigned long long units, unsigned long long offset,
                                             Params p, unsigned split, unsigned count) {
  generate_units(in, states, kind, out, units, offset, p, count, split);
}

__global__ void zmlir_curand_mrg32k3a_init(curandStateMRG32k3a_t *states, unsigned long long seed,
                                           unsigned long long offset, unsigned count) {
  init_states(states, seed, offset, count);
}

__global__ void zmlir_curand_mrg32k3a_generate(const curandStateMRG32k3a_t *in,
                                               curandStateMRG32k3a_t *states, int kind, void *out,
                                               unsigned long long units, unsigned long long offset,
                                               Params p, unsigned split, unsigned count) {
  generate_units(in, states, kind, out, units, offset, p, count, split);
}

__global__ void zmlir_curand_philox_init(unsigned long long *counters, unsigned long long offset) {
  unsigned s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s < kPhiloxSubsequences)
    counters[s] = first_skip(s, (offset + 3) / 4, kPhiloxSubsequences);
}

// Philox: thread s makes subsequence s's units of the call, in order.
__global__ void zmlir_curand_philox_generate(unsigned long long *counters, int kind, void *out,
                                             unsigned long long n, unsigned long long offset,
                                             unsigned long long seed, Params p) {
  switch (kind) {
  case kBits:
    return philox_units<kBits, unsigned>(counters, out, n, offset, seed, p);
  case kUniform:
    return philox_units<kUniform, float>(counters, out, n, offset, seed, p);
  case kNormal:
    return philox_units<kNormal, float>(counters, out, n, offset, seed, p);
  case kLogNormal:
    return philox_units<kLogNormal, float>(counters, out, n, offset, seed, p);
  case kUniformDouble:
    return philox_units<kUniformDouble, double>(counters, out, n, offset, seed, p);
  case kNormalDouble:
    return philox_units<kNormalDouble, double>(counters, out, n, offset, seed, p);
  case kLogNormalDouble:
    return philox_units<kLogNormalDouble, double>(counters, out, n, offset, seed, p);
  case kPoisson:
    return philox_units<kPoisson, unsigned>(counters, out, n, offset, seed, p);
  case kPoissonNormal:
    return philox_units<kPoissonNormal, unsigned>(counters, out, n, offset, seed, p);
  }
}

} // extern "C"
