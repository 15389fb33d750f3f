// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std | FileCheck %s
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="shared-window=kernel-arg subgroup-size=32 generic-address-space=4" | FileCheck %s --check-prefix=ARG

// Special registers become gpu index ops; the kernel moves into gpu.module.
// CHECK: gpu.module @ptx
// CHECK-LABEL: gpu.func @special_registers
// CHECK-SAME: kernel
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: arith.index_castui %[[TID]] : index to i32
// CHECK: gpu.block_dim y
// CHECK: gpu.block_id z
// CHECK: gpu.grid_dim x
// A kernel that uses no sub-group requires no sub-group size (ARG).
// ARG-LABEL: gpu.func @special_registers(%{{.*}}: !llvm.ptr<3>) kernel
// ARG-NOT: intel_reqd_sub_group_size
// ARG: gpu.thread_id x
func.func @special_registers() attributes {ptx.entry} {
  %0 = ptx.sreg <tid.x> : i32
  %1 = ptx.sreg <ntid.y> : i32
  %2 = ptx.sreg <ctaid.z> : i32
  %3 = ptx.sreg <nctaid.x> : i32
  ptx.ret
}

// -----

// Global accesses are integer addresses turned into addrspace(1) pointers;
// the offset of [r+16] is added first and .v4 is one vector load.
// CHECK-LABEL: gpu.func @global_memory
// CHECK: %[[ADDR:.*]] = arith.addi %{{.*}}, %c16_i64 : i64
// CHECK: %[[PTR:.*]] = llvm.inttoptr %[[ADDR]] : i64 to !llvm.ptr<1>
// CHECK: llvm.load %[[PTR]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
// CHECK: llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<1>
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// Generic accesses use the generic address space of the target.
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> i32
// ARG-LABEL: gpu.func @global_memory
// ARG: llvm.load %{{.*}} : !llvm.ptr<4> -> i32
func.func @global_memory(%p: i64) attributes {ptx.entry} {
  %v:4 = ptx.ld %p {space = #ptx.space<global>, type = #ptx.type<f32>, vec = 4, offset = 16} : i64 -> f32, f32, f32, f32
  ptx.st %p, %v#2 {space = #ptx.space<global>, type = #ptx.type<f32>} : i64, f32
  %g = ptx.ld %p {type = #ptx.type<u32>} : i64 -> i32
  ptx.ret
}

// -----

// Shared variables are laid out in one window per kernel; their addresses
// are offsets in it. The window is a zero-sized external array, or (ARG)
// the trailing kernel argument.
ptx.var @a {space = #ptx.space<shared>, type = #ptx.type<b8>, count = 6, align = 1}
ptx.var @b {space = #ptx.space<shared>, type = #ptx.type<f32>, count = 4, align = 8}
ptx.var @dyn {space = #ptx.space<shared>, type = #ptx.type<b8>, count = 0, align = 16, linkage = "extern"}
// CHECK: llvm.mlir.global external @__zmlir_shared_window() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: gpu.func @shared_layout
// CHECK-SAME: zmlir.static_shared_bytes = 32 : i64
// CHECK: %[[WINDOW:.*]] = llvm.mlir.addressof @__zmlir_shared_window : !llvm.ptr<3>
// CHECK-DAG: arith.constant 8 : i32
// CHECK-DAG: arith.constant 32 : i32
// CHECK-COUNT-2: llvm.getelementptr %[[WINDOW]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// ARG-LABEL: gpu.func @shared_layout(
// ARG-SAME: %[[WIN:.*]]: !llvm.ptr<3>)
// ARG: llvm.getelementptr %[[WIN]]
func.func @shared_layout() attributes {ptx.entry} {
  %x = arith.constant 1.0 : f32
  %a = ptx.addr_of @a : i32
  %b = ptx.addr_of @b : i32
  %d = ptx.addr_of @dyn : i32
  ptx.st %b, %x {space = #ptx.space<shared>, type = #ptx.type<f32>} : i32, f32
  ptx.st %d, %x {space = #ptx.space<shared>, type = #ptx.type<f32>} : i32, f32
  ptx.ret
}

// -----

// Integer division never reaches LLVM's undefined cases: the divisor 0 is
// replaced by 1 and the result by all ones.
// CHECK-LABEL: gpu.func @divide
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %[[B:.*]], %c0_i32
// CHECK: %[[SAFE:.*]] = arith.select %[[ZERO]], %c1_i32, %[[B]]
// CHECK: %[[Q:.*]] = arith.divui %{{.*}}, %[[SAFE]]
// CHECK: arith.select %[[ZERO]], %c-1_i32, %[[Q]]
func.func @divide(%a: i32, %b: i32) attributes {ptx.entry} {
  %0 = ptx.div %a, %b {type = #ptx.type<u32>} : i32
  ptx.ret
}

// -----

// Shifts by the width or more give 0 (shl, shr.u) or the sign (shr.s).
// CHECK-LABEL: gpu.func @shifts
// CHECK: %[[AMT:.*]] = arith.extui %{{.*}} : i32 to i64
// CHECK: %[[OVER:.*]] = arith.cmpi uge, %[[AMT]], %c64_i64
// CHECK: %[[SHL:.*]] = arith.shli %{{.*}}, %[[AMT]] : i64
// CHECK: arith.select %[[OVER]], %c0_i64, %[[SHL]]
// CHECK: %[[CLAMP:.*]] = arith.minui %{{.*}}, %c31_i32
// CHECK: arith.shrsi %{{.*}}, %[[CLAMP]] : i32
func.func @shifts(%a: i64, %b: i32) attributes {ptx.entry} {
  %0 = ptx.shl %a, %b {type = #ptx.type<b64>} : i64
  %1 = ptx.shr %b, %b {type = #ptx.type<s32>} : i32
  ptx.ret
}

// -----

// Float to integer conversion saturates and maps NaN to 0.
// CHECK-LABEL: gpu.func @float_to_int
// CHECK: %[[T:.*]] = math.trunc %{{.*}} : f32
// CHECK: %[[I:.*]] = arith.fptosi %[[T]] : f32 to i32
// CHECK: arith.cmpf olt, %[[T]], %cst
// CHECK: arith.cmpf oge, %[[T]], %cst_0
// CHECK: arith.cmpf uno, %[[T]], %[[T]]
func.func @float_to_int(%f: f32) attributes {ptx.entry} {
  %0 = ptx.cvt %f {type = #ptx.type<s32>, src_type = #ptx.type<f32>, rnd = #ptx.rnd<rzi>} : f32 -> i32
  ptx.ret
}

// -----

// setp on floats maps ltu to the unordered predicate; the complement is q.
// CHECK-LABEL: gpu.func @compare
// CHECK: %[[P:.*]] = arith.cmpf ult, %{{.*}}, %{{.*}} : f32
// CHECK: arith.xori %[[P]], %true : i1
func.func @compare(%a: f32, %b: f32) attributes {ptx.entry} {
  %p, %q = ptx.setp %a, %b {cmp = #ptx.cmp<ltu>, type = #ptx.type<f32>} : f32
  ptx.ret
}

// -----

// shfl.sync.down: the source lane is lane + b[4:0], read with an indexed
// shuffle when it is at most maxLane, else the lane reads its own value.
// CHECK-LABEL: gpu.func @shuffle
// CHECK-SAME: (%[[A:.*]]: i32)
// CHECK: %[[LANE:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[MAX:.*]] = arith.ori
// CHECK: %[[J:.*]] = arith.addi %[[LANE]], %{{.*}} : i32
// CHECK: %[[P:.*]] = arith.cmpi sle, %[[J]], %[[MAX]] : i32
// CHECK: %[[SRC:.*]] = arith.select %[[P]], %[[J]], %[[LANE]] : i32
// CHECK: gpu.shuffle idx %[[A]], %[[SRC]], %c32_i32 : i32
// A kernel that shuffles requires 32-wide sub-groups (ARG).
// ARG-LABEL: gpu.func @shuffle
// ARG-SAME: intel_reqd_sub_group_size = 32 : i32
func.func @shuffle(%a: i32) attributes {ptx.entry} {
  %c1 = arith.constant 1 : i32
  %c31 = arith.constant 31 : i32
  %m = arith.constant -1 : i32
  %d, %p = ptx.shfl_sync %a, %c1, %c31, %m {mode = #ptx.shfl<down>} : i32
  ptx.ret
}

// -----

// atom.global.add is a relaxed atomicrmw on the global pointer.
// CHECK-LABEL: gpu.func @atomic_add
// CHECK: llvm.atomicrmw add %{{.*}}, %{{.*}} monotonic : !llvm.ptr<1>, i32
// CHECK: llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} acq_rel acquire : !llvm.ptr<1>, i32
func.func @atomic_add(%p: i64, %v: i32) attributes {ptx.entry} {
  %0 = ptx.atom %p, %v {op = #ptx.atomop<add>, type = #ptx.type<u32>, space = #ptx.space<global>} : (i64, i32) -> i32
  %1 = ptx.atom %p, %v, %0 {op = #ptx.atomop<cas>, type = #ptx.type<b32>, space = #ptx.space<global>, sem = #ptx.sem<acq_rel>} : (i64, i32, i32) -> i32
  ptx.ret
}

// -----

// A negated guard swaps the successors; bar.sync 0 is a workgroup barrier.
// CHECK-LABEL: gpu.func @control_flow
// CHECK: gpu.barrier
// CHECK: cf.cond_br %{{.*}}, ^[[FALL:.*]], ^[[TAKEN:.*]](%{{.*}} : i32)
// CHECK: gpu.return
func.func @control_flow(%p: i1, %a: i32) attributes {ptx.entry} {
  %c0 = arith.constant 0 : i32
  ptx.bar_sync %c0 {aligned}
  ptx.cond_bra %p, ^taken(%a : i32), ^fall {negated}
^taken(%x: i32):
  ptx.bra ^fall
^fall:
  ptx.ret
}
