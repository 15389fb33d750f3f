//===- Convert.cpp - mov, cvt, packing, fp8 and tf32 ----------------------===//
//
// Moves and conversions: mov (bits between registers), the packing moves
// (mov.b32 d, {a, b} and back), cvt between integers and floats of every width with PTX's
// rounding and saturation, cvt.pack, and the formats narrower than f16.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/FloatRounding.h"
#include "zmlir/lowering/PTXLowering.h"

#include <cmath>

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

using IP = arith::CmpIPredicate;
using FP = arith::CmpFPredicate;

//===----------------------------------------------------------------------===//
// fp8 pairs
//===----------------------------------------------------------------------===//
//
// The fp8 pair conversions (sm_89): ptx.cvt_pack to .e4m3x2/.e5m2x2 from two
// f32 values, ptx.cvt between them and .f16x2. Every target computes them
// with integer operations on the bits, so no target's float mode (denormal
// flushing) changes a result.

/// f32 to an fp8 byte (in an i32) with .rn.satfinite{.relu}; `expBits` is 4
/// (E4M3: bias 7, no infinity, NaN 0x7f, largest 448 = 0x7e) or 5 (E5M2: bias
/// 15, largest finite 57344 = 0x7b).
///  1. normal results: round the f32 bits to M = 7 - expBits mantissa bits
///     (to nearest, ties to even, by adding 2^(22-M) - 1 plus the lowest kept
///     bit), then rebias the exponent;
///  2. subnormal results (|x| below 2^(1-bias)): the 24-bit significand
///     shifted right to the quantum 2^(1-bias-M), rounded to nearest even;
///  3. .satfinite: anything above the largest finite value (infinity too)
///     gives it; NaN gives 0x7f; the sign is the input's (-0 gives 0x80);
///  4. .relu: a negative input (-0 too) gives +0, NaN still 0x7f.
Value floatToFp8(OpBuilder &b, Location loc, Value x, unsigned expBits, bool relu) {
  IntArithBuilder k{b, loc};
  int64_t man = 7 - expBits, bias = (1 << (expBits - 1)) - 1, sh = 23 - man;
  int64_t maxCode = expBits == 4 ? 0x7e : 0x7b;
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), x);
  Value sign = k.shrui(bits, k.c32(31));
  Value mag = k.andi(bits, k.c32(0x7fffffff));
  // 1.
  Value rounded = k.addi(k.addi(mag, k.c32((1 << (sh - 1)) - 1)),
                         k.andi(k.shrui(mag, k.c32(sh)), k.c32(1)));
  Value normal = k.subi(k.shrui(rounded, k.c32(sh)), k.c32((127 - bias) << man));
  // 2.
  Value exponent = k.shrui(mag, k.c32(23));
  Value isZeroExp = k.cmpi(IP::eq, exponent, k.c32(0));
  Value significand = k.select(isZeroExp, mag, k.ori(k.andi(mag, k.c32(0x7fffff)), k.c32(1 << 23)));
  Value effExp = k.select(isZeroExp, k.c32(1), exponent);
  // In [1, 31] (it is at least 24 - M where the result is subnormal).
  Value shift = k.maxui(k.minui(k.subi(k.c32(151 - bias - man), effExp), k.c32(31)), k.c32(1));
  Value q = k.shrui(significand, shift);
  Value rem = k.andi(significand, k.subi(k.shli(k.c32(1), shift), k.c32(1)));
  Value half = k.shli(k.c32(1), k.subi(shift, k.c32(1)));
  Value up = k.ori(
      k.cmpi(IP::ugt, rem, half),
      k.andi(k.cmpi(IP::eq, rem, half), k.cmpi(IP::ne, k.andi(q, k.c32(1)), k.c32(0))));
  Value subnormal = k.addi(q, k.extui(b.getI32Type(), up));
  Value isSubnormal = k.cmpi(IP::ult, mag, k.c32((128 - bias) << 23));
  // 3.
  Value code = k.minui(k.select(isSubnormal, subnormal, normal), k.c32(maxCode));
  code = k.ori(code, k.shli(sign, k.c32(7)));
  // 4.
  if (relu)
    code = k.select(k.cmpi(IP::ne, sign, k.c32(0)), k.c32(0), code);
  return k.select(k.cmpi(IP::ugt, mag, k.c32(0x7f800000)), k.c32(0x7f), code);
}

