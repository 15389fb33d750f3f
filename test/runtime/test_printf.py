"""The host side of device printf (zmlir/runtime/printf.py): the argument
layout of each format (CUDA's vprintf buffer, the one DeviceServices.cpp
lays out) and the formatting of records, conversion by conversion."""

from __future__ import annotations

import struct

import pytest

from zmlir.runtime import printf

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
    # CUDA ignores arguments past the 32nd: their conversions print as written.
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
