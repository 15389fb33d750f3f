//===- Bits.cpp - Integer bit ops, carries, 24-bit multiplies -------------===//
//
// Lowers PTX's shifts (shl, shr, shf), integer bit-manipulation instructions
// (popc, clz, bfind, brev, cnot, bfe, bfi, prmt, lop3, szext, bmsk, fns), the
// 24-bit and dot product multiplies (mul24, mad24, sad, dp4a, dp2a) and
// extended-precision arithmetic (add.cc ... madc) to arith. Every shift amount
// is clamped below the width first, so no LLVM poison can leak out where PTX
// defines a value.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/PTXLowering.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

using P = arith::CmpIPredicate;

Value cmp(OpBuilder &b, Location loc, P pred, Value x, Value y) {
  return arith::CmpIOp::create(b, loc, pred, x, y);
}

Value select(OpBuilder &b, Location loc, Value c, Value x, Value y) {
  return arith::SelectOp::create(b, loc, c, x, y);
}

Value zext(OpBuilder &b, Location loc, mlir::Type t, Value v) {
  if (v.getType() == t)
    return v;
  if (widthOf(v.getType()) > widthOf(t))
    return arith::TruncIOp::create(b, loc, t, v);
  return arith::ExtUIOp::create(b, loc, t, v);
}

Value sext(OpBuilder &b, Location loc, mlir::Type t, Value v) {
  if (v.getType() == t)
    return v;
  if (widthOf(v.getType()) > widthOf(t))
    return arith::TruncIOp::create(b, loc, t, v);
  return arith::ExtSIOp::create(b, loc, t, v);
}

Value shl(OpBuilder &b, Location loc, Value x, Value n) {
  return arith::ShLIOp::create(b, loc, x, n);
}
Value lshr(OpBuilder &b, Location loc, Value x, Value n) {
  return arith::ShRUIOp::create(b, loc, x, n);
}
Value ashr(OpBuilder &b, Location loc, Value x, Value n) {
  return arith::ShRSIOp::create(b, loc, x, n);
}
Value andi(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AndIOp::create(b, loc, x, y);
}
Value ori(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::OrIOp::create(b, loc, x, y);
}
Value xori(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::XOrIOp::create(b, loc, x, y);
}
Value addi(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::AddIOp::create(b, loc, x, y);
}
Value subi(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::SubIOp::create(b, loc, x, y);
}
Value muli(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MulIOp::create(b, loc, x, y);
}
Value minui(OpBuilder &b, Location loc, Value x, Value y) {
  return arith::MinUIOp::create(b, loc, x, y);
}

//===----------------------------------------------------------------------===//
// Shifts
//===----------------------------------------------------------------------===//

/// shl and shr. PTX clamps shift amounts above the width (the result is 0,
/// or all sign bits for `shr.s`); LLVM would produce poison.
template <typename OpTy>
struct ShiftOpLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = asInteger(rewriter, loc, adaptor.getA());
    mlir::Type t = a.getType();
    unsigned width = widthOf(t);
    Value amount = adaptor.getB();
    if (width > 32)
      amount = arith::ExtUIOp::create(rewriter, loc, t, amount);
    else if (width < 32) {
      // Clamp in 32 bits before narrowing so large amounts stay large.
      amount = arith::MinUIOp::create(rewriter, loc, amount,
                                      intConst(rewriter, loc, amount.getType(), width));
      amount = arith::TruncIOp::create(rewriter, loc, t, amount);
    }
    Value limit = intConst(rewriter, loc, t, width);
    Value tooFar = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::uge, amount, limit);
    Value r;
    if (std::is_same_v<OpTy, ShrOp> && isSignedType(op.getType())) {
      Value clamped = arith::MinUIOp::create(rewriter, loc, amount,
                                             intConst(rewriter, loc, t, width - 1));
      r = arith::ShRSIOp::create(rewriter, loc, a, clamped);
    } else {
      Value shifted = std::is_same_v<OpTy, ShlOp>
                          ? arith::ShLIOp::create(rewriter, loc, a, amount).getResult()
                          : arith::ShRUIOp::create(rewriter, loc, a, amount).getResult();
      r = arith::SelectOp::create(rewriter, loc, tooFar, intConst(rewriter, loc, t, 0), shifted);
    }
    rewriter.replaceOp(op, adjustBits(rewriter, loc, r, adaptor.getA().getType(), false));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Counting bits
