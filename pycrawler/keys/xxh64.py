"""XXH64 of URLs in batches: a fast, stable, non-cryptographic 64-bit URL hash.

XXH64 (Yann Collet's xxHash, 64-bit variant, seed 0) of a URL's bytes (UTF-8 with
``surrogatepass``, see :mod:`pycrawler.keys.urls`), so ``xxh64_urls([u])[0]`` equals
``xxhash.xxh64_intdigest(u.encode("utf-8", "surrogatepass"))`` and any other XXH64
implementation. The Bloom filter keys URLs by it (file format 2 of
:mod:`pycrawler.seen.bloom`): about 8 bytes per step instead of MD5's 64-round blocks, so a
typical URL hashes in tens of nanoseconds where its MD5 fingerprint takes ~0.3 us.

It is not the fingerprint the exact and DRUM tables store (:func:`pycrawler.keys.fingerprints64`,
the MD5 prefix): XXH64 is fine for spreading bits, not meant to resist crafted collisions.
The kernel (:mod:`.xxh64_kernel`) is compiled with numba over the packed batch, one Python
call per batch. Without numpy, GraalPy hashes the batch in one Java call (the bridge's
``UrlKeys``, :mod:`.java_keys`), and CPython each URL in plain Python ints, as the reference
implementation writes it, about 30 times slower than numba.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..jvm import RUNTIME
from .urls import np, packed_utf8, url_bytes

if np is None and RUNTIME == "graalpy":  # one Java call a batch (pycrawler.keys.java_keys)
    from .java_keys import xxh64_urls
elif np is None:
    _WORD = (1 << 64) - 1
    _P1, _P2, _P3, _P4, _P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63,
                               0x27D4EB2F165667C5)

    def _rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (64 - r))) & _WORD

    def _round(acc: int, lane: int) -> int:
        return (_rotl((acc + lane * _P2) & _WORD, 31) * _P1) & _WORD

    def xxh64(data: bytes) -> int:
        """XXH64 (seed 0) of ``data``."""
        length, pos = len(data), 0
        if length >= 32:
            v = [(_P1 + _P2) & _WORD, _P2, 0, (-_P1) & _WORD]
            while pos + 32 <= length:
                v = [_round(acc, int.from_bytes(data[pos + 8 * i:pos + 8 * i + 8], "little")) for i, acc in enumerate(v)]
                pos += 32
            h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _WORD
            for acc in v:
                h = ((h ^ _round(0, acc)) * _P1 + _P4) & _WORD
        else:
            h = _P5
        h = (h + length) & _WORD
        while pos + 8 <= length:
            h = (_rotl(h ^ _round(0, int.from_bytes(data[pos:pos + 8], "little")), 27) * _P1 + _P4) & _WORD
            pos += 8
        if pos + 4 <= length:
            h = (_rotl(h ^ ((int.from_bytes(data[pos:pos + 4], "little") * _P1) & _WORD), 23) * _P2 + _P3) & _WORD
            pos += 4
        while pos < length:
            h = (_rotl(h ^ ((data[pos] * _P5) & _WORD), 11) * _P1) & _WORD
            pos += 1
        h = ((h ^ (h >> 33)) * _P2) & _WORD
        h = ((h ^ (h >> 29)) * _P3) & _WORD
        return h ^ (h >> 32)

    def xxh64_urls(urls: Iterable[str]) -> list[int]:
        """XXH64 of each URL's bytes (BadInput for None, non-str, empty), URL by URL."""
        return [xxh64(url_bytes(url)) for url in urls]
else:
    from .xxh64_kernel import xxh64_packed

    def xxh64_urls(urls: Iterable[str]) -> np.ndarray:
        """XXH64 of each URL's bytes as a uint64 array (BadInput for None, non-str, empty)."""
        data, offsets = packed_utf8(urls)
        out = np.empty(len(offsets) - 1, dtype=np.uint64)
        xxh64_packed(data, offsets, out)
        return out
