"""CrawlUrl: one URL of a TODO frontier and what the crawler knows about it (seeds/001).

The fields are the seed book's ``CrawlUrl``, in its order, named in snake_case (the book's
``urlRefrences`` is spelled ``url_references`` here). Java's ``int`` fields are Python ints
in [-2**31, 2**31 - 1]; every other field may be None (Java null). Times are integers so that
every value Java can store survives the trip exactly:

- ``last_update_time``: nanoseconds since the epoch (``java.sql.Timestamp`` keeps nanoseconds);
- ``time_to_live``: milliseconds since the epoch (``java.util.Date``).

The stored form is ``org.pycrawler.bridge.CrawlUrlBinding``'s, byte for byte: JE tuple fields
(:mod:`pycrawler.store.tuple`) behind a leading format-version byte. Version 1:

=================================  ==============================================================
field                              tuple fields
=================================  ==============================================================
version                            unsigned byte, 1
ori_url, url                       string each (JE UTF, 0-terminated; None is ``FF 00``)
url_no, status_code, hit_num       int each (4 bytes, sign bit flipped)
char_set, abstract_text, author    string each
weight                             int
description                        string
file_size                          int
last_update_time                   boolean present; if so long ``getTime()`` (ms), int ``getNanos()``
time_to_live                       boolean present; if so long ``getTime()`` (ms)
title, type                        string each
url_references                     int count, -1 for None; then that many strings (each may be None)
layer                              int
=================================  ==============================================================

Evolution rule, the same in Java: a new field is only ever appended, under a new version
number; fields are never removed or reordered. A record of version ``v`` holds exactly the
fields of versions up to ``v``; the reader leaves every later field at its default (None, or 0
for Java ints: what ``new CrawlUrl()`` holds). A version newer than the reader knows, or 0, is
refused (:class:`~pycrawler.store.tuple.TupleFormatError`) rather than misread.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Iterable, Sequence

from ..store.bindings import Binding, register_binding
from ..store.tuple import NULL_STRING, TupleFormatError, java_utf, java_utf_decode

FORMAT_VERSION = 1
"""The version :func:`encode` writes, and the newest :func:`decode` reads."""

INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1
_NANOS_PER_SECOND, _NANOS_PER_MILLI = 1_000_000_000, 1_000_000


@dataclasses.dataclass(slots=True)
class CrawlUrl:
    """The book's CrawlUrl; see the module docstring for units and the stored form."""

    ori_url: str | None = None          # the URL as found (host as a name): the book's key
    url: str | None = None              # the URL with the host resolved to an IP
    url_no: int = 0
    status_code: int = 0                # the fetch's result code
    hit_num: int = 0                    # how many documents link here
    char_set: str | None = None
    abstract_text: str | None = None
    author: str | None = None
    weight: int = 0
    description: str | None = None
    file_size: int = 0
    last_update_time: int | None = None  # ns since the epoch
    time_to_live: int | None = None     # ms since the epoch
    title: str | None = None
    type: str | None = None
    url_references: list[str | None] | None = None  # links found in the document
    layer: int = 0                      # crawl depth: seeds are 0


FIELD_NAMES = tuple(f.name for f in dataclasses.fields(CrawlUrl))
_INT_FIELDS = ("url_no", "status_code", "hit_num", "weight", "file_size", "layer")
_STRING_FIELDS = ("ori_url", "url", "char_set", "abstract_text", "author", "description", "title", "type")

_HEADER = bytes((FORMAT_VERSION,))
_BIAS = 1 << 31   # JE's int: two's complement with the sign bit flipped = value + 2**31, unsigned
_LONG_BIAS = 1 << 63
_INT = struct.Struct(">I")
_INT3 = struct.Struct(">III")
_ABSENT, _PRESENT = b"\x00", b"\x01"
_TIMESTAMP = struct.Struct(">cQI")
_DATE = struct.Struct(">cQ")
_NO_REFERENCES = _INT.pack(-1 + _BIAS)


# -- encoding -------------------------------------------------------------------------------------

def _string(value: str | None) -> bytes:
    return NULL_STRING if value is None else java_utf(value) + b"\x00"


def _timestamp(nanos: int | None) -> bytes:
    if nanos is None:
        return _ABSENT
    seconds, fraction = divmod(nanos, _NANOS_PER_SECOND)
    return _TIMESTAMP.pack(_PRESENT, seconds * 1000 + fraction // _NANOS_PER_MILLI + _LONG_BIAS,
                           fraction + _BIAS)


def _date(millis: int | None) -> bytes:
    return _ABSENT if millis is None else _DATE.pack(_PRESENT, millis + _LONG_BIAS)


def _references(refs: Sequence[str | None] | None) -> bytes:
    if refs is None:
        return _NO_REFERENCES
    if isinstance(refs, (str, bytes)):  # a lone URL would otherwise become one string per character
        raise TypeError("url_references needs a list")
    return _INT.pack(len(refs) + _BIAS) + b"".join(map(_string, refs))


def encode(record: CrawlUrl) -> bytes:
    """``record`` as ``CrawlUrlBinding.objectToEntry`` writes it."""
    c = record
    try:
        return b"".join((
            _HEADER, _string(c.ori_url), _string(c.url),
            _INT3.pack(c.url_no + _BIAS, c.status_code + _BIAS, c.hit_num + _BIAS),
            _string(c.char_set), _string(c.abstract_text), _string(c.author),
            _INT.pack(c.weight + _BIAS), _string(c.description), _INT.pack(c.file_size + _BIAS),
            _timestamp(c.last_update_time), _date(c.time_to_live), _string(c.title), _string(c.type),
            _references(c.url_references), _INT.pack(c.layer + _BIAS),
        ))
    except (struct.error, TypeError, AttributeError, OverflowError):
        raise _invalid(record) from None


