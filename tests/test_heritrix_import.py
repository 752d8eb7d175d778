"""``pycrawler heritrix import`` makes a crawl state that ``pycrawler crawl`` continues.

The pieces: a work-queue frontier keyed by Heritrix's ``createKey`` (the seen-key scheme,
recorded in the store and held to), Heritrix's queue assignment reproduced, pending URLs
restored at their exact places. And the whole: a Heritrix 1.14 store imported, then crawled
on a loopback server: what Heritrix had seen is not fetched, what it had pending is, in its
queue's order, and new links get Heritrix's keys.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from crawl_sites import ROOT, CountingServer, run_crawl, write_pages
from heritrix_stores import Queued, write_h1

from pycrawler.errors import BadInput
from pycrawler.frontier.assignment import get_assignment
from pycrawler.frontier.politeness import Outcome, Politeness
from pycrawler.frontier.pending_records import HIGH, HIGHEST, NORMAL, decode_key
from pycrawler.frontier.workqueues import WorkQueueFrontier
from pycrawler.heritrix.migrate import heritrix_keys
from pycrawler.heritrix.queue_policy import detect_queue_policy
from pycrawler.keys import fingerprints64
from pycrawler.records.crawl_url import CrawlUrl, encode
from pycrawler.seen.exact import ExactVisited


def pycrawler(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pycrawler", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def value(url: str) -> bytes:
    return encode(CrawlUrl(ori_url=url))


def pending_places(frontier: WorkQueueFrontier) -> list[tuple[str, int, int, int]]:
    """(queue, directive, precedence, ordinal) of every URL in ``pending``, in key order (caps left out)."""
    return [decode_key(k) for k, v in frontier.pending.items() if v]


# -- restore: exact places, no Visited check ---------------------------------------------------------

def test_restore_keeps_each_urls_queue_directive_precedence_and_ordinal(env):
    entries = [("a.example", NORMAL, 1, 900, value("http://a.example/late")),
               ("b.example", NORMAL, 1, 5, value("http://b.example/1")),
               ("a.example", HIGH, 4, 950, value("http://a.example/high")),
               ("a.example", NORMAL, 1, 7, value("http://a.example/early")),
               ("a.example", HIGHEST, 200, 1000, value("http://a.example/urgent"))]
    frontier = WorkQueueFrontier(env, ExactVisited(env), create=True, politeness=Politeness.none())
    assert frontier.restore(entries) == 5
    # Key order: queue, directive, precedence (capped at 127, as schedule caps it), ordinal.
    assert pending_places(frontier) == [("a.example", HIGHEST, 127, 1000), ("a.example", HIGH, 4, 950),
                                        ("a.example", NORMAL, 1, 7), ("a.example", NORMAL, 1, 900),
                                        ("b.example", NORMAL, 1, 5)]
    assert len(frontier.visited) == 0  # restored URLs bypass the seen table
    frontier.schedule(["http://a.example/new"])
    assert pending_places(frontier)[4] == ("a.example", NORMAL, 1, 1001)  # ordinals continue above
    handed = [r.ori_url for r in frontier.get_next_batch(10)]
    assert [u for u in handed if "a.example" in u] == [
        "http://a.example/urgent", "http://a.example/high", "http://a.example/early",
        "http://a.example/late", "http://a.example/new"]
    frontier.close()


def test_a_url_restored_ahead_of_what_its_queue_read_ahead_is_handed_out_first(env):
    frontier = WorkQueueFrontier(env, ExactVisited(env), create=True, politeness=Politeness.none())
    frontier.schedule(["http://a.example/1", "http://a.example/2"])
    (first,) = frontier.next_batch(1)  # the queue has read both records ahead
    frontier.restore([("a.example", HIGHEST, 1, 0, value("http://a.example/urgent"))])
    frontier.completed(first, Outcome.success())
    assert [r.ori_url for r in frontier.get_next_batch(5)] == ["http://a.example/urgent", "http://a.example/2"]
    frontier.close()


def test_restore_refuses_to_overwrite_a_pending_url(env):
    frontier = WorkQueueFrontier(env, ExactVisited(env), create=True)
    frontier.restore([("a.example", NORMAL, 1, 3, value("http://a.example/x"))])
    with pytest.raises(BadInput, match="would overwrite 1 pending URLs"):
        frontier.restore([("a.example", NORMAL, 1, 4, value("http://a.example/y")),
                          ("a.example", NORMAL, 1, 3, value("http://a.example/z"))])
    assert len(frontier) == 1 and len(pending_places(frontier)) == 1
    frontier.close()


# -- the seen-key scheme ------------------------------------------------------------------------------

def test_heritrix_seen_keys_are_createkeys_of_heritrix_canonical_urls(env):
    visited = ExactVisited(env)
    frontier = WorkQueueFrontier(env, visited, create=True, seen_key="heritrix")
    assert frontier.canonicalizer.name == "heritrix"
    urls = ["http://WWW.Example.com/a?jsessionid=" + "A" * 32, "http://example.com/b"]
    frontier.schedule(urls)
    assert visited.contains_many(heritrix_keys(urls)).tolist() == [True, True]
    assert visited.contains_many(fingerprints64(urls)).tolist() == [False, False]
    frontier.close()


def test_a_frontier_keeps_its_seen_key_scheme_and_refuses_another(tmp_path):
    WorkQueueFrontier.open(tmp_path / "h", create=True, seen_key="heritrix").close()
    with WorkQueueFrontier.open(tmp_path / "h") as reopened:  # unset: the store's scheme
        assert reopened.seen_key.name == "heritrix"
    with pytest.raises(BadInput, match="seen keys are 'heritrix'; opening it with seen key 'md5'"):
        WorkQueueFrontier.open(tmp_path / "h", seen_key="md5")
    WorkQueueFrontier.open(tmp_path / "m", create=True).close()
    with pytest.raises(BadInput, match="seen keys are 'md5'"):
        WorkQueueFrontier.open(tmp_path / "m", seen_key="heritrix")


def test_a_store_from_before_seen_key_schemes_counts_as_md5(tmp_path):
    with WorkQueueFrontier.open(tmp_path / "old", create=True) as frontier:
        frontier.schedule(["http://example.com/"])
    with WorkQueueFrontier.open(tmp_path / "old") as frontier:
        frontier.meta.delete(b"seen_key")  # what a store made before the scheme was recorded holds
    with WorkQueueFrontier.open(tmp_path / "old") as frontier:
        assert frontier.seen_key.name == "md5"
    with pytest.raises(BadInput, match="seen keys are 'md5'"):
        WorkQueueFrontier.open(tmp_path / "old", seen_key="heritrix")


def test_heritrix_keys_need_heritrix_canonicalisation(env):
    with pytest.raises(BadInput, match="defined over the 'heritrix' canonical form"):
        WorkQueueFrontier(env, ExactVisited(env), create=True, seen_key="heritrix", canonicalizer="safe")


# -- queue assignment as Heritrix does it --------------------------------------------------------------

def test_heritrix_host_policy_gives_heritrix_hostname_class_keys():
    # HostnameQueueAssignmentPolicy: authority minus userinfo, default ports dropped, ':' -> '#',
    # and ':443' added to an https URL without a port.
    urls = ["http://Example.com/a", "http://example.com:8080/", "https://example.com/", "https://example.com:443/x",
            "https://user:pw@example.com:8443/", "http://127.0.0.1:80/"]
    assert get_assignment("heritrix-host").class_keys(urls) == [
        "example.com", "example.com#8080", "example.com#443", "example.com#443", "example.com#8443", "127.0.0.1"]
    # SurtAuthorityQueueAssignmentPolicy is pycrawler's surt (userinfo aside).
    assert get_assignment("surt").class_keys(["http://www.archive.org:8080/m", "https://www.archive.org/"]) == [
        "org,archive,www,#8080", "org,archive,www,"]


def test_the_heritrix_policy_is_detected_from_class_keys():
    assert detect_queue_policy(["example.com", "example.com#443", "127.0.0.1#8080"]) == "heritrix-host"
    assert detect_queue_policy(["com,example,www,", "org,archive,#8080", "127.2.34.5"]) == "surt"
    assert detect_queue_policy([]) == "heritrix-host"


# -- the whole: import, then crawl ----------------------------------------------------------------------

SITE = {"index.html": ["a.html", "b.html", "c.html"], "a.html": ["d.html"], "b.html": ["a.html", "f.html"],
        "c.html": [], "d.html": [], "e.html": ["index.html"], "f.html": []}


@pytest.fixture
def served(tmp_path):
    server = CountingServer(write_pages(tmp_path / "site", SITE))
    with server as base:
        yield base, server


def heritrix_job(path, base: str) -> None:
    """A Heritrix 1.14 state after it fetched index.html and a.html: b, c and e pending in the
    host's queue (e more urgent), a DNS lookup pending in its own; all of them seen."""
    queue = base.split("//")[1].rstrip("/").replace(":", "#")
    pending = [Queued(queue, base + "b.html", base + "index.html", "L", NORMAL, 1, 20, False),
               Queued(queue, base + "c.html", base + "index.html", "L", NORMAL, 1, 21, False),
               Queued(queue, base + "e.html", base + "index.html", "L", HIGH, 1, 30, False),
               Queued("127.0.0.1", "dns:127.0.0.1", base + "index.html", "P", HIGHEST, 1, 3, False)]
    write_h1(path, pending, [base + name for name in ("index.html", "a.html", "b.html", "c.html", "e.html")])


