"""``--warc DIR``: WARC 1.1 files of what was fetched, written with warcio, rotated by size.

Each answered fetch becomes three records, as Heritrix writes them:

- ``request``: the GET as sent (request line and headers);
- ``response``: status line, headers and the payload as received (still gzip-encoded when
  the server sent it so), with ``WARC-IP-Address``, ``WARC-Payload-Digest`` and, for a body
  cut by the size cap or a timeout, ``WARC-Truncated: length`` / ``time``;
- ``metadata``: ``via``, ``hopsFromSeed``, ``fetchTimeMs`` and one ``outlink: URL HOP CONTEXT``
  line per extracted link (Heritrix's metadata record).

The request and metadata records point at the response with ``WARC-Concurrent-To``. Fetch
failures (negative statuses) have no HTTP exchange and write nothing. aiohttp hands over the
body de-chunked, so a ``Transfer-Encoding`` header is dropped from the recorded response
headers (readers would otherwise try to de-chunk the payload again).

Files are named ``PREFIX-YYYYmmddHHMMSSfff-NNNNN-PID.warc.gz`` and carry a ``.open`` suffix
while written (Heritrix's convention: a reader skips them); each starts with a ``warcinfo``
record. A file is closed once it reaches ``max_size`` bytes and the next write opens the next.

A writer holds an exclusive ``flock`` on its ``.open`` file. A process killed while writing
leaves its ``.open`` file behind, possibly ending in a partial record; :func:`repair_open_files`
(run by the next crawl before it writes) cuts each unlocked one back to its last complete
record and gives it its final name, so no finished file ever holds a partial record.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import fcntl
import hashlib
import io
import os
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from .. import __version__, failpoints
from ..atomic_write import sync_directory
from ..fetch.result import FetchResult
from ..parse.links import Outlink
from ..progress import meter
from .digest import payload_digest
from .durable import sync_file

DEFAULT_MAX_SIZE = 1_000_000_000  # Heritrix's default WARC size
MAX_SIZE_VARIABLE = "PYCRAWLER_WARC_MAX_SIZE"
"""For crash tests only: a writer's ``max_size`` when none is given, in place of
:data:`DEFAULT_MAX_SIZE`, so that a crawl of a few hundred pages finishes WARC files while it
runs, not only when it closes (tests/crashpoints.py sets it)."""
OPEN_SUFFIX = ".open"
_DROPPED_RESPONSE_HEADERS = frozenset({"transfer-encoding"})


def warc_date(epoch: float) -> str:
    """WARC 1.1's date: UTC with microseconds."""
    moment = datetime.datetime.fromtimestamp(epoch, datetime.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class WarcWriter:
    """Writes fetches into rotating WARC files under ``directory`` (created if missing)."""

    def __init__(self, directory: str | Path, *, prefix: str = "pycrawler", max_size: int | None = None,
                 compress: bool = True, operator: str | None = None, fsync: bool = False):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.prefix, self.compress, self.operator = prefix, compress, operator
        self.max_size = max_size or int(os.environ.get(MAX_SIZE_VARIABLE) or DEFAULT_MAX_SIZE)
        self.fsync = fsync  # flush() and the rename of a full file reach the disk, not only the OS
        self.files: list[Path] = []  # finished files, in order
        self._serial = 0
        self._file = None
        self._path: Path | None = None
        self._writer: WARCWriter | None = None

    def write_fetch(self, result: FetchResult, *, outlinks: Iterable[Outlink] = (), hop_path: str = "",
                    via: str | None = None) -> None:
        """The request, response and metadata records of one answered fetch (nothing for a failure)."""
        if result.status <= 0:
            return
        writer = self._current()
        date = warc_date(result.started)
        response = self._response(writer, result, date)
        response_id = response.rec_headers.get_header("WARC-Record-ID")
        writer.write_record(response)
        writer.write_record(self._request(writer, result, date, response_id))
        writer.write_record(self._metadata(writer, result, date, response_id, outlinks, hop_path, via))
        if self._file.tell() >= self.max_size:
            self._finish()

    def _response(self, writer: WARCWriter, result: FetchResult, date: str):
        headers = [(k, v) for k, v in result.headers if k.lower() not in _DROPPED_RESPONSE_HEADERS]
        http = StatusAndHeaders(f"{result.status} {result.reason}".rstrip(), headers,
                                protocol=f"HTTP/{result.http_version}")
        warc_headers = {"WARC-Date": date, "WARC-Payload-Digest": payload_digest(result.payload)}
        if result.ip:
            warc_headers["WARC-IP-Address"] = result.ip
        if "lenTrunc" in result.annotations:
            warc_headers["WARC-Truncated"] = "length"
        elif "timeTrunc" in result.annotations:
            warc_headers["WARC-Truncated"] = "time"
        return writer.create_warc_record(result.url, "response", payload=io.BytesIO(result.payload),
                                         length=len(result.payload), http_headers=http,
                                         warc_headers_dict=warc_headers)

    def _request(self, writer: WARCWriter, result: FetchResult, date: str, response_id: str):
        parts = urlsplit(result.url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        # warcio writes a request's status line as given: the whole request line goes there
        http = StatusAndHeaders(f"GET {target} HTTP/1.1", result.request_headers, is_http_request=True)
        return writer.create_warc_record(result.url, "request", payload=io.BytesIO(b""), length=0,
                                         http_headers=http,
                                         warc_headers_dict={"WARC-Date": date, "WARC-Concurrent-To": response_id})

    def _metadata(self, writer: WARCWriter, result: FetchResult, date: str, response_id: str,
                  outlinks: Iterable[Outlink], hop_path: str, via: str | None):
        lines = []
        if via:
            lines.append(f"via: {via}")
        lines.append(f"hopsFromSeed: {hop_path}")
        lines.append(f"fetchTimeMs: {int(result.duration_ms)}")
        lines.extend(f"outlink: {link.url} {link.hop.value} {link.context}" for link in outlinks)
        body = ("\r\n".join(lines) + "\r\n").encode("utf-8", "surrogatepass")
        return writer.create_warc_record(result.url, "metadata", payload=io.BytesIO(body), length=len(body),
                                         warc_content_type="application/warc-fields",
                                         warc_headers_dict={"WARC-Date": date, "WARC-Concurrent-To": response_id})

    def _current(self) -> WARCWriter:
        if self._writer is None:
            self._serial += 1
            stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime()) + f"{int(time.time() * 1000) % 1000:03d}"
            name = f"{self.prefix}-{stamp}-{self._serial:05d}-{os.getpid()}.warc" + (".gz" if self.compress else "")
            self._path = self.directory / name
            self._file = open(self._path.with_name(name + OPEN_SUFFIX), "wb")
            fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)  # released by the kernel if we die
            if self.fsync:
                sync_directory(self.directory)
            self._writer = WARCWriter(self._file, gzip=self.compress, warc_version="1.1")
            info = {"software": f"pycrawler/{__version__}", "format": "WARC File Format 1.1",
                    "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"}
            if self.operator:
                info["operator"] = self.operator
            self._writer.write_record(self._writer.create_warcinfo_record(name, info))
        return self._writer

    def _finish(self) -> None:
        """Close the current file and drop its ``.open`` suffix."""
        sync_file(self._file, self.fsync)
        self._path.with_name(self._path.name + OPEN_SUFFIX).rename(self._path)
        failpoints.hit("warc.file.finished")
        self._file.close()
        if self.fsync:
            sync_directory(self.directory)
        self.files.append(self._path)
        self._file = self._writer = self._path = None

    def flush(self) -> None:
        """Every record written so far reaches the operating system (the disk, with ``fsync``)."""
        if self._file is not None:
            sync_file(self._file, self.fsync)

    def close(self) -> None:
        if self._writer is not None:
            self._finish()

    def abandon(self) -> None:
        """Let go of the current file after a failed write, keeping its ``.open`` name: it may
        end in a partial record, which :func:`repair_open_files` cuts off later."""
        if self._file is not None:
            try:
                self._file.close()
            except OSError:
                pass
            self._file = self._writer = self._path = None

    def __enter__(self) -> WarcWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- repair of what a killed writer left ----------------------------------------------------------

