// RUN: zmlir-opt %s -split-input-file -zmlir-warp-uniform-conditions | FileCheck %s

// `if (threadIdx.x < 32)` in a kernel whose warps are 32-wide sub-groups
// tests w = (x - lane) & 992, which its entry computes: such a kernel is
// launched only where lane == x mod 32 (a one-dimensional work-group where
// the block is neither one-dimensional nor a multiple of 32 wide).
// CHECK-LABEL: gpu.func @warp_zero(
// CHECK-SAME: %[[OUT:.*]]: !llvm.ptr<1>, %[[V:.*]]: f32)
// CHECK-NEXT: %[[TID:.*]] = gpu.thread_id x upper_bound 1024
// CHECK-NEXT: %[[LANE:.*]] = gpu.lane_id
// CHECK-NEXT: %[[C992:.*]] = arith.constant 992 : index
// CHECK-NEXT: %[[DIFF:.*]] = arith.subi %[[TID]], %[[LANE]] : index
// CHECK-NEXT: %[[W:.*]] = arith.andi %[[DIFF]], %[[C992]] : index
// CHECK-NEXT: %[[W32:.*]] = arith.index_castui %[[W]] : index to i32
// CHECK: %[[PW:.*]] = arith.cmpi ugt, %[[W32]], %{{.*}} : i32
// CHECK: cf.cond_br %[[PW]]
// CHECK: llvm.store %[[V]], %[[OUT]]
// CHECK-NOT: cf.cond_br
// CHECK: gpu.return
// CHECK-NOT: llvm.store
// CHECK: }
gpu.module @m {
  gpu.func @warp_zero(%out: !llvm.ptr<1>, %v: f32) kernel attributes {intel_reqd_sub_group_size = 32 : i32} {
    %c31 = arith.constant 31 : i32
    %tid = gpu.thread_id x upper_bound 1024
    %t = arith.index_castui %tid : index to i32
    %p = arith.cmpi ugt, %t, %c31 : i32
    cf.cond_br %p, ^done, ^warp
  ^warp:
    llvm.store %v, %out : f32, !llvm.ptr<1>
    gpu.return
  ^done:
    gpu.return
  }
}

// -----

