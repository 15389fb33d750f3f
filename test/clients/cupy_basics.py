"""CuPy with its default settings under zmlir run: each step prints
`name: ok` or `name: FAIL why`, its results checked against NumPy. Steps go
on after a failure (one process: CuPy's prebuilt CUB and Thrust modules are
loaded once). CUPY_BASICS_SKIP=a,b skips steps by name."""
import os
import sys
import time
import traceback

import cupy as cp
import numpy as np

STEPS: list[tuple[str, object]] = []


def step(fn):
    STEPS.append((fn.__name__, fn))
    return fn


def close(got, want, **kw) -> None:
    np.testing.assert_allclose(cp.asnumpy(got) if isinstance(got, cp.ndarray) else got,
                               want, **kw)


rng = np.random.default_rng(1)
X = rng.standard_normal(1000).astype(np.float32)
INTS = rng.integers(-1000, 1000, 777).astype(np.int32)


@step
def asarray():
    a = cp.asarray(X)
    assert a.device.id == 0 and a.dtype == np.float32
    np.testing.assert_array_equal(a.get(), X)
    np.testing.assert_array_equal(cp.asnumpy(cp.asarray(INTS)), INTS)


@step
def arange_zeros():
    np.testing.assert_array_equal(cp.arange(10, dtype=cp.int64).get(), np.arange(10))
    assert not cp.zeros((3, 4)).get().any()
    np.testing.assert_array_equal(cp.full(5, 7, np.int16).get(), np.full(5, 7, np.int16))


