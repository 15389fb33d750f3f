"""The host side of device printf (zmlir/runtime/printf.py): the argument
layout of each format (CUDA's vprintf buffer, the one DeviceServices.cpp
lays out) and the formatting of records, conversion by conversion; and the
driver's printf FIFO (zmlir/runtime/cuda/printf.py): its size as NVIDIA's
driver sets it, and when it can be set."""

from __future__ import annotations

import struct
from types import SimpleNamespace

import pytest

from zmlir.runtime import printf
from zmlir.runtime.cuda import printf as fifo

# A value of each kind as a record's argument buffer holds it.
I32, I64, F64, PTR = "<i", "<q", "<d", "<Q"


def _args(fmt: printf.Format, values: list[tuple[str, object]]) -> bytes:
    """The argument buffer of `values`, placed at the offsets parse() gives."""
    offsets = [o for p in fmt.pieces if isinstance(p, printf.Conversion) for o in p.offsets]
    assert len(offsets) == len(values)
    buf = bytearray(fmt.args_bytes)
    for at, (code, value) in zip(offsets, values, strict=True):
        struct.pack_into(code, buf, at, value)
    return bytes(buf)


def _format(text: str, *values: tuple[str, object], strings: tuple[bytes | None, ...] = ()) -> str:
    fmt = printf.parse(text.encode())
    return printf.format_args(fmt, _args(fmt, list(values)), strings).decode()


@pytest.mark.parametrize("text, values, expected", [
    # Signed and unsigned integers, with each flag, width and precision.
    ("%d %i", [(I32, -42), (I32, 42)], "-42 42"),
    ("[%5d|%-5d|%05d|%+d|% d]", [(I32, 42)] * 5, "[   42|42   |00042|+42| 42]"),
    ("[%.3d|%.0d|%8.3d|%-+8.3d]", [(I32, 7), (I32, 0), (I32, -7), (I32, 7)],
     "[007||    -007|+007    ]"),
    ("%u %u", [(I32, -1), (I32, 4000000000 - 2**32)], "4294967295 4000000000"),
    ("%x %X %#x %#X %08x", [(I32, 255)] * 5, "ff FF 0xff 0XFF 000000ff"),
    ("%o %#o %#o", [(I32, 8), (I32, 8), (I32, 0)], "10 010 0"),
    ("%'d", [(I32, 1234567)], "1234567"),  # the C locale has no grouping
    # Length modifiers: h and hh narrow the int, l ll j z t q L widen it.
    ("%hd %hhd %hu %hhu %hx", [(I32, -2), (I32, 0x141), (I32, -1), (I32, 256 + 7),
                               (I32, 0x12345)], "-2 65 65535 7 2345"),
    ("%ld %lld %lu %llx %lX", [(I64, -1234567890123), (I64, 1 << 40), (I64, -1),
                              (I64, 0xDEADBEEFCAFE), (I64, 0xABCDEF)],
     "-1234567890123 1099511627776 18446744073709551615 deadbeefcafe ABCDEF"),
    ("%jd %zu %td %qd %Ld", [(I64, -1), (I64, 2**40), (I64, -3), (I64, 4), (I64, 5)],
     "-1 1099511627776 -3 4 5"),
    # Characters.
    ("[%c%c|%3c|%-3c]", [(I32, 97), (I32, 98), (I32, 120), (I32, 121)], "[ab|  x|y  ]"),
    # Floats (doubles: float arguments were promoted).
    ("[%f|%.2f|%10.3f|%-10.1f|%+.0f|%#.0f]", [(F64, 3.14159), (F64, 2.5), (F64, -1 / 3),
                                             (F64, 1e10), (F64, 2.5), (F64, 3.0)],
     "[3.141590|2.50|    -0.333|10000000000.0|+2|3.]"),
    ("%F %f %f %f", [(F64, float("inf")), (F64, float("-inf")), (F64, -0.0),
                     (F64, float("nan"))], "INF -inf -0.000000 nan"),
    ("[%e|%.3E|%12.4e|%+e]", [(F64, 12345.678), (F64, 0.000123), (F64, -1.5), (F64, 1e-310)],
     "[1.234568e+04|1.230E-04| -1.5000e+00|+1.000000e-310]"),
    ("[%g|%G|%g|%g|%#g|%.3g|%10.2g]", [(F64, 1e-5), (F64, 1e20), (F64, 100.0), (F64, 0.0001),
                                      (F64, 1.0), (F64, 3.14159), (F64, 1234.5)],
     "[1e-05|1E+20|100|0.0001|1.00000|3.14|   1.2e+03]"),
    ("[%a|%A|%.2a|%a|%a]", [(F64, 1.0), (F64, -0.5), (F64, 3.0), (F64, 0.1), (F64, 0.0)],
     "[0x1p+0|-0X1P-1|0x1.80p+1|0x1.999999999999ap-4|0x0p+0]"),
    ("%lf %le", [(F64, 1.5), (F64, 1.5)], "1.500000 1.500000e+00"),
    # `*` width and precision: int arguments before the value.
    ("[%*d|%-*d|%.*f|%*.*f]", [(I32, 6), (I32, 42), (I32, 6), (I32, 42), (I32, 2),
                               (F64, 3.14159), (I32, 8), (I32, 3), (F64, 2.71828)],
     "[    42|42    |3.14|   2.718]"),
    ("[%*d]", [(I32, -4), (I32, 1)], "[1   ]"),  # a negative width is the - flag
    # Pointers.
    ("[%p|%p|%20p]", [(PTR, 0x1234), (PTR, 0), (PTR, 0xDEADBEEF)],
     "[0x1234|(nil)|          0xdeadbeef]"),
    # %% and what is printed as written.
    ("100%% %d%%", [(I32, 5)], "100% 5%"),
    ("%y %5k %d", [(I32, 3)], "%y %5k 3"),
    ("trailing %", [], "trailing %"),
    ("trailing %-5l", [], "trailing %-5l"),
    # %n writes nothing and prints nothing.
    ("a%nb", [(PTR, 0x1000)], "ab"),
])
def test_conversion(text: str, values: list[tuple[str, object]], expected: str) -> None:
    assert _format(text, *values) == expected


