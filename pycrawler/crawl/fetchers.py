"""The fetch path over the machine's cores: fetcher processes, each fetching, parsing and writing.

The crawling process owns the JE state and the frontier: it polls, asks robots.txt, hands each
URL to a fetcher, writes crawl.log, schedules the links and commits. A fetcher process
(:func:`_serve`, ``--fetchers N`` of them) does everything a fetch needs that touches no shared
state, on its own event loop and its own core:

1. the GET (:class:`~pycrawler.fetch.Fetcher`, its own keep-alive pools and DNS cache);
2. the page's work (:mod:`.pages`: extraction or a sitemap's URLs, scope, depth and trap rules,
   its memory of links passed on);
3. the fetch's crawl.log line, payload digest included (:func:`~.crawllog.fetch_line`), which
   the crawling process appends to the crawl's one crawl.log;
4. with ``--warc``, the fetch's WARC records, in the fetcher's own WARC files (as Heritrix's
   writer pool keeps one file per writer), handed to the operating system (with ``--fsync``,
   the disk) before the fetch is reported: a completion the crawling process commits has its
   records in a WARC file, whatever is killed after.

The crawling process has no HTTP client of its own: robots.txt is fetched by a fetcher too
(:class:`RobotsFetches`), its result sent back whole, so aiohttp is loaded only where it fetches.
The fetchers start before the crawl opens its state (:class:`FetcherPool`), their interpreters'
start-up beside the JVM's and JE's, and get their :class:`FetcherSetup` once the crawl runs.

What crosses back is small (:class:`Fetched`: the status, the record's fields, the links to
schedule, the line); the body crosses only when a replay (read back from a WARC file) is
parsed. Each fetcher holds a share of the ``--concurrency`` URLs in process: a URL goes to
the fetcher with the fewest, so one host's fetches spread over every core too, each fetcher
with its own connection to it.

Measured before choosing (docs/crawler.md, "The fetch path over the cores"): the crawl's one
loop thread spent ~0.85 ms a page, a third of it in the HTTP client, with the page workers
taking the rest of a second core; a fetcher that also parses takes the body nowhere else, so
the old hand-off to page workers (4%) goes, and crawl.log's line and the digest (13%) move off
the crawling process.

Fetchers are tied to the crawling process (:mod:`pycrawler.worker_processes`): a kill -9 of
it ends them at once, and a failpoint a fetcher passes kills the crawl first
(:func:`pycrawler.failpoints.kill_with`), as a kill of the crawl at that instant would. A
fetcher that dies on its own fails the crawl with one line; the URLs it held stay pending.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
from collections.abc import Callable
from multiprocessing.reduction import ForkingPickler
from pathlib import Path

from .. import failpoints
from ..errors import PycrawlerError
from ..fetch.result import FetchConfig, FetchResult
from ..parse.html import HTML_TYPES, looks_like_html, mime_type
from ..parse.links import Hop, Outlink, sitemap_hops
from ..parse.sitemap import place_of
from ..worker_processes import ParentTie, release_fork_server, start_tied, use_tied_fork_server
from . import pages
from .crawllog import fetch_line
from .durable import write_failure
from .pages import LinkPolicy, PageResult
from .warc import WarcWriter

START_TIMEOUT = 300.0
"""Seconds the fetchers may take to start (imports on a machine at a load of 40 take tens)."""
CLOSE_TIMEOUT = 30.0
"""Seconds a fetcher may take to finish its WARC file and end once asked, before it is killed."""

CLOSE, POLICY, CANCEL = "close", "policy", "cancel"
"""Control messages the crawling process sends a fetcher beside its fetches."""
READY = "ready"


class FetcherDied(PycrawlerError):
    """A fetcher process ended while the crawl ran (killed, out of memory): the crawl stops."""


def default_fetchers() -> int:
    """One fetcher a core this process may run on (on 2 cores the 100,000-page web crawled 1.34x
    faster with 2 than with 1: docs/benchmarks.md, "The fetch path over the cores")."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


