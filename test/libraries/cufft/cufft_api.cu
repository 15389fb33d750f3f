// cuFFT through whichever libcufft.so.12 is loaded (ours under `zmlir run`,
// NVIDIA's on a GPU): plans of every kind, C2C/Z2Z/R2C/C2R/D2Z/Z2D in 1-D to
// 3-D, batched, in place and out of place, the basic layout (in-place real
// arrays padded to 2(n/2+1)) and advanced ones (inembed/istride/idist), a
// plan's stream ordered after a kernel, a captured transform replayed by a
// graph, cufftXt, the status of refused plans and of cufftXtSetGPUs; each
// transform checked against a direct DFT in double. Prints
// "PASS <case>" or "FAIL <case>: <why>", "NOTE <what>: <status>" for answers
// not asserted; exits non-zero on any failure. With the argument
// "unsupported", also asks for a plan zmlir does not make.
#include <cuda_runtime.h>
#include <cufft.h>
#include <cufftXt.h>

#include "../check.h"

#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

typedef std::complex<double> cd;

static int failures = 0;

static void verdict(const char *name, double error, double tolerance) {
  if (error <= tolerance) {
    printf("PASS %s\n", name);
  } else {
    printf("FAIL %s: relative error %.3g > %.3g\n", name, error, tolerance);
    ++failures;
  }
}

static void expect(const char *name, cufftResult got, cufftResult want) {
  if (got == want) {
    printf("PASS %s\n", name);
  } else {
    printf("FAIL %s: status %d, expected %d\n", name, (int)got, (int)want);
    ++failures;
  }
}

static double frand(unsigned &state) {
  state = state * 1664525u + 1013904223u;
  return ((state >> 8) & 0xffff) / 32768.0 - 1.0;
}

// The direct DFT of a contiguous row-major array of dims n[0..rank-1]:
// out[k] = sum_j in[j] exp(sign 2 pi i sum_d j_d k_d / n_d).
static std::vector<cd> dft(int rank, const int *n, const std::vector<cd> &in, int sign) {
  size_t total = 1;
  for (int d = 0; d < rank; ++d)
    total *= n[d];
  std::vector<cd> out(total);
  for (size_t k = 0; k < total; ++k) {
    cd sum = 0;
    for (size_t j = 0; j < total; ++j) {
      double phase = 0;
      size_t kk = k, jj = j;
      for (int d = rank - 1; d >= 0; --d) {
        phase += (double)((kk % n[d]) * (jj % n[d]) % n[d]) / n[d];
        kk /= n[d], jj /= n[d];
      }
      sum += in[j] * std::polar(1.0, sign * 2 * M_PI * phase);
    }
    out[k] = sum;
  }
  return out;
}

static double relative_error(const std::vector<cd> &got, const std::vector<cd> &want) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    err = fmax(err, std::abs(got[i] - want[i]));
    scale = fmax(scale, std::abs(want[i]));
  }
  return err / (scale > 0 ? scale : 1);
}

// One side of a transform: where element (b, x0..x_{r-1}) is, in elements;
// `embed` the advanced layout's (embed[0] unused), else contiguous `dims`.
struct Side {
  int rank;
  int dims[3];
  const int *embed;
  int stride, dist;
  size_t at(int b, const int *x) const {
    size_t offset = 0;
    for (int d = 0; d < rank; ++d)
      offset = offset * (embed ? embed[d] : dims[d]) + x[d];
    if (!embed) {
      size_t per = 1;
      for (int d = 0; d < rank; ++d)
        per *= dims[d];
      return b * per + offset;
    }
    return (size_t)b * dist + offset * stride;
  }
  // Visits each (b, x) of `shape`, in row-major order.
  template <typename F>
  void each(const int *shape, int batch, F f) const {
    int x[3] = {0, 0, 0};
    size_t total = 1;
    for (int d = 0; d < rank; ++d)
      total *= shape[d];
    for (int b = 0; b < batch; ++b)
      for (size_t i = 0; i < total; ++i) {
        size_t rest = i;
        for (int d = rank - 1; d >= 0; --d)
          x[d] = rest % shape[d], rest /= shape[d];
        f(b, x, i);
      }
  }
};