def test_an_imported_heritrix_crawl_continues_where_heritrix_stopped(served, tmp_path):
    base, server = served
    heritrix_job(tmp_path / "job" / "state", base)
    state = tmp_path / "py"
    done = pycrawler("heritrix", "import", tmp_path / "job" / "state", "--into", state)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((state / "heritrix-import.json").read_text())
    assert (manifest["frontier"]["kind"], manifest["seen"]["kind"], manifest["seen"]["keys"]) == \
        ("workqueues", "drum", 5)
    assert (manifest["frontier"]["urls"], manifest["frontier"]["rekeyed"], manifest["frontier"]["skipped"]) == \
        (3, 0, {"dns": 1})
    assert json.loads((state / "crawl.json").read_text()) == {
        "seen": "drum", "queue_policy": "heritrix-host", "canon": "heritrix", "seen_key": "heritrix"}

    crawled = run_crawl(base + "index.html", state, "--delay", "0")
    assert crawled.returncode == 0, crawled.stderr
    # Seen by Heritrix and not pending (index, a), or only linked from those (d): not fetched.
    assert server.page_counts() == {"e.html": 1, "b.html": 1, "c.html": 1, "f.html": 1}
    lines = [line.split() for line in (state / "crawl.log").read_text().splitlines()]
    # One queue, handed out in Heritrix's order (the HIGH directive first), hop paths and vias kept.
    assert [(f[3], f[4], f[5]) for f in lines] == [
        (base + "e.html", "L", base + "index.html"), (base + "b.html", "L", base + "index.html"),
        (base + "c.html", "L", base + "index.html"), (base + "f.html", "LL", base + "b.html")]

    from pycrawler.seen.drum import DrumVisited
    from pycrawler.store import Environment
    with Environment(state) as env, DrumVisited(state / "drum", env=env) as seen:  # the new link went in under Heritrix's key
        assert seen.contains_many(heritrix_keys([base + "f.html", base + "d.html"])).tolist() == [True, False]
    assert json.loads((state / "crawl.json").read_text())["seen_key"] == "heritrix"


