"""A sized Bloom filter Visited table, persisted in a memory-mapped file.

Sizing: for ``capacity`` n keys and a target false-positive rate p the optimal filter has
``m = -n ln p / (ln 2)^2`` bits (rounded up to whole 64-bit words) and ``k = (m / n) ln 2``
hash functions (rounded, at least 1): 9.6 bits and 7 probes per key at p = 1%.

Hashing is stable across processes, machines and versions (Python's ``hash()`` is not, which
is why rbloom and friends cannot persist): a 64-bit key (a URL's MD5 fingerprint, see
:mod:`pycrawler.keys.fingerprint`, or any integer) is mixed with the splitmix64 finaliser into
h1, h1 again into h2 (forced odd), and probe i is bit ``reduce(h1 + i * h2)``, the
Kirsch-Mitzenmacher double hashing; ``reduce`` maps the top 32 bits of the sum onto [0, m)
with Lemire's multiply-shift while m <= 2^32 and falls back to ``% m`` beyond. The mixer
makes arbitrary keys (counters, Heritrix keys) as good as random ones.

The trade-off: a false positive tells the crawler a *new* URL was already seen, and the URL
is silently dropped, never fetched. At p = 1% one new URL in a hundred is lost once the filter
is full, and more beyond its capacity (the measured rate is in ``false_positive_rate()``).
Use the exact JE set (or DRUM) where every page matters; a Bloom filter where memory does.

File format (all integers little-endian), 64-byte header then the bit array:

====== ====== ==========================================================
offset size   field
====== ====== ==========================================================
0      8      magic ``b"PYCBLOOM"``
8      4      format version (1: splitmix64 double hashing as above)
12     4      k, probes per key
16     8      m, bits (a multiple of 64)
24     8      capacity n the filter was sized for
32     8      count: keys added that were new to the filter
40     8      target false-positive rate p (IEEE 754 double)
48     16     zero
64     m/8    bits: bit i is bit ``i & 7`` (least significant first) of byte ``i >> 3``
====== ====== ==========================================================

The byte-wise bit order makes the file the same on every machine. One process writes a file
at a time; :meth:`BloomFilter.flush` updates the header, :meth:`BloomFilter.close` also
writes the pages back to disk.
"""

from __future__ import annotations

import math
import os
import struct
from pathlib import Path

import numba
import numpy as np

from ..errors import BadInput
from .protocol import SynchronousVisited, as_keys

MAGIC = b"PYCBLOOM"
VERSION = 1
HEADER = struct.Struct("<8sIIQQQd16x")
HEADER_SIZE = 64
assert HEADER.size == HEADER_SIZE


