"""The seed book's TODO store (``BDBFrontier``, seeds/001), read and written from Python.

The book's layout: a transactional environment holding the class catalog database
``java_class_catalog`` (a ``StoredClassCatalog``) and the database ``URL``, a ``StoredMap``
from ``SerialBinding<String>`` (the record's ``oriUrl``) to ``SerialBinding<CrawlUrl>``, where
``CrawlUrl`` is the book's class in the default package (``serialVersionUID =
7931672194843948629L``).

Reading decodes values from the catalog's class descriptors (:mod:`pycrawler.store.serial`):
no Java class of the record is loaded, so a store from anyone is safe to open. Writing
registers the book's ``CrawlUrl`` descriptor in the catalog the way ``StoredClassCatalog``
does, so the book's Java ``BDBFrontier`` reads what Python put.

Order: ``get_next`` takes the first entry of the map, as the book's ``getNext`` does. A
serialized String key is ``74``, a 2-byte length, then the characters, so the order is
**shorter URLs first**, then by content; putting a URL already waiting replaces its record.

Times: the book's fields are ``java.sql.Timestamp`` and ``java.util.Date``; Python datetimes
carry them, so this layout holds times within years 1..9999 (pycrawler's own layout holds any).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

from ..errors import BadInput
from ..records.crawl_url import INT_MAX, INT_MIN, CrawlUrl
from ..store import Environment
from ..store.catalog import ClassCatalog
from ..store.serial.decoder import SerialDecoder
from ..store.serial.encoder import SerialEncoder, java_class
from ..store.serial.stream import BlockData, JavaObject, JavaTimestamp
from .todo import JeFrontier, require_url, sorted_entry_chunks

CATALOG_DATABASE = "java_class_catalog"
URL_DATABASE = "URL"
BOOK_CLASS_NAME = "CrawlUrl"
BOOK_SERIAL_VERSION_UID = 7931672194843948629

# The book's fields: its Java name, its type, and the CrawlUrl attribute that carries it.
BOOK_FIELDS = (
    ("oriUrl", "java.lang.String", "ori_url"), ("url", "java.lang.String", "url"), ("urlNo", "int", "url_no"),
    ("statusCode", "int", "status_code"), ("hitNum", "int", "hit_num"), ("charSet", "java.lang.String", "char_set"),
    ("abstractText", "java.lang.String", "abstract_text"), ("author", "java.lang.String", "author"),
    ("weight", "int", "weight"), ("description", "java.lang.String", "description"),
    ("fileSize", "int", "file_size"), ("lastUpdateTime", "java.sql.Timestamp", "last_update_time"),
    ("timeToLive", "java.util.Date", "time_to_live"), ("title", "java.lang.String", "title"),
    ("type", "java.lang.String", "type"), ("urlRefrences", "java.lang.String[]", "url_references"),
    ("layer", "int", "layer"),
)
BOOK_CLASS = java_class(BOOK_CLASS_NAME, BOOK_SERIAL_VERSION_UID, [(name, kind) for name, kind, _ in BOOK_FIELDS])
"""The descriptor Java computes for the book's CrawlUrl."""

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_SECOND, _MILLI = timedelta(seconds=1), timedelta(milliseconds=1)


def is_book_layout(database_names: list[str]) -> bool:
    return CATALOG_DATABASE in database_names and URL_DATABASE in database_names


# -- Java values <-> CrawlUrl attributes ------------------------------------------------------------

def _date_millis(value, where: str) -> int:
    """Milliseconds of a decoded ``Date``: a datetime, or, beyond datetime's years, the raw
    object whose ``writeObject`` data holds the time as a long."""
    if isinstance(value, datetime):
        return (value - _EPOCH) // _MILLI
    data = value.written_by("java.util.Date") if isinstance(value, JavaObject) else None
    if data and isinstance(data[0], BlockData) and len(data[0]) >= 8:
        return int.from_bytes(data[0][:8], "big", signed=True)
    raise BadInput(f"{where}: not a java.util.Date: {value!r:.100}")


def _timestamp_nanos(value, where: str) -> int:
    if isinstance(value, JavaTimestamp):
        return (value - _EPOCH) // _SECOND * 1_000_000_000 + value.nanos
    nanos = value.get("nanos") if isinstance(value, JavaObject) else None
    if not isinstance(nanos, int):
        raise BadInput(f"{where}: not a java.sql.Timestamp: {value!r:.100}")
    return _date_millis(value, where) // 1000 * 1_000_000_000 + nanos


