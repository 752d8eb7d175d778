"""The console's aiohttp application: the page, its JSON, ``/metrics`` and the actions.

=====================  ====  ==========================================================
path                   verb  what
=====================  ====  ==========================================================
``/``                  GET   the page (``static/index.html``), which polls the JSON below
``/static/NAME``       GET   its script, style sheet and uPlot
``/api/figures``       GET   the figures (:mod:`.figures`)
``/api/frontier``      GET   queues by state and the ``top`` largest (default 20)
``/api/hosts``         GET   hosts by fetches: fetched, errors, bytes, precluded, robots.txt
                             (``limit``)
``/api/log``           GET   crawl.log's last ``limit`` lines containing ``contains``
``/api/cluster``       GET   a cluster worker's cluster: members, hosts per worker, links
                             (``null`` for a crawl on its own)
``/metrics``           GET   Prometheus' text format (:mod:`.metrics`)
``/api/pause``         POST  no new fetch starts; the ones in flight finish and commit
``/api/resume``        POST  fetches start again
``/api/stop``          POST  the graceful stop a first SIGINT makes, with the summary
``/api/seeds``         POST  schedule the URLs of the JSON body ``{"urls": [...]}``
=====================  ====  ==========================================================

Who is let in is :mod:`.access`'s to decide. A running crawl's console runs on the crawl's
event loop (:class:`CrawlConsole`), so a handler reads and acts on the crawl
between two of its steps, never beside one; and so no client may take more than a small share
of that loop, however fast it asks (:class:`LoopShare`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from pathlib import Path

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ..errors import BadInput
from .access import ADDRESS_FILE, Gate, RunFile, Token, parse_public_listen, plain_http_warning
from .figures import TICK_SECONDS, Figures, LiveFigures
from .metrics import registry_for

STATIC = Path(__file__).resolve().parent / "static"

LOOP_SHARE = 0.05
"""The most of the crawl's event loop its console takes, however many ask how fast."""

LEAST_REQUEST_SECONDS = 0.001
"""What a request counts for at least: aiohttp reads and writes it outside the handler's time,
and a refused one (401, 421) has next to no handler at all."""


def _int_param(request: web.Request, name: str, default: int, most: int) -> int:
    try:
        return max(1, min(int(request.query.get(name, default)), most))
    except ValueError:
        raise web.HTTPBadRequest(text=f"{name} must be a number\n") from None


class LoopShare:
    """Keeps the console's share of the crawl's event loop under ``share``: requests are
    answered one at a time, in their order of arrival, and one that held the loop ``d``
    seconds (at least :data:`LEAST_REQUEST_SECONDS`) makes the next wait until ``d / share``
    have passed. A client reading as fast as it can is slowed to that pace (HTTP/1.1 asks
    again once answered), and what waits costs the loop nothing. An open page, which asks a
    few times every five seconds, never waits on its own; under a flood it waits its turn
    behind one request per flooding connection."""

    def __init__(self, share: float):
        self.share = share
        self._turn = asyncio.Lock()  # wakes its waiters in the order they came
        self._free_at = 0.0

    async def answer(self, handler, request: web.Request) -> web.StreamResponse:
        async with self._turn:
            loop = asyncio.get_running_loop()
            if (wait := self._free_at - loop.time()) > 0:
                await asyncio.sleep(wait)
            started = time.perf_counter()
            try:
                return await handler(request)
            finally:
                held = max(time.perf_counter() - started, LEAST_REQUEST_SECONDS)
                self._free_at = loop.time() + held / self.share


