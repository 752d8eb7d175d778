"""SortedMap holds the StoredSortedMap contract: what pycrawler's mapping view writes, Java's
``com.sleepycat.collections.StoredSortedMap`` reads with the same bindings, and the reverse,
in the same order and with the same sub-maps; and it behaves as a Python MutableMapping.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pycrawler.errors import BadInput
from pycrawler.store import Environment, Transaction
from pycrawler.store.bindings import get_binding
from pycrawler.store.mapping import SortedMap

LONGS = st.integers(-(2**63), 2**63 - 1)
# JPype hands Java strings over as UTF-16, which lone surrogates would not survive
TEXTS = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
_names = (f"db{i}" for i in itertools.count())


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with Environment(tmp_path_factory.mktemp("mapping") / "env", create=True) as environment:
        yield environment


@pytest.fixture
def db(store):
    database = store.open_database(next(_names), create=True)
    yield database
    database.close()


@pytest.fixture(scope="module")
def java(store):
    import jpype

    return jpype


def java_map(jpype, db, key_binding: str, value_binding: str):
    """Java's own StoredSortedMap on the same database, with JE's binding classes."""
    classes = {name: jpype.JClass(get_binding(name).java_class) for name in (key_binding, value_binding)}
    collections = jpype.JClass("com.sleepycat.collections.StoredSortedMap")
    return collections(db.java, classes[key_binding](), classes[value_binding](), True)


def java_to_python(value):
    """A Java String or Long as its Python value."""
    return int(value) if hasattr(value, "longValue") else str(value)


def java_items(java_sorted_map) -> list[tuple]:
    return [(java_to_python(e.getKey()), java_to_python(e.getValue())) for e in java_sorted_map.entrySet()]


def boxed(jpype, value):
    return jpype.JClass("java.lang.Long").valueOf(value) if isinstance(value, int) else jpype.JString(value)


def je_order(items: dict, key_binding: str) -> list[tuple]:
    encode = get_binding(key_binding).encode
    return sorted(items.items(), key=lambda kv: encode(kv[0]))


# -- Python writes, Java reads -------------------------------------------------------------------

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(TEXTS, LONGS, max_size=40))
def test_java_reads_a_string_to_long_map_python_wrote(java, store, data):
    with store.open_database(next(_names), create=True) as database:
        SortedMap(database, "string", "long").update(data)
        assert java_items(java_map(java, database, "string", "long")) == je_order(data, "string")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(LONGS, TEXTS, max_size=40))
def test_java_reads_a_long_to_string_map_python_wrote_in_numeric_order(java, store, data):
    with store.open_database(next(_names), create=True) as database:
        SortedMap(database, "long", "string").update(data)
        assert java_items(java_map(java, database, "long", "string")) == sorted(data.items())


def test_java_sub_maps_of_a_python_map_match_python_sub_maps(java, db):
    ours = SortedMap(db, "long", "string")
    ours.update((n, f"v{n}") for n in range(-50, 50, 3))
    theirs = java_map(java, db, "long", "string")
    Long = java.JClass("java.lang.Long")
    assert java_items(theirs.subMap(Long(-10), True, Long(20), False)) == list(ours.sub_map(-10, 20).items())
    assert java_items(theirs.subMap(Long(-11), False, Long(22), True)) == \
        list(ours.sub_map(-11, 22, from_inclusive=False, to_inclusive=True).items())
    assert java_items(theirs.headMap(Long(-20))) == list(ours.head_map(-20).items())
    assert java_items(theirs.tailMap(Long(40), False)) == list(ours.tail_map(40, inclusive=False).items())
    assert (int(theirs.firstKey()), int(theirs.lastKey())) == (ours.first_key(), ours.last_key())


# -- Java writes, Python reads -------------------------------------------------------------------

@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(TEXTS, LONGS, max_size=40))
def test_python_reads_a_string_to_long_map_java_wrote(java, store, data):
    with store.open_database(next(_names), create=True) as database:
        theirs = java_map(java, database, "string", "long")
        for key, value in data.items():
            theirs.put(boxed(java, key), boxed(java, value))
        ours = SortedMap(database, "string", "long")
        assert list(ours.items()) == je_order(data, "string")
        assert list(reversed(ours.items())) == je_order(data, "string")[::-1]
        assert len(ours) == len(data) and all(ours[k] == v for k, v in data.items())


def test_python_reads_a_long_to_string_map_java_wrote(java, db):
    data = {n * 7919 % 1000 - 500: "x" * (n % 5) + str(n) for n in range(300)}
    data.update({-(2**63): "min", 2**63 - 1: "max", 0: "zero\x00\U0001F600"})
    theirs = java_map(java, db, "long", "string")
    for key, value in data.items():
        theirs.put(boxed(java, key), boxed(java, value))
    ours = SortedMap(db, "long", "string")
    assert list(ours.items()) == sorted(data.items())
    assert list(reversed(ours)) == sorted(data, reverse=True)
    assert (ours.first_key(), ours.last_key()) == (-(2**63), 2**63 - 1)
    assert list(ours.sub_map(-5, 5).items()) == [(k, v) for k, v in sorted(data.items()) if -5 <= k < 5]
    assert ours[0] == "zero\x00\U0001F600"


def test_each_side_sees_the_others_deletes_and_overwrites(java, db):
    ours = SortedMap(db, "string", "long")
    theirs = java_map(java, db, "string", "long")
    ours.update(a=1, b=2, c=3)
    theirs.remove(java.JString("b"))
    theirs.put(java.JString("c"), java.JClass("java.lang.Long").valueOf(-3))
    del ours["a"]
    assert dict(ours) == {"c": -3}
    assert java_items(theirs) == [("c", -3)]


# -- MutableMapping behaviour ---------------------------------------------------------------------

def test_mutable_mapping_protocol(db):
    m = SortedMap(db, "string", "long")
    m["b"], m["a"] = 2, 1
    assert m["a"] == 1 and "b" in m and "z" not in m and m.get("z", 9) == 9
    assert len(m) == 2 and list(m) == ["a", "b"] and list(m.values()) == [1, 2]
    assert m == {"a": 1, "b": 2}
    assert m.setdefault("c", 3) == 3 and m.setdefault("c", 4) == 3
    assert m.pop("c") == 3 and m.pop("c", None) is None
    assert m.popitem() == ("a", 1)
    with pytest.raises(KeyError):
        m["a"]
    with pytest.raises(KeyError):
        del m["a"]
    m.clear()
    assert len(m) == 0 and dict(m) == {}
    with pytest.raises(KeyError, match="empty"):
        m.first_key()


def test_update_takes_mappings_pairs_and_keywords_in_batches(db, monkeypatch):
    from pycrawler.store import mapping

    calls = []
    real_put_many = db.put_many
    monkeypatch.setattr(mapping, "UPDATE_BATCH", 100)
    monkeypatch.setattr(db, "put_many", lambda k, v, txn=None: calls.append(len(k)) or real_put_many(k, v, txn=txn))
    m = SortedMap(db, "long", "long")
    m.update({n: -n for n in range(250)})
    m.update([(1000, 1), (1001, 2)])
    assert calls == [100, 100, 50, 2]
    assert len(m) == 252 and m[249] == -249 and m[1001] == 2
    strings = SortedMap(db, "string", "long")
    strings.clear()
    strings.update({"x": 1}, y=2)
    assert dict(strings) == {"x": 1, "y": 2}


def test_sub_map_views_share_the_database_and_keep_to_their_range(db):
    m = SortedMap(db, "long", "string")
    m.update((n, str(n)) for n in range(10))
    middle = m.sub_map(3, 7)
    assert list(middle) == [3, 4, 5, 6] and len(middle) == 4
    assert 2 not in middle and middle.get(8) is None
    with pytest.raises(BadInput, match="outside the key range"):
        middle[8] = "eight"
    middle[5] = "five"
    assert m[5] == "five"
    assert list(middle.tail_map(5)) == [5, 6]  # a view of a view narrows, never widens
    assert list(middle.head_map(100)) == [3, 4, 5, 6]
    assert list(m.sub_map(7, 3)) == [] and len(m.sub_map(7, 3)) == 0
    middle.clear()
    assert list(m) == [0, 1, 2, 7, 8, 9]
    assert list(m.head_map(2, inclusive=True).values()) == ["0", "1", "2"]


def test_sorted_double_keys_order_numerically_including_signed_zero_and_infinities(db):
    m = SortedMap(db, "sorted_double", "boolean")
    keys = [3.5, -0.0, 0.0, float("-inf"), -1e300, 1e-300, float("inf")]
    m.update((k, k > 0) for k in keys)
    assert [repr(k) for k in m] == ["-inf", "-1e+300", "-0.0", "0.0", "1e-300", "3.5", "inf"]


def test_writes_in_an_aborted_transaction_vanish(store, db):
    with pytest.raises(RuntimeError):
        with Transaction(store) as txn:
            m = SortedMap(db, "string", "string", txn=txn)
            m.update({"a": "1"})
            m["b"] = "2"
            assert len(list(m.items())) == 2
            raise RuntimeError("abort")
    assert dict(SortedMap(db, "string", "string")) == {}


def test_a_value_in_another_format_is_reported_with_its_key(db):
    db.put(get_binding("string").encode("k"), b"\x01\x02")
    with pytest.raises(BadInput, match="value of key 6b00 is not a long"):
        SortedMap(db, "string", "long")["k"]
