"""Link and field extraction: every link kind with its hop type, base href, meta refresh,
charsets, and hostile input (bad bytes, a 20 MB page, a 100k-character link, deep nesting,
non-fetchable schemes, path-repetition traps). Pages come over HTTP from 127.0.0.1 once, to
show fetch and parse fit together; the rest are parsed from bytes.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from hypothesis import given, settings
from hypothesis import strategies as st

from pycrawler.fetch import FetchConfig, Fetcher
from pycrawler.parse import Hop, ParsePool, PathRepetitionRule, extract
from pycrawler.parse.html import FLATTEN_DEPTH, MAX_FIELD_LENGTH, refresh_target
from pycrawler.records import CrawlUrl

HTML = {"Content-Type": "text/html"}
BASE = "http://example.com/dir/page.html"

EVERY_KIND = b"""<!doctype html>
<html><head>
<title>  Every
  kind  </title>
<meta name="description" content="All the links">
<meta name="AUTHOR" content="A. Writer">
<meta http-equiv="refresh" content="10; URL='/refreshed'">
<link rel="stylesheet" href="/style.css">
<link rel="alternate" href="/feed.xml">
</head><body>
<a href="a.html">a</a>
<a href="/abs#section">abs</a>
<a href="https://other.example/x?y=1">other</a>
<img src="img.png"><script src="/app.js"></script>
<iframe src="frame.html"></iframe>
<map><area href="area.html"></map>
<a href="javascript:alert(1)">js</a><a href="data:text/html,hi">data</a><a href="mailto:me@example.com">m</a>
<a href="ftp://example.com/f">ftp</a><a href="#top">top</a><a href="">empty</a>
</body></html>"""


def links(document):
    return [(link.url, link.hop.value, link.context) for link in document.outlinks]


def test_every_link_kind_with_its_hop_type_in_document_order():
    document = extract(EVERY_KIND, BASE, HTML)
    assert links(document) == [
        ("http://example.com/refreshed", "R", "meta/@content"),
        ("http://example.com/style.css", "E", "link/@href"),
        ("http://example.com/feed.xml", "L", "link/@href"),
        ("http://example.com/dir/a.html", "L", "a/@href"),
        ("http://example.com/abs", "L", "a/@href"),              # fragment dropped
        ("https://other.example/x?y=1", "L", "a/@href"),
        ("http://example.com/dir/img.png", "E", "img/@src"),
        ("http://example.com/app.js", "E", "script/@src"),
        ("http://example.com/dir/frame.html", "E", "iframe/@src"),
        ("http://example.com/dir/area.html", "L", "area/@href"),
    ]  # javascript:, data:, mailto:, ftp:, '#top' and '' are dropped
    assert document.title == "Every kind"
    assert document.description == "All the links"
    assert document.author == "A. Writer"
    assert document.char_set == "utf-8"


def test_embeds_can_be_left_out():
    document = extract(EVERY_KIND, BASE, HTML, embeds=False)
    assert [url for url, _, context in links(document) if context in ("img/@src", "script/@src")] == []
    assert ("http://example.com/dir/frame.html", "E", "iframe/@src") in links(document)  # frames are pages


def test_frames_in_a_frameset():
    page = b'<html><frameset><frame src="left.html"><frame src="right.html"></frameset></html>'
    assert [(url, hop) for url, hop, _ in links(extract(page, BASE, HTML))] == [
        ("http://example.com/dir/left.html", "E"), ("http://example.com/dir/right.html", "E")]


def test_base_href_applies_to_every_relative_link():
    page = b'<head><base href="http://cdn.example/assets/"></head><a href="x.html">x</a><a href="/y">y</a>'
    document = extract(page, BASE, HTML)
    assert document.base_url == "http://cdn.example/assets/"
    assert [url for url, _, _ in links(document)] == ["http://cdn.example/assets/x.html", "http://cdn.example/y"]


@pytest.mark.parametrize("content, target", [
    ("0; url=/next", "/next"), ("5;URL='next.html'", "next.html"), ('3; url="a b"', "a b"),
    ("0", None), ("  7 ,  url = /x ", "/x"), ("/bare", "/bare"),
])
def test_meta_refresh_content_forms(content, target):
    assert refresh_target(content) == target


def test_charset_from_the_content_type_header_wins_over_meta():
    page = '<meta charset="utf-8"><title>Señor</title>'.encode("iso-8859-15")
    document = extract(page, BASE, {"Content-Type": "text/html; charset=ISO-8859-15"})
    assert document.char_set == "iso8859-15" and document.title == "Señor"


def test_charset_from_meta_when_the_header_has_none():
    page = '<meta http-equiv="Content-Type" content="text/html; charset=windows-1251"><title>Привет</title>'
    document = extract(page.encode("cp1251"), BASE, HTML)
    assert document.char_set == "cp1251" and document.title == "Привет"


def test_latin1_labels_decode_as_windows_1252_like_browsers():
    page = b'<meta charset="iso-8859-1"><title>\x93quoted\x94</title>'
    assert extract(page, BASE, HTML).title == "\u201cquoted\u201d"


def test_undeclared_bytes_that_are_not_utf8_fall_back_to_windows_1252():
    document = extract(b"<title>caf\xe9</title>", BASE, HTML)
    assert document.char_set == "cp1252" and document.title == "café"


def test_invalid_bytes_in_a_declared_charset_are_replaced_not_fatal():
    page = b'<meta charset="utf-8"><title>ok \xff\xfe bad</title><a href="/p\xc3">x</a>'
    document = extract(page, BASE, HTML)
    assert document.title == "ok \ufffd\ufffd bad"
    assert len(document.outlinks) == 1 and document.outlinks[0].url.startswith("http://example.com/p")


def test_an_unknown_charset_label_is_ignored():
    document = extract(b'<meta charset="no-such-charset"><title>x</title>', BASE, HTML)
    assert document.char_set == "utf-8" and document.title == "x"


def test_a_utf16_bom_is_believed():
    page = "\ufeff<title>wide</title><a href='w.html'>w</a>".encode("utf-16-le")
    document = extract(page, BASE, {"Content-Type": "text/html; charset=iso-8859-1"})  # the BOM wins
    assert document.char_set == "utf-16-le" and document.title == "wide"


def test_non_html_is_recorded_not_parsed():
    document = extract(b'%PDF-1.4 <a href="x">', BASE, {"Content-Type": "application/pdf"})
    assert document.mime_type == "application/pdf" and not document.is_html
    assert document.outlinks == [] and document.title is None


def test_a_page_without_content_type_is_sniffed():
    assert extract(b"<!DOCTYPE html><a href=x>x</a>", BASE, {}).is_html
    assert not extract(b"\x89PNG\r\n", BASE, {}).is_html


def test_a_20_mb_page_parses_and_its_links_are_capped():
    row = b'<tr><td><a href="/item/%d">item</a></td><td>' + b"filler text " * 20 + b"</td></tr>\n"
    page = b"<html><title>big</title><table>" + b"".join(row.replace(b"%d", b"%d" % i) for i in range(70_000))
    page += b"</table></html>"
    assert len(page) > 20_000_000
    start = time.perf_counter()
    document = extract(page, BASE, HTML)
    elapsed = time.perf_counter() - start
    assert document.title == "big"
    assert len(document.outlinks) == 6000  # Heritrix's maxOutlinks
    assert document.outlinks[-1].url == "http://example.com/item/5999"
    assert elapsed < 30


def test_a_100k_character_link_is_dropped_and_its_neighbours_kept():
    page = b'<a href="/before">b</a><a href="/' + b"x" * 100_000 + b'">long</a><a href="/after">a</a>'
    assert [url for url, _, _ in links(extract(page, BASE, HTML))] == [
        "http://example.com/before", "http://example.com/after"]


def test_huge_title_is_cut():
    document = extract(b"<title>" + b"t" * 1_000_000 + b"</title>", BASE, HTML)
    assert len(document.title) == MAX_FIELD_LENGTH


@pytest.mark.parametrize("depth", [FLATTEN_DEPTH - 10, 200_000])
def test_deep_nesting_keeps_every_link_in_bounded_time(depth):
    page = (b"<html><head><title>deep</title></head><body><a href='/top'>top</a>" + b"<div><span>" * (depth // 2)
            + b"<a href='/deep'>deep</a><img src='/deep.png'>")
    start = time.perf_counter()
    document = extract(page, BASE, HTML)
    assert time.perf_counter() - start < 5
    assert document.title == "deep"
    assert [url for url, _, _ in links(document)] == [
        "http://example.com/top", "http://example.com/deep", "http://example.com/deep.png"]


def test_path_repetition_rule_rejects_calendar_style_traps():
    rule = PathRepetitionRule(max_repetitions=2)
    assert rule.rejects("http://example.com/a/a/a/page.html")           # 'a/' three times in a row
    assert rule.rejects("http://example.com/cal/2024/01/2024/01/2024/01/")  # a two-segment run, three times
    assert not rule.rejects("http://example.com/a/a/page.html")          # twice is allowed
    assert not rule.rejects("http://example.com/a/b/a/b/c/")
    assert not rule.rejects("http://example.com/x/x/x")                  # the last segment is a name, not a dir
    assert not PathRepetitionRule(0).rejects("http://example.com/a/a/a/a/")  # 0 switches it off
    long_path = "http://example.com/" + "/".join(map(str, range(700))) + "/"
    start = time.perf_counter()
    assert not rule.rejects(long_path)
    assert time.perf_counter() - start < 1


def test_document_fields_are_recorded_on_the_crawl_url():
    record = CrawlUrl(ori_url=BASE)
    extract(EVERY_KIND, BASE, {"Content-Type": "text/html; charset=utf-8"}).record_on(record)
    assert (record.title, record.description, record.author, record.char_set, record.type) == (
        "Every kind", "All the links", "A. Writer", "utf-8", "text/html")
    assert record.url_references[0] == "http://example.com/refreshed"


def test_fetched_pages_parse_in_the_spawned_pool_while_the_loop_keeps_running():
    async def page(request):
        return web.Response(body=EVERY_KIND, content_type="text/html")

    async def scenario():
        app = web.Application()
        app.router.add_get("/page.html", page)
        server = TestServer(app, host="127.0.0.1")
        await server.start_server()
        try:
            async with Fetcher(FetchConfig(contact_url="https://example.org/contact")) as fetcher:
                result = await fetcher.fetch(str(server.make_url("/page.html")))
            with ParsePool(workers=1) as pool:
                ticks = 0

                async def ticker():  # counts event-loop turns while the worker parses
                    nonlocal ticks
                    while True:
                        ticks += 1
                        await asyncio.sleep(0)

                task = asyncio.create_task(ticker())
                document = await pool.extract(result.body, result.url, result.header_map)
                task.cancel()
                return result, document, ticks
        finally:
            await server.close()

    result, document, ticks = asyncio.run(scenario())
    assert document.title == "Every kind"
    assert document.outlinks[0].hop is Hop.REDIRECT
    assert document.outlinks[1].url == result.url.replace("/page.html", "/style.css")
    assert ticks > 1  # the loop ran while the worker process parsed


def test_the_pool_refuses_fork():
    with pytest.raises(ValueError):
        ParsePool(start_method="fork")


def test_the_per_page_resolver_agrees_with_urljoin_on_every_link_form():
    from pycrawler.parse import LinkResolver, absolute_url

    bases = ["http://h/a/b/c.html", "http://h", "http://h/a/b/?q=1", "https://u@h:81/x/y", "http://h/a/./b/../c/",
             "http://h/a/b/c/d/"]
    links = ["x.html", "../x.html", "../../../../x", "/abs/./p/../q", "?z=2", "./", ".", "..", "x?y=../z", "x#f",
             "a/b/../../c", "..x/y", ".hidden/x", "/", "//other/x", "HTTP://X/y", "mailto:a", "x:y", "a b/é", "?",
             "/a?b=/../c", "../", "a/./b/.", "/..", "x/..?q#f", "../../a/../b", "../../../x.y/z.html", "../..",
             # absolute links, the plain ones among them taken without urljoin
             "http://h/x", "https://H.example:8443/a/../b?q=1#f", "http://h", "http://h?q", "http://h/a?", "http://h/a#",
             "http://h/a;p", "http://h/a;", "http://h/a?x;y", "http://h:65535/", "http://h:65536/", "http://h:/x",
             "http://u@h/x", "http://[::1]/x", "http://h/é x", "http://h/a\\b", "https://h//x//y", "http://h:08/"]
    for base in bases:
        resolve = LinkResolver(base)
        assert [resolve(link) for link in links] == [absolute_url(base, link) for link in links], base


URL_PIECES = st.sampled_from(["http://", "https://", "HTTP://", "h", "H.x", "127.0.0.1", ":", "80", "99999", "@", "/",
                              "//", "a", ".", "..", ";", "?", "=", "&", "#", "%2F", "é", " ", "[", "]", "\\"])


@settings(max_examples=3000, deadline=None)
@given(st.lists(URL_PIECES, max_size=12).map("".join), st.sampled_from(["http://h/a/b.html", "https://g:81/x/"]))
def test_the_per_page_resolver_agrees_with_urljoin_on_absolute_links(tail, base):
    from pycrawler.parse import LinkResolver, absolute_url

    for link in ("http://" + tail, "https://" + tail):
        assert LinkResolver(base)(link) == absolute_url(base, link), link
