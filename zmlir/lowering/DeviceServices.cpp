//===- DeviceServices.cpp - Device printf and assert ---------------------===//
//
// `call vprintf, (format, args)` and `call __assertfail, (message, file,
// line, function, charsize)`: the two functions NVIDIA's driver links into
// every module that uses them. A target with its own (NVPTX) keeps the calls;
// on every other target each becomes a record the thread writes to the
// driver's printf buffer, which the driver formats on the host at its
// synchronisation points (zmlir/runtime/cuda/printf.py). This runs before the
// conversion patterns, as expandIndirectCalls does: it builds loops.
//
//===----------------------------------------------------------------------===//

#include "zmlir/lowering/DeviceServices.h"
#include "zmlir/lowering/PTXLowering.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace zmlir;
using namespace zmlir::ptx;

namespace {

/// NVIDIA's assert message, one record of this format per failing thread.
constexpr const char *kAssertFormat =
    "%s:%d: %s: block: [%d,%d,%d], thread: [%d,%d,%d] Assertion `%s` failed.\n";

//===----------------------------------------------------------------------===//
// Formats
//===----------------------------------------------------------------------===//

/// One value in vprintf's argument buffer: its offset (aligned to its size,
/// the CUDA ABI), its size (4 or 8) and whether it is a %s string.
struct FormatArg {
  int64_t offset;
  unsigned size;
  bool isString;
};

/// What a format passes: its arguments and the buffer's size.
struct FormatLayout {
  SmallVector<FormatArg> args;
  int64_t bytes = 0;
};

/// Lays out the arguments of `format` the way the driver's formatter reads
/// them (zmlir/runtime/printf.py, `parse`, keeps the same rules):
/// `%[flags][width][.precision][length]conversion`; a `*` width or
/// precision is an int argument before the value; d i o u x X c take an int
/// (4 bytes; 8 with l, ll, q, j, z, Z, t or L), f F e E g G a A a double, s p
/// n a 64-bit pointer, %% nothing; an unknown conversion is printed as
/// written and takes nothing; after kMaxArgs arguments the conversions are
/// printed as written. Fails with `error` on what CUDA cannot pass: long
/// double, wide characters and strings, numbered arguments.
LogicalResult layoutFormat(StringRef format, FormatLayout &layout, std::string &error) {
  constexpr unsigned kMaxArgs = 32;
  unsigned count = 0;
  auto add = [&](unsigned size, bool isString) {
    layout.bytes = llvm::alignTo(layout.bytes, size);
    layout.args.push_back({layout.bytes, size, isString});
    layout.bytes += size;
    ++count;
  };
  size_t i = 0, n = format.size();
  while (i < n) {
    if (format[i++] != '%')
      continue;
    size_t start = i - 1;
    while (i < n && StringRef("-+ #0'I").contains(format[i]))
      ++i;
    unsigned stars = 0;
    if (i < n && format[i] == '*') {
      ++stars;
      ++i;
    } else {
      while (i < n && llvm::isDigit(format[i]))
        ++i;
      if (i < n && format[i] == '$') {
        error = ("numbered argument in '" + format.substr(start, i + 1 - start) + "'").str();
        return failure();
      }
    }
    if (i < n && format[i] == '.') {
      ++i;
      if (i < n && format[i] == '*') {
        ++stars;
        ++i;
      } else {
        while (i < n && llvm::isDigit(format[i]))
          ++i;
      }
    }
    size_t lengthStart = i;
    while (i < n && StringRef("hlLqjzZt").contains(format[i]))
      ++i;
    StringRef length = format.slice(lengthStart, i);
    if (i >= n)
      break; // a trailing incomplete conversion is printed as written
    char conversion = format[i++];
    StringRef spec = format.slice(start, i);
    if (conversion == '%')
      continue;
    bool isInt = StringRef("diouxXc").contains(conversion);
    bool isFloat = StringRef("fFeEgGaA").contains(conversion);
    bool isPointer = StringRef("spn").contains(conversion);
    if ((isFloat && length.contains('L')) || (conversion == 'c' && !length.empty()) ||
        (conversion == 's' && !length.empty()) || conversion == 'C' || conversion == 'S') {
      error = ("conversion '" + spec + "' (CUDA's printf passes no long double or wide " +
               "characters)")
                  .str();
      return failure();
    }
    if (!isInt && !isFloat && !isPointer)
      continue;
    if (count + stars + 1 > kMaxArgs)
      continue; // CUDA ignores arguments past the 32nd
    for (unsigned s = 0; s < stars; ++s)
      add(4, false);
    bool wide = !length.empty() && length != "h" && length != "hh";
    add(isInt && !wide ? 4 : 8, conversion == 's');
  }
  return success();
}

/// The initialized bytes of the variable `value` points into, from the
/// address to the first NUL: what `mov.u64 %rd, $str; cvta.global.u64 ...`
/// (nvcc, NVRTC, numba) or an offset from it holds. Follows moves, cvta to
/// the generic space, constant adds, and block arguments whose every
/// incoming value is the same string.
FailureOr<std::string> constantString(Value value, const PTXLoweringState &state,
                                      llvm::SmallPtrSetImpl<Value> &path);

/// One step of constantString: `path` holds the values being resolved (a
/// loop through block arguments is no constant).
FailureOr<std::string> constantStringStep(Value value, const PTXLoweringState &state,
                                          llvm::SmallPtrSetImpl<Value> &path,
                                          SmallVectorImpl<Value> &mine) {
  int64_t offset = 0;
  while (true) {
    if (!path.insert(value).second)
      return failure();
    mine.push_back(value);
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      Block *block = arg.getOwner();
      std::optional<std::string> common;
      for (auto it = block->pred_begin(); it != block->pred_end(); ++it) {
        auto branch = dyn_cast<BranchOpInterface>((*it)->getTerminator());
        if (!branch)
          return failure();
        for (unsigned s = 0; s < branch->getNumSuccessors(); ++s) {
          if (branch->getSuccessor(s) != block)
            continue;
          Value incoming = branch.getSuccessorOperands(s)[arg.getArgNumber()];
          if (!incoming)
            return failure();
          FailureOr<std::string> text = constantString(incoming, state, path);
          if (failed(text) || (common && *common != *text))
            return failure();
          common = *text;
        }
      }
      if (!common || offset != 0)
        return failure();
      return *common;
    }
    Operation *def = value.getDefiningOp();
    if (auto mov = dyn_cast_or_null<MovOp>(def)) {
      value = mov.getSrc();
    } else if (auto cvta = dyn_cast_or_null<CvtaOp>(def)) {
      if (cvta.getTo() ||
          (cvta.getSpace() != StateSpace::Global && cvta.getSpace() != StateSpace::Const))
        return failure();
      value = cvta.getSrc();
    } else if (auto add = dyn_cast_or_null<AddOp>(def)) {
      if (std::optional<int64_t> c = constantInt(add.getB())) {
        offset += *c;
        value = add.getA();
      } else if (std::optional<int64_t> c = constantInt(add.getA())) {
        offset += *c;
        value = add.getB();
      } else {
        return failure();
      }
    } else if (auto addr = dyn_cast_or_null<AddrOfOp>(def)) {
      VarOp var = state.variables.lookup(addr.getSymAttr().getAttr());
      if (!var || !var.getInit() ||
          (var.getSpace() != StateSpace::Global && var.getSpace() != StateSpace::Const))
        return failure();
      // The initializer may stop before the variable's end: zeros follow.
      ArrayRef<int8_t> bytes = *var.getInit();
      int64_t size = var.getCount() * var.getElementSize();
      if (offset < 0 || offset >= size)
        return failure();
      std::string text;
      for (int8_t byte : bytes.drop_front(std::min<int64_t>(offset, bytes.size()))) {
        if (byte == 0)
          return text;
        text.push_back(static_cast<char>(byte));
      }
      if (static_cast<int64_t>(bytes.size()) < size)
        return text;
      return failure(); // no NUL inside the variable
    } else {
      return failure();
    }
  }
}

