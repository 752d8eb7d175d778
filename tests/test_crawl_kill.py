"""kill -9 of ``pycrawler crawl`` at random moments, resumed each time with the same command.

At the end the crawl's record holds every reachable page once, the server saw every page
fetched at least once, and the pages fetched again after a kill number at most the URLs in
process at that kill (the crawl's ``--concurrency``): nothing is lost, little is repeated.
What users keep is checked against the site the same way: crawl.log has a 200 line for
every reachable page, the finished WARC files a readable response record for each (and no
``.open`` file is left), the trace only whole lines; each repeats a page at most as often
as the server saw it fetched again.
"""

from __future__ import annotations

import collections
import os
import random
import signal
import subprocess
import time

from crawl_sites import ROOT, CountingServer, crawl_command, fetched_records, run_crawl, write_site
from warcio.archiveiterator import ArchiveIterator

from pycrawler.crawl.warc import OPEN_SUFFIX

KILLS = 10
CONCURRENCY = 4


def test_ten_kills_then_resume_fetch_every_page_once_but_the_in_flight(tmp_path):
    root = tmp_path / "site"
    reachable = write_site(root, 400, seed=11)
    state, warcs, trace = tmp_path / "state", tmp_path / "warcs", tmp_path / "trace.txt"
    rng = random.Random(2024)
    server = CountingServer(root)
    options = ("--delay", "0", "--queue-policy", "bkdr", "--concurrency", str(CONCURRENCY), "--parse-workers", "1",
               "--warc", str(warcs), "--trace", str(trace))
    kills = 0
    with server as base:
        command = crawl_command(base + "index.html", state, *options)
        for _ in range(KILLS):
            before = sum(server.page_counts().values())
            crawl = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            target, deadline = before + rng.randint(1, 25), time.monotonic() + 30
            while sum(server.page_counts().values()) < target and crawl.poll() is None and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(rng.random() * 0.02)  # somewhere between two flushes, or inside one
            if crawl.poll() is not None:
                break  # finished before the kill: the crawl is complete
            os.kill(crawl.pid, signal.SIGKILL)
            crawl.wait()
            kills += 1
        done = run_crawl(base + "index.html", state, *options)
        assert done.returncode == 0, done.stderr
    assert kills >= 5, "the site was crawled too fast to be killed part way"
    counts = server.page_counts()
    assert {path for path in counts if path.endswith(".html")} == reachable | {"d0/missing.html"}
    repeated = sum(n - 1 for n in counts.values())
    assert repeated <= kills * CONCURRENCY, f"{repeated} repeated fetches over {kills} kills"
    records = fetched_records(state)
    assert {url.removeprefix(base) for url, r in records.items() if r.status_code == 200} == reachable
    assert len(records) == len(reachable) + 1
    assert "0 URLs pending" in done.stdout

    fetched_again = {path: n - 1 for path, n in counts.items() if n > 1}
    log_lines = crawl_log_200s(state / "crawl.log", base)
    assert set(log_lines) == reachable
    assert all(log_lines[path] - 1 <= fetched_again.get(path, 0) for path in log_lines), "a line more than fetches"
    responses = warc_responses(warcs, base)
    assert set(responses) == reachable
    assert all(responses[path] - 1 <= fetched_again.get(path, 0) for path in responses)
    links = trace.read_text().splitlines()
    assert links and all(link.startswith(base) for link in links), "a torn or foreign line in the trace"


def crawl_log_200s(path, base: str) -> collections.Counter:
    """Site path -> number of 200 lines; every line must be whole (12 fields)."""
    lines = path.read_text().splitlines()
    assert all(len(line.split()) == 12 for line in lines), "a torn crawl.log line"
    return collections.Counter(f[3].removeprefix(base) for f in map(str.split, lines) if f[1] == "200")


def warc_responses(directory, base: str) -> collections.Counter:
    """Site path -> number of response records across the finished WARC files, read by warcio."""
    assert not list(directory.glob("*" + OPEN_SUFFIX)), "a WARC file left open after a clean finish"
    found = collections.Counter()
    for path in sorted(directory.glob("*.warc.gz")):
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream, check_digests="raise"):
                if record.rec_type == "response" and record.http_headers.get_statuscode() == "200":
                    record.content_stream().read()
                    found[record.rec_headers.get_header("WARC-Target-URI").removeprefix(base)] += 1
    return found
