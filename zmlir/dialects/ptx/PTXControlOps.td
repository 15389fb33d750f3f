//===- PTXControlOps.td - Branches, barriers, fences -------*- tablegen -*-===//
//
// Memory fences, CTA barriers, branches, ret, trap and exit. Lowered by
// zmlir/lowering/Control.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_CONTROLOPS
#define ZMLIR_DIALECT_PTX_CONTROLOPS

include "zmlir/dialects/ptx/PTXOpBase.td"

//===----------------------------------------------------------------------===//
// Fences and barriers (PTX ISA 9.7.13)
//===----------------------------------------------------------------------===//

def PTX_FenceOp : PTX_Op<"fence"> {
  let summary = "PTX `fence.sc` / `fence.acq_rel` / `membar`";
  let description = [{
    A memory fence at `scope`; `membar.{cta,gl,sys}` is `fence.sc` at
    `cta`/`gpu`/`sys`. PTX ISA 9.7.13.4.
    Example: `ptx.fence {sem = #ptx.sem<acq_rel>, scope = #ptx.scope<gpu>}`
  }];
  let arguments = (ins PTX_SemanticsAttr:$sem, PTX_ScopeAttr:$scope);
  let assemblyFormat = "attr-dict";
}

def PTX_BarSyncOp : PTX_Op<"bar_sync"> {
  let summary = "PTX `bar.sync` / `barrier.sync`";
  let description = [{
    Waits at barrier `barrier` for `count` threads (all of the CTA when
    absent). `bar.sync` is `barrier.sync.aligned`. PTX ISA 9.7.13.1.
  }];
  let arguments = (ins I32:$barrier, Optional<I32>:$count, UnitAttr:$aligned);
  let assemblyFormat = "$barrier (`,` $count^)? attr-dict";
}

def PTX_BarArriveOp : PTX_Op<"bar_arrive"> {
  let summary = "PTX `bar.arrive` / `barrier.arrive`";
  let description = [{
    Arrives at barrier `barrier`, expecting `count` threads, without waiting
    for them. `bar.arrive` is `barrier.arrive.aligned`. PTX ISA 9.7.13.1.
    Example: `ptx.bar_arrive %id, %count {aligned}`
  }];
  let arguments = (ins I32:$barrier, I32:$count, UnitAttr:$aligned);
  let assemblyFormat = "$barrier `,` $count attr-dict";
}

def PTX_BarRedOp : PTX_Op<"bar_red"> {
  let summary = "PTX `bar.red` / `barrier.red`: a barrier that reduces a predicate";
  let description = [{
    Waits like `bar.sync` and gives every thread the reduction of `pred`
    over the participating threads: `.popc.u32` the number of threads whose
    predicate is true, `.and.pred` / `.or.pred` the conjunction and
    disjunction. `bar.red` is `barrier.red.aligned`. PTX ISA 9.7.13.1.
    Example: `%n = ptx.bar_red %p, %id {mode = #ptx.barred<popc>} : i32`
  }];
  let arguments = (ins I1:$pred, I32:$barrier, Optional<I32>:$count,
                   PTX_BarRedModeAttr:$mode, UnitAttr:$aligned);
  let results = (outs AnyTypeOf<[I1, I32]>:$res);
  let assemblyFormat = "$pred `,` $barrier (`,` $count^)? attr-dict `:` type($res)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Control flow (PTX ISA 9.7.10)
//===----------------------------------------------------------------------===//

def PTX_BraOp : PTX_Op<"bra", [Terminator, Pure,
    DeclareOpInterfaceMethods<BranchOpInterface, ["getSuccessorForOperands"]>]> {
  let summary = "PTX `bra`";
  let description = "Unconditional branch; `uni` marks `bra.uni`. PTX ISA 9.7.10.1.";
  let arguments = (ins Variadic<AnyType>:$destOperands, UnitAttr:$uni);
  let successors = (successor AnySuccessor:$dest);
  let assemblyFormat = "$dest (`(` $destOperands^ `:` type($destOperands) `)`)? attr-dict";
}

def PTX_CondBraOp : PTX_Op<"cond_bra", [Terminator, Pure, AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<BranchOpInterface, ["getSuccessorForOperands"]>]> {
  let summary = "PTX `@p bra` / `@!p bra`: a guarded branch";
  let description = [{
    Branches to `taken` when the guard holds (`pred`, or `!pred` with
    `negated`), else falls through to `fallthrough`. PTX ISA 9.7.10.1.
  }];
  let arguments = (ins I1:$pred, Variadic<AnyType>:$takenOperands,
                   Variadic<AnyType>:$fallthroughOperands,
                   UnitAttr:$negated, UnitAttr:$uni);
  let successors = (successor AnySuccessor:$taken, AnySuccessor:$fallthrough);
  let assemblyFormat = [{
    $pred `,` $taken (`(` $takenOperands^ `:` type($takenOperands) `)`)? `,`
    $fallthrough (`(` $fallthroughOperands^ `:` type($fallthroughOperands) `)`)?
    attr-dict
  }];
}

def PTX_LoopNoUnrollOp : PTX_Op<"loop_nounroll"> {
  let summary = "PTX `.pragma \"nounroll\"` in a loop's header block";
  let description = [{
    The loop whose header block holds this op is not to be unrolled (PTX
    ISA 11.3). Not pure, so it stays in its block until translation to LLVM
    IR makes it the loop's `llvm.loop.unroll.disable` (CodeEmission.cpp).
  }];
  let assemblyFormat = "attr-dict";
}

def PTX_RetOp : PTX_Op<"ret", [Terminator, ReturnLike]> {
  let summary = "PTX `ret`";
  let description = [{
    Return from a function or kernel; a `.func` returns the values its body
    stored to its return parameters. PTX ISA 9.7.10.5.
  }];
  let arguments = (ins Variadic<AnyType>:$values, UnitAttr:$uni);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

def PTX_TrapOp : PTX_Op<"trap", [Terminator]> {
  let summary = "PTX `trap`";
  let description = [{
    Aborts the kernel: the launch fails. Also ends `brx.idx` chains, whose
    out-of-range index is undefined in PTX. PTX ISA 9.7.19.1.
  }];
  let assemblyFormat = "attr-dict";
}

def PTX_BrkptOp : PTX_Op<"brkpt", [Terminator]> {
  let summary = "PTX `brkpt`";
  let description = [{
    Suspends the thread for a debugger. With none attached (the only case
    zmlir runs) it ends the launch like `trap` (TargetInfo::emitBreakpoint;
    NVPTX keeps NVIDIA's own `brkpt`). PTX ISA 9.7.19.2.
  }];
  let assemblyFormat = "attr-dict";
}

def PTX_ExitOp : PTX_Op<"exit", [Terminator]> {
  let summary = "PTX `exit`";
  let description = "Terminates the thread. PTX ISA 9.7.10.6.";
  let assemblyFormat = "attr-dict";
}

#endif // ZMLIR_DIALECT_PTX_CONTROLOPS
