"""Sitemaps (pycrawler/parse/sitemap.py, docs/crawler.md#sitemaps): the protocol's limits and
lies on real bytes, then real crawls of loopback sites whose robots.txt names sitemaps,
counted by the servers: a page only a sitemap names is fetched, an index of gzipped sitemaps
is read, URLs off a sitemap's place are refused, loops of indexes, a lying sitemap and a gzip
bomb end bounded, a seed that is a sitemap is read, and ``--no-sitemaps`` reads none."""

from __future__ import annotations

import gzip
import re
import subprocess

import pytest
from warcio.archiveiterator import ArchiveIterator

from crawl_sites import ROOT, CountingServer, answer, crawl_command, page, write_pages
from pycrawler.parse.sitemap import INDEX, MAX_BYTES, MAX_URLS, TEXT, URLSET, place_of, read_sitemap

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def urlset(urls: list[str], namespace: str = NS) -> str:
    entries = "".join(f"<url><loc>{url}</loc><lastmod>2024-01-01</lastmod></url>\n" for url in urls)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {namespace}>\n{entries}</urlset>\n'


def index(urls: list[str]) -> str:
    entries = "".join(f"<sitemap><loc>{url}</loc></sitemap>\n" for url in urls)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex {NS}>\n{entries}</sitemapindex>\n'


# -- the reader, on bytes ------------------------------------------------------------------------------------
HERE = ("http://example.com/shop/",)


def test_a_urlset_index_and_text_sitemap_list_their_urls_in_order():
    pages = [f"http://example.com/shop/p{i}.html" for i in range(5)]
    read = read_sitemap(urlset(pages).encode(), HERE)
    assert (read.kind, read.urls, read.refused, read.truncated) == (URLSET, pages, 0, False)
    assert read_sitemap(gzip.compress(urlset(pages).encode()), HERE).urls == pages
    assert read_sitemap(urlset(pages, namespace="").encode(), HERE).urls == pages  # no namespace: still one
    maps = ["http://example.com/shop/a.xml.gz", "http://example.com/shop/b.xml"]
    assert (read_sitemap(index(maps).encode(), HERE).kind, read_sitemap(index(maps).encode(), HERE).urls) == (INDEX, maps)
    text = "\n".join([pages[0], "  " + pages[1] + "  ", "not a url", "ftp://example.com/shop/x", pages[2]]) + "\n"
    assert (read_sitemap(text.encode(), HERE).kind, read_sitemap(text.encode(), HERE).urls) == (TEXT, pages[:3])


def test_urls_off_the_sitemaps_place_are_refused():
    """sitemaps.org: a sitemap lists URLs of its own scheme, host and port, under its folder;
    robots.txt naming it allows that host's whole site."""
    listed = ["http://example.com/shop/a.html", "http://EXAMPLE.com:80/shop/b.html", "http://example.com/other.html",
              "https://example.com/shop/c.html", "http://example.com:8080/shop/d.html", "http://evil.test/shop/e",
              "http://example.com/shop/../admin", "http://example.com/shop/%2e%2e/admin",
              "http://user@example.com/shop/f", "http://example.com.evil.test/shop/g"]
    read = read_sitemap(urlset(listed).encode(), (place_of("http://example.com/shop/sitemap.xml"),))
    assert (read.urls, read.refused) == (listed[:2], 8)
    whole_host = (place_of("http://example.com/shop/sitemap.xml"), place_of("http://example.com/robots.txt", True))
    assert read_sitemap(urlset(listed).encode(), whole_host).urls == listed[:3] + listed[6:7]  # /admin: the host's


