"""Serial-bound values: JE's SerialBinding + StoredClassCatalog, decoded and encoded in Python.

Java writes the fixtures (org.pycrawler.bridge.fixtures, compiled into target/test-classes)
as Java programs do; Python reads them through pycrawler.store and decodes them without
Java's help. The other way round, Python writes a catalog and records that Java's
SerialBinding reads.
"""

from __future__ import annotations

import pickle
import random
from datetime import datetime, UTC
from decimal import Decimal
from uuid import UUID

import jpype
import pytest

from pycrawler.errors import BadInput
from pycrawler.store import Environment
from pycrawler.store.catalog import ClassCatalog, NoCatalog, catalog_decoder, next_class_id
from pycrawler.store.serial.decoder import NOT_SERIAL, SerialDecoder, decode_stream
from pycrawler.store.serial.encoder import (DATE_CLASS, STRING_ARRAY_CLASS, TIMESTAMP_CLASS, SerialEncoder,
                                            descriptor_bytes, java_class)
from pycrawler.store.serial.stream import BlockData, CatalogMissing, JavaObject, JavaTimestamp

FIXTURES = "org.pycrawler.bridge.fixtures."
UTC = UTC

# The seed book's CrawlUrl fields, in its order (the Java twin is fixtures.BookCrawlUrl).
BOOK_FIELDS = [
    ("oriUrl", "java.lang.String"), ("url", "java.lang.String"), ("urlNo", "int"), ("statusCode", "int"),
    ("hitNum", "int"), ("charSet", "java.lang.String"), ("abstractText", "java.lang.String"),
    ("author", "java.lang.String"), ("weight", "int"), ("description", "java.lang.String"),
    ("fileSize", "int"), ("lastUpdateTime", "java.sql.Timestamp"), ("timeToLive", "java.util.Date"),
    ("title", "java.lang.String"), ("type", "java.lang.String"), ("urlRefrences", "java.lang.String[]"),
    ("layer", "int"),
]
BOOK_UID = 7931672194843948629


def java_fixtures():
    return jpype.JClass(FIXTURES + "SerialFixtures")


@pytest.fixture(scope="module")
def java_store(tmp_path_factory):
    """An environment holding Java's fixtures (catalog ``java_class_catalog``, records in
    ``fixtures``), and the records decoded in Python, by key."""
    with Environment(tmp_path_factory.mktemp("serial") / "env", create=True) as env:
        written = java_fixtures().writeFixtures(env.java, "java_class_catalog", "fixtures")
        catalog = ClassCatalog(env.open_database("java_class_catalog"))
        decoder = SerialDecoder(catalog)
        records = dict(decoder.decode_record(k, v) for k, v in env.open_database("fixtures").items())
        assert len(records) == written
        yield env, catalog, records


@pytest.fixture
def everything(java_store):
    return java_store[2]["everything"]


# -- decoding what Java wrote -----------------------------------------------------------------
def test_objects_decode_to_dicts_with_their_class_name(everything):
    assert isinstance(everything, JavaObject)
    assert everything["@class"] == everything.class_name == FIXTURES + "Everything"


def test_primitive_fields_of_every_type(everything):
    assert {k: everything[k] for k in ("flag", "tiny", "letter", "small", "number", "big", "ratio", "real")} == {
        "flag": True, "tiny": -7, "letter": "\u00e9", "small": -300, "number": 123456789,
        "big": -1234567890123, "ratio": 1.5, "real": -2.25}


def test_strings_including_nul_supplementary_and_long_strings(everything):
    assert everything["text"] == "h\u00e9llo \x00 w\u00f6rld \U0001F600"
    assert everything["empty"] == ""
    assert everything["nothing"] is None
    assert everything["huge"] == "x" * 70000  # over 65535 bytes: TC_LONGSTRING


def test_nested_objects_and_shared_references(everything):
    assert everything["inner"] == {"@class": FIXTURES + "Inner", "label": "inner", "number": 5}
    assert everything["sameInner"] is everything["inner"]


def test_arrays(everything):
    assert everything["ints"] == [1, -2, 3]
    assert everything["longs"] == [-2**63, 0, 2**63 - 1]
    assert everything["doubles"] == [0.5, -1.0]
    assert everything["floats"] == [0.25]
    assert everything["shorts"] == [-1, 2]
    assert everything["bytes"] == b"\x00\x01\xff"
    assert everything["chars"] == ["a", "b"]
    assert everything["bools"] == [True, False]
    assert everything["strings"] == ["a", None, "c"]
    assert everything["mixed"] == ["x", 1, None, {"@class": FIXTURES + "Inner", "label": "in array", "number": 6}]
    assert everything["grid"] == [[1, 2], [3]]