template <typename R>
struct Types;
template <>
struct Types<float> {
  typedef cufftComplex C;
  static constexpr cufftType c2c = CUFFT_C2C, r2c = CUFFT_R2C, c2r = CUFFT_C2R;
  static constexpr double tol = 2e-5;
  static cufftResult exec_c2c(cufftHandle p, void *i, void *o, int d) {
    return cufftExecC2C(p, (C *)i, (C *)o, d);
  }
  static cufftResult exec_r2c(cufftHandle p, void *i, void *o) {
    return cufftExecR2C(p, (float *)i, (C *)o);
  }
  static cufftResult exec_c2r(cufftHandle p, void *i, void *o) {
    return cufftExecC2R(p, (C *)i, (float *)o);
  }
};
template <>
struct Types<double> {
  typedef cufftDoubleComplex C;
  static constexpr cufftType c2c = CUFFT_Z2Z, r2c = CUFFT_D2Z, c2r = CUFFT_Z2D;
  static constexpr double tol = 1e-12;
  static cufftResult exec_c2c(cufftHandle p, void *i, void *o, int d) {
    return cufftExecZ2Z(p, (C *)i, (C *)o, d);
  }
  static cufftResult exec_r2c(cufftHandle p, void *i, void *o) {
    return cufftExecD2Z(p, (double *)i, (C *)o);
  }
  static cufftResult exec_c2r(cufftHandle p, void *i, void *o) {
    return cufftExecZ2D(p, (C *)i, (double *)o);
  }
};

enum Kind { C2C_FORWARD, C2C_INVERSE, R2C, C2R };

// A transform of `kind` described as cufftPlanMany takes it; in place when
// `in_place` (then both sides share one array, sized for the larger).
struct Plan {
  const char *name;
  Kind kind;
  int rank;
  int n[3];
  int batch;
  bool in_place;
  const int *inembed;
  int istride, idist;
  const int *onembed;
  int ostride, odist;
};

