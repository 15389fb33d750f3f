#include <cuda.h>
#include <cstdio>
#include <csignal>
#include <cstring>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
// Virtual memory shared between processes by its POSIX file descriptor: the
// parent creates and fills an allocation, exports it and sends the
// descriptor over a Unix socket (SCM_RIGHTS); the child imports it, maps it
// into a reservation of its own, sees the parent's values, adds to them in
// a kernel and writes one word by a copy; the parent then sees both through
// its own mapping. The process forks before any CUDA call (a child forked
// after cuInit has no driver).
const char* ptx = R"(
.version 9.0
.target sm_80
.address_size 64
.visible .entry add(.param .u64 p, .param .u32 n, .param .u32 v)
{
  .reg .pred %q; .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r1, [n];
  ld.param.u32 %r2, [v];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r6, %r3, %r4, %r5;
  setp.ge.u32 %q, %r6, %r1;
  @%q ret;
  mul.wide.u32 %rd2, %r6, 4;
  add.s64 %rd3, %rd1, %rd2;
  ld.global.u32 %r7, [%rd3];
  add.s32 %r7, %r7, %r2;
  st.global.u32 [%rd3], %r7;
  ret;
}
)";
#define C(x) do { CUresult r = (x); if (r) { const char* s; cuGetErrorName(r, &s); printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #x, s); return 1; } } while (0)
#define TRUE(c) do { if (!(c)) { printf("%s:%d: not %s\n", __FILE__, __LINE__, #c); return 1; } } while (0)

static const unsigned kMarker = 0xc0ffee;

static int send_fd(int sock, int fd) {
  char byte = 'f';
  iovec iov = {&byte, 1};
  char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
  return sendmsg(sock, &msg, 0) == 1 ? 0 : 1;
}

static int recv_fd(int sock) {
  char byte;
  iovec iov = {&byte, 1};
  char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (recvmsg(sock, &msg, 0) != 1) return -1;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return fd;
}

// The device's granularity, a reservation of `size` bytes and `handle`
// mapped there read-write.
static int map_rw(CUmemGenericAllocationHandle handle, size_t size, CUdeviceptr* at) {
  C(cuMemAddressReserve(at, size, 0, 0, 0));
  C(cuMemMap(*at, size, 0, handle, 0));
  CUmemAccessDesc rw = {{CU_MEM_LOCATION_TYPE_DEVICE, 0}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  C(cuMemSetAccess(*at, size, &rw, 1));
  return 0;
}

static int setup(CUfunction* add, size_t* g) {
  C(cuInit(0));
  CUcontext ctx;
  C(cuDevicePrimaryCtxRetain(&ctx, 0));
  C(cuCtxSetCurrent(ctx));
  CUmodule mod;
  C(cuModuleLoadData(&mod, ptx));
  C(cuModuleGetFunction(add, mod, "add"));
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  C(cuMemGetAllocationGranularity(g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
  return 0;
}

static int child(int sock) {
  int fd = recv_fd(sock);
  TRUE(fd >= 0);
  CUfunction add;
  size_t g;
  if (setup(&add, &g)) return 1;
  CUmemGenericAllocationHandle handle;
  C(cuMemImportFromShareableHandle(&handle, (void*)(uintptr_t)fd,
                                   CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(fd);
  CUdeviceptr p;
  if (map_rw(handle, 2 * g, &p)) return 1;
  C(cuMemRelease(handle));
  unsigned n = unsigned(2 * g / 4), head[4];
  C(cuMemcpyDtoH(head, p + 4 * 1000, sizeof head));
  for (int i = 0; i < 4; ++i) TRUE(head[i] == 7);  // the parent's fill
  unsigned v = 3;
  void* args[] = {&p, &n, &v};
  C(cuLaunchKernel(add, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  C(cuMemcpyHtoD(p + 4 * (n - 1), &kMarker, 4));  // after the kernel, in order
  C(cuCtxSynchronize());
  C(cuMemUnmap(p, 2 * g));
  C(cuMemAddressFree(p, 2 * g));
  char done = 'd';
  TRUE(write(sock, &done, 1) == 1);
  return 0;
}

static int parent(int sock, pid_t pid) {
  CUfunction add;
  size_t g;
  if (setup(&add, &g)) return 1;
  int supported = 0;
  C(cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0));
  TRUE(supported == 1);
  CUmemAllocationProp prop = {};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  CUmemGenericAllocationHandle handle;
  C(cuMemCreate(&handle, 2 * g, &prop, 0));
  CUdeviceptr p;
  if (map_rw(handle, 2 * g, &p)) return 1;
  unsigned n = unsigned(2 * g / 4);
  C(cuMemsetD32(p, 7, n));
  int fd = -1;
  C(cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  C(cuMemRelease(handle));  // the mapping and the descriptor hold the memory
  TRUE(send_fd(sock, fd) == 0);
  close(fd);
  char done = 0;
  TRUE(read(sock, &done, 1) == 1 && done == 'd');
  int status = 0;
  TRUE(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  unsigned* h = new unsigned[n];
  C(cuMemcpyDtoH(h, p, size_t(n) * 4));
  for (unsigned i = 0; i + 1 < n; ++i)
    if (h[i] != 10) { printf("word %u: %u, not 10\n", i, h[i]); return 1; }
  TRUE(h[n - 1] == kMarker);
  delete[] h;
  C(cuMemUnmap(p, 2 * g));
  C(cuMemAddressFree(p, 2 * g));
  printf("PASS\n");
  return 0;
}

int main() {
  int socks[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, socks) != 0) { perror("socketpair"); return 1; }
  pid_t pid = fork();
  if (pid == 0) {
    close(socks[0]);
    int code = child(socks[1]);
    fflush(stdout);
    _exit(code);
  }
  close(socks[1]);
  int code = parent(socks[0], pid);
  if (code) kill(pid, SIGKILL);
  return code;
}
