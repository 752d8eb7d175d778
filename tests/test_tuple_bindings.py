"""The tuple formats of pycrawler.store.tuple are byte for byte those of JE's own classes.

Every field kind is checked both ways against the JE jar on the class path: JE's binding
class encodes a batch and Python decodes it, Python encodes and JE's binding decodes, and the
bytes of both encoders are compared. The Java side runs in batches through the test helper
``org.pycrawler.bridge.TupleProbe`` (bridge/src/test/java), which carries values as numbers
(floats as raw IEEE bits) and UTF-16 code units, so NaN payloads and lone surrogates cross
the boundary untouched.
"""

from __future__ import annotations

import math
import random
import struct
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycrawler.errors import BadInput
from pycrawler.store.bindings import binding_names, get_binding
from pycrawler.store.packing import pack, unpack
from pycrawler.store.tuple import (FIELD_KINDS, NULL_STRING, TupleFormat, TupleFormatError, TupleInput,
                                   TupleOutput, decode_field, encode_field)

SEED = 20240611
TEXT_KINDS = {"string", "big_integer"}
FLOAT_KINDS = {"float", "sorted_float"}
DOUBLE_KINDS = {"double", "sorted_double"}
INT_WIDTHS = {"long": 64, "int": 32, "short": 16, "byte": 8, "packed_int": 32, "packed_long": 64}
FIXED_WIDTH = {"long": 8, "int": 4, "short": 2, "byte": 1, "char": 2, "boolean": 1, "float": 4,
               "double": 8, "sorted_float": 4, "sorted_double": 8}


@pytest.fixture(scope="module")
def jpype_module():
    from pycrawler import jvm

    jvm.start()
    import jpype

    return jpype


@pytest.fixture(scope="module")
def probe(jpype_module):
    try:
        return jpype_module.JClass("org.pycrawler.bridge.TupleProbe")
    except TypeError:
        pytest.fail("org.pycrawler.bridge.TupleProbe is not compiled: run `mvn -o test-compile` (scripts/test does)")


# -- sample values -------------------------------------------------------------------------------

def _float_from_bits(bits: int) -> float:
    return struct.unpack(">f", struct.pack(">I", bits & 0xFFFFFFFF))[0]


def _double_from_bits(bits: int) -> float:
    return struct.unpack(">d", struct.pack(">Q", bits & (2**64 - 1)))[0]


def _integers(rng: random.Random, bits: int, count: int) -> list[int]:
    """Edges (0, ±1, the packed-int boundaries, every power of two and its neighbours, the
    extremes) and random values of every magnitude."""
    low, high = -(1 << bits - 1), (1 << bits - 1) - 1
    edges = {0, 1, -1, 119, 120, -119, -120, 375, 376, -375, -376, low, high}
    for k in range(bits):
        edges |= {(1 << k) + d for d in (-1, 0, 1)} | {-(1 << k) + d for d in (-1, 0, 1)}
    edges = {v for v in edges if low <= v <= high}
    randoms = [rng.choice((1, -1)) * rng.getrandbits(rng.randint(1, bits - 1)) for _ in range(count)]
    return sorted(edges) + randoms


def _float_bits(rng: random.Random, width: int, count: int) -> list[int]:
    """IEEE bit patterns: zeros, infinities, NaNs with payloads, subnormals, extremes, random."""
    if width == 32:
        edges = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF,
                 0xFFFFFFFF, 1, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000]
    else:
        edges = [0, 1 << 63, 0x7FF0 << 48, 0xFFF0 << 48, 0x7FF8 << 48, 0xFFF8 << 48, (0x7FF0 << 48) | 1,
                 2**64 - 1, 1, (1 << 52) - 1, 1 << 52, 0x7FEFFFFFFFFFFFFF, 0x3FF0 << 48, 0xBFF0 << 48]
    return edges + [rng.getrandbits(width) for _ in range(count)]


