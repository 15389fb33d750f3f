"""cuda.core as its documentation shows it, under `zmlir run`: NVRTC compiles
CUDA C++ to a cubin (zmlir run's stand-in gives PTX) and to PTX, kernels run
on a stream with buffers of the device's memory resource, copies go through
pinned host buffers, events time the launch; a graph captured by the graph
builder replays a launch, buffers of the managed and pinned pool resources
are read and written by the host and a kernel. Prints one checked line per
result. Everything is left alive at the end: cuda.core's destructors call
the driver during interpreter shutdown."""

from __future__ import annotations

import numpy as np
from cuda.core import (
    Device,
    EventOptions,
    LaunchConfig,
    LegacyPinnedMemoryResource,
    ManagedMemoryResource,
    PinnedMemoryResource,
    Program,
    ProgramOptions,
    launch,
)

SAXPY = r"""
extern "C" __global__ void saxpy(float a, const float *x, float *y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
"""

FILL = r"""
template <typename T>
__global__ void fill(T *out, T v, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = v + (T)i;
}
"""

dev = Device()
dev.set_current()
stream = dev.create_stream()
pinned = LegacyPinnedMemoryResource()
print("device", dev.compute_capability.major, dev.arch == f"{dev.compute_capability.major}"
      f"{dev.compute_capability.minor}", flush=True)
keep = []  # alive until the interpreter shuts down

n = 1000
for kind in ("cubin", "ptx"):
    module = Program(SAXPY, code_type="c++",
                     options=ProgramOptions(arch=f"sm_{dev.arch}")).compile(kind)
    kernel = module.get_kernel("saxpy")
    hx = pinned.allocate(n * 4, stream=stream)
    hy = pinned.allocate(n * 4, stream=stream)
    x = np.from_dlpack(hx).view(np.float32)
    y = np.from_dlpack(hy).view(np.float32)
    x[:] = np.arange(n, dtype=np.float32)
    y[:] = 1.0
    dx = dev.memory_resource.allocate(n * 4, stream=stream)
    dy = dev.memory_resource.allocate(n * 4, stream=stream)
    dx.copy_from(hx, stream=stream)
    dy.copy_from(hy, stream=stream)
    start = stream.record(options=EventOptions(timing_enabled=True))
    launch(stream, LaunchConfig(grid=(n + 127) // 128, block=128), kernel, np.float32(2.0), dx,
           dy, np.uint32(n))
    end = stream.record(options=EventOptions(timing_enabled=True))
    dy.copy_to(hy, stream=stream)
    stream.sync()
    expected = 2.0 * np.arange(n, dtype=np.float32) + 1.0
    print(kind, "saxpy", np.array_equal(y, expected), "timed", end - start >= 0, flush=True)
    keep += [module, kernel, hx, hy, dx, dy, start, end]

# A graph of the last saxpy, captured by cuda.core's graph builder, replayed twice.
builder = stream.create_graph_builder().begin_building()
launch(builder, LaunchConfig(grid=(n + 127) // 128, block=128), kernel, np.float32(1.0), dx, dy,
       np.uint32(n))
graph = builder.end_building().complete()
graph.launch(stream)
graph.launch(stream)
dy.copy_to(hy, stream=stream)
stream.sync()
print("graph", np.array_equal(y, expected + 2 * x), flush=True)
keep.append(graph)

# Pool-backed resources of managed and of page-locked host memory: the host
# reads and writes them directly (DLPack), kernels too.
for resource in (ManagedMemoryResource(), PinnedMemoryResource()):
    buffer = resource.allocate(n * 4, stream=stream)
    values = np.from_dlpack(buffer).view(np.float32)
    values[:] = 1.0
    launch(stream, LaunchConfig(grid=(n + 127) // 128, block=128), kernel, np.float32(2.0), dx,
           buffer, np.uint32(n))
    stream.sync()
    print(type(resource).__name__, buffer.is_managed, np.array_equal(values, 2.0 * x + 1.0),
          flush=True)
    keep.append(buffer)

program = Program(FILL, code_type="c++", options=ProgramOptions(arch=f"sm_{dev.arch}",
                                                                std="c++17"))
module = program.compile("cubin", name_expressions=("fill<int>", "fill<double>"))
fill_int, fill_double = module.get_kernel("fill<int>"), module.get_kernel("fill<double>")
m = 4096
ints = dev.allocate(m * 4, stream=stream)
doubles = dev.allocate(m * 8, stream=stream)
config = LaunchConfig(grid=m // 256, block=256)
launch(stream, config, fill_int, ints, np.int32(7), np.uint64(m))
launch(stream, config, fill_double, doubles, np.float64(0.5), np.uint64(m))
done = stream.record()
done.sync()
host_ints = pinned.allocate(m * 4, stream=stream)
host_doubles = pinned.allocate(m * 8, stream=stream)
ints.copy_to(host_ints, stream=stream)
doubles.copy_to(host_doubles, stream=stream)
stream.sync()
print("fill<int>", np.array_equal(np.from_dlpack(host_ints).view(np.int32),
                                  7 + np.arange(m, dtype=np.int32)), flush=True)
print("fill<double>", np.array_equal(np.from_dlpack(host_doubles).view(np.float64),
                                     0.5 + np.arange(m)), flush=True)
print("arguments", fill_double.num_arguments, "max threads",
      fill_double.attributes.max_threads_per_block, flush=True)
dev.sync()
print("end of script", flush=True)
