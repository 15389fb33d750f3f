//===- MatrixOps.cpp - wmma, mma.sync, ldmatrix ---------------------------===//
//
// Warp matrix multiply-accumulate on every target, from plain loads,
// stores and arithmetic, the lanes of a warp exchanging fragments through
// shared memory (wmma, mma.sync) or warp shuffles (ldmatrix's addresses).
//
// mma.sync and ldmatrix have the fragments PTX specifies lane by lane
// (MmaSyncOpLowering, LdmatrixOpLowering below); the rest of this comment
// is about wmma's.
//
// PTX leaves the distribution of a fragment's elements over the lanes
// unspecified (only wmma.load/store/mma and element-wise code touch a
// fragment), so the lowering picks one that is simple everywhere:
//  1. a fragment's matrix in row-major order (A is M x K, B K x N, C and D
//     M x N), whatever its layout in memory: wmma.mma ignores
//     .alayout/.blayout, the loads applied them;
//  2. lane L holds elements [L*E, (L+1)*E) of that order, E = rows*cols/32,
//     packed into its registers from the lowest bits (two f16 in a .b32, four
//     s8, one f32, ...); E divides the length of a row, so a lane's elements
//     are one piece of one row;
//  3. registers beyond those E fill (f16 A and B have 8, for 256 elements
//     of m16n16k16 or 128 of m8n32k16's A) repeat the first ones, as
//     NVIDIA's fragments hold elements more than once.
// wmma.load and wmma.store move each lane's E elements: one vector access
// where the matrix is stored .row, else one access per element. wmma.mma:
// see WmmaMmaOpLowering.
//
// Where the target has warp matrix instructions of its own for every wmma
// op of the module (TargetInfo::hasNativeWmma: NVPTX's tensor cores), the
// ops are those instead (NativeWmmaLowering), fragments in the target's
// distribution; one emulated op among them would read another's fragments
// in the wrong order, so it is all of a module's ops or none.
//
//===----------------------------------------------------------------------===//

#include "zmlir/dialects/ptx/WmmaFragment.h"
#include "zmlir/lowering/FloatRounding.h"
#include "zmlir/lowering/PTXLowering.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

using IP = arith::CmpIPredicate;

/// A barrier of the warp's lanes that orders their shared-memory accesses:
/// bar.warp.sync's (TargetInfo::emitNativeWarpSync), or a fence at the
/// warp's scope where the lanes of a warp run in lock step.
void syncWarp(OpBuilder &b, Location loc, const TargetInfo &target) {
  if (failed(target.emitNativeWarpSync(b, loc, intConst(b, loc, b.getI32Type(), -1))))
    LLVM::FenceOp::create(b, loc, LLVM::AtomicOrdering::acq_rel, target.warpFenceScope());
}

/// The fragment of a verified op (the verifier has checked it exists).
WmmaFragment fragmentOf(Operation *op, WmmaShape shape, WmmaMatrix matrix, WmmaType type) {
  std::optional<WmmaFragment> f = getWmmaFragment(op->getContext(), shape, matrix, type);
  assert(f && "verified wmma op");
  return *f;
}

/// An element of `bits` bits as the integer of that width, from the
/// 32-bit `words` (little-endian, element `index`).
Value elementBits(OpBuilder &b, Location loc, ArrayRef<Value> words, unsigned bits,
                  unsigned index) {
  mlir::Type i32 = b.getI32Type();
  if (bits == 64) {
    mlir::Type i64 = b.getI64Type();
    Value lo = arith::ExtUIOp::create(b, loc, i64, words[2 * index]);
    Value hi = arith::ExtUIOp::create(b, loc, i64, words[2 * index + 1]);
    hi = arith::ShLIOp::create(b, loc, hi, intConst(b, loc, i64, 32));
    return arith::OrIOp::create(b, loc, lo, hi);
  }
  unsigned perWord = 32 / bits;
  Value word = words[index / perWord];
  unsigned shift = (index % perWord) * bits;
  if (shift)
    word = arith::ShRUIOp::create(b, loc, word, intConst(b, loc, i32, shift));
  if (bits == 32)
    return word;
  return arith::TruncIOp::create(b, loc, b.getIntegerType(bits), word);
}

/// A register's 32-bit words (one for .b32 and .f32, two for .f64).
void appendWords(OpBuilder &b, Location loc, Value reg, SmallVectorImpl<Value> &words) {
  mlir::Type i32 = b.getI32Type();
  if (reg.getType().isF64()) {
    mlir::Type i64 = b.getI64Type();
    Value bits = arith::BitcastOp::create(b, loc, i64, reg);
    words.push_back(arith::TruncIOp::create(b, loc, i32, bits));
    words.push_back(arith::TruncIOp::create(
        b, loc, i32, arith::ShRUIOp::create(b, loc, bits, intConst(b, loc, i64, 32))));
    return;
  }
  words.push_back(asInteger(b, loc, reg));
}

/// Packs `elements` (integers of `bits` bits, lowest first) into registers
/// of `type`.
SmallVector<Value> packRegisters(OpBuilder &b, Location loc, ArrayRef<Value> elements,
                                 unsigned bits, mlir::Type type) {
  SmallVector<Value> regs;
  unsigned width = widthOf(type), perReg = width / bits;
  mlir::Type intType = b.getIntegerType(width);
  for (unsigned r = 0; r < elements.size() / perReg; ++r) {
    Value reg;
    for (unsigned j = 0; j < perReg; ++j) {
      Value e = elements[r * perReg + j];
      if (bits < width) {
        e = arith::ExtUIOp::create(b, loc, intType, e);
        if (j)
          e = arith::ShLIOp::create(b, loc, e, intConst(b, loc, intType, j * bits));
      }
      reg = j ? arith::OrIOp::create(b, loc, reg, e).getResult() : e;
    }
    regs.push_back(type.isInteger() ? reg
                                    : arith::BitcastOp::create(b, loc, type, reg).getResult());
  }
  return regs;
}

/// The registers of a fragment whose first `distinct` registers are
/// `regs`: the rest repeat them (point 3 above).
SmallVector<Value> replicate(ArrayRef<Value> regs, unsigned registers) {
  SmallVector<Value> all;
  for (unsigned i = 0; i < registers; ++i)
    all.push_back(regs[i % regs.size()]);
  return all;
}

