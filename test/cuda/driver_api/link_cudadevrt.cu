#include <cuda.h>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
// NVIDIA's device runtime library in a JIT link, as numba-cuda links it for
// a grid sync (`cg.this_grid().sync()` calls cudaCGGetIntrinsicHandle and
// cudaCGSynchronize): libcudadevrt.a, named so or an archive of
// cuda_device_runtime objects, links as zmlir's PTX stand-in, and a
// cooperative launch synchronises its grid through it. A device runtime
// function the stand-in lacks (device-side cudaMalloc) fails the link
// naming it; the cudaCG* calls without the library are undefined references.

// Per thread: its rank and the grid's size (cudaCGGetRank, cudaCGGetSize);
// then each block's thread 0 writes its word of row 0 of `ring`, and after
// each grid sync its word of the next row from the previous row's words of
// its block and the next block.
const char* kernel_ptx = R"(
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b64 r) cudaCGGetIntrinsicHandle(.param .b32 scope);
.extern .func (.param .b32 r) cudaCGSynchronize(.param .b64 handle, .param .b32 flags);
.extern .func (.param .b32 r) cudaCGGetRank(.param .b64 rank, .param .b64 grid_rank, .param .b64 handle);
.extern .func (.param .b32 r) cudaCGGetSize(.param .b64 threads, .param .b64 grids, .param .b64 handle);
.visible .entry rounds(.param .u64 ranks, .param .u64 ring, .param .u64 scratch, .param .u32 count)
{
  .reg .pred %p<3>; .reg .b32 %r<16>; .reg .b64 %rd<14>;
  ld.param.u64 %rd1, [ranks]; ld.param.u64 %rd2, [ring]; ld.param.u32 %r1, [count];
  { .param .b32 s; .param .b64 h; st.param.b32 [s], 1; call.uni (h), cudaCGGetIntrinsicHandle, (s); ld.param.b64 %rd3, [h]; }
  // four words of scratch per thread, at 16 * (ctaid.x * ntid.x + tid.x)
  ld.param.u64 %rd4, [scratch]; mov.u32 %r9, %tid.x; mov.u32 %r10, %ctaid.x; mov.u32 %r11, %ntid.x;
  mad.lo.s32 %r9, %r10, %r11, %r9; mul.wide.u32 %rd5, %r9, 16; add.s64 %rd4, %rd4, %rd5;
  add.s64 %rd5, %rd4, 4; add.s64 %rd6, %rd4, 8; add.s64 %rd7, %rd4, 12;
  { .param .b64 a; .param .b64 b; .param .b64 h; .param .b32 e; st.param.b64 [a], %rd4; st.param.b64 [b], %rd5; st.param.b64 [h], %rd3;
    call.uni (e), cudaCGGetRank, (a, b, h); ld.param.b32 %r2, [e]; }
  { .param .b64 a; .param .b64 b; .param .b64 h; .param .b32 e; st.param.b64 [a], %rd6; st.param.b64 [b], %rd7; st.param.b64 [h], %rd3;
    call.uni (e), cudaCGGetSize, (a, b, h); ld.param.b32 %r3, [e]; }
  ld.u32 %r4, [%rd4]; ld.u32 %r5, [%rd5]; ld.u32 %r6, [%rd6]; ld.u32 %r7, [%rd7];
  // ranks[rank] = size * 1000 + grid_rank * 100 + grids * 10 + both errors
  mad.lo.s32 %r8, %r6, 1000, %r2; add.s32 %r8, %r8, %r3; mad.lo.s32 %r8, %r5, 100, %r8; mad.lo.s32 %r8, %r7, 10, %r8;
  mul.wide.u32 %rd8, %r4, 4; add.s64 %rd9, %rd1, %rd8; st.global.u32 [%rd9], %r8;
  mov.u32 %r9, %tid.x; mov.u32 %r10, %ctaid.x; mov.u32 %r11, %nctaid.x;
  setp.eq.u32 %p1, %r9, 0;
  mul.wide.u32 %rd10, %r10, 4; add.s64 %rd11, %rd2, %rd10;
  mul.lo.s32 %r12, %r10, %r10; add.s32 %r12, %r12, 7;
  @%p1 st.global.u32 [%rd11], %r12;
  add.s32 %r13, %r10, 1; rem.u32 %r13, %r13, %r11;
  mul.wide.u32 %rd12, %r13, 4; add.s64 %rd12, %rd2, %rd12; mul.wide.u32 %rd13, %r11, 4;
  mov.u32 %r14, 0;
$round:
  { .param .b64 h; .param .b32 f; .param .b32 e; st.param.b64 [h], %rd3; st.param.b32 [f], 0;
    call.uni (e), cudaCGSynchronize, (h, f); ld.param.b32 %r15, [e]; }
  // row r + 1 of block b: row r of b plus twice row r of block b + 1
  @%p1 ld.global.u32 %r6, [%rd11]; @%p1 ld.global.u32 %r7, [%rd12];
  add.s64 %rd11, %rd11, %rd13; add.s64 %rd12, %rd12, %rd13;
  mad.lo.s32 %r6, %r7, 2, %r6; add.s32 %r6, %r6, %r15;
  @%p1 st.global.u32 [%rd11], %r6;
  add.s32 %r14, %r14, 1; setp.lt.u32 %p2, %r14, %r1;
  @%p2 bra $round;
  ret;
}
)";