/// An fp8 byte (the low 8 bits of an i32) as f16 bits (in an i32), exactly.
/// E5M2 is the upper byte of an f16; E4M3 normals rebias the exponent
/// (7 -> 15), its subnormals m * 2^-9 are normal f16 values (m converted and
/// scaled exactly in f32). NaN gives 0x7fff, as on the H200; `.relu` makes
/// negative values and -0 +0 and leaves NaN 0x7fff.
Value fp8ToHalf(OpBuilder &b, Location loc, Value code, unsigned expBits, bool relu) {
  IntArithBuilder k{b, loc};
  Value mag = k.andi(code, k.c32(0x7f));
  Value sign = k.shli(k.andi(code, k.c32(0x80)), k.c32(8));
  Value nan = k.c32(0x7fff);
  Value isNaN, r;
  if (expBits == 5) {
    isNaN = k.cmpi(IP::ugt, mag, k.c32(0x7c));
    r = k.shli(k.andi(code, k.c32(0xff)), k.c32(8));
  } else {
    Value exponent = k.shrui(mag, k.c32(3));
    Value mantissa = k.andi(mag, k.c32(7));
    Value normal = k.ori(k.shli(k.addi(exponent, k.c32(8)), k.c32(10)), k.shli(mantissa, k.c32(7)));
    mlir::Type f32 = b.getF32Type();
    Value scaled = arith::MulFOp::create(b, loc, arith::UIToFPOp::create(b, loc, f32, mantissa),
                                         floatConst(b, loc, f32, std::ldexp(1.0, -9)));
    Value half = arith::TruncFOp::create(b, loc, b.getF16Type(), scaled);
    Value subnormal = k.extui(b.getI32Type(),
                              arith::BitcastOp::create(b, loc, b.getI16Type(), half));
    isNaN = k.cmpi(IP::eq, mag, k.c32(0x7f));
    r = k.ori(k.select(k.cmpi(IP::eq, exponent, k.c32(0)), subnormal, normal), sign);
  }
  if (relu)
    r = k.select(k.cmpi(IP::ne, sign, k.c32(0)), k.c32(0), r);
  return k.select(isNaN, nan, r);
}

/// Two fp8 codes (i32s, each in its low byte) as a pair: `hi` in the upper
/// byte, in a register of `resultType` (zero-extended).
Value packFp8(OpBuilder &b, Location loc, Value hi, Value lo, mlir::Type resultType) {
  IntArithBuilder k{b, loc};
  return adjustBits(b, loc, k.ori(k.shli(hi, k.c32(8)), lo), resultType, false);
}

/// cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f16x2 d, a: each half of `a`
/// widened exactly to f32, then narrowed as from f32 (a double rounding
/// cannot happen: the f32 is the f16's value), the upper half to the upper
/// byte; and cvt.rn{.relu}.f16x2.{e4m3x2,e5m2x2} d, a: each byte widened,
/// the upper byte to the upper half. `src` is the low bits of the register.
Value lowerFp8PairCvt(OpBuilder &b, Location loc, CvtOp op, Value src) {
  IntArithBuilder k{b, loc};
  mlir::Type i32 = b.getI32Type();
  Value bits = adjustBits(b, loc, src, b.getIntegerType(widthOf(src.getType())), false);
  if (isFp8PairType(op.getType())) {
    unsigned e = op.getType() == DataType::E4M3x2 ? 4 : 5;
    Value pair = adjustBits(b, loc, bits, i32, false);
    auto part = [&](Value v) {
      Value h = arith::BitcastOp::create(b, loc, b.getF16Type(), k.trunci(b.getI16Type(), v));
      return floatToFp8(b, loc, arith::ExtFOp::create(b, loc, b.getF32Type(), h), e, op.getRelu());
    };
    Value hi = part(k.shrui(pair, k.c32(16)));
    Value lo = part(pair);
    return packFp8(b, loc, hi, lo, op.getRes().getType());
  }
  unsigned e = op.getSrcType() == DataType::E4M3x2 ? 4 : 5;
  Value pair = k.extui(i32, adjustBits(b, loc, bits, b.getI16Type(), false));
  Value hi = fp8ToHalf(b, loc, k.shrui(pair, k.c32(8)), e, op.getRelu());
  Value lo = fp8ToHalf(b, loc, k.andi(pair, k.c32(0xff)), e, op.getRelu());
  return adjustBits(b, loc, k.ori(k.shli(hi, k.c32(16)), lo), op.getRes().getType(), false);
}

