/* nvJitLink under zmlir: links end in PTX our driver runs.
 *
 * numba-cuda (through cuda.core's Linker) and C++ programs link device code
 * with NVIDIA's nvJitLink and ask for a cubin, NVIDIA machine code that only
 * an NVIDIA GPU runs. `zmlir run` preloads this stand-in for the functions
 * that take a link handle: it keeps the inputs, and nvJitLinkComplete links
 * them through our driver's JIT linker (cuLinkCreate ... cuLinkComplete:
 * PTX units and fatbins with PTX, linked into one PTX module). LTO-IR inputs
 * are first linked by NVIDIA's nvJitLink with `-lto -ptx` into one more PTX
 * unit. The linked PTX is handed out where a cubin or PTX is asked for; our
 * cuModuleLoadData and cuLibraryLoadData take PTX wherever they take a cubin.
 * Programs that load nvJitLink with dlopen reach these through our dlsym
 * (dlsym_preload.c); nvJitLinkVersion stays NVIDIA's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit_preload.h"

typedef int nvJitLinkResult;
typedef struct link *nvJitLinkHandle;

enum {
  NVJITLINK_SUCCESS = 0,
  NVJITLINK_ERROR_INVALID_INPUT = 3,
  NVJITLINK_ERROR_PTX_COMPILE = 4,
  NVJITLINK_ERROR_NVVM_COMPILE = 5,
  NVJITLINK_ERROR_INTERNAL = 6,
  NVJITLINK_ERROR_NULL_INPUT = 10,
};

/* nvJitLinkInputType */
enum {
  INPUT_CUBIN = 1,
  INPUT_PTX = 2,
  INPUT_LTOIR = 3,
  INPUT_FATBIN = 4,
  INPUT_OBJECT = 5,
  INPUT_LIBRARY = 6,
  INPUT_ANY = 10,
};

/* CUjitInputType, CUjit_option: what our driver's linker takes. */
enum {
  CU_INPUT_CUBIN = 0,
  CU_INPUT_PTX = 1,
  CU_INPUT_FATBIN = 2,
  CU_INPUT_OBJECT = 3,
  CU_INPUT_LIBRARY = 4
};
enum {
  CU_MAX_REGISTERS = 0,
  CU_INFO_LOG = 3,
  CU_INFO_LOG_SIZE = 4,
  CU_ERROR_LOG = 5,
  CU_ERROR_LOG_SIZE = 6
};

struct input {
  int type; /* nvJitLinkInputType, ANY resolved */
  char *data;
  size_t size;
  char *name;
};

struct link {
  int options_count;
  char **options;
  struct input *inputs;
  size_t count, capacity;
  char *linked; /* the linked PTX, NUL-terminated */
  size_t linked_size;
  char *error_log, *info_log;
};

static char *copy(const void *data, size_t size) {
  char *out = malloc(size + 1);
  if (out) {
    memcpy(out, data, size);
    out[size] = '\0';
  }
  return out;
}

static void append_log(char **log, const char *format, ...) {
  va_list args;
  va_start(args, format);
  char *text = NULL;
  int n = vasprintf(&text, format, args);
  va_end(args);
  if (n < 0)
    return;
  size_t old = *log ? strlen(*log) : 0;
  char *grown = realloc(*log, old + (size_t)n + 1);
  if (grown) {
    memcpy(grown + old, text, (size_t)n + 1);
    *log = grown;
  }
  free(text);
}

/* The type an INPUT_ANY input has, from its first bytes. */
static int sniff(const char *data, size_t size) {
  static const unsigned char fatbin[] = {0x50, 0xed, 0x55, 0xba};
  static const unsigned char elf[] = {0x7f, 'E', 'L', 'F'};
  if (size >= 4 && memcmp(data, fatbin, 4) == 0)
    return INPUT_FATBIN;
  if (size >= 4 && memcmp(data, elf, 4) == 0)
    return INPUT_OBJECT;
  if (size >= 8 && memcmp(data, "!<arch>\n", 8) == 0)
    return INPUT_LIBRARY;
  for (size_t i = 0; i < size && i < 4096; ++i) {
    unsigned char c = (unsigned char)data[i];
    if (c == '.' || c == '/')
      return INPUT_PTX; /* a directive or a comment first: PTX text */
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
      break;
  }
  return INPUT_LTOIR; /* NVIDIA's nvJitLink tells what it is */
}