FailureOr<std::string> constantString(Value value, const PTXLoweringState &state,
                                      llvm::SmallPtrSetImpl<Value> &path) {
  SmallVector<Value> mine;
  FailureOr<std::string> text = constantStringStep(value, state, path, mine);
  for (Value v : mine)
    path.erase(v);
  return text;
}

FailureOr<std::string> constantString(Value value, const PTXLoweringState &state) {
  llvm::SmallPtrSet<Value, 8> path;
  return constantString(value, state, path);
}

//===----------------------------------------------------------------------===//
// Records
//===----------------------------------------------------------------------===//

/// Builds the records of one module: its state variable, its format table,
/// and the code of each printf and assert.
class RecordBuilder {
public:
  RecordBuilder(gpu::GPUModuleOp module, const PTXLoweringState &state)
      : module(module), state(state), ctx(module.getContext()), i8(IntegerType::get(ctx, 8)),
        i32(IntegerType::get(ctx, 32)), i64(IntegerType::get(ctx, 64)),
        globalPtr(LLVM::LLVMPointerType::get(ctx, state.addressSpaces.global)),
        genericPtr(LLVM::LLVMPointerType::get(ctx, state.addressSpaces.generic)) {}

  /// The index of `format` in the module's table.
  unsigned formatIndex(StringRef format) {
    auto [it, inserted] = formatIndices.try_emplace(format, formats.size());
    if (inserted)
      formats.push_back(format.str());
    return it->second;
  }

