// A memory pool shared between a parent and a forked child: the parent
// creates a pool with POSIX file descriptor handles, allocates two blocks
// from it and fills them in a kernel, then sends the pool's descriptor
// over a Unix socket (SCM_RIGHTS) and the blocks' export data after it. The
// child imports the pool and both pointers, sees the parent's values, adds
// to them in a kernel and frees its imports; the parent then sees what the
// child wrote. Also the errors: export data of a block before its pool was
// shared (NVIDIA's answer on an H200) and of memory no IPC pool gave,
// importing data of another pool or none, allocating from an imported pool,
// exporting a pool made without handle types. The process forks before
// any CUDA call (a forked child cannot use its parent's CUDA state).
#include <cstdint>
#include <cstring>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

constexpr int kBig = 1 << 20;  // ints
constexpr int kSmall = 100;    // ints

struct Exports {
  cudaMemPoolPtrExportData big, small;
};

__global__ void iota(int *p, int n, int base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = base + i;
}

__global__ void add(int *p, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += v;
}

static void send_fd(int sock, int fd) {
  char byte = 'f';
  iovec iov = {&byte, 1};
  char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
  EXPECT(sendmsg(sock, &msg, 0) == 1, "sendmsg failed");
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
  EXPECT(recvmsg(sock, &msg, 0) == 1, "recvmsg failed");
  cmsghdr *c = CMSG_FIRSTHDR(&msg);
  EXPECT(c && c->cmsg_type == SCM_RIGHTS, "no descriptor received");
  int fd;
  memcpy(&fd, CMSG_DATA(c), sizeof(int));
  return fd;
}

static void full_read(int fd, void *data, size_t n) {
  char *p = static_cast<char *>(data);
  while (n > 0) {
    ssize_t got = read(fd, p, n);
    EXPECT(got > 0, "socket read failed");
    p += got;
    n -= size_t(got);
  }
}

// NVIDIA documents no one code for these: any error.
static void expect_failure(cudaError_t got, const char *what) {
  EXPECT(got != cudaSuccess, "%s succeeded", what);
  cudaGetLastError();
}

