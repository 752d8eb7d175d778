"""crawl.log lines in Heritrix's format, WARC files readable by warcio (rotation included),
the link trace and the progress line. Fetches come from a server on 127.0.0.1 started here.
"""

from __future__ import annotations

import asyncio
import gzip
import io

from aiohttp import web
from aiohttp.test_utils import TestServer
from warcio.archiveiterator import ArchiveIterator

from pycrawler.crawl.crawllog import CrawlLog, format_line, truncate_mime
from pycrawler.crawl.digest import payload_digest
from pycrawler.crawl.progress import Progress, human_bytes
from pycrawler.crawl.trace import TraceWriter
from pycrawler.crawl.warc import OPEN_SUFFIX, WarcWriter
from pycrawler.fetch import FetchConfig, Fetcher, status
from pycrawler.parse import extract

PAGE = b"<html><title>p</title><a href='/next'>n</a><img src='/i.png'></html>"


def fetch_pages(paths: list[str]):
    async def scenario():
        async def plain(request):
            return web.Response(body=PAGE, content_type="text/html", charset="utf-8")

        async def gzipped(request):
            return web.Response(body=gzip.compress(PAGE * 50), headers={"Content-Type": "text/html",
                                                                         "Content-Encoding": "gzip"})

        async def chunked(request):
            response = web.StreamResponse(headers={"Content-Type": "text/plain"})
            response.enable_chunked_encoding()
            await response.prepare(request)
            await response.write(b"part one, ")
            await response.write(b"part two")
            return response

        app = web.Application()
        for path, handler in (("/p{n}", plain), ("/gzip", gzipped), ("/chunked", chunked)):
            app.router.add_get(path, handler)
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        try:
            async with Fetcher(FetchConfig(contact_url="https://example.org/contact")) as fetcher:
                return [await fetcher.fetch(str(server.make_url(p))) for p in paths]
        finally:
            await server.close()

    return asyncio.run(scenario())


# -- crawl.log ------------------------------------------------------------------------------------

def test_crawl_log_line_has_heritrix_columns_and_padding():
    line = format_line(status=200, url="http://example.com/a", hop_path="LLE", via="http://example.com/",
                       size=5120, content_type="text/html; charset=UTF-8", worker=7,
                       fetch_began=1714564800.123, duration_ms=42.9, digest="sha1:ABC", annotations=["lenTrunc"],
                       logged_at=1714564800.2)
    assert line == ("2024-05-01T12:00:00.200Z   200       5120 http://example.com/a LLE http://example.com/ "
                    "text/html #007 20240501120000123+42 sha1:ABC - lenTrunc\n")


def test_crawl_log_line_of_a_failed_seed_uses_placeholders():
    line = format_line(status=status.CONNECT_FAILED, url="http://example.com/", logged_at=0.0)
    assert line == "1970-01-01T00:00:00.000Z    -2          - http://example.com/ - - no-type #000 - - - -\n"
    assert len(line.split()) == 12


def test_mime_type_is_truncated_as_heritrix_does():
    assert truncate_mime("text/html;charset=utf-8") == "text/html"
    assert truncate_mime("multipart/x, y") == "multipart/x"
    assert truncate_mime("") == truncate_mime(None) == "no-type"


def test_crawl_log_of_real_fetches(tmp_path):
    ok, gzipped = fetch_pages(["/p1", "/gzip"])
    with CrawlLog(tmp_path / "crawl.log") as log:
        log.log_fetch(ok, hop_path="", worker=1)
        log.log_fetch(gzipped, hop_path="L", via=ok.url, worker=2)
        log.log(status=status.ROBOTS_PRECLUDED, url="http://example.com/private", hop_path="L", via=ok.url)
    lines = (tmp_path / "crawl.log").read_text().splitlines()
    first, second, third = (line.split() for line in lines)
    assert first[1:8] == ["200", str(len(PAGE)), ok.url, "-", "-", "text/html", "#001"]
    assert first[9] == payload_digest(ok.payload)
    assert second[1:8] == ["200", str(len(gzipped.payload)), gzipped.url, "L", ok.url, "text/html", "#002"]
    assert third[1] == "-9998" and third[2] == "-"
    assert all(len(fields) == 12 for fields in (first, second, third))


# -- WARC -----------------------------------------------------------------------------------------

def read_records(path):
    with open(path, "rb") as stream:
        return [(r.rec_type, r.rec_headers, r.http_headers, r.content_stream().read())
                for r in ArchiveIterator(stream, check_digests="raise")]


