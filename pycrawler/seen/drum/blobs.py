"""Many variable-length byte strings in two numpy arrays, so DRUM moves values and aux data
in batches: string ``i`` is ``data[offsets[i]:offsets[i + 1]]``.

Selecting, concatenating and writing batches stays vectorized; a ``bytes`` object is made
only when a caller reads one element.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np


class Blobs:
    """An immutable sequence of byte strings, packed."""

    __slots__ = ("data", "offsets")

    def __init__(self, data: np.ndarray, offsets: np.ndarray):
        self.data = np.asarray(data, dtype=np.uint8)
        self.offsets = np.asarray(offsets, dtype=np.int64)

    @classmethod
    def of(cls, items: Blobs | Iterable[bytes | str]) -> Blobs:
        """Pack byte strings (``str`` items are UTF-8 encoded)."""
        if isinstance(items, Blobs):
            return items
        items = [i.encode() if isinstance(i, str) else bytes(i) for i in items]
        offsets = np.zeros(len(items) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, items), dtype=np.int64, count=len(items)), out=offsets[1:])
        return cls(np.frombuffer(b"".join(items), dtype=np.uint8), offsets)

    @classmethod
    def empty(cls, n: int) -> Blobs:
        """``n`` empty strings."""
        return cls(np.zeros(0, dtype=np.uint8), np.zeros(n + 1, dtype=np.int64))

    @classmethod
    def from_lengths(cls, lengths: np.ndarray, data: np.ndarray) -> Blobs:
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return cls(data, offsets)

    @classmethod
    def concat(cls, parts: list[Blobs]) -> Blobs:
        if len(parts) == 1:
            return parts[0]
        lengths = np.concatenate([p.lengths() for p in parts])
        return cls.from_lengths(lengths, np.concatenate([p.payload() for p in parts]))

    def lengths(self) -> np.ndarray:
        # A subtraction, not np.diff: DRUM asks for the lengths of every bucket's slice at each
        # flush, and np.diff's own overhead is most of a short array's cost.
        return self.offsets[1:] - self.offsets[:-1]

    def payload(self) -> np.ndarray:
        """The strings' bytes, one after another (a view: a slice's data starts before them)."""
        return self.data[self.offsets[0]:self.offsets[-1]]

    @property
    def nbytes(self) -> int:
        return int(self.offsets[-1] - self.offsets[0])

    def take(self, indices: np.ndarray) -> Blobs:
        """The strings at ``indices``, packed anew (one vectorized gather)."""
        indices = np.asarray(indices, dtype=np.int64)
        starts = self.offsets[indices]
        lengths = self.offsets[indices + 1] - starts
        out = np.zeros(len(indices) + 1, dtype=np.int64)
        np.cumsum(lengths, out=out[1:])
        if out[-1] == 0:
            return Blobs(np.zeros(0, dtype=np.uint8), out)
        gather = np.repeat(starts - out[:-1], lengths) + np.arange(out[-1], dtype=np.int64)
        return Blobs(self.data[gather], out)

    def slice(self, start: int, stop: int) -> Blobs:
        """The strings ``start`` to ``stop`` (excluded), sharing this one's data (no copy)."""
        return Blobs(self.data, self.offsets[start:stop + 1])

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> bytes:
        if i < 0:
            i += len(self)
        return self.data[self.offsets[i]:self.offsets[i + 1]].tobytes()

    def __iter__(self) -> Iterator[bytes]:
        buf = self.payload().tobytes()
        off = (self.offsets - self.offsets[0]).tolist()
        return (buf[off[i]:off[i + 1]] for i in range(len(off) - 1))

    def tolist(self) -> list[bytes]:
        return list(self)

    def __eq__(self, other) -> bool:
        return isinstance(other, Blobs) and self.tolist() == other.tolist()

    def __repr__(self) -> str:
        return f"<Blobs n={len(self)} bytes={self.nbytes}>"
