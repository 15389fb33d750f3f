/* Which implementation answers a call into our libcublas/libcublasLt, chosen
 * once per process from the backend our driver runs on (route.c): the host
 * BLAS (OpenCL on the CPU: device memory is host memory), NVIDIA's own
 * libraries (the CUDA passthrough), or none (HIP, Level Zero). */
#ifndef ZMLIR_CUBLAS_ROUTE_H
#define ZMLIR_CUBLAS_ROUTE_H

#include <cuda.h>
#include <stddef.h>

enum zmlir_route { ZMLIR_ROUTE_HOST, ZMLIR_ROUTE_NVIDIA, ZMLIR_ROUTE_NONE };

/* One exported function: its name, and ours where we implement it. `always`:
 * answered by ours on every route that is not NVIDIA's (versions, status
 * strings), since it needs no device. */
struct zmlir_export {
  const char *name;
  void *ours;
  int always;
  void *nvidia; /* our wrapper of NVIDIA's, where a stream must be translated */
};

/* Generated per library by build.py (exports.c). */
extern const struct zmlir_export zmlir_exports[];
extern void *zmlir_slots[];
extern const unsigned zmlir_export_count;
extern const char zmlir_library_name[];        /* "libcublas.so.13" */
extern const char *const zmlir_nvidia_needs[]; /* NVIDIA's libraries to load before it */

/* The route, decided on first use. */
enum zmlir_route zmlir_route(void);
const char *zmlir_route_backend(void);

/* Logs "zmlir <library>: MESSAGE" once per distinct message when ZMLIR_LOG is
 * set, or always where `loud`. */
void zmlir_log(int loud, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* NVIDIA's function `name` in the library loaded for the NVIDIA route. */
void *zmlir_nvidia_symbol(const char *name);

#endif