@dataclasses.dataclass(frozen=True)
class FetcherSetup:
    """What every fetcher is started with."""

    policy: LinkPolicy
    fetch_config: FetchConfig
    sitemaps: bool                  # read sitemaps (robots.txt's, a seed that is one)
    warc: Path | None               # the WARC folder, or None
    fsync: bool                     # WARC records reach the disk before a fetch is reported
    trace: bool                     # send every outlink back (the crawling process writes the trace)


@dataclasses.dataclass(slots=True)
class WholeFetch:
    """One GET whose :class:`FetchResult` comes back as it is, with no page work (robots.txt)."""

    ident: int
    url: str
    max_body: int | None


@dataclasses.dataclass(slots=True)
class FetchTask:
    """One URL to fetch (or, with ``replay``, a fetch read back from a WARC file to parse)."""

    ident: int
    url: str
    layer: int
    hop_path: str
    via: str | None
    worker: int                     # crawl.log's fetch slot number
    replay: object = None           # a pycrawler.fetch.FetchResult, not fetched again


class RecordFields:
    """The fields a fetch sets on its URL's record (:meth:`FetchResult.record_on`), carried
    back to the crawling process, which encodes the record."""

    __slots__ = ("status_code", "file_size", "last_update_time", "url")

    def __init__(self):
        self.url = None  # set only when the fetch connected

    def copy_to(self, crawl_url) -> None:
        crawl_url.status_code, crawl_url.file_size = self.status_code, self.file_size
        crawl_url.last_update_time = self.last_update_time
        if self.url is not None:
            crawl_url.url = self.url


@dataclasses.dataclass(slots=True)
class FetchEnded:
    """What a fetcher sends as a fetch ends, ahead of the page's work: what the URL's queue
    turns around on (the fields :func:`pycrawler.crawl.engine.fetch_outcome` reads)."""

    status: int
    duration_ms: float
    retry_after: float | None


@dataclasses.dataclass(slots=True)
class Fetched:
    """What a fetcher sends back for a :class:`FetchTask`."""

    status: int
    duration_ms: float
    retry_after: float | None       # seconds a Retry-After header asks for
    size: int                       # payload bytes received
    record: RecordFields
    media: str | None               # the media type, lowercased
    redirect: str | None
    line: str | None                # the crawl.log line (None for a replay: logged by the run that fetched it)
    page: PageResult | None         # the page's links and fields, or a sitemap's links
    sitemap: bool                   # ``page`` is the body read as a sitemap
    error: tuple[str, str, bool] | None = None  # the WARC write failed: (reason, " (FILE)", disk full)


