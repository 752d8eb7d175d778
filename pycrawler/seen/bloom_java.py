"""The Bloom filter's bit operations (:mod:`pycrawler.seen.bloom`) in Java: the route GraalPy takes.

The bits live in the bridge's ``org.pycrawler.bridge.BloomBits`` (a port of
:mod:`.bloom_python`): Java buffers in memory, or a shared mapping of the filter's file made
by Java, so the file's bytes are the very bytes the probes set, the same as the other paths
write. A batch of keys crosses as the little-endian bytes of a ``long[]`` and its answers
come back as a ``boolean[]``: one call a batch, run by code the JVM compiles even when GraalPy
itself is interpreted. Figures: docs/store.md, "Without numpy (GraalPy)".
"""

from __future__ import annotations

from array import array
from pathlib import Path

from .. import jvm

_BloomBits = jvm.jclass("org.pycrawler.bridge.BloomBits")
_UrlKeys = jvm.jclass("org.pycrawler.bridge.UrlKeys")


def zeroed(size: int):
    """An in-memory bit array of ``size`` zero bytes."""
    return _BloomBits.zeroed(size)


def mapped(path: Path, offset: int, read_only: bool):
    """The file ``path`` mapped whole (its first ``offset`` bytes the header, then the bits),
    as both the mapping and the bits."""
    bits = _BloomBits.mapped(str(path), offset, read_only)
    return bits, bits


def write_header(mapping, header: bytes) -> None:
    mapping.writeHeader(jvm.byte_array(header))


def sync(mapping) -> None:
    mapping.sync()


def ones(bits) -> int:
    """How many bits are set."""
    return bits.ones()


def resolve(bits, blocked: bool, m: int, k: int, keys: list[int], update: bool) -> tuple[list[bool], int]:
    """Check (``update`` False: True where present) or check+update (True where it was absent)
    each key; and how many were absent."""
    answers = jvm.boolean_array(len(keys))
    java_keys = _UrlKeys.fromLittleEndian(jvm.byte_array(array("Q", keys).tobytes()))
    changed = bits.resolve(blocked, m, k, java_keys, update, answers)
    return list(answers), changed
