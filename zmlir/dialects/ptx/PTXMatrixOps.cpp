//===- PTXMatrixOps.cpp - wmma fragments and the wmma verifiers -----------===//
//
// The fragments of PTX's wmma instructions (WmmaFragment.h) and the
// verifiers of ptx.wmma_load, ptx.wmma_store and ptx.wmma_mma: the
// combinations of shape, matrix and types PTX has, and the registers each
// takes (PTX ISA 9.7.14.4).
//
//===----------------------------------------------------------------------===//

#include "zmlir/dialects/ptx/WmmaFragment.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace zmlir::ptx;

WmmaDims zmlir::ptx::getWmmaDims(WmmaShape shape) {
  switch (shape) {
  case WmmaShape::M16N16K16:
    return {16, 16, 16};
  case WmmaShape::M32N8K16:
    return {32, 8, 16};
  case WmmaShape::M8N32K16:
    return {8, 32, 16};
  case WmmaShape::M16N16K8:
    return {16, 16, 8};
  case WmmaShape::M8N8K4:
    return {8, 8, 4};
  }
  llvm_unreachable("unknown wmma shape");
}

unsigned zmlir::ptx::getWmmaTypeBitWidth(WmmaType type) {
  switch (type) {
  case WmmaType::S8:
  case WmmaType::U8:
    return 8;
  case WmmaType::F16:
  case WmmaType::BF16:
    return 16;
  case WmmaType::TF32:
  case WmmaType::F32:
  case WmmaType::S32:
    return 32;
  case WmmaType::F64:
    return 64;
  }
  llvm_unreachable("unknown wmma type");
}

/// Whether PTX has fragments of `matrix` with elements of `type` for `shape`.
static bool isWmmaFragmentType(WmmaShape shape, WmmaMatrix matrix, WmmaType type) {
  bool multiplicand = matrix == WmmaMatrix::A || matrix == WmmaMatrix::B;
  switch (shape) {
  case WmmaShape::M16N16K16:
  case WmmaShape::M32N8K16:
  case WmmaShape::M8N32K16:
    if (multiplicand)
      return type == WmmaType::F16 || type == WmmaType::BF16 || type == WmmaType::S8 ||
             type == WmmaType::U8;
    return type == WmmaType::F16 || type == WmmaType::F32 || type == WmmaType::S32;
  case WmmaShape::M16N16K8:
    return type == (multiplicand ? WmmaType::TF32 : WmmaType::F32);
  case WmmaShape::M8N8K4:
    return type == WmmaType::F64;
  }
  return false;
}

std::optional<WmmaFragment> zmlir::ptx::getWmmaFragment(MLIRContext *ctx, WmmaShape shape,
                                                        WmmaMatrix matrix, WmmaType type,
                                                        std::string *whyNot) {
  if (!isWmmaFragmentType(shape, matrix, type)) {
    if (whyNot)
      *whyNot = (Twine("no '.") + stringifyWmmaType(type) + "' fragment of matrix " +
                 stringifyWmmaMatrix(matrix).upper() + " for shape '." + stringifyWmmaShape(shape) +
                 "'")
                    .str();
    return std::nullopt;
  }
  WmmaDims dims = getWmmaDims(shape);
  WmmaFragment f;
  switch (matrix) {
  case WmmaMatrix::A:
    f.rows = dims.m, f.cols = dims.k;
    break;
  case WmmaMatrix::B:
    f.rows = dims.k, f.cols = dims.n;
    break;
  default:
    f.rows = dims.m, f.cols = dims.n;
    break;
  }
  f.elementBits = getWmmaTypeBitWidth(type);
  Builder b(ctx);
  f.registerType = type == WmmaType::F32   ? b.getF32Type()
                   : type == WmmaType::F64 ? b.getF64Type()
                                           : mlir::Type(b.getI32Type());
  // Packed into 32-bit registers, except that f16 A and B fragments are
  // always eight registers (16 halves a lane, more than their elements for
  // the shapes where A or B has 256 or 128 of them).
  bool multiplicand = matrix == WmmaMatrix::A || matrix == WmmaMatrix::B;
  if (type == WmmaType::F16 && multiplicand)
    f.registers = 8;
  else
    f.registers = f.rows * f.cols * f.elementBits / (32 * f.registerBits());
  return f;
}

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