template <typename R>
static void run(const Plan &p, bool make_plan_api = false) {
  typedef Types<R> T;
  bool real_in = p.kind == R2C, real_out = p.kind == C2R;
  bool real = real_in || real_out;
  int last = p.rank - 1;
  // The logical shapes: the complex side of a real transform has n/2+1 in
  // the last dimension.
  int half[3];
  memcpy(half, p.n, sizeof half);
  if (real)
    half[last] = p.n[last] / 2 + 1;
  int real_dims[3];
  memcpy(real_dims, p.n, sizeof real_dims);
  if (real && p.in_place && !p.inembed)
    real_dims[last] = 2 * half[last];
  Side in{p.rank, {0, 0, 0}, p.inembed, p.istride, p.idist};
  Side out{p.rank, {0, 0, 0}, p.onembed, p.ostride, p.odist};
  memcpy(in.dims, real_in ? real_dims : (real ? half : p.n), sizeof in.dims);
  memcpy(out.dims, real_out ? real_dims : (real ? half : p.n), sizeof out.dims);
  const int *in_shape = real_out ? half : p.n, *out_shape = real_in ? half : p.n;

  // Element counts of each side's array (its largest offset + 1), in R or C.
  size_t in_count = 0, out_count = 0;
  in.each(in_shape, p.batch,
          [&](int b, const int *x, size_t) { in_count = std::max(in_count, in.at(b, x) + 1); });
  out.each(out_shape, p.batch,
           [&](int b, const int *x, size_t) { out_count = std::max(out_count, out.at(b, x) + 1); });
  size_t in_bytes = in_count * (real_in ? sizeof(R) : 2 * sizeof(R));
  size_t out_bytes = out_count * (real_out ? sizeof(R) : 2 * sizeof(R));

  // Input: random, and for C2R the R2C of random real data (Hermitian).
  unsigned seed = 7;
  size_t per_in = 1, per_real = 1;
  for (int d = 0; d < p.rank; ++d)
    per_in *= in_shape[d], per_real *= p.n[d];
  std::vector<std::vector<cd>> logical_in(p.batch);
  for (int b = 0; b < p.batch; ++b) {
    if (p.kind == C2R) {
      std::vector<cd> x(per_real);
      for (auto &v : x)
        v = frand(seed);
      std::vector<cd> full = dft(p.rank, p.n, x, -1);
      for (size_t i = 0; i < per_in; ++i) { // keep the non-redundant half
        size_t rest = i, flat = 0;
        int idx[3];
        for (int d = last; d >= 0; --d)
          idx[d] = rest % half[d], rest /= half[d];
        for (int d = 0; d < p.rank; ++d)
          flat = flat * p.n[d] + idx[d];
        logical_in[b].push_back(full[flat]);
      }
    } else {
      for (size_t i = 0; i < per_in; ++i)
        logical_in[b].push_back(real_in ? cd(frand(seed), 0) : cd(frand(seed), frand(seed)));
    }
  }
  std::vector<R> host_in(std::max(in_bytes, p.in_place ? out_bytes : 0) / sizeof(R), (R)-99);
  in.each(in_shape, p.batch, [&](int b, const int *x, size_t i) {
    size_t at = in.at(b, x);
    if (real_in) {
      host_in[at] = (R)logical_in[b][i].real();
    } else {
      host_in[2 * at] = (R)logical_in[b][i].real();
      host_in[2 * at + 1] = (R)logical_in[b][i].imag();
    }
  });

  void *d_in, *d_out;
  size_t bytes = std::max(in_bytes, out_bytes);
  CHECK(cudaMalloc(&d_in, p.in_place ? bytes : in_bytes));
  CHECK(cudaMemcpy(d_in, host_in.data(), host_in.size() * sizeof(R), cudaMemcpyHostToDevice));
  if (p.in_place) {
    d_out = d_in;
  } else {
    CHECK(cudaMalloc(&d_out, out_bytes));
    CHECK(cudaMemset(d_out, 0, out_bytes));
  }
  cufftType type = p.kind == R2C ? T::r2c : p.kind == C2R ? T::c2r : T::c2c;
  cufftHandle plan;
  int n[3] = {p.n[0], p.n[1], p.n[2]};
  if (make_plan_api) {
    size_t work = 1234;
    CHECK(cufftCreate(&plan));
    CHECK(cufftSetAutoAllocation(plan, 0));
    CHECK(cufftMakePlanMany(plan, p.rank, n, (int *)p.inembed, p.istride, p.idist, (int *)p.onembed,
                            p.ostride, p.odist, type, p.batch, &work));
    size_t queried = 4321;
    CHECK(cufftGetSize(plan, &queried));
    if (queried != work)
      printf("FAIL %s: cufftGetSize %zu != cufftMakePlanMany's %zu\n", p.name, queried, work),
          ++failures;
    void *area = NULL;
    CHECK(cudaMalloc(&area, work ? work : 1));
    CHECK(cufftSetWorkArea(plan, area));
  } else if (p.inembed == NULL && p.batch == 1 && p.rank == 2) {
    CHECK(cufftPlan2d(&plan, n[0], n[1], type));
  } else if (p.inembed == NULL && p.batch == 1 && p.rank == 3) {
    CHECK(cufftPlan3d(&plan, n[0], n[1], n[2], type));
  } else if (p.inembed == NULL && p.rank == 1) {
    CHECK(cufftPlan1d(&plan, n[0], type, p.batch));
  } else {
    CHECK(cufftPlanMany(&plan, p.rank, n, (int *)p.inembed, p.istride, p.idist, (int *)p.onembed,
                        p.ostride, p.odist, type, p.batch));
  }
  switch (p.kind) {
  case C2C_FORWARD:
    CHECK(T::exec_c2c(plan, d_in, d_out, CUFFT_FORWARD));
    break;
  case C2C_INVERSE:
    CHECK(T::exec_c2c(plan, d_in, d_out, CUFFT_INVERSE));
    break;
  case R2C:
    CHECK(T::exec_r2c(plan, d_in, d_out));
    break;
  case C2R:
    CHECK(T::exec_c2r(plan, d_in, d_out));
    break;
  }
  std::vector<R> host_out(out_bytes / sizeof(R));
  CHECK(cudaMemcpy(host_out.data(), d_out, out_bytes, cudaMemcpyDeviceToHost));
  CHECK(cufftDestroy(plan));

  // The reference: the full DFT of each batch's logical input, its
  // non-redundant half for R2C, real for C2R.
  double worst = 0;
  for (int b = 0; b < p.batch; ++b) {
    std::vector<cd> full_in(per_real);
    if (p.kind == C2R) { // extend the half by Hermitian symmetry
      for (size_t i = 0; i < per_real; ++i) {
        size_t rest = i;
        int idx[3], mirror[3];
        for (int d = last; d >= 0; --d)
          idx[d] = rest % p.n[d], rest /= p.n[d];
        bool conj = idx[last] >= half[last];
        for (int d = 0; d < p.rank; ++d)
          mirror[d] = conj ? (p.n[d] - idx[d]) % p.n[d] : idx[d];
        size_t flat = 0;
        for (int d = 0; d < p.rank; ++d)
          flat = flat * half[d] + mirror[d];
        full_in[i] = conj ? std::conj(logical_in[b][flat]) : logical_in[b][flat];
      }
    } else {
      full_in = logical_in[b];
    }
    int sign = p.kind == C2C_INVERSE || p.kind == C2R ? 1 : -1;
    std::vector<cd> full = dft(p.rank, p.n, full_in, sign);
    std::vector<cd> want, got;
    out.each(out_shape, 1, [&](int, const int *x, size_t) {
      size_t flat = 0;
      for (int d = 0; d < p.rank; ++d)
        flat = flat * p.n[d] + x[d];
      want.push_back(p.kind == C2R ? cd(full[flat].real(), 0) : full[flat]);
      size_t at = out.at(b, x);
      got.push_back(real_out ? cd(host_out[at], 0) : cd(host_out[2 * at], host_out[2 * at + 1]));
    });
    worst = fmax(worst, relative_error(got, want));
  }
  verdict(p.name, worst, T::tol);
  CHECK(cudaFree(d_in));
  if (!p.in_place)
    CHECK(cudaFree(d_out));
}

