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
import sys
from collections.abc import Iterable, Sequence

from ..jvm.gc_pause import gc_paused
from ..store.bindings import Binding, register_binding
from ..store.packing import as_list, np, pack
from ..store.tuple import NULL_STRING, TupleFormatError, java_utf, java_utf_decode
from .crawl_url_layout import (INT_BIAS, LONG_BIAS, SCAN_BAD_VERSION, SCAN_OK, SCAN_TRAILING,
                               SCAN_TRUNCATED)

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
_INT = struct.Struct(">I")
_INT3 = struct.Struct(">III")
_ABSENT, _PRESENT = b"\x00", b"\x01"
_TIMESTAMP = struct.Struct(">cQI")
_DATE = struct.Struct(">cQ")
_NO_REFERENCES = _INT.pack(-1 + INT_BIAS)


# -- encoding -------------------------------------------------------------------------------------

def _string(value: str | None) -> bytes:
    if value is None:
        return NULL_STRING
    # JE's UTF of an ASCII string without U+0000 is its ASCII bytes (str.isascii is O(1)).
    if value.isascii() and "\0" not in value:
        return value.encode() + b"\0"
    return java_utf(value) + b"\0"


def _timestamp(nanos: int | None) -> bytes:
    if nanos is None:
        return _ABSENT
    seconds, fraction = divmod(nanos, _NANOS_PER_SECOND)
    return _TIMESTAMP.pack(_PRESENT, seconds * 1000 + fraction // _NANOS_PER_MILLI + LONG_BIAS,
                           fraction + INT_BIAS)


def _date(millis: int | None) -> bytes:
    return _ABSENT if millis is None else _DATE.pack(_PRESENT, millis + LONG_BIAS)


def _references(refs: Sequence[str | None] | None) -> bytes:
    if refs is None:
        return _NO_REFERENCES
    if isinstance(refs, (str, bytes)):  # a lone URL would otherwise become one string per character
        raise TypeError("url_references needs a list")
    return _INT.pack(len(refs) + INT_BIAS) + b"".join(map(_string, refs))


def _parts(c: CrawlUrl) -> tuple:
    """The stored form of ``c`` in pieces, for one join (the hot path of every put: the
    common absent values are constants, so most fields cost one comparison)."""
    string = _string
    return (
        _HEADER, string(c.ori_url), string(c.url),
        _INT3.pack(c.url_no + INT_BIAS, c.status_code + INT_BIAS, c.hit_num + INT_BIAS),
        string(c.char_set), string(c.abstract_text), string(c.author),
        _INT.pack(c.weight + INT_BIAS), string(c.description), _INT.pack(c.file_size + INT_BIAS),
        _ABSENT if c.last_update_time is None else _timestamp(c.last_update_time),
        _ABSENT if c.time_to_live is None else _date(c.time_to_live),
        string(c.title), string(c.type),
        _NO_REFERENCES if c.url_references is None else _references(c.url_references),
        _INT.pack(c.layer + INT_BIAS),
    )


def encode(record: CrawlUrl) -> bytes:
    """``record`` as ``CrawlUrlBinding.objectToEntry`` writes it."""
    try:
        return b"".join(_parts(record))
    except (struct.error, TypeError, AttributeError, OverflowError):
        raise _invalid(record) from None


def encode_many(records: Iterable[CrawlUrl]) -> list[bytes]:
    """:func:`encode` for a batch."""
    records = records if isinstance(records, Sequence) else list(records)
    join = b"".join
    try:
        return [join(_parts(record)) for record in records]
    except (struct.error, TypeError, AttributeError, OverflowError):
        return [encode(record) for record in records]  # raises, naming the field at fault


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
#
# A record, or a batch of fewer than COMPILED_BATCH records, is read field by field with
# struct (a few microseconds a record). A larger batch is decoded in two passes. A compiled
# scan (:mod:`.crawl_url_scan`, numba, no Python objects) walks every record of the packed
# batch once and writes where each string lies, the ints, times and reference counts into
# arrays; Python then only makes the objects: one slice of the batch (decoded as Latin-1 once,
# so a slice of ASCII bytes is already the right str) per string field, and one CrawlUrl per
# record. Non-ASCII strings and the rare url_references lists take the exact JE UTF path. Both
# paths return the same records and raise the same errors (a record the scan flags is
# reported with the scan's error code).