//===----------------------------------------------------------------------===//

template <typename OpTy>
struct BitCountLowering : PTXPattern<OpTy> {
  using PTXPattern<OpTy>::PTXPattern;

  LogicalResult matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA();
    Value r;
    if constexpr (std::is_same_v<OpTy, PopcOp>)
      r = math::CtPopOp::create(rewriter, loc, a);
    else
      r = math::CountLeadingZerosOp::create(rewriter, loc, a);
    rewriter.replaceOp(op, zext(rewriter, loc, rewriter.getI32Type(), r));
    return success();
  }
};

/// bfind: for signed types the bits equal to the sign are skipped by
/// complementing negative values first; the found position is
/// `width - 1 - clz`, `.shiftamt` returns `clz` itself.
struct BfindOpLowering : PTXPattern<BfindOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(BfindOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA();
    mlir::Type t = a.getType(), i32 = rewriter.getI32Type();
    unsigned width = widthOf(t);
    if (isSignedType(op.getType())) {
      Value negative = cmp(rewriter, loc, P::slt, a, intConst(rewriter, loc, t, 0));
      a = select(rewriter, loc, negative, xori(rewriter, loc, a, intConst(rewriter, loc, t, -1)),
                 a);
    }
    Value clz = zext(rewriter, loc, i32, math::CountLeadingZerosOp::create(rewriter, loc, a));
    Value found = op.getShiftamt()
                      ? clz
                      : subi(rewriter, loc, intConst(rewriter, loc, i32, width - 1), clz);
    Value none = cmp(rewriter, loc, P::eq, a, intConst(rewriter, loc, t, 0));
    rewriter.replaceOp(op, select(rewriter, loc, none, intConst(rewriter, loc, i32, -1), found));
    return success();
  }
};

/// brev: five (six for 64 bits) swaps of ever larger bit groups; written out
/// because llvm.bitreverse needs the Shader capability in SPIR-V.
struct BrevOpLowering : PTXPattern<BrevOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(BrevOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value x = adaptor.getA();
    mlir::Type t = x.getType();
    unsigned width = widthOf(t);
    static const uint64_t masks[] = {0x5555555555555555ull, 0x3333333333333333ull,
                                     0x0F0F0F0F0F0F0F0Full, 0x00FF00FF00FF00FFull,
                                     0x0000FFFF0000FFFFull, 0x00000000FFFFFFFFull};
    for (unsigned i = 0, shift = 1; shift < width; ++i, shift *= 2) {
      Value mask = intConst(rewriter, loc, t, static_cast<int64_t>(masks[i]));
      Value n = intConst(rewriter, loc, t, shift);
      Value lo = shl(rewriter, loc, andi(rewriter, loc, x, mask), n);
      Value hi = andi(rewriter, loc, lshr(rewriter, loc, x, n), mask);
      x = ori(rewriter, loc, lo, hi);
    }
    rewriter.replaceOp(op, x);
    return success();
  }
};

