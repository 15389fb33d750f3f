// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std | FileCheck %s

// ld.acquire.gpu.global.v2.u32: 8 bytes, one atomic acquire i64 load at
// the scope, never two (cub's decoupled look-back reads {status, value}
// pairs this way; NVIDIA's hardware never tears them), then the elements.
// CHECK-LABEL: gpu.func @ld_acquire_v2
// CHECK: %[[P:.*]] = llvm.inttoptr %arg0 : i64 to !llvm.ptr<1>
// CHECK: %[[W:.*]] = llvm.load %[[P]] atomic syncscope("device") acquire {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// CHECK: llvm.bitcast %[[W]] : i64 to vector<2xi32>
// CHECK-NOT: llvm.load
func.func @ld_acquire_v2(%p: i64) attributes {ptx.entry} {
  %v:2 = ptx.ld %p {space = #ptx.space<global>, type = #ptx.type<u32>, vec = 2, sem = #ptx.sem<acquire>, scope = #ptx.scope<gpu>} : i64 -> i32, i32
  ptx.ret
}

// -----

// st.relaxed.gpu.global.v2.u32: one atomic monotonic i64 store of both.
// CHECK-LABEL: gpu.func @st_relaxed_v2
// CHECK: %[[W:.*]] = llvm.bitcast %{{.*}} : vector<2xi32> to i64
// CHECK: llvm.store %[[W]], %{{.*}} atomic syncscope("device") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<1>
// CHECK-NOT: llvm.store
func.func @st_relaxed_v2(%p: i64, %x: i32, %y: i32) attributes {ptx.entry} {
  ptx.st %p, %x, %y {space = #ptx.space<global>, type = #ptx.type<u32>, vec = 2, sem = #ptx.sem<relaxed>, scope = #ptx.scope<gpu>} : i64, i32, i32
  ptx.ret
}

// -----

// st.release.sys.global.v4.u32 / ld.relaxed.gpu.global.v2.u64: 16 bytes,
// no 128-bit atomic anywhere: one volatile vector access (never split),
// a release fence before the store; a relaxed load needs no fence.
// CHECK-LABEL: gpu.func @st_release_v4
// CHECK: llvm.fence release
// CHECK: llvm.store volatile %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
func.func @st_release_v4(%p: i64, %x: i32) attributes {ptx.entry} {
  ptx.st %p, %x, %x, %x, %x {space = #ptx.space<global>, type = #ptx.type<u32>, vec = 4, sem = #ptx.sem<release>, scope = #ptx.scope<sys>} : i64, i32, i32, i32, i32
  ptx.ret
}

// -----

// CHECK-LABEL: gpu.func @ld_relaxed_v2_u64
// CHECK: llvm.load volatile %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<2xi64>
// CHECK-NOT: llvm.fence
// CHECK-NOT: llvm.load
func.func @ld_relaxed_v2_u64(%p: i64) attributes {ptx.entry} {
  %v:2 = ptx.ld %p {space = #ptx.space<global>, type = #ptx.type<u64>, vec = 2, sem = #ptx.sem<relaxed>, scope = #ptx.scope<gpu>} : i64 -> i64, i64
  ptx.ret
}

// -----

// A volatile vector access stays one vector load.
// CHECK-LABEL: gpu.func @ld_volatile_v2
// CHECK: llvm.load volatile %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> vector<2xi32>
func.func @ld_volatile_v2(%p: i64) attributes {ptx.entry} {
  %v:2 = ptx.ld %p {space = #ptx.space<global>, type = #ptx.type<u32>, vec = 2, sem = #ptx.sem<volatile>} : i64 -> i32, i32
  ptx.ret
}
