// RUN: zmlir-opt %s -split-input-file -zmlir-index-no-wrap="target=spirv grid-variants=true" | FileCheck %s
// RUN: zmlir-opt %s -split-input-file -zmlir-index-no-wrap="target=generic grid-variants=true" | FileCheck %s --check-prefix=GENERIC

// CUDA's global index, sign-extended (mul.wide.s32): the kernel keeps the
// 32-bit math that may wrap; its grid variant (at most 2^21 - 1 blocks in x)
// proves it and computes it in 64 bits from the ids themselves.
// CHECK-LABEL: gpu.func @global_index(
// CHECK-NOT: upper_bound 2097151
// CHECK: %[[M:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK: %[[G:.*]] = arith.addi %[[M]], %{{.*}} : i32
// CHECK: arith.extsi %[[G]] : i32 to i64
// CHECK-LABEL: gpu.func @global_index__zmlir_grid31(
// CHECK-SAME: zmlir.grid_variant_x = 2097151 : i64
// CHECK: %[[BID:.*]] = gpu.block_id {{ *}}x upper_bound 2097151
// CHECK: %[[B64:.*]] = arith.index_castui %[[BID]] : index to i64
// CHECK: %[[N64:.*]] = arith.index_castui %{{.*}} : index to i64
// CHECK: %[[T64:.*]] = arith.index_castui %{{.*}} : index to i64
// CHECK: %[[M64:.*]] = arith.muli %[[B64]], %[[N64]] overflow<nsw> : i64
// CHECK: %[[G64:.*]] = arith.addi %[[M64]], %[[T64]] overflow<nsw> : i64
// CHECK: llvm.getelementptr %{{.*}}[%[[G64]]]
// CHECK-NOT: arith.extsi
// CHECK: gpu.return
// No target that widens, no variant.
// GENERIC-LABEL: gpu.func @global_index(
// GENERIC-NOT: __zmlir_grid31
gpu.module @m {
  gpu.func @global_index(%out: !llvm.ptr<1>) kernel {
    %bid = gpu.block_id x
    %ntid = gpu.block_dim x upper_bound 1024
    %tid = gpu.thread_id x upper_bound 1024
    %b = arith.index_castui %bid : index to i32
    %n = arith.index_castui %ntid : index to i32
    %t = arith.index_castui %tid : index to i32
    %m = arith.muli %b, %n : i32
    %g = arith.addi %m, %t : i32
    %e = arith.extsi %g : i32 to i64
    %p = llvm.getelementptr %out[%e] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %v = arith.sitofp %g : i32 to f32
    llvm.store %v, %p : f32, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// An index from the thread alone is proven in the kernel itself: no variant.
// CHECK-LABEL: gpu.func @thread_index(
// CHECK-NOT: __zmlir_grid31
gpu.module @m {
  gpu.func @thread_index(%out: !llvm.ptr<1>) kernel {
    %tid = gpu.thread_id x upper_bound 1024
    %t = arith.index_castui %tid : index to i32
    %e = arith.extsi %t : i32 to i64
    %p = llvm.getelementptr %out[%e] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %v = arith.sitofp %t : i32 to f32
    llvm.store %v, %p : f32, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// %ctaid.x * 4096 can reach 2^31 even in the variant's grids (2^21 - 1
// blocks): nothing gained, no variant.
// CHECK-LABEL: gpu.func @wide_stride(
// CHECK-NOT: __zmlir_grid31
gpu.module @m {
  gpu.func @wide_stride(%out: !llvm.ptr<1>) kernel {
    %c4096 = arith.constant 4096 : i32
    %bid = gpu.block_id x
    %b = arith.index_castui %bid : index to i32
    %m = arith.muli %b, %c4096 : i32
    %e = arith.extsi %m : i32 to i64
    %p = llvm.getelementptr %out[%e] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %v = arith.sitofp %m : i32 to f32
    llvm.store %v, %p : f32, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// In y, a grid of at most 65535 blocks: %ctaid.y * %ntid.y + %tid.y fits too.
// CHECK-LABEL: gpu.func @row_index__zmlir_grid31(
// CHECK: gpu.block_id {{ *}}y upper_bound 65535
// CHECK: arith.muli %{{.*}}, %{{.*}} overflow<nsw, nuw> : i32
// CHECK: arith.addi %{{.*}}, %{{.*}} overflow<nsw, nuw> : i32
gpu.module @m {
  gpu.func @row_index(%out: !llvm.ptr<1>) kernel {
    %bid = gpu.block_id y
    %ntid = gpu.block_dim y upper_bound 1024
    %tid = gpu.thread_id y upper_bound 1024
    %b = arith.index_castui %bid : index to i32
    %n = arith.index_castui %ntid : index to i32
    %t = arith.index_castui %tid : index to i32
    %m = arith.muli %b, %n : i32
    %g = arith.addi %m, %t : i32
    %e = arith.extsi %g : i32 to i64
    %p = llvm.getelementptr %out[%e] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %v = arith.sitofp %g : i32 to f32
    llvm.store %v, %p : f32, !llvm.ptr<1>
    gpu.return
  }
}
