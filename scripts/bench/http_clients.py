#!/usr/bin/env python3
"""Benchmark asyncio (and threaded) HTTP/1.1 clients with keep-alive pools, and pycrawler's Fetcher.

    PYTHONPATH=$PWD nice -n 10 .venv/bin/python scripts/bench/http_clients.py --requests 2000 --rounds 5

A loopback server serves ``--size`` bytes of HTML at every path, gzip-compressed as a crawled
site would: nginx with one worker when it is installed (a C server, so the fastest clients are
not held back by it), else an aiohttp server in a child process. The clients run in this
process, which has the other core. Each fetches ``--requests`` distinct paths with 1, 8 and
32 requests in flight (``--in-flight``) over a keep-alive pool of that many connections,
reading and decompressing every body. A round runs every client at every depth once, in the
same order; rounds are interleaved so that the machine's drift hits all alike, and the table
gives each figure's median over ``--rounds`` rounds: requests per second (wall clock) and CPU
seconds per 1,000 requests (``time.process_time``: every thread of this process, so a
client's own threads count too).

The clients (a missing one is skipped and named):

- ``aiohttp``: a plain ``ClientSession`` (auto-decompress, its defaults);
- ``fetcher``: :class:`pycrawler.fetch.client.Fetcher` (aiohttp with raw headers, no
  auto-decompress, the caching resolver, timeouts, the body cap; it decodes the body itself),
  so its cost beyond plain aiohttp shows;
- ``httpx`` and ``httpcore`` (httpx's transport alone, the body gunzipped with zlib);
- ``niquests`` (``AsyncSession`` on urllib3-future, HTTP/2 and 3 off);
- ``aiosonic``;
- ``pyreqwest`` (Rust's reqwest and hyper on tokio threads, awaited from asyncio);
- ``curl_cffi`` (``AsyncSession``: libcurl's multi interface driven by the event loop);
- ``pycurl``: ``CurlMulti`` driven from asyncio by its socket and timer callbacks (below);
- ``pycurl_fetcher``: the same with what a Fetcher on pycurl would add per request (options,
  header lines into a ``FetchResult``, the body decoded by pycrawler), so that the gap to
  ``fetcher`` is the one a switch would see;
- ``urllib3``: one ``PoolManager`` shared by as many threads as requests in flight.

The last line is ``key=value`` figures: ``<client>_rps_<in flight>`` and
``<client>_cpu_ms_<in flight>`` (CPU milliseconds per request, i.e. seconds per 1,000) for
every client, ``fetcher_over_aiohttp_cpu_<in flight>`` and
``fetcher_over_pycurl_fetcher_cpu_<in flight>``.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import multiprocessing
import random
import statistics
import subprocess
import tempfile
import threading
import time
import zlib
from pathlib import Path

from pycrawler.fetch.client import Fetcher
from pycrawler.fetch.result import FetchConfig, user_agent
from pycrawler.local_servers import LOOPBACK, free_port, terminate
from pycrawler.static_site.server import find_nginx, worker_user

ACCEPT = {"Accept-Encoding": "gzip, deflate"}


def page_body(size: int) -> bytes:
    """``size`` bytes of HTML, gzip-compressed: links and words drawn from a fixed seed, so the
    body compresses about as a real page does (~4x) rather than to a few hundred bytes."""
    words = random.Random(50).choices([f"w{n:x}" for n in range(4096)], k=size)
    html = b"<html><body>" + b" ".join(f"<a href='/p{w}'>{w} {v}</a>".encode() for w, v in zip(words, words[1:]))
    return gzip.compress(html[:size])


# --- the servers -------------------------------------------------------------------------------

def serve_aiohttp(port: int, body: bytes, ready) -> None:
    """The fallback site: one gzip body for every path (runs in a child process)."""
    from aiohttp import web

    async def page(_request):
        return web.Response(body=body, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    ready.set()
    web.run_app(app, host=LOOPBACK, port=port, print=None, access_log=None)


class Site:
    """The loopback site at ``base``: nginx (one worker) when installed, else aiohttp."""

    def __init__(self, body: bytes, server: str):
        self.body, self.port = body, free_port()
        self.kind = server if server != "auto" else ("nginx" if find_nginx() else "aiohttp")
        self.base = f"http://{LOOPBACK}:{self.port}"

    def __enter__(self) -> Site:
        if self.kind == "nginx":
            self._scratch = tempfile.TemporaryDirectory(prefix="http-clients-")
            scratch = Path(self._scratch.name)
            (scratch / "page.html.gz").write_bytes(self.body)
            (scratch / "nginx.conf").write_text(f"""\