def test_the_protocols_limits_50000_urls_and_50_mb():
    many = [f"http://example.com/shop/{i}" for i in range(MAX_URLS + 10)]
    read = read_sitemap(gzip.compress(urlset(many).encode()), HERE)
    assert (len(read.urls), read.urls[-1], read.truncated) == (MAX_URLS, many[MAX_URLS - 1], True)
    assert len(read_sitemap(urlset(many[:MAX_URLS]).encode(), HERE).urls) == MAX_URLS
    # 50 MB uncompressed: an entry past it is not read, nor is a text sitemap's line.
    pad = "<!--" + "x" * (MAX_BYTES - 200) + "-->"
    late = urlset(["http://example.com/shop/early"]).replace("</urlset>", pad + "<url><loc>http://example.com/shop/late"
                                                                               "</loc></url></urlset>")
    read = read_sitemap(gzip.compress(late.encode()), HERE)
    assert (read.urls, read.truncated) == (["http://example.com/shop/early"], True)


def bomb(head: bytes, megabytes: int, tail: bytes) -> bytes:
    """A gzip file of ``head``, ``megabytes`` MiB of spaces and ``tail``: a member of 1 MiB of
    spaces (1 kB compressed) repeated, as gzip allows a file of several members."""
    spaces = gzip.compress(b" " * (1 << 20), compresslevel=9)
    return gzip.compress(head) + spaces * megabytes + gzip.compress(tail)


def test_a_gzip_bomb_is_inflated_only_to_the_limit():
    body = bomb(b"<urlset><url><loc>http://example.com/shop/a</loc></url>", 1024,
                b"<url><loc>http://example.com/shop/x</loc></url></urlset>")
    assert len(body) < 2 << 20  # 1 GB in under 2 MB
    read = read_sitemap(body, HERE)
    assert (read.kind, read.urls, read.truncated) == (URLSET, ["http://example.com/shop/a"], True)
    # Members are read on to the end within the limit.
    assert read_sitemap(bomb(b"<urlset>", 2, b"<url><loc>http://example.com/shop/x</loc></url></urlset>"),
                        HERE).urls == ["http://example.com/shop/x"]


@pytest.mark.parametrize("body", [
    b"<!DOCTYPE html><html><body><a href='http://example.com/shop/x'>x</a></body></html>",  # a page, not a sitemap
    b"<html><urlset><url><loc>http://example.com/shop/x</loc></url></urlset></html>",  # a urlset that is not the root
    b"\x00\x01\x02binary\xff\xfe",
    b"",
    gzip.compress(b"<urlset><url><loc>http://example.com/shop/x</loc></url></urlset>")[:-30],  # gzip cut short
], ids=["html", "nested-urlset", "bytes", "empty", "cut-gzip"])
def test_a_body_that_lies_lists_nothing_or_what_came_before_the_break(body):
    read = read_sitemap(body, HERE)
    assert read.urls == [] or read.truncated


def test_entities_and_extensions_are_not_urls():
    """No entity is expanded: a billion laughs ends the read where it starts (libxml2's
    amplification guard; what came before stands), an external entity is not fetched; and an
    image extension's ``<image:loc>`` is not a page."""
    ok = "<url><loc>http://example.com/shop/ok</loc></url>"
    laughs = ('<?xml version="1.0"?><!DOCTYPE u [<!ENTITY a "http://example.com/shop/aaaaaaaaaa">'
              + "".join(f'<!ENTITY {c} "{("&" + p + ";") * 10}">' for p, c in zip("abcdefgh", "bcdefghi"))
              + f"]><urlset>{ok}<url><loc>&i;</loc></url>{ok}</urlset>")
    read = read_sitemap(laughs.encode(), HERE)
    assert (read.urls, read.truncated) == (["http://example.com/shop/ok"], True)
    external = ('<?xml version="1.0"?><!DOCTYPE u [<!ENTITY ext SYSTEM "http://127.0.0.1:9/x">]><urlset>'
                f"<url><loc>&ext;</loc></url>{ok}</urlset>")
    assert read_sitemap(external.encode(), HERE).urls == ["http://example.com/shop/ok"]
    images = ('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/'
              'schemas/sitemap-image/1.1"><url><loc>http://example.com/shop/p</loc><image:image><image:loc>'
              'http://example.com/shop/i.png</image:loc></image:image></url></urlset>')
    assert read_sitemap(images.encode(), HERE).urls == ["http://example.com/shop/p"]


