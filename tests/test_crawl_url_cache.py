"""``pycrawler crawl --url-cache``: a cache in front of each seen table changes what the seen
table is asked, never what is crawled; the summary tells hits, misses and operations saved."""

from __future__ import annotations

import re

import pytest
from crawl_sites import CountingServer, assert_each_page_fetched_once, run_crawl, write_site

FAST = ("--delay", "0", "--queue-policy", "bkdr", "--concurrency", "8")
CACHE_LINE = re.compile(r"url cache:\s+(\S+): ([\d,]+) hits \([\d.]+%\), ([\d,]+) misses; ([\d,]+) seen-table "
                        r"operations saved")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    return root, write_site(root, 200)


@pytest.mark.parametrize("seen, spec", [("exact", "clock:64"), ("drum", "lru:2^5"), ("bloom", "random:100")])
def test_every_page_is_fetched_once_and_the_cache_is_counted(site, tmp_path, seen, spec):
    root, reachable = site
    server = CountingServer(root)
    with server as base:
        done = run_crawl(base + "index.html", tmp_path / "state", *FAST, "--seen", seen, "--url-cache", spec)
    assert done.returncode == 0, done.stderr
    counts = server.page_counts()
    assert_each_page_fetched_once(counts, reachable)
    found = CACHE_LINE.search(done.stdout)
    assert found, done.stdout
    hits, misses, saved = (int(found[i].replace(",", "")) for i in (2, 3, 4))
    assert found[1] == spec and saved == hits > 0 and misses >= len(reachable)  # each new URL misses once


def test_a_bad_cache_spec_is_one_line_and_exit_2(tmp_path):
    done = run_crawl("http://127.0.0.1:9/", tmp_path / "state", "--url-cache", "belady:10")
    assert done.returncode == 2
    assert done.stderr.strip() == ("pycrawler: --url-cache policy must be one of clock, lru, random "
                                   "(as POLICY:SIZE), not 'belady'")
    assert not (tmp_path / "state").exists()


def test_the_progress_line_shows_the_cache_once_it_has_counts():
    import io

    from pycrawler.crawl.progress import Progress

    progress = Progress(io.StringIO(), enabled=True)
    assert "cache" not in progress.render(1.0)
    progress.update(cache_hits=3_000, cache_misses=1_000)
    assert progress.render(1.0).endswith("cache 3,000 hits 1,000 misses (75%)")