class FetcherPool:
    """``count`` fetcher processes, driven from the crawl's loop: ``await pool.fetch(task, ended)``.

    They are started before the crawl opens its state (:meth:`__init__`), so that their
    interpreters start while the JVM and JE do, and given their :class:`FetcherSetup` once the
    crawl runs (:meth:`serve`), when its scope is known. Started all at once in the thread that
    runs the crawl, which they must not outlive (:mod:`pycrawler.worker_processes`)."""

    def __init__(self, count: int):
        # The crawling process runs a JVM: it never forks. Each fetcher is forked from
        # multiprocessing's fork server, a fresh interpreter that has imported this module and
        # the HTTP client once (a third of a second of CPU that each spawned fetcher paid again);
        # it is started by the first pool of this process, in its environment and folder, and
        # ended by the last one's close.
        context = multiprocessing.get_context("forkserver")
        use_tied_fork_server(context, [__name__, "pycrawler.fetch.client"])
        self._holds_server = True
        self._fetchers: list[_Fetcher] = []
        # One large page parsed at a time across the fetchers; held here while they unpickle it.
        self._large_page_lock = large_page_lock = context.Lock()
        self._started: list[tuple[multiprocessing.Process, multiprocessing.connection.Connection]] = []
        for _ in range(count):
            ours, theirs = context.Pipe()
            process = context.Process(target=start_tied, name="pycrawler-fetcher", daemon=True,
                                      args=(ParentTie("forkserver"), _serve, theirs, os.getpid(), large_page_lock))
            process.start()
            theirs.close()
            self._started.append((process, ours))

    def serve(self, setup: FetcherSetup) -> None:
        """Give every fetcher ``setup`` and drive it from the running loop from now on."""
        loop = asyncio.get_running_loop()
        for process, connection in self._started:
            with contextlib.suppress(OSError):  # one that died already is reported by its pipe's end
                connection.send(setup)
            self._fetchers.append(_Fetcher(process, connection, loop))
        self._started = []

    def abandon(self) -> None:
        """Kill the fetchers never served (the crawl failed to open its state): they hold no
        file yet, and one still importing would keep the crawl's refusal waiting."""
        for process, connection in self._started:
            process.kill()
            process.join()
            connection.close()
        self._started = []
        self._let_server_go()

    @property
    def count(self) -> int:
        return len(self._fetchers) + len(self._started)

    async def warm_up(self) -> None:
        """Wait until every fetcher has started, so the first URLs do not wait for interpreters."""
        try:
            await asyncio.wait_for(asyncio.gather(*(fetcher.ready for fetcher in self._fetchers)), START_TIMEOUT)
        except TimeoutError:
            raise FetcherDied(f"the fetcher processes did not start within {START_TIMEOUT:.0f} s") from None

    async def fetch(self, task: FetchTask, ended: Callable[[FetchEnded | Fetched], None]) -> Fetched:
        """The fetcher with the fewest URLs in process fetches ``task``; a cancel reaches it.
        ``ended`` is called as the fetch ends, before the page's work is done (with the
        :class:`Fetched` itself when both come at once: a replay, a failed page)."""
        fetcher = min(self._fetchers, key=_Fetcher.load)
        return await fetcher.run(task, ended)

    async def fetch_whole(self, url: str, max_body: int | None = None) -> FetchResult:
        """GET ``url`` in the fetcher with the fewest URLs in process; its result, whole."""
        fetcher = min(self._fetchers, key=_Fetcher.load)
        return await fetcher.fetch_whole(WholeFetch(0, url, max_body))

    def use_policy(self, policy: LinkPolicy) -> None:
        """Pages fetched from now on keep their links under ``policy`` (the crawl's scope grew)."""
        for fetcher in self._fetchers:
            fetcher.send((POLICY, policy))

    async def close(self) -> None:
        """Let every fetcher finish its WARC file and end, then their fork server."""
        await asyncio.gather(*(fetcher.close() for fetcher in self._fetchers))
        self._let_server_go()

    def _let_server_go(self) -> None:
        """Once, when every fetcher has ended: the fork server may end (another crawl of this
        process may still use it)."""
        if self._holds_server:
            self._holds_server = False
            release_fork_server()


class _Pipe:
    """One end of a fetcher's pipe, on its process's event loop: messages go out in batches, one
    write per turn of the loop (a fetch's task and its answer each crossed in a write of their
    own: ~18% of the crawling process's time on one host went to those writes and reads), and
    each batch that comes in is handed to ``on_batch``; ``on_closed`` when the other end is gone."""

    def __init__(self, connection, loop: asyncio.AbstractEventLoop, on_batch, on_closed):
        self.connection, self.loop, self.on_batch, self.on_closed = connection, loop, on_batch, on_closed
        self._outbox: list = []
        loop.add_reader(connection.fileno(), self._readable)

    def put(self, message) -> None:
        self._outbox.append(message)
        if len(self._outbox) == 1:
            self.loop.call_soon(self.flush)

    def flush(self) -> None:
        batch, self._outbox = self._outbox, []
        if not batch or self.connection.closed:
            return
        try:
            payload = ForkingPickler.dumps(batch)
        except Exception:  # one message does not pickle (a page's odd exception): the rest still cross
            payload = ForkingPickler.dumps([_crossing(message) for message in batch])
        try:
            self.connection.send_bytes(payload)
        except OSError:
            self.stop()
            self.on_closed()

    def _readable(self) -> None:
        try:
            batch = self.connection.recv()
        except (EOFError, OSError):
            self.stop()
            self.on_closed()
            return
        self.on_batch(batch)

    def stop(self) -> None:
        if not self.connection.closed:
            self.loop.remove_reader(self.connection.fileno())


