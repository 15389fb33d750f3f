// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=spirv | FileCheck %s
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=amdgpu wave-size=64" | FileCheck %s

// An aggregate return parameter stays an !llvm.array<N x i8> value of the
// lowered function; st.param of an f64 at offset 8 writes its 8 bytes
// there, low byte first.
// CHECK-LABEL: llvm.func internal @ret_pair
// CHECK-SAME: -> !llvm.array<16 x i8>
// CHECK: %[[BITS:.*]] = arith.bitcast %arg0 : f64 to i64
// CHECK: %[[B0:.*]] = arith.trunci %[[BITS]] : i64 to i8
// CHECK: %[[A0:.*]] = llvm.insertvalue %[[B0]], %{{.*}}[8] : !llvm.array<16 x i8>
// CHECK: %[[SH1:.*]] = arith.shrui %[[BITS]], %{{.*}} : i64
// CHECK: %[[B1:.*]] = arith.trunci %[[SH1]] : i64 to i8
// CHECK: %[[A1:.*]] = llvm.insertvalue %[[B1]], %[[A0]][9] : !llvm.array<16 x i8>
// CHECK: llvm.insertvalue %{{.*}}[15] : !llvm.array<16 x i8>
// CHECK-NOT: llvm.insertvalue
// CHECK: llvm.return %{{.*}} : !llvm.array<16 x i8>
func.func @ret_pair(%x: f64) -> !llvm.array<16 x i8> {
  %u = ub.poison : !llvm.array<16 x i8>
  %r = ptx.st_param %u, %x {offset = 8 : i64, type = #ptx.type<f64>} : !llvm.array<16 x i8>, f64
  ptx.ret %r : !llvm.array<16 x i8>
}

// -----

// ld.param.s16 of bytes 2 and 3 of an aggregate argument into a 32-bit
// register: the bytes assembled little-endian, then sign-extended.
// CHECK-LABEL: llvm.func internal @arg_s16
// CHECK-SAME: %arg0: !llvm.array<4 x i8>
// CHECK: %[[LO:.*]] = llvm.extractvalue %arg0[2] : !llvm.array<4 x i8>
// CHECK: %[[LOW:.*]] = arith.extui %[[LO]] : i8 to i16
// CHECK: %[[HI:.*]] = llvm.extractvalue %arg0[3] : !llvm.array<4 x i8>
// CHECK: %[[HIW:.*]] = arith.extui %[[HI]] : i8 to i16
// CHECK: %[[SHL:.*]] = arith.shli %[[HIW]], %{{.*}} : i16
// CHECK: %[[OR:.*]] = arith.ori %[[LOW]], %[[SHL]] : i16
// CHECK: %[[EXT:.*]] = arith.extsi %[[OR]] : i16 to i32
// CHECK: llvm.return %[[EXT]] : i32
func.func @arg_s16(%p: !llvm.array<4 x i8>) -> i32 {
  %v = ptx.ld_param %p {offset = 2 : i64, type = #ptx.type<s16>} : !llvm.array<4 x i8> -> i32
  ptx.ret %v : i32
}

// -----

// A single byte needs no shifts.
// CHECK-LABEL: llvm.func internal @byte
// CHECK: %[[B:.*]] = arith.trunci %arg1 : i16 to i8
// CHECK-NEXT: llvm.insertvalue %[[B]], %arg0[3] : !llvm.array<4 x i8>
// CHECK: %[[R:.*]] = llvm.extractvalue %{{.*}}[3] : !llvm.array<4 x i8>
// CHECK-NEXT: arith.extui %[[R]] : i8 to i16
func.func @byte(%p: !llvm.array<4 x i8>, %x: i16) -> i16 {
  %q = ptx.st_param %p, %x {offset = 3 : i64, type = #ptx.type<b8>} : !llvm.array<4 x i8>, i16
  %v = ptx.ld_param %q {offset = 3 : i64, type = #ptx.type<u8>} : !llvm.array<4 x i8> -> i16
  ptx.ret %v : i16
}