  /// Writes one record of format `index` before `at`, whose block it
  /// splits: `values` are the arguments (i32 or i64; %s ones the strings'
  /// generic addresses) at their offsets in `layout`. Returns the block the
  /// code after the record continues in (`at` first).
  Block *emitRecord(Operation *at, unsigned index, const FormatLayout &layout,
                    ArrayRef<Value> values);

  /// The module's state and format table, once every record is built.
  void finish(Location loc);

private:
  Value constant(OpBuilder &b, Location loc, mlir::Type type, int64_t v) {
    return intConst(b, loc, type, v);
  }
  Value pointer(OpBuilder &b, Location loc, LLVM::LLVMPointerType type, Value address,
                int64_t offset) {
    if (offset != 0)
      address = arith::AddIOp::create(b, loc, address, constant(b, loc, i64, offset));
    return LLVM::IntToPtrOp::create(b, loc, type, address);
  }
  LLVM::GlobalOp stateVariable(Location loc);
  /// The bytes of the string at `address` (0: none), all of them up to its
  /// NUL, as NVIDIA's printf prints it (an H200 printed a 5999-byte %s
  /// whole); `b` moves to the block after the loop.
  Value stringLength(OpBuilder &b, Location loc, Value address);
  /// Copies `length` bytes from `from` (generic) to `to` (global) and ends
  /// them with a NUL; `b` moves to the block after the loop.
  void copyString(OpBuilder &b, Location loc, Value from, Value to, Value length);

  gpu::GPUModuleOp module;
  const PTXLoweringState &state;
  MLIRContext *ctx;
  mlir::Type i8, i32, i64;
  LLVM::LLVMPointerType globalPtr, genericPtr;
  LLVM::GlobalOp stateVar;
  std::vector<std::string> formats;
  llvm::StringMap<unsigned> formatIndices;
};

LLVM::GlobalOp RecordBuilder::stateVariable(Location loc) {
  if (stateVar)
    return stateVar;
  OpBuilder b(ctx);
  b.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMArrayType::get(i64, 2);
  auto zero = DenseElementsAttr::get(RankedTensorType::get({2}, i64), ArrayRef<int64_t>{0, 0});
  stateVar = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/false, LLVM::Linkage::External,
                                    kPrintfStateName, zero, /*alignment=*/8,
                                    state.addressSpaces.global);
  return stateVar;
}