class _Fetcher:
    """The crawling process's end of one fetcher: its pipe, and the fetches it holds."""

    def __init__(self, process, connection, loop: asyncio.AbstractEventLoop):
        self.process, self.loop = process, loop
        self.ready = loop.create_future()
        self.closed = loop.create_future()
        self.waiting: dict[int, tuple[asyncio.Future, asyncio.Future]] = {}  # ident -> (ended, answer)
        self._next = 0
        self.pipe = _Pipe(connection, loop, self._answers, self._ended)

    def load(self) -> int:
        return len(self.waiting)

    def send(self, message) -> None:
        if self.closed.done():
            raise self._died()
        self.pipe.put(message)

    async def run(self, task: FetchTask, ended: Callable[[FetchEnded | Fetched], None]) -> Fetched:
        with self._sent(task) as (fetch_ended, answer):
            ended(await fetch_ended)  # in the caller's task: what it raises is the URL's
            return await answer

    async def fetch_whole(self, order: WholeFetch) -> FetchResult:
        with self._sent(order) as (fetch_ended, _):
            return await fetch_ended  # its result is its end

    @contextlib.contextmanager
    def _sent(self, order: FetchTask | WholeFetch):
        """Send ``order`` and wait, in the block, on its futures (the fetch's end, its answer);
        a cancel reaches the fetcher."""
        self._next += 1
        order.ident = self._next
        futures = self.loop.create_future(), self.loop.create_future()
        self.waiting[order.ident] = futures
        try:
            self.send(order)
            yield futures
        except asyncio.CancelledError:
            if not self.closed.done():
                self.pipe.put((CANCEL, order.ident))
            raise
        finally:
            self.waiting.pop(order.ident, None)

    def _answers(self, batch: list) -> None:
        for ident, fetched in batch:  # a fetch's answer, or READY or CLOSE
            if ident == READY:
                self.ready.set_result(None)
            elif ident == CLOSE:
                self.pipe.stop()
                self.closed.set_result(None)
            elif (futures := self.waiting.get(ident)) is not None:
                fetch_ended, answer = futures
                if isinstance(fetched, Exception):  # the page's work raised in the fetcher
                    _fail(futures, fetched)
                elif not fetch_ended.done():  # the fetch's end, or an answer that came with it
                    fetch_ended.set_result(fetched)
                if isinstance(fetched, Fetched) and not answer.done():
                    answer.set_result(fetched)

    def _ended(self) -> None:
        """The fetcher's end of the pipe closed before it said it was done: it died."""
        died = self._died()
        for future in (self.ready, self.closed):
            if not future.done():
                future.set_exception(died)
        self.ready.exception(), self.closed.exception()  # retrieved: a crawl that did not wait is not warned
        for futures in self.waiting.values():
            _fail(futures, died)

    def _died(self) -> FetcherDied:
        self.process.join(1.0)  # its pipe closed as it ended: its exit status follows at once
        code = self.process.exitcode
        how = f"exit code {code}" if code is None or code >= 0 else f"signal {signal.Signals(-code).name}"
        return FetcherDied(f"a fetcher process ended while the crawl ran ({how}): the crawl stopped; "
                           "its URLs stay pending: run the same command to resume")

    async def close(self) -> None:
        """Ask the fetcher to finish its WARC file and end; one that does not within
        :data:`CLOSE_TIMEOUT` is killed (its ``.open`` WARC file is repaired by the next run)."""
        if not self.closed.done():
            self.pipe.put((CLOSE, None))
            with contextlib.suppress(FetcherDied, TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.closed), CLOSE_TIMEOUT)
        if not self.closed.done():
            self.process.kill()
        await self.loop.run_in_executor(None, self.process.join)
        self.pipe.stop()
        self.pipe.connection.close()


