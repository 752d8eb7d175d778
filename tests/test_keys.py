"""URL keys: the book's MD5 key and the 64-bit fingerprint of the Visited tables."""

import hashlib
import subprocess
import sys

import numpy as np
import pytest

from pycrawler.errors import BadInput
from pycrawler.keys import fingerprint64, fingerprints64, md5, md5_key, md5_keys

EDGE_URLS = [
    "http://example.com/",
    "x",
    "http://例子.测试/路径?查询=值",
    "http://example.com/emoji/😀/x",          # non-BMP: 4 UTF-8 bytes
    "http://example.com/\ud800lone",          # lone surrogate: surrogatepass, 3 bytes
    "http://example.com/" + "a" * 100_000,    # many MD5 blocks
] + ["u" * n for n in (55, 56, 63, 64, 65, 119, 120, 128)]  # MD5 padding boundaries


@pytest.fixture(params=["hashlib", "compiled"])
def batch_path(request, monkeypatch):
    """Run a batch test through each path: hashlib below COMPILED_BATCH URLs, the numba kernel above."""
    if request.param == "compiled":
        monkeypatch.setattr(md5, "COMPILED_BATCH", 1)
    return request.param


def reference_md5(url: str) -> bytes:
    return hashlib.md5(url.encode("utf-8", "surrogatepass")).digest()


def test_md5_key_is_32_lowercase_hex_digits_of_md5_over_utf8():
    assert md5_key("http://example.com/") == "a6bf1757fff057f266b697df9cf176fd"
    assert md5_key("http://例子.测试/") == hashlib.md5("http://例子.测试/".encode()).hexdigest()


def test_batch_md5_keys_equal_one_by_one_keys_on_edge_cases(batch_path):
    assert md5_keys(EDGE_URLS) == [reference_md5(u).hex() for u in EDGE_URLS]


def test_fingerprint_is_first_8_md5_bytes_big_endian():
    url = "http://example.com/"
    assert fingerprint64(url) == 0xA6BF1757FFF057F2
    assert fingerprint64(url) == int(md5_key(url)[:16], 16)


def test_batch_fingerprints_are_uint64_and_equal_single_ones(batch_path):
    keys = fingerprints64(EDGE_URLS)
    assert keys.dtype == np.uint64
    assert keys.tolist() == [int.from_bytes(reference_md5(u)[:8], "big") for u in EDGE_URLS]
    assert keys.tolist() == [fingerprint64(u) for u in EDGE_URLS]


def test_batches_accept_any_iterable_and_empty_batches():
    assert fingerprints64(iter(["a", "b"])).tolist() == [fingerprint64("a"), fingerprint64("b")]
    assert fingerprints64([]).shape == (0,)
    assert md5_keys([]) == []


def test_small_batches_do_not_load_numba():
    """A crawl keys a few hundred links at a time: that must not cost it numba's ~70 MB."""
    probe = ("import sys; from pycrawler.keys import fingerprints64, md5_keys; "
             "fingerprints64(['http://a/'] * 1000); md5_keys(['http://a/']); print('numba' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout == "False\n"


def test_lone_surrogates_are_keyed_with_surrogatepass():
    assert md5_key("\udfff") == hashlib.md5(b"\xed\xbf\xbf").hexdigest()


@pytest.mark.parametrize("bad", [None, "", b"http://example.com/", 42])
def test_none_empty_and_non_str_urls_are_bad_input(bad):
    for key_of in (md5_key, fingerprint64):
        with pytest.raises(BadInput):
            key_of(bad)
    for keys_of in (md5_keys, fingerprints64):
        with pytest.raises(BadInput):
            keys_of(["http://ok/", bad])


def test_xxh64_urls_equal_the_reference_xxhash_for_every_length_and_encoding():
    import xxhash

    from pycrawler.keys.xxh64 import xxh64_urls

    urls = ["x" * n for n in range(1, 100)] + ["http://\u00e9.example/\ud800/\U0001f600?q=1"]
    assert xxh64_urls(urls).tolist() == [xxhash.xxh64_intdigest(u.encode("utf-8", "surrogatepass")) for u in urls]
    assert xxh64_urls(["abc"]).tolist() == [0x44BC2CF5AD770999]   # the published XXH64("abc", seed 0)
    with pytest.raises(BadInput):
        xxh64_urls(["http://a/", ""])
