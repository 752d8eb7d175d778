"""pycrawler inside Scrapy: the scheduler and the duplicate filter under real ``scrapy runspider`` crawls.

Each crawl is a child process running ``tests/scrapy_spider.py`` (a ``CrawlSpider``) against a
site served on 127.0.0.1 by :class:`crawl_sites.CountingServer`, which counts every request on
the server's side: coverage and repeats are read there, not from Scrapy's own account.

Scrapy 2.11, the oldest release supported, runs from a virtualenv made under ``target/`` on
first use (Scrapy 2.11.2 with the Twisted and w3lib of its time, everything else shared with
``.venv``); the tests that need it fail when the package index cannot be reached.
"""

from __future__ import annotations

import importlib.util
import pickle
import re
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import pytest

from conftest import missing
from crawl_sites import ROOT, CountingServer, write_site

if importlib.util.find_spec("scrapy") is None:  # the test extra's; tests drive it in child processes
    missing("Scrapy is not installed (scripts/setup installs the test extra)")

SPIDER = Path(__file__).with_name("scrapy_spider.py")
OLD_SCRAPY = ("scrapy==2.11.2", "w3lib==2.1.2", "Twisted==24.3.0")
OLD_SCRAPY_VENV = ROOT / "target" / "scrapy-2.11"
ASYNCIO = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
EPOLL = "twisted.internet.epollreactor.EPollReactor"
CONCURRENCY = 8
CONCURRENT_REQUESTS_BOUND = CONCURRENCY


@pytest.fixture(scope="session")
def old_scrapy_python() -> str:
    """The Python of a virtualenv with Scrapy 2.11 that sees .venv's other packages."""
    python = OLD_SCRAPY_VENV / "bin" / "python"
    stamp = OLD_SCRAPY_VENV / ".installed"
    if not stamp.exists() or stamp.read_text() != " ".join(OLD_SCRAPY):
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(OLD_SCRAPY_VENV)], check=True)
        site_packages = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                       check=True, capture_output=True, text=True).stdout.strip()
        Path(site_packages, "pycrawler-venv.pth").write_text(
            f"import site; site.addsitedir({sysconfig.get_paths()['purelib']!r})\n")
        install = subprocess.run([str(python), "-m", "pip", "install", "-q", *OLD_SCRAPY], capture_output=True, text=True)
        if install.returncode:
            missing(f"cannot install {' '.join(OLD_SCRAPY)}: {install.stderr.strip()[-300:]}")
        stamp.write_text(" ".join(OLD_SCRAPY))
    return str(python)


def scrapy_command(start_url: str, settings: dict, *, python: str = sys.executable, **spider_args) -> list[str]:
    base = {"LOG_LEVEL": "INFO", "ROBOTSTXT_OBEY": "False", "TELNETCONSOLE_ENABLED": "False",
            "CONCURRENT_REQUESTS": str(CONCURRENCY), "TWISTED_REACTOR": ASYNCIO}
    command = [python, "-m", "scrapy", "runspider", str(SPIDER), "-a", f"start_url={start_url}"]
    for name, value in spider_args.items():
        command += ["-a", f"{name}={value}"]
    for name, value in (base | settings).items():
        command += ["-s", f"{name}={value}"]
    return command


