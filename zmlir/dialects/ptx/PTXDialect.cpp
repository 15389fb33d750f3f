//===- PTXDialect.cpp - ptx dialect registration and verifiers ------------===//

#include "zmlir/dialects/ptx/PTXDialect.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace zmlir::ptx;

#include "zmlir/dialects/ptx/PTXDialect.cpp.inc"
#include "zmlir/dialects/ptx/PTXEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "zmlir/dialects/ptx/PTXAttrs.cpp.inc"

void PTXDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "zmlir/dialects/ptx/PTXAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "zmlir/dialects/ptx/PTXOps.cpp.inc"
      >();
}

unsigned zmlir::ptx::getTypeBitWidth(DataType type) {
  switch (type) {
  case DataType::None:
    return 0;
  case DataType::Pred:
    return 1;
  case DataType::B8:
  case DataType::U8:
  case DataType::S8:
    return 8;
  case DataType::B16:
  case DataType::U16:
  case DataType::S16:
  case DataType::F16:
  case DataType::BF16:
  case DataType::E4M3x2:
  case DataType::E5M2x2:
    return 16;
  case DataType::B32:
  case DataType::U32:
  case DataType::S32:
  case DataType::F32:
  case DataType::F16x2:
  case DataType::BF16x2:
    return 32;
  case DataType::B64:
  case DataType::U64:
  case DataType::S64:
  case DataType::F64:
    return 64;
  case DataType::B128:
    return 128;
  }
  llvm_unreachable("unknown PTX type");
}

bool zmlir::ptx::isFloatType(DataType type) {
  switch (type) {
  case DataType::F16:
  case DataType::F16x2:
  case DataType::BF16:
  case DataType::BF16x2:
  case DataType::F32:
  case DataType::F64:
  case DataType::E4M3x2:
  case DataType::E5M2x2:
    return true;
  default:
    return false;
  }
}

bool zmlir::ptx::isFp8PairType(DataType type) {
  return type == DataType::E4M3x2 || type == DataType::E5M2x2;
}

bool zmlir::ptx::isSignedType(DataType type) {
  return type == DataType::S8 || type == DataType::S16 || type == DataType::S32 ||
         type == DataType::S64;
}

static unsigned bitWidth(mlir::Type type) {
  return type.getIntOrFloatBitWidth();
}

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

LogicalResult MulOp::verify() {
  unsigned in = bitWidth(getA().getType());
  unsigned out = bitWidth(getRes().getType());
  unsigned expected = getMode() == MulMode::Wide ? 2 * in : in;
  if (out != expected)
    return emitOpError("result must be ") << expected << " bits wide for mode '"
                                          << stringifyMulMode(getMode()) << "', got " << out;
  return success();
}

LogicalResult MadOp::verify() {
  unsigned in = bitWidth(getA().getType());
  unsigned out = bitWidth(getRes().getType());
  unsigned expected = getMode() == MulMode::Wide ? 2 * in : in;
  if (out != expected)
    return emitOpError("addend and result must be ")
           << expected << " bits wide for mode '" << stringifyMulMode(getMode()) << "', got "
           << out;
  return success();
}

LogicalResult SetpOp::verify() {
  if ((getBoolop() == BoolOp::None) != !getC())
    return emitOpError("a combining predicate operand requires .and/.or/.xor "
                       "and vice versa");
  if (getNegateC() && !getC())
    return emitOpError("'negate_c' requires the predicate operand 'c'");
  return success();
}

/// rcp, sqrt, ..., tanh: an `i32` operand is a packed `.f16x2`/`.bf16x2`
/// and only that.
template <typename FloatUnaryOp>
static LogicalResult verifyFloatUnary(FloatUnaryOp op) {
  DataType type = op.getType();
  bool packed = type == DataType::F16x2 || type == DataType::BF16x2;
  if (packed != op.getA().getType().isInteger(32))
    return op.emitOpError("type '.")
           << stringifyDataType(type) << "' does not match its operand " << op.getA().getType();
  return success();
}

#define ZMLIR_FLOAT_UNARY_VERIFIER(Op)                                                             \
  LogicalResult Op::verify() {                                                                     \
    return verifyFloatUnary(*this);                                                                \
  }
ZMLIR_FLOAT_UNARY_VERIFIER(RcpOp)
ZMLIR_FLOAT_UNARY_VERIFIER(SqrtOp)
ZMLIR_FLOAT_UNARY_VERIFIER(RsqrtOp)
ZMLIR_FLOAT_UNARY_VERIFIER(SinOp)
ZMLIR_FLOAT_UNARY_VERIFIER(CosOp)
ZMLIR_FLOAT_UNARY_VERIFIER(Lg2Op)
ZMLIR_FLOAT_UNARY_VERIFIER(Ex2Op)
ZMLIR_FLOAT_UNARY_VERIFIER(TanhOp)
#undef ZMLIR_FLOAT_UNARY_VERIFIER

LogicalResult MovOp::verify() {
  if (bitWidth(getSrc().getType()) != bitWidth(getRes().getType()))
    return emitOpError("source and result must have the same bit width");
  return success();
}

