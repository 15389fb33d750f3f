"""Fix-ups of the SPIR-V binary LLVM's SPIR-V backend writes, for what no
LLVM IR form gets through it.

Constant byte addresses in initializers: LLVM 22 emits a constant
`getelementptr i8, @v, n` (an address initializer's `sym+n`) as
`OpSpecConstantOp InBoundsPtrAccessChain %v %zero %n` with a pointer to
bytes as the result type, and the byte offset as an index into @v's own
type. That is right where @v is a byte array (what the lowering makes of
most variables), and wrong where @v is a struct (a variable with addresses
in its initializer, or one split into parts by the
`spirv-split-long-initializers` fix-up): Intel's OpenCL compiler crashed on
it. Such a chain becomes `OpSpecConstantOp Bitcast %v` to a pointer to bytes
and `OpSpecConstantOp InBoundsPtrAccessChain` of that with `n` as the
element: the same byte.

A program whose f32 subnormals are flushed (F32FlushMode.cpp's program
mode) says so in an `OpModuleProcessed` naming the build option it needs:
its runtime builds it with that (Intel's OpenCL CPU runtime rejects SPIR-V's
own DenormFlushToZero execution mode).
"""

from __future__ import annotations

import array
from collections.abc import Iterator

MAGIC = 0x07230203
HEADER_WORDS = 5
# Opcodes (SPIR-V 1.4 specification, 3.52).
OP_TYPE_INT = 21
OP_TYPE_ARRAY = 28
OP_TYPE_POINTER = 32
OP_SOURCE_CONTINUED = 2
OP_SOURCE = 3
OP_SOURCE_EXTENSION = 4
OP_NAME = 5
OP_MEMBER_NAME = 6
OP_STRING = 7
OP_CONSTANT = 43
OP_CONSTANT_NULL = 46
OP_SPEC_CONSTANT_OP = 52
OP_FUNCTION = 54
OP_VARIABLE = 59
OP_PTR_ACCESS_CHAIN = 67
OP_IN_BOUNDS_PTR_ACCESS_CHAIN = 70
OP_BITCAST = 124
OP_MODULE_PROCESSED = 330
_DEBUG_OPCODES = (OP_SOURCE_CONTINUED, OP_SOURCE, OP_SOURCE_EXTENSION, OP_NAME, OP_MEMBER_NAME,
                  OP_STRING, OP_MODULE_PROCESSED)

# The build option of a program whose f32 subnormals are flushed, for
# OpenCL and Level Zero alike (Intel's GPU compiler reads `-cl-` options too).
FLUSH_SUBNORMALS_OPTION = "-cl-denorms-are-zero"
_FLUSH_MARK = "zmlir: build with " + FLUSH_SUBNORMALS_OPTION


def _declarations(words: array.array) -> Iterator[tuple[int, int, int]]:
    """(position, word count, opcode) of each instruction of the SPIR-V
    module `words` before its first function; ValueError at an instruction
    of 0 words."""
    at = HEADER_WORDS
    while at < len(words):
        count, opcode = words[at] >> 16, words[at] & 0xFFFF
        if count == 0:
            raise ValueError("malformed SPIR-V module (an instruction of 0 words)")
        if opcode == OP_FUNCTION:
            return
        yield at, count, opcode
        at += count


def _literal_string(text: str) -> list[int]:
    """SPIR-V's literal string: UTF-8, nul-terminated, padded to words."""
    data = text.encode() + b"\0"
    data += b"\0" * (-len(data) % 4)
    return list(array.array("I", data))


def mark_flushing_subnormals(binary: bytes) -> bytes:
    """`binary` with the mark of a program built with
    FLUSH_SUBNORMALS_OPTION: an OpModuleProcessed after its other debug
    instructions, where the specification puts it."""
    words = array.array("I", binary)
    if len(words) < HEADER_WORDS or words[0] != MAGIC:
        raise ValueError("not a SPIR-V module in this host's byte order")
    end_of_debug = None
    for at, count, opcode in _declarations(words):
        if opcode in _DEBUG_OPCODES:
            end_of_debug = at + count
        elif end_of_debug is not None:
            break
    if end_of_debug is None:
        raise ValueError("SPIR-V module without debug instructions (OpName)")
    text = _literal_string(_FLUSH_MARK)
    mark = array.array("I", [((1 + len(text)) << 16) | OP_MODULE_PROCESSED, *text])
    return (words[:end_of_debug] + mark + words[end_of_debug:]).tobytes()