def test_strings() -> None:
    assert _format("[%s|%10s|%-10s|%.3s|%5.2s]", *[(PTR, 1)] * 5,
                   strings=(b"str", b"right", b"left", b"truncated", b"ab")) == \
        "[str|     right|left      |tru|   ab]"
    # A null pointer: glibc's "(null)", or nothing when the precision is shorter.
    assert _format("[%s|%.3s|%8s]", *[(PTR, 0)] * 3, strings=(None,) * 3) == \
        "[(null)||  (null)]"
    # Bytes are bytes: no decoding, a % in an argument is no conversion.
    fmt = printf.parse(b"<%s>")
    assert printf.format_args(fmt, _args(fmt, [(PTR, 1)]), [b"\xff%d"]) == b"<\xff%d>"


@pytest.mark.parametrize("text, offsets, size", [
    ("no arguments", [], 0),
    ("%d %d %d", [0, 4, 8], 12),
    # Each argument aligned to its own size (the CUDA ABI).
    ("%d %f %d %lld %c", [0, 8, 16, 24, 32], 36),
    ("%c %s %hhd %p", [0, 8, 16, 24], 32),
    ("%*.*f", [0, 4, 8], 16),
    ("%hd %ld %zd %d", [0, 8, 16, 24], 28),
])
def test_layout(text: str, offsets: list[int], size: int) -> None:
    fmt = printf.parse(text.encode())
    assert [o for p in fmt.pieces if isinstance(p, printf.Conversion)
            for o in p.offsets] == offsets
    assert fmt.args_bytes == size


def test_thirty_two_arguments_at_most() -> None:
    # CUDA passes 32 arguments at most: the conversions after them print as
    # written (NVIDIA's driver printed garbage for a 33rd and 34th %d on an
    # H200; ours never prints garbage).
    text = " ".join(["%d"] * 34)
    fmt = printf.parse(text.encode())
    assert fmt.args_bytes == 32 * 4
    args = b"".join(struct.pack("<i", i) for i in range(32))
    assert printf.format_args(fmt, args, []).decode() == \
        " ".join(map(str, range(32))) + " %d %d"


@pytest.mark.parametrize("text", ["%Lf", "%lc", "%ls", "%C", "%S", "%1$d"])
def test_what_cuda_cannot_pass(text: str) -> None:
    with pytest.raises(printf.FormatError):
        printf.parse(text.encode())


