"""The Bloom filter's bit operations (:mod:`pycrawler.seen.bloom`) on numpy arrays, compiled by numba.

:mod:`.bloom_python` does the same on ``bytearray``/``mmap`` bytes where numpy cannot be
imported (CPython), :mod:`.bloom_java` in the bridge's Java under GraalPy; the filter chooses
one at import. All three read and write the same bytes.
"""

from __future__ import annotations

from pathlib import Path

import numba
import numpy as np


def zeroed(size: int) -> np.ndarray:
    """An in-memory bit array of ``size`` zero bytes."""
    return np.zeros(size, dtype=np.uint8)


def mapped(path: Path, offset: int, read_only: bool) -> tuple[np.memmap, np.ndarray]:
    """The file ``path`` mapped whole, and its bytes from ``offset`` on (the bits)."""
    mapping = np.memmap(path, dtype=np.uint8, mode="r" if read_only else "r+")
    return mapping, mapping[offset:]


def write_header(mapping: np.memmap, header: bytes) -> None:
    mapping[:len(header)] = np.frombuffer(header, dtype=np.uint8)


def sync(mapping: np.memmap) -> None:
    mapping.flush()


def ones(bits: np.ndarray) -> int:
    """How many bits are set."""
    return int(np.unpackbits(bits).sum())


def resolve(bits: np.ndarray, blocked: bool, m: int, k: int, keys: np.ndarray, update: bool) -> tuple[np.ndarray, int]:
    """Check (``update`` False: True where present) or check+update (True where it was absent)
    each key; and how many were absent."""
    out = np.empty(len(keys), dtype=np.bool_)
    if blocked:
        changed = _blocked_kernel(bits.view("<u8"), np.uint64(m // 512), k, keys, out, update)[0]
    elif update:
        changed = _add_kernel(bits, np.uint64(m), k, keys, out)
    else:
        _contains_kernel(bits, np.uint64(m), k, keys, out)
        changed = 0
    return out, int(changed)


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


@numba.njit(cache=True, inline="always")
def _seed(key):
    """A key's first hash (h1), shared by both formats' probe sequences."""
    return _mix(key + np.uint64(0x9E3779B97F4A7C15))


@numba.njit(cache=True, inline="always")
def _probe_start(key):
    """The first probe and the (odd) step of a key's double-hashing sequence (format 1)."""
    h1 = _seed(key)
    return h1, _mix(h1) | np.uint64(1)


@numba.njit(cache=True)
def _add_kernel(bits, m, k, keys, new):
    added = 0
    for r in range(keys.shape[0]):
        g, h2 = _probe_start(keys[r])
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
        g, h2 = _probe_start(keys[r])
        present = True
        for _ in range(k):
            i = _bit(g, m)
            if not bits[i >> np.uint64(3)] & (np.uint8(1) << np.uint8(i & np.uint64(7))):
                present = False
                break
            g += h2
        hit[r] = present


_GROUP = 16  # keys whose cache lines are requested together before any is used


@numba.njit(cache=True, inline="always")
def _block_of(key, blocks):
    """(first word of the key's block, the word its probe positions come from)."""
    h1 = _seed(key)
    return _bit(h1, blocks) * np.uint64(8), _mix(h1)


@numba.njit(cache=True)
def _blocked_kernel(words, blocks, k, keys, out, update):
    """Check (``update`` False) or check+update of every key of a blocked filter; out[r] is
    True where the key was absent (update) or present (check). Keys go in groups: first each
    key's block is found and its cache line touched (independent loads the CPU overlaps),
    then the probes run on lines already on their way."""
    n = keys.shape[0]
    base = np.empty(_GROUP, dtype=np.uint64)
    seed = np.empty(_GROUP, dtype=np.uint64)
    touched = np.uint64(0)
    changed = 0
    for start in range(0, n, _GROUP):
        stop = min(n, start + _GROUP)
        for r in range(start, stop):
            b, w = _block_of(keys[r], blocks)
            base[r - start], seed[r - start] = b, w
            touched ^= words[b]
        for r in range(start, stop):
            b, w = base[r - start], seed[r - start]
            missing = False
            for i in range(k):
                if i and i % 7 == 0:
                    w = _mix(w)
                position = w & np.uint64(511)
                w >>= np.uint64(9)
                word = b + (position >> np.uint64(6))
                mask = np.uint64(1) << (position & np.uint64(63))
                old = words[word]
                missing |= (old & mask) == 0
                if update:
                    words[word] = old | mask
            out[r] = missing if update else not missing
            changed += missing
    return changed, touched