//===----------------------------------------------------------------------===//
// wmma.load and wmma.store
//===----------------------------------------------------------------------===//

/// What a lane accesses of a fragment's matrix in memory: the element offset
/// of each of its E elements, or of the first when they are contiguous.
struct LaneAccess {
  WmmaFragment fragment;
  bool contiguous;
  /// Element offsets from the matrix's address, as i64.
  SmallVector<Value> offsets;
};

LaneAccess laneAccess(OpBuilder &b, Location loc, const TargetInfo &target, const WmmaFragment &f,
                      WmmaMatrix matrix, WmmaLayout layout, Value strideOperand) {
  mlir::Type i64 = b.getI64Type();
  auto cst = [&](int64_t v) { return intConst(b, loc, i64, v); };
  // The canonical order is row-major: a lane's elements are contiguous in
  // memory when the matrix is stored .row.
  LaneAccess access{f, layout == WmmaLayout::Row, {}};
  unsigned lineLength = f.cols;
  // The matrix's leading dimension in memory: `stride`, by default the
  // length of a row (.row) or column (.col).
  Value stride = strideOperand ? arith::ExtUIOp::create(b, loc, i64, strideOperand).getResult()
                               : cst(layout == WmmaLayout::Row ? f.cols : f.rows);
  unsigned perLane = f.elementsPerLane();
  Value lane = arith::ExtUIOp::create(b, loc, i64, warpLane(b, loc, target));
  // The lane's elements are one piece of canonical line lane*E / length.
  Value first = arith::MulIOp::create(b, loc, lane, cst(perLane));
  Value line = arith::DivUIOp::create(b, loc, first, cst(lineLength));
  Value pos = arith::RemUIOp::create(b, loc, first, cst(lineLength));
  // Rows (.row) or columns (.col) are `stride` elements apart.
  bool lineIsMemoryLine = access.contiguous;
  for (unsigned e = 0; e < (access.contiguous ? 1 : perLane); ++e) {
    Value at = e ? arith::AddIOp::create(b, loc, pos, cst(e)).getResult() : pos;
    Value offset = lineIsMemoryLine
                       ? arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, line, stride),
                                               at)
                             .getResult()
                       : arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, at, stride),
                                               line)
                             .getResult();
    access.offsets.push_back(offset);
  }
  return access;
}

template <typename OpTy>
struct WmmaAccessLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  /// A pointer to the element at `offset` (elements of `bytes` bytes) from
  /// the op's address.
  FailureOr<Value> elementPointer(OpTy op, OpBuilder &b, Value addr, Value offset,
                                  unsigned bytes) const {
    Location loc = op.getLoc();
    mlir::Type i64 = b.getI64Type();
    Value wide = addr.getType() == i64 ? addr : arith::ExtUIOp::create(b, loc, i64, addr);
    Value byteOffset = arith::MulIOp::create(b, loc, offset, intConst(b, loc, i64, bytes));
    wide = arith::AddIOp::create(b, loc, wide, byteOffset);
    return this->pointerTo(op, b, wide, op.getOffset(), op.getSpace());
  }
};

struct WmmaLoadOpLowering : WmmaAccessLowering<WmmaLoadOp> {
  using WmmaAccessLowering::WmmaAccessLowering;

  LogicalResult matchAndRewrite(WmmaLoadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    WmmaFragment f = fragmentOf(op, op.getShape(), op.getMatrix(), op.getType());
    LaneAccess access = laneAccess(rewriter, loc, state.target, f, op.getMatrix(), op.getLayout(),
                                   adaptor.getStride());
    unsigned bytes = f.elementBits / 8;
    unsigned distinct = f.distinctRegisters();
    SmallVector<Value> regs;
    if (access.contiguous) {
      FailureOr<Value> ptr = elementPointer(op, rewriter, adaptor.getAddr(), access.offsets.front(),
                                            bytes);
      if (failed(ptr))
        return failure();
      auto vecType = VectorType::get({distinct}, f.registerType);
      Value v = LLVM::LoadOp::create(rewriter, loc, vecType, *ptr, bytes);
      for (unsigned i = 0; i < distinct; ++i)
        regs.push_back(LLVM::ExtractElementOp::create(
            rewriter, loc, v, intConst(rewriter, loc, rewriter.getI32Type(), i)));
    } else {
      mlir::Type elementType = f.elementBits == f.registerBits()
                                   ? f.registerType
                                   : mlir::Type(rewriter.getIntegerType(f.elementBits));
      SmallVector<Value> elements;
      for (Value offset : access.offsets) {
        FailureOr<Value> ptr = elementPointer(op, rewriter, adaptor.getAddr(), offset, bytes);
        if (failed(ptr))
          return failure();
        elements.push_back(LLVM::LoadOp::create(rewriter, loc, elementType, *ptr, bytes));
      }
      if (elementType == f.registerType)
        regs = elements;
      else
        regs = packRegisters(rewriter, loc, elements, f.elementBits, f.registerType);
    }
    rewriter.replaceOp(op, replicate(regs, f.registers));
    return success();
  }
};

struct WmmaStoreOpLowering : WmmaAccessLowering<WmmaStoreOp> {
  using WmmaAccessLowering::WmmaAccessLowering;

