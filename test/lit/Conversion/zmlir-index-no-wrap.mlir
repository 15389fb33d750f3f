// RUN: zmlir-opt %s -split-input-file -zmlir-index-no-wrap | FileCheck %s
// RUN: zmlir-opt %s -split-input-file -zmlir-index-no-wrap=target=spirv | FileCheck %s --check-prefix=SPV

// A shared tile offset from %tid (< 1024) and constants cannot wrap: nuw and nsw.
// CHECK-LABEL: gpu.func @tile_offset
// CHECK: %[[T:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[S:.*]] = arith.shli %[[T]], %{{.*}} overflow<nsw, nuw> : i32
// CHECK: %[[A:.*]] = arith.addi %[[S]], %{{.*}} overflow<nsw, nuw> : i32
// CHECK: arith.extui %[[A]] : i32 to i64
// Where the target widens (SPIR-V), the offset is computed in 64 bits from the id.
// SPV-LABEL: gpu.func @tile_offset
// SPV: %[[TID:.*]] = gpu.thread_id {{ *}}x upper_bound 1024
// SPV: %[[T64:.*]] = arith.index_castui %[[TID]] : index to i64
// SPV: %[[S64:.*]] = arith.shli %[[T64]], %c2_i64 overflow<nsw, nuw> : i64
// SPV: %[[A64:.*]] = arith.addi %[[S64]], %c1024_i64 overflow<nsw, nuw> : i64
// SPV: llvm.getelementptr %{{.*}}[%[[A64]]]
// SPV-NOT: arith.extui
gpu.module @m {
  gpu.func @tile_offset(%window: !llvm.ptr<3>) kernel {
    %c2 = arith.constant 2 : i32
    %c1024 = arith.constant 1024 : i32
    %tid = gpu.thread_id x upper_bound 1024
    %t = arith.index_castui %tid : index to i32
    %s = arith.shli %t, %c2 : i32
    %a = arith.addi %s, %c1024 : i32
    %e = arith.extui %a : i32 to i64
    %p = llvm.getelementptr %window[%e] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %v = llvm.load %p : !llvm.ptr<3> -> f32
    llvm.store %v, %p : f32, !llvm.ptr<3>
    gpu.return
  }
}

// -----

// %ctaid.x * %ntid.x + %tid.x may wrap (%ctaid.x is up to 2^32 - 1): no flags,
// and the extension stays, on every target.
// CHECK-LABEL: gpu.func @global_index
// CHECK: %[[M:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK: %[[G:.*]] = arith.addi %[[M]], %{{.*}} : i32
// CHECK: arith.extui %[[G]] : i32 to i64
// SPV-LABEL: gpu.func @global_index
// SPV: %[[M:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// SPV: %[[G:.*]] = arith.addi %[[M]], %{{.*}} : i32
// SPV: arith.extui %[[G]] : i32 to i64
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
    %e = arith.extui %g : i32 to i64
    %p = llvm.getelementptr %out[%e] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %v = arith.sitofp %g : i32 to f32
    llvm.store %v, %p : f32, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// A kernel parameter is any value: neither it plus %tid nor it shifted is proven.