void RecordBuilder::finish(Location loc) {
  if (formats.empty())
    return;
  std::string table;
  for (const std::string &format : formats) {
    table += format;
    table.push_back('\0');
  }
  OpBuilder b(ctx);
  b.setInsertionPointToStart(module.getBody());
  auto type = LLVM::LLVMArrayType::get(i8, table.size());
  auto bytes = DenseElementsAttr::get(
      RankedTensorType::get({static_cast<int64_t>(table.size())}, i8),
      ArrayRef<int8_t>(reinterpret_cast<const int8_t *>(table.data()), table.size()));
  LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/false, LLVM::Linkage::External,
                         kPrintfFormatsName, bytes, /*alignment=*/1, state.addressSpaces.global);
}

Value RecordBuilder::stringLength(OpBuilder &b, Location loc, Value address) {
  // entry: address == 0 ? exit(0) : head(0)
  // head(n): byte [address + n] == 0 ? exit(n) : head(n + 1)
  Block *entry = b.getInsertionBlock();
  Region *region = entry->getParent();
  Block *exit = entry->splitBlock(b.getInsertionPoint());
  Value length = exit->addArgument(i64, loc);
  Block *head = b.createBlock(region, Region::iterator(exit), {i64}, {loc});
  b.setInsertionPointToEnd(entry);
  Value zero = constant(b, loc, i64, 0);
  Value isNull = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, address, zero);
  cf::CondBranchOp::create(b, loc, isNull, exit, ValueRange{zero}, head, ValueRange{zero});
  b.setInsertionPointToEnd(head);
  Value n = head->getArgument(0);
  Value byte = LLVM::LoadOp::create(
      b, loc, i8, pointer(b, loc, genericPtr, arith::AddIOp::create(b, loc, address, n), 0),
      /*alignment=*/1);
  Value end = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, byte,
                                    constant(b, loc, i8, 0));
  Value next = arith::AddIOp::create(b, loc, n, constant(b, loc, i64, 1));
  cf::CondBranchOp::create(b, loc, end, exit, ValueRange{n}, head, ValueRange{next});
  b.setInsertionPointToStart(exit);
  return length;
}

void RecordBuilder::copyString(OpBuilder &b, Location loc, Value from, Value to, Value length) {
  // head(i): i == length ? exit : body;  body: [to + i] = [from + i]; head(i + 1)
  Block *entry = b.getInsertionBlock();
  Region *region = entry->getParent();
  Block *exit = entry->splitBlock(b.getInsertionPoint());
  Block *head = b.createBlock(region, Region::iterator(exit), {i64}, {loc});
  Block *body = b.createBlock(region, Region::iterator(exit));
  b.setInsertionPointToEnd(entry);
  cf::BranchOp::create(b, loc, head, ValueRange{constant(b, loc, i64, 0)});
  b.setInsertionPointToEnd(head);
  Value i = head->getArgument(0);
  Value done = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, i, length);
  cf::CondBranchOp::create(b, loc, done, exit, ValueRange{}, body, ValueRange{});
  b.setInsertionPointToEnd(body);
  Value byte = LLVM::LoadOp::create(
      b, loc, i8, pointer(b, loc, genericPtr, arith::AddIOp::create(b, loc, from, i), 0), 1);
  LLVM::StoreOp::create(b, loc, byte,
                        pointer(b, loc, globalPtr, arith::AddIOp::create(b, loc, to, i), 0), 1);
  cf::BranchOp::create(b, loc, head,
                       ValueRange{arith::AddIOp::create(b, loc, i, constant(b, loc, i64, 1))});
  b.setInsertionPointToStart(exit);
  LLVM::StoreOp::create(b, loc, constant(b, loc, i8, 0),
                        pointer(b, loc, globalPtr, arith::AddIOp::create(b, loc, to, length), 0),
                        1);
}