COMPILED_BATCH = 64 if np is not None else sys.maxsize
"""Batches of at least this many records take the compiled scan. Below, reading each record
in Python is as fast and keeps numba (~70 MB and ~0.3 s per process) out of processes that
decode a few records at a time, as a crawl's frontier does. Without numpy (GraalPy) every
batch is read record by record."""

_TEXT_FIELDS = 8      # ori_url, url, char_set, abstract_text, author, description, title, type
_INT_COLUMNS = 6      # url_no, status_code, hit_num, weight, file_size, layer


def _read_string(data: bytes, pos: int) -> tuple[str | None, int]:
    """The string field at ``pos`` of a record and where the next field starts."""
    if data[pos] == 0xFF and data[pos + 1] == 0:
        return None, pos + 2
    end = data.index(0, pos)
    return java_utf_decode(data[pos:end]), end + 1


def _scan_error(data: bytes, start: int, end: int, code: int, pos: int) -> TupleFormatError:
    if code == SCAN_BAD_VERSION:
        version = data[start] if end > start else "missing"
        return TupleFormatError(f"CrawlUrl record has format version {version}; "
                                f"this build reads versions 1 to {FORMAT_VERSION}")
    if code == SCAN_TRAILING:
        return TupleFormatError(f"CrawlUrl record has {end - pos} bytes after its last field")
    return TupleFormatError(f"CrawlUrl record of {end - start} bytes is damaged: a field is truncated "
                            "or a string has no terminating zero")


def _texts(text: str, data: bytes, starts: list, ends: list) -> list:
    """One column of strings: Latin-1 slices are right for ASCII; others take JE's UTF."""
    return [None if a < 0 else s if (s := text[a:b]).isascii() else java_utf_decode(data[a:b])
            for a, b in zip(starts, ends)]


def _read_references(data: bytes, start: int, count: int) -> list[str | None]:
    refs, pos = [], start
    for _ in range(count):
        ref, pos = _read_string(data, pos)
        refs.append(ref)
    return refs


