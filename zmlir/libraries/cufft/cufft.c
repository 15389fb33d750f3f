/* Our cuFFT on the host route: plans and transforms on oneMKL's DFTI, with
 * cuFFT's conventions (route.c decides whether these functions are the ones
 * called).
 *
 * A plan is cuFFT's description of the transform (rank, sizes, the advanced
 * layout, batch, type) kept as given; oneMKL descriptors are made from it at
 * the first execution of each placement (in place, out of place) and
 * direction, since cuFFT's basic layout pads an in-place real array and a
 * C2C's inverse reads the output's layout. A transform runs as a job in the
 * plan's stream (zmlir_enqueue), on the application's pointers (device memory
 * is host memory here). cuFFT's conventions, which DFTI shares: forward is
 * exp(-2 pi i jk/n), neither direction scaled, R2C writes the n/2+1
 * non-redundant outputs of the last dimension (CCE "complex-complex"
 * storage), C2R reads them. No work area is needed: sizes are 0. */
#include "route.h"

#include <cufft.h>
#include <cufftXt.h>

#include <dlfcn.h>
#include <mkl_dfti.h>
#include <mkl_service.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One transform as cuFFT describes it, in elements. */
struct layout {
  int rank;
  long long n[3];
  int advanced; /* inembed and onembed given: istride/idist/ostride/odist count */
  long long inembed[3], onembed[3];
  long long istride, idist, ostride, odist, batch;
};

/* oneMKL's descriptors for a plan, shared by the plan and its pending jobs:
 * [in place][inverse], made at first use. */
struct transforms {
  int refs;
  cufftType type;
  struct layout layout;
  DFTI_DESCRIPTOR_HANDLE made[2][2];
};

struct plan {
  int live;
  CUstream stream;
  void *work_area;
  int auto_allocate;
  struct transforms *transforms; /* NULL until made */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct plan *plans; /* handle h is plans[h - 1] */
static int plan_count;

static void release(struct transforms *t) {
  if (!t || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) != 0)
    return;
  for (int p = 0; p < 2; ++p)
    for (int d = 0; d < 2; ++d)
      if (t->made[p][d])
        DftiFreeDescriptor(&t->made[p][d]);
  free(t);
}

/* The plan of `handle`, or NULL; call with `lock` held. */
static struct plan *find(cufftHandle handle) {
  return handle >= 1 && handle <= plan_count && plans[handle - 1].live ? &plans[handle - 1] : NULL;
}

/* oneMKL threads through TBB, the runtime Intel's OpenCL CPU runtime uses in
 * this process already, unless MKL_THREADING_LAYER says otherwise; TBB is
 * loaded first from oneMKL's folder (where the wheels put it), since
 * oneMKL's own dlopen of its TBB layer does not look there. Without TBB, one
 * thread. */
