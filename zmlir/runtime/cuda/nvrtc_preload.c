/* NVRTC programs compiled for a real architecture, under zmlir.
 *
 * A program that compiles CUDA C++ with NVRTC for a real architecture
 * (`--gpu-architecture=sm_89`, the compute capability our driver reports)
 * asks for a cubin, NVIDIA machine code nothing but an NVIDIA GPU runs.
 * `zmlir run` preloads this library: it compiles for the matching virtual
 * architecture instead (compute_89: the same __CUDA_ARCH__) and hands out
 * the PTX where the program asks for the cubin; our cuModuleLoadData takes
 * PTX text wherever it takes a cubin. Every other NVRTC call goes straight
 * to NVIDIA's library. A program that loads NVRTC with dlopen (cuda.bindings,
 * CuPy) gets these functions from its dlsym too (dlsym_preload.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "jit_preload.h"

typedef int nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;

enum { NVRTC_ERROR_OUT_OF_MEMORY = 1, NVRTC_ERROR_INTERNAL_ERROR = 11 };

static void *next_symbol(const char *name) {
  return zmlir_real_function("nvrtc", name);
}

/* "sm_80" -> "compute_80" (also sm_90a -> compute_90a); NULL if `arch` is
 * not a real architecture. The caller frees the result. */
static char *virtual_arch(const char *arch) {
  if (strncmp(arch, "sm_", 3) != 0)
    return NULL;
  size_t size = strlen(arch) - 3 + sizeof "compute_";
  char *out = malloc(size);
  if (out) {
    strcpy(out, "compute_");
    strcat(out, arch + 3);
  }
  return out;
}

/* `option` with its real architecture made virtual, or NULL if it names
 * none. Forms: -arch=sm_XX, --gpu-architecture=sm_XX, and the value after a
 * separate -arch / --gpu-architecture (`separate`). */
static char *rewrite_option(const char *option, int separate) {
  static const char *const prefixes[] = {"-arch=", "--gpu-architecture="};
  if (separate)
    return virtual_arch(option);
  for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; ++i) {
    size_t n = strlen(prefixes[i]);
    if (strncmp(option, prefixes[i], n) != 0)
      continue;
    char *arch = virtual_arch(option + n);
    if (!arch)
      return NULL;
    char *out = malloc(n + strlen(arch) + 1);
    if (out) {
      memcpy(out, option, n);
      strcpy(out + n, arch);
    }
    free(arch);
    return out;
  }
  return NULL;
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char *const *options) {
  nvrtcResult (*real)(nvrtcProgram, int, const char *const *) = (nvrtcResult (*)(
      nvrtcProgram, int, const char *const *))next_symbol("nvrtcCompileProgram");
  if (!real)
    return NVRTC_ERROR_INTERNAL_ERROR;
  if (numOptions <= 0 || !options)
    return real(prog, numOptions, options);
  const char **used = malloc(sizeof *used * (size_t)numOptions);
  char **owned = calloc((size_t)numOptions, sizeof *owned);
  if (!used || !owned) {
    free(used);
    free(owned);
    return NVRTC_ERROR_OUT_OF_MEMORY;
  }
  for (int i = 0; i < numOptions; ++i) {
    int separate = i > 0 && options[i - 1] &&
                   (strcmp(options[i - 1], "-arch") == 0 ||
                    strcmp(options[i - 1], "--gpu-architecture") == 0);
    owned[i] = options[i] ? rewrite_option(options[i], separate) : NULL;
    used[i] = owned[i] ? owned[i] : options[i];
  }
  nvrtcResult result = real(prog, numOptions, used);
  for (int i = 0; i < numOptions; ++i)
    free(owned[i]);
  free(owned);
  free(used);
  return result;
}

nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t *cubinSizeRet) {
  nvrtcResult (*ptx_size)(nvrtcProgram, size_t *) = (nvrtcResult (*)(
      nvrtcProgram, size_t *))next_symbol("nvrtcGetPTXSize");
  return ptx_size ? ptx_size(prog, cubinSizeRet) : NVRTC_ERROR_INTERNAL_ERROR;
}

nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char *cubin) {
  nvrtcResult (*ptx)(nvrtcProgram,
                     char *) = (nvrtcResult (*)(nvrtcProgram, char *))next_symbol("nvrtcGetPTX");
  return ptx ? ptx(prog, cubin) : NVRTC_ERROR_INTERNAL_ERROR;
}

void *zmlir_nvrtc_function(const char *name) {
  if (strcmp(name, "nvrtcCompileProgram") == 0)
    return (void *)nvrtcCompileProgram;
  if (strcmp(name, "nvrtcGetCUBINSize") == 0)
    return (void *)nvrtcGetCUBINSize;
  if (strcmp(name, "nvrtcGetCUBIN") == 0)
    return (void *)nvrtcGetCUBIN;
  return NULL;
}