daemon off;
worker_processes 1;
{worker_user()}
pid {scratch / "nginx.pid"};
error_log {scratch / "error.log"} warn;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path {scratch / "body"};
    server {{
        listen {LOOPBACK}:{self.port};
        location / {{
            root {scratch};
            try_files /page.html.gz =404;
            types {{ }}
            default_type text/html;
            add_header Content-Encoding gzip;
        }}
    }}
}}
""")
            self._process = subprocess.Popen([find_nginx(), "-c", str(scratch / "nginx.conf"), "-p", str(scratch)],
                                             stderr=subprocess.DEVNULL)
        else:
            context = multiprocessing.get_context("spawn")
            ready = context.Event()
            self._process = context.Process(target=serve_aiohttp, args=(self.port, self.body, ready), daemon=True)
            self._process.start()
            ready.wait(30)
        self._wait_until_served()
        return self

    def _wait_until_served(self) -> None:
        import urllib.request
        for _ in range(100):
            try:
                with urllib.request.urlopen(self.base + "/probe", timeout=1) as response:
                    if response.read() == self.body:
                        return
            except OSError:
                time.sleep(0.1)
        raise SystemExit(f"the {self.kind} server on port {self.port} did not start")

    def __exit__(self, *exc) -> None:
        if self.kind == "nginx":
            terminate(self._process)
            self._scratch.cleanup()
        else:
            self._process.terminate()
            self._process.join(5)


# --- the clients: each ``run(base, requests, in_flight)`` returns (seconds, CPU seconds) --------

async def timed(one, requests: int, in_flight: int) -> tuple[float, float]:
    """Wall and CPU seconds for ``requests`` awaits of ``one(i)`` with ``in_flight`` at a time."""
    queue = iter(range(requests))

    async def worker():
        for i in queue:
            await one(i)

    await one(requests)  # the first connection and any lazy set-up are not timed
    wall, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(worker() for _ in range(in_flight)))
    return time.perf_counter() - wall, time.process_time() - cpu


def check(body: bytes, size: int) -> None:
    if len(body) != size:
        raise AssertionError(f"a body of {len(body)} bytes, expected {size} decoded")


async def run_aiohttp(base, requests, in_flight, size):
    import aiohttp

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=in_flight)) as session:
        async def one(i):
            async with session.get(f"{base}/p{i}") as response:
                check(await response.read(), size)
        return await timed(one, requests, in_flight)


async def run_fetcher(base, requests, in_flight, size):
    config = FetchConfig(contact_url="https://example.org/bot", connections=in_flight,
                         connections_per_host=in_flight)
    async with Fetcher(config) as fetcher:
        async def one(i):
            result = await fetcher.fetch(f"{base}/p{i}")
            check(result.body, size)
        return await timed(one, requests, in_flight)


async def run_httpx(base, requests, in_flight, size):
    import httpx

    limits = httpx.Limits(max_connections=in_flight, max_keepalive_connections=in_flight)
    async with httpx.AsyncClient(limits=limits) as client:
        async def one(i):
            response = await client.get(f"{base}/p{i}")
            check(response.content, size)
        return await timed(one, requests, in_flight)


async def run_httpcore(base, requests, in_flight, size):
    import httpcore

    headers = [(k.encode(), v.encode()) for k, v in ACCEPT.items()]
    async with httpcore.AsyncConnectionPool(max_connections=in_flight, max_keepalive_connections=in_flight) as pool:
        async def one(i):
            response = await pool.request("GET", f"{base}/p{i}", headers=headers)
            check(zlib.decompress(response.content, 16 + zlib.MAX_WBITS), size)
        return await timed(one, requests, in_flight)


async def run_niquests(base, requests, in_flight, size):
    import niquests

    async with niquests.AsyncSession(pool_connections=1, pool_maxsize=in_flight, disable_http2=True,
                                     disable_http3=True) as session:
        async def one(i):
            response = await session.get(f"{base}/p{i}")
            check(response.content, size)
        return await timed(one, requests, in_flight)


async def run_aiosonic(base, requests, in_flight, size):
    import aiosonic
    from aiosonic.pools import PoolConfig

    pools = {":default": PoolConfig(size=in_flight, max_conn_requests=None)}
    async with aiosonic.HTTPClient(connector=aiosonic.TCPConnector(pool_configs=pools)) as client:
        async def one(i):
            response = await client.get(f"{base}/p{i}", headers=ACCEPT)
            check(await response.content(), size)
        return await timed(one, requests, in_flight)


async def run_pyreqwest(base, requests, in_flight, size):
    from pyreqwest.client import ClientBuilder

    builder = ClientBuilder().max_connections(in_flight).pool_max_idle_per_host(in_flight).follow_redirects(False)
    async with builder.build() as client:
        async def one(i):
            response = await client.get(f"{base}/p{i}").build().send()
            check(bytes(await response.bytes()), size)
        return await timed(one, requests, in_flight)


async def run_curl_cffi(base, requests, in_flight, size):
    from curl_cffi.requests import AsyncSession

    async with AsyncSession(max_clients=in_flight) as session:
        async def one(i):
            response = await session.get(f"{base}/p{i}")
            check(response.content, size)
        return await timed(one, requests, in_flight)


class CurlMultiLoop:
    """pycurl's ``CurlMulti`` on the running asyncio loop: libcurl names the sockets to watch
    (``M_SOCKETFUNCTION``) and when to call it back (``M_TIMERFUNCTION``); the loop's readers,
    writers and timers call ``socket_action``; finished transfers resolve their futures."""

    def __init__(self, in_flight: int):
        import pycurl

        self.pycurl, self.loop = pycurl, asyncio.get_running_loop()
        self.multi = pycurl.CurlMulti()
        self.multi.setopt(pycurl.M_SOCKETFUNCTION, self._watch)
        self.multi.setopt(pycurl.M_TIMERFUNCTION, self._set_timer)
        self.multi.setopt(pycurl.M_MAX_HOST_CONNECTIONS, in_flight)
        self.idle: list = []
        self.pending: dict = {}
        self.timer: asyncio.TimerHandle | None = None

    def _watch(self, what, fd, _multi, _socketp):
        pycurl = self.pycurl
        if what in (pycurl.POLL_IN, pycurl.POLL_INOUT):
            self.loop.add_reader(fd, self._act, fd, pycurl.CSELECT_IN)
        else:
            self.loop.remove_reader(fd)
        if what in (pycurl.POLL_OUT, pycurl.POLL_INOUT):
            self.loop.add_writer(fd, self._act, fd, pycurl.CSELECT_OUT)
        else:
            self.loop.remove_writer(fd)

    def _set_timer(self, ms):
        if self.timer is not None:
            self.timer.cancel()
        self.timer = None if ms < 0 else self.loop.call_later(ms / 1000, self._act, self.pycurl.SOCKET_TIMEOUT, 0)

    def _act(self, fd, event):
        while self.multi.socket_action(fd, event)[0] == self.pycurl.E_CALL_MULTI_PERFORM:
            pass
        while True:
            queued, done, failed = self.multi.info_read()
            for handle in done:
                self._finish(handle, None)
            for handle, _code, message in failed:
                self._finish(handle, OSError(message))
            if not queued:
                break

    def _finish(self, handle, error):
        self.multi.remove_handle(handle)
        future, chunks = self.pending.pop(handle)
        if error is None:
            future.set_result(b"".join(chunks))
        else:
            future.set_exception(error)

    async def get(self, url: str, options=(), info=()) -> tuple[bytes, list]:
        """The body of ``url`` (decoded by libcurl unless ``options`` say otherwise) and the
        ``getinfo`` of each of ``info``; ``options`` are (option, value) pairs set on the handle."""
        pycurl = self.pycurl
        if self.idle:
            handle = self.idle.pop()
        else:
            handle = pycurl.Curl()
            handle.setopt(pycurl.ACCEPT_ENCODING, "gzip, deflate")  # libcurl decodes
        chunks: list[bytes] = []
        handle.setopt(pycurl.URL, url)
        handle.setopt(pycurl.WRITEFUNCTION, chunks.append)
        for option, value in options:
            handle.setopt(option, value)
        future = self.loop.create_future()
        self.pending[handle] = (future, chunks)
        self.multi.add_handle(handle)
        try:
            return await future, [handle.getinfo(what) for what in info]
        finally:
            self.idle.append(handle)  # only now: getinfo reads this transfer, not the next one's

    def close(self):
        if self.timer is not None:
            self.timer.cancel()
        for handle in self.idle:
            handle.close()
        self.multi.close()


async def run_pycurl(base, requests, in_flight, size):
    curl = CurlMultiLoop(in_flight)
    try:
        async def one(i):
            check((await curl.get(f"{base}/p{i}"))[0], size)
        return await timed(one, requests, in_flight)
    finally:
        curl.close()


async def run_pycurl_fetcher(base, requests, in_flight, size):
    """pycurl doing per request what a Fetcher on it would: the Fetcher's timeouts, cap, headers
    and an address from its resolver set on each handle (``RESOLVE``), the payload left encoded,
    header lines parsed in order into a :class:`FetchResult` and the body decoded by
    :func:`decode_payload`. Not a fetcher (no failure handling): what the wrapper's work adds."""
    import pycurl

    from pycrawler.fetch.result import DEFAULT_MAX_BODY, FetchResult, decode_payload

    config = FetchConfig(contact_url="https://example.org/bot")
    host_port = base.removeprefix("http://")
    options = [(pycurl.HTTP_CONTENT_DECODING, 0), (pycurl.PATH_AS_IS, 1),
               (pycurl.HTTPHEADER, ["Accept: */*", f"User-Agent: {user_agent(config.contact_url)}"]),
               (pycurl.CONNECTTIMEOUT_MS, int(config.connect_timeout * 1000)),
               (pycurl.TIMEOUT_MS, int(config.total_timeout * 1000)),
               (pycurl.LOW_SPEED_LIMIT, 1), (pycurl.LOW_SPEED_TIME, int(config.read_timeout)),
               (pycurl.MAXFILESIZE_LARGE, DEFAULT_MAX_BODY), (pycurl.RESOLVE, [f"{host_port}:{LOOPBACK}"])]
    info = (pycurl.RESPONSE_CODE, pycurl.PRIMARY_IP)
    curl = CurlMultiLoop(in_flight)
    try:
        async def one(i):
            url, lines = f"{base}/p{i}", []
            payload, (status, ip) = await curl.get(url, options + [(pycurl.HEADERFUNCTION, lines.append)], info)
            fields = (line.decode("latin-1").partition(":") for line in lines[1:])
            result = FetchResult(url=url, status=status, ip=ip, payload=payload,
                                 headers=[(name, value.strip()) for name, colon, value in fields if colon])
            result.body = decode_payload(result, DEFAULT_MAX_BODY)
            check(result.body, size)
        return await timed(one, requests, in_flight)
    finally:
        curl.close()


