//===- Patterns.h - The ptx-to-std lowering as pattern sets -----*- C++ -*-===//
//
// convert-ptx-to-std's conversion patterns, one populate function per PTX
// instruction family, usable outside the pass (as upstream's
// populate<X>To<Y>ConversionPatterns are). Every pattern reads one
// PTXLoweringState, in two parts:
//  - PTXLoweringOptions: the facts injected from outside (the backend's
//    TargetInfo and where each state space lives);
//  - PTXModuleLayout: what the pass computes for the module before the
//    patterns run (each kernel's shared window and the offsets of its
//    variables, the module's variables, the kernels with a bar.red counter).
//
//===----------------------------------------------------------------------===//

#ifndef ZMLIR_LOWERING_PATTERNS_H
#define ZMLIR_LOWERING_PATTERNS_H

#include "zmlir/dialects/ptx/PTXDialect.h"
#include "zmlir/lowering/TargetInfo.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace zmlir {

/// Where each PTX state space lives in the target's LLVM address spaces, and
/// how kernels reach their shared-memory window.
struct AddressSpaceMap {
  unsigned generic = 0;
  unsigned global = 1;
  unsigned shared = 3;
  unsigned constant = 4;
  unsigned local = 5;
};

/// The facts the lowering is given: the pass builds them from its options.
struct PTXLoweringOptions {
  /// What the backend the std dialects are for can do (TargetInfo.h).
  const TargetInfo &target;
  AddressSpaceMap addressSpaces;
  /// Texture and surface handles are the vendor's objects, read by the
  /// target's own instructions (TargetInfo::nativeTexture; Texture.cpp).
  bool nativeTextures = false;
};

/// What convert-ptx-to-std computes for the module before the patterns run
/// (PTXToStd.cpp).
struct PTXModuleLayout {
  /// Base of the shared window, per kernel (the gpu.func operation).
  llvm::DenseMap<mlir::Operation *, mlir::Value> sharedWindows;
  /// Offset of each shared variable in a kernel's window.
  llvm::DenseMap<std::pair<mlir::Operation *, mlir::StringAttr>, int64_t> sharedOffsets;
  /// Module-scope variables by name.
  llvm::DenseMap<mlir::StringAttr, ptx::VarOp> variables;
  /// Kernels whose shared window starts with the bar.red counter (see
  /// BarRedOpLowering); their variables are laid out after it.
  llvm::DenseSet<mlir::Operation *> barrierCounters;
  /// Whether the module's wmma ops are all the target's own instructions
  /// (nativeWmmaModule): then they are those, else all are emulated.
  bool nativeWmma = false;
  /// Per kernel with wmma.mma: the offset in its shared window of the
  /// lanes' exchange area and the bytes of it each warp has
  /// (reserveWmmaScratch; none where nativeWmma).
  llvm::DenseMap<mlir::Operation *, std::pair<int64_t, int64_t>> wmmaScratch;
  /// Per kernel reading %reserved_smem_*: the offset in its shared window of
  /// the CTA's reserved shared memory (reserveSharedMemory).
  llvm::DenseMap<mlir::Operation *, int64_t> reservedSmem;
};

/// The state the ptx lowering patterns share: the injected facts and the
/// module's layout.
struct PTXLoweringState : PTXLoweringOptions, PTXModuleLayout {
  explicit PTXLoweringState(const PTXLoweringOptions &options) : PTXLoweringOptions(options) {}
};

/// Every pattern of convert-ptx-to-std: the families below, in the order
/// that decides between patterns of one op with the same benefit (the one
/// added first is tried first).
void populatePTXToStdConversionPatterns(mlir::RewritePatternSet &patterns,
                                        const PTXLoweringState &state);
/// The ptx dialect illegal, the dialects the patterns produce legal.
void configurePTXToStdConversionLegality(mlir::ConversionTarget &target);

//===----------------------------------------------------------------------===//
// The families (one file each in zmlir/lowering/)
//===----------------------------------------------------------------------===//

