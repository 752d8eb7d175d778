"""The records of a crawler4j frontier, as crawler4j 3.x and 4.x write them.

``PendingURLsDB`` and ``InProcessPagesDB`` (crawler4j's ``WorkQueues``)
    key: 6 bytes, priority (a Java byte, stored as is), depth (capped at 127), docid (4 bytes
    big-endian); JE orders keys as unsigned bytes, so a queue hands out priority 0, 1 .. 127,
    then the negative priorities (-128 .. -1), and within one priority the shallower URLs
    first, then the older (smaller docid).
    value: a ``WebURLTupleBinding`` tuple (:mod:`pycrawler.store.tuple`): ``url`` string,
    ``docid`` int, ``parent_docid`` int, ``parent_url`` string, ``depth`` short, ``priority``
    byte, ``anchor`` string. crawler4j before 3.5 (its binding until March 2013) wrote no
    anchor; :func:`decode_weburl` then leaves the field out. ``WebURL`` has other fields
    (``tag``, domain parts, path) that the binding never writes.
``DocIDs`` (``DocIDServer``)
    key: the URL's bytes in the JVM's default charset (``String.getBytes()``: UTF-8 on
    Linux and macOS, read as ISO-8859-1 when they are not UTF-8); value: the docid, 4 bytes
    big-endian (``Util.int2ByteArray``, not a tuple int). Docids count up from 1 in the order
    crawler4j first scheduled each URL.
``Statistics`` (``Counters``, resumable crawls only)
    key: the counter's name (``Scheduled-Pages``, ``Processed-Pages``); value: 8 bytes
    big-endian (``Util.long2ByteArray``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..errors import BadInput
from ..store.tuple import TupleFormat, TupleFormatError, TupleInput

WEB_URL = TupleFormat("string", "int", "int", "string", "short", "byte")
"""The fields every crawler4j writes before ``anchor`` (added in crawler4j 3.5)."""
WEB_URL_FIELDS = ("url", "docid", "parent_docid", "parent_url", "depth", "priority")
KEY_SIZE = 6
DEPTH_CAP = 127
DOC_ID_SIZE = 4
STATISTICS_SIZE = 8


class QueueKey(NamedTuple):
    """The fields of a work-queue key."""

    priority: int   # signed, as crawler4j's byte
    depth: int      # 0..127: deeper URLs are stored at 127
    docid: int


def parse_key(key: bytes) -> QueueKey:
    if len(key) != KEY_SIZE:
        raise BadInput(f"a crawler4j work-queue key is {KEY_SIZE} bytes, not {len(key)} ({key.hex()})")
    return QueueKey(int.from_bytes(key[:1], "big", signed=True), key[1], int.from_bytes(key[2:], "big", signed=True))


def decode_weburl(value: bytes) -> dict[str, Any]:
    """The fields a ``WebURLTupleBinding`` record holds (see the module docstring); bytes left
    after ``anchor`` (a crawler4j fork's own fields) are kept as ``extra_hex``."""
    source = TupleInput(value)
    try:
        row = dict(zip(WEB_URL_FIELDS, WEB_URL.read(source)))
        if source.available():
            row["anchor"] = source.read_string()
    except TupleFormatError as exc:
        raise BadInput(f"not a crawler4j WebURL record ({exc}): {value[:64].hex()}") from None
    if source.available():
        row["extra_hex"] = source.read_raw(source.available()).hex()
    return row


def url_text(data: bytes) -> str:
    """A ``DocIDs`` key as text (see the module docstring)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("iso-8859-1")


def big_endian(value: bytes, size: int, what: str) -> int:
    """A ``DocIDs`` docid (``size`` 4) or a ``Statistics`` counter (8): signed, big-endian."""
    if len(value) != size:
        raise BadInput(f"a crawler4j {what} value is {size} bytes, not {len(value)} ({value.hex()})")
    return int.from_bytes(value, "big", signed=True)
