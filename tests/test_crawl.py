"""``pycrawler crawl`` on a generated site served by the test: the crawl's contract.

Every reachable page is fetched exactly once (counted by the server), its CrawlUrl record
holds status, title, charset, layer and references, crawl.log has a line per attempt, WARC
files read back; scope, max depth and max pages bound the crawl; robots.txt is obeyed; a
crawl stopped with SIGINT resumes from its state folder without fetching anything twice; a Bloom
seen table is made for ``--bloom-capacity`` URLs and keeps that size when the crawl resumes; the
summary counts new URLs and dupes avoided alike whatever the seen table (DRUM answers late) and in
a one-worker cluster of either kind.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time

import pytest
from conftest import missing
from crawl_sites import (ROOT, CountingServer, assert_each_page_fetched_once, crawl_command, fetched_records, page,
                         run_crawl, write_pages, write_site)
from warcio.archiveiterator import ArchiveIterator

FAST = ("--delay", "0", "--queue-policy", "bkdr", "--concurrency", "8")


def crawl_site(root, state, *options, seed="index.html"):
    """Crawl ``root`` served by a counting server: (base URL, finished process, GETs per path)."""
    server = CountingServer(root)
    with server as base:
        done = run_crawl(base + seed, state, *options)
    assert done.returncode == 0, done.stderr
    return base, done, server.page_counts()


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    return root, write_site(root, 300)


@pytest.fixture(scope="module")
def full_crawl(site, tmp_path_factory):
    """One whole crawl of the site with WARC output, shared by the tests that read its results."""
    root, _ = site
    work = tmp_path_factory.mktemp("crawl")
    base, done, counts = crawl_site(root, work / "state", *FAST, "--warc", str(work / "warc"))
    return base, done, work, counts


def test_every_reachable_page_is_fetched_exactly_once(site, full_crawl):
    _, reachable = site
    base, done, work, counts = full_crawl
    assert_each_page_fetched_once(counts, reachable)
    assert f"{len(reachable) + 1} answered" in done.stdout.replace(",", "") and "0 URLs pending" in done.stdout


def test_records_hold_status_title_charset_layer_and_references(full_crawl):
    base, _, work, _ = full_crawl
    records = fetched_records(work / "state")
    seed = records[base + "index.html"]
    assert (seed.status_code, seed.title, seed.char_set, seed.layer, seed.type) == (
        200, "Page index.html", "utf-8", 0, "text/html")
    assert seed.url_references == [base + f"d{i}/p{i}.html" for i in range(5)]
    assert seed.file_size > 0 and seed.last_update_time > 0
    first = records[base + "d1/p1.html"]
    assert first.layer == 1 and first.abstract_text == f"L {base}index.html"  # hop path and via
    assert base + "index.html" in first.url_references and base + "d0/missing.html" in first.url_references
    missing = records[base + "d0/missing.html"]
    assert missing.status_code == 404 and missing.title is None
    assert all(r.layer >= 1 for url, r in records.items() if url != base + "index.html")


def test_crawl_log_has_one_heritrix_line_per_attempt(full_crawl):
    base, _, work, counts = full_crawl
    lines = (work / "state" / "crawl.log").read_text().splitlines()
    assert len(lines) == sum(counts.values())
    fields = [line.split() for line in lines]
    assert all(len(f) == 12 for f in fields)
    seed_line = next(f for f in fields if f[3] == base + "index.html")
    assert (seed_line[1], seed_line[4], seed_line[5], seed_line[6]) == ("200", "-", "-", "text/html")
    assert seed_line[9].startswith("sha1:")
    assert any(f[1] == "404" and f[3].endswith("d0/missing.html") for f in fields)


def test_warc_files_read_back_with_a_response_per_answered_fetch(full_crawl):
    _, _, work, counts = full_crawl
    files = sorted((work / "warc").glob("*.warc.gz"))
    assert files, "no finished WARC file"
    kinds, responses = [], set()
    for path in files:
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream, check_digests="raise"):
                kinds.append(record.rec_type)
                if record.rec_type == "response":
                    responses.add(record.rec_headers.get_header("WARC-Target-URI"))
    assert kinds.count("response") == kinds.count("request") == kinds.count("metadata") == sum(counts.values())
    assert len(responses) == sum(counts.values())


def test_max_depth_and_max_pages_bound_the_crawl(site, tmp_path):
    root, _ = site
    _, _, counts = crawl_site(root, tmp_path / "depth", *FAST, "--max-depth", "1")
    assert set(counts) == {"index.html", *(f"d{i}/p{i}.html" for i in range(5))}
    _, done, counts = crawl_site(root, tmp_path / "pages", *FAST, "--max-pages", "20")
    assert sum(counts.values()) == 20 and len(fetched_records(tmp_path / "pages")) == 20


def test_scope_keeps_the_crawl_on_the_seed_host_unless_widened(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    server = CountingServer(root)
    with server as base:
        other = base.replace("127.0.0.1", "localhost")  # the same server under another host name
        (root / "index.html").write_text(page("index", ["a.html", other + "b.html", "mailto:x@example.org",
                                                         "javascript:void(0)", "data:text/html,x"]))
        for name in ("a.html", "b.html"):
            (root / name).write_text(page(name, []))
        assert run_crawl(base + "index.html", tmp_path / "hosts", *FAST).returncode == 0
        assert server.page_counts() == {"index.html": 1, "a.html": 1}
        assert run_crawl(base + "index.html", tmp_path / "any", *FAST, "--scope", "any").returncode == 0
    assert server.page_counts() == {"index.html": 2, "a.html": 2, "b.html": 1}


def test_robots_txt_is_obeyed_and_precluded_urls_are_recorded(site, tmp_path):
    root, reachable = site
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /d1/\n")
    try:
        base, _, counts = crawl_site(root, tmp_path / "robots", *FAST)
    finally:
        (root / "robots.txt").unlink()
    assert counts and not any(path.startswith("d1/") for path in counts)
    records = fetched_records(tmp_path / "robots")
    precluded = [url for url, r in records.items() if r.status_code == -9998]
    assert precluded and all(url.startswith(base + "d1/") for url in precluded)
    log = (tmp_path / "robots" / "crawl.log").read_text()
    assert f"-9998          - {base}d1/" in log


@pytest.mark.any_je  # a signal's handling: see tests/test_crawl_stops.py
def test_sigint_stops_gracefully_and_the_same_command_resumes(site, tmp_path):
    root, reachable = site
    state = tmp_path / "state"
    server = CountingServer(root)
    with server as base:
        # One queue, 20 ms between fetches: long enough to be interrupted part way.
        command = crawl_command(base + "index.html", state, "--delay", "0.02")
        crawl = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while sum(server.page_counts().values()) < 30 and time.monotonic() < deadline:
            time.sleep(0.05)
        crawl.send_signal(signal.SIGINT)
        out, err = crawl.communicate(timeout=30)
        assert crawl.returncode == 130, err
        assert "(interrupted)" in out
        first = sum(server.page_counts().values())
        assert 30 <= first < len(reachable)
        done = run_crawl(base + "index.html", state, "--delay", "0")
        assert done.returncode == 0, done.stderr
    counts = server.page_counts()
    assert_each_page_fetched_once(counts, reachable)
    assert len(fetched_records(state)) == len(reachable) + 1


def test_je_cache_mb_sizes_the_states_je_cache_and_its_default_follows_the_seen_table(site, tmp_path):
    import json

    root, reachable = site
    runs = {"exact": ("exact", ()), "bloom": ("bloom", ("--seen", "bloom")),
            "bloom resumed": ("bloom", ("--max-pages", "30")),  # the state's table, not the default's
            "exact, 96": ("exact-96", ("--je-cache-mb", "96")),
            "drum, 96": ("drum-96", ("--seen", "drum", "--je-cache-mb", "96"))}
    sizes = {}
    with CountingServer(root) as base:
        for name, (state, options) in runs.items():
            stats = tmp_path / f"stats-{name}.jsonl"
            done = run_crawl(base + "index.html", tmp_path / state, *FAST, "--max-pages", "20",
                             "--stats", str(stats), *options)
            assert done.returncode == 0, done.stderr
            sizes[name] = {json.loads(line)["je_cache_max_bytes"] for line in stats.read_text().splitlines()}
    # exact keeps a B-tree entry a URL in JE; bloom and drum keep their keys outside it.
    assert sizes == {"exact": {256 << 20}, "bloom": {64 << 20}, "bloom resumed": {64 << 20},
                     "exact, 96": {96 << 20}, "drum, 96": {96 << 20}}


def test_a_heap_of_the_users_own_bounds_the_default_je_cache_to_jes_share_of_it(site, tmp_path):
    import json
    import os

    root, reachable = site
    stats = tmp_path / "stats.jsonl"
    with CountingServer(root) as base:
        done = subprocess.run(crawl_command(base + "index.html", tmp_path / "state", *FAST, "--stats", str(stats)),
                              cwd=ROOT, capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, PYCRAWLER_HEAP="100m"))
    # JE refuses a cache larger than the heap: exact's 256 MB would not open in 100 (nor would
    # the JVM start with the 128 MB it starts at under a heap of the crawl's own choosing).
    assert done.returncode == 0, done.stderr
    sizes = {json.loads(line)["je_cache_max_bytes"] for line in stats.read_text().splitlines()}
    assert len(sizes) == 1 and 32 << 20 <= sizes.pop() <= (100 << 20) * 60 // 100


def test_a_bloom_filter_is_made_for_bloom_capacity_urls_and_keeps_its_size_on_resume(site, tmp_path):
    from pycrawler.seen.bloom import BloomFilter
    from pycrawler.seen.tables import SEEN_TABLE_PATHS

    root, reachable = site
    state = tmp_path / "state"
    server = CountingServer(root)
    with server as base:
        first = run_crawl(base + "index.html", state, *FAST, "--seen", "bloom", "--bloom-capacity", "5000",
                          "--max-pages", "40")
        assert first.returncode == 0, first.stderr
        # The filter holds the first run's URLs: a new size cannot apply to it.
        resumed = run_crawl(base + "index.html", state, *FAST, "--bloom-capacity", "999")
        assert resumed.returncode == 0, resumed.stderr
    counts = server.page_counts()
    assert_each_page_fetched_once(counts, reachable)
    table = BloomFilter.open(state / SEEN_TABLE_PATHS["bloom"], read_only=True)
    try:
        assert table.capacity == 5000 and table.count >= len(reachable)
    finally:
        table.close()


SUMMARY_TABLES = [(seen, cache) for seen in ("exact", "bloom", "drum") for cache in (None, "clock:64")]
SUMMARY_CLUSTERS = ["split", "central"]


@pytest.fixture(scope="module")
def linked_site(tmp_path_factory):
    """40 pages, each linking on, back to the start, to a page further on, to itself and to a
    page that is not there (a 404, never parsed), some links twice: (root, pages' links)."""
    names = [f"p{i}.html" for i in range(40)]
    links = {name: [names[(i + 1) % 40], names[0], names[(7 * i + 3) % 40], name, "missing.html", names[(i + 1) % 40]]
             for i, name in enumerate(names)}
    return write_pages(tmp_path_factory.mktemp("linked") / "site", links), links


@pytest.fixture(scope="module")
def cluster_redis(tmp_path_factory):
    """A redis-server for the one-worker clusters, started at its first use."""
    from pycrawler.testing.local_redis import LocalRedis, find_redis_server

    servers: list[tuple[LocalRedis, str]] = []

    def url() -> str:
        if not servers:
            if find_redis_server() is None:
                missing("redis-server is not installed (scripts/setup installs it)")
            server = LocalRedis(tmp_path_factory.mktemp("redis"))
            servers.append((server, server.start()))
        return servers[0][1]

    yield url
    for server, _ in servers:
        server.stop()


# The counts are kept in Python (the frontier's totals, the cluster's exchange), whichever JE holds
# the tables, and these crawls' use of JE is held on every JE by the rest of this file: the JE 3.3
# leg only (as tests/conftest.py ANY_JE does for whole modules).
@pytest.mark.any_je
@pytest.mark.parametrize("seen, cache, dedupe", [(s, c, None) for s, c in SUMMARY_TABLES]
                         + [("exact", None, d) for d in SUMMARY_CLUSTERS],
                         ids=[s + ("+cache" if c else "") for s, c in SUMMARY_TABLES]
                         + [f"cluster-{d}" for d in SUMMARY_CLUSTERS])
def test_the_summary_counts_new_urls_and_dupes_avoided_alike_with_every_seen_table(
        seen, cache, dedupe, linked_site, cluster_redis, tmp_path, monkeypatch):
    from pycrawler.seen.drum.visited import BUCKET_BYTES_VARIABLE

    root, links = linked_site
    # DRUM answers at merges inside the crawl's schedule calls too, not only when the frontier runs dry.
    monkeypatch.setenv(BUCKET_BYTES_VARIABLE, "1")
    options = [*FAST, "--seen", seen, *(("--url-cache", cache) if cache else ())]
    if dedupe:
        options += ["--redis", cluster_redis(), "--cluster", f"summary-{dedupe}", "--dedupe", dedupe,
                    "--worker", "w0", "--lease", "2", "--heartbeat", "0.3", "--settle", "0.3"]
    base, done, counts = crawl_site(root, tmp_path / "state", *options, seed="p0.html")
    urls = {"p0.html", *(target for targets in links.values() for target in targets)}  # every page is reachable
    assert set(counts) == urls and set(counts.values()) == {1}
    extracted = sum(len(targets) for targets in links.values())  # the 404 page is not parsed
    line = next(line for line in done.stdout.splitlines() if line.startswith("links:"))
    numbers = [int(n.replace(",", "")) for n in re.findall(r"[\d,]+(?= extracted| new URLs| dupes avoided)", line)]
    # Every link offered, and the seed, is either new or a dupe avoided: each URL is new once.
    assert numbers == [extracted, len(urls), extracted + 1 - len(urls)], line