def _code_units(rng: random.Random, count: int) -> list[bytes]:
    """UTF-16BE strings mixing ASCII, NUL, Latin, the rest of the BMP, proper surrogate pairs
    and lone surrogates; the empty string first."""
    pools = [(1, 0x7F), (0, 0), (0x80, 0x7FF), (0x800, 0xD7FF), (0xE000, 0xFFFF), (0xD800, 0xDFFF)]
    strings = [b""]
    for _ in range(count):
        units = []
        for _ in range(rng.randint(0, 12)):
            if rng.random() < 0.15:
                cp = rng.randint(0x10000, 0x10FFFF) - 0x10000
                units += [0xD800 | cp >> 10, 0xDC00 | cp & 0x3FF]
            else:
                low, high = rng.choice(pools)
                units.append(rng.randint(low, high))
        strings.append(struct.pack(f">{len(units)}H", *units))
    return strings


@cache
def _samples(kind: str) -> tuple:
    """A few thousand values of ``kind`` (every value of the 16-bit kinds), always the same."""
    return tuple(_generate(kind))


def _generate(kind: str) -> list:
    rng = random.Random(f"{SEED}-{kind}")
    if kind in INT_WIDTHS:
        bits = INT_WIDTHS[kind]
        return list(range(-(1 << bits - 1), 1 << bits - 1)) if bits <= 16 else _integers(rng, bits, 3000)
    if kind == "char":
        return [chr(unit) for unit in range(0x10000)]
    if kind == "boolean":
        return [False, True]
    if kind in FLOAT_KINDS:
        return [_float_from_bits(b) for b in _float_bits(rng, 32, 3000)]
    if kind in DOUBLE_KINDS:
        return [_double_from_bits(b) for b in _float_bits(rng, 64, 3000)]
    if kind == "string":
        return [units.decode("utf-16-be", "surrogatepass") for units in _code_units(rng, 3000)]
    if kind == "big_integer":
        return _integers(rng, 64, 500) + [rng.choice((1, -1)) * rng.getrandbits(rng.randint(64, 3000))
                                          for _ in range(1000)]
    raise AssertionError(kind)


JAVA_KINDS = ["string", "long", "int", "short", "byte", "char", "boolean", "float", "double",
              "sorted_float", "sorted_double", "big_integer", "packed_int", "packed_long"]


# -- the neutral form the Java helper speaks ------------------------------------------------------

def _signed64(value: int) -> int:
    return value - (1 << 64) if value >> 63 else value


def _to_number(kind: str, value) -> int:
    if kind in FLOAT_KINDS:
        return struct.unpack(">i", struct.pack(">f", value))[0]
    if kind in DOUBLE_KINDS:
        return struct.unpack(">q", struct.pack(">d", value))[0]
    if kind == "char":
        return ord(value)
    return int(value)


def _from_number(kind: str, number: int):
    if kind in FLOAT_KINDS:
        return _float_from_bits(number)
    if kind in DOUBLE_KINDS:
        return _double_from_bits(number)
    if kind == "char":
        return chr(number)
    if kind == "boolean":
        return bool(number)
    return number


def _to_text(kind: str, value) -> bytes:
    return (value if kind == "string" else str(value)).encode("utf-16-be", "surrogatepass")