async def run_urllib3(base, requests, in_flight, size):
    """A ``PoolManager`` shared by ``in_flight`` threads (blocking I/O; the loop only waits)."""
    import urllib3

    pool = urllib3.PoolManager(maxsize=in_flight, block=True, headers=ACCEPT)

    def one(i):
        check(pool.request("GET", f"{base}/p{i}").data, size)

    def threads():
        queue = iter(range(requests))  # next() on it holds the GIL: each index once

        def worker():
            for i in queue:
                one(i)
        workers = [threading.Thread(target=worker) for _ in range(in_flight)]
        one(requests)
        wall, cpu = time.perf_counter(), time.process_time()
        for thread in workers:
            thread.start()
        for thread in workers:
            thread.join()
        return time.perf_counter() - wall, time.process_time() - cpu

    try:
        return threads()
    finally:
        pool.clear()


CLIENTS = {"aiohttp": run_aiohttp, "fetcher": run_fetcher, "httpx": run_httpx, "httpcore": run_httpcore,
           "niquests": run_niquests, "aiosonic": run_aiosonic, "pyreqwest": run_pyreqwest,
           "curl_cffi": run_curl_cffi, "pycurl": run_pycurl, "pycurl_fetcher": run_pycurl_fetcher,
           "urllib3": run_urllib3}