def test_warc_records_of_a_fetch_read_back_with_warcio(tmp_path):
    ok, gzipped, chunked = fetch_pages(["/p1", "/gzip", "/chunked"])
    document = extract(ok.body, ok.url, ok.header_map)
    with WarcWriter(tmp_path / "warcs", operator="tests") as writer:
        writer.write_fetch(ok, outlinks=document.outlinks, hop_path="L", via="http://127.0.0.1/seed")
        writer.write_fetch(gzipped)
        writer.write_fetch(chunked)
    (path,) = writer.files
    assert path.name.endswith(".warc.gz") and not list(path.parent.glob("*" + OPEN_SUFFIX))
    records = read_records(path)
    assert [r[0] for r in records] == ["warcinfo"] + ["response", "request", "metadata"] * 3

    info = records[0][3].decode()
    assert "software: pycrawler/" in info and "operator: tests" in info
    _, response, http, body = records[1]
    assert response.get_header("WARC-Target-URI") == ok.url
    assert response.get_header("WARC-IP-Address") == "127.0.0.1"
    assert response.get_header("WARC/1.1") is None and records[1][1].protocol == "WARC/1.1"
    assert http.get_statuscode() == "200" and body == PAGE
    _, request, request_http, _ = records[2]
    assert request.get_header("WARC-Concurrent-To") == response.get_header("WARC-Record-ID")
    assert request_http.protocol == "GET" and request_http.statusline == "/p1 HTTP/1.1"
    assert request_http.get_header("User-Agent").startswith("pycrawler/")
    metadata = records[3][3].decode()
    assert "via: http://127.0.0.1/seed" in metadata and "hopsFromSeed: L" in metadata
    assert f"outlink: {ok.url.replace('/p1', '/next')} L a/@href" in metadata
    assert f"outlink: {ok.url.replace('/p1', '/i.png')} E img/@src" in metadata

    # gzip: stored as sent, and warcio's reader decodes it back
    assert records[4][2].get_header("Content-Encoding") == "gzip" and records[4][3] == PAGE * 50
    # chunked: stored de-chunked, without the header that would make readers de-chunk again
    assert records[7][2].get_header("Transfer-Encoding") is None and records[7][3] == b"part one, part two"


def test_warc_files_rotate_by_size_and_every_file_reads_on_its_own(tmp_path):
    results = fetch_pages([f"/p{i}" for i in range(12)])
    with WarcWriter(tmp_path, prefix="rot", max_size=3000) as writer:
        for result in results:
            writer.write_fetch(result)
    assert len(writer.files) > 2
    assert len({p.name for p in writer.files}) == len(writer.files)
    responses = []
    for path in writer.files:
        records = read_records(path)
        assert records[0][0] == "warcinfo"
        responses += [r[1].get_header("WARC-Target-URI") for r in records if r[0] == "response"]
    assert responses == [r.url for r in results]  # every fetch once, in order, across the files


def test_failed_fetches_write_no_warc_records(tmp_path):
    (result,) = fetch_pages(["/p1"])
    result.status = status.CONNECT_LOST
    with WarcWriter(tmp_path) as writer:
        writer.write_fetch(result)
    assert writer.files == [] and list(tmp_path.iterdir()) == []


# -- trace and progress ---------------------------------------------------------------------------

def test_trace_keeps_every_link_in_order_duplicates_included(tmp_path):
    with TraceWriter(tmp_path / "trace.txt") as trace:
        trace.write(["http://a/1", "http://a/2"])
        trace.write(["http://a/1", "http://a/é"])
    assert (tmp_path / "trace.txt").read_text(encoding="utf-8").splitlines() == [
        "http://a/1", "http://a/2", "http://a/1", "http://a/é"]
    assert trace.count == 4


def test_progress_counts_pages_and_draws_the_gauges_under_them():
    clock = [0.0]
    out = io.StringIO()
    progress = Progress(out, interval=1.0, enabled=True, clock=lambda: clock[0])
    for _ in range(30):
        progress.fetched(200, 10_000)
    progress.fetched(status.TIMEOUT, 0)
    progress.update(queues_ready=3, queues_snoozed=4, pending=1200, seen=5000)
    clock[0] = 0.5
    progress.tick()
    assert "queues" not in out.getvalue()  # not yet: less than the interval
    clock[0] = 2.0
    progress.tick()
    assert "150 kB/s  queues 3 ready 4 snoozed  URLs 1,200 pending 5,000 seen  300 kB  1 errors" in out.getvalue()
    progress.close()
    assert "crawl: 30 pages [" in out.getvalue()  # the page counter: answered fetches only
    assert out.getvalue().endswith("\n")


def test_progress_is_quiet_when_the_stream_is_not_a_terminal():
    out = io.StringIO()  # isatty() is False
    progress = Progress(out, interval=0)
    progress.fetched(200, 1)
    progress.tick()
    progress.close()
    assert out.getvalue() == ""


def test_human_bytes():
    assert [human_bytes(n) for n in (999, 1500, 2_500_000, 3e12)] == ["999 B", "1.5 kB", "2.5 MB", "3.0 TB"]