@pytest.mark.parametrize("seen", ["drum", "bloom", "exact"])
def test_the_summarys_new_urls_are_what_the_imported_state_gained(served, tmp_path, seen):
    """A run that stops with URLs left: its summary's new URLs are its fetched records plus the
    URLs left pending less the imported ones, with every seen table (DRUM answers the last links
    only as the frontier closes: the pending count is taken after that)."""
    base, _ = served
    heritrix_job(tmp_path / "job" / "state", base)
    state = tmp_path / "py"
    assert pycrawler("heritrix", "import", tmp_path / "job" / "state", "--into", state, "--seen", seen).returncode == 0
    crawled = run_crawl(base + "index.html", state, "--delay", "0", "--max-pages", "2")
    assert crawled.returncode == 0, crawled.stderr
    new = int(re.search(r"([\d,]+) new URLs", crawled.stdout).group(1).replace(",", ""))
    records, pending = (int(n.replace(",", "")) for n in
                        re.search(r"([\d,]+) fetched records, ([\d,]+) URLs pending", crawled.stdout).groups())
    assert records == 2 and new == records + pending - 3 > 0, crawled.stdout


def test_a_resume_with_another_seen_key_is_refused_and_the_target_must_be_empty(served, tmp_path):
    base, _ = served
    heritrix_job(tmp_path / "job" / "state", base)
    state = tmp_path / "py"
    assert pycrawler("heritrix", "import", tmp_path / "job" / "state", "--into", state).returncode == 0
    refused = run_crawl(base + "index.html", state, "--seen-key", "md5")
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1 and "seen-key 'heritrix'" in refused.stderr
    before = sorted(p.name for p in state.iterdir())
    again = pycrawler("heritrix", "import", tmp_path / "job" / "state", "--into", state)
    assert again.returncode == 2 and "is not an empty folder: import into a new or empty folder" in again.stderr
    assert sorted(p.name for p in state.iterdir()) == before