def flushes_subnormals(binary: bytes) -> bool:
    """Whether `binary` carries mark_flushing_subnormals's mark."""
    words = array.array("I", binary[: len(binary) // 4 * 4])
    if len(words) < HEADER_WORDS or words[0] != MAGIC:
        return False
    text = _literal_string(_FLUSH_MARK)
    try:
        return any(opcode == OP_MODULE_PROCESSED and words[at + 1:at + count].tolist() == text
                   for at, count, opcode in _declarations(words))
    except ValueError:
        return False


def fix_constant_byte_addresses(binary: bytes) -> bytes:
    """`binary` with each constant byte access chain into a variable that is
    not a byte array taken through a pointer to bytes (see the module's
    docstring); `binary` itself when there is none."""
    words = array.array("I", binary)
    if len(words) < HEADER_WORDS or words[0] != MAGIC:
        return binary  # not SPIR-V in this host's byte order: not llc's
    bytes_ids: set[int] = set()  # OpTypeInt 8
    byte_arrays: set[int] = set()  # OpTypeArray of those
    pointers: dict[int, tuple[int, int]] = {}  # id -> (storage class, pointee)
    typed: dict[int, int] = {}  # variable or spec constant id -> its type
    zeros: set[int] = set()  # integer constants 0
    edits: list[tuple[int, int, list[int]]] = []  # (start, word count, replacement)
    bound = words[3]
    try:  # initializers all come before the first function
        instructions = list(_declarations(words))
    except ValueError:
        return binary  # malformed: leave it to the consumer's validation
    for at, count, opcode in instructions:
        if opcode == OP_TYPE_INT and words[at + 2] == 8:
            bytes_ids.add(words[at + 1])
        elif opcode == OP_TYPE_ARRAY and words[at + 2] in bytes_ids:
            byte_arrays.add(words[at + 1])
        elif opcode == OP_TYPE_POINTER:
            pointers[words[at + 1]] = (words[at + 2], words[at + 3])
        elif opcode == OP_CONSTANT_NULL or (opcode == OP_CONSTANT and count == 4
                                             and words[at + 3] == 0):
            zeros.add(words[at + 2])
        elif opcode == OP_VARIABLE:
            typed[words[at + 2]] = words[at + 1]
        elif opcode == OP_SPEC_CONSTANT_OP:
            result_type, result = words[at + 1], words[at + 2]
            typed[result] = result_type
            if (count == 7 and words[at + 3] in (OP_PTR_ACCESS_CHAIN,
                                                 OP_IN_BOUNDS_PTR_ACCESS_CHAIN)):
                base, element, index = words[at + 4], words[at + 5], words[at + 6]
                space, pointee = pointers.get(result_type, (-1, -1))
                base_space, base_pointee = pointers.get(typed.get(base, -1), (-1, -1))
                if (pointee in bytes_ids and element in zeros and base_space == space
                        and base_pointee not in byte_arrays and base_pointee not in bytes_ids):
                    cast = bound
                    bound += 1
                    edits.append((at, count, [
                        (5 << 16) | OP_SPEC_CONSTANT_OP, result_type, cast, OP_BITCAST, base,
                        (6 << 16) | OP_SPEC_CONSTANT_OP, result_type, result, words[at + 3],
                        cast, index]))
    if not edits:
        return binary
    out = array.array("I", words[:HEADER_WORDS])
    out[3] = bound
    previous = HEADER_WORDS
    for start, count, replacement in edits:
        out.extend(words[previous:start])
        out.extend(replacement)
        previous = start + count
    out.extend(words[previous:])
    return out.tobytes()


def build_options(binary: bytes, options: str = "") -> str:
    """`options` with what `binary` asks of its build (FLUSH_SUBNORMALS_OPTION
    where marked)."""
    if flushes_subnormals(binary) and FLUSH_SUBNORMALS_OPTION not in options.split():
        return f"{options} {FLUSH_SUBNORMALS_OPTION}".strip()
    return options
