"""``pycrawler heritrix rescue``: a real Heritrix 3.13 crawl killed -9 is finished from what survives.

One Heritrix for the module (tests/real_heritrix.py drives it) runs two jobs at once, each on its
own :class:`HeritrixSite` (four hosts, robots.txt disallowing a folder, redirects, 404s, a deep
chain, alias spellings): job ``cold`` takes no checkpoint; job ``warm`` is checkpointed early.
Heritrix is killed with SIGKILL while both are mid-crawl. ``cold`` is then what issue 34 found:
its ``state/`` holds no database and its frontier journal nothing. Then, for each job:

- ``heritrix rescue JOB --into STATE --journal FILE`` rebuilds the frontier from crawl.log, the
  WARC files and (``warm``) the checkpoint and the journal's rotated part;
- ``pycrawler crawl SEEDS --state STATE`` finishes the site: with Heritrix's fetches, every URL of
  the site's ground truth, nothing robots.txt disallows, and no URL whose response the WARC
  files hold fetched again (the only URLs the server answered twice are ones Heritrix had in
  flight at the kill, which no WARC record holds);
- the journal goes to a fresh Heritrix (a job with the site's hosts in scope and no seeds) by its
  own ``importURIs``, and Heritrix finishes the site under the same checks.

Heritrix writes with its own JE 7.5.11 and pycrawler reads its checkpoint's log version 15 with
the JE it chooses, whatever the test leg, so the module runs in one leg (tests/conftest.py ANY_JE).
"""

from __future__ import annotations

import collections
import gzip
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from warcio.archiveiterator import ArchiveIterator

from conftest import HERITRIX_HOME, missing
from real_heritrix import Heritrix, HeritrixSite

ROOT = Path(__file__).resolve().parent.parent
HOSTS, PAGES = 4, 120
THREADS = 5
CHECKPOINT_AT = 80     # URIs the warm job has done at its checkpoint
KILL_AT = 200          # URIs each job has done, at least, when Heritrix is killed
JOBS = ("cold", "warm")


def pycrawler(*args, timeout=180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pycrawler", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def ok(*args, **kwargs) -> subprocess.CompletedProcess:
    done = pycrawler(*args, **kwargs)
    assert done.returncode == 0, f"pycrawler {' '.join(map(str, args))}: exit {done.returncode}\n{done.stderr}"
    assert "Traceback" not in done.stderr
    return done


def delta(after: collections.Counter, before: collections.Counter) -> collections.Counter:
    return collections.Counter({url: n - before[url] for url, n in after.items() if n > before[url]})


def archived(warcs: Path) -> set[str]:
    """URLs whose response the job's WARC files hold (robots.txt left out, as the site's counts do)."""
    urls = set()
    for path in sorted(warcs.iterdir()):
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream):
                url = record.rec_headers.get_header("WARC-Target-URI")
                if record.rec_type == "response" and url.startswith("http") and not url.endswith("/robots.txt"):
                    urls.add(url)
    return urls


def journal_tags(path: Path) -> dict[str, list[str]]:
    with gzip.open(path, "rt") as lines:
        tags = collections.defaultdict(list)
        for line in lines:
            tags[line[:2]].append(line.split()[1])
    return tags


@pytest.fixture(scope="module")
def crash(tmp_path_factory):
    """Both jobs crawled part of the way (``warm`` checkpointed on the way) and Heritrix killed -9."""
    if not (HERITRIX_HOME / "lib" / "heritrix-engine-3.13.0.jar").is_file():
        missing("Heritrix 3.13.0 is not in target/heritrix-3.13.0 (scripts/setup unpacks it)")
    folder = tmp_path_factory.mktemp("rescue")
    with HeritrixSite(HOSTS, PAGES) as cold_site, HeritrixSite(HOSTS, PAGES) as warm_site:
        sites = {"cold": cold_site, "warm": warm_site}
        (folder / "run1").mkdir()
        heritrix = Heritrix(folder / "run1").start()
        try:
            for name in JOBS:
                heritrix.create_job(name, sites[name].seeds, threads=THREADS)
                heritrix.launch(name)
            heritrix.wait_done("warm", CHECKPOINT_AT)
            heritrix.pause("warm")
            checkpoint = heritrix.checkpoint("warm")
            heritrix.action("warm", "unpause")
            reports = {name: heritrix.wait_done(name, KILL_AT) for name in JOBS}
            paths = {name: heritrix.job_paths(name) for name in JOBS}
        finally:
            heritrix.kill()
        jobs = {name: SimpleNamespace(name=name, site=sites[name], run1=sites[name].fetch_counts(),
                                      report=reports[name], archived=archived(paths[name]["warcs"]), **paths[name])
                for name in JOBS}
        yield SimpleNamespace(folder=folder, checkpoint=checkpoint, jobs=jobs)


