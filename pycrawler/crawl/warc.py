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
"""

from __future__ import annotations

import datetime
import io
import os
import time
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from .. import __version__
from ..fetch.client import FetchResult
from ..parse.links import Outlink
from .digest import payload_digest

DEFAULT_MAX_SIZE = 1_000_000_000  # Heritrix's default WARC size
OPEN_SUFFIX = ".open"
_DROPPED_RESPONSE_HEADERS = frozenset({"transfer-encoding"})


def warc_date(epoch: float) -> str:
    """WARC 1.1's date: UTC with microseconds."""
    moment = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class WarcWriter:
    """Writes fetches into rotating WARC files under ``directory`` (created if missing)."""

    def __init__(self, directory: str | Path, *, prefix: str = "pycrawler", max_size: int = DEFAULT_MAX_SIZE,
                 compress: bool = True, operator: str | None = None):
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.prefix, self.max_size, self.compress, self.operator = prefix, max_size, compress, operator
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
            self._writer = WARCWriter(self._file, gzip=self.compress, warc_version="1.1")
            info = {"software": f"pycrawler/{__version__}", "format": "WARC File Format 1.1",
                    "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"}
            if self.operator:
                info["operator"] = self.operator
            self._writer.write_record(self._writer.create_warcinfo_record(name, info))
        return self._writer

    def _finish(self) -> None:
        """Close the current file and drop its ``.open`` suffix."""
        self._file.close()
        self._path.with_name(self._path.name + OPEN_SUFFIX).rename(self._path)
        self.files.append(self._path)
        self._file = self._writer = self._path = None

    def close(self) -> None:
        if self._writer is not None:
            self._finish()

    def __enter__(self) -> "WarcWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
