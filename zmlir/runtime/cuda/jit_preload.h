/* What the preload library's parts share (dlsym_preload.c, nvrtc_preload.c,
 * nvjitlink_preload.c): the real dlsym, and the NVIDIA libraries a program
 * loaded with dlopen whose functions we stand in for. */
#ifndef ZMLIR_JIT_PRELOAD_H
#define ZMLIR_JIT_PRELOAD_H

/* The C library's dlsym (ours interposes it: dlsym_preload.c). */
void *zmlir_real_dlsym(void *handle, const char *name);

/* `name` in NVIDIA's library that the program loaded with dlopen (`library`
 * is "nvrtc" or "nvJitLink"), or, where it loaded none that way, the next
 * definition after ours (a program linked against it). NULL if none. */
void *zmlir_real_function(const char *library, const char *name);

/* Our stand-ins, looked up by the names NVIDIA's libraries export (a
 * versioned `__nvJitLinkCreate_13_5` is `nvJitLinkCreate`); NULL if we stand
 * in for no function of that name. */
void *zmlir_nvrtc_function(const char *name);
void *zmlir_nvjitlink_function(const char *name);

#endif
