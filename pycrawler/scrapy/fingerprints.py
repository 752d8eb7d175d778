"""Scrapy request fingerprints as the 64-bit keys of a Visited table.

Scrapy's request fingerprinter (``REQUEST_FINGERPRINTER_CLASS``, ``crawler.request_fingerprinter``)
says when two requests are the same: by default a SHA1 over the canonical URL, the method and
the body. pycrawler's Visited tables hold 64-bit keys, so a request's key is the first 8 bytes
of its fingerprint, big-endian: the same truncation as pycrawler's MD5 URL keys, with a
collision chance of about n^2 / 2^65 (one in 10^5 at 10M requests).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

KEY_BYTES = 8


def seen_keys(fingerprints: Sequence[bytes]) -> np.ndarray:
    """The Visited keys of a batch of fingerprints (each at least 8 bytes), as a uint64 array."""
    joined = b"".join(fp[:KEY_BYTES] for fp in fingerprints)
    return np.frombuffer(joined, dtype=">u8").astype(np.uint64)