  LogicalResult matchAndRewrite(WmmaStoreOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    WmmaFragment f = fragmentOf(op, op.getShape(), WmmaMatrix::D, op.getType());
    LaneAccess access = laneAccess(rewriter, loc, state.target, f, WmmaMatrix::D, op.getLayout(),
                                   adaptor.getStride());
    unsigned bytes = f.elementBits / 8;
    unsigned distinct = f.distinctRegisters();
    ValueRange regs = adaptor.getFragment();
    if (access.contiguous) {
      FailureOr<Value> ptr = elementPointer(op, rewriter, adaptor.getAddr(), access.offsets.front(),
                                            bytes);
      if (failed(ptr))
        return failure();
      auto vecType = VectorType::get({distinct}, f.registerType);
      Value v = LLVM::PoisonOp::create(rewriter, loc, vecType);
      for (unsigned i = 0; i < distinct; ++i)
        v = LLVM::InsertElementOp::create(rewriter, loc, v, regs[i],
                                          intConst(rewriter, loc, rewriter.getI32Type(), i));
      LLVM::StoreOp::create(rewriter, loc, v, *ptr, bytes);
      rewriter.eraseOp(op);
      return success();
    }
    SmallVector<Value> words;
    for (Value reg : regs.take_front(distinct))
      appendWords(rewriter, loc, reg, words);
    for (auto [e, offset] : llvm::enumerate(access.offsets)) {
      FailureOr<Value> ptr = elementPointer(op, rewriter, adaptor.getAddr(), offset, bytes);
      if (failed(ptr))
        return failure();
      Value element = f.elementBits == f.registerBits()
                          ? regs[e]
                          : elementBits(rewriter, loc, words, f.elementBits, e);
      LLVM::StoreOp::create(rewriter, loc, element, *ptr, bytes);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// wmma.mma
//===----------------------------------------------------------------------===//

/// The form of a wmma.mma, which names its function.
struct MmaForm {
  WmmaShape shape;
  WmmaType atype, btype, ctype, dtype;
  bool satfinite;
  Rounding rnd;

  explicit MmaForm(WmmaMmaOp op)
      : shape(op.getShape()), atype(op.getAtype()), btype(op.getBtype()), ctype(op.getCtype()),
        dtype(op.getDtype()), satfinite(op.getSatfinite()), rnd(op.getRnd()) {}

  std::string functionName() const {
    std::string name = "__zmlir_wmma_mma_";
    name += stringifyWmmaShape(shape);
    for (WmmaType t : {dtype, atype, btype, ctype})
      name += ("_" + stringifyWmmaType(t)).str();
    if (satfinite)
      name += "_satfinite";
    if (rnd != Rounding::None && rnd != Rounding::RN)
      name += ("_" + stringifyRounding(rnd)).str();
    return name;
  }
};

/// The fragments of a form's A, B, C and D, and where its exchange area
/// (below) keeps the lanes' registers of A and B.
struct MmaLayout {
  WmmaFragment a, b, c, d;
  WmmaDims dims;
  /// Bytes of the A part of a warp's exchange area, and of the whole.
  int64_t aBytes, warpBytes;

  MmaLayout(MLIRContext *ctx, const MmaForm &form)
      : a(*getWmmaFragment(ctx, form.shape, WmmaMatrix::A, form.atype)),
        b(*getWmmaFragment(ctx, form.shape, WmmaMatrix::B, form.btype)),
        c(*getWmmaFragment(ctx, form.shape, WmmaMatrix::C, form.ctype)),
        d(*getWmmaFragment(ctx, form.shape, WmmaMatrix::D, form.dtype)),
        dims(getWmmaDims(form.shape)) {
    aBytes = 32 * a.distinctRegisters() * a.registerBits() / 8;
    warpBytes = llvm::alignTo(aBytes + 32 * b.distinctRegisters() * b.registerBits() / 8, 16);
  }
};

/// The type a multiplicand's elements have in memory: f16 and f64 as
/// such, bf16 and tf32 as their bits (i16, i32), s8/u8 as i8.
mlir::Type multiplicandMemoryType(OpBuilder &b, WmmaType type) {
  switch (type) {
  case WmmaType::F16:
    return b.getF16Type();
  case WmmaType::F64:
    return b.getF64Type();
  default:
    return b.getIntegerType(getWmmaTypeBitWidth(type));
  }
}

/// A vector of multiplicand elements (as multiplicandMemoryType) widened
/// to the type the products are taken in: f32 for f16, bf16 and tf32
/// (which keeps its upper 19 bits, as the tensor cores read them), i32 for
/// s8/u8, f64 for f64. The products of these are exact.
Value widenMultiplicands(OpBuilder &b, Location loc, Value v, WmmaType type) {
  auto shaped = [&](mlir::Type element) {
    return VectorType::get(cast<VectorType>(v.getType()).getShape(), element);
  };
  mlir::Type i32 = shaped(b.getI32Type()), f32 = shaped(b.getF32Type());
  auto splat = [&](mlir::Type t, int64_t value) -> Value {
    return arith::ConstantOp::create(
        b, loc, t, DenseElementsAttr::get(cast<ShapedType>(t), b.getI32IntegerAttr(value)));
  };
  switch (type) {
  case WmmaType::F16:
    return arith::ExtFOp::create(b, loc, f32, v);
  case WmmaType::BF16: {
    Value wide = arith::ExtUIOp::create(b, loc, i32, v);
    wide = arith::ShLIOp::create(b, loc, wide, splat(i32, 16));
    return arith::BitcastOp::create(b, loc, f32, wide);
  }
  case WmmaType::TF32: {
    Value kept = arith::AndIOp::create(b, loc, v, splat(i32, ~0x1fff));
    return arith::BitcastOp::create(b, loc, f32, kept);
  }
  case WmmaType::S8:
    return arith::ExtSIOp::create(b, loc, i32, v);
  case WmmaType::U8:
    return arith::ExtUIOp::create(b, loc, i32, v);
  case WmmaType::F64:
    return v;
  default:
    llvm_unreachable("not a multiplicand type");
  }
}

/// The float vector `x` (f16 or f32 elements) clamped to its type's finite
/// range, NaN to +0 (.satfinite: ±Inf become ±MAX_NORM).
Value saturateFinite(OpBuilder &b, Location loc, Value x) {
  using FP = arith::CmpFPredicate;
  auto type = cast<VectorType>(x.getType());
  mlir::Type element = type.getElementType();
  double max = element.isF16() ? 65504.0 : 3.4028234663852886e38;
  auto splat = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, type,
                                     DenseElementsAttr::get(type, b.getFloatAttr(element, v)));
  };
  Value isNaN = arith::CmpFOp::create(b, loc, FP::UNO, x, x);
  Value r = arith::SelectOp::create(b, loc, arith::CmpFOp::create(b, loc, FP::OGT, x, splat(max)),
                                    splat(max), x);
  r = arith::SelectOp::create(b, loc, arith::CmpFOp::create(b, loc, FP::OLT, r, splat(-max)),
                              splat(-max), r);
  return arith::SelectOp::create(b, loc, isNaN, splat(0.0), r);
}

/// The body of a form's function, run by each lane with the warp's exchange
/// area, which holds all lanes' registers of A and B (so the canonical A
/// and B, row-major) and this lane's registers of C; it returns the lane's
/// registers of D. Unlike mma.sync's (buildMmaSyncFunction), it reads the
/// lane itself: that sub-group operation keeps Intel's CPU compiler from
/// vectorizing the function over work-items; with the lane an argument,
/// cudaTensorCoreGemm (2053 calls) ran over 15 minutes, not 4, in its build:
///  1. the lane's D elements are row r, columns c0 .. c0+E-1 (E consecutive
///     canonical elements);
///  2. it reads row r of A (K elements) and, for each k, B[k][c0 .. c0+E-1]
///     (E consecutive elements of B), and widens them;
///  3. from its C elements, acc[0..E) = fma(A[r][k], B[k][c0..], acc) for
///     k = 0, 1, ..., K-1, as vectors (f32 for f16/bf16/tf32 inputs, whose
///     products are exact in f32; f64; s32 for s8/u8, wrapping, or with
///     .satfinite summed apart and added to C saturating);
///  4. D: narrowed to f16, clamped (.satfinite), packed into registers.
SmallVector<Value> buildMmaFunction(OpBuilder &b, Location loc, const PTXLoweringState &state,
                                    const MmaForm &form, const MmaLayout &l, Value area,
                                    ValueRange c) {
  mlir::Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto cst = [&](int64_t v) { return intConst(b, loc, i32, v); };
  unsigned perLane = l.d.elementsPerLane();
  WmmaDims dims = l.dims;
  // 1.
  Value lane = warpLane(b, loc, state.target);
  Value first = arith::MulIOp::create(b, loc, lane, cst(perLane));
  Value row = arith::DivUIOp::create(b, loc, first, cst(dims.n));
  Value col0 = arith::RemUIOp::create(b, loc, first, cst(dims.n));
  // 2.
  auto loadElements = [&](Value element, int64_t base, WmmaType type, unsigned count) {
    mlir::Type memType = multiplicandMemoryType(b, type);
    unsigned bytes = getWmmaTypeBitWidth(type) / 8;
    Value offset = arith::MulIOp::create(b, loc, element, cst(bytes));
    if (base)
      offset = arith::AddIOp::create(b, loc, offset, cst(base));
    Value ptr = LLVM::GEPOp::create(b, loc, area.getType(), b.getI8Type(), area,
                                    ValueRange{offset});
    Value v = LLVM::LoadOp::create(b, loc, VectorType::get({count}, memType), ptr, bytes);
    return widenMultiplicands(b, loc, v, type);
  };
  Value aRow = loadElements(arith::MulIOp::create(b, loc, row, cst(dims.k)), 0, form.atype, dims.k);
  // 3.
  bool isInt = form.ctype == WmmaType::S32;
  mlir::Type accType = isInt ? i32 : form.ctype == WmmaType::F64 ? b.getF64Type() : b.getF32Type();
  auto accVector = VectorType::get({perLane}, accType);
  SmallVector<Value> cWords;
  if (form.ctype == WmmaType::F16)
    for (Value reg : c)
      appendWords(b, loc, reg, cWords);
  Value cVector = LLVM::PoisonOp::create(b, loc, accVector);
  for (unsigned j = 0; j < perLane; ++j) {
    Value e = c[j % c.size()];
    if (form.ctype == WmmaType::F16)
      e = arith::ExtFOp::create(
          b, loc, accType,
          arith::BitcastOp::create(b, loc, b.getF16Type(), elementBits(b, loc, cWords, 16, j))
              .getResult());
    cVector = LLVM::InsertElementOp::create(b, loc, cVector, e, cst(j));
  }
  Value acc = cVector;
  if (isInt && form.satfinite)
    acc = arith::ConstantOp::create(b, loc, accVector,
                                    DenseElementsAttr::get(accVector, b.getI32IntegerAttr(0)));
  for (unsigned k = 0; k < dims.k; ++k) {
    Value element = arith::AddIOp::create(b, loc, col0, cst(k * dims.n));
    Value bRow = loadElements(element, l.aBytes, form.btype, perLane);
    Value aK = splatVector(b, loc, LLVM::ExtractElementOp::create(b, loc, aRow, cst(k)).getResult(),
                           perLane);
    if (isInt) {
      acc = arith::AddIOp::create(b, loc, acc, arith::MulIOp::create(b, loc, aK, bRow));
    } else if (isDirected(form.rnd)) {
      for (unsigned j = 0; j < perLane; ++j) {
        auto at = [&](Value v) {
          return LLVM::ExtractElementOp::create(b, loc, v, cst(j)).getResult();
        };
        Value r = directedRounding(b, loc, state, "fma", {at(aK), at(bRow), at(acc)}, form.rnd,
                                   /*ftz=*/false);
        acc = LLVM::InsertElementOp::create(b, loc, acc, r, cst(j));
      }
    } else {
      acc = math::FmaOp::create(b, loc, aK, bRow, acc);
    }
  }
  // 4.
  Value d = acc;
  if (isInt && form.satfinite) {
    auto wide = VectorType::get({perLane}, i64);
    auto splat = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(b, loc, wide,
                                       DenseElementsAttr::get(wide, b.getI64IntegerAttr(v)));
    };
    Value sum = arith::AddIOp::create(b, loc, arith::ExtSIOp::create(b, loc, wide, cVector),
                                      arith::ExtSIOp::create(b, loc, wide, acc));
    sum = arith::MaxSIOp::create(b, loc, sum, splat(INT32_MIN));
    sum = arith::MinSIOp::create(b, loc, sum, splat(INT32_MAX));
    d = arith::TruncIOp::create(b, loc, accVector, sum);
  }
  if (form.dtype == WmmaType::F16)
    d = arith::TruncFOp::create(b, loc, VectorType::get({perLane}, b.getF16Type()), d);
  if (form.satfinite && !isInt)
    d = saturateFinite(b, loc, d);
  mlir::Type regType = l.d.registerType;
  unsigned regs = l.d.registers;
  auto regVector = VectorType::get({regs}, regType);
  if (d.getType() != regVector)
    d = LLVM::BitcastOp::create(b, loc, regVector, d);
  SmallVector<Value> dRegs;
  for (unsigned i = 0; i < regs; ++i)
    dRegs.push_back(LLVM::ExtractElementOp::create(b, loc, d, cst(i)));
  return dRegs;
}

