"""kill -9 of ``pycrawler crawl`` at random moments, resumed each time with the same command.

At the end the crawl's record holds every reachable page once, the server saw every page
fetched at least once, and the pages fetched again after a kill number at most the URLs in
process at that kill (the crawl's ``--concurrency``): nothing is lost, little is repeated.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time

from crawl_sites import ROOT, CountingServer, crawl_command, fetched_records, run_crawl, write_site

KILLS = 10
CONCURRENCY = 4


def test_ten_kills_then_resume_fetch_every_page_once_but_the_in_flight(tmp_path):
    root = tmp_path / "site"
    reachable = write_site(root, 400, seed=11)
    state = tmp_path / "state"
    rng = random.Random(2024)
    server = CountingServer(root)
    options = ("--delay", "0", "--queue-policy", "bkdr", "--concurrency", str(CONCURRENCY), "--parse-workers", "1")
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
