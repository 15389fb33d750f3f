// RUN: zmlir-opt %s -split-input-file -zmlir-native-math-intrinsics | FileCheck %s

// The intrinsics the NVVM/ROCDL conversions mark illegal but the backends
// lower natively become llvm.call_intrinsic of the same intrinsic and operands.
// CHECK-LABEL: llvm.func @native
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f64)
// CHECK-NEXT: %[[ABS:.*]] = llvm.call_intrinsic "llvm.fabs"(%[[A]]) : (f32) -> f32
// CHECK-NEXT: %[[FLOOR:.*]] = llvm.call_intrinsic "llvm.floor"(%[[B]]) : (f64) -> f64
// CHECK-NEXT: %[[CEIL:.*]] = llvm.call_intrinsic "llvm.ceil"(%[[ABS]]) : (f32) -> f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.roundeven"(%[[FLOOR]]) : (f64) -> f64
// CHECK-NEXT: llvm.call_intrinsic "llvm.round"(%[[CEIL]]) : (f32) -> f32
// CHECK-NEXT: llvm.call_intrinsic "llvm.copysign"(%[[A]], %[[CEIL]]) : (f32, f32) -> f32
// CHECK-NOT: llvm.intr
llvm.func @native(%a: f32, %b: f64) -> f32 {
  %0 = llvm.intr.fabs(%a) : (f32) -> f32
  %1 = llvm.intr.floor(%b) : (f64) -> f64
  %2 = llvm.intr.ceil(%0) : (f32) -> f32
  %3 = llvm.intr.roundeven(%1) : (f64) -> f64
  %4 = llvm.intr.round(%2) : (f32) -> f32
  %5 = llvm.intr.copysign(%a, %2) : (f32, f32) -> f32
  llvm.return %5 : f32
}

// -----

// sqrt keeps its fast-math flags (with afn NVPTX may use sqrt.approx).
// CHECK-LABEL: llvm.func @sqrt_flags
// CHECK: llvm.call_intrinsic "llvm.sqrt"(%{{.*}}) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
llvm.func @sqrt_flags(%a: f32) -> f32 {
  %0 = llvm.intr.sqrt(%a) {fastmathFlags = #llvm.fastmath<afn>} : (f32) -> f32
  llvm.return %0 : f32
}

// -----

// Intrinsics the backends would expand to library calls or approximations
// stay as they are, so the GPU conversion still reports them.
// CHECK-LABEL: llvm.func @kept
// CHECK-NEXT: llvm.intr.sin
// CHECK-NEXT: llvm.intr.exp
// CHECK-NOT: llvm.call_intrinsic
llvm.func @kept(%a: f32) -> f32 {
  %0 = llvm.intr.sin(%a) : (f32) -> f32
  %1 = llvm.intr.exp(%0) : (f32) -> f32
  llvm.return %1 : f32
}