def _java_arrays(jpype, numbers: list[int], texts: list[bytes]):
    units = np.frombuffer(b"".join(texts), dtype=">u2").astype(np.uint16)
    offsets = np.zeros(len(texts) + 1, dtype=np.int32)
    offsets[1:] = np.cumsum([len(t) // 2 for t in texts], dtype=np.int64)
    return (jpype.JArray(jpype.JLong)(np.array(numbers, dtype=np.int64)),
            jpype.JArray(jpype.JChar)(units), jpype.JArray(jpype.JInt)(offsets))


def _to_java(jpype, kinds: list[str], values: list):
    numbers = [_to_number(k, v) for k, v in zip(kinds, values) if k not in TEXT_KINDS]
    texts = [_to_text(k, v) for k, v in zip(kinds, values) if k in TEXT_KINDS]
    return _java_arrays(jpype, numbers, texts)


def _from_java(kinds: list[str], java_values) -> list:
    numbers = iter(np.asarray(java_values.numbers, dtype=np.int64).tolist())
    units = np.asarray(java_values.text, dtype=np.uint16).astype(">u2").tobytes()
    offsets = np.asarray(java_values.textOffsets).tolist()
    texts = iter(units[2 * a:2 * b].decode("utf-16-be", "surrogatepass") for a, b in zip(offsets, offsets[1:]))
    return [(next(texts) if k == "string" else int(next(texts))) if k in TEXT_KINDS else _from_number(k, next(numbers))
            for k in kinds]


def _same(kind: str, a, b) -> bool:
    """Equal as Java values: floats by bits (any NaN alike), strings by UTF-16 code units
    (a Python str holding the two halves of a surrogate pair is the same Java string as one
    holding the character)."""
    if kind == "string" and isinstance(a, str) and isinstance(b, str):
        return a.encode("utf-16-be", "surrogatepass") == b.encode("utf-16-be", "surrogatepass")
    if kind in FLOAT_KINDS | DOUBLE_KINDS:
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b and type(a) is type(b)


def _java_packed(jpype, entries: list[bytes]):
    data, offsets = pack(entries)
    return jpype.JArray(jpype.JByte)(data), jpype.JArray(jpype.JInt)(offsets)


# -- one value per entry, both directions ---------------------------------------------------------

@pytest.mark.parametrize("kind", JAVA_KINDS)
def test_python_writes_the_bytes_je_writes(jpype_module, probe, kind):
    values = _samples(kind)
    java = probe.encodeEach(kind, *_to_java(jpype_module, [kind] * len(values), values))
    java_entries = unpack(java.data, java.offsets)
    python_entries = [encode_field(kind, v) for v in values]
    differing = [(v, p.hex(), j.hex()) for v, p, j in zip(values, python_entries, java_entries) if p != j]
    assert len(java_entries) == len(values)
    assert differing[:5] == []


@pytest.mark.parametrize("kind", JAVA_KINDS)
def test_python_reads_what_je_writes(jpype_module, probe, kind):
    values = _samples(kind)
    java = probe.encodeEach(kind, *_to_java(jpype_module, [kind] * len(values), values))
    decoded = [decode_field(kind, entry) for entry in unpack(java.data, java.offsets)]
    wrong = [(v, d) for v, d in zip(values, decoded) if not _same(kind, _je_rounded(kind, v), d)]
    assert wrong[:5] == []


@pytest.mark.parametrize("kind", JAVA_KINDS)
def test_je_reads_what_python_writes(jpype_module, probe, kind):
    values = _samples(kind)
    java = probe.decodeEach(kind, *_java_packed(jpype_module, [encode_field(kind, v) for v in values]))
    decoded = _from_java([kind] * len(values), java)
    wrong = [(v, d) for v, d in zip(values, decoded) if not _same(kind, _je_rounded(kind, v), d)]
    assert len(decoded) == len(values)
    assert wrong[:5] == []


def _je_rounded(kind: str, value):
    """What a value reads back as: JE writes every NaN as the canonical NaN."""
    if kind in FLOAT_KINDS | DOUBLE_KINDS and math.isnan(value):
        return math.nan
    return value


@pytest.mark.parametrize("kind", sorted(FIXED_WIDTH))
def test_any_bytes_of_a_fixed_width_field_read_as_je_reads_them(jpype_module, probe, kind):
    rng = random.Random(f"{SEED}-raw-{kind}")
    width = FIXED_WIDTH[kind]
    entries = [bytes(rng.getrandbits(8) for _ in range(width)) for _ in range(2000)]
    java = _from_java([kind] * len(entries), probe.decodeEach(kind, *_java_packed(jpype_module, entries)))
    wrong = [(e.hex(), j) for e, j in zip(entries, java) if not _same(kind, decode_field(kind, e), j)]
    assert wrong[:5] == []


# -- strings: the corners of JE's UTF -----------------------------------------------------------

def test_null_string_is_ff_00_both_ways(jpype_module):
    binding = jpype_module.JClass("com.sleepycat.bind.tuple.StringBinding")
    entry = jpype_module.JClass("com.sleepycat.je.DatabaseEntry")()
    binding.stringToEntry(None, entry)
    assert bytes(entry.getData()) == NULL_STRING == encode_field("string", None)
    assert decode_field("string", NULL_STRING) is None


def test_string_encoding_corners():
    assert encode_field("string", "") == b"\x00"
    assert encode_field("string", "a\x00b") == b"a\xc0\x80b\x00"
    assert encode_field("string", "\U0001F600") == bytes.fromhex("eda0bd edb880 00")  # two surrogates
    assert encode_field("string", "\ud800") == bytes.fromhex("eda080 00")  # a lone surrogate
    assert decode_field("string", bytes.fromhex("eda0bd edb880 00")) == "\U0001F600"


@pytest.mark.parametrize("entry", ["c18100", "e0808000", "c08000", "e081a100", "c280e0a0a000"])
def test_overlong_forms_java_tolerates_decode_alike(jpype_module, entry):
    data = bytes.fromhex(entry)
    binding = jpype_module.JClass("com.sleepycat.bind.tuple.StringBinding")
    entry_object = jpype_module.JClass("com.sleepycat.je.DatabaseEntry")(jpype_module.JArray(jpype_module.JByte)(data))
    java = bytes(str(binding.entryToString(entry_object)).encode("utf-16-be", "surrogatepass"))
    assert decode_field("string", data).encode("utf-16-be", "surrogatepass") == java


@pytest.mark.parametrize("entry", ["f09f988000", "8000", "c300", "e0a000", "ff4100", "c3c3a900"])
def test_utf_java_rejects_is_rejected(jpype_module, entry):
    data = bytes.fromhex(entry)
    binding = jpype_module.JClass("com.sleepycat.bind.tuple.StringBinding")
    entry_object = jpype_module.JClass("com.sleepycat.je.DatabaseEntry")(jpype_module.JArray(jpype_module.JByte)(data))
    with pytest.raises(jpype_module.JException):
        binding.entryToString(entry_object)
    with pytest.raises(TupleFormatError):
        decode_field("string", data)


def test_string_without_terminator_is_rejected():
    with pytest.raises(TupleFormatError, match="terminating zero"):
        decode_field("string", b"abc")


# -- several fields in one record ----------------------------------------------------------------

def _field_values(kind: str):
    if kind in INT_WIDTHS:
        bits = INT_WIDTHS[kind]
        return st.integers(-(1 << bits - 1), (1 << bits - 1) - 1)
    unsigned = {"unsigned_byte": 8, "unsigned_short": 16, "unsigned_int": 32}
    if kind in unsigned:
        return st.integers(0, (1 << unsigned[kind]) - 1)
    if kind in FLOAT_KINDS:
        return st.floats(width=32)
    if kind in DOUBLE_KINDS:
        return st.floats()
    if kind == "char":
        return st.integers(0, 0xFFFF).map(chr)
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        # any character, lone surrogates included (st.text leaves those out)
        return st.lists(st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr)), max_size=20).map("".join)
    if kind == "big_integer":
        return st.integers(-(1 << 300), 1 << 300)
    raise AssertionError(kind)