// Device-side memory (CUDA dynamic parallelism) through the device runtime.
const char* allocator_ptx = R"(
.version 8.0
.target sm_80
.address_size 64
.extern .func (.param .b32 r) cudaMalloc(.param .b64 p, .param .b64 size);
.visible .entry allocator(.param .u64 out)
{
  .reg .b32 %r<2>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [out];
  { .param .b64 p; .param .b64 n; .param .b32 r;
    st.param.b64 [p], %rd1; st.param.b64 [n], 64;
    call.uni (r), cudaMalloc, (p, n); ld.param.b32 %r1, [r]; }
  ret;
}
)";

// An `ar` archive of one member, cuda_device_runtime.o (a long name, as in
// NVIDIA's libcudadevrt.a), whose bytes are not code we could run.
static std::vector<char> devrt_archive() {
  std::string a = "!<arch>\n";
  auto member = [&](const char* name, const std::string& body) {
    char header[61];
    snprintf(header, sizeof header, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", name, "0", "0", "0", "644",
             body.size());
    a += std::string(header, 60) + body;
    if (body.size() & 1) a += "\n";
  };
  member("/", std::string("\0\0\0\0", 4));
  member("//", "cuda_device_runtime.o/\n");
  member("/0", "\x7f" "ELF not runnable here");
  return std::vector<char>(a.begin(), a.end());
}

#define C(x) do { CUresult r = (x); if (r) { const char* s; cuGetErrorName(r, &s); printf("%s: %s\n", #x, s); return 1; } } while (0)

