/* Our libcuda's implementation in a link-map namespace of its own
 * (compiled into it by build.py; shim.c loads it so in a Python host).
 *
 * There our libpython, the compiler and the backend's runtime have a C
 * library of their own. The process still has one set of threads and one
 * exit, and the few things two C libraries would otherwise disagree on are
 * the host's, through these definitions: this library comes first in its
 * namespace's global scope, so every object of the namespace binds to them.
 * In the base namespace (a host without Python) nothing binds to them but
 * this library, and they are the C library's own.
 *
 *  - Thread-specific data (pthread_key_*, pthread_{get,set}specific): a
 *    thread's descriptor, and its key slots, are shared; two key tables would
 *    both hand out key 0 and read each other's values (our interpreter would
 *    find the host's thread state).
 *  - Exit handlers (__cxa_atexit, __cxa_finalize): the host's exit() runs
 *    only its C library's list. On one list, as without a namespace, ours
 *    (fastpath.c's, waiting for launches under way) runs before the static
 *    destructors of the OpenCL runtime loaded after it.
 *  - The global scope: glibc before 2.37 crashes when dlopen(RTLD_GLOBAL)
 *    adds an object to a namespace made by dlmopen (TBB loads its allocator
 *    so, the OpenCL runtime its math library). Our dlopen drops the flag and
 *    remembers the object; our dlsym searches the remembered objects where
 *    the global scope would have been searched: RTLD_DEFAULT, and the handle
 *    of dlopen(NULL), which inside a namespace is the host's main program
 *    (LLVM's JIT in the OpenCL runtime resolves its kernels' symbols so).
 *    Such a lookup searches this namespace, those objects, then the host.
 *    dlopen and dlsym must stay tail calls where the caller matters: glibc
 *    reads it from their return address (its RUNPATH; RTLD_NEXT).
 *  - A thread's C-library setup: a thread the host starts after it loaded us
 *    runs only the host C library's thread start, never ours, so our C
 *    library's ctype tables (isspace & co read them through thread-local
 *    pointers that __ctype_init sets) are null there, and our interpreter
 *    started on such a thread crashed in setlocale (numba's
 *    test_reset_device). Our setlocale (the interpreter's start-up calls it
 *    first), pthread_key_create and pthread_getspecific (every later entry
 *    into our Python reaches its thread state through them) set the tables
 *    up, once a thread.
 *
 * zmlir_host_symbol finds the host's own symbols (its stdout, for device
 * printf: runtime/cuda/printf.py). */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>

typedef void *(*zmlir_dlsym_fn)(void *, const char *);
typedef void *(*zmlir_dlopen_fn)(const char *, int);

static zmlir_dlsym_fn zmlir_real_dlsym;
static zmlir_dlopen_fn zmlir_real_dlopen;
static int zmlir_in_namespace;
static void *zmlir_host_program; /* dlopen(NULL): the host's main program */
static void *zmlir_host_libc;

static void (*zmlir_ctype_init)(void); /* our C library's, in a namespace */
static char *(*zmlir_setlocale)(int, const char *);
static __thread int zmlir_thread_ready;

static struct {
  int (*key_create)(pthread_key_t *, void (*)(void *));
  int (*key_delete)(pthread_key_t);
  void *(*get)(pthread_key_t);
  int (*set)(pthread_key_t, const void *);
  int (*cxa_atexit)(void (*)(void *), void *, void *);
  void (*cxa_finalize)(void *);
} zmlir_host;

/* The C library's dlsym (a call to dlsym here would be ours). */
static zmlir_dlsym_fn zmlir_libc_dlsym(void) {
  static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
  for (size_t i = 0; i < sizeof versions / sizeof *versions; ++i) {
    void *found = dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    if (found)
      return (zmlir_dlsym_fn)found;
  }
  return NULL;
}

/* Runs before everything else of this library, and again if something of
 * the namespace (a constructor) needs it earlier. */
static void __attribute__((constructor(101))) zmlir_namespace_init(void) {
  static int done;
  if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
    return;
  zmlir_real_dlsym = zmlir_libc_dlsym();
  zmlir_real_dlopen = (zmlir_dlopen_fn)zmlir_real_dlsym(RTLD_NEXT, "dlopen");
  Dl_info self;
  struct link_map *map = NULL;
  Lmid_t namespace = LM_ID_BASE;
  if (dladdr1((void *)&zmlir_namespace_init, &self, (void **)&map, RTLD_DL_LINKMAP) && map)
    dlinfo(map, RTLD_DI_LMID, &namespace);
  zmlir_in_namespace = namespace != LM_ID_BASE;
  zmlir_host_program = zmlir_in_namespace ? zmlir_real_dlopen(NULL, RTLD_NOW) : RTLD_DEFAULT;
  zmlir_host_libc = zmlir_in_namespace ? dlmopen(LM_ID_BASE, "libc.so.6", RTLD_NOW | RTLD_NOLOAD)
                                       : NULL;
  void *libc = zmlir_host_libc ? zmlir_host_libc : RTLD_NEXT;
  zmlir_host.key_create = (int (*)(pthread_key_t *, void (*)(void *)))zmlir_real_dlsym(
      libc, "pthread_key_create");
  zmlir_host.key_delete = (int (*)(pthread_key_t))zmlir_real_dlsym(libc, "pthread_key_delete");
  zmlir_host.get = (void *(*)(pthread_key_t))zmlir_real_dlsym(libc, "pthread_getspecific");
  zmlir_host.set = (int (*)(pthread_key_t, const void *))zmlir_real_dlsym(libc,
                                                                          "pthread_setspecific");
  zmlir_host.cxa_atexit = (int (*)(void (*)(void *), void *, void *))zmlir_real_dlsym(
      libc, "__cxa_atexit");
  zmlir_host.cxa_finalize = (void (*)(void *))zmlir_real_dlsym(libc, "__cxa_finalize");
  if (zmlir_in_namespace)
    zmlir_ctype_init = (void (*)(void))zmlir_real_dlsym(RTLD_NEXT, "__ctype_init");
  zmlir_setlocale = (char *(*)(int, const char *))zmlir_real_dlsym(RTLD_NEXT, "setlocale");
  __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
}