def test_dates_and_timestamps_are_utc_datetimes(everything):
    assert everything["date"] == datetime(2009, 2, 13, 23, 31, 30, 123000, tzinfo=UTC)
    stamp = everything["stamp"]
    assert isinstance(stamp, JavaTimestamp)
    assert stamp == datetime(2009, 2, 13, 23, 31, 30, 123456, tzinfo=UTC)
    assert stamp.nanos == 123456789
    assert stamp.isoformat() == "2009-02-13T23:31:30.123456789+00:00"
    assert pickle.loads(pickle.dumps(stamp)).nanos == 123456789
    before = everything["beforeEpoch"]  # new Timestamp(-1500)
    assert before == datetime(1969, 12, 31, 23, 59, 58, 500000, tzinfo=UTC) and before.nanos == 500_000_000


def test_collections_decode_to_lists_dicts_and_sets(everything):
    assert everything["arrayList"] == ["one", "two"]
    assert everything["linkedList"] == [1, 2, 3]
    assert everything["vector"] == ["v"]
    assert everything["asList"] == ["p", "q"]
    assert everything["unmodifiable"] == ["u"]
    assert everything["hashMap"] == {"a": 1, "b": 2}
    assert list(everything["linkedHashMap"].items()) == [("first", 1), ("second", 2), ("third", 3)]
    assert list(everything["treeMap"].items()) == [("x", 1), ("y", 2)]
    assert everything["hashtable"] == {"k": "v"}
    assert everything["synchronizedMap"] == {"s": "m"}
    assert everything["hashSet"] == {"s1", "s2"}
    assert everything["linkedHashSet"] == {"z", "a"}
    assert list(everything["linkedHashSet"]) == ["z", "a"]  # a Java set iterates in the order Java did
    assert everything["treeSet"] == {1, 2, 3}
    assert everything["nested"] == {"list": [{"@class": FIXTURES + "Inner", "label": "n", "number": 1}]}


def test_enums_boxed_primitives_and_big_numbers(everything):
    assert everything["color"] == "GREEN"
    assert everything["colors"] == {"RED", "BLUE"}
    assert (everything["boxedInt"], everything["boxedLong"], everything["boxedDouble"]) == (42, 43, 0.125)
    assert everything["boxedBool"] is False
    assert everything["boxedChar"] == "q"
    assert everything["bigInteger"] == -123456789012345678901234567890
    assert everything["bigDecimal"] == Decimal("3.14159")


def test_cycles_and_self_references(java_store):
    a = java_store[2]["cycle"]
    b = a["next"]
    assert (a["name"], b["name"]) == ("a", "b")
    assert b["next"] is a and a["self"] is a
    assert a["selfList"][0] is a["selfList"] and a["selfList"][1] is b
    assert a["selfMap"]["me"] is a["selfMap"]


def test_write_object_data_is_kept_raw_after_the_fields(java_store):
    custom = java_store[2]["custom"]
    assert custom["kept"] == 7 and "secret" not in custom  # transient: never written
    block, inner, tail = custom["@data"]
    assert isinstance(block, BlockData) and block == b"\x00\x00\x00\x2a\x00\x05extra"  # writeInt, writeUTF
    assert inner == {"@class": FIXTURES + "Inner", "label": "written by writeObject", "number": 3}
    assert tail == b"\xff" * 8
    # The data is also found by the class that wrote it, whatever the hierarchy's other writers.
    assert custom.written_by(FIXTURES + "Custom") is custom["@data"]
    assert custom.written_by("java.lang.Object") is None


def test_externalizable_data_is_kept_raw(java_store):
    external = java_store[2]["external"]
    assert external == {"@class": FIXTURES + "External", "@data": [b"\x01\x02\x03\x04\x00\x03ext"]}
    assert external.written_by(FIXTURES + "External") == [b"\x01\x02\x03\x04\x00\x03ext"]


def test_a_field_shadowed_by_a_subclass_keeps_the_superclass_value_qualified(java_store):
    assert java_store[2]["derived"] == {"@class": FIXTURES + "Derived", "id": 1, "name": "derived name",
                                        FIXTURES + "Base.name": "base name", "extra": 0.5}