//===----------------------------------------------------------------------===//
// Moves and conversions
//===----------------------------------------------------------------------===//

struct MovOpLowering : PTXPattern<MovOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(MovOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, adjustBits(rewriter, op.getLoc(), adaptor.getSrc(), op.getRes().getType(), false));
    return success();
  }
};

/// Float to integer conversion with PTX's saturation: values beyond the
/// range give the nearest representable integer. NaN gives 0 (as the PTX ISA
/// says) only from f32 to at most 32 bits; from f64 (f16 is modelled so, not
/// yet captured), or to 64 bits, the H200 gives the destination's sign bit
/// alone, 0x80000000 for u32 too (`nanIsZero` says which).
///  1. round to an integral float by the `.rXi` mode (default `.rzi`);
///  2. convert with fptosi/fptoui (poison only when out of range);
///  3. select the clamped constants for NaN and out-of-range inputs.
Value floatToInteger(OpBuilder &b, Location loc, Value x, Rounding rnd, mlir::Type intType,
                     bool isSigned, bool nanIsZero) {
  switch (rnd) {
  case Rounding::RNI:
    x = roundEven(b, loc, x);
    break;
  case Rounding::RMI:
    x = math::FloorOp::create(b, loc, x);
    break;
  case Rounding::RPI:
    x = math::CeilOp::create(b, loc, x);
    break;
  default:
    x = math::TruncOp::create(b, loc, x);
    break;
  }
  mlir::Type floatType = x.getType();
  unsigned width = widthOf(intType);
  double lo = isSigned ? -std::ldexp(1.0, width - 1) : 0.0;
  double hiExclusive = isSigned ? std::ldexp(1.0, width - 1) : std::ldexp(1.0, width);
  Value converted = isSigned ? arith::FPToSIOp::create(b, loc, intType, x).getResult()
                             : arith::FPToUIOp::create(b, loc, intType, x).getResult();
  llvm::APInt minInt = isSigned ? llvm::APInt::getSignedMinValue(width)
                                : llvm::APInt::getMinValue(width);
  llvm::APInt maxInt = isSigned ? llvm::APInt::getSignedMaxValue(width)
                                : llvm::APInt::getMaxValue(width);
  Value minValue = arith::ConstantOp::create(b, loc, intType, b.getIntegerAttr(intType, minInt));
  Value maxValue = arith::ConstantOp::create(b, loc, intType, b.getIntegerAttr(intType, maxInt));
  Value tooSmall = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x,
                                         floatConst(b, loc, floatType, lo));
  Value tooLarge = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, x,
                                         floatConst(b, loc, floatType, hiExclusive));
  Value isNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, x, x);
  Value r = arith::SelectOp::create(b, loc, tooSmall, minValue, converted);
  r = arith::SelectOp::create(b, loc, tooLarge, maxValue, r);
  llvm::APInt nanInt = nanIsZero ? llvm::APInt(width, 0) : llvm::APInt::getSignMask(width);
  Value nanValue = arith::ConstantOp::create(b, loc, intType, b.getIntegerAttr(intType, nanInt));
  return arith::SelectOp::create(b, loc, isNaN, nanValue, r);
}

/// cvt.sat between integers: clamps `x` (of its own signedness) to the
/// range of `target` before the bits are truncated or extended.
Value clampInteger(OpBuilder &b, Location loc, Value x, bool srcSigned, mlir::Type target,
                   bool dstSigned) {
  mlir::Type t = x.getType();
  unsigned ws = widthOf(t), wd = widthOf(target);
  APInt srcMax = srcSigned ? APInt::getSignedMaxValue(ws) : APInt::getMaxValue(ws);
  APInt dstMax = dstSigned ? APInt::getSignedMaxValue(wd) : APInt::getMaxValue(wd);
  // dstMax < srcMax, compared as unsigned numbers of the larger width.
  unsigned w = std::max(ws, wd);
  if (dstMax.zext(w).ult(srcMax.zext(w))) {
    Value limit = arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, dstMax.zextOrTrunc(ws)));
    Value above = arith::CmpIOp::create(
        b, loc, srcSigned ? arith::CmpIPredicate::sgt : arith::CmpIPredicate::ugt, x, limit);
    x = arith::SelectOp::create(b, loc, above, limit, x);
  }
  if (srcSigned) {
    // The smallest destination value, if it is above the source's.
    bool clampLow = !dstSigned || wd < ws;
    if (clampLow) {
      APInt dstMin = dstSigned ? APInt::getSignedMinValue(wd).sext(ws) : APInt(ws, 0);
      Value limit = arith::ConstantOp::create(b, loc, t, b.getIntegerAttr(t, dstMin));
      Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, limit);
      x = arith::SelectOp::create(b, loc, below, limit, x);
    }
  }
  return x;
}

