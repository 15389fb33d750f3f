// Warp matrix multiply-accumulate (nvcuda::wmma): every shape and element
// type of the tensor-core samples and the common f16/bf16 forms, A and B in
// both layouts, C loaded and D stored in both, strides above the default,
// fragments in global and shared memory, element-wise fragment code, and
// s32 saturation. Inputs are small multiples of 1/4 (or small integers), so
// every result is exact and compared bit for bit with a host reference.
#include "check.h"
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <vector>
using namespace nvcuda;

// D = A * B + scale * C for an MM x NN result: warp w of block (x) computes
// tile (w, x), stepping over K; A is MM x KK, B is KK x NN, each stored in
// its layout with its leading dimension (ld* >= the default). With
// `viaShared` each warp first copies its A and B tiles to shared memory
// (rows or columns `skew` elements apart) and loads the fragments from there.
template <typename In, typename Mem, typename Acc, int M, int N, int K, typename LA, typename LB,
          bool viaShared>
__global__ void wmma_gemm(const Mem *a, int lda, const Mem *b, int ldb, const Acc *c, int ldc,
                          bool cColMajor, Acc *d, int ldd, bool dColMajor, int kk, Acc scale,
                          bool satf) {
  constexpr bool aRow = std::is_same<LA, wmma::row_major>::value;
  constexpr bool bRow = std::is_same<LB, wmma::row_major>::value;
  // Lines 32 bytes longer than the tile's; both tiles 256-bit aligned.
  constexpr int align = 32 / sizeof(Mem);
  constexpr int aLd = (aRow ? K : M) + align, bLd = (bRow ? N : K) + align;
  constexpr int aSize = ((aRow ? M : K) * aLd + align - 1) / align * align;
  constexpr int bSize = ((bRow ? K : N) * bLd + align - 1) / align * align;
  __shared__ __align__(32) Mem tiles[8][aSize + bSize];
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int row0 = warp * M, col0 = blockIdx.x * N;
  auto at = [](int r, int c, int ld, bool rowMajor) { return rowMajor ? r * ld + c : c * ld + r; };
  wmma::fragment<wmma::accumulator, M, N, K, Acc> acc;
  wmma::layout_t cLayout = cColMajor ? wmma::mem_col_major : wmma::mem_row_major;
  wmma::load_matrix_sync(acc, c + at(row0, col0, ldc, !cColMajor), ldc, cLayout);
  for (int i = 0; i < acc.num_elements; ++i)
    acc.x[i] = acc.x[i] * scale;
  for (int k0 = 0; k0 < kk; k0 += K) {
    wmma::fragment<wmma::matrix_a, M, N, K, In, LA> fa;
    wmma::fragment<wmma::matrix_b, M, N, K, In, LB> fb;
    const Mem *pa = a + at(row0, k0, lda, aRow), *pb = b + at(k0, col0, ldb, bRow);
    if (viaShared) {
      Mem *sa = tiles[warp], *sb = tiles[warp] + aSize;
      for (int i = lane; i < M * K; i += 32)
        sa[at(i / K, i % K, aLd, aRow)] = pa[at(i / K, i % K, lda, aRow)];
      for (int i = lane; i < K * N; i += 32)
        sb[at(i / N, i % N, bLd, bRow)] = pb[at(i / N, i % N, ldb, bRow)];
      __syncwarp();
      wmma::load_matrix_sync(fa, sa, aLd);
      wmma::load_matrix_sync(fb, sb, bLd);
      __syncwarp();
    } else {
      wmma::load_matrix_sync(fa, pa, lda);
      wmma::load_matrix_sync(fb, pb, ldb);
    }
    if constexpr (std::is_same<In, wmma::precision::tf32>::value) {
      for (int i = 0; i < fa.num_elements; ++i)
        fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
      for (int i = 0; i < fb.num_elements; ++i)
        fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
    }
    if constexpr (std::is_same<Acc, int>::value)
      wmma::mma_sync(acc, fa, fb, acc, satf);
    else
      wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(d + at(row0, col0, ldd, !dColMajor), acc, ldd,
                          dColMajor ? wmma::mem_col_major : wmma::mem_row_major);
}

// Host-side values of the element types.
double toDouble(half x) { return __half2float(x); }
double toDouble(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T> double toDouble(T x) { return double(x); }
template <typename T> T fromDouble(double x) { return T(x); }
template <> half fromDouble<half>(double x) { return __float2half(float(x)); }
template <> __nv_bfloat16 fromDouble<__nv_bfloat16>(double x) {
  return __float2bfloat16(float(x));
}

/// Runs one form on MM x NN = (2M) x (2N) with KK = 3K and checks it.
template <typename In, typename Mem, typename Acc, int M, int N, int K, typename LA, typename LB,
          bool viaShared = false>
void check(const char *name, bool cCol, bool dCol, bool integer) {
  constexpr bool aRow = std::is_same<LA, wmma::row_major>::value;
  constexpr bool bRow = std::is_same<LB, wmma::row_major>::value;
  const int mm = 2 * M, nn = 2 * N, kk = 3 * K, pad = 32 / sizeof(Mem);
  const int lda = (aRow ? kk : mm) + pad, ldb = (bRow ? nn : kk) + pad;
  const int ldc = (cCol ? mm : nn) + pad, ldd = (dCol ? mm : nn) + pad;
  auto at = [](int r, int c, int ld, bool rowMajor) { return rowMajor ? r * ld + c : c * ld + r; };
  std::vector<Mem> ha((aRow ? mm : kk) * lda), hb((bRow ? kk : nn) * ldb);
  std::vector<Acc> hc((cCol ? nn : mm) * ldc), hd((dCol ? nn : mm) * ldd, fromDouble<Acc>(-7));
  std::vector<double> ra(mm * kk), rb(kk * nn), rc(mm * nn);
  for (int i = 0; i < mm; ++i)
    for (int k = 0; k < kk; ++k) {
      double v = integer ? (i * 7 + k * 13) % 23 - (std::is_signed<Mem>::value ? 11 : 0)
                         : ((i * 7 + k * 3) % 7 - 3) * 0.5;
      ra[i * kk + k] = v;
      ha[at(i, k, lda, aRow)] = fromDouble<Mem>(v);
    }
  for (int k = 0; k < kk; ++k)
    for (int j = 0; j < nn; ++j) {
      double v = integer ? (k * 5 + j * 11) % 19 - (std::is_signed<Mem>::value ? 9 : 0)
                         : ((k * 5 + j * 11) % 5 - 2) * 0.5;
      rb[k * nn + j] = v;
      hb[at(k, j, ldb, bRow)] = fromDouble<Mem>(v);
    }
  for (int i = 0; i < mm; ++i)
    for (int j = 0; j < nn; ++j) {
      double v = integer ? (i + 2 * j) % 9 * 1000 - 4000 : ((i + 2 * j) % 9 - 4) * 0.25;
      rc[i * nn + j] = v;
      hc[at(i, j, ldc, !cCol)] = fromDouble<Acc>(v);
    }
  Mem *da, *db;
  Acc *dc, *dd;
  CHECK(cudaMalloc(&da, ha.size() * sizeof(Mem)));
  CHECK(cudaMalloc(&db, hb.size() * sizeof(Mem)));
  CHECK(cudaMalloc(&dc, hc.size() * sizeof(Acc)));
  CHECK(cudaMalloc(&dd, hd.size() * sizeof(Acc)));
  CHECK(cudaMemcpy(da, ha.data(), ha.size() * sizeof(Mem), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb.data(), hb.size() * sizeof(Mem), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dc, hc.data(), hc.size() * sizeof(Acc), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dd, hd.data(), hd.size() * sizeof(Acc), cudaMemcpyHostToDevice));
  wmma_gemm<In, Mem, Acc, M, N, K, LA, LB, viaShared><<<nn / N, 32 * (mm / M)>>>(
      da, lda, db, ldb, dc, ldc, cCol, dd, ldd, dCol, kk, fromDouble<Acc>(2), false);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(hd.data(), dd, hd.size() * sizeof(Acc), cudaMemcpyDeviceToHost));
  for (int i = 0; i < mm; ++i)
    for (int j = 0; j < nn; ++j) {
      double want = 2 * rc[i * nn + j];
      for (int k = 0; k < kk; ++k)
        want += ra[i * kk + k] * rb[k * nn + j];
      double got = toDouble(hd[at(i, j, ldd, !dCol)]);
      EXPECT(got == want, "%s: D[%d][%d] = %g, expected %g", name, i, j, got, want);
    }
  // The padding between D's rows (columns) is untouched.
  for (int line = 0; line < (dCol ? nn : mm); ++line)
    for (int e = dCol ? mm : nn; e < ldd; ++e)
      EXPECT(toDouble(hd[line * ldd + e]) == -7, "%s: store wrote outside D", name);
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  CHECK(cudaFree(dd));
  std::printf("%s ok\n", name);
}

/// s8 x s8 + s32 near the ends of the s32 range: .satfinite clamps, the
/// plain form wraps.
void checkSaturation() {
  const int n = 16 * 16;
  std::vector<signed char> ha(n), hb(n);
  std::vector<int> hc(n), hd(n);
  for (int i = 0; i < 16; ++i)
    for (int k = 0; k < 16; ++k) {
      ha[i * 16 + k] = i < 8 ? 127 : -128;  // row-major A
      hb[k + i * 16] = 127;                 // column-major B (column i)
    }
  for (int i = 0; i < n; ++i)
    hc[i] = i / 16 < 8 ? INT32_MAX - 1000 : INT32_MIN + 5;
  signed char *da, *db;
  int *dc, *dd;
  CHECK(cudaMalloc(&da, n));
  CHECK(cudaMalloc(&db, n));
  CHECK(cudaMalloc(&dc, n * 4));
  CHECK(cudaMalloc(&dd, n * 4));
  CHECK(cudaMemcpy(da, ha.data(), n, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb.data(), n, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dc, hc.data(), n * 4, cudaMemcpyHostToDevice));
  for (bool satf : {true, false}) {
    wmma_gemm<signed char, signed char, int, 16, 16, 16, wmma::row_major, wmma::col_major, false>
        <<<1, 32>>>(da, 16, db, 16, dc, 16, false, dd, 16, false, 16, 1, satf);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(hd.data(), dd, n * 4, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; ++i) {
      long long exact = (long long)hc[i] + 16LL * (i / 16 < 8 ? 127 : -128) * 127;
      long long want = satf ? (exact > INT32_MAX ? INT32_MAX : exact < INT32_MIN ? INT32_MIN : exact)
                            : (long long)(int)(uint32_t)(uint64_t)exact;
      EXPECT(hd[i] == want, "s8 satf=%d: D[%d] = %d, expected %lld", satf, i, hd[i], want);
    }
  }
  CHECK(cudaFree(da));
  CHECK(cudaFree(db));
  CHECK(cudaFree(dc));
  CHECK(cudaFree(dd));
  std::printf("s8 saturation ok\n");
}

int main() {
  using R = wmma::row_major;
  using C = wmma::col_major;
  using bf16 = __nv_bfloat16;
  using tf32 = wmma::precision::tf32;
  // Each fragment pointer is 256-bit aligned, as NVIDIA's wmma needs: forms
  // whose tiles would start mid-line off a 32-byte boundary (8-bit types,
  // 8-wide f16 tiles) take their A and B tiles through shared memory.
  check<half, half, float, 16, 16, 16, R, C>("f16.f32 m16n16k16 row.col", false, false, false);
  check<half, half, half, 16, 16, 16, C, R>("f16.f16 m16n16k16 col.row", true, true, false);
  check<half, half, float, 32, 8, 16, R, R, true>("f16.f32 m32n8k16 row.row shared", false, true,
                                                  false);
  check<half, half, half, 8, 32, 16, C, C, true>("f16.f16 m8n32k16 col.col shared", false, false,
                                                  false);
  check<bf16, bf16, float, 16, 16, 16, R, C, true>("bf16 m16n16k16 row.col shared", false, false,
                                                   false);
  check<bf16, bf16, float, 32, 8, 16, C, R, true>("bf16 m32n8k16 col.row shared", true, false,
                                                  false);
  check<bf16, bf16, float, 8, 32, 16, R, R>("bf16 m8n32k16 row.row", false, true, false);
  check<unsigned char, unsigned char, int, 16, 16, 16, R, C, true>("u8 m16n16k16 row.col shared",
                                                                   false, false, true);
  check<signed char, signed char, int, 32, 8, 16, C, C, true>("s8 m32n8k16 col.col shared", true,
                                                              true, true);
  check<signed char, signed char, int, 8, 32, 16, C, R, true>("s8 m8n32k16 col.row shared", false,
                                                              false, true);
  check<tf32, float, float, 16, 16, 8, R, C>("tf32 m16n16k8 row.col", false, false, false);
  check<tf32, float, float, 16, 16, 8, C, R, true>("tf32 m16n16k8 col.row shared", true, true,
                                                   false);
  check<double, double, double, 8, 8, 4, R, C>("f64 m8n8k4 row.col", false, false, false);
  check<double, double, double, 8, 8, 4, C, R, true>("f64 m8n8k4 col.row shared", true, true,
                                                     false);
  checkSaturation();
  std::printf("PASS\n");
}