def test_top_level_values(java_store):
    records = java_store[2]
    assert records["string"] == "just a string"
    assert records["integer"] == 7
    assert records["list"] == ["top", "level"]
    assert records["null"] is None
    assert records["color"] == "BLUE"


def test_catalog_records_follow_stored_class_catalog_layout(java_store):
    env, catalog, _ = java_store
    raw = dict(env.open_database("java_class_catalog").items())
    ids = catalog.class_ids()
    assert raw[b"\x00"] == catalog.last_class_id() == max(ids.values(), key=lambda i: int.from_bytes(i, "big"))
    everything_id = ids[FIXTURES + "Everything"]
    assert everything_id == b"\x01"  # the first class written gets ID 1
    assert raw[b"\x02" + (FIXTURES + "Everything").encode()] == b"\x01" + everything_id
    assert catalog.descriptor(everything_id).name == FIXTURES + "Everything"
    assert len(raw) == 1 + 2 * len(ids)


def test_string_keys_are_serial_bound_strings(java_store):
    env, catalog, _ = java_store
    keys = set(env.open_database("fixtures").keys())
    assert SerialEncoder(catalog).encode_string("everything") in keys
    assert SerialEncoder(catalog).encode_string("everything") == b"\x74\x00\x0aeverything"


def test_classes_unknown_to_the_jvm_decode_from_their_descriptor(env):
    """Nothing of the record's class is loaded: a class no JVM has still decodes."""
    catalog = ClassCatalog(env.open_database("catalog", create=True))
    nowhere = java_class("com.example.Nowhere", 1, [("when", "java.util.Date"), ("n", "long"), ("tags", "java.lang.String[]")])
    value = SerialEncoder(catalog).encode_object(nowhere, {"n": -1, "tags": ["t"]})
    assert SerialDecoder(catalog).decode(value) == {"@class": "com.example.Nowhere", "n": -1, "when": None,
                                                    "tags": ["t"]}
    with pytest.raises(TypeError, match="not found"):
        jpype.JClass("com.example.Nowhere")


# -- encoding for Java readers ----------------------------------------------------------------
def test_java_class_orders_fields_like_object_stream_class():
    desc = java_class("CrawlUrl", BOOK_UID, BOOK_FIELDS)
    assert [f.name for f in desc.fields] == [
        "fileSize", "hitNum", "layer", "statusCode", "urlNo", "weight",  # primitives, by name
        "abstractText", "author", "charSet", "description", "lastUpdateTime", "oriUrl", "timeToLive",
        "title", "type", "url", "urlRefrences"]
    assert desc.fields[-1].signature == "[Ljava/lang/String;"


@pytest.mark.parametrize("desc", [
    java_class(FIXTURES + "BookCrawlUrl", BOOK_UID, BOOK_FIELDS), DATE_CLASS, TIMESTAMP_CLASS, STRING_ARRAY_CLASS,
], ids=lambda d: d.name)
def test_descriptors_are_byte_for_byte_what_java_stores(desc):
    assert descriptor_bytes(desc) == bytes(java_fixtures().descriptor(desc.name))
    assert decode_stream(descriptor_bytes(desc)).same_format(desc)


def book_values(**changes):
    values = {
        "oriUrl": "http://www.163.com/", "url": "http://10.0.0.1/", "urlNo": 17, "statusCode": 200, "hitNum": 3,
        "charSet": "GBK", "abstractText": "\u6458\u8981", "author": None, "weight": -5, "description": "desc",
        "fileSize": 1 << 20, "lastUpdateTime": JavaTimestamp(1234567890, 987654321),
        "timeToLive": datetime(2011, 3, 13, 7, 6, 40, 123000, tzinfo=UTC), "title": "title", "type": "text/html",
        "urlRefrences": ["http://a/", None, "http://b/"], "layer": 2,
    }
    values.update(changes)
    return values


def test_python_encoding_is_byte_for_byte_javas_and_reuses_the_catalog(env):
    """Python writes the catalog first; Java then writes the same object through it: same
    bytes, and Java adds no class (its descriptors equal the stored ones)."""
    catalog = ClassCatalog(env.open_database("java_class_catalog", create=True))
    desc = java_class(FIXTURES + "BookCrawlUrl", BOOK_UID, BOOK_FIELDS)
    ours = SerialEncoder(catalog).encode_object(desc, book_values())
    before = (catalog.class_ids(), catalog.last_class_id())
    assert before[1] == b"\x04"  # BookCrawlUrl, Timestamp, Date, String[]
    theirs = bytes(java_fixtures().encodeSample(env.java, "java_class_catalog"))
    assert ours == theirs
    assert (catalog.class_ids(), catalog.last_class_id()) == before


