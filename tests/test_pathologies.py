"""The web of pathologies (pycrawler.testing.pathologies) crawled as a new user would crawl it:
the README's command, with only what covering several loopback hosts quickly needs (``--scope
any``: the families live on hosts of their own; ``--delay 0``: the polite default waits 3 s or
more between two requests to a host). One crawl of the whole web, then each pathology judged
from the server's request log: the crawl ended by itself, every ordinary page was fetched once,
no family drew more requests than its bound, and each had its outcome.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from crawl_sites import run_crawl

from pycrawler.testing.pathologies import CATALOGUE, PathologyWeb

CRAWL_LIMIT = 240  # seconds: a crawl still running then did not end by itself


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    """The pathology web after one crawl of it: (site, the finished crawl or None when it had to
    be stopped, seconds it took). The families are judged either way."""
    state = tmp_path_factory.mktemp("pathologies") / "state"
    with PathologyWeb(drip_interval=1.0, drip_bytes=8) as site:
        started = time.monotonic()
        try:
            done = run_crawl(site.seed, state, "--scope", "any", "--delay", "0", timeout=CRAWL_LIMIT)
        except subprocess.TimeoutExpired:
            done = None
        yield site, done, time.monotonic() - started


def test_the_crawl_ends_by_itself(crawled):
    _site, done, took = crawled
    assert done is not None, f"still crawling after {CRAWL_LIMIT} s"
    assert done.returncode == 0, done.stderr


def test_the_ordinary_site_is_fetched_once_a_page(crawled):
    site, _done, _took = crawled
    counts = site.ordinary_site()
    assert set(counts.values()) == {1}, {path: n for path, n in counts.items() if n != 1}


@pytest.mark.parametrize("pathology", CATALOGUE, ids=[p.name for p in CATALOGUE])
def test_pathology(crawled, pathology):
    site, _done, _took = crawled
    hits = [(hit.path, hit.page) for hit in site.family_hits(pathology.name)]
    assert site.judge(pathology) == [], f"{pathology.what}: must be {pathology.outcome}; requests: {hits[:40]}"


def test_the_server_refuses_a_bad_port_in_one_line():
    done = subprocess.run([sys.executable, "-m", "pycrawler.testing.pathologies", "--port", "70000"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["error: --port must be in 0..65535"]