_HEADER_END = b"\r\n\r\n"
_MAX_HEADER = 1 << 16  # a WARC header block longer than this is not one pycrawler (or Heritrix) wrote
_READ_CHUNK = 1 << 20


@dataclasses.dataclass(frozen=True)
class Repair:
    """What :func:`repair` did to one file."""

    path: Path                  # the file's final name (or the .open name, if nothing was kept)
    records: int                # complete records kept
    bytes_cut: int              # bytes of partial record cut off the end
    removed: bool = False       # no complete record at all: the file was deleted

    def line(self) -> str:
        if self.removed:
            return f"{self.path.name}: no complete record, {self.bytes_cut:,} bytes removed"
        return f"{self.path.name}: kept {self.records:,} records, cut {self.bytes_cut:,} bytes"


def complete_records(path: str | Path) -> Iterator[tuple[int, int]]:
    """``(start, end)`` byte offsets of the complete records at the head of a WARC file, in order,
    stopping at the first that is not complete (cut short, or not a record at all).

    A gzip WARC holds one record per gzip member: a member counts when zlib reaches its end
    (trailer and CRC checked) and its content reads back through warcio as one whole record.
    An uncompressed WARC is framed by each record's ``Content-Length``, then read the same way."""
    with open(path, "rb") as file:
        gzipped = file.read(2) == b"\x1f\x8b"
        file.seek(0)
        records = _gzip_records(file) if gzipped else _plain_records(file)
        for start, end, raw in records:
            if not _is_whole_record(raw):
                return
            yield start, end


