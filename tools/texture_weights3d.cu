// Prints the eight corner weights (in 1/256) of 3D linear texture fetches,
// for comparing zmlir's emulation with an NVIDIA GPU's texture units
// (docs/textures.md, "Fidelity"):
//
//   nvcc -arch=sm_90 -o w3d tools/texture_weights3d.cu && ./w3d > h200.txt
//   nvcc -arch=sm_75 -o w3d tools/texture_weights3d.cu && zmlir run -- ./w3d > ours.txt
//
// Each line: the fraction triple kx ky kz (in 1/256, every multiple of 15),
// then the weights of the corners x + 2y + 4z, each read from a 2x2x2
// array that is 1 at that corner and 0 elsewhere.
#include <cmath>
#include <cstdio>
#include <cstdlib>

// Exits with the call's error if it failed.
static void check(cudaError_t result, const char *call) {
  if (result == cudaSuccess)
    return;
  std::fprintf(stderr, "%s: %s\n", call, cudaGetErrorString(result));
  std::exit(1);
}

constexpr int kStep = 15, kSteps = 256 / kStep + 1; // 0, 15, ..., 255
constexpr int kTriples = kSteps * kSteps * kSteps;

struct Textures {
  cudaTextureObject_t corner[8];
};

__global__ void weights(Textures t, float *out) {
  int id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= kTriples)
    return;
  float x = 0.5f + id % kSteps * kStep / 256.0f, y = 0.5f + id / kSteps % kSteps * kStep / 256.0f,
        z = 0.5f + id / (kSteps * kSteps) * kStep / 256.0f;
  for (int k = 0; k < 8; ++k)
    out[id * 8 + k] = tex3D<float>(t.corner[k], x, y, z);
}

int main() {
  cudaChannelFormatDesc f = cudaCreateChannelDesc<float>();
  Textures t;
  for (int k = 0; k < 8; ++k) {
    float v[8] = {};
    v[k] = 1.0f; // [z][y][x]
    cudaArray_t a;
    check(cudaMalloc3DArray(&a, &f, make_cudaExtent(2, 2, 2)), "cudaMalloc3DArray");
    cudaMemcpy3DParms p = {};
    p.srcPtr = make_cudaPitchedPtr(v, 2 * sizeof(float), 2, 2);
    p.dstArray = a;
    p.extent = make_cudaExtent(2, 2, 2);
    p.kind = cudaMemcpyHostToDevice;
    check(cudaMemcpy3D(&p), "cudaMemcpy3D");
    cudaResourceDesc r = {};
    r.resType = cudaResourceTypeArray;
    r.res.array.array = a;
    cudaTextureDesc d = {};
    d.addressMode[0] = d.addressMode[1] = d.addressMode[2] = cudaAddressModeClamp;
    d.filterMode = cudaFilterModeLinear;
    d.readMode = cudaReadModeElementType;
    check(cudaCreateTextureObject(&t.corner[k], &r, &d, nullptr), "cudaCreateTextureObject");
  }
  float *out;
  check(cudaMallocManaged(&out, kTriples * 8 * sizeof(float)), "cudaMallocManaged");
  weights<<<(kTriples + 127) / 128, 128>>>(t, out);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  for (int id = 0; id < kTriples; ++id) {
    std::printf("%d %d %d :", id % kSteps * kStep, id / kSteps % kSteps * kStep,
                id / (kSteps * kSteps) * kStep);
    for (int k = 0; k < 8; ++k)
      std::printf(" %ld", std::lrint(out[id * 8 + k] * 256.0f));
    std::printf("\n");
  }
  return 0;
}