__global__ void fill(float2 *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] = make_float2((float)(i % 7) - 3, (float)(i % 5) * 0.5f);
}

// A plan in a stream of its own runs after the kernel that writes its input
// there, and before the copy enqueued after it.
static void stream_order() {
  const int n = 4096;
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float2 *d;
  CHECK(cudaMalloc(&d, n * sizeof(float2)));
  CHECK(cudaMemset(d, 0, n * sizeof(float2)));
  cufftHandle plan;
  CHECK(cufftPlan1d(&plan, n, CUFFT_C2C, 1));
  CHECK(cufftSetStream(plan, stream));
  fill<<<n / 256, 256, 0, stream>>>(d, n);
  CHECK(cufftExecC2C(plan, (cufftComplex *)d, (cufftComplex *)d, CUFFT_FORWARD));
  std::vector<float2> host(n);
  CHECK(cudaMemcpyAsync(host.data(), d, n * sizeof(float2), cudaMemcpyDeviceToHost, stream));
  CHECK(cudaStreamSynchronize(stream));
  // The input is periodic: i % 7 and i % 5 over 4096 points; check three bins.
  std::vector<cd> x(n);
  for (int i = 0; i < n; ++i)
    x[i] = cd((double)(i % 7) - 3, (i % 5) * 0.5);
  double worst = 0, scale = 0;
  for (int k : {0, 1, 2047, 4095}) {
    cd sum = 0;
    for (int i = 0; i < n; ++i)
      sum += x[i] * std::polar(1.0, -2 * M_PI * ((double)((long long)i * k % n) / n));
    worst = fmax(worst, std::abs(cd(host[k].x, host[k].y) - sum));
    scale = fmax(scale, std::abs(sum));
  }
  verdict("stream order: kernel, C2C, copy in one stream", worst / scale, 2e-5);
  CHECK(cufftDestroy(plan));
  CHECK(cudaFree(d));
  CHECK(cudaStreamDestroy(stream));
}

