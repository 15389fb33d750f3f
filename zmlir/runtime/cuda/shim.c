/* libcuda.so.1 itself: a thin library that loads the driver's implementation
 * (libzmlir_cuda.so, the cffi-embedded Python driver built by build.py) and
 * forwards every exported function to it through one pointer.
 *
 * Where the process already runs a Python (Py_IsInitialized is defined), the
 * implementation goes into a link-map namespace of its own (dlmopen
 * LM_ID_NEWLM): its libpython 3.11, cffi and compiler never meet the host's
 * interpreter, so any CPython host works with nothing installed in its
 * environment, whatever it imported before (namespace.c holds what the two
 * sides must still share). Elsewhere it is dlopened as before.
 * ZMLIR_LINK_NAMESPACE_MODE=own|shared overrides the choice.
 *
 * build.py appends: zmlir_shim_names (every exported name), the stubs (one
 * indirect jump through zmlir_shim_slots each: any signature passes through
 * untouched) and zmlir_shim_exports (the stubs' addresses). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char *const zmlir_shim_names[];
extern void *const zmlir_shim_exports[];
__attribute__((visibility("hidden"))) void *zmlir_shim_slots[ZMLIR_SHIM_COUNT];
static void *zmlir_shim_impl[ZMLIR_SHIM_COUNT]; /* the implementation's addresses */

static int zmlir_shim_unavailable(void) {
  return 3; /* CUDA_ERROR_NOT_INITIALIZED */
}

static void __attribute__((constructor)) zmlir_shim_load(void) {
  for (unsigned i = 0; i < ZMLIR_SHIM_COUNT; ++i)
    zmlir_shim_slots[i] = (void *)&zmlir_shim_unavailable;
  Dl_info self;
  if (!dladdr((void *)&zmlir_shim_load, &self) || self.dli_fname == NULL)
    return;
  char path[4096];
  snprintf(path, sizeof path, "%s", self.dli_fname);
  char impl[4096 + 64];
  snprintf(impl, sizeof impl, "%s/%s", dirname(path), ZMLIR_SHIM_IMPL);
  const char *mode = getenv("ZMLIR_LINK_NAMESPACE_MODE");
  int own = mode && strcmp(mode, "own") == 0;
  if (!mode || (strcmp(mode, "own") != 0 && strcmp(mode, "shared") != 0))
    own = dlsym(RTLD_DEFAULT, "Py_IsInitialized") != NULL;
  void *handle = own ? dlmopen(LM_ID_NEWLM, impl, RTLD_NOW | RTLD_LOCAL)
                     : dlopen(impl, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    fprintf(stderr, "zmlir: cannot load the CUDA driver %s: %s\n", impl, dlerror());
    return;
  }
  for (unsigned i = 0; i < ZMLIR_SHIM_COUNT; ++i) {
    void *address = dlsym(handle, zmlir_shim_names[i]);
    zmlir_shim_impl[i] = address;
    if (address)
      zmlir_shim_slots[i] = address;
  }
}

/* cuGetProcAddress hands out our exported functions, as NVIDIA's does (cudart
 * and the trace interposer compare addresses), not the implementation's. */
static void zmlir_shim_own(void **pfn) {
  if (pfn == NULL || *pfn == NULL)
    return;
  for (unsigned i = 0; i < ZMLIR_SHIM_COUNT; ++i)
    if (zmlir_shim_impl[i] == *pfn) {
      *pfn = zmlir_shim_exports[i];
      return;
    }
}

typedef int (*zmlir_proc_fn)(const char *, void **, int, unsigned long long);
typedef int (*zmlir_proc2_fn)(const char *, void **, int, unsigned long long, int *);

int cuGetProcAddress(const char *symbol, void **pfn, int version, unsigned long long flags) {
  int result = ((zmlir_proc_fn)zmlir_shim_slots[ZMLIR_SHIM_PROC])(symbol, pfn, version, flags);
  if (result == 0)
    zmlir_shim_own(pfn);
  return result;
}

int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, unsigned long long flags,
                        int *status) {
  int result = ((zmlir_proc2_fn)zmlir_shim_slots[ZMLIR_SHIM_PROC2])(symbol, pfn, version, flags,
                                                                    status);
  if (result == 0)
    zmlir_shim_own(pfn);
  return result;
}