IMPORTS = {"fetcher": "aiohttp", "curl_cffi": "curl_cffi.requests", "pyreqwest": "pyreqwest.client",
           "pycurl_fetcher": "pycurl"}


def installed(names: list[str]) -> list[str]:
    import importlib

    found = []
    for name in names:
        try:
            importlib.import_module(IMPORTS.get(name, name))
            found.append(name)
        except ImportError:
            print(f"{name}: not installed, skipped")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000, help="GETs per client, depth and round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--in-flight", default="1,8,32", help="requests in flight (comma-separated)")
    parser.add_argument("--clients", default=",".join(CLIENTS), help="which clients (comma-separated)")
    parser.add_argument("--size", type=int, default=20_000, help="page size in bytes before gzip")
    parser.add_argument("--server", choices=("auto", "nginx", "aiohttp"), default="auto")
    args = parser.parse_args()
    depths = [int(d) for d in args.in_flight.split(",")]
    unknown = set(args.clients.split(",")) - set(CLIENTS)
    if unknown:
        parser.error(f"unknown client(s): {', '.join(sorted(unknown))}")
    clients = installed(args.clients.split(","))

    body = page_body(args.size)
    runs: dict[tuple[str, int], list[tuple[float, float]]] = {(c, d): [] for c in clients for d in depths}
    with Site(body, args.server) as site:
        print(f"server: {site.kind}, {len(body):,} bytes gzip ({args.size:,} decoded) at every path; "
              f"{args.requests:,} GETs per client and depth, {args.rounds} rounds", flush=True)
        for round_ in range(args.rounds):
            for client in clients:
                for depth in depths:
                    runs[client, depth].append(asyncio.run(CLIENTS[client](site.base, args.requests, depth, args.size)))
            print(f"round {round_ + 1} done", flush=True)

    rate = {key: statistics.median(args.requests / wall for wall, _ in values) for key, values in runs.items()}
    cpu_ms = {key: statistics.median(cpu / args.requests * 1000 for _, cpu in values) for key, values in runs.items()}
    print(f"\n| client | {' | '.join(f'req/s at {d}' for d in depths)} | "
          f"{' | '.join(f'CPU s/1k at {d}' for d in depths)} |")
    print("|" + " --- |" * (1 + 2 * len(depths)))
    for client in clients:
        print(f"| {client} | {' | '.join(f'{rate[client, d]:,.0f}' for d in depths)} | "
              f"{' | '.join(f'{cpu_ms[client, d]:.3f}' for d in depths)} |")
    figures = [f"{c}_rps_{d}={rate[c, d]:.0f}" for c in clients for d in depths]
    figures += [f"{c}_cpu_ms_{d}={cpu_ms[c, d]:.3f}" for c in clients for d in depths]
    if {"aiohttp", "fetcher"} <= set(clients):
        figures += [f"fetcher_over_aiohttp_cpu_{d}={cpu_ms['fetcher', d] / cpu_ms['aiohttp', d]:.2f}" for d in depths]
    if {"fetcher", "pycurl_fetcher"} <= set(clients):
        figures += [f"fetcher_over_pycurl_fetcher_cpu_{d}={cpu_ms['fetcher', d] / cpu_ms['pycurl_fetcher', d]:.2f}"
                     for d in depths]
    print(" ".join(figures))


if __name__ == "__main__":
    main()