def test_java_reads_what_python_wrote(env):
    catalog = ClassCatalog(env.open_database("java_class_catalog", create=True))
    encoder = SerialEncoder(catalog)
    desc = java_class(FIXTURES + "BookCrawlUrl", BOOK_UID, BOOK_FIELDS)
    records = {
        "http://www.163.com/": book_values(),
        "empty": {},
        "odd \x00 \U0001F600": book_values(title="\x00\U0001F600\u00e9", urlRefrences=[], layer=-1,
                                           lastUpdateTime=datetime(1969, 12, 31, 23, 59, 58, 500000),  # naive: UTC
                                           timeToLive=None),
    }
    db = env.open_database("URL", create=True)
    db.put_many([encoder.encode_string(k) for k in records], [encoder.encode_object(desc, v) for v in records.values()])
    described = dict(str(line).split("\t") for line in java_fixtures().readBookCrawlUrls(env.java, "java_class_catalog", "URL"))
    assert described == {
        "http://www.163.com/": "http://www.163.com/|http://10.0.0.1/|17|200|3|GBK|\u6458\u8981|null|-5|desc|1048576|"
                               "1234567890987ms987654321ns|1300000000123ms|title|text/html|[http://a/, null, http://b/]|2",
        "empty": "null|null|0|0|0|null|null|null|0|null|0|null|null|null|null|null|0",
        "odd \x00 \U0001F600": "http://www.163.com/|http://10.0.0.1/|17|200|3|GBK|\u6458\u8981|null|-5|desc|1048576|"
                               "-1500ms500000000ns|null|\x00\U0001F600\u00e9|text/html|[]|-1",
    }
    decoder = SerialDecoder(ClassCatalog(env.open_database("java_class_catalog")))
    decoded = dict(decoder.decode_record(k, v) for k, v in db.items())
    assert decoded["http://www.163.com/"] == {"@class": FIXTURES + "BookCrawlUrl", **book_values()}
    assert decoded["http://www.163.com/"]["lastUpdateTime"].nanos == 987654321


def test_a_changed_descriptor_gets_a_new_class_id_as_in_java(env):
    catalog = ClassCatalog(env.open_database("catalog", create=True))
    first = catalog.register(java_class("Thing", 1, [("a", "int")]))
    assert catalog.register(java_class("Thing", 1, [("a", "int")])) == first
    second = catalog.register(java_class("Thing", 1, [("a", "int"), ("b", "long")]))
    assert (first, second) == (b"\x01", b"\x02")
    assert catalog.class_id("Thing") == second
    assert [f.name for f in catalog.descriptor(first).fields] == ["a"]  # old values still decode


def test_class_ids_count_like_java_big_integers():
    assert next_class_id(b"\x00") == b"\x01"
    assert next_class_id(b"\x7f") == b"\x00\x80"
    assert next_class_id(b"\x00\xff") == b"\x01\x00"


@pytest.mark.parametrize("values, complaint", [
    ({"urlNo": 2**31}, "32-bit"), ({"urlNo": "1"}, "32-bit"), ({"title": 5}, "cannot hold"),
    ({"urlRefrences": "http://a/"}, "cannot hold"), ({"nosuch": 1}, "no field nosuch"),
])
def test_the_encoder_refuses_values_java_could_not_hold(env, values, complaint):
    encoder = SerialEncoder(ClassCatalog(env.open_database("catalog", create=True)))
    with pytest.raises(BadInput, match=complaint):
        encoder.encode_object(java_class("CrawlUrl", BOOK_UID, BOOK_FIELDS), values)


# -- bad input --------------------------------------------------------------------------------
def decode_all_prefixes_and_flips(decoder, value: bytes, flips: int):
    for end in range(len(value)):
        with pytest.raises(BadInput):
            decoder.decode(value[:end])
    rng = random.Random(1)
    for _ in range(flips):
        corrupt = bytearray(value)
        corrupt[rng.randrange(len(value))] = rng.randrange(256)
        try:
            decoder.decode(bytes(corrupt))
        except BadInput:
            pass  # any other exception fails the test


def test_truncated_or_corrupt_values_raise_bad_input(java_store):
    env, catalog, _ = java_store
    decoder = SerialDecoder(catalog)
    raw = {decoder.decode(k): v for k, v in env.open_database("fixtures").items()}
    for key in ("cycle", "custom", "derived", "external", "list"):
        decode_all_prefixes_and_flips(decoder, raw[key], flips=200)