records = st.lists(st.sampled_from(sorted(FIELD_KINDS)), max_size=12).flatmap(
    lambda kinds: st.tuples(st.just(kinds), st.tuples(*map(_field_values, kinds))))


@settings(max_examples=200, deadline=None)
@given(records)
def test_multi_field_records_match_tuple_output_and_input(jpype_module, probe, record):
    kinds, values = record
    java_kinds = jpype_module.JArray(jpype_module.JString)(kinds)
    python = TupleFormat(*kinds).pack(values)
    java = bytes(probe.writeFields(java_kinds, *_to_java(jpype_module, kinds, values)))
    assert python == java
    read_by_java = _from_java(kinds, probe.readFields(java_kinds, jpype_module.JArray(jpype_module.JByte)(python)))
    read_by_python = TupleFormat(*kinds).unpack(java)
    for kind, value, by_java, by_python in zip(kinds, values, read_by_java, read_by_python):
        assert _same(kind, _je_rounded(kind, value), by_java)
        assert _same(kind, _je_rounded(kind, value), by_python)


def test_tuple_output_chains_like_java_and_input_reads_in_order():
    data = (TupleOutput().write_string("seed").write_long(-2).write_int(7).write_boolean(True)
            .write_sorted_double(-0.5).to_bytes())
    source = TupleInput(data)
    assert (source.read_string(), source.read_long(), source.read_int(), source.read_boolean(),
            source.read_sorted_double()) == ("seed", -2, 7, True, -0.5)
    assert source.available() == 0