struct CnotOpLowering : PTXPattern<CnotOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(CnotOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA();
    Value isZero = cmp(rewriter, loc, P::eq, a, intConst(rewriter, loc, a.getType(), 0));
    rewriter.replaceOp(op, zext(rewriter, loc, a.getType(), isZero));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Bit fields
//===----------------------------------------------------------------------===//

/// bfe, following the ISA's pseudo code:
///  1. pos = b & 0xff, len = c & 0xff for 32 bits; for 64 bits the H200
///     takes b and c whole (the ISA's masking would turn pos 256 into 0 and
///     len 0x8000 into 0; the hardware gives the sign and a 49-bit field);
///  2. the field has n = min(len, width - pos) bits inside `a`;
///  3. shift it down, then up and down again by width - n, arithmetically
///     for signed types (that replicates bit pos + n - 1, the ISA's sbit);
///  4. len == 0 gives 0; pos >= width gives the sign (signed) or 0.
struct BfeOpLowering : PTXPattern<BfeOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(BfeOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA();
    mlir::Type t = a.getType(), i32 = rewriter.getI32Type();
    unsigned width = widthOf(t);
    bool isSigned = isSignedType(op.getType());
    Value pos = adaptor.getB(), len = adaptor.getC();
    if (width == 32) {
      Value byteMask = intConst(rewriter, loc, i32, 0xff);
      pos = andi(rewriter, loc, pos, byteMask);
      len = andi(rewriter, loc, len, byteMask);
    }
    pos = zext(rewriter, loc, t, pos);
    len = zext(rewriter, loc, t, len);
    Value w = intConst(rewriter, loc, t, width);
    Value wMinus1 = intConst(rewriter, loc, t, width - 1);
    Value zero = intConst(rewriter, loc, t, 0);
    Value posIn = minui(rewriter, loc, pos, wMinus1);
    Value shifted = lshr(rewriter, loc, a, posIn);
    Value n = minui(rewriter, loc, len, subi(rewriter, loc, w, posIn));
    Value up = minui(rewriter, loc, subi(rewriter, loc, w, n), wMinus1);
    Value top = shl(rewriter, loc, shifted, up);
    Value field = isSigned ? ashr(rewriter, loc, top, up) : lshr(rewriter, loc, top, up);
    Value beyond = isSigned ? ashr(rewriter, loc, a, wMinus1) : zero;
    Value r = select(rewriter, loc, cmp(rewriter, loc, P::uge, pos, w), beyond, field);
    r = select(rewriter, loc, cmp(rewriter, loc, P::eq, len, zero), zero, r);
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// bfi: n = min(len, width - pos) low bits of `a` replace bits pos.. of `b`;
/// len == 0 or pos >= width leave `b` unchanged.
struct BfiOpLowering : PTXPattern<BfiOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(BfiOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA(), b = adaptor.getB();
    mlir::Type t = a.getType(), i32 = rewriter.getI32Type();
    unsigned width = widthOf(t);
    Value byteMask = intConst(rewriter, loc, i32, 0xff);
    Value pos = zext(rewriter, loc, t, andi(rewriter, loc, adaptor.getC(), byteMask));
    Value len = zext(rewriter, loc, t, andi(rewriter, loc, adaptor.getD(), byteMask));
    Value w = intConst(rewriter, loc, t, width);
    Value wMinus1 = intConst(rewriter, loc, t, width - 1);
    Value zero = intConst(rewriter, loc, t, 0);
    Value posIn = minui(rewriter, loc, pos, wMinus1);
    Value n = minui(rewriter, loc, len, subi(rewriter, loc, w, posIn));
    Value down = minui(rewriter, loc, subi(rewriter, loc, w, n), wMinus1);
    Value low = lshr(rewriter, loc, intConst(rewriter, loc, t, -1), down);
    Value mask = shl(rewriter, loc, low, posIn);
    Value inserted = shl(rewriter, loc, andi(rewriter, loc, a, low), posIn);
    Value kept = andi(rewriter, loc, b, xori(rewriter, loc, mask, intConst(rewriter, loc, t, -1)));
    Value r = ori(rewriter, loc, kept, inserted);
    Value unchanged = ori(rewriter, loc, cmp(rewriter, loc, P::eq, len, zero),
                          cmp(rewriter, loc, P::uge, pos, w));
    rewriter.replaceOp(op, select(rewriter, loc, unchanged, b, r));
    return success();
  }
};

/// prmt:
///  1. the control word is `c` (generic form) or, for a mode, the selector
///     nibbles the ISA's table gives for c[1:0];
///  2. each result byte i takes byte `ctl[4i+2:4i]` of the 64-bit {b, a};
///  3. in the generic form, ctl bit 4i+3 replaces the byte by copies of its
///     sign bit.
struct PrmtOpLowering : PTXPattern<PrmtOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(PrmtOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
    // Result bytes 3..0 as nibbles, for c[1:0] = 0..3 (PTX ISA 9.7.9.7).
    static const int64_t tables[][4] = {/*F4E*/ {0x3210, 0x4321, 0x5432, 0x6543},
                                        /*B4E*/ {0x5670, 0x6701, 0x7012, 0x0123},
                                        /*RC8*/ {0x0000, 0x1111, 0x2222, 0x3333},
                                        /*ECL*/ {0x3210, 0x3211, 0x3222, 0x3333},
                                        /*ECR*/ {0x0000, 0x1110, 0x2210, 0x3210},
                                        /*RC16*/ {0x1010, 0x3232, 0x1010, 0x3232}};
    Value c = adaptor.getC();
    PrmtMode mode = op.getMode();
    bool generic = mode == PrmtMode::None;
    Value ctl = c;
    if (!generic) {
      const int64_t *row = tables[static_cast<int>(mode) - 1];
      Value sel = andi(rewriter, loc, c, intConst(rewriter, loc, i32, 3));
      ctl = intConst(rewriter, loc, i32, row[3]);
      for (int k = 2; k >= 0; --k)
        ctl = select(rewriter, loc, cmp(rewriter, loc, P::eq, sel, intConst(rewriter, loc, i32, k)),
                     intConst(rewriter, loc, i32, row[k]), ctl);
    }
    Value pair = ori(rewriter, loc,
                     shl(rewriter, loc, zext(rewriter, loc, i64, adaptor.getB()),
                         intConst(rewriter, loc, i64, 32)),
                     zext(rewriter, loc, i64, adaptor.getA()));
    Value result = intConst(rewriter, loc, i32, 0);
    Value byteMask = intConst(rewriter, loc, i32, 0xff);
    for (int i = 0; i < 4; ++i) {
      Value nibble = andi(rewriter, loc,
                          lshr(rewriter, loc, ctl, intConst(rewriter, loc, i32, 4 * i)),
                          intConst(rewriter, loc, i32, 0xf));
      Value index = andi(rewriter, loc, nibble, intConst(rewriter, loc, i32, 7));
      Value bitPos = zext(rewriter, loc, i64,
                          shl(rewriter, loc, index, intConst(rewriter, loc, i32, 3)));
      Value byte = andi(rewriter, loc, zext(rewriter, loc, i32, lshr(rewriter, loc, pair, bitPos)),
                        byteMask);
      if (generic) {
        Value replicate = cmp(rewriter, loc, P::ne,
                              andi(rewriter, loc, nibble, intConst(rewriter, loc, i32, 8)),
                              intConst(rewriter, loc, i32, 0));
        Value negative = cmp(rewriter, loc, P::uge, byte, intConst(rewriter, loc, i32, 0x80));
        Value sign = select(rewriter, loc, negative, byteMask, intConst(rewriter, loc, i32, 0));
        byte = select(rewriter, loc, replicate, sign, byte);
      }
      result = ori(rewriter, loc, result,
                   shl(rewriter, loc, byte, intConst(rewriter, loc, i32, 8 * i)));
    }
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// lop3: the OR of the minterms whose bit is set in the table; bit
/// (a << 2 | b << 1 | c) of `lut` is the result for those input bits.
struct Lop3OpLowering : PTXPattern<Lop3Op> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(Lop3Op op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type();
    Value ones = intConst(rewriter, loc, i32, -1);
    Value in[3] = {adaptor.getA(), adaptor.getB(), adaptor.getC()};
    Value notIn[3];
    for (int k = 0; k < 3; ++k)
      notIn[k] = xori(rewriter, loc, in[k], ones);
    Value r = intConst(rewriter, loc, i32, 0);
    int64_t lut = op.getLut();
    for (int m = 0; m < 8; ++m) {
      if (!((lut >> m) & 1))
        continue;
      Value term = ones;
      for (int k = 0; k < 3; ++k)
        term = andi(rewriter, loc, term, ((m >> (2 - k)) & 1) ? in[k] : notIn[k]);
      r = ori(rewriter, loc, r, term);
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// shf: a 64-bit shift of {b, a} by at most 32, so never out of range.
struct ShfOpLowering : PTXPattern<ShfOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(ShfOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type(), i64 = rewriter.getI64Type();
    Value c = adaptor.getC();
    Value n = op.getMode() == ClampMode::Clamp
                  ? minui(rewriter, loc, c, intConst(rewriter, loc, i32, 32))
                  : andi(rewriter, loc, c, intConst(rewriter, loc, i32, 31));
    bool arithmetic = op.getDir() == ShfDir::R && op.getType() == DataType::S32;
    Value high = arithmetic ? sext(rewriter, loc, i64, adaptor.getB())
                            : zext(rewriter, loc, i64, adaptor.getB());
    Value c32 = intConst(rewriter, loc, i64, 32);
    Value pair = ori(rewriter, loc, shl(rewriter, loc, high, c32),
                     zext(rewriter, loc, i64, adaptor.getA()));
    Value n64 = zext(rewriter, loc, i64, n);
    Value r;
    if (op.getDir() == ShfDir::L)
      r = lshr(rewriter, loc, shl(rewriter, loc, pair, n64), c32);
    else
      r = arithmetic ? ashr(rewriter, loc, pair, n64) : lshr(rewriter, loc, pair, n64);
    rewriter.replaceOp(op, zext(rewriter, loc, i32, r));
    return success();
  }
};

/// szext, as the ISA's pseudo code: the bits from N up are a mask filled
/// with the field's top bit (.s32) or cleared (.u32).
struct SzextOpLowering : PTXPattern<SzextOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(SzextOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type();
    Value a = adaptor.getA(), b = adaptor.getB();
    Value c31 = intConst(rewriter, loc, i32, 31);
    Value zero = intConst(rewriter, loc, i32, 0);
    Value ones = intConst(rewriter, loc, i32, -1);
    Value b1 = andi(rewriter, loc, b, c31);
    Value tooLarge = op.getMode() == ClampMode::Clamp
                         ? cmp(rewriter, loc, P::uge, b, intConst(rewriter, loc, i32, 32))
                         : intConst(rewriter, loc, rewriter.getI1Type(), 0);
    Value mask = select(rewriter, loc, tooLarge, zero, shl(rewriter, loc, ones, b1));
    Value kept = andi(rewriter, loc, a, xori(rewriter, loc, mask, ones));
    Value r = kept;
    if (op.getType() == DataType::S32) {
      Value signPos = andi(rewriter, loc, subi(rewriter, loc, b1, intConst(rewriter, loc, i32, 1)),
                           c31);
      Value bit = andi(rewriter, loc, lshr(rewriter, loc, a, signPos),
                       intConst(rewriter, loc, i32, 1));
      Value noSign = ori(rewriter, loc, cmp(rewriter, loc, P::eq, b1, zero), tooLarge);
      Value signSet = arith::AndIOp::create(
          rewriter, loc, cmp(rewriter, loc, P::ne, bit, zero),
          xori(rewriter, loc, noSign, intConst(rewriter, loc, rewriter.getI1Type(), 1)));
      r = ori(rewriter, loc, kept, select(rewriter, loc, signSet, mask, zero));
    }
    rewriter.replaceOp(op, r);
    return success();
  }
};

/// bmsk, as the ISA's pseudo code: mask0 clears the bits below the start,
/// mask1 those from start + width up.
struct BmskOpLowering : PTXPattern<BmskOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(BmskOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type(), i1 = rewriter.getI1Type();
    Value a = adaptor.getA(), b = adaptor.getB();
    Value c31 = intConst(rewriter, loc, i32, 31), c32 = intConst(rewriter, loc, i32, 32);
    Value zero = intConst(rewriter, loc, i32, 0), ones = intConst(rewriter, loc, i32, -1);
    Value a1 = andi(rewriter, loc, a, c31), b1 = andi(rewriter, loc, b, c31);
    Value sum = addi(rewriter, loc, a1, b1);
    Value mask0 = shl(rewriter, loc, ones, a1);
    Value mask1 = shl(rewriter, loc, ones, minui(rewriter, loc, sum, c31));
    Value overflow = cmp(rewriter, loc, P::uge, sum, c32);
    if (op.getMode() == ClampMode::Clamp) {
      Value posOverflow = cmp(rewriter, loc, P::uge, a, c32);
      mask0 = select(rewriter, loc, posOverflow, zero, mask0);
      overflow = ori(rewriter, loc, overflow, posOverflow);
      overflow = ori(rewriter, loc, overflow, cmp(rewriter, loc, P::uge, b, c32));
    }
    (void)i1;
    mask1 = select(rewriter, loc, cmp(rewriter, loc, P::eq, b1, zero), ones, mask1);
    mask1 = select(rewriter, loc, overflow, zero, mask1);
    rewriter.replaceOp(op, andi(rewriter, loc, mask0, xori(rewriter, loc, mask1, ones)));
    return success();
  }
};

/// fns, without the ISA's bit-by-bit loop:
///  1. offset = 0: `base` if bit `base` of mask is set.
///  2. Otherwise keep the bits of mask at or above base (offset > 0) or at or
///     below it (offset < 0); `total` is how many are set.
///  3. Upward the answer is the k-th set bit from the bottom with k = offset;
///     downward the |offset|-th from the top, i.e. k = total + offset + 1 from
///     the bottom. It exists iff 1 <= k <= total (offset is any s32: k is
///     compared signed, and total + offset + 1 cannot overflow).
///  4. The k-th set bit by binary search: for widths 16, 8, 4, 2, 1, if the
///     low `width` bits above pos hold fewer than k set bits, skip them.
/// A base above 31 names no bit: NVIDIA answers 0xffffffff (the H200, for
/// every offset); the shifts take it modulo 32 so none is poison.
struct FnsOpLowering : PTXPattern<FnsOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(FnsOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    mlir::Type i32 = rewriter.getI32Type();
    auto c = [&](int64_t v) { return intConst(rewriter, loc, i32, v); };
    Value mask = adaptor.getMask(), offset = adaptor.getOffset();
    Value base = andi(rewriter, loc, adaptor.getBase(), c(31));
    Value none = c(-1);
    // 1.
    Value baseSet = cmp(rewriter, loc, P::ne,
                        andi(rewriter, loc, lshr(rewriter, loc, mask, base), c(1)), c(0));
    Value atZero = select(rewriter, loc, baseSet, base, none);
    // 2.
    Value up = cmp(rewriter, loc, P::sgt, offset, c(0));
    Value above = shl(rewriter, loc, none, base);
    Value below = xori(rewriter, loc, shl(rewriter, loc, c(-2), base), none);
    Value m = andi(rewriter, loc, mask, select(rewriter, loc, up, above, below));
    Value total = math::CtPopOp::create(rewriter, loc, m);
    // 3.
    Value k = select(rewriter, loc, up, offset,
                     addi(rewriter, loc, addi(rewriter, loc, total, offset), c(1)));
    Value found = andi(rewriter, loc, cmp(rewriter, loc, P::sge, k, c(1)),
                       cmp(rewriter, loc, P::sle, k, total));
    // 4.
    Value pos = c(0);
    for (int64_t width : {16, 8, 4, 2, 1}) {
      Value part = andi(rewriter, loc, lshr(rewriter, loc, m, pos), c((1 << width) - 1));
      Value count = math::CtPopOp::create(rewriter, loc, part);
      Value skip = cmp(rewriter, loc, P::slt, count, k);
      k = select(rewriter, loc, skip, subi(rewriter, loc, k, count), k);
      pos = select(rewriter, loc, skip, addi(rewriter, loc, pos, c(width)), pos);
    }
    Value scanned = select(rewriter, loc, found, pos, none);
    Value isZero = cmp(rewriter, loc, P::eq, offset, c(0));
    Value r = select(rewriter, loc, isZero, atZero, scanned);
    Value baseInRange = cmp(rewriter, loc, P::ult, adaptor.getBase(), c(32));
    rewriter.replaceOp(op, select(rewriter, loc, baseInRange, r, none));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// 24-bit multiplies, sad, dot products
//===----------------------------------------------------------------------===//

/// The 48-bit product of the low 24 bits of a and b, in an i64. Extensions
/// are shift pairs: an i24 would not survive to SPIR-V.
Value product24(OpBuilder &b, Location loc, Value x, Value y, bool isSigned) {
  mlir::Type i64 = b.getI64Type();
  auto low24 = [&](Value v) -> Value {
    Value w = zext(b, loc, i64, v);
    if (!isSigned)
      return andi(b, loc, w, intConst(b, loc, i64, 0xffffff));
    Value c40 = intConst(b, loc, i64, 40);
    return ashr(b, loc, shl(b, loc, w, c40), c40);
  };
  return muli(b, loc, low24(x), low24(y));
}

Value half24(OpBuilder &b, Location loc, Value product, MulMode mode) {
  mlir::Type i32 = b.getI32Type();
  if (mode == MulMode::Hi)
    product = lshr(b, loc, product, intConst(b, loc, b.getI64Type(), 16));
  return zext(b, loc, i32, product);
}

struct Mul24OpLowering : PTXPattern<Mul24Op> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(Mul24Op op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value p = product24(rewriter, loc, adaptor.getA(), adaptor.getB(), isSignedType(op.getType()));
    rewriter.replaceOp(op, half24(rewriter, loc, p, op.getMode()));
    return success();
  }
};

struct Mad24OpLowering : PTXPattern<Mad24Op> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(Mad24Op op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    bool isSigned = isSignedType(op.getType());
    Value p = product24(rewriter, loc, adaptor.getA(), adaptor.getB(), isSigned);
    Value h = half24(rewriter, loc, p, op.getMode());
    if (!op.getSat()) {
      rewriter.replaceOp(op, addi(rewriter, loc, h, adaptor.getC()));
      return success();
    }
    if (!isSigned || op.getMode() != MulMode::Hi)
      return unsupported(op, "'.sat' on 'mad24' other than '.hi.sat.s32'");
    // Saturate the 32-bit signed sum, computed exactly in 64 bits.
    mlir::Type i64 = rewriter.getI64Type();
    Value sum = addi(rewriter, loc, sext(rewriter, loc, i64, h),
                     sext(rewriter, loc, i64, adaptor.getC()));
    sum = arith::MaxSIOp::create(rewriter, loc, sum, intConst(rewriter, loc, i64, INT32_MIN));
    sum = arith::MinSIOp::create(rewriter, loc, sum, intConst(rewriter, loc, i64, INT32_MAX));
    rewriter.replaceOp(op, zext(rewriter, loc, rewriter.getI32Type(), sum));
    return success();
  }
};