// A transform captured into a graph runs at each launch: two launches of an
// in-place forward C2C give F(F(x))[j] = n x[-j mod n].
static void graph_replay() {
  const int n = 40;
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::vector<float2> x(n), host(n);
  unsigned seed = 11;
  for (auto &v : x)
    v = make_float2((float)frand(seed), (float)frand(seed));
  float2 *d;
  CHECK(cudaMalloc(&d, n * sizeof(float2)));
  CHECK(cudaMemcpy(d, x.data(), n * sizeof(float2), cudaMemcpyHostToDevice));
  cufftHandle plan;
  CHECK(cufftPlan1d(&plan, n, CUFFT_C2C, 1));
  CHECK(cufftSetStream(plan, stream));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  CHECK(cufftExecC2C(plan, (cufftComplex *)d, (cufftComplex *)d, CUFFT_FORWARD));
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaMemcpy(host.data(), d, n * sizeof(float2), cudaMemcpyDeviceToHost));
  std::vector<cd> got(n), want(n);
  for (int j = 0; j < n; ++j) {
    got[j] = cd(host[j].x, host[j].y);
    want[j] = (double)n * cd(x[(n - j) % n].x, x[(n - j) % n].y);
  }
  verdict("graph: a captured C2C replayed twice", relative_error(got, want), 2e-5);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cufftDestroy(plan));
  CHECK(cudaFree(d));
  CHECK(cudaStreamDestroy(stream));
}

