"""Read a Heritrix state's queued URLs and seen keys out, as plain records and numbers.

:func:`pending_urls` yields one dict per queued URL, in queue order (the order of the
``pending`` database: queue by queue, and within a queue as Heritrix would hand URLs out):
the key's fields (``queue``, ``directive``, ``precedence``, ``ordinal``) and what the value
holds. Heritrix 1 values are decoded from the class catalog (every serialized ``CrawlURI``
field, with ``uri``, ``via``, ``alist`` and ``outLinks``); Heritrix 3 values through
Heritrix's classes when they are on the class path (:class:`.pending.KryoDecoder`), else the
record carries the key fields and ``value_hex`` only, with ``decoded`` false.

Seen keys file formats (:func:`write_seen`): ``raw``, 8-byte big-endian unsigned records, one
per key, ascending, no header (``numpy.fromfile(path, ">u8")`` reads it back); ``hex``, one
key per line as 16 lowercase hex digits, ascending.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any, BinaryIO

from ..errors import BadInput
from ..progress import meter
from ..store.catalog import catalog_decoder
from ..store.packing import as_list
from .pending import KryoDecoder, cap_queue, h1_crawl_uri, is_cap, is_cap_key, key_fields, parse_key
from .state import HeritrixState, big_endian

DECODE_BATCH = 4096
SEEN_FORMATS = ("raw", "hex")


def value_decoder(state: HeritrixState):
    """(decode_many(values) -> list of dicts, or None when the values cannot be decoded here)."""
    if state.heritrix == 1:
        serial = catalog_decoder(state.env)
        if serial is None:
            raise BadInput(f"{state.path} has Heritrix 1 pending values but no classCatalog to decode them")

        def decode_many(values: list[bytes]) -> list[dict[str, Any]]:
            return [h1_crawl_uri(serial.decode(v, "Heritrix 1 pending value")) for v in values]
        return decode_many
    kryo = KryoDecoder.load()
    return None if kryo is None else kryo.decode_many


def pending_urls(state: HeritrixState, decode_many=None) -> Iterator[dict[str, Any]]:
    """Every queued URL (cap records skipped), in queue order; see the module docstring."""
    records = (r for r in state.pending_records() if not is_cap(*r))
    while batch := list(islice(records, DECODE_BATCH)):
        decoded = decode_many([v for _, v in batch]) if decode_many else [None] * len(batch)
        for (key, value), fields in zip(batch, decoded):
            row = key_fields(parse_key(key))
            if fields is None:
                row.update(decoded=False, value_hex=value.hex())
            else:
                row.update(fields, decoded=True)
            yield row


def queue_stats(state: HeritrixState) -> dict[str, dict[str, Any]]:
    """Per queue: URL count, and counts per directive and per precedence (from keys only)."""
    queues: dict[str, dict[str, Any]] = {}
    for key, _ in state.pending_records(keys_only=True):
        if is_cap_key(key):  # the queue exists, perhaps empty
            queues.setdefault(cap_queue(key), {"urls": 0, "directives": {}, "precedences": {}})
            continue
        fields = parse_key(key)
        queue = queues.setdefault(fields.queue, {"urls": 0, "directives": {}, "precedences": {}})
        queue["urls"] += 1
        queue["directives"][fields.directive] = queue["directives"].get(fields.directive, 0) + 1
        queue["precedences"][fields.precedence] = queue["precedences"].get(fields.precedence, 0) + 1
    return queues


def write_seen(state: HeritrixState, out: BinaryIO, fmt: str = "raw", *, progress: bool | None = False) -> int:
    """Write every seen key, ascending, in format ``fmt``; returns how many. ``progress``: show
    a live count on stderr (None: when it is a terminal; see :mod:`pycrawler.progress`)."""
    if fmt not in SEEN_FORMATS:
        raise BadInput(f"seen format must be one of {', '.join(SEEN_FORMATS)}, not {fmt!r}")
    written = 0
    with meter("seen", total=state.seen_count, unit="keys", enabled=progress) as bar:
        for keys in state.seen_keys():
            if fmt == "raw":
                out.write(big_endian(keys))
            else:
                out.write("".join(f"{k:016x}\n" for k in as_list(keys)).encode("ascii"))
            written += len(keys)
            bar.update(len(keys))
    return written