/// The warp's part of its kernel's exchange area (reserveWmmaScratch) in
/// the shared window `window`, as a pointer; null where `op` is in no
/// kernel with such an area. The warp is the target's index of it
/// (TargetInfo::warpInBlock), else the linear thread index / 32.
Value warpExchangeArea(OpBuilder &b, Operation *op, const PTXLoweringState &state, Value window) {
  auto kernel = op->getParentOfType<gpu::GPUFuncOp>();
  auto scratch = kernel ? state.wmmaScratch.find(kernel) : state.wmmaScratch.end();
  if (!window || scratch == state.wmmaScratch.end())
    return {};
  Location loc = op->getLoc();
  mlir::Type i32 = b.getI32Type(), i64 = b.getI64Type();
  Value warp = state.target.warpInBlock(b, loc);
  if (!warp) {
    auto dim = [&](Value index) {
      return arith::IndexCastUIOp::create(b, loc, i32, index).getResult();
    };
    Value tx = dim(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
    Value ty = dim(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::y));
    Value tz = dim(gpu::ThreadIdOp::create(b, loc, gpu::Dimension::z));
    Value nx = dim(gpu::BlockDimOp::create(b, loc, gpu::Dimension::x));
    Value ny = dim(gpu::BlockDimOp::create(b, loc, gpu::Dimension::y));
    Value yz = arith::AddIOp::create(b, loc, ty, arith::MulIOp::create(b, loc, ny, tz));
    Value linear = arith::AddIOp::create(b, loc, tx, arith::MulIOp::create(b, loc, nx, yz));
    warp = arith::DivUIOp::create(b, loc, linear, intConst(b, loc, i32, 32));
  }
  auto [areaOffset, warpBytes] = scratch->second;
  Value offset = arith::AddIOp::create(
      b, loc, intConst(b, loc, i64, areaOffset),
      arith::MulIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i64, warp),
                            intConst(b, loc, i64, warpBytes)));
  return LLVM::GEPOp::create(b, loc, window.getType(), b.getI8Type(), window, ValueRange{offset});
}