// cufftXt: the same transforms described by their data types.
static void xt() {
  const long long n = 48;
  cufftHandle plan;
  size_t work = 0;
  std::vector<cd> x(n);
  unsigned seed = 3;
  for (auto &v : x)
    v = cd(frand(seed), frand(seed));
  std::vector<float2> host(n);
  for (int i = 0; i < n; ++i)
    host[i] = make_float2((float)x[i].real(), (float)x[i].imag());
  float2 *d;
  CHECK(cudaMalloc(&d, n * sizeof(float2)));
  CHECK(cudaMemcpy(d, host.data(), n * sizeof(float2), cudaMemcpyHostToDevice));
  CHECK(cufftCreate(&plan));
  long long dims[1] = {n};
  CHECK(cufftXtMakePlanMany(plan, 1, dims, NULL, 1, 0, CUDA_C_32F, NULL, 1, 0, CUDA_C_32F, 1, &work,
                            CUDA_C_32F));
  CHECK(cufftXtExec(plan, d, d, CUFFT_INVERSE));
  CHECK(cudaMemcpy(host.data(), d, n * sizeof(float2), cudaMemcpyDeviceToHost));
  std::vector<cd> got(n);
  for (int i = 0; i < n; ++i)
    got[i] = cd(host[i].x, host[i].y);
  int dim = (int)n;
  verdict("cufftXtExec C2C f32 inverse in place", relative_error(got, dft(1, &dim, x, 1)), 2e-5);
  CHECK(cufftDestroy(plan));

  // D2Z through cufftXt, batch 2, out of place.
  std::vector<double> real(2 * n);
  for (auto &v : real)
    v = frand(seed);
  double *dr;
  double2 *dc;
  CHECK(cudaMalloc(&dr, real.size() * sizeof(double)));
  CHECK(cudaMalloc(&dc, 2 * (n / 2 + 1) * sizeof(double2)));
  CHECK(cudaMemcpy(dr, real.data(), real.size() * sizeof(double), cudaMemcpyHostToDevice));
  CHECK(cufftCreate(&plan));
  CHECK(cufftXtMakePlanMany(plan, 1, dims, NULL, 1, 0, CUDA_R_64F, NULL, 1, 0, CUDA_C_64F, 2, &work,
                            CUDA_C_64F));
  CHECK(cufftXtExec(plan, dr, dc, CUFFT_FORWARD));
  std::vector<double2> out(2 * (n / 2 + 1));
  CHECK(cudaMemcpy(out.data(), dc, out.size() * sizeof(double2), cudaMemcpyDeviceToHost));
  double worst = 0;
  for (int b = 0; b < 2; ++b) {
    std::vector<cd> in(n), want, have;
    for (int i = 0; i < n; ++i)
      in[i] = real[b * n + i];
    std::vector<cd> full = dft(1, &dim, in, -1);
    for (int k = 0; k <= n / 2; ++k) {
      want.push_back(full[k]);
      have.push_back(cd(out[b * (n / 2 + 1) + k].x, out[b * (n / 2 + 1) + k].y));
    }
    worst = fmax(worst, relative_error(have, want));
  }
  verdict("cufftXtExec D2Z batched", worst, 1e-12);
  CHECK(cufftDestroy(plan));
  CHECK(cudaFree(d));
  CHECK(cudaFree(dr));
  CHECK(cudaFree(dc));
}

// cufftXtSetGPUs as NVIDIA's cuFFT 12.0 answers it on one device (on our
// driver): the handle first, then the count, then each device.
static void xt_set_gpus() {
  int devices = 0;
  CHECK(cudaGetDeviceCount(&devices));
  int one[1] = {0}, beyond[2] = {0, devices}, negative[2] = {-1, 0};
  cufftHandle plan;
  expect("cufftXtSetGPUs of no plan is CUFFT_INVALID_PLAN", cufftXtSetGPUs(987654, 2, beyond),
         CUFFT_INVALID_PLAN);
  CHECK(cufftCreate(&plan));
  expect("cufftXtSetGPUs of one GPU is CUFFT_INVALID_VALUE", cufftXtSetGPUs(plan, 1, one),
         CUFFT_INVALID_VALUE);
  expect("cufftXtSetGPUs of no list is CUFFT_INVALID_VALUE", cufftXtSetGPUs(plan, 2, NULL),
         CUFFT_INVALID_VALUE);
  expect("cufftXtSetGPUs of a device past the last is CUFFT_INVALID_DEVICE",
         cufftXtSetGPUs(plan, 2, beyond), CUFFT_INVALID_DEVICE);
  expect("cufftXtSetGPUs of device -1 is CUFFT_INVALID_DEVICE", cufftXtSetGPUs(plan, 2, negative),
         CUFFT_INVALID_DEVICE);
  CHECK(cufftDestroy(plan));
  size_t work = 0;
  CHECK(cufftCreate(&plan));
  CHECK(cufftMakePlan1d(plan, 16, CUFFT_C2C, 1, &work));
  expect("cufftXtSetGPUs of a made plan is CUFFT_INVALID_PLAN", cufftXtSetGPUs(plan, 2, beyond),
         CUFFT_INVALID_PLAN);
  CHECK(cufftDestroy(plan));
}