struct SadOpLowering : PTXPattern<SadOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(SadOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA(), b = adaptor.getB();
    Value less = cmp(rewriter, loc, isSignedType(op.getType()) ? P::slt : P::ult, a, b);
    Value diff = select(rewriter, loc, less, subi(rewriter, loc, b, a), subi(rewriter, loc, a, b));
    rewriter.replaceOp(op, addi(rewriter, loc, adaptor.getC(), diff));
    return success();
  }
};

/// Bits [index * bits, (index + 1) * bits) of the i32 x, extended to i32.
Value fieldOf(OpBuilder &b, Location loc, Value x, unsigned index, unsigned bits, bool isSigned) {
  mlir::Type i32 = b.getI32Type();
  if (!isSigned)
    return andi(b, loc, lshr(b, loc, x, intConst(b, loc, i32, index * bits)),
                intConst(b, loc, i32, (1 << bits) - 1));
  Value up = shl(b, loc, x, intConst(b, loc, i32, 32 - (index + 1) * bits));
  return ashr(b, loc, up, intConst(b, loc, i32, 32 - bits));
}

struct Dp4aOpLowering : PTXPattern<Dp4aOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(Dp4aOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    bool aSigned = isSignedType(op.getAType()), bSigned = isSignedType(op.getBType());
    Value acc = adaptor.getC();
    for (unsigned i = 0; i < 4; ++i)
      acc = addi(rewriter, loc, acc,
                 muli(rewriter, loc, fieldOf(rewriter, loc, adaptor.getA(), i, 8, aSigned),
                      fieldOf(rewriter, loc, adaptor.getB(), i, 8, bSigned)));
    rewriter.replaceOp(op, acc);
    return success();
  }
};

