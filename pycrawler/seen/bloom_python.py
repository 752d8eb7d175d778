"""The Bloom filter's bit operations (:mod:`pycrawler.seen.bloom`) in plain Python, on bytes.

Where numpy cannot be imported, on CPython, the filter's bits are a ``bytearray`` or an
``mmap`` of its file, and a key's probes are computed with Python ints masked to 64 bits:
the same mixer, the same probe sequences and the same bits as the compiled kernels of
:mod:`.bloom_numpy`, so a filter written by either path is read by the other. A blocked
filter's probes fall in one 64-byte block; its little-endian 64-bit words are addressed here
byte by byte (bit ``p`` of the block is bit ``p & 7`` of its byte ``p >> 3``).

It costs about a microsecond a probe in CPython (figures in docs/store.md, "Without numpy");
GraalPy takes :mod:`.bloom_java` instead.
"""

from __future__ import annotations

import mmap
from pathlib import Path

_WORD = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def zeroed(size: int) -> bytearray:
    """An in-memory bit array of ``size`` zero bytes."""
    return bytearray(size)


def mapped(path: Path, offset: int, read_only: bool) -> tuple[mmap.mmap, memoryview]:
    """The file ``path`` mapped whole, and its bytes from ``offset`` on (the bits)."""
    with open(path, "rb" if read_only else "r+b") as file:
        mapping = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ if read_only else mmap.ACCESS_WRITE)
    return mapping, memoryview(mapping)[offset:]


def write_header(mapping: mmap.mmap, header: bytes) -> None:
    mapping[:len(header)] = header


def sync(mapping: mmap.mmap) -> None:
    mapping.flush()


def ones(bits) -> int:
    """How many bits are set."""
    return int.from_bytes(bits, "little").bit_count()


def _mix(x: int) -> int:
    """splitmix64's finaliser."""
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _WORD
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _WORD
    return x ^ (x >> 31)


def _reduce(g: int, m: int) -> int:
    return ((g >> 32) * m) >> 32 if m <= 1 << 32 else g % m


def resolve(bits, blocked: bool, m: int, k: int, keys: list[int], update: bool) -> tuple[list[bool], int]:
    """Check (``update`` False: True where present) or check+update (True where it was absent)
    each key; and how many were absent."""
    out = []
    changed = 0
    blocks = m // 512
    for key in keys:
        h1 = _mix((key + _GOLDEN) & _WORD)
        missing = False
        if blocked:
            base, w = _reduce(h1, blocks) * 64, _mix(h1)
            for i in range(k):
                if i and i % 7 == 0:
                    w = _mix(w)
                position = w & 511
                w >>= 9
                byte, mask = base + (position >> 3), 1 << (position & 7)
                if not bits[byte] & mask:
                    missing = True
                    if update:
                        bits[byte] |= mask
        else:
            g, step = h1, _mix(h1) | 1
            for _ in range(k):
                i = _reduce(g, m)
                byte, mask = i >> 3, 1 << (i & 7)
                if not bits[byte] & mask:
                    missing = True
                    if not update:
                        break
                    bits[byte] |= mask
                g = (g + step) & _WORD
        out.append(missing if update else not missing)
        changed += missing
    return out, changed