def run_scrapy(start_url: str, settings: dict, *, python: str = sys.executable, timeout: float = 120,
               **spider_args) -> subprocess.CompletedProcess:
    done = subprocess.run(scrapy_command(start_url, settings, python=python, **spider_args), cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    return done


def scheduler_settings(state: Path, **more) -> dict:
    return {"SCHEDULER": "pycrawler.scrapy.Scheduler", "PYCRAWLER_STATE": str(state), **more}


@pytest.fixture
def site(tmp_path) -> tuple[Path, set[str]]:
    root = tmp_path / "site"
    return root, write_site(root, 300)


def fetched_once_each(counts: dict[str, int], truth: set[str], *, start_twice: bool = False) -> None:
    """Every page of ``truth`` was fetched, none twice (but the start page when ``start_twice``)."""
    assert truth - counts.keys() == set()
    twice = {"index.html": 2} if start_twice else {}
    assert {page: n for page, n in counts.items() if page in truth and n > 1} == twice


@pytest.mark.parametrize("scrapy_version, reactor, seen, policy", [
    ("current", ASYNCIO, "exact", "scrapy"),
    ("current", EPOLL, "bloom", "host"),
    ("current", ASYNCIO, "drum", "bkdr-host:4"),
    ("2.11", EPOLL, "exact", "scrapy"),
    ("2.11", ASYNCIO, "bloom", "scrapy"),
])
def test_a_crawl_spider_fetches_every_page_once(site, tmp_path, request, scrapy_version, reactor, seen, policy):
    python = request.getfixturevalue("old_scrapy_python") if scrapy_version == "2.11" else sys.executable
    root, truth = site
    settings = scheduler_settings(tmp_path / "state", TWISTED_REACTOR=reactor, PYCRAWLER_SEEN=seen,
                                  PYCRAWLER_QUEUE_POLICY=policy, PYCRAWLER_DELAY="0")
    server = CountingServer(root)
    with server as base:
        done = run_scrapy(base + "index.html", settings, python=python)
    fetched_once_each(server.page_counts(), truth)
    assert "'finish_reason': 'finished'" in done.stderr
    assert f"'scheduler/dequeued/pycrawler': {len(truth) + 1}," in done.stderr  # and d0/missing.html, a 404


def test_kill_9_three_times_then_the_same_command_finishes_the_crawl(tmp_path):
    root = tmp_path / "site"
    truth = write_site(root, 1500)
    server = CountingServer(root)
    with server as base:
        command = scrapy_command(base + "index.html", scheduler_settings(tmp_path / "state"))
        for kill in range(3):
            before = sum(server.page_counts().values())
            crawl = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 60
            while sum(server.page_counts().values()) < before + 150 + 50 * kill:
                assert crawl.poll() is None, "the crawl ended before it was killed"
                assert time.monotonic() < deadline
                time.sleep(0.01)
            crawl.send_signal(signal.SIGKILL)
            crawl.wait()
        done = run_scrapy(base + "index.html", scheduler_settings(tmp_path / "state"))
    counts = server.page_counts()
    assert truth - counts.keys() == set()
    repeats = sum(n - 1 for page, n in counts.items() if page in truth)
    # Per kill: what the engine held (CONCURRENT_REQUESTS downloads and responses waiting for
    # their callback), and the start URL, which Scrapy schedules with dont_filter on every run.
    assert repeats <= 3 * (CONCURRENT_REQUESTS_BOUND + 1), sorted((n, p) for p, n in counts.items() if n > 1)
    assert "pycrawler: 0 requests waiting" not in done.stderr


@pytest.mark.parametrize("seen, kept_in", [(None, "visited.bloom"), ("exact", "00000000.jdb")])
def test_the_duplicate_filter_alone_under_scrapys_scheduler_keeps_its_seen_set(site, tmp_path, seen, kept_in):
    root, truth = site
    settings = dupefilter_settings(tmp_path)
    if seen:
        settings["PYCRAWLER_SEEN"] = seen
    server = CountingServer(root)
    with server as base:
        first = run_scrapy(base + "index.html", settings)
        # Scrapy's scheduler does not ask the filter about start requests (dont_filter), nor
        # record them: the start page is fetched again when a link leads to it.
        fetched_once_each(server.page_counts(), truth, start_twice=True)
        again = run_scrapy(base + "index.html", settings)
    # The second run finds every link seen: only the start request is fetched.
    assert server.page_counts()["index.html"] == 3
    assert sum(server.page_counts().values()) == len(truth) + 1 + 2   # d0/missing.html once
    assert "'dupefilter/filtered'" in first.stderr and "'downloader/request_count': 1," in again.stderr
    assert (tmp_path / "seen" / kept_in).exists()


def dupefilter_settings(tmp_path: Path, **more) -> dict:
    return {"DUPEFILTER_CLASS": "pycrawler.scrapy.DupeFilter", "PYCRAWLER_STATE": str(tmp_path / "seen"),
            "JOBDIR": str(tmp_path / "job"), **more}


def one_refusal(done: subprocess.CompletedProcess) -> str:
    """The one error line of a spider that refused to start, closed with reason pycrawler_error."""
    errors = [line for line in done.stderr.splitlines() if "] ERROR: " in line]
    assert len(errors) == 1, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "'finish_reason': 'pycrawler_error'" in done.stderr
    return errors[0]


def test_the_duplicate_filter_alone_refuses_a_scheduler_that_keeps_no_queue(site, tmp_path):
    root, _ = site
    settings = dupefilter_settings(tmp_path)
    del settings["JOBDIR"]
    server = CountingServer(root)
    with server as base:
        refused = subprocess.run(scrapy_command(base + "index.html", settings), cwd=ROOT, capture_output=True,
                                 text=True, timeout=60)
    assert "DupeFilter keeps its seen set across runs, and Scrapy's scheduler keeps its queue only with JOBDIR" \
        in one_refusal(refused)
    assert sum(server.page_counts().values()) == 0


def test_after_a_kill_the_duplicate_filter_alone_refuses_rather_than_lose_the_queue(tmp_path):
    """Scrapy's scheduler with JOBDIR, killed mid-crawl: its disk queue does not survive the kill,
    the seen set does; resumed, the links to every page seen but not fetched would be filtered."""
    root = tmp_path / "site"
    truth = write_site(root, 1500)
    settings = dupefilter_settings(tmp_path)
    server = CountingServer(root)
    with server as base:
        crawl = subprocess.Popen(scrapy_command(base + "index.html", settings), cwd=ROOT,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while sum(server.page_counts().values()) < 150:
            assert crawl.poll() is None and time.monotonic() < deadline, "the crawl ended before it was killed"
            time.sleep(0.01)
        crawl.send_signal(signal.SIGKILL)
        crawl.wait()
        fetched = sum(server.page_counts().values())
        assert fetched < len(truth)
        refused = subprocess.run(scrapy_command(base + "index.html", settings), cwd=ROOT, capture_output=True,
                                 text=True, timeout=60)
        assert "the last crawl with this seen set did not close (killed or crashed)" in one_refusal(refused)
        assert sum(server.page_counts().values()) == fetched  # nothing fetched, nothing marked seen
        # A clean run from a new state folder and job folder covers the site.
        server.counts.clear()
        done = run_scrapy(base + "index.html", dupefilter_settings(tmp_path / "again"))
    fetched_once_each(server.page_counts(), truth, start_twice=True)
    assert "'finish_reason': 'finished'" in done.stderr


def test_a_request_with_a_lambda_callback_gets_one_clear_error(site, tmp_path):
    root, truth = site
    server = CountingServer(root)
    with server as base:
        done = run_scrapy(base + "index.html", scheduler_settings(tmp_path / "state"), lambda_callback="1")
    errors = [line for line in done.stderr.splitlines() if "] ERROR: " in line]
    assert len(errors) == 1, errors
    assert re.search(f"cannot store <GET {re.escape(base)}d1/p1.html\\?lambda> in the crawl state: "
                     "Function <function [^ ]*<lambda> at", errors[0]), errors[0]
    assert "callbacks and errbacks must be methods of the spider" in errors[0]
    assert "'scheduler/unserializable': 1," in done.stderr
    fetched_once_each(server.page_counts(), truth)   # the crawl goes on without it


def test_settings_mistakes_are_one_error_line_each_and_close_the_spider(site, tmp_path):
    root, _ = site
    with CountingServer(root) as base:
        missing = subprocess.run(scrapy_command(base, {"SCHEDULER": "pycrawler.scrapy.Scheduler"}), cwd=ROOT,
                                 capture_output=True, text=True, timeout=60)
        run_scrapy(base + "index.html", scheduler_settings(tmp_path / "state"))
        other = subprocess.run(scrapy_command(base, scheduler_settings(tmp_path / "state", PYCRAWLER_SEEN="bloom")),
                               cwd=ROOT, capture_output=True, text=True, timeout=60)
        drum = subprocess.run(scrapy_command(base, {"DUPEFILTER_CLASS": "pycrawler.scrapy.DupeFilter",
                                                    "PYCRAWLER_STATE": str(tmp_path / "seen"),
                                                    "PYCRAWLER_SEEN": "drum"}),
                              cwd=ROOT, capture_output=True, text=True, timeout=60)
        cache = subprocess.run(
            scrapy_command(base, scheduler_settings(tmp_path / "cache", PYCRAWLER_URL_CACHE="mru:10")),
            cwd=ROOT, capture_output=True, text=True, timeout=60)
    for done, message in ((missing, "pycrawler.scrapy.Scheduler needs PYCRAWLER_STATE"),
                          (cache, "PYCRAWLER_URL_CACHE policy must be one of clock, lru, random"),
                          (other, "was crawled with PYCRAWLER_SEEN='exact'; resume it with the same setting"),
                          (drum, "DupeFilter answers per request: PYCRAWLER_SEEN must be bloom or exact")):
        errors = [line for line in done.stderr.splitlines() if "] ERROR: " in line]
        assert len(errors) == 1 and message in errors[0], done.stderr[-2000:]
        assert "Traceback" not in done.stderr and "'finish_reason': 'pycrawler_error'" in done.stderr


JDK_DOCS = Path("/usr/share/doc/openjdk-17-doc/api")
REAL_SITE = JDK_DOCS / "java.xml"
"""A real site: the java.xml module of the JDK API docs served on its own (462 pages, with the
links out of the module answered 404). One module, not all 10,137 pages: the same kinds of pages
and links at a twentieth of the time; the whole docs are crawled by scripts/bench/crawl_vs_scrapy.py."""


def test_a_real_site_the_jdk_java_xml_docs_is_fully_covered(tmp_path):
    if not (REAL_SITE / "module-summary.html").exists():
        missing("the JDK API docs (openjdk-17-doc) are not installed")
    from pycrawler.static_site.ground_truth import coverage, reachable_pages
    from pycrawler.static_site.server import StaticSite

    with StaticSite(REAL_SITE) as base:
        truth = reachable_pages(REAL_SITE, "module-summary.html", base_url=base)
        done = run_scrapy(base + "module-summary.html", scheduler_settings(tmp_path / "state", CONCURRENT_REQUESTS="16"),
                          urls_out=tmp_path / "urls.txt", timeout=600)
    fetched = (tmp_path / "urls.txt").read_text().split()
    assert len(truth) > 400
    assert coverage(fetched, truth, REAL_SITE, base) == (1.0, len(truth))
    assert len(fetched) == len(set(fetched))       # no page twice
    assert "'finish_reason': 'finished'" in done.stderr


# -- the parts, in this process -------------------------------------------------------------------

def test_importing_pycrawler_does_not_import_scrapy():
    probe = ("import sys, pycrawler, pycrawler.scrapy, pycrawler.frontier.workqueues, pycrawler.seen.tables; "
             "print('scrapy' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"


def test_higher_priorities_come_first_in_the_frontiers_order():
    from pycrawler.scrapy.scheduler import frontier_order

    priorities = [10_000, 8192, 300, 2, 1, 0, -1, -2, -300, -8191, -10_000]
    orders = [frontier_order(p) for p in priorities]
    assert orders == sorted(orders) and len(set(orders[1:-1])) == len(orders) - 2
    assert orders[0] == orders[1] == (0, 0) and orders[-1] == orders[-2] == (127, 127)
    assert all(0 <= byte <= 127 for order in orders for byte in order)


def test_a_request_comes_back_from_its_frontier_record_as_scrapy_serialized_it():
    from scrapy import Request
    from scrapy.spiders import Spider

    from pycrawler.frontier.pending_records import decode_entry, encode_entry
    from pycrawler.scrapy.requests import RequestEncoder, loads, payload_of, to_record

    class ProbeSpider(Spider):
        name = "probe"

        def parse_item(self, response):
            pass

        def failed(self, failure):
            pass

    spider = ProbeSpider()
    request = Request("http://127.0.0.1:8000/a?b=c", method="POST", body=b"\x00\xff body", priority=-3,
                      headers={"X-Probe": "yes"}, callback=spider.parse_item, errback=spider.failed,
                      meta={"depth": 2, "path": ["x", "y"]}, cb_kwargs={"page": 7}, dont_filter=True,
                      flags=["probe"])
    encoder = RequestEncoder(spider)
    for _ in range(2):   # the second time, the encoder knows the spider's methods already
        stored = encoder.dumps(request)
        assert pickle.loads(stored) == request.to_dict(spider=spider)   # Scrapy's own serialization
        record = decode_entry(encode_entry(to_record(request.url, stored), request.url, 0))
        back = loads(payload_of(record), spider)
        assert record.ori_url == request.url
        assert (back.url, back.method, back.body, back.priority, back.meta, back.cb_kwargs, back.dont_filter,
                back.flags) == (request.url, "POST", b"\x00\xff body", -3, request.meta, {"page": 7}, True, ["probe"])
        assert back.callback == spider.parse_item and back.errback == spider.failed
        assert back.headers.getlist("X-Probe") == [b"yes"]
    other = Request("http://127.0.0.1:8000/b", callback=spider.parse_item)   # a known callback, no errback
    assert pickle.loads(encoder.dumps(other)) == other.to_dict(spider=spider)


def test_a_request_that_cannot_be_stored_is_named_in_the_error():
    from scrapy import Request
    from scrapy.spiders import Spider

    from pycrawler.scrapy.requests import RequestEncoder, UnserializableRequest

    spider = Spider(name="probe")
    encoder = RequestEncoder(spider)
    with pytest.raises(UnserializableRequest, match=r"cannot store <GET http://127.0.0.1/x> .*lambda.*Spider"):
        encoder.dumps(Request("http://127.0.0.1/x", callback=lambda response: None))
    with pytest.raises(UnserializableRequest, match=r"cannot store <GET http://127.0.0.1/y> "):
        encoder.dumps(Request("http://127.0.0.1/y", meta={"lock": __import__("threading").Lock()}))


def open_scheduler(state: Path, **settings):
    """pycrawler's scheduler opened as Scrapy opens it, in this process, on a real JE state
    folder; the engine is a stand-in holding nothing in progress (each request handed out is
    processed by the next call). Returns (crawler, scheduler)."""
    import types

    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    from pycrawler.scrapy import Scheduler

    class Probe(Spider):
        name = "probe"

    crawler = get_crawler(Probe, scheduler_settings(state, PYCRAWLER_QUEUE_POLICY="host", PYCRAWLER_DELAY="0",
                                                    **settings))
    crawler.spider = spider = Probe()
    crawler.engine = types.SimpleNamespace(
        _slot=types.SimpleNamespace(inprogress=set(), nextcall=types.SimpleNamespace(schedule=lambda delay=0: None)))
    scheduler = Scheduler.from_crawler(crawler)
    scheduler.open(spider)
    assert scheduler.frontier is not None, "the scheduler refused to start"
    return crawler, scheduler


def drain(scheduler) -> list[str]:
    urls = []
    while (request := scheduler.next_request()) is not None:
        urls.append(request.url.rpartition("/")[2])
    return urls


@pytest.mark.parametrize("disk_queue, order", [
    (None, ["x", "c", "b", "a"]),                                  # Scrapy's default: LIFO within a priority
    ("scrapy.squeues.PickleFifoDiskQueue", ["x", "a", "b", "c"]),  # Scrapy's breadth-first recipe
])
def test_order_within_a_priority_follows_scrapys_disk_queue_setting(tmp_path, disk_queue, order):
    from scrapy import Request

    _, scheduler = open_scheduler(tmp_path / "state", **({"SCHEDULER_DISK_QUEUE": disk_queue} if disk_queue else {}))
    try:
        for name in "abc":
            scheduler.enqueue_request(Request(f"http://127.0.0.1/{name}"))
        scheduler.enqueue_request(Request("http://127.0.0.1/x", priority=1))
        assert drain(scheduler) == order
    finally:
        scheduler.close("finished")


@pytest.mark.parametrize("url_cache", [None, "clock:1000"])
def test_a_filtered_duplicate_is_refused_or_reported_dropped(tmp_path, url_cache):
    from scrapy import Request, signals

    crawler, scheduler = open_scheduler(tmp_path / "state", **({"PYCRAWLER_URL_CACHE": url_cache} if url_cache else {}))
    dropped = []

    def on_dropped(request, spider):
        dropped.append(request.url.rpartition("/")[2])

    crawler.signals.connect(on_dropped, signal=signals.request_dropped)
    try:
        assert scheduler.enqueue_request(Request("http://127.0.0.1/a")) is True
        assert scheduler.enqueue_request(Request("http://127.0.0.1/a")) is False   # in the buffer: refused at once
        assert scheduler.enqueue_request(Request("http://127.0.0.1/a", dont_filter=True)) is True
        assert scheduler.enqueue_request(Request("http://127.0.0.1/b")) is True
        assert drain(scheduler) == ["a", "b", "a"]
        # Seen in the JE table only: accepted now, found when the buffer is written, reported
        # dropped then; a URL cache knows it at once, as Scrapy's in-memory filter would.
        assert scheduler.enqueue_request(Request("http://127.0.0.1/b")) is (url_cache is None)
        assert drain(scheduler) == []
        assert dropped == (["b"] if url_cache is None else [])
        stats = crawler.stats.get_stats()
        assert stats["dupefilter/filtered"] == 2 and stats["scheduler/enqueued"] == 3
        if url_cache:
            assert stats["pycrawler/url_cache/hits"] == 1
    finally:
        scheduler.close("finished")
