// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=spirv -verify-diagnostics
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s

// LLVM's SPIR-V backend gives an array's length as a 32-bit constant and
// truncated a longer one (5e9 bytes became 705032704): rejected on SPIR-V,
// kept whole, a zero splat, elsewhere.
// CHECK: llvm.mlir.global external @big(dense<0> : tensor<5000000000xi8>)
// CHECK-SAME: !llvm.array<5000000000 x i8>
// expected-error @+1 {{unsupported variable 'big' of 5000000000 bytes on target 'spirv' (at most 4294967295)}}
ptx.var @big {count = 5000000000 : i64, space = #ptx.space<global>, type = #ptx.type<b8>}
func.func @k() attributes {ptx.entry} {
  ptx.ret
}

// -----

// The largest SPIR-V takes.
// CHECK: llvm.mlir.global external @most(dense<0> : tensor<4294967295xi8>)
ptx.var @most {count = 4294967295 : i64, space = #ptx.space<global>, type = #ptx.type<b8>}
func.func @k() attributes {ptx.entry} {
  ptx.ret
}

// -----

// A `.local` array is an alloca of one array type: the same limit.
// CHECK-LABEL: gpu.func @local
// CHECK: llvm.alloca %{{.*}} x !llvm.array<5000000000 x i8>
func.func @local() attributes {ptx.entry} {
  // expected-error @+1 {{unsupported '.local' variable of 5000000000 bytes on target 'spirv' (at most 4294967295)}}
  %0 = ptx.local_var {size = 5000000000 : i64, align = 8 : i64} : i64
  ptx.ret
}