/// Checks `values` (results or operands, named `what`) against the
/// registers of `fragment`.
static LogicalResult verifyRegisters(Operation *op, const WmmaFragment &fragment, ValueRange values,
                                     StringRef what) {
  if (values.size() != fragment.registers)
    return op->emitOpError() << "expects " << fragment.registers << " registers for " << what
                             << ", got " << values.size();
  for (Value v : values)
    if (v.getType() != fragment.registerType)
      return op->emitOpError() << "expects registers of type " << fragment.registerType << " for "
                               << what << ", got " << v.getType();
  return success();
}

static LogicalResult verifySpace(Operation *op, StateSpace space) {
  if (space != StateSpace::None && space != StateSpace::Global && space != StateSpace::Shared)
    return op->emitOpError("accesses .global, .shared or generic memory only, not '.")
           << stringifyStateSpace(space) << "'";
  return success();
}

/// What wmma.load and wmma.store check alike: `matrix` has a fragment of
/// that shape and type, `space` is one they access, and `fragment` holds its
/// registers.
static LogicalResult verifyFragmentAccess(Operation *op, WmmaShape shape, WmmaMatrix matrix,
                                          WmmaType type, StateSpace space, ValueRange fragment) {
  std::string whyNot;
  std::optional<WmmaFragment> expected = getWmmaFragment(op->getContext(), shape, matrix, type,
                                                         &whyNot);
  if (!expected)
    return op->emitOpError() << whyNot;
  if (failed(verifySpace(op, space)))
    return failure();
  return verifyRegisters(op, *expected, fragment, "the fragment");
}

LogicalResult WmmaLoadOp::verify() {
  if (getMatrix() == WmmaMatrix::D)
    return emitOpError("loads matrix A, B or C, not D");
  return verifyFragmentAccess(*this, getShape(), getMatrix(), getType(), getSpace(), getFragment());
}

LogicalResult WmmaStoreOp::verify() {
  return verifyFragmentAccess(*this, getShape(), WmmaMatrix::D, getType(), getSpace(),
                              getFragment());
}