nvJitLinkResult nvJitLinkCreate(nvJitLinkHandle *handle, uint32_t numOptions,
                                const char **options) {
  if (!handle)
    return NVJITLINK_ERROR_NULL_INPUT;
  struct link *link = calloc(1, sizeof *link);
  if (!link)
    return NVJITLINK_ERROR_INTERNAL;
  link->options = calloc(numOptions + 1, sizeof *link->options);
  if (!link->options) {
    free(link);
    return NVJITLINK_ERROR_INTERNAL;
  }
  for (uint32_t i = 0; i < numOptions; ++i)
    if (options && options[i])
      link->options[link->options_count++] = strdup(options[i]);
  *handle = link;
  return NVJITLINK_SUCCESS;
}

static void free_inputs(struct link *link) {
  for (size_t i = 0; i < link->count; ++i) {
    free(link->inputs[i].data);
    free(link->inputs[i].name);
  }
  free(link->inputs);
}

nvJitLinkResult nvJitLinkDestroy(nvJitLinkHandle *handle) {
  if (!handle || !*handle)
    return NVJITLINK_ERROR_NULL_INPUT;
  struct link *link = *handle;
  for (int i = 0; i < link->options_count; ++i)
    free(link->options[i]);
  free(link->options);
  free_inputs(link);
  free(link->linked);
  free(link->error_log);
  free(link->info_log);
  free(link);
  *handle = NULL;
  return NVJITLINK_SUCCESS;
}

nvJitLinkResult nvJitLinkAddData(nvJitLinkHandle link, int inputType, const void *data, size_t size,
                                 const char *name) {
  if (!link || !data)
    return NVJITLINK_ERROR_NULL_INPUT;
  if (size == 0)
    return NVJITLINK_ERROR_INVALID_INPUT;
  if (link->count == link->capacity) {
    size_t capacity = link->capacity ? 2 * link->capacity : 8;
    struct input *grown = realloc(link->inputs, capacity * sizeof *grown);
    if (!grown)
      return NVJITLINK_ERROR_INTERNAL;
    link->inputs = grown;
    link->capacity = capacity;
  }
  struct input *in = &link->inputs[link->count];
  in->type = inputType == INPUT_ANY ? sniff(data, size) : inputType;
  in->data = copy(data, size);
  in->size = size;
  in->name = strdup(name ? name : "");
  if (!in->data || !in->name) {
    free(in->data);
    free(in->name);
    return NVJITLINK_ERROR_INTERNAL;
  }
  link->count++;
  return NVJITLINK_SUCCESS;
}

nvJitLinkResult nvJitLinkAddFile(nvJitLinkHandle link, int inputType, const char *fileName) {
  if (!link || !fileName)
    return NVJITLINK_ERROR_NULL_INPUT;
  FILE *f = fopen(fileName, "rb");
  if (!f) {
    append_log(&link->error_log, "ERROR: cannot open %s\n", fileName);
    return NVJITLINK_ERROR_INVALID_INPUT;
  }
  char *data = NULL;
  size_t size = 0, capacity = 0, n;
  char chunk[65536];
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (size + n > capacity) {
      capacity = 2 * (size + n);
      char *grown = realloc(data, capacity);
      if (!grown) {
        free(data);
        fclose(f);
        return NVJITLINK_ERROR_INTERNAL;
      }
      data = grown;
    }
    memcpy(data + size, chunk, n);
    size += n;
  }
  fclose(f);
  const char *base = strrchr(fileName, '/');
  nvJitLinkResult result = size ? nvJitLinkAddData(link, inputType, data, size,
                                                   base ? base + 1 : fileName)
                                : NVJITLINK_ERROR_INVALID_INPUT;
  free(data);
  return result;
}

