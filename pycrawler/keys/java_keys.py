"""URL keys of a batch computed in Java, one call a batch: the route GraalPy takes (no numpy).

Under GraalPy the bridge's ``org.pycrawler.bridge.UrlKeys`` (a port of :mod:`.heritrix_fp`'s
and :mod:`.xxh64`'s arithmetic) runs as Java code that the JVM's own JIT compiles even when
GraalPy itself is interpreted, where the same loops in Python ints run interpreted. A batch
crosses as the URLs end to end (a ``String`` for Heritrix's keys, which fingerprint UTF-16
units; a ``byte[]`` of their UTF-8 for XXH64) and an ``int[]`` of offsets; the keys come back as the little-endian bytes of a ``long[]``, which ``array("Q")`` reads as unsigned ints
in one call. Figures and the choice per runtime: docs/store.md, "Without numpy (GraalPy)".
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Iterable
from itertools import accumulate

from .. import jvm
from ..errors import BadInput
from .urls import ENCODING, ERRORS, url_bytes

_UrlKeys = jvm.jclass("org.pycrawler.bridge.UrlKeys")
_OUTSIDE_THE_BMP = re.compile("[\U00010000-\U0010FFFF]")


def _java_batch(data: bytes, lengths: Iterable[int]):
    return jvm.byte_array(data), jvm.int_array(list(accumulate(lengths, initial=0)))


def _unsigned(keys) -> list[int]:
    """A Java ``long[]`` as unsigned Python ints."""
    return array("Q", jvm.to_bytes(_UrlKeys.littleEndian(keys))).tolist()


def _utf16_batch(texts: list[str]):
    """(the strings joined, which GraalPy hands to Java as a ``String``, a lone surrogate as one
    unit; the ``int[]`` of offsets in UTF-16 code units)."""
    try:
        joined = "".join(texts)
    except TypeError:
        bad = next(t for t in texts if not isinstance(t, str))
        raise BadInput(f"expected strings, got {type(bad).__name__}") from None
    lengths = list(map(len, texts))
    if not joined.isascii() and _OUTSIDE_THE_BMP.search(joined):
        # A character outside the BMP is two units (a surrogate pair): found by the regex engine,
        # each adds one to its string's length.
        starts = list(accumulate(lengths, initial=0))
        for astral in _OUTSIDE_THE_BMP.finditer(joined):
            lengths[bisect_right(starts, astral.start()) - 1] += 1
    return joined, jvm.int_array(list(accumulate(lengths, initial=0)))


def create_keys(urls: Iterable[str]) -> list[int]:
    """:func:`.heritrix_fp.create_key` of each URL."""
    return _unsigned(_UrlKeys.heritrixKeys(*_utf16_batch(urls if isinstance(urls, list) else list(urls))))


def fingerprints(polynomial: int, degree: int, texts: Iterable[str]) -> list[int]:
    """The Rabin fingerprint of degree ``degree`` modulo ``polynomial`` (as :class:`.heritrix_fp.RabinFingerprinter`
    takes them) of each string."""
    signed = polynomial - (1 << 64) if polynomial >> 63 else polynomial  # the bits of a Java long
    return _unsigned(_UrlKeys.fingerprints(signed, degree, *_utf16_batch(texts if isinstance(texts, list) else list(texts))))


def xxh64_urls(urls: Iterable[str]) -> list[int]:
    """XXH64 of each URL's bytes (BadInput for None, non-str, empty)."""
    urls = urls if isinstance(urls, list) else list(urls)
    try:
        text = "".join(urls)
        lengths = list(map(len, urls))
        valid = all(lengths)
    except TypeError:
        valid = False
    if not valid:
        for url in urls:
            url_bytes(url)  # raises the usual BadInput at the first bad URL
    data = text.encode(ENCODING, ERRORS)
    if len(data) != len(text):  # not all ASCII: each URL's own byte length
        encoded = [url.encode(ENCODING, ERRORS) for url in urls]
        data, lengths = b"".join(encoded), map(len, encoded)
    return _unsigned(_UrlKeys.xxh64(*_java_batch(data, lengths)))
