"""The records of the ``pending`` database, in Heritrix's layout: how a URL's key and value are
built and read (:mod:`.workqueues` holds the frontier that keeps them).

Key: class key UTF-8, ``0x00``, scheduling directive byte, precedence byte, 48-bit ordinal
big-endian (``BdbMultipleWorkQueues.calculateInsertKey``); ``classKey + 0x00`` alone is the
queue's cap. Value: a :class:`~pycrawler.records.crawl_url.CrawlUrl` record. Single records are
built here in Python; bulk batches by the compiled loops of :mod:`.pending_kernels`.
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Sequence

import numpy as np

from ..errors import BadInput
from ..keys.urls import packed_utf8
from ..records.crawl_url import CrawlUrl, decode, encode
from ..store.packing import pack
from ..store.tuple import TupleFormatError

HIGHEST, HIGH, MEDIUM, NORMAL = 0, 1, 2, 3
"""Scheduling directives (Heritrix's ``SchedulingConstants``): a lower byte sorts first."""
DEFAULT_PRECEDENCE = 1
MAX_PRECEDENCE = 127
ORDINAL_LIMIT = 1 << 48


# A record that holds a URL and a layer only, as the codec writes it: the version byte, the URL
# (ASCII without NUL: JE's UTF is then the bytes themselves), 0x00, every later field at its
# default, and the layer. Built and read directly, the common entry skips the general codec
# (the tests hold both byte-equal).
_PLAIN_TAIL = encode(CrawlUrl(ori_url="x"))[3:-4]
# A found link's record (:func:`encode_found`): a URL, an abstract_text and a layer, every other
# field at its default: the bytes between the URL's terminator and the text, and those between
# the text's terminator and the layer, as Latin-1 text (one code point a byte).
_FOUND_HEAD, _FOUND_TAIL = (part.decode("latin-1") for part in
                            encode(CrawlUrl(ori_url="x", abstract_text="y"))[3:-4].split(b"y\x00"))
_LAYER = struct.Struct(">I")
_VERSION_BYTE = np.frombuffer(b"\x01", dtype=np.uint8)
_INT_BIAS = 1 << 31
_ORDINAL = struct.Struct(">Q")


# -- keys --------------------------------------------------------------------------------------

def queue_prefix(class_key: str) -> bytes:
    """The key prefix of a queue (also its cap's key): class key UTF-8 + 0x00."""
    raw = class_key.encode("utf-8", "surrogatepass")
    if b"\x00" in raw or not raw:
        raise BadInput(f"a class key is a non-empty string without NUL, not {class_key!r}")
    return raw + b"\x00"


def pending_key(prefix: bytes, directive: int, precedence: int, ordinal: int) -> bytes:
    """What ``BdbMultipleWorkQueues.calculateInsertKey`` computes for a URL of that queue."""
    return prefix + bytes((directive, min(precedence, MAX_PRECEDENCE))) + ordinal.to_bytes(6, "big")


def decode_key(key: bytes) -> tuple[str, int, int, int]:
    """(class key, directive, precedence, ordinal) of a pending key, read as Heritrix reads it:
    the bytes up to the first 0x00, then one big-endian long."""
    zero = key.index(0)
    (packed,) = _ORDINAL.unpack(key[zero + 1:zero + 9])
    return key[:zero].decode("utf-8", "surrogatepass"), packed >> 56, (packed >> 48) & 0xFF, packed & (ORDINAL_LIMIT - 1)


def encode_entry(item: str | CrawlUrl, url: str, layer: int) -> bytes:
    """The pending value of a URL (a string scheduled at ``layer``) or of a record."""
    if isinstance(item, CrawlUrl):
        return encode(item if item.ori_url == url else dataclasses.replace(item, ori_url=url))
    if url.isascii() and "\x00" not in url:
        return b"\x01" + url.encode() + b"\x00" + _PLAIN_TAIL + _LAYER.pack(layer + _INT_BIAS)
    return encode(CrawlUrl(ori_url=url, layer=layer))


def encode_found(urls: Sequence[str], layers: Sequence[int], texts: Sequence[str]) -> tuple[bytes, np.ndarray]:
    """Packed pending values of found URLs: ``urls[i]`` at ``layers[i]`` with ``abstract_text``
    ``texts[i]`` (what :func:`encode` writes for such a record). With ASCII URLs and texts
    without NUL (a crawl's links, in their normal form) the whole batch is one Latin-1 string
    built in one join and encoded once, no record object and no bytes object per URL; any
    other batch takes the codec record by record."""
    if not urls:
        return pack([])
    url_text, text_text = "".join(urls), "".join(texts)
    if not (url_text.isascii() and text_text.isascii() and "\x00" not in url_text and "\x00" not in text_text):
        return pack([encode(CrawlUrl(ori_url=url, abstract_text=text, layer=layer))
                     for url, layer, text in zip(urls, layers, texts)])
    head, tail, layer_bytes = _FOUND_HEAD, _FOUND_TAIL, {}
    for layer in set(layers):
        try:
            layer_bytes[layer] = _LAYER.pack(layer + _INT_BIAS).decode("latin-1")
        except (struct.error, TypeError):
            raise TupleFormatError(f"CrawlUrl.layer needs an int in [{-_INT_BIAS}, {_INT_BIAS - 1}], "
                                   f"got {layer!r}") from None
    data = "".join([f"\x01{url}\x00{head}{text}\x00{tail}{layer_bytes[layer]}"
                    for url, layer, text in zip(urls, layers, texts)]).encode("latin-1")
    lengths = np.fromiter(map(len, urls), dtype=np.int32, count=len(urls))
    lengths += np.fromiter(map(len, texts), dtype=np.int32, count=len(texts))
    lengths += 3 + len(head) + len(tail) + _LAYER.size
    offsets = np.zeros(len(urls) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return data, offsets


def decode_entry(value: bytes) -> CrawlUrl:
    """The CrawlUrl of a pending value (what :func:`~pycrawler.records.crawl_url.decode` returns)."""
    end = len(value) - len(_PLAIN_TAIL) - 5
    if end > 1 and value.endswith(_PLAIN_TAIL, 0, -4) and value[end] == 0:
        url = value[1:end]
        if url.isascii() and 0 not in url and value[0] == 1:
            return CrawlUrl(ori_url=url.decode("ascii"), layer=_LAYER.unpack_from(value, end + 1 + len(_PLAIN_TAIL))[0]
                            - _INT_BIAS)
    return decode(value)


# Batch forms of pending_key and encode_entry: a schedule batch is built as two packed buffers
# (what the Java side takes), by compiled loops for bulk batches.

COMPILED_BATCH = 1 << 14
"""Schedule batches of at least this many URLs build their keys and values with the numba
loops of :mod:`.pending_kernels` (no bytes object per URL; loading numba costs ~70 MB and
~0.3 s per process); smaller ones URL by URL in Python. A crawl schedules a few hundred new
URLs a batch, so it never loads numba for this; a bulk schedule of 20,000 URLs does."""


def pending_keys(prefixes: list[bytes], slots: np.ndarray, directive: int, precedence: int,
                 first: int, step: int = 1) -> tuple[bytes, np.ndarray]:
    """Packed :func:`pending_key` of URL i = queue ``prefixes[slots[i]]``, ordinal ``first + step * i``."""
    if len(slots) < COMPILED_BATCH:
        order = bytes((directive, min(precedence, MAX_PRECEDENCE)))   # pending_key's, inlined: half the time
        return pack([prefixes[slot] + order + (first + step * i).to_bytes(6, "big")
                     for i, slot in enumerate(np.asarray(slots).tolist())])
    from .pending_kernels import keys_kernel

    data, offsets = pack(prefixes)
    order = np.array([directive, min(precedence, MAX_PRECEDENCE)], dtype=np.uint8)
    slots = np.asarray(slots, dtype=np.int64)
    out = np.empty(int(np.diff(offsets)[slots].sum()) + 8 * len(slots), dtype=np.uint8)
    out_offsets = np.empty(len(slots) + 1, dtype=np.int32)
    keys_kernel(np.frombuffer(data, dtype=np.uint8), offsets, slots, order, first, step, out, out_offsets)
    return out.tobytes(), out_offsets


def encode_entries(items: Sequence[str | CrawlUrl], urls: Sequence[str], layer: int) -> tuple[bytes, np.ndarray]:
    """Packed :func:`encode_entry` of each (item, url): a bulk batch of plain strings whose URLs
    are ASCII without NUL is framed in one compiled loop, any other batch record by record."""
    if len(items) >= COMPILED_BATCH and all(type(item) is str for item in items):
        buf, offsets = packed_utf8(urls)
        if len(buf) and buf.min() > 0 and buf.max() < 0x80:
            from .pending_kernels import framed_kernel

            tail = np.frombuffer(b"\x00" + _PLAIN_TAIL + _LAYER.pack(layer + _INT_BIAS), dtype=np.uint8)
            out = np.empty(len(buf) + (1 + len(tail)) * len(urls), dtype=np.uint8)
            out_offsets = np.empty(len(urls) + 1, dtype=np.int32)
            framed_kernel(buf, offsets, _VERSION_BYTE, tail, out, out_offsets)
            return out.tobytes(), out_offsets
    return pack([encode_entry(item, url, layer) for item, url in zip(items, urls)])
