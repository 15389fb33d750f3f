// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=spirv local-address-space=0" | FileCheck %s --check-prefix=SPV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=amdgpu wave-size=64" | FileCheck %s --check-prefix=GFX9

// A ballot is a convergent sub_group_non_uniform_reduce_or of the lane's bit
// on SPIR-V (Intel's CPU runtime aborts on sub_group_ballot in a kernel it
// does not vectorize), vote.ballot.sync on NVPTX and the lane's half of the
// 64-bit ballot on wave64 AMD chips.
// SPV: llvm.func spir_funccc @_Z31sub_group_non_uniform_reduce_orj(i32) -> i32 attributes {convergent}
// SPV-LABEL: gpu.func @ballot
// SPV: %[[LANE:.*]] = arith.index_castui %{{.*}} : index to i32
// SPV: %[[PRED:.*]] = arith.extui %arg0 : i1 to i32
// SPV: %[[BIT:.*]] = arith.shli %[[PRED]], %[[LANE]] : i32
// SPV: llvm.call spir_funccc @_Z31sub_group_non_uniform_reduce_orj(%[[BIT]]) {convergent} : (i32) -> i32
// NV-LABEL: gpu.func @ballot
// NV: llvm.call_intrinsic "llvm.nvvm.vote.ballot.sync"
// GFX9-LABEL: gpu.func @ballot
// GFX9: llvm.call_intrinsic "llvm.amdgcn.ballot.i64"
// GFX9: arith.andi %{{.*}}, %c32_i64
func.func @ballot(%p: i1, %m: i32) attributes {ptx.entry} {
  %0 = ptx.vote_sync %p, %m {mode = #ptx.vote<ballot>} : i32
  ptx.ret
}

// -----

// %laneid is the lane modulo 32 on wave64.
// GFX9-LABEL: gpu.func @laneid
// GFX9: gpu.lane_id
// GFX9: arith.andi %{{.*}}, %c31_i32
func.func @laneid() attributes {ptx.entry} {
  %0 = ptx.sreg <laneid> : i32
  ptx.ret
}

// -----

// Fences carry the target's name of the PTX scope.
// SPV-LABEL: gpu.func @fences
// SPV: llvm.fence syncscope("workgroup") seq_cst
// NV-LABEL: gpu.func @fences
// NV: llvm.fence syncscope("device") acq_rel
func.func @fences() attributes {ptx.entry} {
  ptx.fence {sem = #ptx.sem<sc>, scope = #ptx.scope<cta>}
  ptx.fence {sem = #ptx.sem<acq_rel>, scope = #ptx.scope<gpu>}
  ptx.ret
}

// -----

// redux.sync off NVPTX folds all 32 lanes' operands in lane order; a lane
// outside membermask, or not executing the redux (not in the ballot of
// true), contributes the identity (all ones for min.u32).
// SPV-LABEL: gpu.func @redux
// SPV: %[[ACTIVE:.*]] = llvm.call spir_funccc @_Z31sub_group_non_uniform_reduce_orj
// SPV: %[[COUNTED:.*]] = arith.andi %arg1, %[[ACTIVE]] : i32
// SPV: %[[NONE:.*]] = arith.constant -1 : i32
// SPV: %[[READ:.*]] = llvm.call spir_funccc @_Z17sub_group_shuffleij(%arg0, %[[LANE0:.*]]) {convergent}
// SPV: arith.shrui %[[COUNTED]], %[[LANE0]] : i32
// SPV: %[[OTHER:.*]] = arith.select %{{.*}}, %[[READ]], %[[NONE]] : i32
// SPV: arith.minui %[[NONE]], %[[OTHER]] : i32
// SPV-COUNT-31: llvm.call spir_funccc @_Z17sub_group_shuffleij
// NV-LABEL: gpu.func @redux
// NV: llvm.call_intrinsic "llvm.nvvm.redux.sync.umin"
func.func @redux(%a: i32, %m: i32) attributes {ptx.entry} {
  %0 = ptx.redux_sync %a, %m {op = #ptx.atomop<min>, type = #ptx.type<u32>} : i32
  ptx.ret
}

// -----

// A .func becomes an internal llvm.func; call and ret follow. Both are
// convergent: a device function may run a warp collective.
// SPV: llvm.func internal @inc(%{{.*}}: i32) -> i32 attributes {convergent}
// SPV: llvm.return %{{.*}} : i32
// SPV-LABEL: gpu.func @caller
// SPV: llvm.call @inc(%{{.*}}) {convergent} : (i32) -> i32
func.func @inc(%a: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %0 = ptx.add %a, %c1 {type = #ptx.type<s32>} : i32
  ptx.ret %0 : i32
}
func.func @caller(%a: i32) attributes {ptx.entry} {
  %0 = ptx.call @inc(%a) {uni} : (i32) -> i32
  ptx.ret
}

// -----

// .local variables are allocas of one byte array in the private address
// space (SPIR-V has no array-sized allocas). NVPTX allocates in the generic
// space and casts to local (an addrspace(5) alloca became a generic %SP
// address in LLVM 22 and faulted on the H200).
// SPV-LABEL: gpu.func @depot
// SPV: llvm.alloca %{{.*}} x !llvm.array<16 x i8> {alignment = 8 : i64} : (i64) -> !llvm.ptr{{$}}
// NV-LABEL: gpu.func @depot
// NV: %[[A:.*]] = llvm.alloca %{{.*}} x !llvm.array<16 x i8> {alignment = 8 : i64} : (i64) -> !llvm.ptr{{$}}
// NV: %[[L:.*]] = llvm.addrspacecast %[[A]] : !llvm.ptr to !llvm.ptr<5>
// NV: llvm.ptrtoint %[[L]] : !llvm.ptr<5> to i64
// GFX9-LABEL: gpu.func @depot
// GFX9: llvm.alloca %{{.*}} x !llvm.array<16 x i8> {alignment = 8 : i64} : (i64) -> !llvm.ptr<5>
func.func @depot() attributes {ptx.entry} {
  %0 = ptx.local_var {size = 16, align = 8} : i64
  ptx.ret
}

// -----

// shfl.sync with a run-time c: NVIDIA's instruction on NVPTX; elsewhere the
// ISA's clamp c[4:0] and segment mask c[12:8], and up compares signed (the
// source lane lane - b may be negative); a source lane that does not execute
// the shfl (not in the ballot of true) reads as 0. Wave64 AMD chips read the
// lane of the caller's half-wave with ds_bpermute.
// SPV-LABEL: gpu.func @shfl_up_runtime_c
// SPV-SAME: (%[[A:.*]]: i32, %[[B:.*]]: i32, %[[C:.*]]: i32, %{{.*}}: i32)
// SPV: %[[LANE:.*]] = arith.index_castui %{{.*}} : index to i32
// SPV: %[[BV:.*]] = arith.andi %[[B]], %{{.*}} : i32
// SPV: %[[CV:.*]] = arith.andi %[[C]], %{{.*}} : i32
// SPV: %[[SH:.*]] = arith.shrui %[[C]], %c8_i32 : i32
// SPV: %[[SEG:.*]] = arith.andi %[[SH]], %{{.*}} : i32
// SPV: %[[MIN:.*]] = arith.andi %[[LANE]], %[[SEG]] : i32
// SPV: %[[MAX:.*]] = arith.ori %[[MIN]], %{{.*}} : i32
// SPV: %[[J:.*]] = arith.subi %[[LANE]], %[[BV]] : i32
// SPV: %[[P:.*]] = arith.cmpi sge, %[[J]], %[[MAX]] : i32
// SPV: %[[SRC:.*]] = arith.select %[[P]], %[[J]], %[[LANE]] : i32
// SPV: %[[ACTIVE:.*]] = llvm.call spir_funccc @_Z31sub_group_non_uniform_reduce_orj
// SPV: %[[ZERO:.*]] = arith.constant 0 : i32
// SPV: %[[READ:.*]] = llvm.call spir_funccc @_Z17sub_group_shuffleij(%[[A]], %[[SRC]]) {convergent} : (i32, i32) -> i32
// SPV: %[[SHIFTED:.*]] = arith.shrui %[[ACTIVE]], %[[SRC]] : i32
// SPV: %[[BIT:.*]] = arith.andi %[[SHIFTED]], %{{.*}} : i32
// SPV: %[[EXECUTES:.*]] = arith.cmpi ne, %[[BIT]], %{{.*}} : i32
// SPV: arith.select %[[EXECUTES]], %[[READ]], %[[ZERO]] : i32
// NV-LABEL: gpu.func @shfl_up_runtime_c
// NV: %[[R:.*]] = llvm.call_intrinsic "llvm.nvvm.shfl.sync.up.i32p"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (i32, i32, i32, i32) -> !llvm.struct<(i32, i1)>
// NV: llvm.extractvalue %[[R]][0]
// NV: llvm.extractvalue %[[R]][1]
// GFX9-LABEL: gpu.func @shfl_up_runtime_c
// GFX9: %[[SRC:.*]] = arith.select
// GFX9: %[[WAVE:.*]] = arith.index_castui %{{.*}} : index to i32
// GFX9: %[[HALF:.*]] = arith.andi %[[WAVE]], %c-32_i32 : i32
// GFX9: %[[LANE:.*]] = arith.ori %[[HALF]], %[[SRC]] : i32
// GFX9: %[[ADDR:.*]] = arith.shli %[[LANE]], %c2_i32 : i32
// GFX9: llvm.call_intrinsic "llvm.amdgcn.ds.bpermute"(%[[ADDR]], %{{.*}}) : (i32, i32) -> i32
func.func @shfl_up_runtime_c(%a: i32, %b: i32, %c: i32, %m: i32) attributes {ptx.entry} {
  %d, %p = ptx.shfl_sync %a, %b, %c, %m {mode = #ptx.shfl<up>} : i32
  ptx.ret
}

// -----

// shfl.sync.idx reads lane minLane | (b[4:0] & ~segmask) of its segment.
// SPV-LABEL: gpu.func @shfl_idx_segment
// SPV: %[[NOTSEG:.*]] = arith.xori %{{.*}}, %c-1_i32{{.*}} : i32
// SPV: %[[MIN:.*]] = arith.andi %{{.*}}, %{{.*}} : i32
// SPV: %[[MAX:.*]] = arith.ori %[[MIN]], %{{.*}} : i32
// SPV: %[[OFF:.*]] = arith.andi %{{.*}}, %[[NOTSEG]] : i32
// SPV: %[[J:.*]] = arith.ori %[[MIN]], %[[OFF]] : i32
// SPV: arith.cmpi sle, %[[J]], %[[MAX]] : i32
// NV-LABEL: gpu.func @shfl_idx_segment
// NV: llvm.call_intrinsic "llvm.nvvm.shfl.sync.idx.i32p"
func.func @shfl_idx_segment(%a: i32, %b: i32) attributes {ptx.entry} {
  %c = arith.constant 0x181f : i32
  %m = arith.constant -1 : i32
  %d, %p = ptx.shfl_sync %a, %b, %c, %m {mode = #ptx.shfl<idx>} : i32
  ptx.ret
}

// -----

// match.sync off NVPTX reads each lane of the warp with an indexed shuffle;
// on wave64 that is the lane in the caller's half-wave (upstream's
// gpu.shuffle idx would read the lower half from the upper one).
// GFX9-LABEL: gpu.func @match_any
// GFX9: %[[WAVE:.*]] = arith.index_castui %{{.*}} : index to i32
// GFX9: %[[HALF:.*]] = arith.andi %[[WAVE]], %c-32_i32 : i32
// GFX9: %[[LANE:.*]] = arith.ori %[[HALF]], %{{.*}} : i32
// GFX9: %[[ADDR:.*]] = arith.shli %[[LANE]], %c2_i32 : i32
// GFX9: llvm.call_intrinsic "llvm.amdgcn.ds.bpermute"(%[[ADDR]], %{{.*}}) : (i32, i32) -> i32
// GFX9-NOT: gpu.shuffle
// SPIR-V reads the lanes with sub_group_shuffle and counts only those of
// membermask that execute the match.
// SPV-LABEL: gpu.func @match_any
// SPV: %[[ACTIVE:.*]] = llvm.call spir_funccc @_Z31sub_group_non_uniform_reduce_orj
// SPV: %[[MASK:.*]] = arith.andi %arg1, %[[ACTIVE]] : i32
// SPV-COUNT-32: llvm.call spir_funccc @_Z17sub_group_shuffleij
// SPV: arith.andi %{{.*}}, %[[MASK]] : i32
func.func @match_any(%a: i32, %m: i32) attributes {ptx.entry} {
  %0, %1 = ptx.match_sync %a, %m {mode = #ptx.match<any>} : i32
  ptx.ret
}

// -----

// vote.all and vote.uni ask the lanes of membermask that execute the vote: a
// full mask in a short last warp names lanes that do not exist. NVPTX has
// NVIDIA's own vote.
// SPV-LABEL: gpu.func @vote_all
// SPV: %[[BITS:.*]] = llvm.call spir_funccc @_Z31sub_group_non_uniform_reduce_orj
// SPV: %[[VOTES:.*]] = arith.andi %[[BITS]], %arg1 : i32
// SPV: %[[ACTIVE:.*]] = llvm.call spir_funccc @_Z31sub_group_non_uniform_reduce_orj
// SPV: %[[MASK:.*]] = arith.andi %arg1, %[[ACTIVE]] : i32
// SPV: arith.cmpi eq, %[[VOTES]], %[[MASK]] : i32
// NV-LABEL: gpu.func @vote_all
// NV: llvm.call_intrinsic "llvm.nvvm.vote.all.sync"(%arg1, %arg0) : (i32, i1) -> i1
func.func @vote_all(%p: i1, %m: i32) attributes {ptx.entry} {
  %0 = ptx.vote_sync %p, %m {mode = #ptx.vote<all>} : i1
  ptx.ret
}

// -----

// bar.warp.sync is a sub-group barrier on SPIR-V (OpControlBarrier at
// sub-group scope, acquire-release on workgroup and global memory): the
// lanes of a sub-group need not run in lock step.
// SPV-LABEL: gpu.func @warp_sync
// SPV: llvm.call spir_funccc @_Z22__spirv_ControlBarrieriii(%{{.*}}, %{{.*}}, %c776_i32) {convergent}
// NV-LABEL: gpu.func @warp_sync
// NV: llvm.call_intrinsic "llvm.nvvm.bar.warp.sync"
func.func @warp_sync(%m: i32) attributes {ptx.entry} {
  ptx.bar_warp_sync %m
  ptx.ret
}

// -----

// A shuffle in a device function is a call like any other there (upstream's
// gpu.shuffle converts only inside a gpu.func).
// SPV-LABEL: llvm.func internal @lane_below
// SPV: llvm.call spir_funccc @_Z17sub_group_shuffleij
func.func @lane_below(%a: i32) -> i32 {
  %b = arith.constant 1 : i32
  %c = arith.constant 0 : i32
  %m = arith.constant -1 : i32
  %d, %p = ptx.shfl_sync %a, %b, %c, %m {mode = #ptx.shfl<up>} : i32
  ptx.ret %d : i32
}

// -----

// A kernel using sub-groups (here %laneid) first checks they are 32 wide:
// Intel's CPU runtime runs a kernel it cannot vectorize with one-lane
// sub-groups, and the launch must fail (trap word 3) rather than compute
// with them. A kernel without warp operations does not check.
// SPV-LABEL: gpu.func @reads_laneid
// SPV: %[[WIDEST:.*]] = llvm.call spir_funccc @_Z22get_max_sub_group_sizev() : () -> i32
// SPV: %[[NARROW:.*]] = arith.cmpi ult, %[[WIDEST]], %c32_i32 : i32
// SPV: cf.cond_br %[[NARROW]], ^[[LEAVE:[a-z0-9]*]], ^[[BODY:[a-z0-9]*]]
// SPV: ^[[LEAVE]]:
// SPV: llvm.atomicrmw xchg %{{.*}}, %c3_i32 monotonic
// SPV-NEXT: gpu.return
// SPV: ^[[BODY]]:
// SPV: gpu.lane_id
// SPV-LABEL: gpu.func @no_warp_ops
// SPV-NOT: get_max_sub_group_size
// SPV: gpu.return
func.func @reads_laneid() attributes {ptx.entry} {
  %0 = ptx.sreg <laneid> : i32
  ptx.ret
}
func.func @no_warp_ops() attributes {ptx.entry} {
  ptx.ret
}
