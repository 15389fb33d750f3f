//===- PTXAsyncCopyOps.td - cp.async -----------------------*- tablegen -*-===//
//
// Asynchronous copies from global to shared memory (cp.async), bulk copies
// (cp.async.bulk), and their groups.
// Verified in PTXAsyncCopyOps.cpp, lowered by zmlir/lowering/AsyncCopy.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_DIALECT_PTX_ASYNCCOPYOPS
#define ZMLIR_DIALECT_PTX_ASYNCCOPYOPS

include "zmlir/dialects/ptx/PTXOpBase.td"

//===----------------------------------------------------------------------===//
// cp.async (PTX ISA 9.7.9.25.3)
//===----------------------------------------------------------------------===//

def PTX_CpAsyncOp : PTX_Op<"cp_async", [AttrSizedOperandSegments]> {
  let summary = "PTX `cp.async`: copy from global to shared memory, asynchronously";
  let description = [{
    `cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size}`
    or `{, ignore-src}`: copies `size` (4, 8 or 16; .cg: 16) bytes from the
    global address `src+src_offset` to the shared address `dst+dst_offset`,
    of which only the first `src_size` come from `src` (all of them when
    absent, none when `ignore_src` is true): the rest are zeros. The copy
    completes by the `cp.async.wait_group` that waits for its group.
    `dst` is a `.shared` address, `src` a `.global` one; cache hints and
    L2 prefetch sizes (`.L2::cache_hint`, `.L2::128B`, ...) change no result
    and are not kept. PTX ISA 9.7.9.25.3.1.
    Example: `ptx.cp_async %d, %s {cache = #ptx.cache<cg>, size = 16 : i64} : i32, i64`
  }];
  let arguments = (ins PTX_Address:$dst, PTX_Address:$src, Optional<I32>:$src_size,
      Optional<I1>:$ignore_src, I64Attr:$size, PTX_CacheOpAttr:$cache,
      DefaultValuedAttr<I64Attr, "0">:$dst_offset, DefaultValuedAttr<I64Attr, "0">:$src_offset);
  let assemblyFormat = [{
    $dst `,` $src (`src_size` $src_size^)? (`ignore_src` $ignore_src^)? attr-dict `:` type($dst) `,` type($src)
  }];
  let hasVerifier = 1;
}

def PTX_CpAsyncCommitGroupOp : PTX_Op<"cp_async_commit_group"> {
  let summary = "PTX `cp.async.commit_group`: close the thread's group of copies";
  let description = "PTX ISA 9.7.9.25.3.2.";
  let assemblyFormat = "attr-dict";
}

