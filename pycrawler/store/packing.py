"""Batches of byte strings packed for one JNI crossing: ``data`` + ``offsets`` (n+1 int32).

The Java side is ``org.pycrawler.bridge.Packed``; a batch of n records becomes two Java
arrays instead of n objects.

Where numpy cannot be imported (GraalPy has none), :func:`pack` builds its offsets with the
``array`` module and the answers of the ``*_many`` calls are lists of bools (:func:`flags`)
instead of bool arrays: the records and the bytes that reach JE are the same. The choice is
made here, once, at import.
"""

from __future__ import annotations

import array
import itertools
from collections.abc import Iterable, Sequence

from .. import jvm

try:
    import numpy as np
except ImportError:  # GraalPy: no numpy
    np = None


def _pack_array(items: Sequence[bytes] | Iterable[bytes]) -> tuple[bytes, array.array]:
    """:func:`pack` without numpy: the offsets an ``array('i')``."""
    items = list(items)
    try:
        offsets = array.array("i", itertools.accumulate(map(len, items), initial=0))
    except OverflowError:
        raise ValueError("a batch holds at most 2 GiB of bytes; split it") from None
    return b"".join(items), offsets


def _pack_numpy(items: Sequence[bytes] | Iterable[bytes]) -> tuple[bytes, np.ndarray]:
    """Concatenate ``items`` and return (data, offsets) with ``len(items) + 1`` offsets."""
    items = list(items)
    offsets = np.zeros(len(items) + 1, dtype=np.int32)
    if items:
        lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
        total = int(lengths.sum())
        if total >= 2**31:
            raise ValueError("a batch holds at most 2 GiB of bytes; split it")
        offsets[1:] = np.cumsum(lengths)
    return b"".join(items), offsets


def pack_fixed(array: np.ndarray) -> tuple[bytes, np.ndarray]:
    """Pack a 2-D uint8 array (one row per record) or a 1-D array of big-endian keys."""
    array = np.ascontiguousarray(array)
    rows = array.shape[0]
    width = array.itemsize if array.ndim == 1 else array.shape[1] * array.itemsize
    return array.tobytes(), np.arange(0, rows * width + 1, width, dtype=np.int32)


def unpack(data, offsets) -> list[bytes]:
    """Split a packed batch (bytes-like + offsets) back into a list of bytes."""
    buf = memoryview(bytes(data))
    off = as_list(offsets)
    return [bytes(buf[off[i]:off[i + 1]]) for i in range(len(off) - 1)]


def unpack_java(packed) -> list[bytes]:
    """A batch the bridge returned (``org.pycrawler.bridge.Packed``: a ``byte[]`` and its
    ``int[]`` offsets) as a list of bytes: the ``byte[]`` crosses in one step
    (:func:`pycrawler.jvm.to_bytes`; under GraalPy ``bytes()`` of a Java array fails)."""
    return unpack(jvm.to_bytes(packed.data), packed.offsets)


if np is None:
    pack = _pack_array
    as_list = list

    def flags(booleans) -> list[bool]:
        """A batch's answers (a Java ``boolean[]``) as a list of bools."""
        return list(map(bool, booleans))
else:
    pack = _pack_numpy

    def as_list(batch) -> list:
        """A batch of numbers or flags (a Java array, a numpy array, an ``array``) as a list
        of Python ints or bools."""
        return np.asarray(batch).tolist()

    def flags(booleans) -> np.ndarray:
        """A batch's answers (a Java ``boolean[]``) as a bool array."""
        return np.asarray(booleans, dtype=bool)


def u64_keys(keys: np.ndarray) -> np.ndarray:
    """64-bit unsigned keys as big-endian bytes, so JE's byte order is numeric order."""
    return np.asarray(keys, dtype=np.uint64).astype(">u8")


def frame(*batches: tuple[bytes, np.ndarray]) -> bytes:
    """Packed batches as the one byte string a batch is over a socket: per batch, its record
    count, its offsets (big-endian int32 each), then its data (``org.pycrawler.bridge.Packed.frame``)."""
    parts = []
    for data, offsets in batches:
        offsets = np.asarray(offsets)
        parts += [np.array([len(offsets) - 1], dtype=">i4").tobytes(), offsets.astype(">i4").tobytes(), bytes(data)]
    return b"".join(parts)


def unframe(framed: bytes, batches: int) -> list[list[bytes]]:
    """The records of each of the ``batches`` batches in a :func:`frame`."""
    out, at = [], 0
    for _ in range(batches):
        count = int(np.frombuffer(framed, dtype=">i4", count=1, offset=at)[0])
        offsets = np.frombuffer(framed, dtype=">i4", count=count + 1, offset=at + 4)
        at += 4 * (count + 2)
        out.append(unpack(memoryview(framed)[at:at + int(offsets[-1])], offsets))
        at += int(offsets[-1])
    return out