@pytest.fixture(scope="module")
def small_job(tmp_path_factory):
    """Heritrix's default queues for an http and an https host; two URLs seen."""
    path = tmp_path_factory.mktemp("job") / "state"
    write_h1(path, [Queued("example.com", "http://example.com/a", None, "", NORMAL, 1, 1, True),
                    Queued("example.com#443", "https://example.com/b", None, "", NORMAL, 1, 2, True)],
             ["http://example.com/a", "https://example.com/b"])
    return path


@pytest.mark.parametrize("seen", ["bloom", "exact"])
def test_seen_keys_land_where_the_crawl_engine_opens_them(small_job, tmp_path, seen):
    from pycrawler.heritrix.migrate import import_state
    from pycrawler.heritrix.state import HeritrixState
    from pycrawler.seen.bloom import BloomFilter
    from pycrawler.store import Environment

    with HeritrixState.open(small_job) as state:
        manifest = import_state(state, tmp_path / "py", seen_table=seen)
    keys = heritrix_keys(["http://example.com/a", "https://example.com/b", "http://example.com/c"])
    if seen == "bloom":
        with BloomFilter.open(tmp_path / "py" / "visited.bloom") as table:
            assert table.contains_many(keys).tolist() == [True, True, False]
    else:
        with Environment(tmp_path / "py") as env:
            assert ExactVisited(env, "visited", create=False).contains_many(keys).tolist() == [True, True, False]
    assert manifest["crawl_settings"]["seen"] == seen


def test_another_queue_policy_requeues_the_urls_it_keys_differently(small_job, tmp_path):
    from pycrawler.heritrix.migrate import import_state
    from pycrawler.heritrix.state import HeritrixState

    with HeritrixState.open(small_job) as state:
        detected = import_state(state, tmp_path / "same")["frontier"]
        chosen = import_state(state, tmp_path / "host", queue_policy="host")["frontier"]
    assert (detected["queue_policy"], detected["queues"], detected["rekeyed"]) == ("heritrix-host", 2, 0)
    # pycrawler's host policy puts https on port 443 in the http queue: one queue for the host.
    assert (chosen["queue_policy"], chosen["queues"], chosen["rekeyed"]) == ("host", 1, 1)
    with WorkQueueFrontier.open(tmp_path / "host", read_only=True) as frontier:
        assert [place[0] for place in pending_places(frontier)] == ["example.com", "example.com"]
