#!/usr/bin/env python3
"""Benchmark the two asyncio HTTP/1.1 clients the fetcher could use: aiohttp and httpx.

    .venv/bin/python scripts/bench/http_clients.py --requests 3000 --concurrency 32

A loopback aiohttp server runs in a child process (its own core, so the clients are not
measured against their own event loop) and serves ``--size`` bytes of HTML at every path,
gzip-compressed as a crawled site would. Each client then fetches ``--requests`` distinct
paths with ``--concurrency`` requests in flight over keep-alive connection pools of that
size, reading and decompressing every body. Both run in the same process run, each twice,
keeping the better run (the first warms the server). The last line is ``key=value``
figures: requests per second per client and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import multiprocessing
import socket
import time


def serve(port: int, size: int, ready) -> None:
    """The loopback site: one gzip body for every path (runs in the child process)."""
    from aiohttp import web

    body = gzip.compress((b"<html><body>" + b"<a href='/x'>x</a> " * size)[:size])

    async def page(_request):
        return web.Response(body=body, headers={"Content-Type": "text/html", "Content-Encoding": "gzip"})

    app = web.Application()
    app.router.add_get("/{tail:.*}", page)
    ready.set()
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


async def run_aiohttp(base: str, requests: int, concurrency: int) -> float:
    import aiohttp

    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(i):
            async with session.get(f"{base}/p{i}") as response:
                await response.read()
        return await timed(one, requests, concurrency)


async def run_httpx(base: str, requests: int, concurrency: int) -> float:
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits) as client:
        async def one(i):
            response = await client.get(f"{base}/p{i}")
            response.read()
        return await timed(one, requests, concurrency)


async def timed(one, requests: int, concurrency: int) -> float:
    """Requests per second for ``requests`` calls of ``one`` with ``concurrency`` in flight."""
    queue = iter(range(requests))

    async def worker():
        for i in queue:
            await one(i)

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return requests / (time.perf_counter() - start)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--size", type=int, default=20_000, help="page size in bytes before gzip")
    args = parser.parse_args()

    port = free_port()
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    server = context.Process(target=serve, args=(port, args.size, ready), daemon=True)
    server.start()
    try:
        ready.wait(30)
        base = f"http://127.0.0.1:{port}"
        for _ in range(50):  # until the server accepts
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        rates = {}
        for name, run in (("aiohttp", run_aiohttp), ("httpx", run_httpx)):
            rates[name] = max(asyncio.run(run(base, args.requests, args.concurrency)) for _ in range(2))
            print(f"{name}: {rates[name]:,.0f} requests/s")
        print(f"aiohttp_req_per_s={rates['aiohttp']:.0f} httpx_req_per_s={rates['httpx']:.0f} "
              f"ratio={rates['aiohttp'] / rates['httpx']:.2f}")
    finally:
        server.terminate()
        server.join(5)


if __name__ == "__main__":
    main()