/* Our C library's per-thread setup, on a thread the host started. */
static void zmlir_thread_enter(void) {
  if (zmlir_thread_ready)
    return;
  zmlir_thread_ready = 1;
  if (zmlir_ctype_init)
    zmlir_ctype_init();
}

#define ZMLIR_HOST(field) (zmlir_namespace_init(), zmlir_host.field)

/* Whether this library was loaded into a namespace of its own. */
int zmlir_link_namespace(void) {
  zmlir_namespace_init();
  return zmlir_in_namespace;
}

/* A symbol of the host (its main program's scope), whatever namespace we are in. */
void *zmlir_host_symbol(const char *name) {
  zmlir_namespace_init();
  return zmlir_real_dlsym(zmlir_host_program, name);
}

int pthread_key_create(pthread_key_t *key, void (*destructor)(void *)) {
  zmlir_namespace_init();
  zmlir_thread_enter();
  return zmlir_host.key_create(key, destructor);
}

int pthread_key_delete(pthread_key_t key) {
  return ZMLIR_HOST(key_delete)(key);
}

void *pthread_getspecific(pthread_key_t key) {
  zmlir_namespace_init();
  zmlir_thread_enter();
  return zmlir_host.get(key);
}

int pthread_setspecific(pthread_key_t key, const void *value) {
  return ZMLIR_HOST(set)(key, value);
}

char *setlocale(int category, const char *locale) {
  zmlir_namespace_init();
  zmlir_thread_enter();
  return zmlir_setlocale(category, locale);
}

int __cxa_atexit(void (*function)(void *), void *argument, void *dso) {
  return ZMLIR_HOST(cxa_atexit)(function, argument, dso);
}

void __cxa_finalize(void *dso) {
  ZMLIR_HOST(cxa_finalize)(dso);
}

#define ZMLIR_GLOBALS 64
static void *zmlir_globals[ZMLIR_GLOBALS]; /* dlopen(RTLD_GLOBAL) in a namespace */
static int zmlir_nglobals;
static pthread_mutex_t zmlir_globals_lock = PTHREAD_MUTEX_INITIALIZER;

/* Not a tail call: a name without a slash is looked up with our RUNPATH,
 * not the caller's (TBB and the OpenCL runtime give absolute paths). */
static void *zmlir_global_dlopen(const char *file, int mode) {
  void *handle = zmlir_real_dlopen(file, mode & ~RTLD_GLOBAL);
  if (handle == NULL || file == NULL)
    return handle;
  pthread_mutex_lock(&zmlir_globals_lock);
  int known = 0;
  for (int i = 0; i < zmlir_nglobals; ++i)
    known |= zmlir_globals[i] == handle;
  if (!known && zmlir_nglobals < ZMLIR_GLOBALS)
    zmlir_globals[zmlir_nglobals++] = zmlir_real_dlopen(file, RTLD_NOW | RTLD_NOLOAD);
  pthread_mutex_unlock(&zmlir_globals_lock);
  return handle;
}

void *dlopen(const char *file, int mode) {
  zmlir_namespace_init();
  if (zmlir_in_namespace && (mode & RTLD_GLOBAL))
    return zmlir_global_dlopen(file, mode);
  return zmlir_real_dlopen(file, mode);
}

static void *zmlir_global_dlsym(void *handle, const char *name) {
  void *found = zmlir_real_dlsym(RTLD_DEFAULT, name); /* this namespace */
  pthread_mutex_lock(&zmlir_globals_lock);
  for (int i = 0; found == NULL && i < zmlir_nglobals; ++i)
    found = zmlir_real_dlsym(zmlir_globals[i], name);
  pthread_mutex_unlock(&zmlir_globals_lock);
  if (found == NULL && handle != RTLD_DEFAULT)
    found = zmlir_real_dlsym(handle, name); /* the host's */
  return found;
}

void *dlsym(void *handle, const char *name) {
  zmlir_namespace_init();
  if (zmlir_in_namespace && (handle == RTLD_DEFAULT || handle == zmlir_host_program))
    return zmlir_global_dlsym(handle, name);
  return zmlir_real_dlsym(handle, name);
}