static void choose_threading(void) {
  if (getenv("MKL_THREADING_LAYER"))
    return;
  void *tbb = dlopen("libtbb.so.12", RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
  if (!tbb)
    tbb = dlopen(ZMLIR_MKL_LIBDIR "/libtbb.so.12", RTLD_NOW | RTLD_GLOBAL);
  if (!tbb)
    zmlir_log(0, "no libtbb.so.12 next to oneMKL: transforms run on one thread");
  MKL_Set_Threading_Layer(tbb ? MKL_THREADING_TBB : MKL_THREADING_SEQUENTIAL);
}

static int is_double(cufftType type) {
  return type == CUFFT_Z2Z || type == CUFFT_D2Z || type == CUFFT_Z2D;
}
static int is_complex(cufftType type) {
  return type == CUFFT_C2C || type == CUFFT_Z2Z;
}
static int is_inverse_real(cufftType type) {
  return type == CUFFT_C2R || type == CUFFT_Z2D;
}

/* cuFFT's checks of a plan's description. */
static cufftResult check(int rank, const long long *n, long long batch, cufftType type) {
  if (type != CUFFT_C2C && type != CUFFT_R2C && type != CUFFT_C2R && type != CUFFT_Z2Z &&
      type != CUFFT_D2Z && type != CUFFT_Z2D)
    return CUFFT_INVALID_TYPE;
  if (rank < 1 || rank > 3) /* an H200's cuFFT 12.0 answers so */
    return CUFFT_INVALID_VALUE;
  if (!n || batch < 1)
    return CUFFT_INVALID_SIZE;
  for (int i = 0; i < rank; ++i)
    if (n[i] < 1)
      return CUFFT_INVALID_SIZE;
  return CUFFT_SUCCESS;
}

static cufftResult make(cufftHandle handle, int rank, const long long *n, const long long *inembed,
                        long long istride, long long idist, const long long *onembed,
                        long long ostride, long long odist, cufftType type, long long batch,
                        size_t *work_size) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, choose_threading);
  cufftResult status = check(rank, n, batch, type);
  if (status != CUFFT_SUCCESS)
    return status;
  struct transforms *t = calloc(1, sizeof *t);
  if (!t)
    return CUFFT_ALLOC_FAILED;
  t->refs = 1;
  t->type = type;
  struct layout *l = &t->layout;
  l->rank = rank;
  l->batch = batch;
  /* NULL inembed or onembed: the basic layout, the strides and distances
   * ignored (cuFFT's rule). */
  l->advanced = inembed && onembed;
  for (int i = 0; i < rank; ++i) {
    l->n[i] = n[i];
    l->inembed[i] = l->advanced ? inembed[i] : 0;
    l->onembed[i] = l->advanced ? onembed[i] : 0;
    if (l->advanced && i > 0 && (inembed[i] < 1 || onembed[i] < 1))
      status = CUFFT_INVALID_VALUE;
  }
  l->istride = istride, l->idist = idist, l->ostride = ostride, l->odist = odist;
  if (status != CUFFT_SUCCESS) {
    free(t);
    return status;
  }
  pthread_mutex_lock(&lock);
  struct plan *p = find(handle);
  struct transforms *old = NULL;
  if (p) {
    old = p->transforms;
    p->transforms = t;
  }
  pthread_mutex_unlock(&lock);
  if (!p) {
    free(t);
    return CUFFT_INVALID_PLAN;
  }
  release(old);
  if (work_size)
    *work_size = 0;
  return CUFFT_SUCCESS;
}

static cufftResult make_int(cufftHandle handle, int rank, const int *n, const int *inembed,
                            int istride, int idist, const int *onembed, int ostride, int odist,
                            cufftType type, int batch, size_t *work_size) {
  long long n64[3], in64[3], on64[3];
  if (rank < 1 || rank > 3)
    return CUFFT_INVALID_VALUE;
  if (!n)
    return CUFFT_INVALID_SIZE;
  for (int i = 0; i < rank; ++i) {
    n64[i] = n[i];
    in64[i] = inembed ? inembed[i] : 0;
    on64[i] = onembed ? onembed[i] : 0;
  }
  return make(handle, rank, n64, inembed ? in64 : NULL, istride, idist, onembed ? on64 : NULL,
              ostride, odist, type, batch, work_size);
}

/* -- handles ---------------------------------------------------------------------- */

cufftResult IMPL(cufftCreate)(cufftHandle *handle) {
  if (!handle)
    return CUFFT_INVALID_VALUE;
  pthread_mutex_lock(&lock);
  int free_slot = 0;
  while (free_slot < plan_count && plans[free_slot].live)
    ++free_slot;
  if (free_slot == plan_count) {
    struct plan *grown = realloc(plans, (size_t)(plan_count + 16) * sizeof *plans);
    if (!grown) {
      pthread_mutex_unlock(&lock);
      return CUFFT_ALLOC_FAILED;
    }
    memset(grown + plan_count, 0, 16 * sizeof *plans);
    plans = grown;
    plan_count += 16;
  }
  plans[free_slot] = (struct plan){.live = 1, .auto_allocate = 1};
  *handle = free_slot + 1;
  pthread_mutex_unlock(&lock);
  return CUFFT_SUCCESS;
}
ABI_CHECK(cufftCreate);

cufftResult IMPL(cufftDestroy)(cufftHandle handle) {
  pthread_mutex_lock(&lock);
  struct plan *p = find(handle);
  struct transforms *t = p ? p->transforms : NULL;
  if (p)
    *p = (struct plan){0};
  pthread_mutex_unlock(&lock);
  if (!p)
    return CUFFT_INVALID_PLAN;
  release(t); /* pending jobs hold their own reference */
  return CUFFT_SUCCESS;
}
ABI_CHECK(cufftDestroy);