/* NVIDIA's nvJitLink, for LTO-IR. */
#define REAL(type, name) ((type)zmlir_real_function("nvJitLink", #name))

/* The LTO-IR inputs linked by NVIDIA's nvJitLink into PTX (`-lto -ptx`, with
 * the program's options), added to the link as one PTX input. */
static nvJitLinkResult link_ltoir(struct link *link) {
  size_t count = 0;
  for (size_t i = 0; i < link->count; ++i)
    count += link->inputs[i].type == INPUT_LTOIR;
  if (count == 0)
    return NVJITLINK_SUCCESS;
  nvJitLinkResult (*create)(nvJitLinkHandle *, uint32_t, const char **) = REAL(
      nvJitLinkResult (*)(nvJitLinkHandle *, uint32_t, const char **), nvJitLinkCreate);
  nvJitLinkResult (*add)(nvJitLinkHandle, int, const void *, size_t, const char *) = REAL(
      nvJitLinkResult (*)(nvJitLinkHandle, int, const void *, size_t, const char *),
      nvJitLinkAddData);
  nvJitLinkResult (*complete)(nvJitLinkHandle) = REAL(nvJitLinkResult (*)(nvJitLinkHandle),
                                                      nvJitLinkComplete);
  nvJitLinkResult (*size_of)(nvJitLinkHandle, size_t *) = REAL(
      nvJitLinkResult (*)(nvJitLinkHandle, size_t *), nvJitLinkGetLinkedPtxSize);
  nvJitLinkResult (*get)(nvJitLinkHandle, char *) = REAL(
      nvJitLinkResult (*)(nvJitLinkHandle, char *), nvJitLinkGetLinkedPtx);
  nvJitLinkResult (*log_size)(nvJitLinkHandle, size_t *) = REAL(
      nvJitLinkResult (*)(nvJitLinkHandle, size_t *), nvJitLinkGetErrorLogSize);
  nvJitLinkResult (*log)(nvJitLinkHandle, char *) = REAL(
      nvJitLinkResult (*)(nvJitLinkHandle, char *), nvJitLinkGetErrorLog);
  nvJitLinkResult (*destroy)(nvJitLinkHandle *) = REAL(nvJitLinkResult (*)(nvJitLinkHandle *),
                                                       nvJitLinkDestroy);
  if (!create || !add || !complete || !size_of || !get || !destroy) {
    append_log(&link->error_log, "ERROR: zmlir: linking LTO-IR needs NVIDIA's nvJitLink, "
                                 "which this process has not loaded\n");
    return NVJITLINK_ERROR_INTERNAL;
  }
  const char **options = calloc((size_t)link->options_count + 2, sizeof *options);
  if (!options)
    return NVJITLINK_ERROR_INTERNAL;
  uint32_t n = 0;
  for (int i = 0; i < link->options_count; ++i)
    if (strcmp(link->options[i], "-lto") != 0 && strcmp(link->options[i], "-ptx") != 0)
      options[n++] = link->options[i];
  options[n++] = "-lto";
  options[n++] = "-ptx";
  nvJitLinkHandle real = NULL;
  nvJitLinkResult result = create(&real, n, options);
  free(options);
  for (size_t i = 0; i < link->count && result == NVJITLINK_SUCCESS; ++i)
    if (link->inputs[i].type == INPUT_LTOIR)
      result = add(real, INPUT_ANY, link->inputs[i].data, link->inputs[i].size,
                   link->inputs[i].name);
  if (result == NVJITLINK_SUCCESS)
    result = complete(real);
  size_t size = 0;
  char *ptx = NULL;
  if (result == NVJITLINK_SUCCESS)
    result = size_of(real, &size);
  if (result == NVJITLINK_SUCCESS && !(ptx = calloc(1, size + 1)))
    result = NVJITLINK_ERROR_INTERNAL;
  if (result == NVJITLINK_SUCCESS)
    result = get(real, ptx);
  if (result != NVJITLINK_SUCCESS && real && log_size && log) {
    size_t length = 0;
    char *text = NULL;
    if (log_size(real, &length) == NVJITLINK_SUCCESS && (text = calloc(1, length + 1)) &&
        log(real, text) == NVJITLINK_SUCCESS)
      append_log(&link->error_log, "%s", text);
    free(text);
  }
  if (real)
    destroy(&real);
  if (result == NVJITLINK_SUCCESS) {
    /* The LTO-IR inputs make way for their PTX. */
    size_t kept = 0;
    for (size_t i = 0; i < link->count; ++i) {
      if (link->inputs[i].type == INPUT_LTOIR) {
        free(link->inputs[i].data);
        free(link->inputs[i].name);
      } else {
        link->inputs[kept++] = link->inputs[i];
      }
    }
    link->count = kept;
    result = nvJitLinkAddData(link, INPUT_PTX, ptx, strlen(ptx) + 1, "lto.ptx");
  }
  free(ptx);
  return result;
}

