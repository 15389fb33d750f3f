//===- PTXWarpOps.td - shfl, vote, match, redux, elect -----*- tablegen -*-===//
//
// Warp-level ops. Lowered by zmlir/lowering/Warp.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_WARPOPS
#define ZMLIR_DIALECT_PTX_WARPOPS

include "zmlir/dialects/ptx/PTXOpBase.td"

//===----------------------------------------------------------------------===//
// Warp-level ops (PTX ISA 9.7.9.6, 9.7.13)
//===----------------------------------------------------------------------===//

def PTX_ShflSyncOp : PTX_Op<"shfl_sync", [AllTypesMatch<["a", "res"]>]> {
  let summary = "PTX `shfl.sync`: exchange a register across the warp";
  let description = [{
    `shfl.sync.mode.b32 d|p, a, b, c, membermask`: `b` is the lane or offset,
    `c` packs the clamp value and segment mask. `p` is true when the source
    lane was in range. PTX ISA 9.7.9.6.
  }];
  let arguments = (ins I32:$a, I32:$b, I32:$c, I32:$membermask, PTX_ShflModeAttr:$mode);
  let results = (outs I32:$res, I1:$p);
  let assemblyFormat = "$a `,` $b `,` $c `,` $membermask attr-dict `:` type($a)";
}

def PTX_BarWarpSyncOp : PTX_Op<"bar_warp_sync"> {
  let summary = "PTX `bar.warp.sync`: converge the lanes in membermask";
  let description = "Also orders their memory accesses. PTX ISA 9.7.13.3.";
  let arguments = (ins I32:$membermask);
  let assemblyFormat = "$membermask attr-dict";
}

def PTX_VoteSyncOp : PTX_Op<"vote_sync"> {
  let summary = "PTX `vote.sync`: warp vote";
  let description = [{
    `.all .any .uni` give a predicate over the lanes in `membermask`,
    `.ballot.b32` the mask of lanes whose `pred` is true. PTX ISA 9.7.13.9.
    Example: `%b = ptx.vote_sync %p, %mask {mode = #ptx.vote<ballot>} : i32`
  }];
  let arguments = (ins I1:$pred, I32:$membermask, PTX_VoteModeAttr:$mode);
  let results = (outs AnyTypeOf<[I1, I32]>:$res);
  let assemblyFormat = "$pred `,` $membermask attr-dict `:` type($res)";
  let hasVerifier = 1;
}

def PTX_ActivemaskOp : PTX_Op<"activemask"> {
  let summary = "PTX `activemask.b32`: the mask of active lanes";
  let description = "PTX ISA 9.7.13.12.";
  let results = (outs I32:$res);
  let assemblyFormat = "attr-dict `:` type($res)";
}

def PTX_ReduxSyncOp : PTX_Op<"redux_sync"> {
  let summary = "PTX `redux.sync`: reduce a register over the lanes in membermask";
  let description = [{
    `.add .min .max` (`.u32/.s32`) and `.and .or .xor` (`.b32`).
    PTX ISA 9.7.13.11.
  }];
  let arguments = (ins I32:$a, I32:$membermask, PTX_AtomOpAttr:$op, PTX_TypeAttr:$type);
  let results = (outs I32:$res);
  let assemblyFormat = "$a `,` $membermask attr-dict `:` type($res)";
  let hasVerifier = 1;
}

def PTX_MatchSyncOp : PTX_Op<"match_sync"> {
  let summary = "PTX `match.sync`: lanes holding the same value";
  let description = [{
    `.any`: the mask of lanes in `membermask` whose `a` equals this lane's;
    `.all`: `membermask` when all of them hold one value (then `p` is true),
    else 0. PTX ISA 9.7.13.10.
  }];
  let arguments = (ins AnyTypeOf<[I32, I64]>:$a, I32:$membermask, PTX_MatchModeAttr:$mode);
  let results = (outs I32:$res, I1:$p);
  let assemblyFormat = "$a `,` $membermask attr-dict `:` type($a)";
}

def PTX_ElectSyncOp : PTX_Op<"elect_sync"> {
  let summary = "PTX `elect.sync`: elect one leader lane of membermask";
  let description = [{
    `elect.sync d|p, membermask`: `d` is the lane id of the leader, the
    lowest active lane in `membermask`, and `p` is true in the leader only.
    PTX ISA 9.7.13.8 (sm_90).
    Example: `%d, %p = ptx.elect_sync %mask`
  }];
  let arguments = (ins I32:$membermask);
  let results = (outs I32:$res, I1:$p);
  let assemblyFormat = "$membermask attr-dict";
}

#endif // ZMLIR_DIALECT_PTX_WARPOPS