cufftResult IMPL(cufftSetStream)(cufftHandle handle, cudaStream_t stream) {
  pthread_mutex_lock(&lock);
  struct plan *p = find(handle);
  if (p)
    p->stream = (CUstream)stream;
  pthread_mutex_unlock(&lock);
  return p ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
}
ABI_CHECK(cufftSetStream);

cufftResult IMPL(cufftSetWorkArea)(cufftHandle handle, void *work_area) {
  pthread_mutex_lock(&lock);
  struct plan *p = find(handle);
  if (p)
    p->work_area = work_area;
  pthread_mutex_unlock(&lock);
  return p ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
}
ABI_CHECK(cufftSetWorkArea);

cufftResult IMPL(cufftSetAutoAllocation)(cufftHandle handle, int auto_allocate) {
  pthread_mutex_lock(&lock);
  struct plan *p = find(handle);
  if (p)
    p->auto_allocate = auto_allocate;
  pthread_mutex_unlock(&lock);
  return p ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
}
ABI_CHECK(cufftSetAutoAllocation);

/* -- making plans ----------------------------------------------------------------- */

cufftResult IMPL(cufftMakePlanMany64)(cufftHandle plan, int rank, long long *n, long long *inembed,
                                      long long istride, long long idist, long long *onembed,
                                      long long ostride, long long odist, cufftType type,
                                      long long batch, size_t *work_size) {
  return make(plan, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch,
              work_size);
}
ABI_CHECK(cufftMakePlanMany64);

cufftResult IMPL(cufftMakePlanMany)(cufftHandle plan, int rank, int *n, int *inembed, int istride,
                                    int idist, int *onembed, int ostride, int odist, cufftType type,
                                    int batch, size_t *work_size) {
  return make_int(plan, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch,
                  work_size);
}
ABI_CHECK(cufftMakePlanMany);

cufftResult IMPL(cufftMakePlan1d)(cufftHandle plan, int nx, cufftType type, int batch,
                                  size_t *work_size) {
  return make_int(plan, 1, &nx, NULL, 1, 0, NULL, 1, 0, type, batch, work_size);
}
ABI_CHECK(cufftMakePlan1d);

cufftResult IMPL(cufftMakePlan2d)(cufftHandle plan, int nx, int ny, cufftType type,
                                  size_t *work_size) {
  int n[] = {nx, ny};
  return make_int(plan, 2, n, NULL, 1, 0, NULL, 1, 0, type, 1, work_size);
}
ABI_CHECK(cufftMakePlan2d);

cufftResult IMPL(cufftMakePlan3d)(cufftHandle plan, int nx, int ny, int nz, cufftType type,
                                  size_t *work_size) {
  int n[] = {nx, ny, nz};
  return make_int(plan, 3, n, NULL, 1, 0, NULL, 1, 0, type, 1, work_size);
}
ABI_CHECK(cufftMakePlan3d);

/* cufftPlan*: cufftCreate and cufftMakePlan*; no handle is left behind when
 * the description is refused. */
static cufftResult create_and(cufftHandle *plan, cufftResult (*made)(cufftHandle, void *),
                              void *args) {
  if (!plan)
    return CUFFT_INVALID_VALUE;
  cufftHandle handle;
  cufftResult status = IMPL(cufftCreate)(&handle);
  if (status != CUFFT_SUCCESS)
    return status;
  status = made(handle, args);
  if (status != CUFFT_SUCCESS) {
    IMPL(cufftDestroy)(handle);
    return status;
  }
  *plan = handle;
  return CUFFT_SUCCESS;
}

struct many_args {
  int rank, *n, *inembed, istride, idist, *onembed, ostride, odist;
  cufftType type;
  int batch;
};

static cufftResult make_many(cufftHandle handle, void *data) {
  struct many_args *a = data;
  return make_int(handle, a->rank, a->n, a->inembed, a->istride, a->idist, a->onembed, a->ostride,
                  a->odist, a->type, a->batch, NULL);
}

cufftResult IMPL(cufftPlanMany)(cufftHandle *plan, int rank, int *n, int *inembed, int istride,
                                int idist, int *onembed, int ostride, int odist, cufftType type,
                                int batch) {
  struct many_args a = {rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch};
  return create_and(plan, make_many, &a);
}
ABI_CHECK(cufftPlanMany);

