// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std | FileCheck %s

// ld.acquire.gpu.global.v2: PTX's memory model makes a vector access one
// scalar access per element with the same semantics, so two atomic acquire
// loads at the scope, the first at the vector's alignment.
// CHECK-LABEL: gpu.func @ld_acquire_v2
// CHECK: %[[P:.*]] = llvm.inttoptr %arg0 : i64 to !llvm.ptr<1>
// CHECK: llvm.load %[[P]] atomic syncscope("device") acquire {alignment = 8 : i64} : !llvm.ptr<1> -> i32
// CHECK: %[[P1:.*]] = llvm.getelementptr %[[P]][1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i32
// CHECK: llvm.load %[[P1]] atomic syncscope("device") acquire {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK-NOT: llvm.load
func.func @ld_acquire_v2(%p: i64) attributes {ptx.entry} {
  %v:2 = ptx.ld %p {space = #ptx.space<global>, type = #ptx.type<u32>, vec = 2, sem = #ptx.sem<acquire>, scope = #ptx.scope<gpu>} : i64 -> i32, i32
  ptx.ret
}

// -----

// st.release.sys.global.v4: four atomic release stores in element order.
// CHECK-LABEL: gpu.func @st_release_v4
// CHECK: llvm.store %arg1, %{{.*}} atomic release {alignment = 16 : i64} : i32, !llvm.ptr<1>
// CHECK: llvm.getelementptr %{{.*}}[1]
// CHECK: llvm.store %arg1, %{{.*}} atomic release {alignment = 4 : i64}
// CHECK: llvm.getelementptr %{{.*}}[2]
// CHECK: llvm.store %arg1, %{{.*}} atomic release {alignment = 8 : i64}
// CHECK: llvm.getelementptr %{{.*}}[3]
// CHECK: llvm.store %arg1, %{{.*}} atomic release {alignment = 4 : i64}
func.func @st_release_v4(%p: i64, %x: i32) attributes {ptx.entry} {
  ptx.st %p, %x, %x, %x, %x {space = #ptx.space<global>, type = #ptx.type<u32>, vec = 4, sem = #ptx.sem<release>, scope = #ptx.scope<sys>} : i64, i32, i32, i32, i32
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