static int child(int sock) {
  int fd = recv_fd(sock);
  Exports e;
  full_read(sock, &e, sizeof e);
  CHECK(cudaSetDevice(0));
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaMemPool_t pool;
  CHECK(cudaMemPoolImportFromShareableHandle(
      &pool, reinterpret_cast<void *>(static_cast<uintptr_t>(fd)),
      cudaMemHandleTypePosixFileDescriptor, 0));
  close(fd);  // the imported pool holds its memory
  cudaMemAccessFlags flags;
  cudaMemLocation here = {cudaMemLocationTypeDevice, 0};
  CHECK(cudaMemPoolGetAccess(&flags, pool, &here));
  EXPECT(flags == cudaMemAccessFlagsProtReadWrite, "imported pool access %d", int(flags));

  cudaMemPoolPtrExportData zeros = {};
  void *bad = nullptr;
  expect_failure(cudaMemPoolImportPointer(&bad, pool, &zeros), "importing no allocation's data");
  int *big = nullptr, *small = nullptr;
  CHECK(cudaMemPoolImportPointer(reinterpret_cast<void **>(&big), pool, &e.big));
  CHECK(cudaMemPoolImportPointer(reinterpret_cast<void **>(&small), pool, &e.small));
  void *from_imported = nullptr;
  expect_failure(cudaMallocFromPoolAsync(&from_imported, 4096, pool, stream), "allocating from an imported pool");

  int head[3], tail[3];
  CHECK(cudaMemcpy(head, big + 5000, sizeof head, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(tail, small + kSmall - 3, sizeof tail, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 3; ++i) {
    EXPECT(head[i] == 5000 + i, "child sees big[%d] = %d", 5000 + i, head[i]);
    EXPECT(tail[i] == 1000000 + kSmall - 3 + i, "child sees small[%d] = %d", kSmall - 3 + i,
           tail[i]);
  }
  add<<<kBig / 256, 256, 0, stream>>>(big, kBig, 1);
  add<<<1, kSmall, 0, stream>>>(small, kSmall, 2);
  CHECK(cudaGetLastError());
  CHECK(cudaFreeAsync(big, stream));
  CHECK(cudaFreeAsync(small, stream));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaMemPoolDestroy(pool));
  char done = 'd';
  EXPECT(write(sock, &done, 1) == 1, "socket write failed");
  return 0;
}

static int parent(int sock, pid_t pid) {
  CHECK(cudaSetDevice(0));
  int handle_types = 0;
  CHECK(cudaDeviceGetAttribute(&handle_types, cudaDevAttrMemoryPoolSupportedHandleTypes, 0));
  EXPECT(handle_types & cudaMemHandleTypePosixFileDescriptor, "handle types %#x", handle_types);
  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.handleTypes = cudaMemHandleTypePosixFileDescriptor;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool;
  CHECK(cudaMemPoolCreate(&pool, &props));
  int *big = nullptr, *small = nullptr;
  CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void **>(&big), kBig * sizeof(int), pool, stream));
  CHECK(cudaMallocFromPoolAsync(reinterpret_cast<void **>(&small), kSmall * sizeof(int), pool,
                                stream));
  iota<<<kBig / 256, 256, 0, stream>>>(big, kBig, 0);
  iota<<<1, kSmall, 0, stream>>>(small, kSmall, 1000000);
  CHECK(cudaGetLastError());
  CHECK(cudaStreamSynchronize(stream));

  // The pool is shared before its blocks: NVIDIA exports blocks "from an
  // already shared memory pool" (an H200 answers cudaErrorInvalidValue to
  // cudaMemPoolExportPointer before the pool's handle is exported).
  Exports e;
  expect_failure(cudaMemPoolExportPointer(&e.big, big), "exporting a block of a pool not yet shared");
  int fd = -1;
  CHECK(cudaMemPoolExportToShareableHandle(&fd, pool, cudaMemHandleTypePosixFileDescriptor, 0));
  EXPECT(fd >= 0, "pool descriptor %d", fd);
  CHECK(cudaMemPoolExportPointer(&e.big, big));
  CHECK(cudaMemPoolExportPointer(&e.small, small));

  // What cannot be exported: cudaMalloc's memory, a pool without handle types.
  int *plain = nullptr;
  CHECK(cudaMalloc(&plain, 4096));
  cudaMemPoolPtrExportData data;
  expect_failure(cudaMemPoolExportPointer(&data, plain), "exporting cudaMalloc's memory");
  cudaMemPool_t local;
  props.handleTypes = cudaMemHandleTypeNone;
  CHECK(cudaMemPoolCreate(&local, &props));
  int local_fd = -1;
  expect_failure(cudaMemPoolExportToShareableHandle(&local_fd, local,
                                                  cudaMemHandleTypePosixFileDescriptor, 0), "exporting a pool without handle types");
  CHECK(cudaMemPoolDestroy(local));

  send_fd(sock, fd);
  close(fd);
  EXPECT(write(sock, &e, sizeof e) == ssize_t(sizeof e), "socket write failed");
  char done = 0;
  full_read(sock, &done, 1);
  int status = 0;
  EXPECT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
         "child failed");

  int *h = new int[kBig];
  CHECK(cudaMemcpy(h, big, kBig * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kBig; ++i) EXPECT(h[i] == i + 1, "big[%d] = %d after the child", i, h[i]);
  CHECK(cudaMemcpy(h, small, kSmall * sizeof(int), cudaMemcpyDeviceToHost));
  for (int i = 0; i < kSmall; ++i)
    EXPECT(h[i] == 1000000 + i + 2, "small[%d] = %d after the child", i, h[i]);
  delete[] h;
  CHECK(cudaFreeAsync(big, stream));
  CHECK(cudaFreeAsync(small, stream));
  CHECK(cudaFree(plain));
  CHECK(cudaStreamSynchronize(stream));
  CHECK(cudaMemPoolDestroy(pool));
  std::printf("PASS\n");
  return 0;
}

int main() {
  int socks[2];
  EXPECT(socketpair(AF_UNIX, SOCK_STREAM, 0, socks) == 0, "socketpair failed");
  pid_t pid = fork();
  if (pid == 0) {
    close(socks[0]);
    int code = child(socks[1]);
    std::fflush(stdout);
    _exit(code);
  }
  close(socks[1]);
  return parent(socks[0], pid);
}
