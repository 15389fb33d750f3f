//===- PTXMbarrierOps.td - mbarrier ------------------------*- tablegen -*-===//
//
// Barriers in shared memory (`mbarrier.*`). Verified in PTXMbarrierOps.cpp,
// lowered by zmlir/lowering/Mbarrier.cpp. `cp.async.mbarrier.arrive` is
// with cp.async (PTXAsyncCopyOps.td).
//
// Every op takes the barrier's address as PTX does: `addr + offset` in
// `space` (shared, or generic for an address in the generic window).
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_MBARRIEROPS
#define ZMLIR_DIALECT_PTX_MBARRIEROPS

include "zmlir/dialects/ptx/PTXOpBase.td"

class PTX_MbarrierOp<string mnemonic, list<Trait> traits = []>
    : PTX_Op<"mbarrier_" # mnemonic, traits> {
  dag location = (ins
      DefaultValuedAttr<PTX_StateSpaceAttr, "::zmlir::ptx::StateSpace::None">:$space,
      DefaultValuedAttr<I64Attr, "0">:$offset);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// mbarrier.init, mbarrier.inval
//===----------------------------------------------------------------------===//

def PTX_MbarrierInitOp : PTX_MbarrierOp<"init"> {
  let summary = "PTX `mbarrier.init`: a barrier expecting `count` arrivals";
  let description = [{
    `mbarrier.init{.shared{::cta}}.b64 [addr], count`: phase 0, `count`
    expected and pending arrivals (1 to 2^20 - 1), no pending transactions.
    PTX ISA 9.7.13.15, mbarrier.
    Example: `ptx.mbarrier_init %a, %n {space = #ptx.space<shared>} : i32, i32`
  }];
  let arguments = !con((ins PTX_Address:$addr, I32:$count), location);
  let assemblyFormat = "$addr `,` $count attr-dict `:` type($addr) `,` type($count)";
}

def PTX_MbarrierInvalOp : PTX_MbarrierOp<"inval"> {
  let summary = "PTX `mbarrier.inval`: the barrier's memory is memory again";
  let description = [{
    `mbarrier.inval{.shared{::cta}}.b64 [addr]`. PTX ISA 9.7.13.15, mbarrier.
    Example: `ptx.mbarrier_inval %a {space = #ptx.space<shared>} : i32`
  }];
  let arguments = !con((ins PTX_Address:$addr), location);
  let assemblyFormat = "$addr attr-dict `:` type($addr)";
}

//===----------------------------------------------------------------------===//
// mbarrier.expect_tx, mbarrier.complete_tx
//===----------------------------------------------------------------------===//

def PTX_MbarrierTxOp : PTX_MbarrierOp<"tx"> {
  let summary = "PTX `mbarrier.expect_tx` / `mbarrier.complete_tx`";
  let description = [{
    `mbarrier.expect_tx{.relaxed}{.scope}{.shared{::cta}}.b64 [addr], txCount`
    raises the current phase's pending transaction count by `tx_count`;
    with `complete`, `mbarrier.complete_tx` lowers it (which may complete the
    phase). PTX ISA 9.7.13.15, mbarrier.
    Example: `ptx.mbarrier_tx %a, %t {complete} : i32, i32`
  }];
  let arguments = !con((ins PTX_Address:$addr, I32:$tx_count, UnitAttr:$complete,
      DefaultValuedAttr<PTX_SemanticsAttr, "::zmlir::ptx::Semantics::None">:$sem,
      DefaultValuedAttr<PTX_ScopeAttr, "::zmlir::ptx::Scope::None">:$scope), location);
  let assemblyFormat = "$addr `,` $tx_count attr-dict `:` type($addr) `,` type($tx_count)";
}

//===----------------------------------------------------------------------===//
// mbarrier.arrive, mbarrier.arrive_drop
//===----------------------------------------------------------------------===//