// CHECK-LABEL: gpu.func @parameter
// CHECK: arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: arith.shli %{{.*}}, %{{.*}} : i32
// CHECK-NOT: overflow
gpu.module @m {
  gpu.func @parameter(%out: !llvm.ptr<1>, %n: i32) kernel {
    %c2 = arith.constant 2 : i32
    %tid = gpu.thread_id x upper_bound 1024
    %t = arith.index_castui %tid : index to i32
    %a = arith.addi %n, %t : i32
    %s = arith.shli %a, %c2 : i32
    %e = arith.extui %s : i32 to i64
    %p = llvm.getelementptr %out[%e] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i8
    %v = arith.sitofp %s : i32 to f32
    llvm.store %v, %p : f32, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// A block's linear thread index, %tid.y * %ntid.x + %tid.x, stays below 2^20:
// nuw and nsw.
// CHECK-LABEL: gpu.func @linear_thread
// CHECK: arith.muli %{{.*}}, %{{.*}} overflow<nsw, nuw> : i32
// CHECK: arith.addi %{{.*}}, %{{.*}} overflow<nsw, nuw> : i32
gpu.module @m {
  gpu.func @linear_thread(%out: !llvm.ptr<1>) kernel {
    %ty = gpu.thread_id y upper_bound 1024
    %nx = gpu.block_dim x upper_bound 1024
    %tx = gpu.thread_id x upper_bound 1024
    %y = arith.index_castui %ty : index to i32
    %w = arith.index_castui %nx : index to i32
    %x = arith.index_castui %tx : index to i32
    %m = arith.muli %y, %w : i32
    %l = arith.addi %m, %x : i32
    %v = arith.sitofp %l : i32 to f32
    llvm.store %v, %out : f32, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// %tid.x - 1 wraps unsigned at thread 0 (no nuw) but never signed (nsw); an
// extension of it is not widened.
// CHECK-LABEL: gpu.func @previous_thread
// CHECK: arith.subi %{{.*}}, %{{.*}} overflow<nsw> : i32
// SPV-LABEL: gpu.func @previous_thread
// SPV: %[[D:.*]] = arith.subi %{{.*}}, %{{.*}} overflow<nsw> : i32
// SPV: arith.extui %[[D]] : i32 to i64
gpu.module @m {
  gpu.func @previous_thread(%out: !llvm.ptr<1>) kernel {
    %c1 = arith.constant 1 : i32
    %tid = gpu.thread_id x upper_bound 1024
    %t = arith.index_castui %tid : index to i32
    %d = arith.subi %t, %c1 : i32
    %e = arith.extui %d : i32 to i64
    %p = llvm.getelementptr %out[%e] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %v = arith.sitofp %d : i32 to f32
    llvm.store %v, %p : f32, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// Behind a branch on a parameter (sgemm's `for (t = 0; t < n; ...)`), the
// tile offset is proven as well: nuw and nsw, and 64 bits on SPIR-V.
// CHECK-LABEL: gpu.func @behind_branch
// CHECK: ^bb1:
// CHECK: %[[S:.*]] = arith.shli %{{.*}}, %{{.*}} overflow<nsw, nuw> : i32
// CHECK: arith.addi %[[S]], %{{.*}} overflow<nsw, nuw> : i32
// SPV-LABEL: gpu.func @behind_branch
// SPV: ^bb1:
// SPV: %[[S64:.*]] = arith.shli %{{.*}}, %c2_i64 overflow<nsw, nuw> : i64
// SPV: %[[A64:.*]] = arith.addi %[[S64]], %c1024_i64 overflow<nsw, nuw> : i64
// SPV: llvm.getelementptr %{{.*}}[%[[A64]]]
gpu.module @m {
  gpu.func @behind_branch(%window: !llvm.ptr<3>, %n: i32) kernel {
    %c0 = arith.constant 0 : i32
    %c2 = arith.constant 2 : i32
    %c1024 = arith.constant 1024 : i32
    %tid = gpu.thread_id x upper_bound 1024
    %t = arith.index_castui %tid : index to i32
    %empty = arith.cmpi slt, %n, %c0 : i32
    cf.cond_br %empty, ^bb2, ^bb1
  ^bb1:
    %s = arith.shli %t, %c2 : i32
    %a = arith.addi %s, %c1024 : i32
    %e = arith.extui %a : i32 to i64
    %p = llvm.getelementptr %window[%e] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
    %v = llvm.load %p : !llvm.ptr<3> -> f32
    llvm.store %v, %p : f32, !llvm.ptr<3>
    cf.br ^bb2
  ^bb2:
    gpu.return
  }
}

// -----

// %tid.x - 8 wraps unsigned but never signed: its sign extension (nvcc's
// mul.wide.s32) is computed in 64 bits on SPIR-V, from the id's own value.
// CHECK-LABEL: gpu.func @signed_offset
// CHECK: %[[A:.*]] = arith.addi %{{.*}}, %{{.*}} overflow<nsw> : i32
// CHECK: arith.extsi %[[A]] : i32 to i64
// SPV-LABEL: gpu.func @signed_offset
// SPV: %[[TID:.*]] = gpu.thread_id {{ *}}x upper_bound 1024
// SPV: %[[T64:.*]] = arith.index_castui %[[TID]] : index to i64
// SPV: %[[A64:.*]] = arith.addi %[[T64]], %c-8_i64 overflow<nsw> : i64
// SPV: llvm.getelementptr %{{.*}}[%[[A64]]]
// SPV-NOT: arith.extsi
gpu.module @m {
  gpu.func @signed_offset(%out: !llvm.ptr<1>) kernel {
    %c-8 = arith.constant -8 : i32
    %tid = gpu.thread_id x upper_bound 1024
    %t = arith.index_castui %tid : index to i32
    %a = arith.addi %t, %c-8 : i32
    %e = arith.extsi %a : i32 to i64
    %p = llvm.getelementptr %out[%e] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
    %v = arith.sitofp %a : i32 to f32
    llvm.store %v, %p : f32, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// Each function is analysed on its own (one analysis of the module took
// minutes on dmmaTensorCoreGemm's 12298 calls of one function), but a call's
// result takes the range its callee returns: %tid.x + 1 is nuw and nsw, and
// 64 bits on SPIR-V.
// CHECK-LABEL: llvm.func internal @lane
// CHECK-LABEL: gpu.func @call_result
// CHECK: %[[R:.*]] = llvm.call @lane() : () -> i32
// CHECK: arith.addi %[[R]], %{{.*}} overflow<nsw, nuw> : i32
// SPV-LABEL: llvm.func internal @lane
// SPV-LABEL: gpu.func @call_result
// SPV: %[[R:.*]] = llvm.call @lane() : () -> i32
// SPV: %[[R64:.*]] = arith.extui %[[R]] : i32 to i64
// SPV: %[[A64:.*]] = arith.addi %[[R64]], %c1_i64 overflow<nsw, nuw> : i64
// SPV: llvm.getelementptr %{{.*}}[%[[A64]]]
gpu.module @m {
  llvm.func internal @lane() -> i32 {
    %tid = gpu.thread_id x upper_bound 1024
    %t = arith.index_castui %tid : index to i32
    llvm.return %t : i32
  }
  gpu.func @call_result(%out: !llvm.ptr<1>) kernel {
    %c1 = arith.constant 1 : i32
    %r = llvm.call @lane() : () -> i32
    %a = arith.addi %r, %c1 : i32
    %e = arith.extui %a : i32 to i64
    %p = llvm.getelementptr %out[%e] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
    llvm.store %a, %p : i32, !llvm.ptr<1>
    gpu.return
  }
}

// -----

// What analysing each function alone gives up: a private callee's arguments
// are any value, not the join of its callers' (%tid.x here), so %i * 4 keeps
// no flags. (The lowering emits no private functions; PTX's are llvm.func,
// public to MLIR, whose arguments were any value before too.)
// CHECK-LABEL: func.func private @scale
// CHECK: arith.muli %{{[^ ]+}}, %{{[^ ]+}} : i32
// CHECK-NOT: overflow
// CHECK-LABEL: gpu.func @private_callee
gpu.module @m {
  func.func private @scale(%i: i32) -> i32 {
    %c4 = arith.constant 4 : i32
    %s = arith.muli %i, %c4 : i32
    return %s : i32
  }
  gpu.func @private_callee(%out: !llvm.ptr<1>) kernel {
    %tid = gpu.thread_id x upper_bound 1024
    %t = arith.index_castui %tid : index to i32
    %s = func.call @scale(%t) : (i32) -> i32
    llvm.store %s, %out : i32, !llvm.ptr<1>
    gpu.return
  }
}