/// A call of the module's function `name` (internal, never inlined) with
/// `args`, returning `resultTypes` (as a struct); `body` builds its body
/// from its arguments the first time a module asks for it. The results.
SmallVector<Value>
callFormFunction(OpBuilder &b, Location loc, gpu::GPUModuleOp module, StringRef name,
                 ValueRange args, TypeRange resultTypes,
                 llvm::function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> body) {
  MLIRContext *ctx = b.getContext();
  auto resultType = LLVM::LLVMStructType::getLiteral(ctx, SmallVector<mlir::Type>(resultTypes));
  auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
  if (!fn) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    SmallVector<mlir::Type> argTypes(args.getTypes());
    fn = LLVM::LLVMFuncOp::create(b, loc, name, LLVM::LLVMFunctionType::get(resultType, argTypes),
                                  LLVM::Linkage::Internal);
    fn.setNoInline(true);
    SmallVector<Location> locs(argTypes.size(), loc);
    Block *entry = b.createBlock(&fn.getBody(), {}, argTypes, locs);
    b.setInsertionPointToStart(entry);
    SmallVector<Value> d = body(b, entry->getArguments());
    Value result = LLVM::PoisonOp::create(b, loc, resultType);
    for (auto [i, v] : llvm::enumerate(d))
      result = LLVM::InsertValueOp::create(b, loc, result, v, i);
    LLVM::ReturnOp::create(b, loc, result);
  }
  auto call = LLVM::CallOp::create(b, loc, fn, args);
  SmallVector<Value> results;
  for (unsigned i = 0; i < resultTypes.size(); ++i)
    results.push_back(LLVM::ExtractValueOp::create(b, loc, call.getResult(), i));
  return results;
}

/// wmma.mma, in four steps of the warp's lanes:
///  1. each lane writes its registers of A and of B (those with distinct
///     elements) to the warp's part of the kernel's exchange area
///     (reserveWmmaScratch), lane L's after lane L-1's, so that the area
///     holds the canonical A and then B;
///  2. the warp synchronizes (syncWarp);
///  3. each lane calls the function of the form (buildMmaFunction, one body
///     per form in the module) with the area and its registers of C;
///  4. the warp synchronizes again, so that no lane's next wmma.mma writes
///     over what another still reads.
/// Why memory and a function: a warp shuffle with a lane index that differs
/// between lanes is a loop over the 32 lanes in Intel's OpenCL CPU runtime
/// (hundreds of cycles, and slow to build), inlined code for each of the
/// thousands of wmma.mma of an unrolled kernel took it over 15 minutes to
/// build, and it emulates sub-groups in a function that holds sub-group
/// operations and is not inlined (a build of two calls: 60 s, 17 GB). With
/// this call the kernel's work-items run one after another between its
/// sub-group barriers there, which the two barriers make correct
/// (cudaTensorCoreGemm's 2053 wmma.mma: 74 s to build, 1.4 us a wmma.mma).
struct WmmaMmaOpLowering : PTXPattern<WmmaMmaOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(WmmaMmaOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    MmaForm form(op);
    MmaLayout l(ctx, form);
    auto module = op->getParentOfType<gpu::GPUModuleOp>();
    Value area = warpExchangeArea(rewriter, op, state, sharedWindow(op));
    if (!area)
      return unsupported(op, "'wmma.mma' in a '.func' (only kernels have a shared window to "
                             "exchange fragments in)");
    mlir::Type i32 = rewriter.getI32Type();
    // 1.
    Value lane = warpLane(rewriter, loc, state.target);
    auto storeRegisters = [&](ValueRange regs, const WmmaFragment &f, int64_t base) {
      unsigned n = f.distinctRegisters();
      Value v = LLVM::PoisonOp::create(rewriter, loc, VectorType::get({n}, f.registerType));
      for (unsigned i = 0; i < n; ++i)
        v = LLVM::InsertElementOp::create(rewriter, loc, v, regs[i],
                                          intConst(rewriter, loc, i32, i));
      unsigned bytes = n * f.registerBits() / 8;
      Value at = arith::MulIOp::create(rewriter, loc, lane, intConst(rewriter, loc, i32, bytes));
      if (base)
        at = arith::AddIOp::create(rewriter, loc, at, intConst(rewriter, loc, i32, base));
      Value ptr = LLVM::GEPOp::create(rewriter, loc, area.getType(), rewriter.getI8Type(), area,
                                      ValueRange{at});
      LLVM::StoreOp::create(rewriter, loc, v, ptr, f.registerBits() / 8);
    };
    storeRegisters(adaptor.getA(), l.a, 0);
    storeRegisters(adaptor.getB(), l.b, l.aBytes);
    // 2.
    syncWarp(rewriter, loc, state.target);
    // 3.
    SmallVector<Value> args{area};
    llvm::append_range(args, adaptor.getC());
    SmallVector<Value> results = callFormFunction(
        rewriter, loc, module, form.functionName(), args, op.getD().getTypes(),
        [&](OpBuilder &b, ValueRange fnArgs) {
          return buildMmaFunction(b, loc, state, form, l, fnArgs[0], fnArgs.drop_front());
        });
    // 4.
    syncWarp(rewriter, loc, state.target);
    rewriter.replaceOp(op, results);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The target's own instructions
//===----------------------------------------------------------------------===//

/// wmma.load, wmma.store and wmma.mma as the target's own instructions
/// (TargetInfo::emitNativeWmma), the address as a pointer in the op's state
/// space.
template <typename OpTy>
struct NativeWmmaLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Value ptr;
    SmallVector<Value> args;
    if constexpr (std::is_same_v<OpTy, WmmaMmaOp>) {
      llvm::append_range(args, adaptor.getA());
      llvm::append_range(args, adaptor.getB());
      llvm::append_range(args, adaptor.getC());
    } else {
      FailureOr<Value> p = this->pointerTo(op, rewriter, adaptor.getAddr(), op.getOffset(),
                                           op.getSpace());
      if (failed(p))
        return failure();
      ptr = *p;
      if constexpr (std::is_same_v<OpTy, WmmaStoreOp>)
        llvm::append_range(args, adaptor.getFragment());
      if (Value stride = adaptor.getStride())
        args.push_back(stride);
    }
    FailureOr<SmallVector<Value>> results = this->state.target.emitNativeWmma(rewriter, op, ptr,
                                                                              args);
    if (failed(results))
      return this->unsupported(op, "wmma form on this target");
    rewriter.replaceOp(op, *results);
    return success();
  }
};