cufftResult IMPL(cufftPlan1d)(cufftHandle *plan, int nx, cufftType type, int batch) {
  struct many_args a = {1, &nx, NULL, 1, 0, NULL, 1, 0, type, batch};
  return create_and(plan, make_many, &a);
}
ABI_CHECK(cufftPlan1d);

cufftResult IMPL(cufftPlan2d)(cufftHandle *plan, int nx, int ny, cufftType type) {
  int n[] = {nx, ny};
  struct many_args a = {2, n, NULL, 1, 0, NULL, 1, 0, type, 1};
  return create_and(plan, make_many, &a);
}
ABI_CHECK(cufftPlan2d);

cufftResult IMPL(cufftPlan3d)(cufftHandle *plan, int nx, int ny, int nz, cufftType type) {
  int n[] = {nx, ny, nz};
  struct many_args a = {3, n, NULL, 1, 0, NULL, 1, 0, type, 1};
  return create_and(plan, make_many, &a);
}
ABI_CHECK(cufftPlan3d);

/* -- work-area sizes: none needed ------------------------------------------------- */

static cufftResult no_work(cufftHandle handle, size_t *work_size) {
  pthread_mutex_lock(&lock);
  int live = find(handle) != NULL;
  pthread_mutex_unlock(&lock);
  if (!live)
    return CUFFT_INVALID_PLAN;
  if (work_size)
    *work_size = 0;
  return CUFFT_SUCCESS;
}

static cufftResult no_work_for(int rank, const long long *n, long long batch, cufftType type,
                               size_t *work_size) {
  cufftResult status = check(rank, n, batch, type);
  if (status == CUFFT_SUCCESS && work_size)
    *work_size = 0;
  return status;
}

cufftResult IMPL(cufftGetSize)(cufftHandle handle, size_t *work_size) {
  return no_work(handle, work_size);
}
ABI_CHECK(cufftGetSize);

cufftResult IMPL(cufftGetSize1d)(cufftHandle handle, int nx, cufftType type, int batch,
                                 size_t *work_size) {
  long long n[] = {nx};
  cufftResult status = no_work_for(1, n, batch, type, work_size);
  return status == CUFFT_SUCCESS ? no_work(handle, work_size) : status;
}
ABI_CHECK(cufftGetSize1d);

cufftResult IMPL(cufftGetSize2d)(cufftHandle handle, int nx, int ny, cufftType type,
                                 size_t *work_size) {
  long long n[] = {nx, ny};
  cufftResult status = no_work_for(2, n, 1, type, work_size);
  return status == CUFFT_SUCCESS ? no_work(handle, work_size) : status;
}
ABI_CHECK(cufftGetSize2d);

cufftResult IMPL(cufftGetSize3d)(cufftHandle handle, int nx, int ny, int nz, cufftType type,
                                 size_t *work_size) {
  long long n[] = {nx, ny, nz};
  cufftResult status = no_work_for(3, n, 1, type, work_size);
  return status == CUFFT_SUCCESS ? no_work(handle, work_size) : status;
}
ABI_CHECK(cufftGetSize3d);

cufftResult IMPL(cufftGetSizeMany)(cufftHandle handle, int rank, int *n, int *inembed, int istride,
                                   int idist, int *onembed, int ostride, int odist, cufftType type,
                                   int batch, size_t *work_size) {
  (void)inembed, (void)istride, (void)idist, (void)onembed, (void)ostride, (void)odist;
  long long n64[3] = {0};
  for (int i = 0; n && i < rank && i < 3; ++i)
    n64[i] = n[i];
  cufftResult status = no_work_for(rank, n ? n64 : NULL, batch, type, work_size);
  return status == CUFFT_SUCCESS ? no_work(handle, work_size) : status;
}
ABI_CHECK(cufftGetSizeMany);

cufftResult IMPL(cufftGetSizeMany64)(cufftHandle handle, int rank, long long *n, long long *inembed,
                                     long long istride, long long idist, long long *onembed,
                                     long long ostride, long long odist, cufftType type,
                                     long long batch, size_t *work_size) {
  (void)inembed, (void)istride, (void)idist, (void)onembed, (void)ostride, (void)odist;
  cufftResult status = no_work_for(rank, n, batch, type, work_size);
  return status == CUFFT_SUCCESS ? no_work(handle, work_size) : status;
}
ABI_CHECK(cufftGetSizeMany64);