static void statuses() {
  cufftHandle plan;
  expect("cufftPlan1d nx=0 is CUFFT_INVALID_SIZE", cufftPlan1d(&plan, 0, CUFFT_C2C, 1),
         CUFFT_INVALID_SIZE);
  expect("cufftPlan2d nx=-4 is CUFFT_INVALID_SIZE", cufftPlan2d(&plan, -4, 8, CUFFT_R2C),
         CUFFT_INVALID_SIZE);
  int n4[4] = {2, 2, 2, 2};
  expect("cufftPlanMany rank 4 is CUFFT_INVALID_VALUE",
         cufftPlanMany(&plan, 4, n4, NULL, 1, 0, NULL, 1, 0, CUFFT_C2C, 1), CUFFT_INVALID_VALUE);
  expect("cufftDestroy of no plan is CUFFT_INVALID_PLAN", cufftDestroy(987654), CUFFT_INVALID_PLAN);
  int version = 0;
  CHECK(cufftGetVersion(&version));
  int major = 0, minor = -1;
  CHECK(cufftGetProperty(MAJOR_VERSION, &major));
  CHECK(cufftGetProperty(MINOR_VERSION, &minor));
  if (version / 1000 == CUFFT_VER_MAJOR && major == CUFFT_VER_MAJOR)
    printf("PASS cufftGetVersion %d, major %d, minor %d\n", version, major, minor);
  else
    printf("FAIL cufftGetVersion %d, major %d\n", version, major), ++failures;
  size_t work = 1;
  expect("cufftEstimate1d", cufftEstimate1d(1024, CUFFT_C2C, 4, &work), CUFFT_SUCCESS);
  // An H200's cuFFT 12.0.0.61 answers these so.
  expect("cufftPlan1d batch=0 is CUFFT_INVALID_SIZE", cufftPlan1d(&plan, 16, CUFFT_C2C, 0),
         CUFFT_INVALID_SIZE);
  expect("cufftPlan1d type 0x7f is CUFFT_INVALID_TYPE",
         cufftPlan1d(&plan, 16, (cufftType)0x7f, 1), CUFFT_INVALID_TYPE);
  CHECK(cufftPlan1d(&plan, 16, CUFFT_R2C, 1));
  float *d;
  CHECK(cudaMalloc(&d, 64 * sizeof(float)));
  // NVIDIA's answers CUFFT_SUCCESS (and computes nothing defined); ours refuses.
  printf("NOTE cufftExecC2C on an R2C plan: %d\n",
         (int)cufftExecC2C(plan, (cufftComplex *)d, (cufftComplex *)d, CUFFT_FORWARD));
  CHECK(cufftDestroy(plan));
  CHECK(cufftPlan1d(&plan, 16, CUFFT_C2C, 1));
  expect("cufftExecC2C direction 0 is CUFFT_INVALID_VALUE",
         cufftExecC2C(plan, (cufftComplex *)d, (cufftComplex *)d, 0), CUFFT_INVALID_VALUE);
  CHECK(cufftDestroy(plan));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(d));
}