def test_decode_records() -> None:
    first = printf.parse(b"[%d, %d]\n")
    second = printf.parse(b"%s=%f %s\n")
    formats = {(1, 0): first, (2, 3): second}
    records = (printf.record(1, 0, first, struct.pack("<ii", 3, 5))
               + printf.record(2, 3, second, _args(second, [(PTR, 1), (F64, 0.5), (PTR, 0)]),
                               [b"x", None])
               + printf.record(1, 0, first, struct.pack("<ii", -1, 7)))
    assert len(records) % 8 == 0
    out, bad = printf.decode(records + bytes(64), lambda m, i: formats.get((m, i)))
    assert (out, bad) == (b"[3, 5]\nx=0.500000 (null)\n[-1, 7]\n", 0)


def test_decode_skips_unknown_formats_and_stops_at_damage() -> None:
    fmt = printf.parse(b"%d\n")
    good = printf.record(1, 0, fmt, struct.pack("<i", 1))
    unknown = printf.record(9, 0, fmt, struct.pack("<i", 2))
    assert printf.decode(good + unknown + good, lambda m, i: fmt if m == 1 else None) == \
        (b"1\n1\n", 1)
    damaged = struct.pack("<IIII", 12, 1, 0, 0)  # a size below the header's
    assert printf.decode(good + damaged + good, lambda m, i: fmt) == (b"1\n", 1)
    # A record that ends past the data (cut off) is damage too.
    assert printf.decode(good + good[:20], lambda m, i: fmt) == (b"1\n", 1)


def test_long_strings_whole() -> None:
    # A %s prints whole, however long (an H200 printed a 5999-byte one).
    text = bytes(97 + i % 26 for i in range(5999))
    fmt = printf.parse(b"[%s]\n")
    records = printf.record(1, 0, fmt, _args(fmt, [(PTR, 1)]), [text])
    assert printf.decode(records, lambda m, i: fmt) == (b"[" + text + b"]\n", 0)


def test_assert_records_apart() -> None:
    # A failed assert's message goes to stderr (as NVIDIA's driver writes
    # it): its records are told apart by their format.
    message, line = printf.parse(printf.ASSERT_FORMAT), printf.parse(b"%d\n")
    assert message.is_assert and not line.is_assert
    args = _args(message, [(PTR, 1), (I32, 7), (PTR, 1), (I32, 0), (I32, 1), (I32, 0),
                           (I32, 2), (I32, 0), (I32, 0), (PTR, 1)])
    records = (printf.record(1, 0, line, struct.pack("<i", 1))
               + printf.record(1, 1, message, args, [b"a.cu", b"void k()", b"x > 0"]))
    outputs, bad = printf.decode_records(records, lambda m, i: (line, message)[i])
    assert bad == 0
    assert [(f.is_assert, text) for f, text in outputs] == [
        (False, b"1\n"),
        (True, b"a.cu:7: void k(): block: [0,1,0], thread: [2,0,0] Assertion `x > 0` failed.\n")]


@pytest.mark.parametrize("requested, size", [
    # What NVIDIA's driver 580 set on an H200: 512 KiB at least, in 256-byte steps.
    (0, 524288), (1, 524288), (4096, 524288), (524287, 524288), (524288, 524288),
    (600000, 600064), ((1 << 20) + 1, 1048832), (8650753, 8651008), (1 << 30, 1 << 30),
])
def test_fifo_size(requested: int, size: int) -> None:
    assert fifo.fifo_size(requested) == size


def test_fifo_size_fixed_after_a_printf_kernel() -> None:
    # NVIDIA's driver: settable until a kernel that calls printf or assert
    # is launched (one of the same module without does not count), then
    # CUDA_ERROR_INVALID_VALUE and the size stays, until the context's reset.
    buffer = fifo.DevicePrintf(lambda _: None)  # no module loaded: no buffer, no device
    assert buffer.capacity == fifo.DEFAULT_FIFO_SIZE == 8650752
    module = SimpleNamespace(printf_kernels=frozenset({"prints"}))
    buffer.launched(SimpleNamespace(name="quiet", module=module))
    assert buffer.set_capacity(4096) and buffer.capacity == 524288
    buffer.launched(SimpleNamespace(name="prints", module=module))
    assert not buffer.set_capacity(1 << 16) and buffer.capacity == 524288
    buffer.reset()
    assert buffer.capacity == fifo.DEFAULT_FIFO_SIZE
    assert buffer.set_capacity(1 << 16) and buffer.capacity == 524288


