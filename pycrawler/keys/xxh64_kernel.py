"""The XXH64 kernel of :mod:`.xxh64`, compiled with numba over a packed batch."""

from __future__ import annotations

import numba
import numpy as np

_P1 = np.uint64(0x9E3779B185EBCA87)
_P2 = np.uint64(0xC2B2AE3D27D4EB4F)
_P3 = np.uint64(0x165667B19E3779F9)
_P4 = np.uint64(0x85EBCA77C2B2AE63)
_P5 = np.uint64(0x27D4EB2F165667C5)


@numba.njit(cache=True, inline="always")
def _rotl(x, r):
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


@numba.njit(cache=True, inline="always")
def _read64(data, pos):
    value = np.uint64(0)
    for j in range(7, -1, -1):
        value = (value << np.uint64(8)) | np.uint64(data[pos + j])
    return value


@numba.njit(cache=True, inline="always")
def _read32(data, pos):
    return (np.uint64(data[pos]) | (np.uint64(data[pos + 1]) << np.uint64(8))
            | (np.uint64(data[pos + 2]) << np.uint64(16)) | (np.uint64(data[pos + 3]) << np.uint64(24)))


@numba.njit(cache=True, inline="always")
def _round(acc, lane):
    return _rotl(acc + lane * _P2, 31) * _P1


@numba.njit(cache=True, inline="always")
def _merge(acc, lane):
    return (acc ^ _round(np.uint64(0), lane)) * _P1 + _P4


@numba.njit(cache=True)
def xxh64_packed(data, offsets, out):
    """XXH64 (seed 0) of each ``data[offsets[i]:offsets[i+1]]`` into ``out[i]``."""
    for i in range(offsets.shape[0] - 1):
        pos, end = offsets[i], offsets[i + 1]
        length = end - pos
        if length >= 32:
            v1 = _P1 + _P2
            v2 = _P2
            v3 = np.uint64(0)
            v4 = np.uint64(0) - _P1
            while pos + 32 <= end:
                v1 = _round(v1, _read64(data, pos))
                v2 = _round(v2, _read64(data, pos + 8))
                v3 = _round(v3, _read64(data, pos + 16))
                v4 = _round(v4, _read64(data, pos + 24))
                pos += 32
            h = _rotl(v1, 1) + _rotl(v2, 7) + _rotl(v3, 12) + _rotl(v4, 18)
            h = _merge(_merge(_merge(_merge(h, v1), v2), v3), v4)
        else:
            h = _P5
        h += np.uint64(length)
        while pos + 8 <= end:
            h = _rotl(h ^ _round(np.uint64(0), _read64(data, pos)), 27) * _P1 + _P4
            pos += 8
        if pos + 4 <= end:
            h = _rotl(h ^ (_read32(data, pos) * _P1), 23) * _P2 + _P3
            pos += 4
        while pos < end:
            h = _rotl(h ^ (np.uint64(data[pos]) * _P5), 11) * _P1
            pos += 1
        h ^= h >> np.uint64(33)
        h *= _P2
        h ^= h >> np.uint64(29)
        h *= _P3
        out[i] = h ^ (h >> np.uint64(32))
