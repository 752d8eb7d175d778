"""Validating URLs and turning batches of them into packed code units for the key kernels:
UTF-8 bytes (MD5, XXH64) or UTF-16 units as a Java String holds them (Heritrix, the book).

Encoding: UTF-8 with ``surrogatepass``. A Python ``str`` can hold lone surrogates (from JSON
``"\\ud800"``, from ``surrogateescape`` decoding, from Java strings cut between a pair);
strict UTF-8 refuses them, which would make a URL impossible to key. ``surrogatepass``
encodes each surrogate code point as its own 3-byte sequence (as Java's modified UTF-8 and
CESU-8 do), so every ``str`` has exactly one byte form and one key. Non-BMP characters
(``"😀"``) are one code point in Python and encode as the usual 4 bytes; only a string that
holds an explicit surrogate *pair* as two code points differs from the UTF-8 of its
combined character (normalise such strings with
``s.encode("utf-16", "surrogatepass").decode("utf-16")`` before keying if that matters).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import BadInput

try:
    import numpy as np
except ImportError:  # GraalPy: no numpy; the packed forms below are for the numpy paths only
    np = None

ENCODING = "utf-8"
ERRORS = "surrogatepass"


def _bad(url: object) -> BadInput:
    if url is None:
        return BadInput("a URL is required (got None)")
    if not isinstance(url, str):
        return BadInput(f"a URL must be a str, not {type(url).__name__}")
    return BadInput("a URL must not be empty")


def url_bytes(url: str) -> bytes:
    """The bytes a URL is keyed by; BadInput for None, a non-str or the empty string."""
    if not isinstance(url, str) or not url:
        raise _bad(url)
    return url.encode(ENCODING, ERRORS)


def packed_utf8(urls: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
    """A batch of URLs as (uint8 buffer, int64 offsets of n+1): URL i is ``buf[off[i]:off[i+1]]``.

    The common all-ASCII batch is joined and encoded in one call (its UTF-8 length then equals
    its character count); other batches are encoded URL by URL.
    """
    urls = urls if isinstance(urls, list) else list(urls)
    try:
        text = "".join(urls)
    except TypeError:
        raise _bad(next(u for u in urls if not isinstance(u, str))) from None
    offsets = np.zeros(len(urls) + 1, dtype=np.int64)
    lengths = np.fromiter(map(len, urls), dtype=np.int64, count=len(urls))
    if len(urls) and lengths.min() == 0:
        raise _bad("")
    data = text.encode(ENCODING, ERRORS)
    if len(data) != len(text):
        encoded = [u.encode(ENCODING, ERRORS) for u in urls]
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=len(urls))
        data = b"".join(encoded)
    np.cumsum(lengths, out=offsets[1:])
    return np.frombuffer(data, dtype=np.uint8), offsets


def utf16_units(texts: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
    """All strings as one flat array of UTF-16 code units and each one's length in units.

    The units are uint16, or uint8 when every string is ASCII. Lone surrogates are one unit
    each (``surrogatepass``), as in a Java ``String``.
    """
    texts = texts if isinstance(texts, (list, tuple)) else list(texts)
    try:
        joined = "".join(texts)
    except TypeError:
        bad = next(t for t in texts if not isinstance(t, str))
        raise BadInput(f"expected strings, got {type(bad).__name__}") from None
    lengths = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    if joined.isascii():
        # The common case, and its code units fit in bytes: half the memory traffic.
        return np.frombuffer(joined.encode("ascii"), dtype=np.uint8), lengths
    units = np.frombuffer(joined.encode("utf-16-le", "surrogatepass"), dtype="<u2").astype(np.uint16, copy=False)
    if lengths.sum() != units.size:
        # Characters outside the BMP take two units (a surrogate pair), as in Java: add to each
        # string's length the number of such characters in it.
        code_points = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype="<u4")
        astral_before = np.concatenate(([0], np.cumsum(code_points > 0xFFFF)))
        ends = np.cumsum(lengths)
        lengths = lengths + astral_before[ends] - astral_before[ends - lengths]
    return units, lengths