def _fail(futures: tuple[asyncio.Future, asyncio.Future], exc: BaseException) -> None:
    """Fail a fetch on the future its caller awaits (the end, else the answer): a failure set
    on one it never awaits would be reported as never retrieved."""
    future = next((f for f in futures if not f.done()), None)
    if future is not None:
        future.set_exception(exc)


# -- in the fetcher process ----------------------------------------------------------------------

def _serve(connection, crawl: int, large_page_lock) -> None:
    """A fetcher process's life: wait for its setup, then fetch what arrives until told to close.
    ``crawl``: the crawling process's id."""
    for signum in (signal.SIGINT, signal.SIGTERM):  # the crawling process decides when its fetchers end
        signal.signal(signum, signal.SIG_IGN)
    failpoints.kill_with(crawl)
    try:
        setup = connection.recv()
    except EOFError:  # the crawl ended before it ran (its state refused): nothing to do
        return
    pages.start_worker(setup.policy, large_page_lock)
    asyncio.run(_FetcherProcess(connection, setup).run())


class _FetcherProcess:
    def __init__(self, connection, setup: FetcherSetup):
        self.connection, self.setup = connection, setup
        self.tasks: dict[int, asyncio.Task] = {}
        self.warc = WarcWriter(setup.warc, fsync=setup.fsync) if setup.warc is not None else None
        self.error: tuple[str, str, bool] | None = None  # the WARC write that failed: every later fetch says so

    async def run(self) -> None:
        from ..fetch.client import Fetcher  # here, not at the top: the crawling process never loads the client

        loop = asyncio.get_running_loop()
        self.done = loop.create_future()
        async with Fetcher(self.setup.fetch_config) as fetcher:
            self.fetcher = fetcher
            self.pipe = _Pipe(self.connection, loop, self._orders, _crawl_gone)
            self.pipe.put((READY, None))
            await self.done
            self.pipe.stop()
            for task in self.tasks.values():
                task.cancel()
            await asyncio.gather(*self.tasks.values(), return_exceptions=True)
        if self.warc is not None and self.error is None:
            self.warc.close()
        self.pipe.put((CLOSE, None))
        self.pipe.flush()

    def _orders(self, batch: list) -> None:
        for message in batch:
            if isinstance(message, (FetchTask, WholeFetch)):
                work = self._fetch(message) if isinstance(message, FetchTask) else self._fetch_whole(message)
                task = asyncio.create_task(work)
                self.tasks[message.ident] = task
                task.add_done_callback(lambda _, ident=message.ident: self.tasks.pop(ident, None))
                continue
            kind, value = message
            if kind == CANCEL:
                if (task := self.tasks.get(value)) is not None:
                    task.cancel()
            elif kind == POLICY:
                pages.use_policy(value)
            elif kind == CLOSE and not self.done.done():
                self.done.set_result(None)

    async def _fetch(self, task: FetchTask) -> None:
        replayed = task.replay is not None
        result = task.replay if replayed else await self.fetcher.fetch(task.url)
        if not replayed:
            # The queue turns around as the fetch ends, not after the page's work: the end
            # crosses first (the loop's turn writes it before this task goes on), so with one
            # connection a host the next fetch overlaps this page's parse.
            self.pipe.put((task.ident, FetchEnded(result.status, result.duration_ms, result.retry_after())))
            await asyncio.sleep(0)
        try:
            answer = self._work(task, result, replayed)
        except Exception as exc:  # a bug on one page: the crawling process records it (-5) and goes on
            answer = exc
        self.pipe.put((task.ident, answer))

    async def _fetch_whole(self, order: WholeFetch) -> None:
        self.pipe.put((order.ident, await self.fetcher.fetch(order.url, max_body=order.max_body)))

    def _work(self, task: FetchTask, result: FetchResult, replayed: bool) -> Fetched:
        """The page's work and outputs; see the module docstring."""
        status, hop_path = result.status, task.hop_path
        headers = result.header_map
        media = mime_type(headers)
        answered = 200 <= status < 300
        html = answered and (media in HTML_TYPES if media else looks_like_html(result.body))
        seed = not hop_path.rstrip(Hop.REDIRECT.value)  # a seed, or where a seed redirects (http to https)
        page = None
        sitemap = answered and self.setup.sitemaps and bool(sitemap_hops(hop_path) or (seed and not html))
        if sitemap:
            page = pages.process_sitemap(result.body, task.layer, *sitemap_place(task.url, hop_path, task.via))
        elif html:
            page = pages.process_page(result.body, task.url, headers, task.layer)
        outlinks = page.outlinks if page is not None else None
        line = None
        if not replayed:  # a replay's line and records are there already
            line = fetch_line(result, hop_path=hop_path, via=task.via, worker=task.worker)
            if self.warc is not None and self.error is None:
                found = [Outlink(u, Hop(h), c) for u, h, c in outlinks] if outlinks is not None else ()
                self._write_warc(result, found, hop_path, task.via)
        if page is not None and not self.setup.trace:
            page.outlinks = None  # the WARC file has them; nobody else wants them
        record = RecordFields()
        result.record_on(record)
        return Fetched(status=status, duration_ms=result.duration_ms, retry_after=result.retry_after(),
                       size=len(result.payload), record=record, media=media, redirect=result.redirect, line=line,
                       page=page, sitemap=sitemap, error=self.error)

    def _write_warc(self, result: FetchResult, outlinks, hop_path: str, via: str | None) -> None:
        """The fetch's records, handed to the OS (``--fsync``: the disk) before it is reported;
        a failed write keeps the file ``.open`` for the next run's repair, and writes no more."""
        try:
            self.warc.write_fetch(result, outlinks=outlinks, hop_path=hop_path, via=via)
            self.warc.flush()
        except OSError as exc:
            self.error = write_failure(exc)
            self.warc.abandon()