/// The number of the first `sm_XX` of the module's `.target`, 0 if none.
unsigned targetSm(ModuleOp module) {
  auto targets = module->getAttrOfType<ArrayAttr>("ptx.target");
  if (!targets)
    return 0;
  for (auto name : targets.getAsRange<StringAttr>()) {
    StringRef rest = name.getValue();
    unsigned sm;
    if (rest.consume_front("sm_") && !rest.take_while(llvm::isDigit).getAsInteger(10, sm))
      return sm;
  }
  return 0;
}

//===----------------------------------------------------------------------===//
// mma.sync and ldmatrix
//===----------------------------------------------------------------------===//

/// Whether `op` (a ptx.mma_sync or ptx.ldmatrix) is the target's own
/// instruction in the PTX's architecture. Their fragments are PTX's own, so
/// each op decides for itself.
bool nativeWarpMatrixOp(Operation *op, const TargetInfo &target) {
  return target.hasNativeWmma(op, targetSm(op->getParentOfType<ModuleOp>()));
}

/// What mma.sync's emulation keeps in a warp's exchange area: A row-major
/// (M x K) from byte 0, B column-major (N x K) from byte aBytes.
struct MmaSyncLayout {
  MmaSyncForm form;
  unsigned elementBytes;
  int64_t aBytes, warpBytes;

  explicit MmaSyncLayout(MmaSyncOp op)
      : form(*getMmaSyncForm(op.getContext(), op.getShape(), op.getAtype(), op.getBtype(),
                             op.getCtype(), op.getDtype())) {
    elementBytes = form.elementBits / 8;
    aBytes = form.m * form.k * elementBytes;
    warpBytes = llvm::alignTo(aBytes + form.n * form.k * elementBytes, 16);
  }
};

/// The function name of an mma.sync form.
std::string mmaSyncFunctionName(MmaSyncOp op) {
  return ("__zmlir_mma_sync_" + stringifyMmaShape(op.getShape()) + "_" +
          stringifyWmmaType(op.getDtype()) + "_" + stringifyWmmaType(op.getAtype()) + "_" +
          stringifyWmmaType(op.getBtype()) + "_" + stringifyWmmaType(op.getCtype()))
      .str();
}