/// The fp8 pair forms of cvt (sm_89, PTX ISA 9.7.9.21): `.rn` only, `.relu`
/// allowed, neither `.ftz` nor `.sat`; narrowing to fp8 always saturates
/// (`.satfinite`), widening never does.
template <typename Cvt>
static LogicalResult verifyFp8Cvt(Cvt op, bool narrowing, bool ftzOrSat) {
  if (op.getRnd() != Rounding::RN)
    return op.emitOpError("an fp8 conversion rounds '.rn', not '.")
           << stringifyRounding(op.getRnd()) << "'";
  if (ftzOrSat)
    return op.emitOpError("an fp8 conversion takes neither '.ftz' nor '.sat'");
  if (narrowing != static_cast<bool>(op.getSatfinite()))
    return op.emitOpError(narrowing ? "a conversion to fp8 needs '.satfinite'"
                                    : "'.satfinite' applies to conversions to fp8 only");
  return success();
}

LogicalResult CvtOp::verify() {
  DataType dst = getType(), src = getSrcType();
  if (dst == DataType::None || src == DataType::None)
    return emitOpError("needs both a destination and a source type");
  bool toFp8 = isFp8PairType(dst), fromFp8 = isFp8PairType(src);
  if (!toFp8 && !fromFp8) {
    if (getSatfinite() && !isFloatType(dst))
      return emitOpError("'.satfinite' converts to floating-point types only");
    return success();
  }
  if ((toFp8 ? src : dst) != DataType::F16x2)
    return emitOpError("converts fp8 pairs from and to '.f16x2' (from '.f32': "
                       "'ptx.cvt_pack'), not '.")
           << stringifyDataType(dst) << "." << stringifyDataType(src) << "'";
  if (bitWidth(getSrc().getType()) < getTypeBitWidth(src) ||
      bitWidth(getRes().getType()) < getTypeBitWidth(dst))
    return emitOpError("registers narrower than the conversion's types");
  return verifyFp8Cvt(*this, toFp8, getFtz() || getSat());
}

LogicalResult CvtPackOp::verify() {
  DataType type = getType();
  unsigned width = bitWidth(getRes().getType());
  if (isFp8PairType(type)) {
    if (width < 16)
      return emitOpError("an fp8 pair needs a result of at least 16 bits");
    return verifyFp8Cvt(*this, true, false);
  }
  if (type != DataType::F16x2 && type != DataType::BF16x2)
    return emitOpError("packs into '.f16x2', '.bf16x2', '.e4m3x2' or '.e5m2x2', not '.")
           << stringifyDataType(type) << "'";
  if (width != 32)
    return emitOpError("a '.") << stringifyDataType(type) << "' pair is 32 bits wide";
  return success();
}

LogicalResult CvtPackSatOp::verify() {
  uint32_t width = getWidth();
  if (width != 2 && width != 4 && width != 8 && width != 16)
    return emitOpError("packs into 2, 4, 8 or 16 bits, not ") << width;
  if ((width == 16) == static_cast<bool>(getC()))
    return emitOpError(width == 16 ? "of 16-bit values takes no third operand"
                                   : "of values narrower than 16 bits takes a third operand");
  return success();
}

template <typename MemOp>
static LogicalResult verifyVectorWidth(MemOp op, size_t numValues) {
  int64_t vec = op.getVec();
  if (vec != 1 && vec != 2 && vec != 4 && vec != 8)
    return op.emitOpError("vector width must be 1, 2, 4 or 8, got ") << vec;
  if (static_cast<int64_t>(numValues) != vec)
    return op.emitOpError("expects ")
           << vec << " values for vector width " << vec << ", got " << numValues;
  return success();
}

LogicalResult LdOp::verify() {
  return verifyVectorWidth(*this, getResults().size());
}

LogicalResult StOp::verify() {
  return verifyVectorWidth(*this, getValues().size());
}

LogicalResult PrefetchOp::verify() {
  StateSpace space = getSpace();
  if (space != StateSpace::None && space != StateSpace::Global && space != StateSpace::Local)
    return emitOpError("prefetches from generic, global or local addresses, not '")
           << stringifyStateSpace(space) << "'";
  CacheLevel level = getLevel();
  if ((level == CacheLevel::L2EvictLast || level == CacheLevel::L2EvictNormal) &&
      space != StateSpace::Global)
    return emitOpError("an L2 eviction priority needs '.global'");
  if (getUniform() && (level != CacheLevel::L1 || space != StateSpace::None))
    return emitOpError("'prefetchu' is '.L1' on generic addresses only");
  return success();
}

LogicalResult AtomOp::verify() {
  bool isCas = getOp() == AtomicOp::Cas;
  if (isCas != static_cast<bool>(getC()))
    return emitOpError("the third operand is required by, and only by, 'cas'");
  return success();
}

LogicalResult RedOp::verify() {
  if (getOp() == AtomicOp::Cas || getOp() == AtomicOp::Exch)
    return emitOpError("'") << stringifyAtomicOp(getOp()) << "' has no reduction form";
  return success();
}