def _gzip_records(file) -> Iterator[tuple[int, int, bytes]]:
    pending, position = b"", 0
    while True:
        start, inflate, parts = position, zlib.decompressobj(16 + zlib.MAX_WBITS), []
        while not inflate.eof:
            data = pending or file.read(_READ_CHUNK)
            if not data:
                return  # end of file: clean between members, or a member cut short
            pending = b""
            try:
                parts.append(inflate.decompress(data))
            except zlib.error:
                return
            if inflate.eof:
                pending = inflate.unused_data
            position += len(data) - len(pending)
        yield start, position, b"".join(parts)


def _plain_records(file) -> Iterator[tuple[int, int, bytes]]:
    start = 0
    while True:
        file.seek(start)
        head = file.read(_MAX_HEADER)
        header_end = head.find(_HEADER_END)
        if header_end < 0:
            return
        length = _content_length(head[:header_end])
        if length is None:
            return
        end = start + header_end + len(_HEADER_END) + length + len(_HEADER_END)
        file.seek(start)
        raw = file.read(end - start)
        if len(raw) < end - start:
            return
        yield start, end, raw
        start = end


def _content_length(header: bytes) -> int | None:
    for line in header.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            try:
                return int(value.strip())
            except ValueError:
                return None
    return None


def _is_whole_record(raw: bytes) -> bool:
    """``raw`` is exactly one WARC record, its block as long as its ``Content-Length`` says
    and (when it has one) matching its ``WARC-Block-Digest``, followed by the closing CRLFs."""
    try:
        records = ArchiveIterator(io.BytesIO(raw), no_record_parse=True)
        record = next(records)
        declared = int(record.rec_headers.get_header("Content-Length"))
        block = record.raw_stream.read()
    except (ArchiveLoadFailed, StopIteration, TypeError, ValueError):
        return False
    if len(block) != declared or not raw.endswith(block + _HEADER_END):
        return False
    digest = record.rec_headers.get_header("WARC-Block-Digest")
    return digest is None or _digest_matches(digest, block)


def _digest_matches(digest: str, block: bytes) -> bool:
    algorithm, _, value = digest.partition(":")
    if algorithm.lower() != "sha1":
        return True  # pycrawler writes sha1; another algorithm is not ours to judge
    return base64.b32encode(hashlib.sha1(block).digest()).decode() == value.strip().upper()


def repair(path: str | Path, on_read: Callable[[int], object] | None = None) -> Repair:
    """Cut a WARC file back to its last complete record (see :func:`complete_records`).

    A ``.open`` file then takes its final name; one with no complete record is deleted.
    ``on_read(n)`` is told of each ``n`` bytes of whole records read (a progress meter)."""
    path = Path(path)
    end, records = 0, 0
    for start, end in complete_records(path):
        records += 1
        if on_read is not None:
            on_read(end - start)
    size = path.stat().st_size
    with open(path, "r+b") as file:
        if end < size:
            file.truncate(end)
        os.fsync(file.fileno())
    failpoints.hit("warc.repair.cut")
    final = path.with_name(path.name.removesuffix(OPEN_SUFFIX))
    if records == 0:
        path.unlink()
        failpoints.hit("warc.repair.renamed")
        return Repair(path, 0, size, removed=True)
    if final != path:
        path.rename(final)
    failpoints.hit("warc.repair.renamed")
    sync_directory(path.parent)
    return Repair(final, records, size - end)


def repair_open_files(directory: str | Path, prefix: str = "pycrawler", *,
                      progress: bool | None = None) -> list[Repair]:
    """Repair every ``PREFIX-*.open`` WARC file in ``directory`` that no live writer holds,
    with a meter of the bytes read (``progress``: see :func:`pycrawler.progress.wanted`):
    a file left by a kill can hold a gigabyte, read whole."""
    repairs = []
    paths = sorted(Path(directory).glob(f"{prefix}-*.warc*{OPEN_SUFFIX}"))
    if not paths:
        return repairs
    with meter("repairing .open WARC files", total=sum(p.stat().st_size for p in paths), unit="B",
               unit_scale=True, enabled=progress) as bar:
        for path in paths:
            with open(path, "rb") as probe:
                try:
                    fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # another crawl is writing it
                repairs.append(repair(path, bar.update))
    return repairs