def PTX_MbarrierArriveOp : PTX_MbarrierOp<"arrive", [AttrSizedOperandSegments]> {
  let summary = "PTX `mbarrier.arrive{.expect_tx}{.noComplete}` and `arrive_drop`";
  let description = [{
    `mbarrier.arrive{_drop}{.expect_tx}{.noComplete}{.sem}{.scope}{.space}.b64
    state, [addr]{, count | txCount}`: `count` (default 1) arrivals on the
    current phase, after raising its pending transactions by `tx_count`
    (`.expect_tx`); `drop` also lowers the expected arrivals of the phases
    after it by `count`. The phase completes when no arrival and no
    transaction is pending (`no_complete` promises this one does not). The
    result is the state of the phase arrived at (`mbarrier.test_wait`,
    `mbarrier.pending_count`). PTX ISA 9.7.13.15, mbarrier.
    Example: `ptx.mbarrier_arrive %a count %c {drop} : i32 -> i64`
  }];
  let arguments = !con((ins PTX_Address:$addr, Optional<I32>:$count, Optional<I32>:$tx_count,
      UnitAttr:$drop, UnitAttr:$no_complete,
      DefaultValuedAttr<PTX_SemanticsAttr, "::zmlir::ptx::Semantics::None">:$sem,
      DefaultValuedAttr<PTX_ScopeAttr, "::zmlir::ptx::Scope::None">:$scope), location);
  let results = (outs I64:$state);
  let assemblyFormat = [{
    $addr (`count` $count^)? (`tx` $tx_count^)? attr-dict `:` type($addr) `->` type($state)
  }];
}

//===----------------------------------------------------------------------===//
// mbarrier.test_wait, mbarrier.try_wait
//===----------------------------------------------------------------------===//

def PTX_MbarrierTestWaitOp : PTX_MbarrierOp<"test_wait"> {
  let summary = "PTX `mbarrier.test_wait{.parity}` / `mbarrier.try_wait{.parity}`";
  let description = [{
    `mbarrier.{test,try}_wait{.parity}{.sem}{.scope}{.space}.b64 waitComplete,
    [addr], state | phaseParity{, suspendTimeHint}`: whether the phase that
    `phase` names has completed: the phase of an `mbarrier.arrive` state
    (i64), or with `parity` the phase of that parity (i32, the current phase
    or the one before). `try_wait` may wait a while first (`suspend_hint`, in ns,
    bounds the wait). PTX ISA 9.7.13.15, mbarrier.
    Example: `ptx.mbarrier_test_wait %a, %s {try_wait} : i32, i64`
  }];
  let arguments = !con((ins PTX_Address:$addr, AnyTypeOf<[I32, I64]>:$phase,
      Optional<I32>:$suspend_hint, UnitAttr:$parity, UnitAttr:$try_wait,
      DefaultValuedAttr<PTX_SemanticsAttr, "::zmlir::ptx::Semantics::None">:$sem,
      DefaultValuedAttr<PTX_ScopeAttr, "::zmlir::ptx::Scope::None">:$scope), location);
  let results = (outs I1:$complete);
  let assemblyFormat = [{
    $addr `,` $phase (`suspend` $suspend_hint^)? attr-dict `:` type($addr) `,` type($phase)
  }];
}

//===----------------------------------------------------------------------===//
// mbarrier.pending_count
//===----------------------------------------------------------------------===//

def PTX_MbarrierPendingCountOp : PTX_Op<"mbarrier_pending_count", [Pure]> {
  let summary = "PTX `mbarrier.pending_count`: pending arrivals in a state";
  let description = [{
    `mbarrier.pending_count.b64 count, state`: the arrivals still pending in
    the phase when `mbarrier.arrive{_drop}.noComplete` returned `state`.
    PTX ISA 9.7.13.15, mbarrier.
    Example: `%n = ptx.mbarrier_pending_count %s`
  }];
  let arguments = (ins I64:$state);
  let results = (outs I32:$count);
  let assemblyFormat = "$state attr-dict";
}

//===----------------------------------------------------------------------===//
// fence.mbarrier_init
//===----------------------------------------------------------------------===//

def PTX_FenceMbarrierInitOp : PTX_Op<"fence_mbarrier_init"> {
  let summary = "PTX `fence.mbarrier_init.release.cluster`";
  let description = [{
    A release fence at cluster scope for the thread's earlier
    `mbarrier.init`s: the barriers are initialized before the thread's later
    accesses, as the cluster's other threads see them (a bulk copy's
    complete_tx in particular). PTX ISA 9.7.13.4 (membar/fence).
    Example: `ptx.fence_mbarrier_init`
  }];
  let assemblyFormat = "attr-dict";
}

#endif // ZMLIR_DIALECT_PTX_MBARRIEROPS