int main(int argc, char **argv) {
  cufftHandle first; // a plan before anything else: where cuFFT is refused, this says so
  CHECK(cufftPlan1d(&first, 8, CUFFT_C2C, 1));
  CHECK(cufftDestroy(first));
  static const int in_2d[2] = {6, 10}, out_2d[2] = {6, 5};
  static const int in_1d[1] = {20}, out_1d[1] = {16};
  static const int pad_3d[3] = {4, 6, 10}, half_3d[3] = {4, 6, 5};
  const Plan single[] = {
      {"C2C 1-D n=64 batch 3", C2C_FORWARD, 1, {64}, 3, false, NULL, 1, 0, NULL, 1, 0},
      {"C2C 1-D n=64 batch 3 inverse", C2C_INVERSE, 1, {64}, 3, false, NULL, 1, 0, NULL, 1, 0},
      {"C2C 1-D n=1000 in place", C2C_FORWARD, 1, {1000}, 1, true, NULL, 1, 0, NULL, 1, 0},
      {"C2C 2-D 12x10 inverse", C2C_INVERSE, 2, {12, 10}, 1, false, NULL, 1, 0, NULL, 1, 0},
      {"C2C 3-D 4x6x5 in place", C2C_FORWARD, 3, {4, 6, 5}, 1, true, NULL, 1, 0, NULL, 1, 0},
      {"R2C 1-D n=30 batch 2", R2C, 1, {30}, 2, false, NULL, 1, 0, NULL, 1, 0},
      {"R2C 1-D n=16 batch 2 in place (padded)", R2C, 1, {16}, 2, true, NULL, 1, 0, NULL, 1, 0},
      {"R2C 2-D 8x12 in place (padded)", R2C, 2, {8, 12}, 1, true, NULL, 1, 0, NULL, 1, 0},
      {"C2R 1-D n=30 batch 2", C2R, 1, {30}, 2, false, NULL, 1, 0, NULL, 1, 0},
      {"C2R 2-D 6x9 in place (padded)", C2R, 2, {6, 9}, 1, true, NULL, 1, 0, NULL, 1, 0},
      {"C2C advanced istride 2 idist 40",
       C2C_FORWARD,
       1,
       {16},
       3,
       false,
       in_1d,
       2,
       40,
       out_1d,
       1,
       16},
      {"R2C 2-D advanced embeds batch 2", R2C, 2, {6, 8}, 2, false, in_2d, 1, 60, out_2d, 1, 30},
      {"C2R 2-D advanced embeds batch 2", C2R, 2, {6, 8}, 2, false, out_2d, 1, 30, in_2d, 1, 60},
      {"R2C 3-D advanced in place", R2C, 3, {4, 6, 8}, 1, true, pad_3d, 1, 240, half_3d, 1, 120},
  };
  for (const Plan &p : single)
    run<float>(p);
  const Plan twice[] = {
      {"Z2Z 2-D 12x10", C2C_FORWARD, 2, {12, 10}, 1, false, NULL, 1, 0, NULL, 1, 0},
      {"Z2Z 1-D n=81 batch 2 inverse in place",
       C2C_INVERSE,
       1,
       {81},
       2,
       true,
       NULL,
       1,
       0,
       NULL,
       1,
       0},
      {"D2Z 3-D 4x6x8", R2C, 3, {4, 6, 8}, 1, false, NULL, 1, 0, NULL, 1, 0},
      {"Z2D 3-D 4x6x8 in place (padded)", C2R, 3, {4, 6, 8}, 1, true, NULL, 1, 0, NULL, 1, 0},
      {"D2Z 1-D n=17 batch 3", R2C, 1, {17}, 3, false, NULL, 1, 0, NULL, 1, 0},
  };
  for (const Plan &p : twice)
    run<double>(p);
  const Plan made = {"cufftCreate+cufftMakePlanMany C2C 2-D 16x8 batch 2",
                     C2C_FORWARD,
                     2,
                     {16, 8},
                     2,
                     false,
                     NULL,
                     1,
                     0,
                     NULL,
                     1,
                     0};
  run<float>(made, true);
  stream_order();
  graph_replay();
  xt();
  statuses();
  xt_set_gpus();
  if (argc > 1 && strcmp(argv[1], "unsupported") == 0) {
    // Device 0 twice: NVIDIA's splits the plan in two on one GPU; ours does not.
    int gpus[2] = {0, 0};
    cufftHandle plan;
    CHECK(cufftCreate(&plan));
    expect("unsupported: cufftXtSetGPUs is CUFFT_NOT_SUPPORTED", cufftXtSetGPUs(plan, 2, gpus),
           CUFFT_NOT_SUPPORTED);
    CHECK(cufftDestroy(plan));
  }
  printf("%s\n", failures ? "FAILED" : "ALL PASSED");
  return failures ? 1 : 0;
}