# -- crawls --------------------------------------------------------------------------------------------------
def crawl(seed: str, state, *options: str, timeout: float = 120) -> subprocess.CompletedProcess:
    done = subprocess.run(crawl_command(seed, state, "--delay", "0", *options), cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return done


def log_lines(state) -> dict[str, tuple[str, str, str]]:
    """crawl.log's URL -> (status, hop path, via)."""
    lines = [line.split() for line in (state / "crawl.log").read_text().splitlines()]
    return {f[3]: (f[1], f[4], f[5]) for f in lines}


def summary_figures(stdout: str) -> tuple[int, ...]:
    line = next(line for line in stdout.splitlines() if line.startswith("sitemaps:"))
    return tuple(int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", line))


@pytest.fixture
def site(tmp_path):
    """A site whose robots.txt names an index of two gzipped sitemaps in /maps/ and a text
    sitemap; the pages they list are linked from nowhere. One sitemap also lists a page out of
    its folder and one on another server: both refused."""
    write_pages(tmp_path / "site", {"index.html": ["a.html"], "a.html": ["index.html"], "elsewhere.html": []})
    write_pages(tmp_path / "other", {"x.html": []})
    (tmp_path / "site" / "maps").mkdir()
    (tmp_path / "site" / "deep").mkdir()
    for name in ("hidden1.html", "hidden2.html"):
        (tmp_path / "site" / "maps" / name).write_text(page(name, []))
    (tmp_path / "site" / "deep" / "hidden3.html").write_text(page("hidden3", []))
    moved = {"/moved-sitemap.xml": lambda handler: answer(handler, 301, headers=[("Location", "/maps/s2.xml.gz")])}
    site, other = CountingServer(tmp_path / "site", moved), CountingServer(tmp_path / "other")
    with site as base, other as other_base:
        root = tmp_path / "site"
        (root / "robots.txt").write_text(f"User-agent: *\nAllow: /\n\nSitemap: {base}sitemap_index.xml\n"
                                         f"Sitemap: {base}urls.txt\n")
        (root / "sitemap_index.xml").write_text(index([base + "maps/s1.xml.gz", base + "maps/s2.xml.gz"]))
        (root / "maps" / "s1.xml.gz").write_bytes(gzip.compress(urlset(
            [base + "maps/hidden1.html", base + "elsewhere.html", other_base + "x.html"]).encode()))
        (root / "maps" / "s2.xml.gz").write_bytes(gzip.compress(urlset([base + "maps/hidden2.html"]).encode()))
        (root / "urls.txt").write_text(f"{base}deep/hidden3.html\n{base}a.html\n")
        yield base, site, other


def test_pages_only_sitemaps_name_are_fetched_through_an_index_of_gzipped_sitemaps(site, tmp_path):
    base, server, other = site
    state = tmp_path / "state"
    done = crawl(base + "index.html", state, "--scope", "any", "--warc", str(tmp_path / "warc"))
    counts = server.page_counts()
    assert {path: counts.get(path) for path in ("maps/hidden1.html", "maps/hidden2.html", "deep/hidden3.html")} == \
        dict.fromkeys(("maps/hidden1.html", "maps/hidden2.html", "deep/hidden3.html"), 1)
    assert set(counts.values()) == {1}  # every sitemap and page once
    # Off the sitemap's folder, and on another server: refused, though the scope takes any URL.
    assert "elsewhere.html" not in counts and other.page_counts() == {}
    lines = log_lines(state)
    robots = base + "robots.txt"
    assert lines[base + "sitemap_index.xml"] == ("200", "M", robots)
    assert lines[base + "maps/s1.xml.gz"] == ("200", "MM", base + "sitemap_index.xml")
    assert lines[base + "maps/hidden1.html"] == ("200", "MML", base + "maps/s1.xml.gz")
    assert lines[base + "deep/hidden3.html"] == ("200", "ML", base + "urls.txt")
    # read: the index, two sitemaps and the text one; listed: 2 + 1 + 1 + 2; refused: 2.
    assert summary_figures(done.stdout) == (4, 6, 2, 0)
    # Fetched as pages are: a WARC response record each, the gzipped one as the server sent it.
    responses = {}
    for path in (tmp_path / "warc").glob("*.warc.gz"):
        with path.open("rb") as stream:
            responses |= {record.rec_headers.get_header("WARC-Target-URI"): record.content_stream().read()
                          for record in ArchiveIterator(stream, check_digests="raise")
                          if record.rec_type == "response"}
    assert gzip.decompress(responses[base + "maps/s1.xml.gz"]).startswith(b"<?xml")
    assert {base + "sitemap_index.xml", base + "urls.txt", base + "maps/hidden1.html"} <= responses.keys()


def test_no_sitemaps_reads_none(site, tmp_path):
    base, server, _ = site
    crawl(base + "index.html", tmp_path / "state", "--scope", "any", "--no-sitemaps")
    assert set(server.page_counts()) == {"index.html", "a.html"}


def test_a_seed_that_is_a_sitemap_is_read(site, tmp_path):
    """A seed that answers a sitemap is read as one, and so is the sitemap a seed redirects to."""
    base, server, _ = site
    crawl(base + "maps/s2.xml.gz", tmp_path / "state", "--no-robots")
    assert server.page_counts() == {"maps/s2.xml.gz": 1, "maps/hidden2.html": 1}
    server.counts.clear()
    crawl(base + "moved-sitemap.xml", tmp_path / "moved", "--no-robots")
    assert server.page_counts() == {"moved-sitemap.xml": 1, "maps/s2.xml.gz": 1, "maps/hidden2.html": 1}


def test_loops_of_indexes_and_a_lying_sitemap_end_bounded(tmp_path):
    """robots.txt names an index that lists itself and a second index, which lists the first
    and a third: each is fetched once (the seen table) and the chain ends at two sitemaps (the
    third, an index in an index, is not fetched). A "sitemap" that answers HTML lists nothing,
    its links are not followed."""
    root = tmp_path / "site"
    write_pages(root, {"index.html": [], "lie-target.html": []})
    (root / "loop").mkdir()
    server = CountingServer(root)
    with server as base:
        (root / "robots.txt").write_text(f"Sitemap: {base}loop/a.xml\nSitemap: {base}lie.xml\n")
        (root / "loop" / "a.xml").write_text(index([base + "loop/a.xml", base + "loop/b.xml"]))
        (root / "loop" / "b.xml").write_text(index([base + "loop/a.xml", base + "loop/c.xml"]))
        (root / "loop" / "c.xml").write_text(index([base + "loop/d.xml"]))
        (root / "lie.xml").write_text(page("not a sitemap", [base + "lie-target.html"]))
        crawl(base + "index.html", tmp_path / "state")
        assert server.page_counts() == {"index.html": 1, "loop/a.xml": 1, "loop/b.xml": 1, "lie.xml": 1}


def test_a_sitemap_bomb_ends_bounded(tmp_path):
    """A gzipped sitemap of 1 MB that inflates to 1 GB: inflated to the protocol's 50 MB, its
    entries past that never read, the crawl goes on to the end."""
    root = tmp_path / "site"
    write_pages(root, {"index.html": ["a.html"], "a.html": []})
    server = CountingServer(root)
    with server as base:
        (root / "robots.txt").write_text(f"Sitemap: {base}bomb.xml.gz\n")
        head = urlset([base + "a.html"]).replace("</urlset>", "").encode()
        tail = f"<url><loc>{base}never.html</loc></url></urlset>".encode()
        (root / "bomb.xml.gz").write_bytes(bomb(head, 1024, tail))
        done = crawl(base + "index.html", tmp_path / "state")
        assert server.page_counts() == {"index.html": 1, "a.html": 1, "bomb.xml.gz": 1}
        assert summary_figures(done.stdout) == (1, 1, 0, 1)