/// Integer bit manipulation, shifts, 24-bit and dot-product multiplies,
/// extended precision (Bits.cpp).
void populatePTXBitsPatterns(mlir::RewritePatternSet &patterns, const PTXLoweringState &state);
/// f16/f16x2/bf16/bf16x2 arithmetic, min/max .xorsign.abs, and the directed
/// roundings (.rz/.rm/.rp) of f32/f64 arithmetic (FloatArith.cpp); they
/// take precedence over the generic arithmetic patterns.
void populatePTXFloatArithPatterns(mlir::RewritePatternSet &patterns,
                                   const PTXLoweringState &state);
/// rcp, sqrt, rsqrt, the .approx transcendentals, testp and div.approx/full
/// (FloatFunctions.cpp).
void populatePTXFloatFunctionPatterns(mlir::RewritePatternSet &patterns,
                                      const PTXLoweringState &state);
/// shfl, vote, match, redux, activemask, elect, bar.warp.sync (Warp.cpp).
void populatePTXWarpPatterns(mlir::RewritePatternSet &patterns, const PTXLoweringState &state);
/// wmma.load, wmma.store and wmma.mma: the target's own instructions where
/// state.nativeWmma, else emulated, the lanes of a warp exchanging
/// fragments in the shared window (MatrixOps.cpp).
void populatePTXMatrixPatterns(mlir::RewritePatternSet &patterns, const PTXLoweringState &state);
/// cp.async and its groups: the target's own, or synchronous copies
/// (AsyncCopy.cpp).
void populatePTXAsyncCopyPatterns(mlir::RewritePatternSet &patterns, const PTXLoweringState &state);
/// mbarrier and cp.async.mbarrier.arrive: the target's own, or the barrier's
/// 64-bit word updated atomically (Mbarrier.cpp).
void populatePTXMbarrierPatterns(mlir::RewritePatternSet &patterns, const PTXLoweringState &state);
/// Integer and float arithmetic, logic, comparison and selection: add, sub,
/// mul, mad, fma, div, rem, min, max, neg, abs, and/or/xor/not, copysign,
/// set, setp, selp, slct (Arith.cpp).
void populatePTXArithPatterns(mlir::RewritePatternSet &patterns, const PTXLoweringState &state);
/// The scalar and SIMD video instructions: vadd ... vset, vadd2 ... vset4
/// (Video.cpp).
void populatePTXVideoPatterns(mlir::RewritePatternSet &patterns, const PTXLoweringState &state);
/// mov, the packing moves, cvt and cvt.pack (Convert.cpp).
void populatePTXConvertPatterns(mlir::RewritePatternSet &patterns, const PTXLoweringState &state);
/// Special registers, and the instructions imported as `ptx.inst` (%envreg,
/// %pm, the tf32 conversions, the rejected rest) (SpecialRegisters.cpp).
void populatePTXSpecialRegisterPatterns(mlir::RewritePatternSet &patterns,
                                        const PTXLoweringState &state);
/// ld, st, ld.param, st.param, cvta, addresses of variables, isspacep,
/// prefetch and `.local` variables (Memory.cpp). Shared memory needs the
/// kernels' windows in the state's layout.
void populatePTXMemoryPatterns(mlir::RewritePatternSet &patterns, const PTXLoweringState &state);
/// atom and red (Atomics.cpp).
void populatePTXAtomicPatterns(mlir::RewritePatternSet &patterns, const PTXLoweringState &state);
/// Branches, ret, exit, trap, fences and the CTA barriers bar.sync,
/// bar.arrive and bar.red (Control.cpp).
void populatePTXControlPatterns(mlir::RewritePatternSet &patterns, const PTXLoweringState &state);
/// tex, tld4, txq, suld, sust and suq on texture and surface objects, the
/// driver's descriptors (Texture.cpp).
void populatePTXTexturePatterns(mlir::RewritePatternSet &patterns, const PTXLoweringState &state);
/// Direct calls of device functions (Calls.cpp; indirect calls are expanded
/// before the patterns run, expandIndirectCalls).
void populatePTXCallPatterns(mlir::RewritePatternSet &patterns, const PTXLoweringState &state);

} // namespace zmlir

#endif // ZMLIR_LOWERING_PATTERNS_H