typedef int CUresult;
typedef void *CUlinkState, *CUcontext;

/* Our driver's function `name` (libcuda.so.1: `zmlir run` puts ours first). */
static void *driver_function(const char *name) {
  static void *driver;
  if (!driver)
    driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!driver)
    driver = dlopen("libcuda.so.1", RTLD_NOW);
  return driver ? zmlir_real_dlsym(driver, name) : NULL;
}

#define DRIVER(type, name) ((type)driver_function(#name))

static int driver_input(int type) {
  switch (type) {
  case INPUT_PTX:
    return CU_INPUT_PTX;
  case INPUT_FATBIN:
    return CU_INPUT_FATBIN;
  case INPUT_CUBIN:
    return CU_INPUT_CUBIN;
  case INPUT_LIBRARY:
    return CU_INPUT_LIBRARY;
  default:
    return CU_INPUT_OBJECT;
  }
}

/* The register ceiling the link's `-maxrregcount=N` asks for (0: none), for
 * the driver's linker as CU_JIT_MAX_REGISTERS. */
static unsigned max_registers(const struct link *link) {
  static const char prefix[] = "-maxrregcount=";
  unsigned ceiling = 0;
  for (int i = 0; i < link->options_count; ++i)
    if (strncmp(link->options[i], prefix, sizeof prefix - 1) == 0)
      ceiling = (unsigned)strtoul(link->options[i] + sizeof prefix - 1, NULL, 10);
  return ceiling;
}

/* The inputs (PTX now, but for what the driver refuses: NVIDIA machine code)
 * linked by our driver into link->linked. The driver's linker needs a
 * current context; where the program has none, the primary context of
 * device 0 is current for the link. */
