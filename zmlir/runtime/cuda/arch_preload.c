/* The compute capability a library that picks machine code per architecture
 * is told, under zmlir.
 *
 * Some of NVIDIA's libraries keep each kernel as separate images, one of
 * machine code (SASS) per architecture they know and one of PTX, and choose
 * among them with the compute capability they ask cudart for. libcurand 10
 * is one: for a device it has machine code for (ours reports 8.9, which its
 * sm_86 SASS runs on) it loads an image with nothing but that SASS, which
 * nothing but an NVIDIA GPU runs; for an architecture it does not know it loads its PTX, with the
 * host-side plan it made for that path. The two images of a kernel share
 * their name and parameters with hundreds of others, so the driver cannot
 * tell which PTX an image of SASS stands for (docs/driver-differences.md).
 *
 * `zmlir run` preloads this cudaDeviceGetAttribute. When the object that
 * calls it asks for the compute capability and holds both an image of SASS
 * alone that the architecture the driver reports would run (its major, not
 * newer: libcurand has sm_86 for our 8.9) and an image of PTX alone,
 * it is told an architecture it has no machine code for: the reported major
 * and the smallest minor it has no SASS for (libcurand: 8.1), so that it
 * takes its own path for an unknown GPU, NVIDIA's PTX and NVIDIA's plan for
 * it. Every other caller gets cudart's answer. If such a library maps the
 * answer to machine code all the same, its load fails as before
 * (CUDA_ERROR_NO_BINARY_FOR_GPU), never silently.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fatbin_holdings.h"
#include "jit_preload.h"

enum {
  ATTR_MAJOR = 75, /* cudaDevAttrComputeCapabilityMajor */
  ATTR_MINOR = 76,
  CUDA_ERROR_UNKNOWN = 999, /* cudaErrorUnknown */
};

typedef int (*attribute_fn)(int *, int, int);

int cudaDeviceGetAttribute(int *value, int attribute, int device);

/* cudart's cudaDeviceGetAttribute as the caller would have reached it: the
 * next definition after ours, or, where cudart is not in the global scope
 * (a Python extension's dependency, loaded RTLD_LOCAL), the caller's own. */
static attribute_fn real_attribute(const Dl_info *caller) {
  attribute_fn ours = (attribute_fn)&cudaDeviceGetAttribute;
  attribute_fn next = (attribute_fn)zmlir_real_dlsym(RTLD_NEXT, "cudaDeviceGetAttribute");
  if (next && next != ours)
    return next;
  if (caller == NULL || caller->dli_fname == NULL)
    return NULL;
  void *handle = dlopen(caller->dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == NULL)
    return NULL;
  next = (attribute_fn)zmlir_real_dlsym(handle, "cudaDeviceGetAttribute");
  dlclose(handle);
  return next != ours ? next : NULL;
}

int cudaDeviceGetAttribute(int *value, int attribute, int device) {
  void *return_address = __builtin_extract_return_addr(__builtin_return_address(0));
  Dl_info caller;
  int known = dladdr(return_address, &caller) != 0;
  attribute_fn real = real_attribute(known ? &caller : NULL);
  if (real == NULL)
    return CUDA_ERROR_UNKNOWN;
  int result = real(value, attribute, device);
  if (result != 0 || value == NULL || !known ||
      (attribute != ATTR_MAJOR && attribute != ATTR_MINOR))
    return result;
  int major = 0, minor = 0;
  if (real(&major, ATTR_MAJOR, device) != 0 || real(&minor, ATTR_MINOR, device) != 0)
    return result;
  struct zmlir_holdings *h = zmlir_holdings_of((uintptr_t)caller.dli_fbase, major * 10 + minor);
  if (h == NULL || !h->sass_only_usable || !h->ptx_only)
    return result;
  int unknown_minor = 0;
  for (int m = 1; m <= 9 && !unknown_minor; ++m)
    if (major * 10 + m < 256 && !h->sass[major * 10 + m])
      unknown_minor = m;
  if (!unknown_minor)
    return result;
  static int said;
  if (attribute == ATTR_MINOR && !__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED) &&
      getenv("ZMLIR_LOG"))
    fprintf(stderr,
            "zmlir: %s keeps machine code an sm_%d device runs in images without PTX and "
            "its PTX apart: told compute capability %d.%d (it has no machine code for it) "
            "so that it takes its PTX path\n",
            caller.dli_fname, major * 10 + minor, major, unknown_minor);
  if (attribute == ATTR_MINOR)
    *value = unknown_minor;
  return result;
}