class ConsoleServer:
    """Serves one :class:`~.figures.Figures` on ``host:port`` (module docstring)."""

    def __init__(self, figures: Figures, host: str, port: int):
        """A running crawl's token goes into its state folder (its actions want it), and its
        address beside it; a stopped crawl's stays in memory (:mod:`.access`): its folder may be
        read-only, or in use by a crawl resumed meanwhile, whose token file is not this
        console's to write. A running crawl's console shares its loop (:class:`LoopShare`);
        a stopped crawl's has its process to itself."""
        self.figures, self.host, self.port = figures, host, port
        self.token = Token.for_state(figures.state) if figures.can_act else Token(None)
        self.gate = Gate(self.token, host, port)
        self.registry = registry_for(figures)
        self.share = LoopShare(LOOP_SHARE) if figures.can_act else None
        self._address: RunFile | None = None
        self._runner: web.AppRunner | None = None
        self._ticker: asyncio.Task | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    @property
    def reads_want_token(self) -> bool:
        return not self.gate.open_reads

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._admit])
        app.router.add_get("/", self._page)
        app.router.add_static("/static/", STATIC)
        app.router.add_get("/api/figures", self._figures)
        app.router.add_get("/api/frontier", self._frontier)
        app.router.add_get("/api/hosts", self._hosts)
        app.router.add_get("/api/log", self._log)
        app.router.add_get("/api/cluster", self._cluster)
        app.router.add_get("/metrics", self._metrics)
        for action in ("pause", "resume", "stop", "seeds"):
            app.router.add_post(f"/api/{action}", self._act)
        return app

    async def start(self) -> None:
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        try:
            await web.TCPSite(self._runner, self.host, self.port).start()
        except OSError as exc:
            await self.close()
            raise BadInput(f"the console cannot listen on {self.host}:{self.port}: {exc.strerror or exc}") from None
        self.port = self._runner.addresses[0][1]
        self.gate.bind(self.port)
        if self.figures.can_act:
            self._address = RunFile(self.figures.state / ADDRESS_FILE, f"{self.url}\n{os.getpid()}", private=False)
        self._ticker = asyncio.create_task(self._tick())

    async def close(self) -> None:
        """Stop listening and remove the token and address files; idempotent."""
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
            self._ticker = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._address is not None:
            self._address.remove()
            self._address = None
        self.token.remove()

    async def _tick(self) -> None:
        while True:
            self.figures.tick()
            await asyncio.sleep(TICK_SECONDS)

    # -- handlers -------------------------------------------------------------------------------------
    @web.middleware
    async def _admit(self, request: web.Request, handler):
        page_itself = request.path == "/" or request.path.startswith("/static/")  # no crawl data in it
        # A stopped crawl's console has no actions: a POST is answered 409 by _act, token or not.
        action = request.method == "POST" and self.figures.can_act
        if request.method == "POST":
            await request.read()  # before its turn: a body sent slowly holds up no other request

        async def admitted(request: web.Request) -> web.StreamResponse:
            self.gate.check(request, action=action, reads_data=not page_itself)
            return await handler(request)

        return await (admitted(request) if self.share is None else self.share.answer(admitted, request))

    async def _page(self, request: web.Request) -> web.FileResponse:
        return web.FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def _figures(self, request: web.Request) -> web.Response:
        return web.json_response(self.figures.snapshot() | {"can_act": self.figures.can_act})

    async def _frontier(self, request: web.Request) -> web.Response:
        return web.json_response(self.figures.frontier(_int_param(request, "top", 20, 1000)))

    async def _hosts(self, request: web.Request) -> web.Response:
        return web.json_response(self.figures.hosts(_int_param(request, "limit", 50, 10_000)))

    async def _log(self, request: web.Request) -> web.Response:
        lines = self.figures.log_lines(request.query.get("contains", ""), _int_param(request, "limit", 100, 5000))
        return web.json_response(lines)

    async def _cluster(self, request: web.Request) -> web.Response:
        return web.json_response(self.figures.cluster())

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=generate_latest(self.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def _act(self, request: web.Request) -> web.Response:
        figures = self.figures
        if not figures.can_act:
            raise web.HTTPConflict(text="this console shows a stopped crawl: it has nothing to act on\n")
        action = request.path.rsplit("/", 1)[1]
        if action == "seeds":
            urls = await self._seed_urls(request)
            refused = figures.add_seeds(urls)
            added = sum(url not in refused for url in urls)
            return web.json_response({"added": added, "refused": refused}, status=200 if added else 400)
        getattr(figures, action)()
        return web.json_response({"done": action})

    @staticmethod
    async def _seed_urls(request: web.Request) -> list[str]:
        """The body's ``urls``: a list of strings (a string alone is refused: it is not read
        letter by letter, nor guessed to be one URL or several)."""
        try:
            urls = (await request.json())["urls"]
        except (ValueError, KeyError, TypeError):
            raise web.HTTPBadRequest(text='send {"urls": ["http://...", ...]}\n') from None
        if not isinstance(urls, list) or not all(isinstance(url, str) for url in urls):
            raise web.HTTPBadRequest(text=f'"urls" must be a list of strings, not {type(urls).__name__}: '
                                          'send {"urls": ["http://...", ...]}\n')
        urls = [url.strip() for url in urls if url.strip()]
        if not urls:
            raise web.HTTPBadRequest(text='"urls" holds no URL\n')
        return urls


class CrawlConsole:
    """The console of a running crawl, as :class:`~pycrawler.crawl.engine.Crawler` takes it:
    started on the crawl's loop once its stores are open, closed before they close."""

    def __init__(self, listen: str, public: bool = False):
        """``public``: ``--console-public``, which an address off loopback wants. A bad or
        unwanted address is refused here, before the crawl starts."""
        self.host, self.port = parse_public_listen(listen, public, "--console-public")
        self.server: ConsoleServer | None = None

    async def start(self, crawler) -> None:
        """Listen; the address goes to stderr, after the warning an address off loopback earns."""
        self.server = ConsoleServer(LiveFigures(crawler), self.host, self.port)
        await self.server.start()
        if warning := plain_http_warning(self.host, self.server.port):
            print(f"pycrawler: {warning}", file=sys.stderr, flush=True)
        print(f"pycrawler: console at {self.server.url} (actions want the token in {self.server.token.path})",
              file=sys.stderr, flush=True)

    async def close(self) -> None:
        if self.server is not None:
            await self.server.close()