@step
def ufuncs():
    a, b = cp.asarray(X), cp.asarray(X[::-1].copy())
    close(a + b * 2 - 1, X + X[::-1] * 2 - 1, rtol=1e-6)
    close(cp.sin(a), np.sin(X), rtol=1e-5, atol=1e-6)
    close(cp.exp(a), np.exp(X), rtol=1e-5)
    close(cp.sqrt(cp.abs(a)), np.sqrt(np.abs(X)), rtol=1e-6)
    np.testing.assert_array_equal((a > b).get(), X[::-1] < X)
    i = cp.asarray(INTS)
    np.testing.assert_array_equal((i // 7 + i % 5).get(), INTS // 7 + INTS % 5)
    np.testing.assert_array_equal(cp.maximum(i, 3).get(), np.maximum(INTS, 3))


@step
def float64_and_casts():
    d = cp.asarray(X.astype(np.float64))
    close(cp.log1p(cp.abs(d)), np.log1p(np.abs(X.astype(np.float64))), rtol=1e-12)
    np.testing.assert_array_equal(cp.asarray(X).astype(cp.int32).get(), X.astype(np.int32))


@step
def broadcast_and_strides():
    m = rng.standard_normal((32, 48)).astype(np.float32)
    a = cp.asarray(m)
    close(a.T + cp.arange(32, dtype=cp.float32), m.T + np.arange(32, dtype=np.float32))
    close(a[::2, 3::5] * 2, m[::2, 3::5] * 2)


@step
def elementwise_kernel():
    k = cp.ElementwiseKernel("float32 x, float32 y", "float32 z",
                             "z = x * x + y", "zmlir_squared_plus")
    close(k(cp.asarray(X), cp.float32(0.5)), X * X + 0.5, rtol=1e-6)


@step
def reduction_kernel():
    k = cp.ReductionKernel("float32 x", "float32 y", "x * x", "a + b", "y = sqrt(a)", "0",
                           "zmlir_l2norm")
    close(k(cp.asarray(X)), np.sqrt(np.sum(X.astype(np.float64) ** 2)), rtol=1e-5)
    m = rng.standard_normal((64, 33)).astype(np.float32)
    close(k(cp.asarray(m), axis=1), np.sqrt((m.astype(np.float64) ** 2).sum(axis=1)), rtol=1e-5)


@step
def sum_all():  # CUB's DeviceReduce by default
    close(cp.asarray(X).sum(), X.astype(np.float64).sum(), rtol=1e-5)
    assert int(cp.asarray(INTS).sum()) == int(INTS.sum())
    close(cp.asarray(X.astype(np.float64)).sum(), X.astype(np.float64).sum(), rtol=1e-12)


@step
def sum_axis_and_mean():
    m = rng.standard_normal((40, 50)).astype(np.float32)
    a = cp.asarray(m)
    close(a.sum(axis=0), m.sum(axis=0), rtol=1e-5, atol=1e-5)
    close(a.sum(axis=1), m.sum(axis=1), rtol=1e-5, atol=1e-5)
    close(a.mean(), m.mean(), rtol=1e-5)


@step
def min_max_argmax():
    a = cp.asarray(X)
    assert float(a.max()) == X.max() and float(a.min()) == X.min()
    assert int(a.argmax()) == X.argmax() and int(a.argmin()) == X.argmin()
    h = cp.asarray(INTS.astype(np.int16))
    assert int(h.min()) == INTS.min() and int(h.max()) == INTS.max()


@step
def cumsum():
    close(cp.cumsum(cp.asarray(X)), np.cumsum(X.astype(np.float64)), rtol=1e-4, atol=1e-3)
    np.testing.assert_array_equal(cp.cumsum(cp.asarray(INTS)).get(), np.cumsum(INTS))


@step
def sort():
    np.testing.assert_array_equal(cp.sort(cp.asarray(X)).get(), np.sort(X))
    np.testing.assert_array_equal(cp.sort(cp.asarray(INTS)).get(), np.sort(INTS))
    np.testing.assert_array_equal(cp.argsort(cp.asarray(INTS)).get().shape, INTS.shape)
    np.testing.assert_array_equal(INTS[cp.argsort(cp.asarray(INTS)).get()], np.sort(INTS))


@step
def sort_large_and_axes():  # Thrust's multi-tile sorts, keys with their indices, rows
    big = rng.standard_normal(200_000)
    np.testing.assert_array_equal(cp.sort(cp.asarray(big)).get(), np.sort(big))
    keys = rng.integers(-2**40, 2**40, 150_000)
    order = cp.argsort(cp.asarray(keys)).get()
    np.testing.assert_array_equal(keys[order], np.sort(keys))
    assert np.array_equal(np.sort(order), np.arange(keys.size))
    m = rng.standard_normal((48, 300)).astype(np.float32)
    np.testing.assert_array_equal(cp.sort(cp.asarray(m), axis=1).get(), np.sort(m, axis=1))
    np.testing.assert_array_equal(cp.sort(cp.asarray(m), axis=0).get(), np.sort(m, axis=0))
    nans = np.array([3, np.nan, -1, np.inf, -np.inf, 0, np.nan], np.float32)
    np.testing.assert_array_equal(cp.sort(cp.asarray(nans)).get(), np.sort(nans))


@step
def unique():
    values = rng.integers(-50, 50, 100_000).astype(np.int32)
    got = cp.unique(cp.asarray(values), return_index=True, return_inverse=True,
                    return_counts=True)
    want = np.unique(values, return_index=True, return_inverse=True, return_counts=True)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g.get(), w)


@step
def raw_kernel():
    k = cp.RawKernel(r"""
    extern "C" __global__ void axpy(const float *x, float *y, float a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + y[i];
    }""", "axpy")
    x, y = cp.asarray(X), cp.ones(X.size, cp.float32)
    k(((X.size + 127) // 128,), (128,), (x, y, cp.float32(3.0), cp.int32(X.size)))
    # NVRTC contracts a * x + y into one fma, as on a GPU: one rounding.
    close(y, (3 * X.astype(np.float64) + 1).astype(np.float32), rtol=1e-6)


@step
def raw_module():
    mod = cp.RawModule(code=r"""
    struct Pair { int a; double b; };
    extern "C" __global__ void fill(Pair p, double *out) {
        out[threadIdx.x] = p.a * threadIdx.x + p.b;
    }
    template<typename T> __global__ void twice(T *v) { v[threadIdx.x] *= 2; }
    """, options=("-std=c++17",), name_expressions=("twice<int>", "twice<float>"))
    out = cp.zeros(64, cp.float64)
    pair = np.array([(5, 0.25)], dtype=np.dtype([("a", np.int32), ("b", np.float64)],
                                                 align=True))
    mod.get_function("fill")((1,), (64,), (pair, out))
    close(out, 5 * np.arange(64) + 0.25)
    v = cp.arange(32, dtype=cp.int32)
    mod.get_function("twice<int>")((1,), (32,), (v,))
    np.testing.assert_array_equal(v.get(), 2 * np.arange(32))


@step
def fresh_compile():
    # A kernel no cache can hold: its source names this process's clock.
    tag = time.time_ns()
    k = cp.ElementwiseKernel("int64 x", "int64 y", f"y = x + {tag}LL", f"zmlir_fresh_{tag}")
    np.testing.assert_array_equal(k(cp.arange(4, dtype=cp.int64)).get(), np.arange(4) + tag)


SKIP = set(filter(None, os.environ.get("CUPY_BASICS_SKIP", "").split(",")))
for name, fn in STEPS:
    if name in SKIP:
        print(f"{name}: skipped", flush=True)
        continue
    start = time.monotonic()
    try:
        fn()
        cp.cuda.Device().synchronize()
        print(f"{name}: ok ({time.monotonic() - start:.1f}s)", flush=True)
    except Exception as err:
        detail = traceback.format_exception_only(err)[-1].strip().replace("\n", " ")
        print(f"{name}: FAIL {detail[:300]}", flush=True)
        traceback.print_exc(file=sys.stderr)
