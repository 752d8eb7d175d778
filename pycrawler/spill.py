"""Byte records spilled to a temporary file and read back by number, in any order.

The Heritrix tools meet sets that do not fit in memory at the scale of a real crawl: ten
million pending URLs read in one order and written in another (the journal's order against
the keys' order, the ``pending`` database's key order against its ordinals). A
:class:`SpillFile` keeps the records on disk and only their offsets in memory (8 bytes a
record): records go in with :meth:`SpillFile.extend` and come out by number with
:meth:`SpillFile.read`.

The file is an unlinked temporary file in ``TMPDIR`` (:func:`tempfile.TemporaryFile`): it
takes no name, and the kernel frees its space when it is closed, whether the process ends
cleanly or is killed.
"""

from __future__ import annotations

import os
import tempfile
from array import array
from collections.abc import Iterator, Sequence

import numpy as np


class SpillFile:
    """Records appended to a temporary file; read back by number (see the module docstring)."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile(prefix="pycrawler-spill-")
        self._ends = array("Q")   # the end offset of every record
        self._size = 0

    def __len__(self) -> int:
        return len(self._ends)

    def extend(self, records: Sequence[bytes]) -> None:
        """Append records (one write for all of them)."""
        for record in records:
            self._size += len(record)
            self._ends.append(self._size)
        self._file.write(b"".join(records))

    def read(self, numbers: Sequence[int] | np.ndarray) -> list[bytes]:
        """The records with these numbers, in the order asked. They are read in file order
        (one ``pread`` for each run of records that lie next to each other), so that a batch
        asked for in a scattered order costs one pass over the part of the file it covers."""
        self._file.flush()
        numbers = np.asarray(numbers, dtype=np.int64)
        if not len(numbers):
            return []
        if numbers.min() < 0 or numbers.max() >= len(self._ends):
            raise IndexError(f"a spilled record number outside 0..{len(self._ends) - 1}")
        ends = np.frombuffer(self._ends, dtype=np.uint64)   # a view: no copy of every offset per call
        order = np.argsort(numbers, kind="stable")
        wanted = numbers[order]
        starts = np.where(wanted > 0, ends[np.maximum(wanted - 1, 0)], 0)
        stops = ends[wanted]
        # A run: records whose bytes touch (the next one starts where this one stops).
        breaks = np.flatnonzero(starts[1:] != stops[:-1]) + 1
        out: list[bytes] = [b""] * len(numbers)
        fd = self._file.fileno()
        positions, starts, stops = order.tolist(), starts.tolist(), stops.tolist()
        for first, last in zip([0, *breaks.tolist()], [*breaks.tolist(), len(wanted)]):
            base = starts[first]
            data = os.pread(fd, stops[last - 1] - base, base)
            for i in range(first, last):
                out[positions[i]] = data[starts[i] - base:stops[i] - base]
        return out

    def batches(self, size: int = 65536) -> Iterator[list[bytes]]:
        """Every record in the order appended, ``size`` at a time."""
        for first in range(0, len(self), size):
            yield self.read(np.arange(first, min(first + size, len(self))))

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> SpillFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