def _timestamp_nanos(millis: int, nanos: int) -> int:
    if not 0 <= nanos < _NANOS_PER_SECOND:  # Timestamp.setNanos refuses it too
        raise TupleFormatError(f"CrawlUrl record is damaged: Timestamp nanos {nanos} out of range")
    return (millis // 1000) * _NANOS_PER_SECOND + nanos


def decode_packed(data, offsets) -> list[CrawlUrl]:
    """The CrawlUrls that ``CrawlUrlBinding.entryToObject`` would read from each record of a
    packed batch (``data`` + n+1 ``offsets``, as :mod:`pycrawler.store.packing` and the Java
    bridge hand them over), read in place.

    Raises :class:`~pycrawler.store.tuple.TupleFormatError` (a BadInput) for an unknown
    version or damaged bytes: stored records may come from anyone.
    """
    data = bytes(data)
    n = len(offsets) - 1
    if n <= 0:
        return []
    with gc_paused():
        if n < COMPILED_BATCH:
            bounds = as_list(offsets)
            return [_decode_record(data[start:end]) for start, end in zip(bounds, bounds[1:])]
        return _decode_scanned(data, np.asarray(offsets, dtype=np.int64), n)


def _decode_record(data: bytes) -> CrawlUrl:
    """One record, field by field (the small-batch path of :func:`decode_packed`)."""
    if not data or data[0] != FORMAT_VERSION:
        raise _scan_error(data, 0, len(data), SCAN_BAD_VERSION, 0)
    read_string, unpack_int = _read_string, _INT.unpack_from
    pos = 1
    try:
        ori_url, pos = read_string(data, pos)
        url, pos = read_string(data, pos)
        url_no, status_code, hit_num = _INT3.unpack_from(data, pos)
        char_set, pos = read_string(data, pos + 12)
        abstract_text, pos = read_string(data, pos)
        author, pos = read_string(data, pos)
        weight, = unpack_int(data, pos)
        description, pos = read_string(data, pos + 4)
        file_size, = unpack_int(data, pos)
        pos += 4
        stamp = _TIMESTAMP.unpack_from(data, pos) if data[pos] else None
        pos += _TIMESTAMP.size if stamp else 1
        time_to_live = _DATE.unpack_from(data, pos)[1] - LONG_BIAS if data[pos] else None
        pos += _DATE.size if time_to_live is not None else 1
        title, pos = read_string(data, pos)
        type_, pos = read_string(data, pos)
        count = unpack_int(data, pos)[0] - INT_BIAS
        pos += 4
        url_references = None if count < 0 else []
        for _ in range(count):
            ref, pos = read_string(data, pos)
            url_references.append(ref)
        layer, = unpack_int(data, pos)
        pos += 4
    except TupleFormatError:  # a string that is not JE's UTF, as the scan path reports it
        raise
    except (IndexError, ValueError, struct.error):
        raise _scan_error(data, 0, len(data), SCAN_TRUNCATED, pos) from None
    if pos != len(data):
        raise _scan_error(data, 0, len(data), SCAN_TRAILING, pos)
    last_update_time = None if stamp is None else _timestamp_nanos(stamp[1] - LONG_BIAS, stamp[2] - INT_BIAS)
    return CrawlUrl(ori_url, url, url_no - INT_BIAS, status_code - INT_BIAS, hit_num - INT_BIAS, char_set,
                    abstract_text, author, weight - INT_BIAS, description, file_size - INT_BIAS,
                    last_update_time, time_to_live, title, type_, url_references, layer - INT_BIAS)


def _decode_scanned(data: bytes, bounds, n: int) -> list[CrawlUrl]:
    """A large batch through the compiled scan, then one slice per string (see above)."""
    from .crawl_url_scan import scan

    starts = np.full((n, _TEXT_FIELDS), -1, dtype=np.int64)
    ends = np.zeros((n, _TEXT_FIELDS), dtype=np.int64)
    ints = np.zeros((n, _INT_COLUMNS), dtype=np.int64)
    times = np.zeros((n, 5), dtype=np.int64)
    refs = np.full((n, 2), -1, dtype=np.int64)
    status = np.zeros((n, 2), dtype=np.int64)
    scan(np.frombuffer(data, dtype=np.uint8), bounds, starts, ends, ints, times, refs, status)
    bad = np.flatnonzero(status[:, 0] != SCAN_OK)
    if len(bad):
        r = int(bad[0])
        raise _scan_error(data, int(bounds[r]), int(bounds[r + 1]), int(status[r, 0]), int(status[r, 1]))
    text = data.decode("latin-1")
    starts, ends = starts.T.tolist(), ends.T.tolist()
    ori_url, url, char_set, abstract_text, author, description, title, type_ = (
        _texts(text, data, starts[f], ends[f]) if max(starts[f]) >= 0 else [None] * n for f in range(_TEXT_FIELDS))
    url_no, status_code, hit_num, weight, file_size, layer = ints.T.tolist()
    has_stamp, stamp_ms, stamp_nanos, has_date, date_ms = times.T.tolist()
    last_update_time = ([_timestamp_nanos(ms, ns) if h else None for h, ms, ns in zip(has_stamp, stamp_ms, stamp_nanos)]
                        if any(has_stamp) else [None] * n)
    time_to_live = [ms if h else None for h, ms in zip(has_date, date_ms)] if any(has_date) else [None] * n
    counts, ref_starts = refs.T.tolist()
    try:
        url_references = [None if c < 0 else _read_references(data, p, c) for c, p in zip(counts, ref_starts)]
    except (IndexError, ValueError) as exc:
        raise TupleFormatError(f"CrawlUrl record is damaged: {exc}") from None
    return list(map(CrawlUrl, ori_url, url, url_no, status_code, hit_num, char_set, abstract_text, author,
                    weight, description, file_size, last_update_time, time_to_live, title, type_,
                    url_references, layer))


def decode(data: bytes) -> CrawlUrl:
    """The CrawlUrl that ``CrawlUrlBinding.entryToObject`` would read from ``data`` (see
    :func:`decode_packed` for the errors)."""
    return _decode_record(bytes(data))


def decode_many(values: Sequence[bytes]) -> list[CrawlUrl]:
    """:func:`decode` for a batch of records."""
    return decode_packed(*pack(values))


def to_dict(record: CrawlUrl) -> dict:
    """Every field by name (a fresh list for ``url_references``), e.g. for JSON output."""
    return {name: (list(v) if isinstance(v := getattr(record, name), list) else v) for name in FIELD_NAMES}


BINDING = register_binding(Binding(
    "crawl_url", encode, decode, "a CrawlUrl record (pycrawler.records.crawl_url), versioned tuple fields",
    "org.pycrawler.bridge.CrawlUrlBinding"))
"""``crawl_url``: the binding name for :class:`~pycrawler.store.mapping.SortedMap` and ``store dump``."""
