/* Which implementation answers a call into one of our libraries (libcublas,
 * libcublasLt, libcufft), chosen once per process from the backend our driver
 * runs on (route.c): the host BLAS or FFT (OpenCL on the CPU: device memory is
 * host memory), NVIDIA's own library on zmlir's driver (the CUDA passthrough),
 * or none (HIP, Level Zero). */
#ifndef ZMLIR_LIBRARIES_ROUTE_H
#define ZMLIR_LIBRARIES_ROUTE_H

#include <cuda.h>
#include <stddef.h>

enum zmlir_route { ZMLIR_ROUTE_HOST, ZMLIR_ROUTE_VENDOR, ZMLIR_ROUTE_NONE };

/* One exported function: its name, and ours where we implement it. `always`:
 * answered by ours on every route (versions, status strings), since it needs
 * no device. */
struct zmlir_export {
  const char *name;
  void *ours;
  int always;
};

/* Generated per library by build.py (exports.c). */
extern const struct zmlir_export zmlir_exports[];
extern void *zmlir_slots[];
extern const unsigned zmlir_export_count;
extern const char zmlir_library_name[]; /* "libcublas.so.13" */

/* The route, decided on first use. */
enum zmlir_route zmlir_route(void);

/* NVIDIA's own library of our library's name, for what ours does not make
 * (libcurand: a generator's type, ordering or distribution), opened on
 * first use where our driver finds it, on any backend; NULL on NVIDIA's
 * own driver, where it is not installed or under ZMLIR_NVIDIA_LIBRARIES=0
 * (said once on stderr). Its functions may call ours with its own handles
 * (route.c says why). */
void *zmlir_vendor_library(void);

/* The backend's name (route.c's answer from the driver) and, in `handles`,
 * its native handles (OpenCL: platform, device, context), for a library
 * working on the backend's own API in our driver's context (the SYCL route,
 * cublas/engine.c); 0 on success, -1 where the driver gives none. */
int zmlir_native_handles(const char **backend_name, void **handles, size_t count);

/* Logs "zmlir <library>: MESSAGE" once per distinct message when ZMLIR_LOG is
 * set, or always where `loud`. */
void zmlir_log(int loud, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* A unit of the host route's work, run once the work already in its stream
 * is done. */
struct zmlir_job {
  void (*run)(struct zmlir_job *);
  int keep; /* recorded by a stream capture: a graph may replay it */
};

/* Enqueues `job` (heap-allocated, freed after it runs unless captured) in
 * `stream` as a host function; with `wait`, returns once it ran (a result
 * read by the host). */
CUresult zmlir_enqueue(CUstream stream, struct zmlir_job *job, int wait);

/* Our implementation of an exported function: type-checked against
 * NVIDIA's prototype (ABI_CHECK), found by build.py by its symbol's prefix. */
#define IMPL(name) zmlir_impl_##name
#define ABI_CHECK(name) ABI_CHECK_AS(IMPL(name), name)
#define ABI_CHECK_AS(ours, name)                                                                   \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&ours), __typeof__(&name)),               \
                 #name ": not NVIDIA's signature")
/* Ours on every route: needs no device. */
#define IMPL_ALWAYS(name) zmlir_always_##name
#define ABI_CHECK_ALWAYS(name) ABI_CHECK_AS(IMPL_ALWAYS(name), name)

#endif