LogicalResult Lop3Op::verify() {
  int64_t lut = getLut();
  if (lut < 0 || lut > 255)
    return emitOpError("lookup table must be in [0, 255], got ") << lut;
  return success();
}

LogicalResult SetOp::verify() {
  if ((getBoolop() == BoolOp::None) != !getC())
    return emitOpError("a combining predicate operand requires .and/.or/.xor "
                       "and vice versa");
  if (getNegateC() && !getC())
    return emitOpError("'negate_c' requires the predicate operand 'c'");
  bool floatResult = getType() == DataType::F32;
  if (floatResult != getRes().getType().isF32())
    return emitOpError("result must be f32 exactly when the type is .f32");
  return success();
}

LogicalResult MovPackOp::verify() {
  unsigned total = 0;
  for (Value v : getElems())
    total += bitWidth(v.getType());
  if (getElems().size() < 2 || total != bitWidth(getRes().getType()))
    return emitOpError("needs at least two elements whose widths add up to "
                       "the result's");
  return success();
}

LogicalResult MovUnpackOp::verify() {
  unsigned total = 0;
  for (Value v : getElems())
    total += bitWidth(v.getType());
  if (getElems().size() < 2 || total != bitWidth(getSrc().getType()))
    return emitOpError("needs at least two results whose widths add up to "
                       "the source's");
  return success();
}

LogicalResult VoteSyncOp::verify() {
  bool ballot = getMode() == VoteMode::Ballot;
  if (ballot != getRes().getType().isInteger(32))
    return emitOpError("'ballot' and only 'ballot' produces an i32");
  return success();
}

LogicalResult BarRedOp::verify() {
  bool popc = getMode() == BarRedMode::Popc;
  if (popc != getRes().getType().isInteger(32))
    return emitOpError("'popc' and only 'popc' produces an i32");
  return success();
}

LogicalResult ReduxSyncOp::verify() {
  switch (getOp()) {
  case AtomicOp::Add:
  case AtomicOp::Min:
  case AtomicOp::Max:
  case AtomicOp::And:
  case AtomicOp::Or:
  case AtomicOp::Xor:
    return success();
  default:
    return emitOpError("'") << stringifyAtomicOp(getOp()) << "' is not a redux operation";
  }
}

int64_t VarOp::getElementSize() {
  return std::max<int64_t>(1, getTypeBitWidth(getType()) / 8);
}

LogicalResult VarOp::verify() {
  int64_t align = getAlign();
  if (align != 0 && !llvm::isPowerOf2_64(align))
    return emitOpError("alignment must be a power of two, got ") << align;
  if (getCount() < 0)
    return emitOpError("element count must not be negative");
  if (getManaged() && getSpace() != StateSpace::Global)
    return emitOpError("only .global variables can be managed");
  if (auto init = getInit()) {
    if (static_cast<int64_t>(init->size()) > getCount() * getElementSize())
      return emitOpError("initializer is larger than the variable");
  }
  if (auto addresses = getInitAddresses()) {
    int64_t element = getElementSize();
    if (element != 4 && element != 8)
      return emitOpError("addresses in the initializer need a 32- or 64-bit "
                         "element type");
    for (auto address : addresses->getAsRange<InitAddressAttr>()) {
      int64_t offset = address.getOffset();
      if (offset < 0 || offset % element != 0 || offset + element > getCount() * element)
        return emitOpError("initializer address at byte ")
               << offset << " is not an element of the variable";
    }
  }
  return success();
}

LogicalResult StParamOp::verify() {
  auto array = llvm::dyn_cast<LLVM::LLVMArrayType>(getParam().getType());
  if (!array || !array.getElementType().isInteger(8))
    return emitOpError("expects an aggregate parameter of type !llvm.array<N x i8>");
  int64_t bytes = std::max<int64_t>(1, getTypeBitWidth(getType()) / 8);
  if (getOffset() < 0 || getOffset() + bytes > static_cast<int64_t>(array.getNumElements()))
    return emitOpError("stores bytes [")
           << getOffset() << ", " << getOffset() + bytes << ") outside the parameter of "
           << array.getNumElements() << " bytes";
  return success();
}

//===----------------------------------------------------------------------===//
// Branches
//===----------------------------------------------------------------------===//

SuccessorOperands BraOp::getSuccessorOperands(unsigned index) {
  assert(index == 0 && "bra has one successor");
  return SuccessorOperands(getDestOperandsMutable());
}

Block *BraOp::getSuccessorForOperands(ArrayRef<Attribute>) {
  return getDest();
}

SuccessorOperands CondBraOp::getSuccessorOperands(unsigned index) {
  return SuccessorOperands(index == 0 ? getTakenOperandsMutable()
                                      : getFallthroughOperandsMutable());
}

Block *CondBraOp::getSuccessorForOperands(ArrayRef<Attribute> operands) {
  auto cond = llvm::dyn_cast_or_null<IntegerAttr>(operands.front());
  if (!cond)
    return nullptr;
  bool taken = cond.getValue().isOne() != getNegated();
  return taken ? getTaken() : getFallthrough();
}

#define GET_OP_CLASSES
#include "zmlir/dialects/ptx/PTXOps.cpp.inc"