def _checked(value, attr: str, where: str):
    """A decoded field value, refused when it is not what the book's field type holds."""
    if value is None:
        return None
    kind = {"ori_url": str, "url": str, "char_set": str, "abstract_text": str, "author": str,
            "description": str, "title": str, "type": str}.get(attr)
    if kind is not None and isinstance(value, kind):
        return value
    if attr == "url_references" and isinstance(value, list) and all(v is None or isinstance(v, str) for v in value):
        return value
    if attr == "last_update_time":
        return _timestamp_nanos(value, where)
    if attr == "time_to_live":
        return _date_millis(value, where)
    if isinstance(value, int) and not isinstance(value, bool) and INT_MIN <= value <= INT_MAX:
        return value
    raise BadInput(f"{where}: field {attr} holds {type(value).__name__} {value!r:.80}")


def from_book_object(obj, where: str = "book record") -> CrawlUrl:
    """The CrawlUrl a decoded book ``CrawlUrl`` object stands for (BadInput for anything else)."""
    if not isinstance(obj, JavaObject) or obj.class_name != BOOK_CLASS_NAME:
        found = obj.class_name if isinstance(obj, JavaObject) else type(obj).__name__
        raise BadInput(f"{where}: expected the book's {BOOK_CLASS_NAME}, found {found}")
    record = CrawlUrl()
    for java_name, _, attr in BOOK_FIELDS:
        value = _checked(obj.get(java_name), attr, where)
        if value is not None:
            setattr(record, attr, value)
    return record


def to_book_values(record: CrawlUrl) -> dict:
    """The book CrawlUrl's field values for the serial encoder."""
    values = {java_name: getattr(record, attr) for java_name, _, attr in BOOK_FIELDS}
    try:
        if record.last_update_time is not None:
            seconds, nanos = divmod(record.last_update_time, 1_000_000_000)
            values["lastUpdateTime"] = JavaTimestamp(seconds, nanos)
        if record.time_to_live is not None:
            values["timeToLive"] = _EPOCH + timedelta(milliseconds=record.time_to_live)
    except (OverflowError, TypeError):
        raise BadInput(f"the book's layout holds times within years 1..9999 (Timestamp/Date as datetime): "
                       f"{record.last_update_time!r} ns / {record.time_to_live!r} ms") from None
    return values


class BookFrontier(JeFrontier):
    """The TODO protocol on a store in the book's layout (see the module docstring)."""

    layout = "book"
    order = "key"

    def __init__(self, env: Environment, *, create: bool = False):
        names = env.database_names()
        if not create and not is_book_layout(names):
            raise BadInput(f"{env.path} is not in the book's layout (needs databases {CATALOG_DATABASE!r} "
                           f"and {URL_DATABASE!r}; it has: {', '.join(names) or 'none'})")
        catalog_db = env.open_database(CATALOG_DATABASE, create=create)
        super().__init__(env, env.open_database(URL_DATABASE, create=create))
        self.catalog = ClassCatalog(catalog_db)
        self._decoder = SerialDecoder(self.catalog)
        self._encoder = SerialEncoder(self.catalog)

    @classmethod
    def open(cls, path: str | os.PathLike, *, create: bool = False, read_only: bool = False,
             durability: str = "write_no_sync", cache_size: int | None = None) -> BookFrontier:
        """Open (``create``: or make) a book-layout store at ``path``; closing the frontier
        closes the environment."""
        return cls._open_env(path, create=create, read_only=read_only, durability=durability, cache_size=cache_size,
                             make=lambda env: cls(env, create=create and not read_only))

    def _entry_chunks(self, records: list[CrawlUrl]) -> Iterator[tuple[tuple, tuple]]:
        keys = [self._encoder.encode_string(require_url(r)) for r in records]
        return sorted_entry_chunks(keys, records, self._encode_values, self.CHUNK)

    def _encode_values(self, records: list[CrawlUrl]) -> list[bytes]:
        return [self._encoder.encode_object(BOOK_CLASS, to_book_values(r)) for r in records]

    def _records(self, values: tuple[bytes, ...]) -> list[CrawlUrl]:
        return [from_book_object(self._decoder.decode(v, "book CrawlUrl"), f"{self.db.name!r} record") for v in values]
