"""CrawlUrl's stored form is CrawlUrlBinding's, byte for byte, in both directions."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crawl_url_samples import SAFE_MS_MIN, sample_records
from pycrawler.records.crawl_url import (COMPILED_BATCH, FORMAT_VERSION, INT_MAX, INT_MIN, LONG_MAX, CrawlUrl, decode,
                                         decode_many, encode, encode_many, to_dict)
from pycrawler.store.tuple import TupleFormatError

@pytest.fixture(scope="module")
def java():
    from pycrawler import jvm

    jvm.start()
    import jpype

    class Java:
        binding = jpype.JClass("org.pycrawler.bridge.CrawlUrlBinding")()
        TupleInput = jpype.JClass("com.sleepycat.bind.tuple.TupleInput")
        TupleOutput = jpype.JClass("com.sleepycat.bind.tuple.TupleOutput")
        CrawlUrl = jpype.JClass("org.pycrawler.bridge.CrawlUrl")
        Timestamp = jpype.JClass("java.sql.Timestamp")
        Date = jpype.JClass("java.util.Date")
        Strings = jpype.JArray(jpype.JString)
        to_json = jpype.JClass("org.pycrawler.bridge.CrawlUrlJson").toJson
        Bytes = jpype.JArray(jpype.JByte)

        def read(self, data: bytes):
            return self.binding.entryToObject(self.TupleInput(self.Bytes(data)))

        def write(self, java_record) -> bytes:
            out = self.TupleOutput()
            self.binding.objectToEntry(java_record, out)
            return bytes(out.toByteArray())

        def build(self, r: CrawlUrl):
            """A Java CrawlUrl set field by field through its setters."""
            c = self.CrawlUrl()
            for setter, value in [("OriUrl", r.ori_url), ("Url", r.url), ("UrlNo", r.url_no),
                                  ("StatusCode", r.status_code), ("HitNum", r.hit_num), ("CharSet", r.char_set),
                                  ("AbstractText", r.abstract_text), ("Author", r.author), ("Weight", r.weight),
                                  ("Description", r.description), ("FileSize", r.file_size), ("Title", r.title),
                                  ("Type", r.type), ("Layer", r.layer)]:
                getattr(c, "set" + setter)(value)
            if r.last_update_time is not None:
                seconds, nanos = divmod(r.last_update_time, 1_000_000_000)
                stamp = self.Timestamp(seconds * 1000)
                stamp.setNanos(nanos)
                c.setLastUpdateTime(stamp)
            if r.time_to_live is not None:
                c.setTimeToLive(self.Date(r.time_to_live))
            if r.url_references is not None:
                c.setUrlRefrences(self.Strings(r.url_references))
            return c

    return Java()


def test_python_bytes_read_by_java_give_every_field_and_rewrite_identically(java):
    records = sample_records(300)
    for record, data in zip(records, encode_many(records)):
        read = java.read(data)
        assert json.loads(str(java.to_json(read))) == to_dict(record)
        assert java.write(read) == data


def test_java_records_decode_in_python(java):
    records = sample_records(300, seed=11)
    java_bytes = [java.write(java.build(r)) for r in records]
    assert decode_many(java_bytes) == records
    assert encode_many(records) == java_bytes


def test_lone_surrogates_survive_the_trip(java):
    record = CrawlUrl(ori_url="\ud800 lone \udfff", url_references=["\udc00"])
    assert json.loads(str(java.to_json(java.read(encode(record))))) == to_dict(record)
    assert decode(encode(record)) == record


def test_layout_of_a_small_record():
    data = encode(CrawlUrl(ori_url="a", layer=1))
    assert data[0] == FORMAT_VERSION == 1
    # version, "a\0", null url, three zero ints, three null strings, ...
    assert data.hex().startswith("01" + "6100" + "ff00" + "80000000" * 3 + "ff00" * 3 + "80000000" + "ff00"
                                 + "80000000" + "00" + "00")
    assert data.hex().endswith("ff00" "ff00" "7fffffff" "80000001")


@settings(max_examples=300, deadline=None)
@given(st.builds(
    CrawlUrl,
    ori_url=st.none() | st.text(), url=st.none() | st.text(), url_no=st.integers(INT_MIN, INT_MAX),
    hit_num=st.integers(INT_MIN, INT_MAX), description=st.none() | st.text(),
    last_update_time=st.none() | st.integers(SAFE_MS_MIN * 1_000_000, LONG_MAX * 1_000_000),
    time_to_live=st.none() | st.integers(-(1 << 63), LONG_MAX),
    url_references=st.none() | st.lists(st.none() | st.text(), max_size=4), layer=st.integers(INT_MIN, INT_MAX)))
def test_round_trip(record):
    assert decode(encode(record)) == record


@pytest.mark.parametrize("field, value", [
    ("url_no", INT_MAX + 1), ("layer", INT_MIN - 1), ("weight", None), ("hit_num", 1.5),
    ("ori_url", 42), ("title", b"bytes"), ("url_references", "http://a/"), ("url_references", [1]),
    ("time_to_live", 1 << 63), ("last_update_time", "2020-01-01"),
])
def test_values_java_cannot_hold_are_refused_by_name(field, value):
    with pytest.raises(TupleFormatError, match=f"CrawlUrl.{field} needs"):
        encode(dataclasses.replace(CrawlUrl(), **{field: value}))


def test_unknown_versions_are_refused_not_misread():
    data = encode(CrawlUrl(ori_url="a"))
    for version in (0, FORMAT_VERSION + 1, 255):
        with pytest.raises(TupleFormatError, match=f"format version {version}"):
            decode(bytes([version]) + data[1:])


def test_java_refuses_unknown_versions_too(java):
    import jpype

    with pytest.raises(jpype.JException, match="format version 2"):
        java.read(bytes([2]) + encode(CrawlUrl())[1:])


DAMAGES = [lambda d: d[:-1], lambda d: d + b"\x00", lambda d: d[:3], lambda d: b"", lambda d: b"\x02" + d[1:],
           lambda d: d.replace(b"http", b"\xff\xff\xffp")]


@pytest.mark.parametrize("damage", DAMAGES)
def test_damaged_records_raise_bad_input(damage):
    with pytest.raises(TupleFormatError):
        decode(damage(encode(CrawlUrl(ori_url="http://a/", url_references=["b"]))))


@pytest.mark.parametrize("damage", DAMAGES)
def test_small_and_compiled_batches_decode_alike(damage):
    """Fewer than COMPILED_BATCH records are read in Python, more through the numba scan: the
    same records, and the same error for the same damage."""
    records = sample_records(COMPILED_BATCH + 1, seed=5)
    data = encode_many(records)
    assert decode_many(data[:COMPILED_BATCH - 1]) == records[:COMPILED_BATCH - 1]
    assert decode_many(data) == records
    damaged = data[:-1] + [damage(data[-1])]
    errors = []
    for batch in (damaged[-3:], damaged):
        with pytest.raises(TupleFormatError) as caught:
            decode_many(batch)
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


def test_decoding_a_few_records_does_not_load_numba():
    """A crawl's frontier decodes its records a few at a time: that must not cost it numba's ~70 MB."""
    probe = ("import sys; from pycrawler.records.crawl_url import CrawlUrl, decode, decode_many, encode; "
             "decode(encode(CrawlUrl(ori_url='http://a/'))); decode_many([encode(CrawlUrl())] * 3); "
             "print('numba' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout == "False\n"
