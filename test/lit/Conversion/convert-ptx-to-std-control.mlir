// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=spirv local-address-space=0" | FileCheck %s --check-prefix=SPV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=amdgpu wave-size=64" | FileCheck %s --check-prefix=GFX9

// A counted barrier is NVIDIA's on NVPTX; elsewhere the work-group barrier,
// after a run-time check that the count is the whole CTA (else a trap).
// SPV-LABEL: gpu.func @bar_counted
// SPV: %[[N:.*]] = arith.index_castui
// SPV: %[[WHOLE:.*]] = arith.cmpi eq, %arg0, %[[N]] : i32
// SPV: cf.cond_br %[[WHOLE]], ^[[OK:.*]], ^[[TRAP:[a-z0-9]*]]
// SPV: ^[[TRAP]]:
// SPV: %[[WORD:.*]] = llvm.mlir.addressof @__zmlir_trap : !llvm.ptr<1>
// SPV-NEXT: llvm.atomicrmw xchg %[[WORD]], %{{.*}} monotonic : !llvm.ptr<1>, i32
// SPV-NEXT: gpu.return
// SPV: ^[[OK]]:
// SPV-NEXT: gpu.barrier
// NV-LABEL: gpu.func @bar_counted
// NV: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.count"(%{{.*}}, %arg0)
// GFX9-LABEL: gpu.func @bar_counted
// GFX9: llvm.call_intrinsic "llvm.trap"
// GFX9: gpu.barrier
func.func @bar_counted(%n: i32) attributes {ptx.entry} {
  %c1 = arith.constant 1 : i32
  ptx.bar_sync %c1, %n {aligned}
  ptx.ret
}

// -----

// A constant count equal to the .reqntid block size is a plain barrier.
// SPV-LABEL: gpu.func @bar_reqntid
// SPV-NOT: cf.cond_br
// SPV: gpu.barrier
// SPV-NEXT: gpu.return
// NV-LABEL: gpu.func @bar_reqntid
// NV: llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.count"
func.func @bar_reqntid() attributes {ptx.entry, ptx.reqntid = array<i64: 64, 2, 1>} {
  %c1 = arith.constant 1 : i32
  %c128 = arith.constant 128 : i32
  ptx.bar_sync %c1, %c128
  ptx.ret
}

// -----

