"""The book's SimpleBloomFilter: Java's bit indexes exactly, its state saved and loaded."""

import numpy as np
import pytest

from pycrawler.errors import BadInput
from pycrawler.seen.simple_bloom import STATE_BYTES, SimpleBloomFilter, bit_indexes


def vector_lines(shared):
    """(indexes, url) per line: six comma-separated ints, a tab, then the URL (which may hold
    a tab); the empty URL is a line of its own."""
    text = (shared / "vectors" / "simple-bloom.tsv").read_bytes().decode("utf-8")
    lines = text.split("\n")
    assert lines.pop() == ""
    rows = [line.split("\t", 1) for line in lines]
    return [[int(i) for i in idx.split(",")] for idx, _ in rows], [url for _, url in rows]


def test_bit_indexes_match_the_java_code_on_all_4020_vectors(shared):
    expected, urls = vector_lines(shared)
    assert len(urls) == 4020 and "" in urls
    assert bit_indexes(urls).tolist() == expected


def test_indexes_of_a_batch_do_not_depend_on_its_company():
    urls = ["http://example.com/emoji/😀/x", "", "http://a/"]
    assert bit_indexes(urls).tolist() == [bit_indexes([u]).tolist()[0] for u in urls]


def test_java_int_overflow_and_utf16_code_units():
    # By hand, Java: result = 7 * result + c over "😀" = "\ud83d\ude00" in int arithmetic.
    result = 0
    for unit in (0xD83D, 0xDE00):
        result = (7 * result + unit) & 0xFFFFFFFF
    assert bit_indexes(["😀"])[0, 0] == result & (2**25 - 1)


def test_added_urls_are_contained_and_others_mostly_not():
    f = SimpleBloomFilter()
    f.add("stone2083@yahoo.cn")
    assert "stone2083@yahoo.cn" in f
    urls = [f"http://example.com/{i}" for i in range(1000)]
    f.add_many(urls)
    assert f.contains_many(urls).all()
    assert not f.contains_many([f"http://other.org/{i}" for i in range(1000)]).any()


def test_state_round_trips_through_a_file(tmp_path):
    f = SimpleBloomFilter()
    f.add_many(["http://a/", "http://b/"])
    f.save(tmp_path / "bits")
    assert (tmp_path / "bits").stat().st_size == STATE_BYTES
    g = SimpleBloomFilter.load(tmp_path / "bits")
    assert g.contains_many(["http://a/", "http://b/", "http://c/"]).tolist() == [True, True, False]


def test_saved_bits_are_java_bitset_byte_order(tmp_path):
    f = SimpleBloomFilter()
    f.add("x")   # every seed maps "x" to bit 120: byte 15, bit 0
    f.save(tmp_path / "bits")
    data = np.fromfile(tmp_path / "bits", dtype=np.uint8)
    assert np.flatnonzero(data).tolist() == [15] and data[15] == 1


@pytest.mark.parametrize("size", [0, STATE_BYTES - 1, STATE_BYTES + 1])
def test_a_file_of_the_wrong_size_is_bad_input(tmp_path, size):
    (tmp_path / "bits").write_bytes(b"\0" * size)
    with pytest.raises(BadInput):
        SimpleBloomFilter.load(tmp_path / "bits")


def test_missing_file_and_non_strings_are_bad_input(tmp_path):
    with pytest.raises(BadInput):
        SimpleBloomFilter.load(tmp_path / "absent")
    with pytest.raises(BadInput):
        SimpleBloomFilter().add(None)