cufftResult IMPL_ALWAYS(cufftEstimate1d)(int nx, cufftType type, int batch, size_t *work_size) {
  long long n[] = {nx};
  return no_work_for(1, n, batch, type, work_size);
}
ABI_CHECK_ALWAYS(cufftEstimate1d);

cufftResult IMPL_ALWAYS(cufftEstimate2d)(int nx, int ny, cufftType type, size_t *work_size) {
  long long n[] = {nx, ny};
  return no_work_for(2, n, 1, type, work_size);
}
ABI_CHECK_ALWAYS(cufftEstimate2d);

cufftResult IMPL_ALWAYS(cufftEstimate3d)(int nx, int ny, int nz, cufftType type,
                                         size_t *work_size) {
  long long n[] = {nx, ny, nz};
  return no_work_for(3, n, 1, type, work_size);
}
ABI_CHECK_ALWAYS(cufftEstimate3d);

cufftResult IMPL_ALWAYS(cufftEstimateMany)(int rank, int *n, int *inembed, int istride, int idist,
                                           int *onembed, int ostride, int odist, cufftType type,
                                           int batch, size_t *work_size) {
  (void)inembed, (void)istride, (void)idist, (void)onembed, (void)ostride, (void)odist;
  long long n64[3] = {0};
  for (int i = 0; n && i < rank && i < 3; ++i)
    n64[i] = n[i];
  return no_work_for(rank, n ? n64 : NULL, batch, type, work_size);
}
ABI_CHECK_ALWAYS(cufftEstimateMany);

/* -- versions --------------------------------------------------------------------- */

cufftResult IMPL_ALWAYS(cufftGetVersion)(int *version) {
  if (!version)
    return CUFFT_INVALID_VALUE;
  *version = CUFFT_VERSION;
  return CUFFT_SUCCESS;
}
ABI_CHECK_ALWAYS(cufftGetVersion);

cufftResult IMPL_ALWAYS(cufftGetProperty)(libraryPropertyType type, int *value) {
  if (!value)
    return CUFFT_INVALID_VALUE;
  switch (type) {
  case MAJOR_VERSION:
    *value = CUFFT_VER_MAJOR;
    return CUFFT_SUCCESS;
  case MINOR_VERSION:
    *value = CUFFT_VER_MINOR;
    return CUFFT_SUCCESS;
  case PATCH_LEVEL:
    *value = CUFFT_VER_PATCH;
    return CUFFT_SUCCESS;
  default:
    return CUFFT_INVALID_TYPE;
  }
}
ABI_CHECK_ALWAYS(cufftGetProperty);

/* -- execution -------------------------------------------------------------------- */

/* The element strides (innermost last) and distance of one side of the
 * transform: `embed` the advanced layout's, else the basic layout's `dims`. */
static void side(const struct layout *l, const long long *embed, long long stride, long long dist,
                 const long long *dims, MKL_LONG strides[4], MKL_LONG *distance) {
  strides[0] = 0; /* oneMKL's offset */
  long long step = l->advanced ? stride : 1;
  for (int i = l->rank - 1; i >= 0; --i) {
    strides[i + 1] = (MKL_LONG)step;
    step *= l->advanced ? (i > 0 ? embed[i] : 0) : dims[i];
  }
  *distance = (MKL_LONG)(l->advanced ? dist : step);
}