struct Dp2aOpLowering : PTXPattern<Dp2aOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(Dp2aOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    bool aSigned = isSignedType(op.getAType()), bSigned = isSignedType(op.getBType());
    unsigned first = op.getHi() ? 2 : 0;
    Value acc = adaptor.getC();
    for (unsigned i = 0; i < 2; ++i)
      acc = addi(rewriter, loc, acc,
                 muli(rewriter, loc, fieldOf(rewriter, loc, adaptor.getA(), i, 16, aSigned),
                      fieldOf(rewriter, loc, adaptor.getB(), first + i, 8, bSigned)));
    rewriter.replaceOp(op, acc);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Extended precision: the carry flag is an i1 operand and result
//===----------------------------------------------------------------------===//

/// x + y + carry with the carry out: either partial sum wrapping around.
std::pair<Value, Value> addWithCarry(OpBuilder &b, Location loc, Value x, Value y, Value carryIn) {
  Value s1 = addi(b, loc, x, y);
  Value c1 = cmp(b, loc, P::ult, s1, x);
  if (!carryIn)
    return {s1, c1};
  Value s2 = addi(b, loc, s1, zext(b, loc, x.getType(), carryIn));
  Value c2 = cmp(b, loc, P::ult, s2, s1);
  return {s2, ori(b, loc, c1, c2)};
}

struct AddCcOpLowering : PTXPattern<AddCcOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(AddCcOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    auto [sum, carry] = addWithCarry(rewriter, op.getLoc(), adaptor.getA(), adaptor.getB(),
                                     adaptor.getCarryIn());
    rewriter.replaceOp(op, {sum, carry});
    return success();
  }
};