/// The body of an mma.sync form's function, run by each lane with the
/// warp's exchange area (A row-major, B column-major: MmaSyncLayout), its
/// lane and its registers of C; it returns its registers of D. The lane is
/// an argument: a function that reads it itself holds a sub-group
/// operation, and Intel's CPU compiler, emulating sub-groups across its
/// calls, then lost values the calling kernel kept across them (cuBLAS's
/// tf32 GEMM skipped every store of its epilogue).
///  1. with g = lane / 4 and t = lane % 4, D's element i is (g + 8 * (i /
///     2), 2 * t + i % 2) (m8n8k4: (g, 2 * t + i)), as C's;
///  2. it reads the rows of A and the columns of B those need (K elements
///     each), widened (f16, bf16 and tf32 to f32, whose products are then
///     exact; tf32 keeps its upper 19 bits, as the tensor cores read them);
///  3. d = fma(A[r][k], B[k][c], d) from d = c, k = 0, 1, ..., K - 1, in f32
///     where C or D is f16 (C's pairs unpacked and widened, D rounded to
///     nearest once at the end and packed). An H100's f16 results differ
///     from these in 179 of 524288 random elements, from the exact sum
///     rounded once in 40; sums in f64 would be nearer, at twice the time
///     on the CPU (CuTe's sgemm_sm80: 10.0 ms a GEMM against 5.0).
SmallVector<Value> buildMmaSyncFunction(OpBuilder &b, Location loc, MmaSyncOp op,
                                        const MmaSyncLayout &l, Value area, Value lane,
                                        ValueRange c) {
  IntArithBuilder ib{b, loc};
  const MmaSyncForm &f = l.form;
  mlir::Type f16Pair = VectorType::get({2}, b.getF16Type());
  // 1.
  Value g = ib.shrui(lane, ib.c32(2)), t = ib.andi(lane, ib.c32(3));
  // 2.
  auto loadLine = [&](Value line, int64_t base) {
    mlir::Type memType = multiplicandMemoryType(b, op.getAtype());
    Value at = ib.muli(line, ib.c32(f.k * l.elementBytes));
    if (base)
      at = ib.addi(at, ib.c32(base));
    Value ptr = LLVM::GEPOp::create(b, loc, area.getType(), b.getI8Type(), area, ValueRange{at});
    Value v = LLVM::LoadOp::create(b, loc, VectorType::get({f.k}, memType), ptr, l.elementBytes);
    return widenMultiplicands(b, loc, v, op.getAtype());
  };
  Value aRows[2], bCols[2];
  for (unsigned h = 0; h < 2; ++h) {
    aRows[h] = f.accumulators == 4 || h == 0 ? loadLine(h ? ib.addi(g, ib.c32(8)) : g, 0) : Value();
    Value col = ib.addi(ib.muli(t, ib.c32(2)), ib.c32(h));
    bCols[h] = loadLine(col, l.aBytes);
  }
  // 3.
  SmallVector<Value> cElements;
  for (Value reg : c) {
    if (!reg.getType().isInteger(32)) {
      cElements.push_back(reg);
      continue;
    }
    Value pair = LLVM::BitcastOp::create(b, loc, f16Pair, reg);
    for (int64_t half = 0; half < 2; ++half)
      cElements.push_back(arith::ExtFOp::create(
          b, loc, b.getF32Type(),
          LLVM::ExtractElementOp::create(b, loc, pair, ib.c32(half)).getResult()));
  }
  SmallVector<Value> dElements;
  for (unsigned i = 0; i < f.accumulators; ++i) {
    Value aRow = aRows[f.accumulators == 4 ? i / 2 : 0], bCol = bCols[i % 2];
    Value acc = cElements[i];
    for (unsigned k = 0; k < f.k; ++k) {
      Value kIndex = ib.c32(k);
      acc = math::FmaOp::create(b, loc, LLVM::ExtractElementOp::create(b, loc, aRow, kIndex),
                                LLVM::ExtractElementOp::create(b, loc, bCol, kIndex), acc);
    }
    dElements.push_back(acc);
  }
  if (!f.dType.isInteger(32))
    return dElements;
  SmallVector<Value> d;
  for (unsigned j = 0; j < f.accumulators / 2; ++j) {
    Value pair = LLVM::UndefOp::create(b, loc, f16Pair);
    for (int64_t half = 0; half < 2; ++half)
      pair = LLVM::InsertElementOp::create(
          b, loc, pair, arith::TruncFOp::create(b, loc, b.getF16Type(), dElements[2 * j + half]),
          ib.c32(half));
    d.push_back(LLVM::BitcastOp::create(b, loc, b.getI32Type(), pair));
  }
  return d;
}

/// mma.sync off the target's own instruction, in the four steps of
/// wmma.mma's emulation (WmmaMmaOpLowering), the fragments PTX's:
///  1. each lane writes each register of A and of B where its elements lie
///     in A row-major and B column-major (MmaSyncForm: a register's elements
///     are consecutive along K in both);
///  2. the warp synchronizes;
///  3. each lane calls the form's function (buildMmaSyncFunction) with the
///     area and its registers of C;
///  4. the warp synchronizes again.
struct MmaSyncOpLowering : PTXPattern<MmaSyncOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(MmaSyncOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (nativeWarpMatrixOp(op, state.target)) {
      SmallVector<Value> args(adaptor.getA());
      llvm::append_range(args, adaptor.getB());
      llvm::append_range(args, adaptor.getC());
      FailureOr<SmallVector<Value>> d = state.target.emitNativeWmma(rewriter, op, Value(), args);
      if (failed(d))
        return unsupported(op, "'mma.sync' form on this target");
      rewriter.replaceOp(op, *d);
      return success();
    }
    MmaSyncLayout l(op);
    const MmaSyncForm &f = l.form;
    Value area = warpExchangeArea(rewriter, op, state, sharedWindow(op));
    if (!area)
      return unsupported(op, "'mma.sync' in a '.func' (only kernels have a shared window to "
                             "exchange fragments in)");
    IntArithBuilder ib{rewriter, loc};
    // 1.
    Value lane = warpLane(rewriter, loc, state.target);
    Value g = ib.shrui(lane, ib.c32(2)), t = ib.andi(lane, ib.c32(3));
    unsigned perRegister = f.elementsPerRegister();
    Value tElements = ib.muli(t, ib.c32(perRegister));
    auto store = [&](Value reg, Value line, Value along, int64_t base) {
      Value at = ib.muli(ib.addi(ib.muli(line, ib.c32(f.k)), along), ib.c32(l.elementBytes));
      if (base)
        at = ib.addi(at, ib.c32(base));
      Value ptr = LLVM::GEPOp::create(rewriter, loc, area.getType(), rewriter.getI8Type(), area,
                                      ValueRange{at});
      LLVM::StoreOp::create(rewriter, loc, reg, ptr, widthOf(reg.getType()) / 8);
    };
    for (auto [i, reg] : llvm::enumerate(adaptor.getA())) {
      Value row = i % 2 ? ib.addi(g, ib.c32(8)) : g;
      Value col = i / 2 ? ib.addi(tElements, ib.c32(f.k / 2 * (i / 2))) : tElements;
      store(reg, row, col, 0);
    }
    for (auto [i, reg] : llvm::enumerate(adaptor.getB()))
      store(reg, g, i ? ib.addi(tElements, ib.c32(f.k / 2 * i)) : tElements, l.aBytes);
    // 2.
    syncWarp(rewriter, loc, state.target);
    // 3.
    SmallVector<Value> args{area, lane};
    llvm::append_range(args, adaptor.getC());
    SmallVector<Value> d = callFormFunction(
        rewriter, loc, op->getParentOfType<gpu::GPUModuleOp>(), mmaSyncFunctionName(op), args,
        op.getD().getTypes(), [&](OpBuilder &b, ValueRange fnArgs) {
          return buildMmaSyncFunction(b, loc, op, l, fnArgs[0], fnArgs[1], fnArgs.drop_front(2));
        });
    // 4.
    syncWarp(rewriter, loc, state.target);
    rewriter.replaceOp(op, d);
    return success();
  }
};