def encode_many(records: Iterable[CrawlUrl]) -> list[bytes]:
    """:func:`encode` for a batch."""
    return [encode(record) for record in records]


def _invalid(record) -> TupleFormatError:
    """Name the first field that cannot be stored (the fast path only knows that one failed)."""
    if not isinstance(record, CrawlUrl):
        return TupleFormatError(f"expected a CrawlUrl, got {type(record).__name__}")

    def bad(name: str, need: str) -> TupleFormatError:
        value = repr(getattr(record, name))
        return TupleFormatError(f"CrawlUrl.{name} needs {need}, got {value[:80]}{'...' if len(value) > 80 else ''}")

    for name in _INT_FIELDS:
        value = getattr(record, name)
        if isinstance(value, bool) or not isinstance(value, int) or not INT_MIN <= value <= INT_MAX:
            return bad(name, f"an int in [{INT_MIN}, {INT_MAX}]")
    for name in _STRING_FIELDS:
        if not isinstance(getattr(record, name), (str, type(None))):
            return bad(name, "a str or None")
    refs = record.url_references
    if refs is not None and (isinstance(refs, str) or not all(isinstance(r, (str, type(None))) for r in refs)):
        return bad("url_references", "a list of str (or None items), or None")
    for name, unit in (("last_update_time", _NANOS_PER_MILLI), ("time_to_live", 1)):
        value = getattr(record, name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                  or not LONG_MIN <= value // unit <= LONG_MAX):
            return bad(name, "None or an int within Java's long milliseconds")
    return TupleFormatError(f"CrawlUrl cannot be stored: {record!r:.200}")


# -- decoding -------------------------------------------------------------------------------------

def _read_string(data: bytes, pos: int) -> tuple[str | None, int]:
    if data[pos] == 0xFF and data[pos + 1] == 0:
        return None, pos + 2
    end = data.index(0, pos)
    raw = data[pos:end]
    return (raw.decode("ascii") if raw.isascii() else java_utf_decode(raw)), end + 1


def decode(data: bytes) -> CrawlUrl:
    """The CrawlUrl that ``CrawlUrlBinding.entryToObject`` would read from ``data``.

    Raises :class:`~pycrawler.store.tuple.TupleFormatError` (a BadInput) for an unknown
    version or damaged bytes: stored records may come from anyone.
    """
    if not data or data[0] != FORMAT_VERSION:
        version = data[0] if data else "missing"
        raise TupleFormatError(f"CrawlUrl record has format version {version}; "
                               f"this build reads versions 1 to {FORMAT_VERSION}")
    read_string, unpack_int = _read_string, _INT.unpack_from
    try:
        ori_url, pos = read_string(data, 1)
        url, pos = read_string(data, pos)
        url_no, status_code, hit_num = _INT3.unpack_from(data, pos)
        char_set, pos = read_string(data, pos + 12)
        abstract_text, pos = read_string(data, pos)
        author, pos = read_string(data, pos)
        weight, = unpack_int(data, pos)
        description, pos = read_string(data, pos + 4)
        file_size, = unpack_int(data, pos)
        pos += 4
        if data[pos]:
            _, millis, nanos = _TIMESTAMP.unpack_from(data, pos)
            nanos -= _BIAS
            if not 0 <= nanos < _NANOS_PER_SECOND:  # Timestamp.setNanos refuses it too
                raise ValueError(f"Timestamp nanos {nanos} out of range")
            last_update_time = ((millis - _LONG_BIAS) // 1000) * _NANOS_PER_SECOND + nanos
            pos += _TIMESTAMP.size
        else:
            last_update_time, pos = None, pos + 1
        if data[pos]:
            time_to_live = _DATE.unpack_from(data, pos)[1] - _LONG_BIAS
            pos += _DATE.size
        else:
            time_to_live, pos = None, pos + 1
        title, pos = read_string(data, pos)
        type_, pos = read_string(data, pos)
        count = unpack_int(data, pos)[0] - _BIAS
        pos += 4
        if count < 0:
            url_references = None
        else:
            url_references = []
            for _ in range(count):
                ref, pos = read_string(data, pos)
                url_references.append(ref)
        layer, = unpack_int(data, pos)
        pos += 4
    except (IndexError, ValueError, struct.error) as exc:
        raise TupleFormatError(f"CrawlUrl record of {len(data)} bytes is damaged: {exc}") from None
    if pos != len(data):
        raise TupleFormatError(f"CrawlUrl record has {len(data) - pos} bytes after its last field")
    return CrawlUrl(ori_url, url, url_no - _BIAS, status_code - _BIAS, hit_num - _BIAS, char_set,
                    abstract_text, author, weight - _BIAS, description, file_size - _BIAS,
                    last_update_time, time_to_live, title, type_, url_references, layer - _BIAS)


def decode_many(values: Iterable[bytes]) -> list[CrawlUrl]:
    """:func:`decode` for a batch."""
    return [decode(value) for value in values]


def to_dict(record: CrawlUrl) -> dict:
    """Every field by name (a fresh list for ``url_references``), e.g. for JSON output."""
    return {name: (list(v) if isinstance(v := getattr(record, name), list) else v) for name in FIELD_NAMES}


BINDING = register_binding(Binding(
    "crawl_url", encode, decode, "a CrawlUrl record (pycrawler.records.crawl_url), versioned tuple fields",
    "org.pycrawler.bridge.CrawlUrlBinding"))
"""``crawl_url``: the binding name for :class:`~pycrawler.store.mapping.SortedMap` and ``store dump``."""
