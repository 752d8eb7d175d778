"""The book's MD5 URL key, one URL at a time or in batches.

The key (seeds/001, section 1.3) is the MD5 digest of the URL's bytes written as 32 lowercase
hex digits. Bytes are UTF-8 with ``surrogatepass`` (see :mod:`pycrawler.keys.urls`).

Batches of fewer than :data:`COMPILED_BATCH` URLs are hashed with hashlib, larger ones by the
compiled kernel of :mod:`.md5_kernel`, imported on first use: loading numba costs a process
~70 MB and ~0.3 s, which a crawl (a few hundred links per schedule batch, ~30k links/s at most)
never earns back, while a 10M-URL import gains ~1.5x from it. Both paths give the same digests.
Without numpy (GraalPy) every batch is hashed with hashlib, URL by URL.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from .urls import np, packed_utf8, url_bytes

COMPILED_BATCH = 1 << 14
"""Batches of at least this many URLs go through the compiled kernel. Measured here: hashlib
takes ~0.8 us a URL at any batch size, the kernel ~0.6 us from about 1,000 URLs up (and 20 us
for a batch of one), so below this size the kernel saves under ~10 ms a batch."""


def md5_digests(buf: np.ndarray, offsets: np.ndarray) -> bytes:
    """The 16-byte MD5 digests of the packed records (``buf[offsets[i]:offsets[i+1]]``), concatenated."""
    count = len(offsets) - 1
    if count >= COMPILED_BATCH:
        from .md5_kernel import md5_words

        return md5_words(buf, offsets).astype("<u4").tobytes()
    raw, bounds, md5 = buf.tobytes(), offsets.tolist(), hashlib.md5
    return b"".join([md5(raw[start:end]).digest() for start, end in zip(bounds, bounds[1:])])


def md5_key(url: str) -> str:
    """The book's key of one URL: 32 lowercase hex digits."""
    return hashlib.md5(url_bytes(url)).hexdigest()


if np is None:
    def md5_keys(urls: Iterable[str]) -> list[str]:
        """:func:`md5_key` of each URL, in order."""
        return [md5_key(url) for url in urls]
else:
    def md5_keys(urls: Iterable[str]) -> list[str]:
        """:func:`md5_key` of each URL, in order, computed in one batch."""
        hexed = md5_digests(*packed_utf8(urls)).hex()
        return [hexed[i:i + 32] for i in range(0, len(hexed), 32)]
