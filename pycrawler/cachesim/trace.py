"""Reading a cache-simulation trace: one request per URL line, or raw 64-bit keys.

Two formats, each plain or gzip-compressed (told by the magic bytes, not the name):

- ``urls``: text, one URL per line, as ``pycrawler crawl --trace`` writes it. Each line is
  keyed by XXH64 of its bytes (:mod:`pycrawler.keys.xxh64`), hashed straight from the file's
  buffer in compiled code, no Python string per URL. Empty lines are skipped; a ``\\r`` before
  the newline is part of the line. The key is not the seen table's MD5 fingerprint: a cache
  only needs equal URLs to get equal keys (and different ones different keys, which 64 bits
  give but for ~3e-4 chances of one collision in 100M URLs), and XXH64 is ~10x faster.
- ``u64``: little-endian unsigned 64-bit keys, 8 bytes each (what
  ``scripts/bench/cache_trace.py`` writes for synthetic traces); the default for names ending
  ``.u64`` or ``.u64.gz``.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..errors import BadInput
from ..keys.xxh64 import xxh64_packed

FORMATS = ("urls", "u64")
CHUNK = 64 << 20
GZIP_MAGIC = b"\x1f\x8b"


def trace_format(path: Path, requested: str | None = None) -> str:
    """The format to read ``path`` in: ``requested``, else told by its name."""
    if requested is not None:
        if requested not in FORMATS:
            raise BadInput(f"trace format must be one of {', '.join(FORMATS)}, not {requested!r}")
        return requested
    return "u64" if path.name.endswith((".u64", ".u64.gz")) else "urls"


def _open(path: Path):
    try:
        with open(path, "rb") as probe:
            compressed = probe.read(2) == GZIP_MAGIC
        return gzip.open(path, "rb") if compressed else open(path, "rb")
    except OSError as exc:
        raise BadInput(f"cannot read trace {path}: {exc.strerror or exc}") from None


def _chunks(path: Path) -> Iterator[bytes]:
    with _open(path) as stream:
        try:
            while chunk := stream.read(CHUNK):
                yield chunk
        except (OSError, EOFError) as exc:
            raise BadInput(f"trace {path} is damaged: {exc}") from None


def url_line_keys(data: bytes) -> np.ndarray:
    """XXH64 keys of the non-empty lines of ``data`` (whole lines, each ending in a newline)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(buf == 10)
    starts = np.empty_like(ends)
    starts[:1] = 0
    starts[1:] = ends[:-1] + 1
    # Without the newline bytes the lines are packed back to back: line i starts i bytes earlier.
    packed = np.delete(buf, ends)
    offsets = np.empty(len(ends) + 1, dtype=np.int64)
    offsets[:-1] = starts - np.arange(len(ends))
    offsets[-1] = len(packed)
    keys = np.empty(len(ends), dtype=np.uint64)
    xxh64_packed(packed, offsets, keys)
    return keys[ends > starts]


def read_trace(path: str | Path, fmt: str | None = None) -> np.ndarray:
    """The trace's requests as 64-bit keys, in order (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"trace {path} is not a file")
    fmt = trace_format(path, fmt)
    parts: list[np.ndarray] = []
    carry = b""
    for chunk in _chunks(path):
        data = carry + chunk
        if fmt == "u64":
            whole = len(data) - len(data) % 8
            parts.append(np.frombuffer(data[:whole], dtype="<u8").astype(np.uint64))
        else:
            whole = data.rfind(b"\n") + 1
            parts.append(url_line_keys(data[:whole]))
        carry = data[whole:]
    if carry and fmt == "u64":
        raise BadInput(f"trace {path} is not whole 8-byte keys ({len(carry)} bytes left over)")
    if carry:
        parts.append(url_line_keys(carry + b"\n"))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)
