"""The fetch path over processes (pycrawler/crawl/fetchers.py): what crosses a fetcher's pipe,
every fetcher used, one line when a fetcher dies, and nothing lost for the run that resumes."""

from __future__ import annotations

import asyncio
import multiprocessing
import re
import signal
import subprocess
import threading
import time

import psutil
from crawl_sites import ROOT, CountingServer, assert_each_page_fetched_once, crawl_command, run_crawl, write_site

from pycrawler.crawl.fetchers import Fetched, FetchEnded, FetcherPool, FetcherSetup, FetchTask, RobotsFetches, _Pipe
from pycrawler.crawl.pages import LinkPolicy
from pycrawler.crawl.scope import Scope
from pycrawler.fetch import FetchConfig, Fetcher


class Unpicklable(Exception):
    """An exception a page's work might raise that pickle cannot carry (it holds a lock)."""

    def __init__(self):
        super().__init__("holds a lock")
        self.lock = threading.Lock()


def exchange(messages: list) -> list[list]:
    """Put ``messages`` on one end of a pipe in one turn of a loop; the batches the other end got."""
    sender, receiver = multiprocessing.Pipe()

    async def run() -> list[list]:
        loop = asyncio.get_running_loop()
        got: list[list] = []
        done = loop.create_future()

        def on_batch(batch):
            got.append(batch)
            if sum(map(len, got)) == len(messages):
                done.set_result(None)

        ours = _Pipe(sender, loop, lambda batch: None, lambda: None)
        theirs = _Pipe(receiver, loop, on_batch, lambda: None)
        for message in messages:
            ours.put(message)
        await asyncio.wait_for(done, 10)
        ours.stop(), theirs.stop()
        return got

    try:
        return asyncio.run(run())
    finally:
        sender.close(), receiver.close()


def test_the_messages_of_one_turn_of_the_loop_cross_in_one_batch_in_order():
    messages = [(n, f"answer {n}") for n in range(50)]
    assert exchange(messages) == [messages]


def test_an_answer_that_does_not_pickle_crosses_as_an_error_and_the_others_as_they_are():
    (batch,) = exchange([(1, "fine"), (2, Unpicklable()), (3, "fine too")])
    assert batch[0] == (1, "fine") and batch[2] == (3, "fine too")
    ident, error = batch[1]
    assert ident == 2 and isinstance(error, RuntimeError) and "Unpicklable" in str(error)


def fork_servers(process: psutil.Process) -> list[psutil.Process]:
    return [child for child in process.children() if "forkserver" in " ".join(child.cmdline())]


def fetcher_pids(crawl: psutil.Process) -> list[int]:
    """The crawl's fetchers: what its fork server forked."""
    return [fetcher.pid for server in fork_servers(crawl) for fetcher in server.children()]


def test_every_fetcher_fetches_and_the_crawl_log_holds_each_fetch_once(tmp_path):
    reachable = write_site(tmp_path / "site", 120)
    server = CountingServer(tmp_path / "site")
    with server as base_url:
        done = run_crawl(base_url + "index.html", tmp_path / "state", "--delay", "0", "--queue-policy", "bkdr",
                         "--fetchers", "3", "--warc", str(tmp_path / "warcs"), timeout=120)
        assert done.returncode == 0, done.stderr
        assert_each_page_fetched_once(server.page_counts(), reachable)
    lines = (tmp_path / "state" / "crawl.log").read_text().splitlines()
    urls = [line.split()[3] for line in lines]
    assert len(urls) == len(set(urls)) == len(reachable) + 1  # and the dangling link's 404
    assert len(list((tmp_path / "warcs").glob("*.warc.gz"))) == 3  # each fetcher its own file, all closed
    assert not list((tmp_path / "warcs").glob("*.open"))