struct CvtOpLowering : PTXPattern<CvtOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(CvtOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    DataType dst = op.getType(), src = op.getSrcType();
    if (isFp8PairType(dst) || isFp8PairType(src)) {
      rewriter.replaceOp(op, lowerFp8PairCvt(rewriter, loc, op, adaptor.getSrc()));
      return success();
    }
    if (op.getSatfinite())
      return unsupported(op, Twine("'.satfinite' on conversion '.") + stringifyDataType(dst) + "." +
                                 stringifyDataType(src) + "'");
    mlir::Type srcType = memoryType(ctx, src), dstType = memoryType(ctx, dst);
    mlir::Type resultType = op.getRes().getType();
    Rounding rnd = op.getRnd();
    // The source register may be wider than the source type (cvt.u32.u16 on
    // a 32-bit register reads its low half).
    Value x = adjustBits(rewriter, loc, adaptor.getSrc(), srcType, isSignedType(src));
    bool srcFloat = isFloatType(src), dstFloat = isFloatType(dst);
    if (op.getRelu() && !dstFloat)
      return unsupported(op, "'cvt' modifier '.relu' to an integer type");
    if ((srcFloat && src != DataType::F16 && src != DataType::BF16 && src != DataType::F32 &&
         src != DataType::F64) ||
        (dstFloat && dst != DataType::F16 && dst != DataType::BF16 && dst != DataType::F32 &&
         dst != DataType::F64))
      return unsupported(op, Twine("conversion '.") + stringifyDataType(dst) + "." +
                                 stringifyDataType(src) + "'");
    // cvt.ftz.f64.f32 widens with arith.extf, which a function in the
    // target's f32 flush mode flushes itself (NVPTX: cvt.ftz.f64.f32; the
    // CPU's MXCSR), where the target says so; every other f32 source is
    // read on its bits by some conversion here.
    bool widensInFlushMode = src == DataType::F32 && dst == DataType::F64 &&
                             flushedByTarget(op, state.target);
    if (srcFloat && op.getFtz() && !widensInFlushMode)
      x = flushSubnormal(rewriter, loc, x);
    Value r;
    if (!srcFloat && !dstFloat) {
      if (op.getSat())
        x = clampInteger(rewriter, loc, x, isSignedType(src), dstType, isSignedType(dst));
      if (!isSignedType(dst) && widthOf(srcType) == 64 && widthOf(dstType) == 8 &&
          resultType.isInteger() && widthOf(resultType) > 8) {
        // u8 from 64 bits as `and (trunc x), 0xff` in the register's width:
        // LLVM 22's SPIR-V backend turns `zext (trunc i64 to i8)` into an
        // OpBitwiseAnd of mixed widths, which spirv-val rejects.
        Value bits = adjustBits(rewriter, loc, x, resultType, false);
        rewriter.replaceOp(op, arith::AndIOp::create(rewriter, loc, bits,
                                                     intConst(rewriter, loc, resultType, 0xff)));
        return success();
      }
      r = adjustBits(rewriter, loc, x, dstType, isSignedType(src));
    } else if (!srcFloat && dstFloat) {
      if (rnd != Rounding::None && rnd != Rounding::RN && rnd != Rounding::RZ &&
          rnd != Rounding::RM && rnd != Rounding::RP)
        return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                   "' converting integer to float");
      r = integerToFloat(rewriter, loc, x, isSignedType(src), dstType, rnd);
      if (!r)
        return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                   "' converting integer to bf16");
    } else if (srcFloat && !dstFloat) {
      if (rnd != Rounding::None && rnd != Rounding::RZI && rnd != Rounding::RNI &&
          rnd != Rounding::RMI && rnd != Rounding::RPI)
        return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                   "' converting float to integer");
      if (widthOf(srcType) < 32)
        x = arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(), x);
      bool nanIsZero = src == DataType::F32 && widthOf(dstType) <= 32;
      r = floatToInteger(rewriter, loc, x, rnd, dstType, isSignedType(dst), nanIsZero);
    } else {
      unsigned from = widthOf(srcType), to = widthOf(dstType);
      if (from < to || (from == to && srcType == dstType)) {
        if (src == DataType::BF16 && dst == DataType::F32) {
          // The bits as the top half of an f32 (as the H200 widens): exact,
          // and a subnormal stays one where the function flushes f32
          // subnormals (F32FlushMode.cpp), as cvt.f32.bf16 keeps them. There
          // the target's own instruction, if it has one; not in IEEE mode,
          // where LLVM tests a later software flush on the shifted bf16's
          // own exponent bits.
          Value half = asInteger(rewriter, loc, x);
          Value wide;
          if (inF32FlushMode(op))
            wide = state.target.nativeBf16Widen(rewriter, loc, half);
          if (wide) {
            x = wide;
          } else {
            mlir::Type i32 = rewriter.getI32Type();
            Value bits = arith::ExtUIOp::create(rewriter, loc, i32, half);
            x = arith::BitcastOp::create(
                rewriter, loc, dstType,
                arith::ShLIOp::create(rewriter, loc, bits, intConst(rewriter, loc, i32, 16)));
          }
        } else if (from < to) {
          x = arith::ExtFOp::create(rewriter, loc, dstType, x);
        }
        switch (rnd) {
        case Rounding::None:
        case Rounding::RN:
          r = x;
          break;
        case Rounding::RNI:
          r = roundEven(rewriter, loc, x);
          break;
        case Rounding::RZI:
          r = math::TruncOp::create(rewriter, loc, x);
          break;
        case Rounding::RMI:
          r = math::FloorOp::create(rewriter, loc, x);
          break;
        case Rounding::RPI:
          r = math::CeilOp::create(rewriter, loc, x);
          break;
        default:
          return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                     "' on a widening float conversion");
        }
      } else {
        if (rnd != Rounding::None && rnd != Rounding::RN && rnd != Rounding::RZ &&
            rnd != Rounding::RM && rnd != Rounding::RP)
          return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                     "' on a narrowing float conversion");
        bool nearest = rnd == Rounding::None || rnd == Rounding::RN;
        if (src == DataType::F32 && dst == DataType::BF16 && nearest)
          if (Value bits = state.target.nativeBf16Cvt(rewriter, loc, x))
            r = arith::BitcastOp::create(rewriter, loc, dstType, bits);
        if (!r)
          r = narrowFloat(rewriter, loc, x, dstType, rnd);
        if (!r)
          return unsupported(op, Twine("conversion '.") + stringifyDataType(dst) + "." +
                                     stringifyDataType(src) + "'");
      }
    }
    if (dstFloat && op.getFtz())
      r = flushSubnormal(rewriter, loc, r);
    if (dstFloat && op.getSat())
      r = saturateFloat(rewriter, loc, r);
    if (op.getRelu()) {
      // Negative values and -0 become +0 (as on the H200); NaN stays NaN.
      Value zero = floatConst(rewriter, loc, r.getType(), 0.0);
      Value notPositive = arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OLE, r, zero);
      r = arith::SelectOp::create(rewriter, loc, notPositive, zero, r);
    }
    rewriter.replaceOp(op, adjustBits(rewriter, loc, r, resultType, isSignedType(dst)));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Packing moves and conversions
