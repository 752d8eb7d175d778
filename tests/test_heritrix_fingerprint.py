"""Heritrix's fingerprints and alreadySeenUrl keys, bit for bit.

The reference is ../shared/vectors/heritrix-fp.tsv: for 4,020 URLs, what Heritrix 3's own
``BdbUriUniqFilter.createKey`` and ``FPGenerator.std64/std24/std40.fp`` return.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycrawler.errors import BadInput
from pycrawler.keys.heritrix_fp import (
    STD24,
    STD40,
    STD64,
    create_key,
    create_keys,
    fp24,
    fp40,
    fp64,
    scheme_authority,
)

COLUMNS = ("create_key", "fp64", "fp24", "fp40")


@pytest.fixture(scope="module")
def vectors(shared):
    """(urls, {column: expected uint64 array}) from the Java outputs."""
    # Split on '\n' only: a URL is everything after the fourth tab, whatever it holds.
    lines = (shared / "vectors" / "heritrix-fp.tsv").read_bytes().decode("utf-8").split("\n")
    assert lines[-1] == ""
    rows = [line.split("\t", 4) for line in lines[:-1]]
    urls = [row[4] for row in rows]
    expected = {
        name: np.array([int(row[i], 16) for row in rows], dtype=np.uint64)
        for i, name in enumerate(COLUMNS)
    }
    return urls, expected


SCALAR = {"create_key": create_key, "fp64": fp64, "fp24": fp24, "fp40": fp40}
BATCH = {
    "create_key": create_keys,
    "fp64": STD64.fp_many,
    "fp24": STD24.fp_many,
    "fp40": STD40.fp_many,
}


def test_the_vectors_cover_the_edge_cases(vectors):
    urls, _ = vectors
    assert len(urls) == 4020
    assert "" in urls
    assert any(max(url, default="\0") > "\uffff" for url in urls)  # outside the BMP
    assert max(map(len, urls)) >= 5000


@pytest.mark.parametrize("column", COLUMNS)
def test_scalar_matches_java_on_every_vector(vectors, column):
    urls, expected = vectors
    function = SCALAR[column]
    wrong = [(url, f"{function(url):016x}", f"{int(want):016x}")
             for url, want in zip(urls, expected[column]) if function(url) != int(want)]
    assert wrong == []


@pytest.mark.parametrize("column", COLUMNS)
def test_batch_matches_java_on_every_vector(vectors, column):
    urls, expected = vectors
    got = BATCH[column](urls)
    assert got.dtype == np.uint64
    assert [urls[i] for i in np.flatnonzero(got != expected[column])] == []


def test_batch_in_several_chunks_matches_java(vectors, monkeypatch):
    from pycrawler.keys import heritrix_fp

    monkeypatch.setattr(heritrix_fp, "CHUNK", 1000)
    urls, expected = vectors
    np.testing.assert_array_equal(create_keys(iter(urls)), expected["create_key"])


def test_heritrix_own_unit_test_values():
    # BdbUriUniqFilterTest.testCreateKey / testCreateKeyCollisions (Java's signed longs).
    assert create_key("dns:archive.org") == 8812917769287344085
    assert create_key("http://archive.org/index.html") == 6613237167064754714
    assert create_key("dns:mail.daps.dla.mil") != create_key("dns:militaryreview.army.mil")


def test_fingerprints_fill_the_top_bits_of_the_word():
    assert fp24("http://archive.org") & ((1 << 40) - 1) == 0
    assert fp40("http://archive.org") & ((1 << 24) - 1) == 0
    assert STD64.empty == fp64("") and STD24.empty == fp24("")


def test_key_is_host_fingerprint_then_url_fingerprint():
    url = "http://archive.org/index.html?q=1"
    assert create_key(url) == fp24("http://archive.org") | (fp40(url) >> 24)
    # Keys of one host share their top 24 bits, so they sort together.
    assert create_key(url) >> 40 == create_key("http://archive.org/other") >> 40


@pytest.mark.parametrize(
    ("url", "part"),
    [
        ("http://archive.org/index.html", "http://archive.org"),
        ("https://user@host:8443/a/b?c", "https://user@host:8443"),
        ("http://archive.org", "http://archive.org"),  # no '/' after '://': all of it
        ("dns:archive.org", "dns:archive.org"),  # no '://': all of it
        ("mailto:someone@example.com", "mailto:someone@example.com"),
        ("://host/path", ""),  # '://' at 0: Heritrix cuts nothing
        ("x://y/z://w/v", "x://y"),  # the first '://' counts
        ("", ""),
    ],
)
def test_scheme_authority_cut(url, part):
    assert scheme_authority(url) == part


EDGE_CASES = [
    "",
    "://host/path",
    "a:",  # with the next one: "a:" "//b/c" must not make a '://' across URLs
    "//b/c",
    "http:/",
    "http://",
    "http:///",
    "x://y",
    "\ud800",  # a lone surrogate is one Java char
    "\ud83d\ude00 paired by hand",
    "http://例子.测试/路径?查询=值",
    "http://example.com/emoji/\U0001f600/x",
    "http://[::1]:8080/ipv6",
    "h" * 511,
    "h" * 512,
    "h" * 513,
    "http://long/" + "é" * 1100,
    "http://long/" + "\U0001f600" * 700,
    "x" * 20000,
]


def test_batch_agrees_with_scalar_on_edge_cases():
    for texts in (EDGE_CASES, EDGE_CASES[::-1], [t for t in EDGE_CASES if t.isascii()]):
        assert create_keys(texts).tolist() == [create_key(t) for t in texts]
        for generator in (STD24, STD40, STD64):
            assert generator.fp_many(texts).tolist() == [generator.fp(t) for t in texts]


def test_empty_batches():
    assert create_keys([]).tolist() == []
    assert create_keys(["", ""]).tolist() == [create_key("")] * 2


URL_LIKE = st.from_regex(r"[a-z]{1,5}://[a-z.]{0,8}(/[a-z/]{0,8})?", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(max_size=40) | URL_LIKE, max_size=12))
def test_batch_agrees_with_scalar(texts):
    assert create_keys(texts).tolist() == [create_key(t) for t in texts]
    assert STD64.fp_many(texts).tolist() == [fp64(t) for t in texts]


def test_non_strings_are_bad_input():
    with pytest.raises(BadInput):
        create_key(b"http://archive.org/")
    with pytest.raises(BadInput):
        create_keys(["http://archive.org/", None])