def test_a_fetcher_killed_stops_the_crawl_in_one_line_and_the_next_run_fetches_the_rest_once(tmp_path):
    reachable = write_site(tmp_path / "site", 300)
    server = CountingServer(tmp_path / "site")
    with server as base_url:
        server.quiet()
        seed, state = base_url + "index.html", tmp_path / "state"
        crawl = subprocess.Popen(crawl_command(seed, state, "--delay", "0.05", "--fetchers", "2"), cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        watched = psutil.Process(crawl.pid)
        deadline = time.monotonic() + 60
        while len(server.page_counts()) < 20:  # the crawl is under way
            assert time.monotonic() < deadline and crawl.poll() is None
            time.sleep(0.05)
        psutil.Process(fetcher_pids(watched)[0]).send_signal(signal.SIGKILL)
        _, stderr = crawl.communicate(timeout=60)
        assert crawl.returncode != 0
        assert re.fullmatch(r"pycrawler: a fetcher process ended while the crawl ran \(signal SIGKILL\): .*\n",
                            stderr), stderr
        resumed = run_crawl(seed, state, "--delay", "0", timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        counts = server.page_counts()
    assert {path for path in counts if path.endswith(".html")} >= reachable
    # At most --concurrency (32) pages were in process at the kill: those, and no others, twice.
    assert sum(n - 1 for n in counts.values()) <= 32


def test_a_fetch_ends_before_its_page_is_worked_on_and_a_replay_ends_with_its_answer(tmp_path):
    """The crawl releases a URL's queue at the fetch's end: a fetcher says so (FetchEnded)
    before it parses the page, and the answer, links and all, follows; a page read back from
    a WARC file (a replay) has no fetch to end first."""
    write_site(tmp_path / "site", 10)
    server = CountingServer(tmp_path / "site")
    config = FetchConfig(contact_url="http://127.0.0.1/contact")
    with server as base_url:
        seed = base_url + "index.html"

        async def run() -> list:
            setup = FetcherSetup(LinkPolicy(Scope.of("seed-hosts", [seed])), config, sitemaps=False, warc=None,
                                 fsync=False, trace=False)
            pool = FetcherPool(1)
            pool.serve(setup)
            events: list = []

            async def fetch(task: FetchTask) -> None:
                fetched = await pool.fetch(task, lambda end: events.append(("ended", type(end), end.status)))
                events.append(("answer", fetched.status, fetched.page and fetched.page.extracted))

            try:
                await pool.warm_up()
                await fetch(FetchTask(0, seed, 0, "", None, 1))
                await fetch(FetchTask(0, base_url + "d0/missing.html", 0, "L", seed, 1))
                async with Fetcher(config) as fetcher:  # the fetch as a WARC file gives it back
                    replay = await fetcher.fetch(seed)
                await fetch(FetchTask(0, seed, 0, "", None, 1, replay))
            finally:
                await pool.close()
            return events

        events = asyncio.run(run())
    links = events[1][2]
    assert links > 0
    assert events == [("ended", FetchEnded, 200), ("answer", 200, links),
                      ("ended", FetchEnded, 404), ("answer", 404, None),
                      ("ended", Fetched, 200), ("answer", 200, links)]


def test_two_crawls_of_one_process_share_the_fork_server_and_the_last_close_ends_it(tmp_path):
    """Fetchers are forked from one fork server a process: a crawl's close leaves the fetchers
    of another crawl of the same process fetching, and the last close ends the server (nothing
    of the crawls outlives them). robots.txt's fetch comes back whole (RobotsFetches)."""
    write_site(tmp_path / "site", 3)
    server = CountingServer(tmp_path / "site")
    config = FetchConfig(contact_url="http://127.0.0.1/contact")
    with server as base_url:
        seed = base_url + "index.html"
        setup = FetcherSetup(LinkPolicy(Scope.of("seed-hosts", [seed])), config, sitemaps=False, warc=None,
                             fsync=False, trace=False)

        async def run() -> tuple[int, int, list[psutil.Process]]:
            first, second = FetcherPool(1), FetcherPool(1)
            for pool in (first, second):
                pool.serve(setup)
                await pool.warm_up()
            servers = fork_servers(psutil.Process())
            await first.close()
            try:
                robots = await RobotsFetches(second).fetch(base_url + "robots.txt", max_body=1000)
                fetched = await second.fetch(FetchTask(0, seed, 0, "", None, 1), lambda end: None)
            finally:
                await second.close()
            return robots.status, fetched.status, servers

        robots_status, page_status, servers = asyncio.run(run())
    assert (robots_status, page_status) == (404, 200)
    assert len(servers) == 1 and not servers[0].is_running()  # ended and reaped