//===----------------------------------------------------------------------===//

struct MovPackOpLowering : PTXPattern<MovPackOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(MovPackOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type resultType = op.getRes().getType();
    mlir::Type it = rewriter.getIntegerType(widthOf(resultType));
    SmallVector<Value> parts;
    for (Value e : adaptor.getElems())
      parts.push_back(asInteger(rewriter, loc, e));
    mlir::Type partType = parts.front().getType();
    bool uniform = llvm::all_of(parts, [&](Value v) { return v.getType() == partType; });
    if (uniform && parts.size() > 1 && widthOf(partType) * parts.size() == widthOf(it) &&
        state.target.packsRegistersAsVector(widthOf(partType), parts.size())) {
      // The first element in the low bits: element 0 of a little-endian
      // vector (every target's layout).
      auto vectorType = VectorType::get({static_cast<int64_t>(parts.size())}, partType);
      Value vector = LLVM::PoisonOp::create(rewriter, loc, vectorType);
      for (auto [i, part] : llvm::enumerate(parts))
        vector = LLVM::InsertElementOp::create(
            rewriter, loc, vector, part,
            intConst(rewriter, loc, rewriter.getI32Type(), static_cast<int64_t>(i)));
      Value r = LLVM::BitcastOp::create(rewriter, loc, it, vector);
      rewriter.replaceOp(op, adjustBits(rewriter, loc, r, resultType, false));
      return success();
    }
    Value r = intConst(rewriter, loc, it, 0);
    unsigned shift = 0;
    for (Value bits : parts) {
      unsigned w = widthOf(bits.getType());
      Value wide = arith::ExtUIOp::create(rewriter, loc, it, bits);
      r = arith::OrIOp::create(
          rewriter, loc, r,
          arith::ShLIOp::create(rewriter, loc, wide, intConst(rewriter, loc, it, shift)));
      shift += w;
    }
    rewriter.replaceOp(op, adjustBits(rewriter, loc, r, resultType, false));
    return success();
  }
};