// bar.red off NVPTX: the counter at the start of the shared window, read
// (an atomic add of 0: no poll) before the first barrier, grown by 2^16 +
// the predicate between the two, read after; .and compares the popc (low
// half) with the arrivals (high half), which leave out exited threads.
// SPV-LABEL: gpu.func @bar_red
// SPV-SAME: zmlir.static_shared_bytes = 16
// SPV: %[[W:.*]] = llvm.mlir.addressof @__zmlir_shared_window
// SPV: %[[BEFORE:.*]] = llvm.atomicrmw add %[[W]], %{{.*}} syncscope("workgroup") acq_rel
// SPV-NEXT: gpu.barrier
// SPV: %[[ONE:.*]] = arith.extui %arg0 : i1 to i32
// SPV-NEXT: %[[ARRIVAL:.*]] = arith.addi %[[ONE]], %c65536_i32 : i32
// SPV-NEXT: llvm.atomicrmw add %[[W]], %[[ARRIVAL]] syncscope("workgroup") monotonic
// SPV-NEXT: gpu.barrier
// SPV: %[[AFTER:.*]] = llvm.atomicrmw add %[[W]], %{{.*}} syncscope("workgroup") acq_rel
// SPV-NEXT: %[[GROWN:.*]] = arith.subi %[[AFTER]], %[[BEFORE]] : i32
// SPV: arith.andi %[[GROWN]], %c65535_i32 : i32
// SPV: %[[GROWN2:.*]] = arith.subi
// SPV: %[[POPC2:.*]] = arith.andi %[[GROWN2]]
// SPV: %[[ARRIVALS:.*]] = arith.shrui %[[GROWN2]], %c16_i32 : i32
// SPV-NEXT: arith.cmpi eq, %[[POPC2]], %[[ARRIVALS]] : i32
// NV-LABEL: gpu.func @bar_red
// NV-SAME: zmlir.static_shared_bytes = 0
// NV: llvm.call_intrinsic "llvm.nvvm.barrier.cta.red.popc.aligned.all"(%{{.*}}, %arg0) : (i32, i1) -> i32
// NV: llvm.call_intrinsic "llvm.nvvm.barrier.cta.red.and.all"(%{{.*}}, %arg0) : (i32, i1) -> i1
func.func @bar_red(%p: i1) attributes {ptx.entry} {
  %c0 = arith.constant 0 : i32
  %0 = ptx.bar_red %p, %c0 {aligned, mode = #ptx.barred<popc>} : i32
  %1 = ptx.bar_red %p, %c0 {mode = #ptx.barred<and>} : i1
  ptx.ret
}

// -----

// elect.sync: the lowest set bit of the ballot within membermask.
// SPV-LABEL: gpu.func @elect
// SPV: llvm.call spir_funccc @_Z31sub_group_non_uniform_reduce_orj
// SPV: %[[BITS:.*]] = arith.andi %{{.*}}, %arg0 : i32
// SPV: %[[LEADER:.*]] = math.cttz %[[BITS]] : i32
// SPV: arith.cmpi eq, %{{.*}}, %[[LEADER]] : i32
// NV-LABEL: gpu.func @elect
// NV: llvm.call_intrinsic "llvm.nvvm.vote.ballot.sync"(%arg0, %{{.*}})
// NV: math.cttz
// GFX9-LABEL: gpu.func @elect
// GFX9: llvm.call_intrinsic "llvm.amdgcn.ballot.i64"
// GFX9: math.cttz
func.func @elect(%m: i32) attributes {ptx.entry} {
  %d, %p = ptx.elect_sync %m
  ptx.ret
}

// -----

// atom.add.noftz.f16 is a CAS loop on the 32-bit word holding it, with the
// op's ordering and scope; NVPTX has it natively, as inline PTX with the
// op's own qualifiers when they are not relaxed .gpu (LLVM 22 drops an
// atomicrmw's ordering and scope).
// SPV-LABEL: gpu.func @atom_f16
// SPV: %[[WORD:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<1>
// SPV: llvm.load %[[WORD]] atomic syncscope("device") monotonic
// SPV: ^[[LOOP:.*]](%[[SEEN:.*]]: i32):
// SPV: arith.addf %{{.*}}, %{{.*}} : f32
// SPV: llvm.cmpxchg %[[WORD]], %[[SEEN]], %{{.*}} syncscope("device") acq_rel acquire : !llvm.ptr<1>, i32
// SPV: cf.cond_br %{{.*}}, ^{{.*}}, ^[[LOOP]](%{{.*}} : i32)
// NV-LABEL: gpu.func @atom_f16
// NV: %[[A:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr<1> to i64
// NV: llvm.inline_asm has_side_effects "atom.acq_rel.gpu.global.add.noftz.f16 $0, [$1], $2;", "=h,l,h,~{memory}" %[[A]], %{{.*}} : (i64, i16) -> i16
// GFX9-LABEL: gpu.func @atom_f16
// GFX9: llvm.cmpxchg %{{.*}} syncscope("agent") acq_rel acquire : !llvm.ptr<1>, i32
func.func @atom_f16(%a: i64, %b: f16) attributes {ptx.entry} {
  %0 = ptx.atom %a, %b {op = #ptx.atomop<add>, type = #ptx.type<f16>, space = #ptx.space<global>, sem = #ptx.sem<acq_rel>, scope = #ptx.scope<gpu>} : (i64, f16) -> f16
  ptx.ret
}

// -----

// bf16x2 adds both halves in the loop; NVPTX's is inline PTX in the op's
// state space (LLVM has no atomicrmw on the pairs), with its qualifiers.
// SPV-LABEL: gpu.func @atom_bf16x2
// SPV-COUNT-2: arith.addf
// SPV: llvm.cmpxchg %{{.*}} monotonic monotonic : !llvm.ptr<1>, i32
// SPV-COUNT-2: arith.addf
// SPV: llvm.cmpxchg %{{.*}} syncscope("device") release monotonic : !llvm.ptr<1>, i32
// NV-LABEL: gpu.func @atom_bf16x2
// NV: %[[A:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr<1> to i64
// NV: llvm.inline_asm has_side_effects "atom.global.add.noftz.bf16x2 $0, [$1], $2;", "=r,l,r,~{memory}" %[[A]], %arg1
// NV: llvm.inline_asm has_side_effects "red.release.gpu.global.add.noftz.bf16x2 [$0], $1;", "l,r,~{memory}"
func.func @atom_bf16x2(%a: i64, %b: i32) attributes {ptx.entry} {
  %0 = ptx.atom %a, %b {op = #ptx.atomop<add>, type = #ptx.type<bf16x2>, space = #ptx.space<global>} : (i64, i32) -> i32
  ptx.red %a, %b {op = #ptx.atomop<add>, type = #ptx.type<bf16x2>, space = #ptx.space<global>, sem = #ptx.sem<release>, scope = #ptx.scope<gpu>} : i64, i32
  ptx.ret
}

// -----

// atom.cas.b16 swaps its half of the word off NVPTX; NVPTX's is inline PTX
// (LLVM 22 turns an i16 cmpxchg into a 32-bit loop).
// SPV-LABEL: gpu.func @atom_cas_b16
// SPV: %[[OLD:.*]] = arith.trunci %{{.*}} : i32 to i16
// SPV: %[[EQ:.*]] = arith.cmpi eq, %[[OLD]], %arg1 : i16
// SPV: arith.select %[[EQ]], %arg2, %[[OLD]] : i16
// SPV: llvm.cmpxchg %{{.*}} : !llvm.ptr<1>, i32
// NV-LABEL: gpu.func @atom_cas_b16
// NV: llvm.inline_asm has_side_effects "atom.global.cas.b16 $0, [$1], $2, $3;", "=h,l,h,h,~{memory}" %{{.*}}, %arg1, %arg2 : (i64, i16, i16) -> i16
func.func @atom_cas_b16(%a: i64, %b: i16, %c: i16) attributes {ptx.entry} {
  %0 = ptx.atom %a, %b, %c {op = #ptx.atomop<cas>, type = #ptx.type<b16>, space = #ptx.space<global>} : (i64, i16, i16) -> i16
  ptx.ret
}

// -----

// %nwarpid is the CTA's warp count, %smid 0 and %nsmid 1 off NVPTX.
// SPV-LABEL: gpu.func @sregs
// SPV: %[[C31:.*]] = arith.constant 31 : index
// SPV: %[[UP:.*]] = arith.addi %{{.*}}, %[[C31]] : index
// SPV: arith.divui %[[UP]], %{{.*}} : index
// SPV: arith.constant 0 : i32
// SPV: arith.constant 1 : i32
// SPV: arith.constant 0 : i64
// NV-LABEL: gpu.func @sregs
// NV: llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.nwarpid"
// NV: llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.smid"
// NV: llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.nsmid"
// NV: llvm.inline_asm "mov.u64 $0, %gridid;", "=l"
func.func @sregs() attributes {ptx.entry} {
  %0 = ptx.sreg <nwarpid> : i32
  %1 = ptx.sreg <smid> : i32
  %2 = ptx.sreg <nsmid> : i32
  %3 = ptx.sreg <gridid> : i64
  ptx.ret
}

// -----

// Function addresses are kFuncAddressBase + the index of the function among
// the address-taken ones by name; an indirect call switches over those of
// its signature and traps on any other value.
// SPV-LABEL: gpu.func @indirect
// SPV-DAG: %[[NEGATE:.*]] = arith.constant 8821707245088669696 : i64
// SPV-DAG: %[[TWICE:.*]] = arith.constant 8821707245088669697 : i64
// SPV: %[[F:.*]] = arith.select %arg1, %[[TWICE]], %[[NEGATE]] : i64
// SPV: cf.switch %[[F]] : i64, [
// SPV-NEXT: default: ^[[BAD:[a-z0-9]*]],
// SPV-NEXT: 8821707245088669696: ^[[N:[a-z0-9]*]],
// SPV-NEXT: 8821707245088669697: ^[[T:[a-z0-9]*]]
// SPV: ^[[N]]:
// SPV-NEXT: %[[R1:.*]] = llvm.call @negate(%arg0) {convergent} : (i32) -> i32
// SPV: cf.br ^[[DONE:[a-z0-9]*]](%[[R1]] : i32)
// SPV: ^[[T]]:
// SPV-NEXT: %[[R2:.*]] = llvm.call @twice(%arg0) {convergent} : (i32) -> i32
// SPV: cf.br ^[[DONE]](%[[R2]] : i32)
// SPV: ^[[BAD]]:
// SPV: llvm.atomicrmw xchg
// SPV-NEXT: gpu.return
// NV-LABEL: gpu.func @indirect
// NV: cf.switch
// NV: llvm.call_intrinsic "llvm.trap"() : () -> ()
// NV-NEXT: llvm.unreachable
func.func @twice(%a: i32) -> i32 {
  %0 = ptx.add %a, %a {type = #ptx.type<u32>} : i32
  ptx.ret %0 : i32
}
func.func @negate(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = ptx.sub %c0, %a {type = #ptx.type<u32>} : i32
  ptx.ret %0 : i32
}
func.func @indirect(%a: i32, %p: i1) attributes {ptx.entry} {
  %f = ptx.func_addr @twice : i64
  %g = ptx.func_addr @negate : i64
  %h = ptx.selp %f, %g, %p {type = #ptx.type<b64>} : i64
  %0 = ptx.call_indirect %h(%a) : (i64, i32) -> i32
  ptx.ret
}

// -----

// %pm<N>: NVIDIA's counters on NVPTX, 0 elsewhere (%envreg: see
// -control-nvptx and -control-unsupported).
// SPV-LABEL: gpu.func @envreg
// SPV: arith.constant 0 : i64
// NV-LABEL: gpu.func @envreg
// NV: llvm.inline_asm has_side_effects "mov.b64 $0, %pm2_64;", "=l"
// GFX9-LABEL: gpu.func @envreg
// GFX9: arith.constant 0 : i64
func.func @envreg() attributes {ptx.entry} {
  %1 = ptx.inst "mov" [".u64"] () {operand_kinds = ["d", "%pm2_64"]} : () -> (i64)
  ptx.ret
}

// -----

// %envreg1:%envreg2, cooperative groups' grid workspace: NVIDIA's on NVPTX;
// elsewhere the high and low words of the module's __zmlir_grid_workspace,
// which the driver sets around a cooperative launch.
// SPV: llvm.mlir.global external @__zmlir_grid_workspace(0 : i64) {addr_space = 1 : i32, alignment = 8 : i64} : i64
// SPV-LABEL: gpu.func @grid_workspace
// SPV: %[[A:.*]] = llvm.mlir.addressof @__zmlir_grid_workspace : !llvm.ptr<1>
// SPV: %[[W:.*]] = llvm.load %[[A]] {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// SPV: %[[HI:.*]] = arith.shrui %[[W]], %{{.*}} : i64
// SPV: arith.trunci %[[HI]] : i64 to i32
// SPV: %[[W2:.*]] = llvm.load
// SPV: arith.trunci %[[W2]] : i64 to i32
// NV-LABEL: gpu.func @grid_workspace
// NV: llvm.inline_asm has_side_effects "mov.b32 $0, %envreg1;", "=r"
// NV: llvm.inline_asm has_side_effects "mov.b32 $0, %envreg2;", "=r"
// GFX9: llvm.mlir.global external @__zmlir_grid_workspace(0 : i64) {addr_space = 1 : i32, alignment = 8 : i64} : i64
// GFX9-LABEL: gpu.func @grid_workspace
// GFX9: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<1> -> i64
func.func @grid_workspace() attributes {ptx.entry} {
  %0 = ptx.inst "mov" [".u32"] () {operand_kinds = ["d", "%envreg1"]} : () -> (i32)
  %1 = ptx.inst "mov" [".u32"] () {operand_kinds = ["d", "%envreg2"]} : () -> (i32)
  ptx.ret
}

// -----

// nanosleep may sleep for no time at all: it lowers to nothing everywhere.
// SPV-LABEL: gpu.func @nanosleep
// SPV-NOT: ptx.inst
// SPV: gpu.return
// NV-LABEL: gpu.func @nanosleep
// NV-NOT: ptx.inst
// NV: gpu.return
// GFX9-LABEL: gpu.func @nanosleep
// GFX9-NOT: ptx.inst
// GFX9: gpu.return
func.func @nanosleep(%t: i32) attributes {ptx.entry} {
  ptx.inst "nanosleep" [".u32"](%t) {operand_kinds = ["r"]} : (i32) -> ()
  ptx.ret
}

// -----

// griddepcontrol has nothing to wait for or release: the driver starts a
// grid after the work before it on its stream completed (CuPy's Thrust sort).
// SPV-LABEL: gpu.func @griddepcontrol
// SPV-NOT: ptx.inst
// SPV: gpu.return
// NV-LABEL: gpu.func @griddepcontrol
// NV-NOT: ptx.inst
// NV: gpu.return
// GFX9-LABEL: gpu.func @griddepcontrol
// GFX9-NOT: ptx.inst
// GFX9: gpu.return
func.func @griddepcontrol() attributes {ptx.entry} {
  ptx.inst "griddepcontrol" [".launch_dependents"]() {operand_kinds = []} : () -> ()
  ptx.inst "griddepcontrol" [".wait"]() {operand_kinds = []} : () -> ()
  ptx.ret
}

// -----

// atom.add.f32 flushes subnormal inputs and results (a CAS loop off NVPTX);
// SPIR-V has no float or wrapping-increment atomics, so f64 adds and inc are
// loops there too.
// SPV-LABEL: gpu.func @atom_float_inc
// SPV: ^{{.*}}(%[[SEEN:.*]]: i32):
// SPV: %[[X:.*]] = arith.bitcast %[[SEEN]] : i32 to f32
// SPV: arith.andi %{{.*}}, %c2139095040_i32
// SPV: arith.addf
// SPV: llvm.cmpxchg %{{.*}}, %[[SEEN]], %{{.*}} : !llvm.ptr<1>, i32
// SPV: ^{{.*}}(%[[SEEN64:.*]]: i64):
// SPV: arith.addf %{{.*}}, %{{.*}} : f64
// SPV: llvm.cmpxchg %{{.*}}, %[[SEEN64]], %{{.*}} : !llvm.ptr<1>, i64
// SPV: ^{{.*}}(%[[OLD:.*]]: i32):
// SPV: %[[WRAP:.*]] = arith.cmpi uge, %[[OLD]], %arg3 : i32
// SPV: arith.select %[[WRAP]], %c0_i32{{.*}}, %{{.*}} : i32
// NV-LABEL: gpu.func @atom_float_inc
// NV: llvm.atomicrmw fadd %{{.*}}, %arg1 syncscope("device") monotonic : !llvm.ptr<1>, f32
// NV: llvm.atomicrmw fadd %{{.*}}, %arg2 syncscope("device") monotonic : !llvm.ptr<1>, f64
// NV: llvm.atomicrmw uinc_wrap
// GFX9-LABEL: gpu.func @atom_float_inc
// GFX9: llvm.cmpxchg %{{.*}} : !llvm.ptr<1>, i32
// GFX9: llvm.atomicrmw fadd %{{.*}}, %arg2 monotonic : !llvm.ptr<1>, f64
// GFX9: llvm.atomicrmw uinc_wrap
func.func @atom_float_inc(%a: i64, %f: f32, %d: f64, %n: i32) attributes {ptx.entry} {
  %0 = ptx.atom %a, %f {op = #ptx.atomop<add>, type = #ptx.type<f32>, space = #ptx.space<global>} : (i64, f32) -> f32
  %1 = ptx.atom %a, %d {op = #ptx.atomop<add>, type = #ptx.type<f64>, space = #ptx.space<global>} : (i64, f64) -> f64
  %2 = ptx.atom %a, %n {op = #ptx.atomop<inc>, type = #ptx.type<u32>, space = #ptx.space<global>} : (i64, i32) -> i32
  ptx.ret
}

// -----

// On SPIR-V the launcher passes the shared window's size (static + dynamic)
// as the global work offset in x: %total_smem_size is get_global_offset(0)
// in whole 128-byte allocation units, %dynamic_smem_size the offset less the
// kernel's 64 static bytes.
// SPV-LABEL: gpu.func @smem_size
// SPV-SAME: zmlir.static_shared_bytes = 64
// SPV: %[[OFF:.*]] = llvm.call @_Z17get_global_offsetj(%{{.*}}) : (i32) -> i64
// SPV: %[[WIN:.*]] = arith.trunci %[[OFF]] : i64 to i32
// SPV: arith.subi %[[WIN]], %c64_i32 : i32
// SPV: %[[OFF2:.*]] = llvm.call @_Z17get_global_offsetj(%{{.*}}) : (i32) -> i64
// SPV: %[[WIN2:.*]] = arith.trunci %[[OFF2]] : i64 to i32
// SPV-NOT: arith.subi
// SPV: %[[UP:.*]] = arith.addi %[[WIN2]], %c127_i32 : i32
// SPV: arith.andi %[[UP]], %c-128_i32 : i32
// SPV: gpu.return
ptx.var @tile {space = #ptx.space<shared>, type = #ptx.type<b8>, count = 64, align = 4}
func.func @smem_size() attributes {ptx.entry} {
  %a = ptx.addr_of @tile : i32
  %0 = ptx.sreg <dynamic_smem_size> : i32
  %1 = ptx.sreg <total_smem_size> : i32
  ptx.ret
}

// -----

// trap on SPIR-V sets the module's trap word (which the runtime reads after
// the launch) and leaves the function: llvm.return of poison from a device
// function, whose callers check the word after the call and return too.
// SPV: llvm.mlir.global external @__zmlir_trap(0 : i32) {addr_space = 1 : i32, alignment = 4 : i64} : i32
// SPV-LABEL: llvm.func internal @checked
// SPV: cf.cond_br %{{.*}}, ^[[TRAP:[a-z0-9]*]], ^[[OK:[a-z0-9]*]]
// SPV: ^[[TRAP]]:
// SPV: llvm.atomicrmw xchg %{{.*}}, %{{.*}} monotonic : !llvm.ptr<1>, i32
// SPV-NEXT: %[[POISON:.*]] = llvm.mlir.poison : i32
// SPV-NEXT: llvm.return %[[POISON]] : i32
// SPV-LABEL: gpu.func @calls_checked
// SPV: %[[R:.*]] = llvm.call @checked(%arg0) {convergent} : (i32) -> i32
// SPV-NEXT: %[[WORD:.*]] = llvm.mlir.addressof @__zmlir_trap : !llvm.ptr<1>
// SPV-NEXT: %[[W:.*]] = llvm.load %[[WORD]] {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// SPV: %[[SET:.*]] = arith.cmpi ne, %[[W]], %{{.*}} : i32
// SPV-NEXT: cf.cond_br %[[SET]], ^[[LEAVE:[a-z0-9]*]], ^[[CONT:[a-z0-9]*]]
// SPV: ^[[LEAVE]]:
// SPV-NEXT: gpu.return
// SPV: ^[[CONT]]:
// SPV: llvm.store %[[R]]
// NV-LABEL: llvm.func internal @checked
// NV: llvm.call_intrinsic "llvm.trap"() : () -> ()
// NV-NEXT: llvm.unreachable
// NV-LABEL: gpu.func @calls_checked
// NV-NOT: __zmlir_trap
// NV: gpu.return
func.func @checked(%a: i32) -> i32 {
  %c7 = arith.constant 7 : i32
  %p = arith.cmpi eq, %a, %c7 : i32
  cf.cond_br %p, ^trap, ^ok
^trap:
  ptx.trap
^ok:
  ptx.ret %a : i32
}
func.func @calls_checked(%a: i32, %out: i64) attributes {ptx.entry} {
  %0 = ptx.call @checked(%a) : (i32) -> i32
  ptx.st %out, %0 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  ptx.ret
}

// -----

// %clock64 and %clock on SPIR-V: cl_khr_kernel_clock's clock_read_work_group
// (OpReadClockKHR at work-group scope); %clock is its low 32 bits.
// SPV-LABEL: gpu.func @clocks
// SPV: llvm.call @_Z21clock_read_work_groupv() : () -> i64
// SPV: %[[C:.*]] = llvm.call @_Z21clock_read_work_groupv() : () -> i64
// SPV-NEXT: arith.trunci %[[C]] : i64 to i32
// NV-LABEL: gpu.func @clocks
// NV: llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.clock64"
// NV: llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.clock"
func.func @clocks() attributes {ptx.entry} {
  %0 = ptx.sreg <clock64> : i64
  %1 = ptx.sreg <clock> : i32
  ptx.ret
}

// -----

// %globaltimer on SPIR-V: the device-scope clock (OpReadClockKHR, ticks of no
// known unit) through the module's calibration, which starts as the identity
// and which the driver writes after loading: ns0 + d * mult / 2^shift with
// d = ticks - ticks0, its halves scaled apart (no i128). %globaltimer_hi and
// _lo are the halves of one read.
// SPV-LABEL: gpu.module
// SPV: llvm.func @_Z17clock_read_devicev() -> i64
// SPV: llvm.mlir.global external @__zmlir_globaltimer(dense<[0, 0, 2147483648, 31]> : tensor<4xi64>) {addr_space = 1 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
// SPV-LABEL: gpu.func @globaltimer
// SPV: %[[BASE:.*]] = llvm.mlir.addressof @__zmlir_globaltimer : !llvm.ptr<1>
// SPV: %[[TICKS0:.*]] = llvm.load %[[BASE]] {alignment = 8 : i64} : !llvm.ptr<1> -> i64
// SPV: %[[P1:.*]] = llvm.getelementptr %[[BASE]][1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i64
// SPV: %[[NS0:.*]] = llvm.load %[[P1]]
// SPV: %[[P2:.*]] = llvm.getelementptr %[[BASE]][2] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i64
// SPV: %[[MULT:.*]] = llvm.load %[[P2]]
// SPV: %[[P3:.*]] = llvm.getelementptr %[[BASE]][3] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i64
// SPV: %[[SHIFT:.*]] = llvm.load %[[P3]]
// SPV: %[[TICKS:.*]] = llvm.call @_Z17clock_read_devicev() : () -> i64
// SPV: %[[D:.*]] = arith.subi %[[TICKS]], %[[TICKS0]] : i64
// SPV: %[[HI:.*]] = arith.shrui %[[D]], %[[C32:.*]] : i64
// SPV: %[[LO:.*]] = arith.andi %[[D]], %{{.*}} : i64
// SPV: %[[UP:.*]] = arith.subi %[[C32]], %[[SHIFT]] : i64
// SPV: %[[HIM:.*]] = arith.muli %[[HI]], %[[MULT]] : i64
// SPV: %[[HINS:.*]] = arith.shli %[[HIM]], %[[UP]] : i64
// SPV: %[[LOM:.*]] = arith.muli %[[LO]], %[[MULT]] : i64
// SPV: %[[LONS:.*]] = arith.shrui %[[LOM]], %[[SHIFT]] : i64
// SPV: %[[SUM:.*]] = arith.addi %[[HINS]], %[[LONS]] : i64
// SPV: %[[NS:.*]] = arith.addi %[[NS0]], %[[SUM]] : i64
// SPV: llvm.store %[[NS]]
// SPV: llvm.call @_Z17clock_read_devicev()
// SPV: %[[LO32:.*]] = arith.trunci %{{.*}} : i64 to i32
// SPV: llvm.store %[[LO32]]
// SPV: llvm.call @_Z17clock_read_devicev()
// SPV: %[[S:.*]] = arith.addi %{{.*}}, %{{.*}} : i64
// SPV-NEXT: %[[N:.*]] = arith.addi %{{.*}}, %[[S]] : i64
// SPV: %[[H:.*]] = arith.shrui %[[N]], %{{.*}} : i64
// SPV-NEXT: %[[HI32:.*]] = arith.trunci %[[H]] : i64 to i32
// SPV: llvm.store %[[HI32]]
// NV-LABEL: gpu.func @globaltimer
// NV: llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.globaltimer"
// NV: %[[T:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.globaltimer"
// NV: arith.trunci %[[T]] : i64 to i32
// NV: %[[T2:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.globaltimer"
// NV: arith.shrui %[[T2]]
// GFX9-LABEL: gpu.func @globaltimer
// GFX9: llvm.call_intrinsic "llvm.readsteadycounter"
func.func @globaltimer(%out: i64) attributes {ptx.entry} {
  %0 = ptx.sreg <globaltimer> : i64
  ptx.st %out, %0 {space = #ptx.space<global>, type = #ptx.type<u64>} : i64, i64
  %1 = ptx.sreg <globaltimer_lo> : i32
  ptx.st %out, %1 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  %2 = ptx.sreg <globaltimer_hi> : i32
  ptx.st %out, %2 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  ptx.ret
}

// -----

// %reserved_smem_offset_*: the kernel's reserved shared memory, 1 KiB at the
// start of its window, before its variables (cooperative groups' multi-warp
// tiles keep their barrier words at _1): _begin and _0 its start, _1 its
// middle, _end its end, _cap its size, on every target.
// SPV-LABEL: gpu.func @reserved_smem
// SPV-SAME: zmlir.static_shared_bytes = 1088
// SPV: llvm.store %c0_i32
// SPV: llvm.store %c512_i32
// SPV: llvm.store %c1024_i32
// SPV: llvm.store %c1024_i32
// NV-LABEL: gpu.func @reserved_smem
// NV-SAME: zmlir.static_shared_bytes = 1088
ptx.var @tile {space = #ptx.space<shared>, type = #ptx.type<b8>, count = 64, align = 4}
func.func @reserved_smem(%out: i64) attributes {ptx.entry} {
  %a = ptx.addr_of @tile : i32
  ptx.st %out, %a {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  %0 = ptx.sreg <reserved_smem_offset_begin> : i32
  ptx.st %out, %0 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  %1 = ptx.sreg <reserved_smem_offset_1> : i32
  ptx.st %out, %1 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  %2 = ptx.sreg <reserved_smem_offset_end> : i32
  ptx.st %out, %2 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  %3 = ptx.sreg <reserved_smem_offset_cap> : i32
  ptx.st %out, %3 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  ptx.ret
}

// -----

// Thread-block clusters: NVIDIA's registers on NVPTX (the passthrough
// launches clusters); elsewhere a launch has none and each CTA is a cluster
// of one: %clusterid is %ctaid, %nclusterid %nctaid, a CTA's rank 0 of 1.
// SPV-LABEL: gpu.func @cluster_registers
// SPV: %[[ID:.*]] = gpu.block_id  y
// SPV: arith.index_castui %[[ID]] : index to i32
// SPV: %[[N:.*]] = gpu.grid_dim  z
// SPV: arith.index_castui %[[N]] : index to i32
// SPV: llvm.store %c1_i32
// SPV: llvm.store %c0_i32
// SPV: arith.select %false
// NV-LABEL: gpu.func @cluster_registers
// NV: llvm.inline_asm "mov.u32 $0, %clusterid.y;", "=r"
// NV: llvm.inline_asm "mov.u32 $0, %nclusterid.z;", "=r"
// NV: llvm.inline_asm "mov.u32 $0, %cluster_nctarank;", "=r"
// NV: llvm.inline_asm "mov.u32 $0, %cluster_ctaid.x;", "=r"
// NV: %[[E:.*]] = llvm.inline_asm "{ .reg .pred p; mov.pred p, %is_explicit_cluster; selp.u32 $0, 1, 0, p; }", "=r"
// NV: arith.cmpi ne, %[[E]]
func.func @cluster_registers(%out: i64) attributes {ptx.entry} {
  %0 = ptx.sreg <clusterid.y> : i32
  ptx.st %out, %0 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  %1 = ptx.sreg <nclusterid.z> : i32
  ptx.st %out, %1 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  %2 = ptx.sreg <cluster_nctarank> : i32
  ptx.st %out, %2 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  %3 = ptx.sreg <cluster_ctaid.x> : i32
  ptx.st %out, %3 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  %4 = ptx.sreg <is_explicit_cluster> : i1
  %c1 = arith.constant 1 : i32
  %c0 = arith.constant 0 : i32
  %5 = arith.select %4, %c1, %c0 : i32
  ptx.st %out, %5 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  ptx.ret
}

// -----

// %clock_hi is the upper half of a read of %clock64.
// SPV-LABEL: gpu.func @clock_hi
// SPV: %[[C:.*]] = llvm.call @_Z21clock_read_work_groupv() : () -> i64
// SPV: %[[H:.*]] = arith.shrui %[[C]], %c32_i64 : i64
// SPV: arith.trunci %[[H]] : i64 to i32
// NV-LABEL: gpu.func @clock_hi
// NV: %[[C:.*]] = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.clock64"() : () -> i64
// NV: arith.shrui %[[C]], %c32_i64 : i64
func.func @clock_hi(%out: i64) attributes {ptx.entry} {
  %0 = ptx.sreg <clock_hi> : i32
  ptx.st %out, %0 {space = #ptx.space<global>, type = #ptx.type<u32>} : i64, i32
  ptx.ret
}
