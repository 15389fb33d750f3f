"""The runtime's integrity check of the driver (export table INTEGRITY_CHECK).

cudart challenges the driver with a version number and the current time; the
answer is a 128-bit HMAC over facts about the process and the driver:

    HMAC-MD2(key, driver_version, challenge, pid, thread, &CUDART_INTERFACE,
             &INTEGRITY_CHECK, &integrity_check_fn, seconds, devices...)

with MD2 as in RFC 1319 (16-byte blocks, so the 16-byte key needs no
padding). Challenge versions ending in 0 and 1 expect fixed answers. The
construction (message layout, key, fixed answers) is what public reverse
engineering (ZLUDA) found; the code is ours.
"""

from __future__ import annotations

import os
import struct
import threading

# RFC 1319's permutation of 0..255 built from the digits of pi.
_S = bytes([
    41, 46, 67, 201, 162, 216, 124, 1, 61, 54, 84, 161, 236, 240, 6, 19,
    98, 167, 5, 243, 192, 199, 115, 140, 152, 147, 43, 217, 188, 76, 130, 202,
    30, 155, 87, 60, 253, 212, 224, 22, 103, 66, 111, 24, 138, 23, 229, 18,
    190, 78, 196, 214, 218, 158, 222, 73, 160, 251, 245, 142, 187, 47, 238, 122,
    169, 104, 121, 145, 21, 178, 7, 63, 148, 194, 16, 137, 11, 34, 95, 33,
    128, 127, 93, 154, 90, 144, 50, 39, 53, 62, 204, 231, 191, 247, 151, 3,
    255, 25, 48, 179, 72, 165, 181, 209, 215, 94, 146, 42, 172, 86, 170, 198,
    79, 184, 56, 210, 150, 164, 125, 182, 118, 252, 107, 226, 156, 116, 4, 241,
    69, 157, 112, 89, 100, 113, 135, 32, 134, 91, 207, 101, 230, 45, 168, 2,
    27, 96, 37, 173, 174, 176, 185, 246, 28, 70, 97, 105, 52, 64, 126, 15,
    85, 71, 163, 35, 221, 81, 175, 58, 195, 92, 249, 206, 186, 197, 234, 38,
    44, 83, 13, 110, 133, 40, 132, 9, 211, 223, 205, 244, 65, 129, 77, 82,
    106, 220, 55, 200, 108, 193, 171, 250, 36, 225, 123, 8, 12, 189, 177, 74,
    120, 136, 149, 139, 227, 99, 232, 109, 233, 203, 213, 254, 59, 0, 29, 57,
    242, 239, 183, 14, 102, 88, 208, 228, 166, 119, 114, 248, 235, 117, 75, 10,
    49, 68, 80, 180, 143, 237, 31, 26, 219, 153, 141, 51, 159, 17, 131, 20,
])
assert sorted(_S) == list(range(256))

_KEY = bytes([0x14, 0x6A, 0xDD, 0xAE, 0x53, 0xA9, 0xA7, 0x52,
              0xAA, 0x08, 0x41, 0x36, 0x0B, 0xF5, 0x5A, 0x9F])
_FIXED = {
    0: (0x3341181C03CB675C, 0x8ED383AA1F4CD1E8),
    1: (0x1841181C03CB675C, 0x8ED383AA1F4CD1E8),
}


def md2(message: bytes) -> bytes:
    """MD2 (RFC 1319, with the checksum erratum: C[j] ^= S[c ^ L])."""
    pad = 16 - len(message) % 16
    data = message + bytes([pad]) * pad
    checksum = bytearray(16)
    last = 0
    for block in range(0, len(data), 16):
        for j in range(16):
            checksum[j] ^= _S[data[block + j] ^ last]
            last = checksum[j]
    data += bytes(checksum)
    x = bytearray(48)
    for block in range(0, len(data), 16):
        for j in range(16):
            x[16 + j] = data[block + j]
            x[32 + j] = x[16 + j] ^ x[j]
        t = 0
        for round_ in range(18):
            for k in range(48):
                x[k] ^= _S[t]
                t = x[k]
            t = (t + round_) & 0xFF
    return bytes(x[:16])


def hmac_md2(key: bytes, message: bytes) -> bytes:
    inner = md2(bytes(b ^ 0x36 for b in key) + message)
    return md2(bytes(b ^ 0x5C for b in key) + inner)


def fixed_answer(version: int) -> tuple[int, int] | None:
    """The answer to challenge versions that expect a fixed one (None: others)."""
    return _FIXED.get(version % 10)


def answer(driver_version: int, version: int, cudart_table: int, check_table: int,
           check_fn: int, seconds: int, devices: bytes) -> tuple[int, int]:
    """The answer to challenge `version` at `seconds` from this process and
    thread: the addresses are those of the CUDART_INTERFACE and
    INTEGRITY_CHECK tables and of the check function (slot 1) the runtime
    was given; `devices` the UUID and PCI domain, bus and device of each
    device (16 bytes and three int32 each)."""
    message = struct.pack("<IIIIQQQQ", driver_version, version, os.getpid() & 0xFFFFFFFF,
                          threading.get_ident() & 0xFFFFFFFF, cudart_table, check_table,
                          check_fn, seconds)
    return struct.unpack("<QQ", hmac_md2(_KEY, message + devices))