struct MovUnpackOpLowering : PTXPattern<MovUnpackOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(MovUnpackOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value bits = asInteger(rewriter, loc, adaptor.getSrc());
    mlir::Type it = bits.getType();
    SmallVector<Value> results;
    unsigned shift = 0;
    for (Value e : op.getElems()) {
      unsigned w = widthOf(e.getType());
      Value part = arith::ShRUIOp::create(rewriter, loc, bits, intConst(rewriter, loc, it, shift));
      Value narrow = arith::TruncIOp::create(rewriter, loc, rewriter.getIntegerType(w), part);
      results.push_back(adjustBits(rewriter, loc, narrow, e.getType(), false));
      shift += w;
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

/// cvt.{rn,rz}{.relu}{.satfinite}.{f16x2,bf16x2}.f32 d, a, b: a in the high
/// half. .relu turns negative values and -0 into +0; .satfinite clamps to
/// the largest finite value of the result type; NaN gives the canonical NaN
/// 0x7fff (narrowFloat).
struct CvtPackOpLowering : PTXPattern<CvtPackOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(CvtPackOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (isFp8PairType(op.getType())) {
      // .rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32: a to the upper byte.
      unsigned e = op.getType() == DataType::E4M3x2 ? 4 : 5;
      Value hi = floatToFp8(rewriter, loc, adaptor.getA(), e, op.getRelu());
      Value lo = floatToFp8(rewriter, loc, adaptor.getB(), e, op.getRelu());
      rewriter.replaceOp(op, packFp8(rewriter, loc, hi, lo, op.getRes().getType()));
      return success();
    }
    bool bf16 = op.getType() == DataType::BF16x2;
    if (!bf16 && op.getType() != DataType::F16x2)
      return unsupported(op,
                         Twine("packed conversion to '.") + stringifyDataType(op.getType()) + "'");
    Rounding rnd = op.getRnd();
    if (rnd != Rounding::RN && rnd != Rounding::RZ)
      return unsupported(op, Twine("rounding '.") + stringifyRounding(rnd) +
                                 "' on a packed conversion");
    mlir::Type half = bf16 ? mlir::Type(rewriter.getBF16Type()) : rewriter.getF16Type();
    mlir::Type f32 = rewriter.getF32Type(), i32 = rewriter.getI32Type();
    double maxFinite = bf16 ? 3.3895313892515355e38 : 65504.0;
    auto convert = [&](Value x) -> Value {
      if (op.getSatfinite()) {
        Value lim = floatConst(rewriter, loc, f32, maxFinite);
        Value neg = floatConst(rewriter, loc, f32, -maxFinite);
        Value isNaN = arith::CmpFOp::create(rewriter, loc, FP::UNO, x, x);
        Value clamped = arith::MinimumFOp::create(
            rewriter, loc, arith::MaximumFOp::create(rewriter, loc, x, neg), lim);
        x = arith::SelectOp::create(rewriter, loc, isNaN, x, clamped);
      }
      if (op.getRelu()) {
        // -0 becomes +0 as well (ole); NaN stays NaN.
        Value zero = floatConst(rewriter, loc, f32, 0.0);
        Value notPositive = arith::CmpFOp::create(rewriter, loc, FP::OLE, x, zero);
        x = arith::SelectOp::create(rewriter, loc, notPositive, zero, x);
      }
      Value h = narrowFloat(rewriter, loc, x, half, rnd);
      if (op.getSatfinite()) {
        // Rounding may still overflow to infinity; clamp the result too.
        Value bits = bitsOf(rewriter, loc, h);
        Value hmax = intConst(rewriter, loc, rewriter.getI16Type(), bf16 ? 0x7f7f : 0x7bff);
        Value magnitude = arith::AndIOp::create(
            rewriter, loc, bits, intConst(rewriter, loc, rewriter.getI16Type(), 0x7fff));
        Value isInf = arith::CmpIOp::create(
            rewriter, loc, IP::eq, magnitude,
            intConst(rewriter, loc, rewriter.getI16Type(), bf16 ? 0x7f80 : 0x7c00));
        Value sign = arith::AndIOp::create(rewriter, loc, bits,
                                           intConst(rewriter, loc, rewriter.getI16Type(), -0x8000));
        Value sat = arith::OrIOp::create(rewriter, loc, sign, hmax);
        h = arith::BitcastOp::create(rewriter, loc, half,
                                     arith::SelectOp::create(rewriter, loc, isInf, sat, bits));
      }
      return arith::ExtUIOp::create(rewriter, loc, i32, bitsOf(rewriter, loc, h));
    };
    Value hi = convert(adaptor.getA()), lo = convert(adaptor.getB());
    Value r = arith::OrIOp::create(
        rewriter, loc, arith::ShLIOp::create(rewriter, loc, hi, intConst(rewriter, loc, i32, 16)),
        lo);
    rewriter.replaceOp(op, r);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// tf32
//===----------------------------------------------------------------------===//
//
// cvt to tf32, which the ptx dialect has no type for: cvt.{rn,rz,rna}... .tf32.f32,
// imported as `ptx.inst`. Computed with integer operations on the bits, as
// the fp8 pairs are, so no target's float mode changes a result.

/// cvt.rna.tf32.f32: f32 bits rounded to 10 mantissa bits, ties away from
/// zero (add half of the dropped range, clear it; the carry reaches the
/// exponent and, past the largest value, infinity). NaN keeps its upper bits,
/// as on the H200 (0x7fc00001 -> 0x7fc00000, 0x7fa00000 unchanged); a NaN
/// whose payload is only in the dropped bits (not captured) gets the quiet
/// bit, so it stays NaN.
Value floatToTf32(OpBuilder &b, Location loc, Value x) {
  IntArithBuilder k{b, loc};
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), x);
  Value mask = k.c32(static_cast<int32_t>(0xffffe000));
  Value rounded = k.andi(k.addi(bits, k.c32(0x1000)), mask);
  Value truncated = k.andi(bits, mask);
  Value mag = k.andi(bits, k.c32(0x7fffffff));
  Value isNaN = k.cmpi(IP::ugt, mag, k.c32(0x7f800000));
  Value lostPayload = k.cmpi(IP::eq, k.andi(truncated, k.c32(0x7fffff)), k.c32(0));
  Value nan = k.select(lostPayload, k.ori(truncated, k.c32(0x400000)), truncated);
  return k.select(isNaN, nan, rounded);
}

/// cvt.{rn,rz}{.relu}{.satfinite}.tf32.f32 (and .rna.satfinite): f32 bits
/// rounded to tf32's 10 mantissa bits (the low 13 cleared), in integer
/// arithmetic, so subnormals round on the same quantum:
///  1. .rn adds 0xfff plus the lowest kept bit (ties to even), .rz adds
///     nothing; the carry reaches the exponent and past the largest value
///     infinity;
///  2. .satfinite: an infinite result (from an infinity or by rounding)
///     becomes the largest finite tf32, 0x7f7fe000, with the input's sign;
///  3. .relu: a negative result (-0 too) becomes +0;
///  4. NaN, as the H200 answers: .rn and .rz (.relu too) give tf32's
///     canonical NaN, 0x7fffe000, whatever the input's sign and payload;
///     .rna.satfinite gives the truncated bits less one tf32 unit
///     (0x7fc00000 -> 0x7fbfe000, 0x7f800001 -> 0x7f7fe000: finite).
Value floatToTf32Rounded(OpBuilder &b, Location loc, Value x, StringRef rnd, bool relu,
                         bool satfinite) {
  IntArithBuilder k{b, loc};
  if (rnd == ".rna" && !relu && !satfinite)
    return floatToTf32(b, loc, x);
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), x);
  Value mask = k.c32(static_cast<int32_t>(0xffffe000));
  Value increment = rnd == ".rz" ? k.c32(0)
                    : rnd == ".rna"
                        ? k.c32(0x1000)
                        : k.addi(k.c32(0xfff), k.andi(k.shrui(bits, k.c32(13)), k.c32(1)));
  Value r = k.andi(k.addi(bits, increment), mask);
  Value mag = k.andi(bits, k.c32(0x7fffffff));
  Value sign = k.andi(bits, k.c32(static_cast<int32_t>(0x80000000u)));
  if (satfinite) {
    Value infinite = k.cmpi(IP::eq, k.andi(r, k.c32(0x7fffffff)), k.c32(0x7f800000));
    r = k.select(infinite, k.ori(sign, k.c32(0x7f7fe000)), r);
  }
  if (relu)
    r = k.select(k.cmpi(IP::ne, sign, k.c32(0)), k.c32(0), r);
  Value isNaN = k.cmpi(IP::ugt, mag, k.c32(0x7f800000));
  Value nan = rnd == ".rna" ? k.subi(k.andi(bits, mask), k.c32(0x2000)) : k.c32(0x7fffe000);
  return k.select(isNaN, nan, r);
}