static DFTI_DESCRIPTOR_HANDLE describe(const struct transforms *t, int in_place, int inverse) {
  const struct layout *l = &t->layout;
  int real = !is_complex(t->type);
  /* The basic layout's arrays: the complex side has n/2+1 elements in the
   * last dimension; the real side n, or 2(n/2+1) where it shares the array. */
  long long complex_dims[3], real_dims[3];
  MKL_LONG lengths[3];
  for (int i = 0; i < l->rank; ++i) {
    complex_dims[i] = real_dims[i] = l->n[i];
    lengths[i] = (MKL_LONG)l->n[i];
  }
  int last = l->rank - 1;
  if (real) {
    complex_dims[last] = l->n[last] / 2 + 1;
    if (in_place)
      real_dims[last] = 2 * complex_dims[last];
  }
  /* cuFFT's input is oneMKL's forward domain for a forward transform (C2C
   * forward, R2C), its backward domain for an inverse (C2C inverse, C2R). */
  const long long *in_dims = is_inverse_real(t->type) ? complex_dims : real_dims;
  const long long *out_dims = real && !is_inverse_real(t->type) ? complex_dims : real_dims;
  MKL_LONG in_strides[4], out_strides[4], in_dist, out_dist;
  side(l, l->inembed, l->istride, l->idist, in_dims, in_strides, &in_dist);
  side(l, l->onembed, l->ostride, l->odist, out_dims, out_strides, &out_dist);

  DFTI_DESCRIPTOR_HANDLE d = NULL;
  enum DFTI_CONFIG_VALUE precision = is_double(t->type) ? DFTI_DOUBLE : DFTI_SINGLE;
  enum DFTI_CONFIG_VALUE domain = real ? DFTI_REAL : DFTI_COMPLEX;
  MKL_LONG status = l->rank == 1
                        ? DftiCreateDescriptor(&d, precision, domain, 1, lengths[0])
                        : DftiCreateDescriptor(&d, precision, domain, (MKL_LONG)l->rank, lengths);
  if (status == DFTI_NO_ERROR && real)
    status = DftiSetValue(d, DFTI_CONJUGATE_EVEN_STORAGE, DFTI_COMPLEX_COMPLEX);
  if (status == DFTI_NO_ERROR)
    status = DftiSetValue(d, DFTI_PLACEMENT, in_place ? DFTI_INPLACE : DFTI_NOT_INPLACE);
  if (status == DFTI_NO_ERROR)
    status = DftiSetValue(d, DFTI_NUMBER_OF_TRANSFORMS, (MKL_LONG)l->batch);
  if (status == DFTI_NO_ERROR)
    status = DftiSetValue(d, DFTI_FWD_STRIDES, inverse ? out_strides : in_strides);
  if (status == DFTI_NO_ERROR)
    status = DftiSetValue(d, DFTI_BWD_STRIDES, inverse ? in_strides : out_strides);
  if (status == DFTI_NO_ERROR && l->batch > 1)
    status = DftiSetValue(d, DFTI_FWD_DISTANCE, inverse ? out_dist : in_dist);
  if (status == DFTI_NO_ERROR && l->batch > 1)
    status = DftiSetValue(d, DFTI_BWD_DISTANCE, inverse ? in_dist : out_dist);
  if (status == DFTI_NO_ERROR)
    status = DftiCommitDescriptor(d);
  if (status != DFTI_NO_ERROR) {
    zmlir_log(1, "oneMKL refuses this cuFFT plan (%s): returning CUFFT_NOT_SUPPORTED",
              DftiErrorMessage(status));
    if (d)
      DftiFreeDescriptor(&d);
    return NULL;
  }
  return d;
}

struct fft_job {
  struct zmlir_job job;
  struct transforms *transforms;
  DFTI_DESCRIPTOR_HANDLE descriptor;
  void *in, *out;
  int inverse;
};

static void run_fft(struct zmlir_job *job) {
  struct fft_job *f = (struct fft_job *)job;
  MKL_LONG status;
  if (f->in == f->out)
    status = f->inverse ? DftiComputeBackward(f->descriptor, f->in)
                        : DftiComputeForward(f->descriptor, f->in);
  else
    status = f->inverse ? DftiComputeBackward(f->descriptor, f->in, f->out)
                        : DftiComputeForward(f->descriptor, f->in, f->out);
  if (status != DFTI_NO_ERROR)
    zmlir_log(1, "a transform failed in oneMKL: %s", DftiErrorMessage(status));
  if (!job->keep) /* a graph's job keeps its plan's descriptors */
    release(f->transforms);
}