@pytest.fixture(scope="module")
def rescued(crash):
    """Each job rescued into a pycrawler state and a journal."""
    out = {}
    for name, job in crash.jobs.items():
        state, journal = crash.folder / f"{name}-state", crash.folder / f"{name}.recover.gz"
        done = ok("heritrix", "rescue", job.job, "--into", state, "--journal", journal)
        out[name] = SimpleNamespace(state=state, journal=journal, output=done.stdout,
                                    manifest=json.loads((state / "heritrix-rescue.json").read_text()),
                                    tags=journal_tags(journal))
    return out


def test_the_cold_job_died_with_nothing_of_its_frontier_on_disk(crash):
    """The premise: killed before any checkpoint, Heritrix leaves no database pycrawler could read
    (``heritrix inspect`` refuses the state in one line) and no line of its journal; both jobs
    were killed mid-crawl, robots.txt obeyed."""
    cold = crash.jobs["cold"]
    refused = pycrawler("heritrix", "inspect", cold.state)
    assert refused.returncode == 2 and "not a Heritrix crawl state" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert (cold.logs / "frontier.recover.gz").stat().st_size == 0
    assert not list((cold.state).glob("cp*"))
    for job in crash.jobs.values():
        assert job.report["crawlControllerState"] not in ("FINISHED", "STOPPING"), job.name
        assert set(job.run1) < job.site.expected(), job.name
        assert job.site.disallowed_requests() == []


def test_rescue_takes_every_fetched_url_as_seen_and_the_undiscovered_rest_as_pending(crash, rescued):
    """What the rescue found, against what Heritrix did: every URL of crawl.log finished (``Fs``
    or ``Ff`` in the journal), every archived response among them, and pending only URLs
    Heritrix had not fetched; the warm job's checkpoint gave its seen keys and its journal's
    rotated part the URLs queued before it."""
    for name, job in crash.jobs.items():
        manifest, tags = rescued[name].manifest, rescued[name].tags
        logged = [line.split()[3] for path in manifest["crawl_logs"] for line in Path(path).read_text().splitlines()]
        assert manifest["crawl_log_urls"] == len(set(logged)) > 0, name
        finished = set(tags["Fs"]) | set(tags["Ff"])
        assert set(logged) <= finished and job.archived <= finished, name
        assert len(tags["F+"]) == manifest["pending"] == manifest["frontier"]["urls"] > 0, name
        assert not set(tags["F+"]) & job.archived, name
        assert manifest["seen"]["keys"] >= len(finished) + len(tags["F+"]) - manifest["refetch"], name
        assert manifest["links"]["links_parsed"] > 0 and manifest["links"]["links_heritrix"] > 0, name
    warm = rescued["warm"].manifest
    assert warm["checkpoint"] == crash.checkpoint and warm["checkpoint_seen_keys"] > 0
    assert warm["journal"]["pending"] > 0
    assert rescued["cold"].manifest["checkpoint"] is None and rescued["cold"].manifest["journal"] is None


def check_finished(job, run2: collections.Counter, who: str) -> None:
    """Heritrix's fetches and the continuation's together: the site's ground truth, robots.txt
    obeyed, nothing the WARC files hold fetched again, nothing fetched twice by the
    continuation, and a URL the server answered twice only one Heritrix had in flight at the
    kill (at most one per toe thread, no response in the WARC files)."""
    total = job.run1 + run2
    assert set(total) == job.site.expected(), (job.name, who)
    assert job.site.disallowed_requests() == []
    assert not set(run2) & job.archived, (job.name, who, sorted(set(run2) & job.archived))
    assert set(run2.values()) == {1}, (job.name, who, {u: n for u, n in run2.items() if n > 1})
    twice = {url for url, n in total.items() if n > 1}
    assert twice <= set(job.run1) - job.archived and len(twice) <= THREADS, (job.name, who, twice)


@pytest.mark.parametrize("name", JOBS)
def test_pycrawler_finishes_the_rescued_crawl(crash, rescued, name):
    job = crash.jobs[name]
    before = job.site.fetch_counts()
    ok("crawl", *job.site.seeds, "--state", rescued[name].state, "--delay", "0", "--no-progress")
    run2 = delta(job.site.fetch_counts(), before)
    check_finished(job, run2, "pycrawler")
    assert set(rescued[name].tags["F+"]) <= set(run2)


def test_heritrix_finishes_the_rescued_crawl_from_the_journal(crash, rescued, tmp_path):
    """A fresh Heritrix takes each job's journal with its own ``importURIs`` (a job with the
    site's hosts in scope and no seeds), and finishes the site."""
    before = {name: job.site.fetch_counts() for name, job in crash.jobs.items()}
    (tmp_path / "run2").mkdir()
    heritrix = Heritrix(tmp_path / "run2").start()
    try:
        for name, job in crash.jobs.items():
            heritrix.create_job(name, [], threads=THREADS, scope_urls=job.site.seeds)
            heritrix.launch(name, unpause=False)
            heritrix.import_uris(name, rescued[name].journal)
            heritrix.action(name, "unpause")
        for name in JOBS:
            heritrix.wait_finished(name)
    finally:
        heritrix.stop()
    for name, job in crash.jobs.items():
        check_finished(job, delta(job.site.fetch_counts(), before[name]), "heritrix")