Block *RecordBuilder::emitRecord(Operation *at, unsigned index, const FormatLayout &layout,
                                 ArrayRef<Value> values) {
  // 1. The record's size: the header, the argument bytes (8-aligned), then
  //    each %s string with its NUL (none for a null pointer), 8-aligned.
  // 2. Reserve it: an atomic add on the buffer's head; a record past the
  //    buffer's capacity is dropped whole, however long its strings (so is
  //    one whose size does not fit the header's u32, and every record while
  //    the driver has given the module no buffer: its address is 0).
  // 3. Write the header {size, module id, format index, 0}, the arguments
  //    as vprintf's buffer holds them, the strings.
  Location loc = at->getLoc();
  OpBuilder b(at);
  int64_t fixed = kPrintfHeaderBytes + llvm::alignTo(layout.bytes, 8);
  SmallVector<Value> lengths(values.size());
  Value zero = constant(b, loc, i64, 0), one = constant(b, loc, i64, 1);
  Value size = constant(b, loc, i64, fixed);
  for (auto [i, arg] : llvm::enumerate(layout.args)) {
    if (!arg.isString)
      continue;
    lengths[i] = stringLength(b, loc, values[i]);
    Value isNull = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, values[i], zero);
    Value stored = arith::SelectOp::create(b, loc, isNull, zero,
                                           arith::AddIOp::create(b, loc, lengths[i], one));
    size = arith::AddIOp::create(b, loc, size, stored);
  }
  if (llvm::any_of(layout.args, [](const FormatArg &arg) { return arg.isString; }))
    size = arith::AndIOp::create(b, loc,
                                 arith::AddIOp::create(b, loc, size, constant(b, loc, i64, 7)),
                                 constant(b, loc, i64, ~int64_t(7)));

  Block *before = b.getInsertionBlock();
  Region *region = before->getParent();
  Block *after = before->splitBlock(b.getInsertionPoint());
  Block *reserve = b.createBlock(region, Region::iterator(after));
  Block *write = b.createBlock(region, Region::iterator(after));

  b.setInsertionPointToEnd(before);
  LLVM::GlobalOp var = stateVariable(loc);
  Value stateAddr = LLVM::AddressOfOp::create(b, loc, var);
  Value buffer = LLVM::LoadOp::create(b, loc, i64, stateAddr, /*alignment=*/8);
  Value noBuffer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, buffer, zero);
  cf::CondBranchOp::create(b, loc, noBuffer, after, ValueRange{}, reserve, ValueRange{});

  b.setInsertionPointToEnd(reserve);
  Value offset = LLVM::AtomicRMWOp::create(b, loc, LLVM::AtomicBinOp::add,
                                           pointer(b, loc, globalPtr, buffer, 0), size,
                                           LLVM::AtomicOrdering::monotonic);
  Value capacity = LLVM::LoadOp::create(b, loc, i64, pointer(b, loc, globalPtr, buffer, 8), 8);
  Value end = arith::AddIOp::create(b, loc, offset, size);
  Value fits = arith::AndIOp::create(
      b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, end, capacity),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, size,
                            constant(b, loc, i64, UINT32_MAX)));
  cf::CondBranchOp::create(b, loc, fits, write, ValueRange{}, after, ValueRange{});

  b.setInsertionPointToEnd(write);
  Value record = arith::AddIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, buffer, constant(b, loc, i64, kPrintfBufferHeaderBytes)),
      offset);
  Value idAddr = LLVM::GEPOp::create(b, loc, globalPtr, i64, stateAddr, ArrayRef<LLVM::GEPArg>{1});
  Value moduleId = LLVM::LoadOp::create(b, loc, i32, idAddr, 8);
  Value header[] = {arith::TruncIOp::create(b, loc, i32, size), moduleId,
                    constant(b, loc, i32, index), constant(b, loc, i32, 0)};
  for (auto [i, word] : llvm::enumerate(header))
    LLVM::StoreOp::create(b, loc, word, pointer(b, loc, globalPtr, record, 4 * i), 4);
  for (auto [arg, value] : llvm::zip(layout.args, values))
    LLVM::StoreOp::create(b, loc, value,
                          pointer(b, loc, globalPtr, record, kPrintfHeaderBytes + arg.offset),
                          arg.size);
  Value strings = arith::AddIOp::create(b, loc, record, constant(b, loc, i64, fixed));
  for (auto [i, arg] : llvm::enumerate(layout.args)) {
    if (!arg.isString)
      continue;
    // A null pointer stores nothing (the driver prints "(null)").
    Block *current = b.getInsertionBlock();
    Block *copy = b.createBlock(region, Region::iterator(after));
    Block *join = b.createBlock(region, Region::iterator(after), {i64}, {loc});
    b.setInsertionPointToEnd(current);
    Value isNull = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, values[i], zero);
    cf::CondBranchOp::create(b, loc, isNull, join, ValueRange{strings}, copy, ValueRange{});
    b.setInsertionPointToEnd(copy);
    copyString(b, loc, values[i], strings, lengths[i]);
    Value next = arith::AddIOp::create(b, loc, strings,
                                       arith::AddIOp::create(b, loc, lengths[i], one));
    cf::BranchOp::create(b, loc, join, ValueRange{next});
    b.setInsertionPointToEnd(join);
    strings = join->getArgument(0);
  }
  cf::BranchOp::create(b, loc, after);
  return after;
}