/// d = a - (b + CC.CF); the new CC.CF is the borrow (PTX ISA 9.7.2.4).
struct SubCcOpLowering : PTXPattern<SubCcOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(SubCcOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA(), b = adaptor.getB();
    Value d = subi(rewriter, loc, a, b);
    Value borrow = cmp(rewriter, loc, P::ult, a, b);
    if (Value cin = adaptor.getCarryIn()) {
      Value c = zext(rewriter, loc, a.getType(), cin);
      borrow = ori(rewriter, loc, borrow, cmp(rewriter, loc, P::ult, d, c));
      d = subi(rewriter, loc, d, c);
    }
    rewriter.replaceOp(op, {d, borrow});
    return success();
  }
};

struct MadCcOpLowering : PTXPattern<MadCcOp> {
  using PTXPattern::PTXPattern;

  LogicalResult matchAndRewrite(MadCcOp op, OpAdaptor adaptor,
                                ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value a = adaptor.getA(), b = adaptor.getB();
    Value product;
    if (op.getMode() == MulMode::Hi)
      product = isSignedType(op.getType())
                    ? arith::MulSIExtendedOp::create(rewriter, loc, a, b).getHigh()
                    : arith::MulUIExtendedOp::create(rewriter, loc, a, b).getHigh();
    else if (op.getMode() == MulMode::Lo)
      product = muli(rewriter, loc, a, b);
    else
      return unsupported(op, "'mad.cc' needs '.lo' or '.hi'");
    auto [sum, carry] = addWithCarry(rewriter, loc, product, adaptor.getC(), adaptor.getCarryIn());
    rewriter.replaceOp(op, {sum, carry});
    return success();
  }
};

} // namespace

void zmlir::populatePTXBitsPatterns(RewritePatternSet &patterns, const PTXLoweringState &state) {
  patterns.add<BitCountLowering<PopcOp>, BitCountLowering<ClzOp>, BfindOpLowering, BrevOpLowering,
               CnotOpLowering, BfeOpLowering, BfiOpLowering, PrmtOpLowering, Lop3OpLowering,
               ShfOpLowering, SzextOpLowering, BmskOpLowering, FnsOpLowering, Mul24OpLowering,
               Mad24OpLowering, SadOpLowering, Dp4aOpLowering, Dp2aOpLowering, AddCcOpLowering,
               SubCcOpLowering, MadCcOpLowering, ShiftOpLowering<ShlOp>, ShiftOpLowering<ShrOp>>(
      patterns.getContext(), state);
}
