// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=spirv local-address-space=0" | FileCheck %s --check-prefixes=WORD,SPV
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=host | FileCheck %s --check-prefixes=WORD,HOST
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std="target=amdgpu wave-size=64" | FileCheck %s --check-prefixes=WORD,AMD
// RUN: zmlir-opt %s -split-input-file -convert-ptx-to-std=target=nvptx | FileCheck %s --check-prefix=NV

// init stores the word (count expected and pending, phase 0); an arrival is
// a compare-and-swap loop on it that completes the phase when nothing is
// pending; a wait compares the parity read (acquire) with the state's. The
// threads' turn before the read: SPIR-V a work-group barrier, after which a
// thread that finds the same incomplete word twice traps; the host runtime
// a yield to the other fibers; AMDGPU nothing. NVPTX: the instructions as
// inline PTX.
// WORD-LABEL: gpu.func @arrive_wait
// WORD-SAME: (%[[A:[^:]*]]: i32, %[[N:[^:]*]]: i32)
// SPV: %[[LASTB:.*]] = llvm.alloca %{{.*}} x i64 {alignment = 8 : i64} : (i64) -> !llvm.ptr
// SPV: %[[LASTW:.*]] = llvm.alloca %{{.*}} x i64 {alignment = 8 : i64} : (i64) -> !llvm.ptr
// WORD: %[[MASK:.*]] = arith.constant 2097151 : i64
// WORD: %[[N64:.*]] = arith.extui %[[N]] : i32 to i64
// WORD: %[[COUNT:.*]] = arith.andi %[[N64]], %[[MASK]] : i64
// WORD: %[[EXPECTED:.*]] = arith.shli %[[COUNT]], %{{.*}} : i64
// WORD: %[[INIT:.*]] = arith.ori %[[COUNT]], %[[EXPECTED]] : i64
// WORD: llvm.store %[[INIT]], %{{.*}} atomic syncscope("workgroup") monotonic {alignment = 8 : i64} : i64, !llvm.ptr<3>
// WORD: %[[FIRST:.*]] = llvm.load %[[BAR:.*]] atomic syncscope("workgroup") monotonic {alignment = 8 : i64} : !llvm.ptr<3> -> i64
// WORD: cf.br ^[[LOOP:.*]](%[[FIRST]] : i64)
// WORD: ^[[LOOP]](%[[OLD:.*]]: i64):
// WORD: %[[DONE:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i64
// WORD: %[[NEW:.*]] = arith.select %[[DONE]], %{{.*}}, %[[STATE:[^ ]*]] : i64
// WORD: %[[PAIR:.*]] = llvm.cmpxchg %[[BAR]], %[[OLD]], %[[NEW]] syncscope("workgroup") acq_rel monotonic : !llvm.ptr<3>, i64
// WORD: %[[SEEN:.*]] = llvm.extractvalue %[[PAIR]][0]
// WORD: %[[OK:.*]] = llvm.extractvalue %[[PAIR]][1]
// WORD: cf.cond_br %[[OK]], ^{{.*}}, ^[[LOOP]](%[[SEEN]] : i64)
// SPV: gpu.barrier
// HOST: llvm.call @zmlir_host_yield() : () -> ()
// AMD-NOT: gpu.barrier
// WORD: %[[WORD:.*]] = llvm.load %{{.*}} atomic syncscope("workgroup") acquire {alignment = 8 : i64} : !llvm.ptr<3> -> i64
// WORD: %[[NOW:.*]] = arith.shrui %[[WORD]], %{{.*}} : i64
// WORD: %[[THEN:.*]] = arith.shrui %[[STATE]], %{{.*}} : i64
// WORD: %[[COMPLETE:.*]] = arith.cmpi ne, %[[NOW]], %[[THEN]] : i64
// SPV: %[[SAMEW:.*]] = arith.cmpi eq, %{{.*}}, %[[WORD]] : i64
// SPV: %[[SAME:.*]] = arith.andi %{{.*}}, %[[SAMEW]] : i1
// SPV: %[[INCOMPLETE:.*]] = arith.xori %[[COMPLETE]], %true : i1
// SPV: %[[STUCK:.*]] = arith.andi %[[SAME]], %[[INCOMPLETE]] : i1
// SPV: cf.cond_br %[[STUCK]], ^[[TRAP:.*]], ^[[ON:.*]]
// SPV: ^[[TRAP]]:
// SPV: llvm.atomicrmw xchg
// SPV: ^[[ON]]:
// SPV: llvm.store %{{.*}}, %[[LASTB]] : i64, !llvm.ptr
// SPV: llvm.store %[[WORD]], %[[LASTW]] : i64, !llvm.ptr
// WORD: gpu.return
// NV-LABEL: gpu.func @arrive_wait
// NV: llvm.inline_asm has_side_effects "mbarrier.init.shared.b64 [$0], $1;", "l,r,~{memory}"
// NV: %[[S:.*]] = llvm.inline_asm has_side_effects "mbarrier.arrive.shared.b64 $0, [$1];", "=l,l,~{memory}"
// NV: %[[R:.*]] = llvm.inline_asm has_side_effects "{\0A\09.reg .pred p;\0A\09mbarrier.test_wait.shared.b64 p, [$1], $2;\0A\09selp.u32 $0, 1, 0, p;\0A\09}", "=r,l,l,~{memory}" %{{.*}}, %[[S]]
// NV: arith.cmpi ne, %[[R]], %{{.*}} : i32
func.func @arrive_wait(%a: i32, %n: i32) attributes {ptx.entry} {
  ptx.mbarrier_init %a, %n {space = #ptx.space<shared>} : i32, i32
  %0 = ptx.mbarrier_arrive %a {space = #ptx.space<shared>} : i32 -> i64
  %1 = ptx.mbarrier_test_wait %a, %0 {space = #ptx.space<shared>} : i32, i64
  ptx.ret
}

// -----

// arrive_drop takes its count off the expected arrivals too; .expect_tx
// adds to the tx-count (sign-extended for complete_tx, negated); a parity
// wait compares with the parity's low bit; pending_count is the state's
// low 21 bits. NVPTX keeps the modifiers written (.shared::cta where a
// semantics or scope is) but the implied ones (a wait's .acquire, .cta).
// WORD-LABEL: gpu.func @forms
// WORD-SAME: (%[[G:[^:]*]]: i64, %[[N:[^:]*]]: i32, %[[P:[^:]*]]: i32)
// WORD: %[[N64:.*]] = arith.extui %[[N]] : i32 to i64
// WORD: ^{{.*}}(%[[OLD:.*]]: i64):
// WORD: arith.subi %{{.*}}, %[[N64]] : i64
// WORD: arith.subi %{{.*}}, %[[N64]] : i64
// WORD: llvm.cmpxchg
// WORD: %[[TX:.*]] = arith.extsi %[[N]] : i32 to i64
// WORD: %[[MINUS:.*]] = arith.subi %{{.*}}, %[[TX]] : i64
// WORD: arith.addi %{{.*}}, %[[MINUS]] : i64
// WORD: llvm.cmpxchg
// WORD: %[[P64:.*]] = arith.extui %[[P]] : i32 to i64
// WORD: %[[BIT:.*]] = arith.andi %[[P64]], %{{.*}} : i64
// WORD: arith.cmpi ne, %{{.*}}, %[[BIT]] : i64
// WORD: %[[LOW:.*]] = arith.andi %{{.*}}, %{{.*}} : i64
// WORD: arith.trunci %[[LOW]] : i64 to i32
// NV-LABEL: gpu.func @forms
// NV: "mbarrier.arrive_drop.noComplete.b64 $0, [$1], $2;", "=l,l,r,~{memory}"
// NV: "mbarrier.complete_tx.relaxed.cluster.shared::cta.b64 [$0], $1;", "l,r,~{memory}"
// NV: "{\0A\09.reg .pred p;\0A\09mbarrier.try_wait.parity.b64 p, [$1], $2, $3;\0A\09selp.u32 $0, 1, 0, p;\0A\09}", "=r,l,r,r,~{memory}"
// NV: "mbarrier.pending_count.b64 $0, $1;", "=r,l"
// NV: "mbarrier.arrive.expect_tx.shared.b64 $0, [$1], $2;", "=l,l,r,~{memory}"
func.func @forms(%g: i64, %n: i32, %p: i32) attributes {ptx.entry} {
  %c0 = arith.constant 0 : i32
  %0 = ptx.mbarrier_arrive %g count %n {drop, no_complete} : i64 -> i64
  ptx.mbarrier_tx %c0, %n {complete, scope = #ptx.scope<cluster>, sem = #ptx.sem<relaxed>, space = #ptx.space<shared>} : i32, i32
  %1 = ptx.mbarrier_test_wait %g, %p suspend %n {parity, try_wait, sem = #ptx.sem<acquire>, scope = #ptx.scope<cta>} : i64, i32
  %2 = ptx.mbarrier_pending_count %0
  %3 = ptx.mbarrier_arrive %c0 tx %n {space = #ptx.space<shared>} : i32 -> i64
  ptx.ret
}

// -----

// The copies being complete when issued, cp.async.mbarrier.arrive.noinc is
// an arrival and cp.async.mbarrier.arrive (pending raised, then lowered)
// nothing; mbarrier.inval is nothing. NVPTX: NVIDIA's.
// WORD-LABEL: gpu.func @cp_async_arrive
// WORD-COUNT-1: llvm.cmpxchg
// WORD-NOT: llvm.cmpxchg
// WORD: gpu.return
// NV-LABEL: gpu.func @cp_async_arrive
// NV: "cp.async.mbarrier.arrive.noinc.shared.b64 [$0];", "l,~{memory}"
// NV: "cp.async.mbarrier.arrive.b64 [$0];", "l,~{memory}"
// NV: "mbarrier.inval.shared.b64 [$0];", "l,~{memory}"
func.func @cp_async_arrive(%a: i32, %g: i64) attributes {ptx.entry} {
  ptx.cp_async_mbarrier_arrive %a {noinc, space = #ptx.space<shared>} : i32
  ptx.cp_async_mbarrier_arrive %g : i64
  ptx.mbarrier_inval %a {space = #ptx.space<shared>} : i32
  ptx.ret
}

// -----

// fence.mbarrier_init.release.cluster: a release fence at the CTA's scope
// (a cluster is one CTA off NVPTX); NVPTX: NVIDIA's.
// WORD-LABEL: gpu.func @init_fence
// WORD: llvm.fence syncscope("{{.*}}") release
// NV-LABEL: gpu.func @init_fence
// NV: llvm.inline_asm has_side_effects "fence.mbarrier_init.release.cluster;", "~{memory}"
func.func @init_fence() attributes {ptx.entry} {
  ptx.fence_mbarrier_init
  ptx.ret
}
