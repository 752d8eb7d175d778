"""Hostile sites: the crawl goes on, stays bounded and records what happened.

One site holds every trap: pages of many MB, deep nesting, invalid bytes, a redirect loop and
an endless redirect chain, a 100,000-character link, javascript:/data:/mailto: links, a
calendar with an infinite URL space, a path-repetition trap, a slow page, a link to a dead
port, and a 5xx storm. One crawl of it must finish, fetch every ordinary page, and leave a
record and a crawl.log line for each URL it tried.
"""

from __future__ import annotations

import socket
import time

from crawl_sites import CountingServer, answer, fetched_records, page, run_crawl


def dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def calendar(handler):
    month = int(handler.path.rpartition("=")[2] or 0)
    answer(handler, 200, page(f"month {month}", [f"/cal?m={month + 1}", f"/cal?m={month - 1}"]).encode())


def redirect(handler):
    name = handler.path.rpartition("/")[2]
    target = {"loop-a": "/redirect/loop-b", "loop-b": "/redirect/loop-a"}.get(name)
    if target is None:  # an endless chain: /redirect/chain0 -> chain1 -> ...
        target = f"/redirect/chain{int(name.removeprefix('chain')) + 1}"
    answer(handler, 302, b"", headers=[("Location", target)])


def slow(handler):
    time.sleep(1.5)
    answer(handler, 200, page("slow", ["/ok.html"]).encode())


def storm(handler):
    answer(handler, 503 if "a" in handler.path else 500, b"busy")


def test_a_site_full_of_traps_is_crawled_to_the_end(tmp_path):
    root = tmp_path / "site"
    (root / "a" / "a").mkdir(parents=True)
    huge_link = "/x" * 50_000
    links = ["big.html", "deep.html", "bytes.html", "/redirect/loop-a", "/redirect/chain0", huge_link,
             "javascript:alert(1)", "data:text/html,<b>x</b>", "mailto:me@example.org", "/cal?m=0",
             "a/a/page.html", "/slow", "/storm/a", "/storm/b", "ok.html"]
    dead = f"http://127.0.0.1:{dead_port()}/gone.html"
    (root / "index.html").write_text(page("traps", links + [dead]))
    (root / "big.html").write_text(page("big", ["ok.html"], "<p>" + "x" * 8_000_000 + "</p>"))
    (root / "deep.html").write_text(page("deep", [], "<div>" * 50_000 + '<a href="ok.html">deep</a>'))
    (root / "bytes.html").write_bytes(b"<title>bad \xff\xfe bytes</title>\x00\x80<a href='ok.html'>x</a>")
    (root / "ok.html").write_text(page("ok", []))
    (root / "a" / "a" / "page.html").write_text(page("repeat", ["a/page.html"]))  # /a/a/a/... next
    routes = {"/cal": calendar, "/redirect/": redirect, "/slow": slow, "/storm/": storm}
    server = CountingServer(root, routes)
    with server as base:
        started = time.monotonic()
        done = run_crawl(base + "index.html", tmp_path / "state", "--delay", "0", "--queue-policy", "bkdr",
                         "--max-depth", "6", "--scope", "domain", timeout=90)
        took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    counts = server.page_counts()
    records = fetched_records(tmp_path / "state")

    # Every ordinary page, the big one and the odd ones, fetched once and parsed.
    for name in ("index.html", "big.html", "deep.html", "bytes.html", "ok.html", "a/a/page.html", "slow"):
        assert counts[name] == 1, name
    assert records[base + "big.html"].title == "big" and records[base + "big.html"].file_size > 8_000_000
    assert base + "ok.html" in records[base + "deep.html"].url_references  # the link under 50,000 divs
    assert records[base + "bytes.html"].title.startswith("bad") and records[base + "bytes.html"].status_code == 200
    assert records[base + "slow"].status_code == 200
    # The 100,000-character link and the non-http links are dropped, never fetched.
    assert not any(len(path) > 2083 for path in counts)
    assert not any(url.startswith(("javascript:", "data:", "mailto:")) for url in records)
    # The path-repetition trap stops at /a/a/a/.
    assert "a/a/a/page.html" not in counts
    # A redirect loop is fetched once each way; a chain stops after 5 redirects in a row.
    assert counts["redirect/loop-a"] == counts["redirect/loop-b"] == 1
    assert records[base + "redirect/loop-a"].status_code == 302
    assert max(int(p.removeprefix("redirect/chain")) for p in counts if p.startswith("redirect/chain")) == 5
    # The calendar stops at the depth limit (index at 0, m=0 at 1: months -5..5 at most).
    months = {p for p in counts if p.startswith("cal?")}
    assert 1 < len(months) <= 11
    # The dead port (its robots.txt cannot be fetched: -61, as in Heritrix) and the 5xx storm
    # are recorded with their codes, retried, then given up.
    assert records[dead].status_code == -61
    assert records[base + "storm/a"].status_code == 503 and records[base + "storm/b"].status_code == 500
    assert counts["storm/a"] == counts["storm/b"] == 4  # the first try and three retries
    log = (tmp_path / "state" / "crawl.log").read_text().splitlines()
    assert sum(1 for line in log if f" {dead} " in line and line.split()[1] == "-61") == 4
    assert len(log) == sum(counts.values()) + 4  # every attempt, the dead port's too
    assert took < 60
