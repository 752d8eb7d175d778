"""MD5 (RFC 1321) compiled with numba over a packed batch: the large-batch path of :mod:`.md5`.

hashlib costs a Python call per URL (~0.6-1 us here), this kernel ~0.3 us per 64-byte block
pair with no Python in the loop, which pays once a batch is large enough to amortise loading
numba (~70 MB and ~0.3 s per process, see :data:`pycrawler.keys.md5.COMPILED_BATCH`). Tests
hold it equal to hashlib.
"""

from __future__ import annotations

import numba
import numpy as np

_MASK = 0xFFFFFFFF
# Per-step additive constants and rotations of RFC 1321, section 3.4.
_K = np.array([int(abs(np.sin(i + 1)) * 2**32) & _MASK for i in range(64)], dtype=np.int64)
_S = np.array([7, 12, 17, 22] * 4 + [5, 9, 14, 20] * 4 + [4, 11, 16, 23] * 4 + [6, 10, 15, 21] * 4,
              dtype=np.int64)


# Words are held in int64 and masked to 32 bits: numba has no wrapping uint32 arithmetic, and
# mixing unsigned and signed integers there silently turns into floating point.
@numba.njit(cache=True, inline="always")
def _rotl(x, s):
    return ((x << s) | (x >> (32 - s))) & 0xFFFFFFFF


@numba.njit(cache=True, inline="always")
def _compress(block, pos, state, w):
    """One 64-byte block of ``block`` at ``pos`` into ``state`` (4 words)."""
    for j in range(16):
        p = pos + 4 * j
        w[j] = (np.int64(block[p]) | (np.int64(block[p + 1]) << 8) | (np.int64(block[p + 2]) << 16)
                | (np.int64(block[p + 3]) << 24))
    a, b, c, d = state[0], state[1], state[2], state[3]
    for i in range(16):
        x = (a + ((b & c) | (~b & d)) + _K[i] + w[i]) & 0xFFFFFFFF
        a, d, c, b = d, c, b, (b + _rotl(x, _S[i])) & 0xFFFFFFFF
    for i in range(16, 32):
        x = (a + ((d & b) | (~d & c)) + _K[i] + w[(5 * i + 1) & 15]) & 0xFFFFFFFF
        a, d, c, b = d, c, b, (b + _rotl(x, _S[i])) & 0xFFFFFFFF
    for i in range(32, 48):
        x = (a + (b ^ c ^ d) + _K[i] + w[(3 * i + 5) & 15]) & 0xFFFFFFFF
        a, d, c, b = d, c, b, (b + _rotl(x, _S[i])) & 0xFFFFFFFF
    for i in range(48, 64):
        x = (a + (c ^ (b | (~d & 0xFFFFFFFF))) + _K[i] + w[(7 * i) & 15]) & 0xFFFFFFFF
        a, d, c, b = d, c, b, (b + _rotl(x, _S[i])) & 0xFFFFFFFF
    state[0] = (state[0] + a) & 0xFFFFFFFF
    state[1] = (state[1] + b) & 0xFFFFFFFF
    state[2] = (state[2] + c) & 0xFFFFFFFF
    state[3] = (state[3] + d) & 0xFFFFFFFF


@numba.njit(cache=True)
def _md5_kernel(buf, offsets, out):
    state = np.empty(4, np.int64)
    w = np.empty(16, np.int64)
    tail = np.empty(128, np.uint8)
    for r in range(offsets.shape[0] - 1):
        state[0], state[1], state[2], state[3] = 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476
        start = offsets[r]
        length = offsets[r + 1] - start
        full = length // 64
        for blk in range(full):
            _compress(buf, start + 64 * blk, state, w)
        # Padding: 0x80, zeros, then the bit length little-endian in the last 8 bytes.
        rem = length - 64 * full
        tail[:] = 0
        tail[:rem] = buf[start + 64 * full:start + length]
        tail[rem] = 0x80
        blocks = 1 if rem < 56 else 2
        bits = length * 8
        for j in range(8):
            tail[64 * blocks - 8 + j] = (bits >> (8 * j)) & 0xFF
        for blk in range(blocks):
            _compress(tail, 64 * blk, state, w)
        for j in range(4):
            out[r, j] = state[j]


def md5_words(buf: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """MD5 of each packed record as an (n, 4) uint32 array of the state words A, B, C, D:
    the 16-byte digest is those words little-endian (``words.astype("<u4").tobytes()``)."""
    out = np.empty((len(offsets) - 1, 4), dtype=np.int64)
    _md5_kernel(buf, offsets, out)
    return out.astype(np.uint32)
