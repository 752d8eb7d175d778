"""64-bit URL keys for the Visited tables (Bloom, DRUM, the exact JE set).

A URL's fingerprint is the first 8 bytes of its MD5 digest (see :mod:`pycrawler.keys.md5`),
read big-endian as an unsigned integer. Why this choice:

- it is the book's MD5 key cut to 64 bits, so ``fingerprint64(u) == int(md5_key(u)[:16], 16)``:
  one hash family for the whole toolkit, checkable with any MD5 tool;
- MD5's bits are uniform, so the prefix is as good as any 64 bits of it; 64 bits keep the
  chance of any collision among 100M URLs near 3e-4 (birthday bound n^2 / 2^65);
- big-endian makes the integer's order the digest's byte order, which is also the order of
  the 8-byte big-endian keys the exact JE set stores;
- it is stable across processes, machines and Python versions (unlike ``hash()``).

Heritrix's own key (``FPGenerator``'s ``createKey``) is a different function; the heritrix
package computes that one when a Heritrix store is involved.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from .md5 import md5_digests
from .urls import np, packed_utf8, url_bytes


def fingerprint64(url: str) -> int:
    """The 64-bit key of one URL (a Python int in [0, 2**64))."""
    return int.from_bytes(hashlib.md5(url_bytes(url)).digest()[:8], "big")


if np is None:
    def fingerprints64(urls: Iterable[str]) -> list[int]:
        """:func:`fingerprint64` of each URL, as a list (no numpy: GraalPy)."""
        return [fingerprint64(url) for url in urls]
else:
    def fingerprints64(urls: Iterable[str]) -> np.ndarray:
        """:func:`fingerprint64` of each URL as a numpy uint64 array, computed in one batch."""
        digests = np.frombuffer(md5_digests(*packed_utf8(urls)), dtype=">u8")
        return digests[::2].astype(np.uint64)  # bytes 0..7 of each 16-byte digest, big-endian