// What reads only x & ~31 is rewritten: x < 64, x >= 32 (signed), x <= 95,
// 31 < x (the constant first), x >> 5 and x >> 6, x / 64, x & -32, through an
// extension to i64. What reads x's low bits is not: x < 48, x == 0, x > 32,
// x >> 4, x / 48, x & 48.
// CHECK-LABEL: gpu.func @tests(
// CHECK: gpu.lane_id
// CHECK: %[[W:.*]] = arith.andi %{{.*}}, %{{.*}} : index
// CHECK-DAG: %[[W64:.*]] = arith.index_castui %[[W]] : index to i64
// CHECK-DAG: %[[W32:.*]] = arith.index_castui %[[W]] : index to i32
// CHECK: %[[T:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[T64:.*]] = arith.extui %[[T]] : i32 to i64
// CHECK: arith.cmpi ult, %[[W32]], %{{.*}} : i32
// CHECK: arith.cmpi sge, %[[W32]], %{{.*}} : i32
// CHECK: arith.cmpi ule, %[[W32]], %{{.*}} : i32
// CHECK: arith.cmpi ult, %{{.*}}, %[[W32]] : i32
// CHECK: arith.shrui %[[W32]], %{{.*}} : i32
// CHECK: arith.shrui %[[W64]], %{{.*}} : i64
// CHECK: arith.divui %[[W32]], %{{.*}} : i32
// CHECK: arith.andi %{{.*}}, %[[W32]] : i32
// CHECK: arith.cmpi ult, %[[T]], %{{.*}} : i32
// CHECK: arith.cmpi eq, %[[T]], %{{.*}} : i32
// CHECK: arith.cmpi ugt, %[[T]], %{{.*}} : i32
// CHECK: arith.shrui %[[T]], %{{.*}} : i32
// CHECK: arith.divui %[[T]], %{{.*}} : i32
// CHECK: arith.andi %[[T]], %{{.*}} : i32
// CHECK: gpu.return
gpu.module @m {
  gpu.func @tests(%out: !llvm.ptr<1>) kernel attributes {intel_reqd_sub_group_size = 32 : i32} {
    %c0 = arith.constant 0 : i32
    %c4 = arith.constant 4 : i32
    %c5 = arith.constant 5 : i32
    %c6_64 = arith.constant 6 : i64
    %c31 = arith.constant 31 : i32
    %c32 = arith.constant 32 : i32
    %c48 = arith.constant 48 : i32
    %c64 = arith.constant 64 : i32
    %c95 = arith.constant 95 : i32
    %cm32 = arith.constant -32 : i32
    %tid = gpu.thread_id x upper_bound 1024
    %t = arith.index_castui %tid : index to i32
    %t64 = arith.extui %t : i32 to i64
    %a = arith.cmpi ult, %t, %c64 : i32
    %b = arith.cmpi sge, %t, %c32 : i32
    %c = arith.cmpi ule, %t, %c95 : i32
    %d = arith.cmpi ult, %c31, %t : i32
    %e = arith.shrui %t, %c5 : i32
    %f = arith.shrui %t64, %c6_64 : i64
    %g = arith.divui %t, %c64 : i32
    %h = arith.andi %cm32, %t : i32
    %na = arith.cmpi ult, %t, %c48 : i32
    %nb = arith.cmpi eq, %t, %c0 : i32
    %nc = arith.cmpi ugt, %t, %c32 : i32
    %nd = arith.shrui %t, %c4 : i32
    %ne = arith.divui %t, %c48 : i32
    %nf = arith.andi %t, %c48 : i32
    %ab = arith.andi %a, %b : i1
    %abc = arith.andi %ab, %c : i1
    %abcd = arith.andi %abc, %d : i1
    cf.cond_br %abcd, ^one, ^two
  ^one:
    %s1 = arith.addi %e, %g : i32
    %s2 = arith.addi %s1, %h : i32
    %s3 = arith.addi %s2, %nd : i32
    %s4 = arith.addi %s3, %ne : i32
    %s5 = arith.addi %s4, %nf : i32
    llvm.store %s5, %out : i32, !llvm.ptr<1>
    llvm.store %f, %out : i64, !llvm.ptr<1>
    gpu.return
  ^two:
    %n1 = arith.andi %na, %nb : i1
    %n2 = arith.andi %n1, %nc : i1
    llvm.store %n2, %out : i1, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// Not rewritten: a kernel that does not require 32-wide sub-groups (its warps are
// not sub-groups), one whose test decides no branch, and one that tests x
// modulo 256 (through i8), not x.
// CHECK-LABEL: gpu.func @no_sub_groups(
// CHECK-NOT: gpu.lane_id
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @no_branch(
// CHECK-NOT: gpu.lane_id
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @narrow(
// CHECK-NOT: gpu.lane_id
// CHECK: gpu.return
gpu.module @m {
  gpu.func @no_sub_groups(%out: !llvm.ptr<1>, %v: f32) kernel {
    %c31 = arith.constant 31 : i32
    %tid = gpu.thread_id x upper_bound 1024
    %t = arith.index_castui %tid : index to i32
    %p = arith.cmpi ugt, %t, %c31 : i32
    cf.cond_br %p, ^done, ^warp
  ^warp:
    llvm.store %v, %out : f32, !llvm.ptr<1>
    gpu.return
  ^done:
    gpu.return
  }
  gpu.func @no_branch(%out: !llvm.ptr<1>) kernel attributes {intel_reqd_sub_group_size = 32 : i32} {
    %c5 = arith.constant 5 : i32
    %tid = gpu.thread_id x upper_bound 1024
    %t = arith.index_castui %tid : index to i32
    %warp = arith.shrui %t, %c5 : i32
    llvm.store %warp, %out : i32, !llvm.ptr<1>
    gpu.return
  }
  gpu.func @narrow(%out: !llvm.ptr<1>, %v: f32) kernel attributes {intel_reqd_sub_group_size = 32 : i32} {
    %c32 = arith.constant 32 : i32
    %tid = gpu.thread_id x upper_bound 1024
    %t8 = arith.index_castui %tid : index to i8
    %t = arith.extui %t8 : i8 to i32
    %p = arith.cmpi ult, %t, %c32 : i32
    cf.cond_br %p, ^warp, ^done
  ^warp:
    llvm.store %v, %out : f32, !llvm.ptr<1>
    gpu.return
  ^done:
    gpu.return
  }
}