def optimal_parameters(capacity: int, fpr: float) -> tuple[int, int]:
    """(m bits, k hashes) of the smallest filter holding ``capacity`` keys at rate ``fpr``."""
    if capacity < 1 or not 0.0 < fpr < 1.0:
        raise BadInput(f"a Bloom filter needs capacity >= 1 and 0 < fpr < 1 (got {capacity}, {fpr})")
    bits = math.ceil(-capacity * math.log(fpr) / math.log(2) ** 2)
    bits = -(-bits // 64) * 64
    return bits, max(1, round(bits / capacity * math.log(2)))


@numba.njit(cache=True, inline="always")
def _mix(x):
    """splitmix64's finaliser: a bijection of uint64 with full avalanche."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True, inline="always")
def _bit(g, m):
    if m <= np.uint64(0x100000000):
        return ((g >> np.uint64(32)) * m) >> np.uint64(32)
    return g % m


@numba.njit(cache=True)
def _add_kernel(bits, m, k, keys, new):
    added = 0
    for r in range(keys.shape[0]):
        h1 = _mix(keys[r] + np.uint64(0x9E3779B97F4A7C15))
        h2 = _mix(h1) | np.uint64(1)
        g = h1
        fresh = False
        for _ in range(k):
            i = _bit(g, m)
            byte = i >> np.uint64(3)
            mask = np.uint8(1) << np.uint8(i & np.uint64(7))
            if not bits[byte] & mask:
                fresh = True
                bits[byte] |= mask
            g += h2
        new[r] = fresh
        added += fresh
    return added


@numba.njit(cache=True)
def _contains_kernel(bits, m, k, keys, hit):
    for r in range(keys.shape[0]):
        h1 = _mix(keys[r] + np.uint64(0x9E3779B97F4A7C15))
        h2 = _mix(h1) | np.uint64(1)
        g = h1
        present = True
        for _ in range(k):
            i = _bit(g, m)
            if not bits[i >> np.uint64(3)] & (np.uint8(1) << np.uint8(i & np.uint64(7))):
                present = False
                break
            g += h2
        hit[r] = present


class BloomFilter(SynchronousVisited):
    """A Bloom filter of 64-bit keys (URL forms key URLs by their MD5 fingerprint).

    ``BloomFilter(capacity, fpr)`` lives in memory; :meth:`create` and :meth:`open` keep it in
    a memory-mapped file.
    """

    def __init__(self, capacity: int, fpr: float = 0.01):
        self.m, self.k = optimal_parameters(capacity, fpr)
        self.capacity, self.fpr, self.count = capacity, fpr, 0
        self.path: Path | None = None
        self._map: np.memmap | None = None
        self._bits = np.zeros(self.m // 8, dtype=np.uint8)

    @classmethod
    def create(cls, path: str | os.PathLike, capacity: int, fpr: float = 0.01) -> "BloomFilter":
        """A new empty filter in a new file (BadInput if it exists)."""
        path = Path(path)
        m, k = optimal_parameters(capacity, fpr)
        try:
            with open(path, "xb") as f:
                f.write(HEADER.pack(MAGIC, VERSION, k, m, capacity, 0, fpr))
                f.truncate(HEADER_SIZE + m // 8)
        except FileExistsError:
            raise BadInput(f"{path} exists; open it with BloomFilter.open") from None
        return cls.open(path)

    @classmethod
    def open(cls, path: str | os.PathLike, *, read_only: bool = False) -> "BloomFilter":
        """A filter saved by :meth:`create` (BadInput unless the file is one, whole)."""
        path = Path(path)
        if not path.is_file():
            raise BadInput(f"{path} is not a file")
        with open(path, "rb") as f:
            head = f.read(HEADER_SIZE)
        if len(head) < HEADER_SIZE or head[:8] != MAGIC:
            raise BadInput(f"{path} is not a pycrawler Bloom filter (bad magic or short header)")
        _, version, k, m, capacity, count, fpr = HEADER.unpack(head)
        if version != VERSION:
            raise BadInput(f"{path} is Bloom filter format {version}; this pycrawler reads {VERSION}")
        if m == 0 or m % 64 or not 1 <= k <= 64:
            raise BadInput(f"{path} has a corrupt header (m={m}, k={k})")
        size, expected = path.stat().st_size, HEADER_SIZE + m // 8
        if size != expected:
            raise BadInput(f"{path} holds {size} bytes; its header says {expected} (truncated or not a filter)")
        self = cls.__new__(cls)
        self.m, self.k, self.capacity, self.fpr, self.count = m, k, capacity, fpr, count
        self.path = path
        self._map = np.memmap(path, dtype=np.uint8, mode="r" if read_only else "r+")
        self._bits = self._map[HEADER_SIZE:]
        return self

    # -- the table ---------------------------------------------------------------------------
    def add_many(self, keys) -> np.ndarray:
        keys = as_keys(keys)
        new = np.empty(len(keys), dtype=np.bool_)
        self.count += int(_add_kernel(self._live_bits(), np.uint64(self.m), self.k, keys, new))
        return new

    def contains_many(self, keys) -> np.ndarray:
        keys = as_keys(keys)
        hit = np.empty(len(keys), dtype=np.bool_)
        _contains_kernel(self._live_bits(), np.uint64(self.m), self.k, keys, hit)
        return hit

    def false_positive_rate(self) -> float:
        """The expected rate now, from the fraction of bits set (``fill ** k``)."""
        ones = int(np.unpackbits(self._live_bits()).sum())
        return (ones / self.m) ** self.k

    def __len__(self) -> int:
        """Keys added that were new to the filter (false positives are not counted)."""
        return self.count

    # -- persistence -------------------------------------------------------------------------
    def flush(self) -> None:
        """Write the count into the header (the bits are already in the mapping)."""
        if self._map is not None and self._map.mode == "r+":
            self._map[:HEADER_SIZE] = np.frombuffer(
                HEADER.pack(MAGIC, VERSION, self.k, self.m, self.capacity, self.count, self.fpr), dtype=np.uint8)

    def close(self) -> None:
        if self._map is not None:
            self.flush()
            self._map.flush()
            self._map = None
        self._bits = None

    def _live_bits(self) -> np.ndarray:
        if self._bits is None:
            raise BadInput(f"Bloom filter {self.path or ''} is closed".replace("  ", " "))
        return self._bits

    def __repr__(self) -> str:
        where = f" at {str(self.path)!r}" if self.path else ""
        return f"<BloomFilter m={self.m} k={self.k} capacity={self.capacity} fpr={self.fpr} count={self.count}{where}>"