//===----------------------------------------------------------------------===//
// The calls
//===----------------------------------------------------------------------===//

/// Erases the ops that computed `value` once nothing uses them: a format's
/// address is no longer needed at run time (a `cvta.const` of it would not
/// lower on every target).
void eraseUnused(Value value) {
  SmallVector<Value> pending{value};
  while (!pending.empty()) {
    Operation *def = pending.pop_back_val().getDefiningOp();
    if (!def || !def->use_empty() || !isa<MovOp, CvtaOp, AddOp, AddrOfOp, arith::ConstantOp>(def))
      continue;
    for (Value operand : def->getOperands())
      if (!llvm::is_contained(pending, operand))
        pending.push_back(operand);
    def->erase();
  }
}

/// `vprintf(format, args)`: the format must be a constant string; the result
/// is the number of arguments, as CUDA's printf returns.
LogicalResult expandPrintf(CallOp call, RecordBuilder &records, const PTXLoweringState &state) {
  Location loc = call.getLoc();
  if (call.getArgs().size() != 2 || call.getNumResults() > 1 ||
      !call.getArgs()[0].getType().isInteger(64) || !call.getArgs()[1].getType().isInteger(64) ||
      (call.getNumResults() == 1 && !call.getResult(0).getType().isInteger(32)))
    return call.emitError("unsupported call of 'vprintf' with a signature other than "
                          "(.b64 format, .b64 args) -> .b32");
  FailureOr<std::string> format = constantString(call.getArgs()[0], state);
  if (failed(format))
    return call.emitError("unsupported printf format: not a constant string (the address of "
                          "an initialized .global or .const variable)");
  FormatLayout layout;
  std::string error;
  if (failed(layoutFormat(*format, layout, error)))
    return call.emitError("unsupported printf ") << error;
  OpBuilder b(call);
  mlir::Type i64 = b.getI64Type();
  SmallVector<Value> values;
  Value args = call.getArgs()[1];
  for (const FormatArg &arg : layout.args) {
    Value address = arith::AddIOp::create(b, loc, args, intConst(b, loc, i64, arg.offset));
    auto ptr = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext(), state.addressSpaces.generic), address);
    values.push_back(LLVM::LoadOp::create(b, loc, b.getIntegerType(8 * arg.size), ptr, arg.size));
  }
  records.emitRecord(call, records.formatIndex(*format), layout, values);
  b.setInsertionPoint(call);
  if (call.getNumResults() == 1)
    call.getResult(0).replaceAllUsesWith(
        intConst(b, loc, call.getResult(0).getType(), static_cast<int64_t>(layout.args.size())));
  Value formatAddress = call.getArgs()[0];
  call.erase();
  eraseUnused(formatAddress);
  return success();
}