def _crawl_gone() -> None:
    """The crawling process's end of the pipe closed: its work is gone, and so is this fetcher."""
    os._exit(0)


def _crossing(message):
    """``message``, or when it does not pickle, an answer to the same fetch that says so (a
    RuntimeError, which the crawling process records as the page's -5): a lost answer would
    keep its URL in process for ever."""
    try:
        pickle.dumps(message)
    except Exception:
        ident, answer = message
        return ident, RuntimeError(f"{type(answer).__name__}: {answer}"[:1000])
    return message


def sitemap_place(url: str, hop_path: str, via: str | None) -> tuple[tuple[str, ...], bool]:
    """Where the sitemap at ``url`` may list URLs, and whether an index's sitemaps are followed.

    Its URLs must be under its folder, or anywhere on the host whose robots.txt named it; an
    index's sitemaps are followed while the chain of sitemaps is at most
    :data:`MAX_SITEMAP_HOPS` long (a loop of indexes ends there, or at the seen table)."""
    hops = sitemap_hops(hop_path)
    allowed = (place_of(url),)
    if hops == 1 and via is not None and hop_path.endswith(Hop.MANIFEST.value) and via.endswith("/robots.txt"):
        allowed += (place_of(via, whole_host=True),)
    return allowed, hops < MAX_SITEMAP_HOPS


MAX_SITEMAP_HOPS = 2
"""Sitemaps in a row: robots.txt (or a seed) names an index, the index names sitemaps, whose
URLs are pages; an index in an index (which the protocol does not allow) is not read."""


class RobotsFetches:
    """The fetchers as :class:`~pycrawler.fetch.RobotsCache`'s fetcher: robots.txt is fetched in
    a fetcher process and its result comes back whole, so the crawling process has no HTTP client
    of its own (aiohttp's import cost it a sixth of a second of CPU and of its start)."""

    def __init__(self, pool: FetcherPool):
        self.pool = pool

    async def fetch(self, url: str, *, max_body: int | None = None) -> FetchResult:
        return await self.pool.fetch_whole(url, max_body)