@pytest.mark.parametrize("value, message", [
    (b"", "truncated"),
    (b"\x73\x72\x01\x7f", "no class with ID 7f"),
    (b"\x55", "unknown type code 0x55"),
    (b"\x74\x00\x01ab", "1 bytes after the value"),
    (b"\x71\x00\x7e\x00\x00", "not yet read"),
    (b"\xac\xed\x00\x05\x74\x00\x00", "unknown type code 0xac"),  # SerialBinding strips the header
])
def test_bad_values_say_what_is_wrong(java_store, value, message):
    with pytest.raises(BadInput, match=message):
        SerialDecoder(java_store[1]).decode(value)


def test_a_stream_without_header_is_refused():
    with pytest.raises(BadInput, match="no Java serialization header"):
        decode_stream(b"\x74\x00\x00")


def test_the_guessing_form_says_not_serial_instead_of_raising(java_store):
    env, _, _ = java_store
    decoder = catalog_decoder(env)
    assert decoder(b"\x74\x00\x02hi") == "hi"
    for not_serial in (b"", b"hi\x00", b"p\x00", b"\x00\x00\x00\x01"):  # e.g. tuple-bound strings, ints
        assert decoder(not_serial) is decoder.NOT_SERIAL is NOT_SERIAL


def test_without_a_catalog_only_bytes_whose_whole_structure_reads_are_called_serialized():
    """0x72 (``r``) is TC_CLASSDESC: text beginning "re" (seen in a real store) starts like a
    class descriptor, but its structure fails further on, so it is not serial-bound."""
    decoder = SerialDecoder(NoCatalog())
    true_of_class_01 = bytes.fromhex("73720101787001")  # a Boolean, its class ID 01 in a catalog not here
    with pytest.raises(CatalogMissing, match="class ID 01"):
        decoder.decode(true_of_class_01)
    for text in (b"redirect_http://news.163.com/", b"re", b"sr\x01\x01", "re文本".encode()):
        assert decoder(text) is NOT_SERIAL
        with pytest.raises(BadInput) as raised:
            decoder.decode(text)
        assert not isinstance(raised.value, CatalogMissing)
    assert decoder(b"\x74\x00\x02re") == "re"  # a serial-bound String needs no catalog


def test_a_class_catalog_is_found_by_its_content_whatever_its_name(env):
    page = java_class("Page", 1, [("url", "java.lang.String")])
    encoder = SerialEncoder(ClassCatalog(env.open_database("db_catalog.db", create=True)))
    value = encoder.encode_object(page, {"url": "http://a/"})
    env.open_database("counts", create=True).put_many([b"\x00", b"\x01\x01"], [b"\x05", b"not a descriptor"])
    assert ClassCatalog.find(env).db.name == "db_catalog.db"
    assert catalog_decoder(env).decode(value) == {"@class": "Page", "url": "http://a/"}
    assert catalog_decoder(env, "db_catalog.db").decode(value)["url"] == "http://a/"
    with pytest.raises(BadInput, match="'counts' is not a class catalog"):
        catalog_decoder(env, "counts")


def test_an_environment_without_a_catalog_has_none_whatever_its_databases_hold(env):
    env.open_database("counts", create=True).put_many([b"\x00", b"\x01\x01"], [b"\x05", b"not a descriptor"])
    env.open_database("empty", create=True)
    assert ClassCatalog.find(env) is None and catalog_decoder(env) is None


def test_rarer_jdk_classes_get_their_python_shape(java_store):
    more = dict(java_store[2]["more"])
    assert more.pop("@class") == FIXTURES + "MoreJdkClasses"
    assert more == {
        "listOf": ["l1", "l2"], "setOf": {"s1"}, "mapOf": {"m": 1},
        "emptyList": [], "emptySet": set(), "emptyMap": {},
        "singletonList": ["one"], "singleton": {"only"}, "singletonMap": {"k": "v"},
        "unmodifiableSet": {"u"}, "checkedList": [], "deque": [1, 2], "queue": [5], "cowList": ["c"], "cowSet": {"cs"},
        "properties": {"key": "value"}, "identity": {"i": 9}, "enumMap": {"RED": "r"}, "concurrent": {"c": 3},
        "skipListMap": {"a": 1, "b": 2}, "skipListSet": {"x"}, "builder": "built", "buffer": "buffered",
        "uuid": UUID("123e4567-e89b-12d3-a456-426614174000"),
    }