PTX = """
.extern .func (.param .b32 func_retval0) vprintf(.param .b64 a, .param .b64 b);
.extern .func __assertfail(.param .b64 a, .param .b64 b, .param .b32 c, .param .b64 d,
                           .param .b64 e);
.func (.param .b32 func_retval0) helper(.param .b32 x)
{
    call.uni (retval0), vprintf, (param0, param1);  // { a brace in a comment
}
.func other() { ret; }
.visible .entry direct(.param .u64 p) .maxntid 64, 1, 1
{
    call.uni (retval0), vprintf, (param0, param1);
}
.visible .entry through_a_func()
{
    call.uni (retval0), helper, (param0);
}
.visible .entry asserts()
{
    call.uni __assertfail, (param0, param1, param2, param3, param4);
}
.visible .entry quiet()
{
    { .reg .b32 t; call.uni other, (); }
    /* call.uni (retval0), vprintf, (param0, param1); */
}
.visible .entry indirect(.param .u64 f)
{
    call (retval0), %rd1, (param0), prototype_0;
}
"""


def test_printf_kernels() -> None:
    assert fifo.printf_kernels(PTX) == {"direct", "through_a_func", "asserts", "indirect"}
    assert fifo.printf_kernels(".visible .entry k() { call.uni (r), %rd1, (p), q; }") == set()


class _InOrderDevice:
    """Device memory and an in-order queue, as DevicePrintf uses them;
    `between` runs once, after the first read (another host thread's
    kernel launched while a flush runs)."""

    def __init__(self) -> None:
        self.memory = bytearray(4 << 20)
        self.top = 64
        self.between: list = []

    def alloc(self, nbytes: int) -> int:
        address, self.top = self.top, self.top + -(-nbytes // 64) * 64
        return address

    def free(self, address: int) -> None:
        pass

    def memset(self, address: int, byte: int, nbytes: int) -> None:
        self.memory[address:address + nbytes] = bytes([byte]) * nbytes

    def copy_to_device(self, address: int, data: bytes) -> None:
        self.memory[address:address + len(data)] = data

    def copy_from_device(self, address: int, nbytes: int) -> bytes:
        data = bytes(self.memory[address:address + nbytes])
        while self.between:
            self.between.pop()()
        return data

    def global_variable(self, program: object, name: str) -> tuple[int, int]:
        return {fifo.STATE_NAME: (8, 16), fifo.FORMATS_NAME: (32, 8)}[name]

    def kernel(self, value: int) -> None:
        """A kernel's printf("%d\\n", value): a record where its module's state points."""
        buffer, module_id = struct.unpack_from("<QQ", self.memory, 8)
        record = printf.record(module_id, 0, printf.parse(b"%d\n"), struct.pack("<i", value))
        head = struct.unpack_from("<Q", self.memory, buffer)[0]
        struct.pack_into("<Q", self.memory, buffer, head + len(record))
        at = buffer + printf.BUFFER_HEADER + head
        self.memory[at:at + len(record)] = record


def test_records_of_kernels_launched_during_a_flush_are_kept(monkeypatch) -> None:
    # Four host threads launching printf kernels lost lines: a flush read
    # the head, then a kernel of another thread appended a record, then the
    # flush reset the head past it (pycuda, 24 of 50 lines of one thread).
    out: list[bytes] = []
    monkeypatch.setattr(fifo, "write_stream", lambda data, name="stdout": out.append(data))
    device = _InOrderDevice()
    device.memory[32:40] = b"%d\n\0\0\0\0\0"
    buffer = fifo.DevicePrintf(lambda _: None)
    buffer.device = device
    assert buffer.set_capacity(4096)
    buffer.attach(SimpleNamespace(compiled=SimpleNamespace(binary=fifo.FORMATS_NAME.encode()),
                                  program=None, ptx_name="m"), "")
    device.kernel(1)
    device.between.append(lambda: device.kernel(2))
    buffer.flush()
    device.kernel(3)
    buffer.flush()
    buffer.flush()
    assert b"".join(out) == b"1\n2\n3\n"
