"""Heritrix's ``pending`` database: every queued URL, grouped into per-queue key ranges.

Key (``BdbMultipleWorkQueues.calculateInsertKey``): the queue's class key in UTF-8, a zero
byte, then 8 bytes big-endian: the scheduling directive (0 highest .. 3 normal), the
precedence (Heritrix 1: the holder cost, -1 stored as 255), and a 48-bit ordinal (the order of
discovery). So a scan in key order is queue by queue, and within a queue in the order
Heritrix would hand URLs out. An empty value under ``classKey + 0x00`` is the queue's *cap*
record, which marks where the queue begins.

Values: Heritrix 1 stores ``SerialBinding<CrawlURI>`` through the ``classCatalog`` database;
they are decoded here from the catalog's descriptors (:mod:`pycrawler.store.serial.decoder`), never by
loading a Heritrix class. Heritrix 3 stores Kryo-encoded ``CrawlURI``s, which only Heritrix's
own classes can read: with the user's Heritrix ``lib/`` on ``PYCRAWLER_CLASSPATH`` they are
decoded through ``org.archive.bdb.KryoBinding`` (:class:`KryoDecoder`), a batch per call.
"""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

from ..errors import BadInput, SetupError
from ..store.serial.modified_utf8 import decode_modified_utf8
from ..store.serial.stream import BlockData, JavaObject

H1_CRAWL_URI = "org.archive.crawler.datamodel.CrawlURI"
H1_CANDIDATE_URI = "org.archive.crawler.datamodel.CandidateURI"
TAIL = 8  # directive, precedence, 6-byte ordinal
ORDINAL_MASK = (1 << 48) - 1


@dataclasses.dataclass(frozen=True, slots=True)
class PendingKey:
    """What a pending key says: the queue, and the URL's place in it."""

    queue: str
    directive: int
    precedence: int
    ordinal: int


def is_cap_key(key: bytes) -> bool:
    """True for a queue's cap key: the class key and one zero byte, its only one (a URL's key
    has its first zero byte 8 bytes before the end, and its tail may hold more zeros)."""
    return key.find(b"\x00") == len(key) - 1


def is_cap(key: bytes, value: bytes) -> bool:
    """True for a queue's cap record (cap key, empty value)."""
    return not value and is_cap_key(key)


def cap_queue(key: bytes) -> str:
    return key[:-1].decode("utf-8", "replace")


def parse_key(key: bytes) -> PendingKey:
    """The fields of a URL's insert key; BadInput for bytes that are not one."""
    if len(key) < TAIL + 1 or key[-TAIL - 1] != 0:
        raise BadInput(f"pending key {key[:48].hex()} is not a Heritrix insert key "
                       "(class key, zero byte, 8 bytes of directive, precedence and ordinal)")
    (tail,) = struct.unpack_from(">Q", key, len(key) - TAIL)
    return PendingKey(key[:-TAIL - 1].decode("utf-8", "replace"), tail >> 56, (tail >> 48) & 0xFF,
                      tail & ORDINAL_MASK)


def key_fields(key: PendingKey) -> dict[str, Any]:
    return {"queue": key.queue, "directive": key.directive, "precedence": key.precedence, "ordinal": key.ordinal}


# -- Heritrix 1: serial-bound CrawlURIs ------------------------------------------------------------
def h1_crawl_uri(obj) -> dict[str, Any]:
    """The fields of a decoded Heritrix 1 ``CrawlURI``: its serialized fields under their Java
    names, plus ``uri``, ``via`` and ``alist`` (what ``CandidateURI.writeObject`` writes after
    the fields) and ``outLinks`` (``CrawlURI.writeObject``; None where the release's
    ``CrawlURI`` has no ``writeObject`` of its own). Each is looked up by the class that
    wrote it, whichever other classes wrote data too."""
    if not isinstance(obj, JavaObject) or obj.class_name != H1_CRAWL_URI:
        found = obj.get("@class") if isinstance(obj, dict) else type(obj).__name__
        raise BadInput(f"expected a Heritrix 1 {H1_CRAWL_URI}, found {found}")
    fields = {name: value for name, value in obj.items() if "@" not in name}
    candidate = obj.written_by(H1_CANDIDATE_URI)
    if not candidate or not isinstance(candidate[0], BlockData) or len(candidate) < 3:
        raise BadInput("a Heritrix 1 CrawlURI without the URI that CandidateURI.writeObject writes")
    uri_bytes = bytes(candidate[0])
    (length,) = struct.unpack_from(">H", uri_bytes)
    fields["uri"] = decode_modified_utf8(uri_bytes[2:2 + length], "CrawlURI uri")
    fields["via"], fields["alist"] = candidate[1], candidate[2]
    own = obj.written_by(H1_CRAWL_URI) or [None]
    fields["outLinks"] = own[0]
    return fields


# -- Heritrix 3: Kryo through Heritrix's classes ----------------------------------------------------
KRYO_FIELDS = ("uri", "via", "pathFromSeed", "classKey", "schedulingDirective", "precedence", "ordinal",
               "isSeed", "fetchStatus", "fetchAttempts")
_NUMBERS = {"schedulingDirective", "precedence", "ordinal", "fetchStatus", "fetchAttempts"}
KRYO_NEEDS = ("Heritrix 3 keeps pending CrawlURIs Kryo-encoded, which only Heritrix's own classes decode: "
              "set PYCRAWLER_CLASSPATH to your Heritrix lib/ folder")


class KryoDecoder:
    """Heritrix 3 pending values decoded by ``org.pycrawler.bridge.HeritrixKryo`` in batches."""

    def __init__(self, java_decoder):
        self._java = java_decoder

    @classmethod
    def load(cls) -> KryoDecoder | None:
        """A decoder when Heritrix's classes are on the JVM's class path, else None."""
        from .. import jvm

        jvm.start()
        java = jvm.jclass("org.pycrawler.bridge.HeritrixKryo").load()
        return None if java is None else cls(java)

    def decode_many(self, values: list[bytes]) -> list[dict[str, Any]]:
        from .. import jvm
        from ..store.packing import pack, unpack_java

        data, offsets = pack(values)
        try:
            packed = self._java.decode(jvm.byte_array(data), jvm.int_array(offsets))
        except jvm.JavaException as exc:
            message = jvm.throwable(exc).getMessage()
            raise SetupError(f"Heritrix's KryoBinding could not decode a pending value: {message}") from None
        return [_kryo_record(line.decode("utf-8")) for line in unpack_java(packed)]


def _unescape(field: str) -> str | None:
    if not field:
        return None
    return field.replace("\\\\", "\x00").replace("\\t", "\t").replace("\\n", "\n").replace("\x00", "\\")


def _kryo_record(line: str) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for name, raw in zip(KRYO_FIELDS, line.split("\t")):
        value = _unescape(raw)
        if value is not None and name in _NUMBERS:
            value = int(value)
        elif name == "isSeed" and value is not None:
            value = value == "true"
        record[name] = value
    return record