LogicalResult WmmaMmaOp::verify() {
  WmmaType a = getAtype(), b = getBtype(), c = getCtype(), d = getDtype();
  auto isInt8 = [](WmmaType t) { return t == WmmaType::S8 || t == WmmaType::U8; };
  auto isHalfOrFloat = [](WmmaType t) { return t == WmmaType::F16 || t == WmmaType::F32; };
  bool floatForm = false;
  bool valid;
  if (a == WmmaType::F16 || b == WmmaType::F16) {
    valid = a == b && isHalfOrFloat(c) && isHalfOrFloat(d);
    floatForm = true;
  } else if (isInt8(a) || isInt8(b)) {
    valid = isInt8(a) && isInt8(b) && c == WmmaType::S32 && d == WmmaType::S32;
  } else if (a == WmmaType::F64) {
    valid = b == a && c == a && d == a;
  } else {
    valid = (a == WmmaType::BF16 || a == WmmaType::TF32) && b == a && c == WmmaType::F32 &&
            d == WmmaType::F32;
  }
  if (!valid)
    return emitOpError("has no form with types .")
           << stringifyWmmaType(d) << ".(" << stringifyWmmaType(a) << " x " << stringifyWmmaType(b)
           << ") + ." << stringifyWmmaType(c);
  if (getSatfinite() && !floatForm && a != WmmaType::S8 && a != WmmaType::U8)
    return emitOpError("'.satfinite' applies to f16 and integer multiplicands only");
  Rounding rnd = getRnd();
  if (rnd != Rounding::None && (a != WmmaType::F64 || (rnd != Rounding::RN && rnd != Rounding::RZ &&
                                                       rnd != Rounding::RM && rnd != Rounding::RP)))
    return emitOpError("takes a rounding modifier (.rn, .rz, .rm, .rp) for f64 only");
  std::string whyNot;
  MLIRContext *ctx = getContext();
  struct Part {
    WmmaMatrix matrix;
    WmmaType type;
    ValueRange values;
    StringRef name;
  };
  for (const Part &part :
       {Part{WmmaMatrix::A, a, getA(), "A"}, Part{WmmaMatrix::B, b, getB(), "B"},
        Part{WmmaMatrix::C, c, getC(), "C"}, Part{WmmaMatrix::D, d, getD(), "D"}}) {
    std::optional<WmmaFragment> fragment = getWmmaFragment(ctx, getShape(), part.matrix, part.type,
                                                           &whyNot);
    if (!fragment)
      return emitOpError() << whyNot;
    if (failed(verifyRegisters(*this, *fragment, part.values, part.name)))
      return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// mma.sync and ldmatrix
//===----------------------------------------------------------------------===//

std::optional<MmaSyncForm> zmlir::ptx::getMmaSyncForm(MLIRContext *ctx, MmaShape shape,
                                                      WmmaType atype, WmmaType btype,
                                                      WmmaType ctype, WmmaType dtype,
                                                      std::string *whyNot) {
  Builder b(ctx);
  mlir::Type f32 = b.getF32Type();
  bool f32Accumulators = ctype == WmmaType::F32 && dtype == WmmaType::F32;
  std::optional<MmaSyncForm> form;
  switch (shape) {
  case MmaShape::M16N8K16:
    // f16 multiplicands also take f16 accumulators (pairs in a .b32), C's
    // type D's (ptxas).
    if ((atype == WmmaType::F16 || atype == WmmaType::BF16) && btype == atype && f32Accumulators)
      form = MmaSyncForm{16, 8, 16, 16, 4, 2, 4, b.getI32Type(), f32, f32};
    else if (atype == WmmaType::F16 && btype == atype && ctype == atype && dtype == atype)
      form = MmaSyncForm{16, 8, 16, 16, 4, 2, 4, b.getI32Type(), b.getI32Type(), b.getI32Type()};
    break;
  case MmaShape::M16N8K8:
    if (atype == WmmaType::TF32 && btype == atype && f32Accumulators)
      form = MmaSyncForm{16, 8, 8, 32, 4, 2, 4, b.getI32Type(), f32, f32};
    break;
  case MmaShape::M8N8K4:
    if (atype == WmmaType::F64 && btype == atype && ctype == atype && dtype == atype)
      form = MmaSyncForm{8, 8, 4, 64, 1, 1, 2, b.getF64Type(), b.getF64Type(), b.getF64Type()};
    break;
  }
  if (!form && whyNot)
    *whyNot = (Twine("no form .") + stringifyMmaShape(shape) + "." + stringifyWmmaType(dtype) +
               "." + stringifyWmmaType(atype) + "." + stringifyWmmaType(btype) + "." +
               stringifyWmmaType(ctype))
                  .str();
  return form;
}

/// Checks `values` (operands or results, named `what`) against `count`
/// registers of `type`.
static LogicalResult verifyMmaRegisters(Operation *op, ValueRange values, unsigned count,
                                        mlir::Type type, StringRef what) {
  if (values.size() != count)
    return op->emitOpError() << "expects " << count << " registers for " << what << ", got "
                             << values.size();
  for (Value v : values)
    if (v.getType() != type)
      return op->emitOpError() << "expects registers of type " << type << " for " << what
                               << ", got " << v.getType();
  return success();
}

LogicalResult MmaSyncOp::verify() {
  std::string whyNot;
  std::optional<MmaSyncForm> form = getMmaSyncForm(getContext(), getShape(), getAtype(), getBtype(),
                                                   getCtype(), getDtype(), &whyNot);
  if (!form)
    return emitOpError("has ") << whyNot;
  if (failed(verifyMmaRegisters(*this, getA(), form->aRegisters, form->multiplicandType, "A")) ||
      failed(verifyMmaRegisters(*this, getB(), form->bRegisters, form->multiplicandType, "B")) ||
      failed(verifyMmaRegisters(*this, getC(), form->accumulatorRegisters(form->cType), form->cType,
                                "C")) ||
      failed(verifyMmaRegisters(*this, getD(), form->accumulatorRegisters(form->dType), form->dType,
                                "D")))
    return failure();
  return success();
}

LogicalResult LdmatrixOp::verify() {
  size_t n = getD().size();
  if (n != 1 && n != 2 && n != 4)
    return emitOpError("loads 1, 2 or 4 matrices (.x1, .x2, .x4), not ") << n;
  StateSpace space = getSpace();
  if (space != StateSpace::None && space != StateSpace::Shared)
    return emitOpError("reads .shared or generic addresses only, not '.")
           << stringifyStateSpace(space) << "'";
  return success();
}