/// ldmatrix off the target's own instruction: lane t gets, of matrix i,
///  1. without .trans, the row address lane 8 * i + t / 4 holds (a warp
///     shuffle, TargetInfo::readLane; a 64-bit address as two 32-bit
///     halves) and the 32-bit word 4 * (t % 4) bytes into that row:
///     elements (t / 4, 2 * (t % 4)) and (t / 4, 2 * (t % 4) + 1);
///  2. with .trans, the row addresses of lanes 8 * i + 2 * (t % 4) and
///     8 * i + 2 * (t % 4) + 1 and the 16-bit element 2 * (t / 4) bytes
///     into each: elements (2 * (t % 4), t / 4) and (2 * (t % 4) + 1, t / 4),
///     the first in the low half.
struct LdmatrixOpLowering : PTXPattern<LdmatrixOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(LdmatrixOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value addr = adaptor.getAddr();
    if (nativeWarpMatrixOp(op, state.target)) {
      FailureOr<Value> ptr = pointerTo(op, rewriter, addr, op.getOffset(), op.getSpace());
      if (failed(ptr))
        return failure();
      FailureOr<SmallVector<Value>> d = state.target.emitNativeWmma(rewriter, op, *ptr, {});
      if (failed(d))
        return unsupported(op, "'ldmatrix' form on this target");
      rewriter.replaceOp(op, *d);
      return success();
    }
    IntArithBuilder ib{rewriter, loc};
    mlir::Type i16 = rewriter.getI16Type(), i32 = rewriter.getI32Type(),
               i64 = rewriter.getI64Type();
    bool wide = addr.getType() == i64;
    auto rowAddress = [&](Value src) -> Value {
      if (!wide)
        return state.target.readLane(rewriter, loc, addr, src);
      Value lo = state.target.readLane(rewriter, loc, ib.trunci(i32, addr), src);
      Value hi = state.target.readLane(rewriter, loc, ib.trunci(i32, ib.shrui(addr, ib.c64(32))),
                                       src);
      return ib.ori(ib.extui(i64, lo), ib.shli(ib.extui(i64, hi), ib.c64(32)));
    };
    auto load = [&](Value row, Value byteOffset, mlir::Type type) -> FailureOr<Value> {
      Value at = ib.addi(row, wide ? ib.extui(i64, byteOffset) : byteOffset);
      FailureOr<Value> ptr = pointerTo(op, rewriter, at, op.getOffset(), op.getSpace());
      if (failed(ptr))
        return failure();
      return LLVM::LoadOp::create(rewriter, loc, type, *ptr, widthOf(type) / 8).getResult();
    };
    Value lane = warpLane(rewriter, loc, state.target);
    Value quarter = ib.shrui(lane, ib.c32(2)), inQuad = ib.andi(lane, ib.c32(3));
    SmallVector<Value> d;
    for (unsigned i = 0; i < op.getD().size(); ++i) {
      if (!op.getTrans()) {
        // 1.
        FailureOr<Value> word = load(rowAddress(ib.addi(quarter, ib.c32(8 * i))),
                                     ib.muli(inQuad, ib.c32(4)), i32);
        if (failed(word))
          return failure();
        d.push_back(*word);
        continue;
      }
      // 2.
      Value first = ib.addi(ib.muli(inQuad, ib.c32(2)), ib.c32(8 * i));
      Value column = ib.muli(quarter, ib.c32(2));
      FailureOr<Value> lo = load(rowAddress(first), column, i16);
      FailureOr<Value> hi = load(rowAddress(ib.addi(first, ib.c32(1))), column, i16);
      if (failed(lo) || failed(hi))
        return failure();
      d.push_back(ib.ori(ib.extui(i32, *lo), ib.shli(ib.extui(i32, *hi), ib.c32(16))));
    }
    rewriter.replaceOp(op, d);
    return success();
  }
};

} // namespace

bool zmlir::nativeWmmaModule(ModuleOp module, const TargetInfo &target) {
  unsigned sm = targetSm(module);
  bool any = false;
  WalkResult walk = module.walk([&](Operation *op) {
    if (!isa<WmmaLoadOp, WmmaStoreOp, WmmaMmaOp>(op))
      return WalkResult::advance();
    any = true;
    return target.hasNativeWmma(op, sm) ? WalkResult::advance() : WalkResult::interrupt();
  });
  return any && !walk.wasInterrupted();
}

int64_t zmlir::reserveWmmaScratch(gpu::GPUFuncOp kernel, int64_t offset, PTXLoweringState &state) {
  int64_t warpBytes = 0;
  if (!state.nativeWmma)
    kernel.walk([&](WmmaMmaOp op) {
      warpBytes = std::max(warpBytes, MmaLayout(op.getContext(), MmaForm(op)).warpBytes);
    });
  kernel.walk([&](MmaSyncOp op) {
    if (!nativeWarpMatrixOp(op, state.target))
      warpBytes = std::max(warpBytes, MmaSyncLayout(op).warpBytes);
  });
  if (!warpBytes)
    return offset;
  // For the largest block the launcher allows, else 1024 threads.
  int64_t threads = maxBlockThreads(kernel).value_or(1024);
  int64_t warps = std::clamp<int64_t>(llvm::divideCeil(threads, 32), 1, 32);
  offset = llvm::alignTo(offset, 16);
  state.wmmaScratch[kernel] = {offset, warpBytes};
  return offset + warps * warpBytes;
}

void zmlir::populatePTXMatrixPatterns(RewritePatternSet &patterns, const PTXLoweringState &state) {
  if (state.nativeWmma)
    patterns.add<NativeWmmaLowering<WmmaLoadOp>, NativeWmmaLowering<WmmaStoreOp>,
                 NativeWmmaLowering<WmmaMmaOp>>(patterns.getContext(), state);
  else
    patterns.add<WmmaLoadOpLowering, WmmaStoreOpLowering, WmmaMmaOpLowering>(patterns.getContext(),
                                                                             state);
  patterns.add<MmaSyncOpLowering, LdmatrixOpLowering>(patterns.getContext(), state);
}