/// `__assertfail(message, file, line, function, charsize)`: NVIDIA's
/// message (kAssertFormat) with the thread's block and thread indices, then
/// the thread ends as the target ends it after an assert.
LogicalResult expandAssert(CallOp call, RecordBuilder &records, const PTXLoweringState &state) {
  Location loc = call.getLoc();
  ValueRange args = call.getArgs();
  if (args.size() != 5 || call.getNumResults() != 0 || !args[0].getType().isInteger(64) ||
      !args[1].getType().isInteger(64) || !args[2].getType().isInteger(32) ||
      !args[3].getType().isInteger(64))
    return call.emitError("unsupported call of '__assertfail' with a signature other than "
                          "(.b64 message, .b64 file, .b32 line, .b64 function, .b64 charsize)");
  FormatLayout layout;
  std::string error;
  (void)layoutFormat(kAssertFormat, layout, error);
  OpBuilder b(call);
  mlir::Type i32 = b.getI32Type();
  auto sreg = [&](SpecialReg reg) -> Value { return SregOp::create(b, loc, i32, reg); };
  Value values[] = {args[1],
                    args[2],
                    args[3],
                    sreg(SpecialReg::CtaidX),
                    sreg(SpecialReg::CtaidY),
                    sreg(SpecialReg::CtaidZ),
                    sreg(SpecialReg::TidX),
                    sreg(SpecialReg::TidY),
                    sreg(SpecialReg::TidZ),
                    args[0]};
  Block *after = records.emitRecord(call, records.formatIndex(kAssertFormat), layout, values);
  // The call is the first op of `after`: the thread ends there. The ops
  // after it stay behind an always-taken branch, so whatever they define
  // still dominates its uses.
  Block *rest = after->splitBlock(std::next(Block::iterator(call)));
  Block *end = b.createBlock(rest);
  state.target.emitAssertTrap(b, loc, state);
  b.setInsertionPointAfter(call);
  cf::CondBranchOp::create(b, loc, intConst(b, loc, b.getI1Type(), 1), end, ValueRange{}, rest,
                           ValueRange{});
  call.erase();
  return success();
}

} // namespace

LogicalResult zmlir::expandDeviceServices(gpu::GPUModuleOp module, const PTXLoweringState &state) {
  SmallVector<CallOp> calls;
  module.walk([&](CallOp call) {
    StringRef callee = call.getCallee();
    if ((callee == "vprintf" || callee == "__assertfail") &&
        !module.lookupSymbol<LLVM::LLVMFuncOp>(callee))
      calls.push_back(call);
  });
  if (calls.empty())
    return success();
  if (state.target.hasNativePrintf()) {
    // NVIDIA's driver links its own: declare them; the calls stay calls.
    OpBuilder b(module.getContext());
    for (CallOp call : calls)
      declareFunction(b, call, call.getCallee(),
                      LLVM::LLVMFunctionType::get(
                          call.getNumResults() ? call.getResult(0).getType()
                                               : LLVM::LLVMVoidType::get(module.getContext()),
                          llvm::to_vector(call.getArgs().getTypes())));
    return success();
  }
  RecordBuilder records(module, state);
  for (CallOp call : calls) {
    LogicalResult result = call.getCallee() == "vprintf" ? expandPrintf(call, records, state)
                                                         : expandAssert(call, records, state);
    if (failed(result))
      return failure();
  }
  records.finish(module.getLoc());
  return success();
}
