/* dlsym, interposed, so that NVIDIA's JIT libraries loaded with dlopen reach
 * our stand-ins too.
 *
 * Python's GPU libraries load NVRTC and nvJitLink with dlopen (cuda.bindings
 * through cuda.pathfinder, RTLD_GLOBAL or not) and look each function up with
 * dlsym on the library's own handle, which searches that library alone: an
 * LD_PRELOAD that defines the same names never applies there. `zmlir run`
 * preloads this dlsym: when a program asks a handle for a function we stand
 * in for (nvrtc_preload.c, nvjitlink_preload.c) and the definition found is
 * NVIDIA's library of that name, the program gets ours, which reaches
 * NVIDIA's through the handle recorded here. Every other lookup is the C
 * library's dlsym, reached by a tail call so that RTLD_NEXT still means the
 * caller's next object.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "jit_preload.h"

typedef void *(*dlsym_fn)(void *, const char *);

/* The forwarding call must be a tail call (GCC makes it one at -O2). */
#if defined(__has_attribute)
#if __has_attribute(musttail)
#define TAIL_CALL __attribute__((musttail))
#endif
#endif
#ifndef TAIL_CALL
#define TAIL_CALL
#endif

static dlsym_fn real_dlsym;
static pthread_once_t real_dlsym_once = PTHREAD_ONCE_INIT;

static void find_real_dlsym(void) {
  /* glibc >= 2.34 defines dlsym in libc (GLIBC_2.34); older ones in libdl. */
  static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0"};
  for (size_t i = 0; i < sizeof versions / sizeof *versions && !real_dlsym; ++i)
    real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
}

void *zmlir_real_dlsym(void *handle, const char *name) {
  pthread_once(&real_dlsym_once, find_real_dlsym);
  return real_dlsym ? real_dlsym(handle, name) : NULL;
}

struct library {
  const char *name;        /* as zmlir_real_function names it */
  const char *file_prefix; /* its file name's start: libnvrtc.so.13 */
  void *_Atomic handle;    /* the program's, once it looked one of ours up */
};

static struct library libraries[] = {
    {"nvrtc", "libnvrtc.", NULL},
    {"nvJitLink", "libnvJitLink.", NULL},
};

static struct library *library_named(const char *name) {
  for (size_t i = 0; i < sizeof libraries / sizeof *libraries; ++i)
    if (strcmp(libraries[i].name, name) == 0)
      return &libraries[i];
  return NULL;
}

void *zmlir_real_function(const char *library, const char *name) {
  struct library *lib = library_named(library);
  void *handle = lib ? atomic_load(&lib->handle) : NULL;
  return zmlir_real_dlsym(handle ? handle : RTLD_NEXT, name);
}

/* Our stand-in for `name` looked up in `handle`, or NULL where the program
 * should get what the C library's dlsym finds. */
static void *stand_in(void *handle, const char *name) {
  struct library *lib = &libraries[0];
  void *ours = zmlir_nvrtc_function(name);
  if (!ours) {
    lib = &libraries[1];
    ours = zmlir_nvjitlink_function(name);
  }
  if (!ours)
    return NULL;
  void *theirs = zmlir_real_dlsym(handle, name);
  Dl_info info;
  if (!theirs || !dladdr(theirs, &info) || !info.dli_fname)
    return NULL;
  const char *base = strrchr(info.dli_fname, '/');
  base = base ? base + 1 : info.dli_fname;
  if (strncmp(base, lib->file_prefix, strlen(lib->file_prefix)) != 0)
    return NULL; /* not NVIDIA's library (ours, found through a global handle) */
  if (!atomic_load(&lib->handle)) {
    /* One more reference: the library stays loaded while ours may call it. */
    void *own = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
    void *expected = NULL;
    if (own && !atomic_compare_exchange_strong(&lib->handle, &expected, own))
      dlclose(own);
  }
  return ours;
}

void *dlsym(void *restrict handle, const char *restrict name) {
  if (handle != RTLD_DEFAULT && handle != RTLD_NEXT &&
      (strncmp(name, "nvrtc", 5) == 0 || strncmp(name, "nvJitLink", 9) == 0 ||
       strncmp(name, "__nvJitLink", 11) == 0)) {
    void *ours = stand_in(handle, name);
    if (ours)
      return ours;
  }
  pthread_once(&real_dlsym_once, find_real_dlsym);
  if (!real_dlsym)
    return NULL;
  TAIL_CALL return real_dlsym(handle, name); /* the caller's RTLD_NEXT */
}