static nvJitLinkResult link_with_driver(struct link *link) {
  CUresult (*init)(unsigned) = DRIVER(CUresult (*)(unsigned), cuInit);
  CUresult (*get_current)(CUcontext *) = DRIVER(CUresult (*)(CUcontext *), cuCtxGetCurrent);
  CUresult (*retain)(CUcontext *, int) = DRIVER(CUresult (*)(CUcontext *, int),
                                                cuDevicePrimaryCtxRetain);
  CUresult (*release)(int) = DRIVER(CUresult (*)(int), cuDevicePrimaryCtxRelease_v2);
  CUresult (*push)(CUcontext) = DRIVER(CUresult (*)(CUcontext), cuCtxPushCurrent_v2);
  CUresult (*pop)(CUcontext *) = DRIVER(CUresult (*)(CUcontext *), cuCtxPopCurrent_v2);
  CUresult (*create)(unsigned, int *, void **, CUlinkState *) = DRIVER(
      CUresult (*)(unsigned, int *, void **, CUlinkState *), cuLinkCreate_v2);
  CUresult (*add)(CUlinkState, int, void *, size_t, const char *, unsigned, int *,
                  void **) = DRIVER(CUresult (*)(CUlinkState, int, void *, size_t, const char *,
                                                 unsigned, int *, void **),
                                    cuLinkAddData_v2);
  CUresult (*complete)(CUlinkState, void **, size_t *) = DRIVER(
      CUresult (*)(CUlinkState, void **, size_t *), cuLinkComplete);
  CUresult (*destroy)(CUlinkState) = DRIVER(CUresult (*)(CUlinkState), cuLinkDestroy);
  if (!init || !get_current || !retain || !release || !push || !pop || !create || !add ||
      !complete || !destroy) {
    append_log(&link->error_log, "ERROR: zmlir: the CUDA driver's linker is not loaded\n");
    return NVJITLINK_ERROR_INTERNAL;
  }
  CUcontext context = NULL;
  int pushed = 0;
  CUresult status = init(0);
  if (status == 0)
    status = get_current(&context);
  if (status == 0 && !context) {
    status = retain(&context, 0);
    if (status == 0) {
      status = push(context);
      pushed = status == 0;
      if (!pushed)
        release(0);
    }
  }
  enum { LOG_CAPACITY = 16384 };
  char *log_buffer = calloc(1, LOG_CAPACITY);
  int options[] = {CU_ERROR_LOG, CU_ERROR_LOG_SIZE, CU_MAX_REGISTERS};
  void *values[] = {log_buffer, (void *)(uintptr_t)(log_buffer ? LOG_CAPACITY : 0),
                    (void *)(uintptr_t)max_registers(link)};
  CUlinkState state = NULL;
  const char *failed = "cuInit";
  if (status == 0) {
    failed = "cuLinkCreate";
    status = create(3, options, values, &state);
  }
  for (size_t i = 0; i < link->count && status == 0; ++i) {
    failed = "cuLinkAddData";
    status = add(state, driver_input(link->inputs[i].type), link->inputs[i].data,
                 link->inputs[i].size, link->inputs[i].name, 0, NULL, NULL);
  }
  void *image = NULL;
  size_t size = 0;
  if (status == 0) {
    failed = "cuLinkComplete";
    status = complete(state, &image, &size);
  }
  nvJitLinkResult result = NVJITLINK_SUCCESS;
  if (status == 0) {
    free(link->linked);
    link->linked = copy(image, size);
    link->linked_size = size;
    if (!link->linked)
      result = NVJITLINK_ERROR_INTERNAL;
  } else {
    append_log(&link->error_log, "ERROR: zmlir: %s failed (CUresult %d)%s%s\n", failed, status,
               log_buffer && *log_buffer ? ": " : "", log_buffer ? log_buffer : "");
    result = NVJITLINK_ERROR_PTX_COMPILE;
  }
  if (state)
    destroy(state);
  free(log_buffer);
  if (pushed) {
    CUcontext popped;
    pop(&popped);
    release(0);
  }
  return result;
}

nvJitLinkResult nvJitLinkComplete(nvJitLinkHandle link) {
  if (!link)
    return NVJITLINK_ERROR_NULL_INPUT;
  if (link->count == 0) {
    append_log(&link->error_log, "ERROR: no inputs to link\n");
    return NVJITLINK_ERROR_INVALID_INPUT;
  }
  nvJitLinkResult result = link_ltoir(link);
  if (result != NVJITLINK_SUCCESS)
    return result;
  return link_with_driver(link);
}

/* The linked PTX, wherever a cubin or PTX is asked for. */
nvJitLinkResult nvJitLinkGetLinkedCubinSize(nvJitLinkHandle link, size_t *size) {
  if (!link || !size)
    return NVJITLINK_ERROR_NULL_INPUT;
  if (!link->linked)
    return NVJITLINK_ERROR_INVALID_INPUT;
  *size = link->linked_size;
  return NVJITLINK_SUCCESS;
}

