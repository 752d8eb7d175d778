"""The book's ``SimpleBloomFilter`` (seeds/001, section 1.3.4), bit for bit.

The Java original keeps a ``java.util.BitSet`` of ``2 << 24`` bits and six ``SimpleHash``
functions with seeds 7, 11, 13, 31, 37 and 61; each computes ``result = seed * result + c``
over the string's UTF-16 code units ``c`` in Java's wrapping 32-bit ``int`` and sets bit
``(cap - 1) & result``. This module reproduces those bit indexes exactly (tests hold all
4,020 Java-computed ones of ``shared/vectors/simple-bloom.tsv``), so a filter filled here
answers like the book's and its saved bits load into Java.

Batches are hashed in numpy: the loop ``result = seed * result + c`` equals the polynomial
``sum(c_j * seed ** (len - 1 - j))`` mod 2^32, so each code unit is multiplied by a power from
a table and every URL's terms are summed with one ``np.add.reduceat``, all in wrapping uint32;
``(cap - 1) & result`` is the low 25 bits of that sum. Without numpy (GraalPy) the loop
runs as the book writes it, per code unit in Python ints, on a ``bytearray`` of bits.

Like the book it takes any string, including the empty one (whose indexes are all 0);
None or a non-str raises BadInput. It is fixed-size (4 MiB) and its false-positive rate
climbs past a few million URLs; :class:`pycrawler.seen.bloom.BloomFilter` is the sized,
stably hashed filter behind the Visited protocol, which this string-keyed one is not.

Saved state: the file is exactly 4,194,304 bytes, bit i being bit ``i & 7`` (least
significant first) of byte ``i >> 3``: Java's ``BitSet.toByteArray()`` padded with zero bytes
to full size, which ``BitSet.valueOf(bytes)`` reads back.
"""

from __future__ import annotations

import array
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from ..atomic_write import write_atomically
from ..errors import BadInput
from ..keys.urls import np, utf16_units

SIZE = 2 << 24
SEEDS = (7, 11, 13, 31, 37, 61)
STATE_BYTES = SIZE // 8


if np is None:
    def bit_indexes(urls: Iterable[str]) -> list[list[int]]:
        """The six bits each URL sets: one list per URL, one index per seed in book order."""
        out = []
        for url in urls:
            if not isinstance(url, str):
                raise BadInput(f"expected strings, got {type(url).__name__}")
            units = array.array("H", url.encode("utf-16-le", "surrogatepass"))
            if sys.byteorder == "big":
                units.byteswap()
            row = []
            for seed in SEEDS:
                result = 0
                for unit in units:
                    result = (seed * result + unit) & 0xFFFFFFFF
                row.append(result & (SIZE - 1))
            out.append(row)
        return out
else:
    def bit_indexes(urls: Iterable[str]) -> np.ndarray:
        """The six bits each URL sets: an (n, 6) int64 array, one column per seed in book order."""
        urls = urls if isinstance(urls, list) else list(urls)
        units, lengths = utf16_units(urls)  # as Java's String sees them
        units = units.astype(np.uint32)
        offsets = np.zeros(len(urls) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        out = np.zeros((len(urls), len(SEEDS)), dtype=np.int64)
        if not len(units):
            return out
        # Exponent of each code unit: how many units follow it within its URL.
        exponent = np.repeat(offsets[1:], lengths) - 1 - np.arange(len(units), dtype=np.int64)
        nonempty = lengths > 0
        starts = offsets[:-1][nonempty]
        for column, seed in enumerate(SEEDS):
            powers = np.ones(int(lengths.max()), dtype=np.uint32)
            np.cumprod(np.full(len(powers) - 1, seed, dtype=np.uint32), dtype=np.uint32, out=powers[1:])
            terms = units * powers[exponent]
            sums = np.add.reduceat(terms, starts, dtype=np.uint32)
            out[nonempty, column] = sums & np.uint32(SIZE - 1)
        return out


class SimpleBloomFilter:
    """The book's Visited table: ``add(url)`` / ``contains(url)`` and their batch forms."""

    if np is None:
        def __init__(self):
            self._bits = bytearray(STATE_BYTES)

        def add_many(self, urls: Iterable[str]) -> None:
            for row in bit_indexes(urls):
                for index in row:
                    self._bits[index >> 3] |= 1 << (index & 7)

        def contains_many(self, urls: Iterable[str]) -> list[bool]:
            bits = self._bits
            return [all(bits[index >> 3] >> (index & 7) & 1 for index in row) for row in bit_indexes(urls)]
    else:
        def __init__(self):
            self._bits = np.zeros(STATE_BYTES, dtype=np.uint8)

        def add_many(self, urls: Iterable[str]) -> None:
            idx = bit_indexes(urls).ravel()
            np.bitwise_or.at(self._bits, idx >> 3, (np.uint8(1) << (idx & 7)).astype(np.uint8))

        def contains_many(self, urls: Iterable[str]) -> np.ndarray:
            idx = bit_indexes(urls)
            return ((self._bits[idx >> 3] >> (idx & 7)) & 1).astype(bool).all(axis=1)

    def add(self, url: str) -> None:
        self.add_many([url])

    def contains(self, url: str) -> bool:
        return bool(self.contains_many([url])[0])

    __contains__ = contains

    def save(self, path: str | os.PathLike) -> None:
        """Write the bits (format in the module docstring)."""
        write_atomically(path, bytes(self._bits))

    @classmethod
    def load(cls, path: str | os.PathLike) -> SimpleBloomFilter:
        """Read bits written by :meth:`save` (BadInput for any other size)."""
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise BadInput(f"cannot read {path}: {exc.strerror}") from None
        if len(data) != STATE_BYTES:
            raise BadInput(f"{path} holds {len(data)} bytes; a SimpleBloomFilter state is {STATE_BYTES}")
        self = cls()
        self._bits[:] = data if np is None else np.frombuffer(data, dtype=np.uint8)
        return self
