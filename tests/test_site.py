"""The loopback site the crawl benchmark and demo crawl, and the ground truth a crawl is scored against."""

from __future__ import annotations

import os
import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from conftest import missing
from pycrawler.errors import BadInput, SetupError
from pycrawler.static_site.ground_truth import coverage, page_for_url, reachable_pages
from pycrawler.static_site.server import StaticSite, find_nginx

SERVERS = [
    "nginx",
    "python",
]


def require(server: str) -> None:
    if server == "nginx" and find_nginx() is None:
        missing("nginx is not installed (scripts/setup installs nginx-light)")


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def page(*links: str) -> str:
    return "<!DOCTYPE html><html><head><title>t</title></head><body>" + "".join(links) + "</body></html>"


@pytest.fixture
def small_site(tmp_path) -> Path:
    """A site with known reachability (see test_ground_truth_follows_every_same_host_link)."""
    root = tmp_path / "site"
    write(root, {
        "index.html": page(
            '<a href="a.html">a</a>',
            '<a href="b.html?page=2#part">b, with a query and a fragment</a>',
            '<a href="sub">a folder, without its slash</a>',
            '<a href="with%20space.html">percent-encoded</a>',
            '<iframe src="framed.html"></iframe>',
            '<link rel="next" href="next.html">',
            '<area href="mapped.html">',
            '<a href="http://example.com/elsewhere.html">another host</a>',
            '<a href="missing.html">a dead link</a>',
            '<a href="../outside.html">above the root</a>',
            '<a href="notes.txt">not a page</a>',
            '<a href="javascript:void(0)">script</a>',
            '<img src="picture.html">',  # an embed, not a link a page crawl follows
        ),
        "a.html": page('<a href="index.html">back</a>', '<a href="/deep/one.html">absolute path</a>'),
        "b.html": page(),
        "abs-only.html": page(),
        "sub/index.html": page('<a href="../c.htm">up</a>'),
        "c.htm": page(),
        "with space.html": page(),
        "framed.html": page(),
        "next.html": page(),
        "mapped.html": page(),
        "deep/one.html": page('<a href="two.html">two</a>'),
        "deep/two.html": page('<a href="http://127.0.0.1/abs-only.html">same host, absolute</a>'),
        "notes.txt": '<a href="from-text.html">not a link: this is not HTML</a>',
        "from-text.html": page(),
        "picture.html": page(),
        "orphan.html": page('<a href="only-from-orphan.html">x</a>'),
        "only-from-orphan.html": page(),
    })
    write(tmp_path, {"outside.html": page()})
    return root


def fetch(url: str) -> tuple[int, str, bytes, str]:
    """(status, content type, body, final URL) of a GET, following redirects."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read(), response.url
    except urllib.error.HTTPError as error:
        return error.code, "", b"", url


@pytest.mark.parametrize("server", SERVERS)
def test_serves_the_directory_on_loopback_and_stops_cleanly(small_site, server):
    require(server)
    site = StaticSite(small_site, server=server)
    with site as base_url:
        assert site.kind == server
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/")
        status, content_type, body, _ = fetch(base_url + "index.html")
        assert (status, content_type.partition(";")[0]) == (200, "text/html")
        assert body == (small_site / "index.html").read_bytes()
        status, _, body, final = fetch(base_url + "sub")  # redirected to the folder's index
        assert (status, final, body) == (200, base_url + "sub/", (small_site / "sub/index.html").read_bytes())
        assert fetch(base_url + "missing.html")[0] == 404
        assert fetch(base_url + "../outside.html")[2] != (small_site.parent / "outside.html").read_bytes()
        port = int(base_url.rstrip("/").rpartition(":")[2])
        pid = site.pid
    assert site.url is None and site.pid is None
    if server == "nginx":
        with pytest.raises(ProcessLookupError):  # the master is gone and reaped
            os.kill(pid, 0)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    site.stop()  # a second stop is harmless


@pytest.mark.parametrize("server", SERVERS)
def test_serves_every_ground_truth_page(small_site, server):
    require(server)
    """The file walk and the server agree: each page the truth names is served from its URL."""
    with StaticSite(small_site, server=server) as base_url:
        for path in reachable_pages(small_site, base_url=base_url):
            status, _, body, _ = fetch(base_url + urllib.request.pathname2url(path))
            assert status == 200 and body == (small_site / path).read_bytes(), path


def test_refuses_what_it_cannot_serve(tmp_path):
    with pytest.raises(BadInput):
        StaticSite(tmp_path / "absent")
    with pytest.raises(BadInput):
        StaticSite(tmp_path, server="apache")


def test_nginx_required_but_absent_is_a_setup_error(tmp_path, monkeypatch):
    monkeypatch.setattr("pycrawler.static_site.server.find_nginx", lambda: None)
    with pytest.raises(SetupError):
        StaticSite(tmp_path, server="nginx")
    assert StaticSite(tmp_path).kind == "python"  # auto falls back


def test_ground_truth_follows_every_same_host_link(small_site):
    assert reachable_pages(small_site) == {
        "index.html", "a.html", "b.html", "sub/index.html", "c.htm", "with space.html", "framed.html",
        "next.html", "mapped.html", "deep/one.html", "deep/two.html", "abs-only.html",
    }
    # Not reached: other hosts, dead links, files above the root, links inside a text file,
    # image sources, and pages linked only from an unlinked page.


def test_ground_truth_starts_from_any_seed_page(small_site):
    assert reachable_pages(small_site, "orphan.html") == {"orphan.html", "only-from-orphan.html"}
    with pytest.raises(BadInput):
        reachable_pages(small_site, "notes.txt")


def test_absolute_links_count_only_on_the_served_host_and_port(small_site):
    truth = reachable_pages(small_site, "deep/two.html", base_url="http://127.0.0.1:8080/")
    assert truth == {"deep/two.html"}  # its link names port 80, another server


def test_coverage_maps_fetched_urls_to_pages(small_site):
    base = "http://127.0.0.1:8080/"
    truth = reachable_pages(small_site, base_url=base)
    fetched = [base, base + "a.html?x=1", base + "sub/", base + "with%20space.html", base + "notes.txt",
               base + "orphan.html", "http://example.com/b.html"]
    share, hit = coverage(fetched, truth, small_site, base)
    assert hit == 4  # index.html (as /), a.html, sub/index.html, 'with space.html'
    assert share == pytest.approx(4 / len(truth))
    assert page_for_url(small_site, base + "a.html/", base) is None  # a file is no folder