def test_chars_and_bytes_forms_write_code_units_without_terminator():
    out = TupleOutput().write_chars("a\U0001F600").write_bytes("\u0141z")
    assert out.to_bytes() == bytes.fromhex("0061 d83d de00 41 7a")
    source = TupleInput(out.to_bytes())
    assert source.read_chars(3) == "a\U0001F600"
    assert source.read_bytes(2) == "Az"


def test_reading_past_the_end_and_trailing_bytes_are_errors():
    with pytest.raises(TupleFormatError, match="long field needs 8 bytes"):
        decode_field("long", b"\x80\x00")
    with pytest.raises(TupleFormatError, match="bytes left"):
        decode_field("long", bytes(9))
    with pytest.raises(TupleFormatError, match="bytes left"):
        TupleFormat("int").unpack(bytes(5))


def test_values_that_do_not_fit_are_rejected_clearly():
    with pytest.raises(TupleFormatError, match=r"int field needs an integer in \[-2147483648, 2147483647\]"):
        encode_field("int", 2**31)
    with pytest.raises(TupleFormatError, match="char field"):
        encode_field("char", "\U0001F600")
    with pytest.raises(TupleFormatError, match="string field"):
        encode_field("string", 5)
    with pytest.raises(TupleFormatError, match="fields"):
        TupleFormat("int", "long").pack((1,))


def test_float_rounds_like_java_cast():
    assert decode_field("float", encode_field("float", 1e300)) == math.inf
    assert decode_field("float", encode_field("float", -1e300)) == -math.inf
    assert decode_field("float", encode_field("float", 0.1)) == struct.unpack(">f", struct.pack(">f", 0.1))[0]


# -- order: byte order of the encoding is the value order where JE promises it -------------------

@pytest.mark.parametrize("kind", ["long", "int", "short", "byte", "sorted_float", "sorted_double"])
def test_sortable_kinds_sort_numerically_by_their_bytes(kind):
    values = [v for v in _samples(kind) if not (isinstance(v, float) and math.isnan(v))][:5000]
    by_bytes = sorted(values, key=lambda v: encode_field(kind, v))
    assert by_bytes == sorted(values, key=lambda v: (v, math.copysign(1, v)))


def test_string_order_is_je_utf_byte_order_not_code_point_order():
    words = ["b", "a", "", "ab", "a\x00", "\x7f", "\u00e9", "\uffff", "\U0001F600"]
    # NUL is C0 80, so "a\x00" follows "ab"; a non-BMP character is a surrogate pair, ED A0..,
    # so it precedes U+FFFF (EF BF BF)
    assert sorted(words, key=lambda w: encode_field("string", w)) == \
        ["", "a", "ab", "a\x00", "b", "\x7f", "\u00e9", "\U0001F600", "\uffff"]


# -- the registry -------------------------------------------------------------------------------

def test_registry_names_every_binding_and_rejects_unknown_ones():
    assert set(JAVA_KINDS) | {"bytes", "hex"} <= set(binding_names())
    with pytest.raises(BadInput, match="unknown binding 'serial-ish'.*valid: .*string.*long"):
        get_binding("serial-ish")


def test_registry_tuple_bindings_name_their_java_class_and_round_trip():
    long_binding = get_binding("long")
    assert long_binding.java_class == "com.sleepycat.bind.tuple.LongBinding"
    assert long_binding.decode(long_binding.encode(-5)) == -5
    assert get_binding("packed_long").java_class is None
    assert get_binding("hex").decode(b"\x00\xff") == "00ff"
    assert get_binding("hex").encode("00ff") == b"\x00\xff"
    assert get_binding("bytes").encode(b"raw") == b"raw"
    with pytest.raises(BadInput, match="hex"):
        get_binding("hex").encode("zz")