def PTX_CpAsyncWaitGroupOp : PTX_Op<"cp_async_wait_group"> {
  let summary = "PTX `cp.async.wait_group N` / `cp.async.wait_all`";
  let description = [{
    Waits until at most `pending` of the thread's committed groups of copies
    are incomplete; `all` waits for every copy, committed or not
    (`cp.async.wait_all`). PTX ISA 9.7.9.25.3.3.
    Example: `ptx.cp_async_wait_group {pending = 0 : i64}`
  }];
  let arguments = (ins DefaultValuedAttr<I64Attr, "0">:$pending, UnitAttr:$all);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def PTX_CpAsyncMbarrierArriveOp : PTX_Op<"cp_async_mbarrier_arrive"> {
  let summary = "PTX `cp.async.mbarrier.arrive{.noinc}`: arrive once the copies are done";
  let description = [{
    `cp.async.mbarrier.arrive{.noinc}{.shared{::cta}}.b64 [addr]`: an arrival
    on the mbarrier at `addr+offset` (in `space`) once the thread's earlier
    cp.async copies are complete. Without `noinc` the barrier's pending
    arrivals are raised by one first, so the pair leaves the count as it
    was. PTX ISA 9.7.13.15, cp.async.mbarrier.arrive.
    Example: `ptx.cp_async_mbarrier_arrive %a {noinc, space = #ptx.space<shared>} : i32`
  }];
  let arguments = (ins PTX_Address:$addr, UnitAttr:$noinc,
      DefaultValuedAttr<PTX_StateSpaceAttr, "::zmlir::ptx::StateSpace::None">:$space,
      DefaultValuedAttr<I64Attr, "0">:$offset);
  let assemblyFormat = "$addr attr-dict `:` type($addr)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// cp.async.bulk (PTX ISA 9.7.9.25.4)
//===----------------------------------------------------------------------===//

def PTX_CpAsyncBulkOp : PTX_Op<"cp_async_bulk"> {
  let summary = "PTX `cp.async.bulk`: a bulk copy between global and shared memory";
  let description = [{
    `cp.async.bulk.dst.src.completion [dstMem], [srcMem], size{, [mbar]}`:
    copies `size` bytes (a multiple of 16, both addresses 16-byte aligned)
    from `src+src_offset` in `src_space` to `dst+dst_offset` in `dst_space`.
    The forms:
      - `.shared::cluster.global.mbarrier::complete_tx::bytes` and
        `.shared::cta.global.mbarrier::complete_tx::bytes`: global to shared,
        then a complete_tx of `size` bytes on the mbarrier at
        `mbar+mbar_offset` (in the destination's CTA);
      - `.shared::cluster.shared::cta.mbarrier::complete_tx::bytes`: shared
        to shared, likewise;
      - `.global.shared::cta.bulk_group`: shared to global, complete by the
        `cp.async.bulk.wait_group` that waits for its bulk async-group.
    Cache hints (`.L2::cache_hint` and its cache-policy operand) change no
    result and are not kept. PTX ISA 9.7.9.25.4.1.
    Example: `ptx.cp_async_bulk %d, %s, %n mbarrier %b {dst_space = #ptx.space<shared_cluster>, src_space = #ptx.space<global>} : i32, i64, i32`
  }];
  let arguments = (ins PTX_Address:$dst, PTX_Address:$src, I32:$size,
      Optional<PTX_Address>:$mbar, PTX_StateSpaceAttr:$dst_space, PTX_StateSpaceAttr:$src_space,
      DefaultValuedAttr<I64Attr, "0">:$dst_offset, DefaultValuedAttr<I64Attr, "0">:$src_offset,
      DefaultValuedAttr<I64Attr, "0">:$mbar_offset);
  let assemblyFormat = [{
    $dst `,` $src `,` $size (`mbarrier` $mbar^)? attr-dict `:` type($dst) `,` type($src) (`,` type($mbar)^)?
  }];
  let hasVerifier = 1;
}

def PTX_CpAsyncBulkCommitGroupOp : PTX_Op<"cp_async_bulk_commit_group"> {
  let summary = "PTX `cp.async.bulk.commit_group`: close the thread's bulk async-group";
  let description = [{
    Closes the thread's bulk_group copies issued since the last commit into
    one bulk async-group. PTX ISA 9.7.9.25.4.2.
    Example: `ptx.cp_async_bulk_commit_group`
  }];
  let assemblyFormat = "attr-dict";
}

def PTX_CpAsyncBulkWaitGroupOp : PTX_Op<"cp_async_bulk_wait_group"> {
  let summary = "PTX `cp.async.bulk.wait_group{.read} N`";
  let description = [{
    Waits until at most `pending` of the thread's bulk async-groups are
    incomplete; with `read`, only until their sources have been read.
    PTX ISA 9.7.9.25.4.3.
    Example: `ptx.cp_async_bulk_wait_group {pending = 0 : i64, read}`
  }];
  let arguments = (ins DefaultValuedAttr<I64Attr, "0">:$pending, UnitAttr:$read);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

def PTX_FenceProxyAsyncOp : PTX_Op<"fence_proxy_async"> {
  let summary = "PTX `fence.proxy.async`: order the generic and the async proxy";
  let description = [{
    `fence.proxy.async{.global|.shared::{cta,cluster}}`: orders the thread's
    memory accesses through the generic proxy (ld, st, atom) with those of
    the async proxy (cp.async.bulk) to `space`, every state space without
    one. PTX ISA 9.7.13.4 (membar/fence).
    Example: `ptx.fence_proxy_async {space = #ptx.space<shared>}`
  }];
  let arguments = (ins
      DefaultValuedAttr<PTX_StateSpaceAttr, "::zmlir::ptx::StateSpace::None">:$space);
  let assemblyFormat = "attr-dict";
  let hasVerifier = 1;
}

#endif // ZMLIR_DIALECT_PTX_ASYNCCOPYOPS