nvJitLinkResult nvJitLinkGetLinkedCubin(nvJitLinkHandle link, void *cubin) {
  if (!link || !cubin)
    return NVJITLINK_ERROR_NULL_INPUT;
  if (!link->linked)
    return NVJITLINK_ERROR_INVALID_INPUT;
  memcpy(cubin, link->linked, link->linked_size);
  return NVJITLINK_SUCCESS;
}

nvJitLinkResult nvJitLinkGetLinkedPtxSize(nvJitLinkHandle link, size_t *size) {
  return nvJitLinkGetLinkedCubinSize(link, size);
}

nvJitLinkResult nvJitLinkGetLinkedPtx(nvJitLinkHandle link, char *ptx) {
  return nvJitLinkGetLinkedCubin(link, ptx);
}

/* A link to LTO-IR (`-lto` without `-ptx`, the output fed to another link):
 * not what our linker makes, and said so. */
nvJitLinkResult nvJitLinkGetLinkedLTOIRSize(nvJitLinkHandle link, size_t *size) {
  (void)size;
  if (!link)
    return NVJITLINK_ERROR_NULL_INPUT;
  append_log(&link->error_log, "ERROR: zmlir: linked LTO-IR is not supported; "
                               "ask for PTX or a cubin\n");
  return NVJITLINK_ERROR_INVALID_INPUT;
}

nvJitLinkResult nvJitLinkGetLinkedLTOIR(nvJitLinkHandle link, void *ltoir) {
  return nvJitLinkGetLinkedLTOIRSize(link, ltoir);
}

static nvJitLinkResult log_size(const char *log, size_t *size) {
  if (!size)
    return NVJITLINK_ERROR_NULL_INPUT;
  *size = log ? strlen(log) + 1 : 1;
  return NVJITLINK_SUCCESS;
}

static nvJitLinkResult log_text(const char *log, char *out) {
  if (!out)
    return NVJITLINK_ERROR_NULL_INPUT;
  strcpy(out, log ? log : "");
  return NVJITLINK_SUCCESS;
}

nvJitLinkResult nvJitLinkGetErrorLogSize(nvJitLinkHandle link, size_t *size) {
  return link ? log_size(link->error_log, size) : NVJITLINK_ERROR_NULL_INPUT;
}

nvJitLinkResult nvJitLinkGetErrorLog(nvJitLinkHandle link, char *log) {
  return link ? log_text(link->error_log, log) : NVJITLINK_ERROR_NULL_INPUT;
}

nvJitLinkResult nvJitLinkGetInfoLogSize(nvJitLinkHandle link, size_t *size) {
  return link ? log_size(link->info_log, size) : NVJITLINK_ERROR_NULL_INPUT;
}

nvJitLinkResult nvJitLinkGetInfoLog(nvJitLinkHandle link, char *log) {
  return link ? log_text(link->info_log, log) : NVJITLINK_ERROR_NULL_INPUT;
}

/* The functions we stand in for; a program built against nvJitLink.h calls
 * them by versioned names (`__nvJitLinkCreate_13_5`), which dlsym maps to
 * these. */
static const struct {
  const char *name;
  void *function;
} functions[] = {
#define F(name) {#name, (void *)name}
    F(nvJitLinkCreate),         F(nvJitLinkDestroy),
    F(nvJitLinkAddData),        F(nvJitLinkAddFile),
    F(nvJitLinkComplete),       F(nvJitLinkGetLinkedCubinSize),
    F(nvJitLinkGetLinkedCubin), F(nvJitLinkGetLinkedPtxSize),
    F(nvJitLinkGetLinkedPtx),   F(nvJitLinkGetLinkedLTOIRSize),
    F(nvJitLinkGetLinkedLTOIR), F(nvJitLinkGetErrorLogSize),
    F(nvJitLinkGetErrorLog),    F(nvJitLinkGetInfoLogSize),
    F(nvJitLinkGetInfoLog),
#undef F
};