int main() {
  C(cuInit(0)); CUdevice dev; C(cuDeviceGet(&dev, 0));
  CUcontext ctx; C(cuDevicePrimaryCtxRetain(&ctx, dev)); C(cuCtxSetCurrent(ctx));
  std::vector<char> archive = devrt_archive();

  // The kernel with the archive, recognised by its member (added twice: the
  // library's functions are linked once).
  CUlinkState link; C(cuLinkCreate(0, nullptr, nullptr, &link));
  C(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void*)kernel_ptx, strlen(kernel_ptx) + 1, "kernel.ptx", 0, nullptr, nullptr));
  C(cuLinkAddData(link, CU_JIT_INPUT_LIBRARY, archive.data(), archive.size(), "runtime_copy.a", 0, nullptr, nullptr));
  C(cuLinkAddData(link, CU_JIT_INPUT_LIBRARY, archive.data(), archive.size(), "runtime_copy.a", 0, nullptr, nullptr));
  void* image; size_t size = 0;
  C(cuLinkComplete(link, &image, &size));
  CUmodule mod; C(cuModuleLoadData(&mod, image));
  C(cuLinkDestroy(link));
  CUfunction f; C(cuModuleGetFunction(&f, mod, "rounds"));

  int cooperative = 0, sms = 0, per_sm = 0;
  C(cuDeviceGetAttribute(&cooperative, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev));
  C(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  const int threads = 64, count = 5;
  C(cuOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, f, threads, 0));
  const unsigned blocks = sms * per_sm < 4 ? sms * per_sm : 4;
  if (!cooperative || blocks < 2) {
    printf("cooperative launch %d, %u resident blocks: a grid sync needs 2\n", cooperative, blocks);
    return 1;
  }
  const unsigned n = blocks * threads;
  CUdeviceptr ranks, ring, scratch;
  C(cuMemAlloc(&ranks, n * 4)); C(cuMemAlloc(&ring, (count + 1) * blocks * 4));
  C(cuMemAlloc(&scratch, n * 16));
  C(cuMemsetD32(ranks, 0xffffffff, n)); C(cuMemsetD32(ring, 0xffffffff, (count + 1) * blocks));
  int c = count;
  void* args[] = {&ranks, &ring, &scratch, &c};
  C(cuLaunchCooperativeKernel(f, blocks, 1, 1, threads, 1, 1, 0, nullptr, args));
  C(cuCtxSynchronize());
  std::vector<unsigned> got(n), rows((count + 1) * blocks), want((count + 1) * blocks);
  C(cuMemcpyDtoH(got.data(), ranks, n * 4));
  C(cuMemcpyDtoH(rows.data(), ring, rows.size() * 4));
  for (unsigned i = 0; i < n; ++i)
    if (got[i] != n * 1000 + 10) { printf("rank %u: %u, expected %u\n", i, got[i], n * 1000 + 10); return 1; }
  for (unsigned b = 0; b < blocks; ++b) want[b] = b * b + 7;
  for (int r = 0; r < count; ++r)
    for (unsigned b = 0; b < blocks; ++b)
      want[(r + 1) * blocks + b] = want[r * blocks + b] + 2 * want[r * blocks + (b + 1) % blocks];
  for (unsigned i = 0; i < rows.size(); ++i)
    if (rows[i] != want[i]) { printf("ring[%u] = %u, expected %u\n", i, rows[i], want[i]); return 1; }
  C(cuModuleUnload(mod));

  // By its name: any bytes named libcudadevrt.a (a path, as numba gives).
  C(cuLinkCreate(0, nullptr, nullptr, &link));
  C(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void*)kernel_ptx, strlen(kernel_ptx) + 1, "kernel.ptx", 0, nullptr, nullptr));
  C(cuLinkAddData(link, CU_JIT_INPUT_LIBRARY, (void*)"junk", 4, "/opt/nvidia/cu13/lib/libcudadevrt.a", 0, nullptr, nullptr));
  C(cuLinkComplete(link, &image, &size));
  C(cuLinkDestroy(link));

  // Device-side cudaMalloc: not supported, said at the link, naming the call.
  char error[1024] = "";
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {error, (void*)sizeof error};
  C(cuLinkCreate(2, opts, vals, &link));
  C(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void*)allocator_ptx, strlen(allocator_ptx) + 1, "allocator.ptx", 0, nullptr, nullptr));
  C(cuLinkAddData(link, CU_JIT_INPUT_LIBRARY, archive.data(), archive.size(), "libcudadevrt.a", 0, nullptr, nullptr));
  CUresult r = cuLinkComplete(link, &image, &size);
  if (r != CUDA_ERROR_NOT_SUPPORTED || !strstr(error, "'cudaMalloc'") ||
      !strstr(error, "dynamic parallelism")) {
    printf("device-side cudaMalloc: %d, log '%s'\n", (int)r, error);
    return 1;
  }
  C(cuLinkDestroy(link));

  // Without the library, the grid group calls are undefined references.
  error[0] = 0;
  C(cuLinkCreate(2, opts, vals, &link));
  C(cuLinkAddData(link, CU_JIT_INPUT_PTX, (void*)kernel_ptx, strlen(kernel_ptx) + 1, "kernel.ptx", 0, nullptr, nullptr));
  r = cuLinkComplete(link, &image, &size);
  if (r != CUDA_ERROR_INVALID_SOURCE || !strstr(error, "Undefined reference to 'cudaCG")) {
    printf("no library: %d, log '%s'\n", (int)r, error);
    return 1;
  }
  C(cuLinkDestroy(link));
  printf("PASS\n");
  return 0;
}