static cufftResult execute(cufftHandle handle, void *in, void *out, int inverse,
                           int (*accepts)(cufftType)) {
  pthread_mutex_lock(&lock);
  struct plan *p = find(handle);
  struct transforms *t = p ? p->transforms : NULL;
  CUstream stream = p ? p->stream : NULL;
  cufftResult status = !t                  ? CUFFT_INVALID_PLAN
                       : !accepts(t->type) ? CUFFT_INVALID_VALUE
                       : !in || !out       ? CUFFT_INVALID_VALUE
                                           : CUFFT_SUCCESS;
  DFTI_DESCRIPTOR_HANDLE d = NULL;
  if (status == CUFFT_SUCCESS) {
    int in_place = in == out;
    d = t->made[in_place][inverse];
    if (!d)
      d = t->made[in_place][inverse] = describe(t, in_place, inverse);
    if (!d)
      status = CUFFT_NOT_SUPPORTED;
    else
      __atomic_add_fetch(&t->refs, 1, __ATOMIC_ACQ_REL);
  }
  pthread_mutex_unlock(&lock);
  if (status != CUFFT_SUCCESS)
    return status;
  struct fft_job *job = calloc(1, sizeof *job);
  if (!job) {
    release(t);
    return CUFFT_ALLOC_FAILED;
  }
  *job = (struct fft_job){{run_fft, 0}, t, d, in, out, inverse};
  if (zmlir_enqueue(stream, &job->job, 0) != CUDA_SUCCESS) {
    release(t);
    return CUFFT_EXEC_FAILED;
  }
  return CUFFT_SUCCESS;
}

static int c2c(cufftType type) {
  return type == CUFFT_C2C;
}
static int z2z(cufftType type) {
  return type == CUFFT_Z2Z;
}
static int r2c(cufftType type) {
  return type == CUFFT_R2C;
}
static int c2r(cufftType type) {
  return type == CUFFT_C2R;
}
static int d2z(cufftType type) {
  return type == CUFFT_D2Z;
}
static int z2d(cufftType type) {
  return type == CUFFT_Z2D;
}
static int any_type(cufftType type) {
  (void)type;
  return 1;
}

static int inverse_of(int direction, int *inverse) {
  *inverse = direction == CUFFT_INVERSE;
  return direction == CUFFT_FORWARD || direction == CUFFT_INVERSE;
}

cufftResult IMPL(cufftExecC2C)(cufftHandle plan, cufftComplex *in, cufftComplex *out,
                               int direction) {
  int inverse;
  return inverse_of(direction, &inverse) ? execute(plan, in, out, inverse, c2c)
                                         : CUFFT_INVALID_VALUE;
}
ABI_CHECK(cufftExecC2C);

cufftResult IMPL(cufftExecZ2Z)(cufftHandle plan, cufftDoubleComplex *in, cufftDoubleComplex *out,
                               int direction) {
  int inverse;
  return inverse_of(direction, &inverse) ? execute(plan, in, out, inverse, z2z)
                                         : CUFFT_INVALID_VALUE;
}
ABI_CHECK(cufftExecZ2Z);

cufftResult IMPL(cufftExecR2C)(cufftHandle plan, cufftReal *in, cufftComplex *out) {
  return execute(plan, in, out, 0, r2c);
}
ABI_CHECK(cufftExecR2C);

cufftResult IMPL(cufftExecC2R)(cufftHandle plan, cufftComplex *in, cufftReal *out) {
  return execute(plan, in, out, 1, c2r);
}
ABI_CHECK(cufftExecC2R);

cufftResult IMPL(cufftExecD2Z)(cufftHandle plan, cufftDoubleReal *in, cufftDoubleComplex *out) {
  return execute(plan, in, out, 0, d2z);
}
ABI_CHECK(cufftExecD2Z);

cufftResult IMPL(cufftExecZ2D)(cufftHandle plan, cufftDoubleComplex *in, cufftDoubleReal *out) {
  return execute(plan, in, out, 1, z2d);
}
ABI_CHECK(cufftExecZ2D);

/* -- cufftXt: the same transforms described by their data types ------------------- */

static int xt_type(cudaDataType input, cudaDataType output, cudaDataType execution,
                   cufftType *type) {
  static const struct {
    cudaDataType input, output, execution;
    cufftType type;
  } known[] = {
      {CUDA_C_32F, CUDA_C_32F, CUDA_C_32F, CUFFT_C2C},
      {CUDA_R_32F, CUDA_C_32F, CUDA_C_32F, CUFFT_R2C},
      {CUDA_C_32F, CUDA_R_32F, CUDA_C_32F, CUFFT_C2R},
      {CUDA_C_64F, CUDA_C_64F, CUDA_C_64F, CUFFT_Z2Z},
      {CUDA_R_64F, CUDA_C_64F, CUDA_C_64F, CUFFT_D2Z},
      {CUDA_C_64F, CUDA_R_64F, CUDA_C_64F, CUFFT_Z2D},
  };
  for (size_t i = 0; i < sizeof known / sizeof *known; ++i)
    if (known[i].input == input && known[i].output == output && known[i].execution == execution) {
      *type = known[i].type;
      return 1;
    }
  return 0;
}

