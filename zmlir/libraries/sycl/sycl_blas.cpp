// libzmlir_sycl_blas.so: oneMKL's SYCL BLAS on the device our driver already
// runs on, for our libcublas's GEMMs under ZMLIR_LIBRARY_ROUTE=sycl
// (cublas/engine.c; docs/library-backends.md).
//
// Host code only, built with the host C++ compiler against Intel's SYCL
// headers (the intel-sycl-rt wheel) and oneMKL's (onemkl-sycl-include): it
// defines no kernel of its own, so it needs no SYCL compiler. The SYCL
// context is made from the backend's own native context (interop), so the
// application's device pointers (our driver's USM allocations in that
// context) are USM pointers of the SYCL context too; the queue is a new one
// in that context, waited on inside the job that runs the GEMM in stream
// order. On the OpenCL backend that is backend::opencl; a Level Zero device
// would take the same path with backend::ext_oneapi_level_zero (not built
// here: no Level Zero device, no Level Zero headers).
#include <oneapi/mkl/blas.hpp>
#include <sycl/sycl.hpp>

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unistd.h>

#ifndef ZMLIR_SYCL_LIBDIR
#error "build.py defines ZMLIR_SYCL_LIBDIR (where libur_adapter_opencl.so.0 is)"
#endif

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::unique_ptr<sycl::queue> queue;

void say(char *why, size_t size, const char *format, ...) {
  if (!why || !size)
    return;
  va_list args;
  va_start(args, format);
  vsnprintf(why, size, format, args);
  va_end(args);
}

oneapi::mkl::transpose op(int cublas_op) {
  // cublasOperation_t: N 0, T 1, C 2.
  return cublas_op == 0   ? oneapi::mkl::transpose::nontrans
         : cublas_op == 1 ? oneapi::mkl::transpose::trans
                          : oneapi::mkl::transpose::conjtrans;
}

} // namespace

// A queue on the backend's device in its own context. `handles`: the
// backend's native platform, device and context (export_slots.py,
// libraries_native_handles). 0 on success, else why in `why`.
EXPORT int zmlir_sycl_open(const char *backend, void *const *handles, size_t count, char *why,
                           size_t size) {
  if (queue)
    return 0; // opened by libcublas or libcublasLt before
  if (std::strcmp(backend, "opencl") != 0) {
    say(why, size, "no SYCL interop with the %s backend", backend);
    return 1;
  }
  if (count < 3 || !handles[1] || !handles[2]) {
    say(why, size, "the driver gave no OpenCL device and context");
    return 1;
  }
  // Unified Runtime 2026's wheel has no OpenCL adapter; 2025.3's (same
  // interface, 0.12) beside us. Only it: the backend is OpenCL.
  std::string adapter = std::string(ZMLIR_SYCL_LIBDIR) + "/libur_adapter_opencl.so.0";
  if (!std::getenv("UR_ADAPTERS_FORCE_LOAD") && access(adapter.c_str(), R_OK) == 0)
    setenv("UR_ADAPTERS_FORCE_LOAD", adapter.c_str(), 0);
  try {
    auto device = sycl::make_device<sycl::backend::opencl>(static_cast<cl_device_id>(handles[1]));
    auto context = sycl::make_context<sycl::backend::opencl>(static_cast<cl_context>(handles[2]));
    queue = std::make_unique<sycl::queue>(context, device, sycl::property::queue::in_order{});
  } catch (const std::exception &err) {
    say(why, size, "SYCL interop with the OpenCL context failed: %s", err.what());
    return 1;
  }
  return 0;
}

// The queue's device, for the log.
EXPORT const char *zmlir_sycl_device(void) {
  static std::string name;
  if (queue && name.empty())
    name = queue->get_device().get_info<sycl::info::device::name>();
  return name.c_str();
}

// C = alpha op(A) op(B) + beta C, column-major, on the queue; returns once
// done. 0 on success, else why in `why` (C may be partly written).
EXPORT int zmlir_sycl_sgemm(int transa, int transb, int64_t m, int64_t n, int64_t k, float alpha,
                            const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                            float *c, int64_t ldc, char *why, size_t size) {
  if (!queue) {
    say(why, size, "no SYCL queue");
    return 1;
  }
  try {
    oneapi::mkl::blas::column_major::gemm(*queue, op(transa), op(transb), m, n, k, alpha, a, lda, b,
                                          ldb, beta, c, ldc)
        .wait_and_throw();
  } catch (const std::exception &err) {
    say(why, size, "oneMKL SYCL gemm: %s", err.what());
    return 1;
  }
  return 0;
}