/// cvt.pack.sat's integer forms: each of a and b clamped to the width's
/// range, a above b, c's low bits above both.
struct CvtPackSatOpLowering : PTXPattern<CvtPackSatOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(CvtPackSatOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    IntArithBuilder k{rewriter, op.getLoc()};
    uint32_t width = op.getWidth();
    int64_t low = op.getIsSigned() ? -(int64_t(1) << (width - 1)) : 0;
    int64_t high = op.getIsSigned() ? (int64_t(1) << (width - 1)) - 1 : (int64_t(1) << width) - 1;
    auto saturated = [&](Value x) {
      return k.andi(k.minsi(k.maxsi(x, k.c32(low)), k.c32(high)), k.c32((int64_t(1) << width) - 1));
    };
    Value packed = k.ori(k.shli(saturated(adaptor.getA()), k.c32(width)),
                         saturated(adaptor.getB()));
    if (Value c = adaptor.getC())
      packed = k.ori(k.shli(c, k.c32(2 * width)), packed);
    rewriter.replaceOp(op, packed);
    return success();
  }
};

} // namespace

Value zmlir::lowerNarrowFloatCvt(InstOp op, ValueRange operands, OpBuilder &b,
                                 const TargetInfo &target) {
  Location loc = op.getLoc();
  SmallVector<StringRef> mods;
  for (Attribute mod : op.getModifiers())
    mods.push_back(cast<StringAttr>(mod).getValue());
  if (op.getOpcode() != "cvt" || op->getNumResults() != 1)
    return {};
  mlir::Type resultType = op.getResult(0).getType();
  // cvt.{rn,rz,rna}{.relu}{.satfinite}.tf32.f32 (.relu not with .rna); the
  // source may be a .b32 register (cuBLAS's tf32 GEMMs), read as an f32.
  if (mods.size() >= 3 && mods.size() <= 5 && mods.back() == ".f32" &&
      mods[mods.size() - 2] == ".tf32" && operands.size() == 1 &&
      (operands[0].getType().isF32() || operands[0].getType().isInteger(32)) &&
      llvm::is_contained({StringRef(".rn"), StringRef(".rz"), StringRef(".rna")}, mods[0])) {
    ArrayRef<StringRef> middle = ArrayRef<StringRef>(mods).slice(1, mods.size() - 3);
    bool relu = llvm::is_contained(middle, ".relu");
    bool satfinite = llvm::is_contained(middle, ".satfinite");
    if (middle.size() == static_cast<size_t>(relu + satfinite) && !(relu && mods[0] == ".rna")) {
      Value x = operands[0];
      if (!x.getType().isF32())
        x = arith::BitcastOp::create(b, loc, b.getF32Type(), x);
      Value r = target.nativeTf32Cvt(b, loc, x, mods[0], relu, satfinite);
      if (!r)
        r = floatToTf32Rounded(b, loc, x, mods[0], relu, satfinite);
      return adjustBits(b, loc, r, resultType, false);
    }
  }
  return {};
}

void zmlir::populatePTXConvertPatterns(RewritePatternSet &patterns, const PTXLoweringState &state) {
  patterns.add<MovPackOpLowering, MovUnpackOpLowering, CvtPackOpLowering, CvtPackSatOpLowering,
               MovOpLowering, CvtOpLowering>(patterns.getContext(), state);
}