void *zmlir_nvjitlink_function(const char *name) {
  char plain[64];
  /* __nvJitLinkCreate_13_5 -> nvJitLinkCreate */
  if (strncmp(name, "__nvJitLink", 11) == 0) {
    const char *end = strchr(name + 11, '_');
    size_t n = end ? (size_t)(end - (name + 2)) : 0;
    if (!n || n >= sizeof plain)
      return NULL;
    memcpy(plain, name + 2, n);
    plain[n] = '\0';
    name = plain;
  }
  for (size_t i = 0; i < sizeof functions / sizeof *functions; ++i)
    if (strcmp(functions[i].name, name) == 0)
      return functions[i].function;
  return NULL;
}

/* Programs linked against libnvJitLink call the versioned names. */
#define VERSIONED(minor)                                                                           \
  __attribute__((alias("nvJitLinkCreate"))) nvJitLinkResult __nvJitLinkCreate_##minor();           \
  __attribute__((alias("nvJitLinkDestroy"))) nvJitLinkResult __nvJitLinkDestroy_##minor();         \
  __attribute__((alias("nvJitLinkAddData"))) nvJitLinkResult __nvJitLinkAddData_##minor();         \
  __attribute__((alias("nvJitLinkAddFile"))) nvJitLinkResult __nvJitLinkAddFile_##minor();         \
  __attribute__((alias("nvJitLinkComplete"))) nvJitLinkResult __nvJitLinkComplete_##minor();       \
  __attribute__((alias("nvJitLinkGetLinkedCubinSize"))) nvJitLinkResult                            \
  __nvJitLinkGetLinkedCubinSize_##minor();                                                         \
  __attribute__((alias("nvJitLinkGetLinkedCubin"))) nvJitLinkResult                                \
  __nvJitLinkGetLinkedCubin_##minor();                                                             \
  __attribute__((alias("nvJitLinkGetLinkedPtxSize"))) nvJitLinkResult                              \
  __nvJitLinkGetLinkedPtxSize_##minor();                                                           \
  __attribute__((alias("nvJitLinkGetLinkedPtx"))) nvJitLinkResult                                  \
  __nvJitLinkGetLinkedPtx_##minor();                                                               \
  __attribute__((alias("nvJitLinkGetLinkedLTOIRSize"))) nvJitLinkResult                            \
  __nvJitLinkGetLinkedLTOIRSize_##minor();                                                         \
  __attribute__((alias("nvJitLinkGetLinkedLTOIR"))) nvJitLinkResult                                \
  __nvJitLinkGetLinkedLTOIR_##minor();                                                             \
  __attribute__((alias("nvJitLinkGetErrorLogSize"))) nvJitLinkResult                               \
  __nvJitLinkGetErrorLogSize_##minor();                                                            \
  __attribute__((alias("nvJitLinkGetErrorLog"))) nvJitLinkResult __nvJitLinkGetErrorLog_##minor(); \
  __attribute__((alias("nvJitLinkGetInfoLogSize"))) nvJitLinkResult                                \
  __nvJitLinkGetInfoLogSize_##minor();                                                             \
  __attribute__((alias("nvJitLinkGetInfoLog"))) nvJitLinkResult __nvJitLinkGetInfoLog_##minor();

VERSIONED(12_0)
VERSIONED(12_1)
VERSIONED(12_2)
VERSIONED(12_3)
VERSIONED(12_4)
VERSIONED(12_5)
VERSIONED(12_6)
VERSIONED(12_7)
VERSIONED(12_8)
VERSIONED(12_9)
VERSIONED(13_0)
VERSIONED(13_1)
VERSIONED(13_2)
VERSIONED(13_3)
VERSIONED(13_4)
VERSIONED(13_5)
VERSIONED(13_6)
VERSIONED(13_7)
VERSIONED(13_8)
VERSIONED(13_9)