cufftResult IMPL(cufftXtMakePlanMany)(cufftHandle plan, int rank, long long *n, long long *inembed,
                                      long long istride, long long idist, cudaDataType input_type,
                                      long long *onembed, long long ostride, long long odist,
                                      cudaDataType output_type, long long batch, size_t *work_size,
                                      cudaDataType execution_type) {
  cufftType type;
  if (!xt_type(input_type, output_type, execution_type, &type)) {
    zmlir_log(1, "cufftXtMakePlanMany: data types %d -> %d (execution %d) are not supported",
              (int)input_type, (int)output_type, (int)execution_type);
    return CUFFT_NOT_SUPPORTED;
  }
  return make(plan, rank, n, inembed, istride, idist, onembed, ostride, odist, type, batch,
              work_size);
}
ABI_CHECK(cufftXtMakePlanMany);

cufftResult IMPL(cufftXtGetSizeMany)(cufftHandle plan, int rank, long long *n, long long *inembed,
                                     long long istride, long long idist, cudaDataType input_type,
                                     long long *onembed, long long ostride, long long odist,
                                     cudaDataType output_type, long long batch, size_t *work_size,
                                     cudaDataType execution_type) {
  (void)inembed, (void)istride, (void)idist, (void)onembed, (void)ostride, (void)odist;
  cufftType type;
  if (!xt_type(input_type, output_type, execution_type, &type))
    return CUFFT_NOT_SUPPORTED;
  cufftResult status = no_work_for(rank, n, batch, type, work_size);
  return status == CUFFT_SUCCESS ? no_work(plan, work_size) : status;
}
ABI_CHECK(cufftXtGetSizeMany);

cufftResult IMPL(cufftXtExec)(cufftHandle plan, void *in, void *out, int direction) {
  pthread_mutex_lock(&lock);
  struct plan *p = find(plan);
  int type = p && p->transforms ? (int)p->transforms->type : -1;
  pthread_mutex_unlock(&lock);
  if (type < 0)
    return CUFFT_INVALID_PLAN;
  int inverse;
  if (is_complex((cufftType)type)) {
    if (!inverse_of(direction, &inverse))
      return CUFFT_INVALID_VALUE;
  } else {
    inverse = is_inverse_real((cufftType)type);
  }
  return execute(plan, in, out, inverse, any_type);
}
ABI_CHECK(cufftXtExec);

/* A plan over several GPUs: refused as NVIDIA's cuFFT 12.0 refuses it (its
 * answers on our driver: an unmade plan's handle, then at least two GPUs,
 * then each one a device), and otherwise not made, since ours computes on
 * the host alone. NVIDIA's accepts a GPU listed twice ({0, 0}); ours does
 * not split a transform, so says it is not supported. */
cufftResult IMPL(cufftXtSetGPUs)(cufftHandle handle, int nGPUs, int *whichGPUs) {
  pthread_mutex_lock(&lock);
  struct plan *p = find(handle);
  int unmade = p && !p->transforms;
  pthread_mutex_unlock(&lock);
  if (!unmade)
    return CUFFT_INVALID_PLAN;
  if (nGPUs < 2 || !whichGPUs)
    return CUFFT_INVALID_VALUE;
  int count = 0;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&count) != CUDA_SUCCESS)
    return CUFFT_INVALID_DEVICE;
  for (int i = 0; i < nGPUs; ++i)
    if (whichGPUs[i] < 0 || whichGPUs[i] >= count)
      return CUFFT_INVALID_DEVICE;
  zmlir_log(1, "cufftXtSetGPUs: a plan over %d GPUs is not supported: CUFFT_NOT_SUPPORTED", nGPUs);
  return CUFFT_NOT_SUPPORTED;
}
ABI_CHECK(cufftXtSetGPUs);
