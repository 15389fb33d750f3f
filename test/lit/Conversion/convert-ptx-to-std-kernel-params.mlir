// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=spirv | FileCheck %s --check-prefixes=CHECK,BYVAL,SPIRV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefixes=CHECK,BYVAL,NVPTX
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=amdgpu | FileCheck %s --check-prefixes=CHECK,VALUE

// A by-value aggregate kernel parameter: on SPIR-V and NVPTX a pointer to
// the kernel's byval copy, aligned as its `.align` (Intel's OpenCL compiler
// aborts on an array by value; NVPTX's `.param .align 4 .b8 p[12]`), listed
// in zmlir.byval and zmlir.align for code emission, and ld.param a load at
// the offset as aligned as the copy allows; on AMDGPU the array value, and
// ld.param its bytes.
// CHECK-LABEL: gpu.func @by_value
// SPIRV-SAME: (%[[P:.*]]: !llvm.ptr<5> {llvm.align = 4 : i64, llvm.byval = !llvm.struct<(array<12 x i8>)>}, %{{.*}}: i64)
// NVPTX-SAME: (%[[P:.*]]: !llvm.ptr {llvm.align = 4 : i64, llvm.byval = !llvm.struct<(array<12 x i8>)>}, %{{.*}}: i64)
// BYVAL-SAME: zmlir.align = [4, unit], zmlir.byval = [!llvm.struct<(array<12 x i8>)>, unit]
// BYVAL: %[[AT4:.*]] = llvm.getelementptr %[[P]][4]
// BYVAL-NEXT: llvm.load %[[AT4]] {alignment = 4 : i64} : !llvm.ptr{{(<5>)?}} -> i32
// BYVAL: %[[AT10:.*]] = llvm.getelementptr %[[P]][10]
// BYVAL-NEXT: %[[B:.*]] = llvm.load %[[AT10]] {alignment = 1 : i64} : !llvm.ptr{{(<5>)?}} -> i8
// BYVAL-NEXT: arith.extsi %[[B]] : i8 to i16
// VALUE-SAME: (%[[P:.*]]: !llvm.array<12 x i8>, %{{.*}}: i64)
// VALUE-NOT: zmlir.byval
// VALUE: llvm.extractvalue %[[P]][4] : !llvm.array<12 x i8>
// VALUE: llvm.extractvalue %[[P]][7] : !llvm.array<12 x i8>
// VALUE: llvm.extractvalue %[[P]][10] : !llvm.array<12 x i8>
func.func @by_value(%arg0: !llvm.array<12 x i8> {ptx.align = 4 : i64}, %arg1: i64) attributes {ptx.entry} {
  %0 = ptx.ld_param %arg0 {offset = 4 : i64, type = #ptx.type<u32>} : !llvm.array<12 x i8> -> i32
  %1 = ptx.ld_param %arg0 {offset = 10 : i64, type = #ptx.type<s8>} : !llvm.array<12 x i8> -> i16
  %2 = ptx.ld_param %arg1 {type = #ptx.type<u64>} : i64 -> i64
  ptx.st %2, %0 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  ptx.st %2, %1 {offset = 4 : i64, space = #ptx.space<global>, type = #ptx.type<s16>} : i64, i16
  ptx.ret
}

// -----

// An 8-aligned aggregate (CUB's ScanTileState: one pointer) is read 8 bytes
// at a time; one without `.align` is 1-aligned, read byte by byte.
// CHECK-LABEL: gpu.func @aligned
// BYVAL-SAME: {llvm.align = 8 : i64, llvm.byval = !llvm.struct<(array<16 x i8>)>}
// BYVAL-SAME: {llvm.align = 1 : i64, llvm.byval = !llvm.struct<(array<8 x i8>)>}
// BYVAL: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr{{(<5>)?}} -> i64
// BYVAL: llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr{{(<5>)?}} -> i64
func.func @aligned(%arg0: !llvm.array<16 x i8> {ptx.align = 8 : i64}, %arg1: !llvm.array<8 x i8>) attributes {ptx.entry} {
  %0 = ptx.ld_param %arg0 {offset = 8 : i64, type = #ptx.type<u64>} : !llvm.array<16 x i8> -> i64
  %1 = ptx.ld_param %arg1 {type = #ptx.type<u64>} : !llvm.array<8 x i8> -> i64
  ptx.st %0, %1 {space = #ptx.space<global>, type = #ptx.type<u64>} : i64, i64
  ptx.ret
}

// -----

// The address of a parameter (nvcc indexing a big struct) is its copy's in
// .local: the byval pointer (on NVPTX, whose allocas are generic, cast to
// .local), an alloca holding the value made at the entry on AMDGPU; ld.param
// through it loads from the .local space.
// CHECK-LABEL: gpu.func @indexed
// SPIRV-SAME: (%[[P:.*]]: !llvm.ptr<5> {llvm.align = 8 : i64, llvm.byval = !llvm.struct<(array<400 x i8>)>}, %[[I:.*]]: i64)
// SPIRV: %[[A:.*]] = llvm.ptrtoint %[[P]] : !llvm.ptr<5> to i64
// NVPTX-SAME: (%[[P:.*]]: !llvm.ptr {llvm.align = 8 : i64, llvm.byval = !llvm.struct<(array<400 x i8>)>}, %[[I:.*]]: i64)
// NVPTX: %[[COPY:.*]] = llvm.addrspacecast %[[P]] : !llvm.ptr to !llvm.ptr<5>
// NVPTX: %[[A:.*]] = llvm.ptrtoint %[[COPY]] : !llvm.ptr<5> to i64
// VALUE-SAME: (%[[P:.*]]: !llvm.array<400 x i8>, %[[I:.*]]: i64)
// VALUE: %[[COPY:.*]] = llvm.alloca %{{.*}} x !llvm.array<400 x i8> {alignment = 8 : i64} : (i64) -> !llvm.ptr<5>
// VALUE-NEXT: llvm.store %[[P]], %[[COPY]] : !llvm.array<400 x i8>, !llvm.ptr<5>
// VALUE: %[[A:.*]] = llvm.ptrtoint %[[COPY]] : !llvm.ptr<5> to i64
// CHECK: %[[SUM:.*]] = arith.addi %[[A]], %[[I]] : i64
// CHECK: %[[AT:.*]] = arith.addi %[[SUM]], %{{.*}} : i64
// CHECK: %[[PTR:.*]] = llvm.inttoptr %[[AT]] : i64 to !llvm.ptr<5>
// CHECK: llvm.load %[[PTR]] {alignment = 4 : i64} : !llvm.ptr<5> -> i32
func.func @indexed(%arg0: !llvm.array<400 x i8> {ptx.align = 8 : i64}, %arg1: i64) attributes {ptx.entry} {
  %0 = ptx.param_addr %arg0 : !llvm.array<400 x i8> -> i64
  %1 = ptx.ld_param %arg1 {type = #ptx.type<u64>} : i64 -> i64
  %2 = ptx.add %0, %1 {type = #ptx.type<s64>} : i64
  %3 = ptx.ld %2 {offset = 8 : i64, space = #ptx.space<param>, type = #ptx.type<u32>} : i64 -> i32
  ptx.st %1, %3 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  ptx.ret
}

// -----

// A device function's parameter has no byval copy: its address is an
// alloca's on every target.
// CHECK-LABEL: llvm.func internal @helper
// CHECK: %[[SLOT:.*]] = llvm.alloca %{{.*}} x !llvm.array<16 x i8> {alignment = 8 : i64}
// CHECK: llvm.store %arg0, %{{.*}} : !llvm.array<16 x i8>, !llvm.ptr<5>
// CHECK: llvm.ptrtoint %{{.*}} : !llvm.ptr<5> to i64
func.func @helper(%arg0: !llvm.array<16 x i8>) -> i64 {
  %0 = ptx.param_addr %arg0 : !llvm.array<16 x i8> -> i64
  ptx.ret %0 : i64
}
