"""Serves a :class:`~pycrawler.testing.synthetic_web.SyntheticWeb` on loopback, from its seed.

One aiohttp process answers every host (127.0.0.1 ... 127.0.0.H, one port): the host is the
address the request came in on, the page is computed on request (no file, no memory per page),
so 10M pages cost what 10k do. A page is ``200 text/html`` with its text and links, a redirect
page ``301`` with its ``Location``, a missing page ``404``; ``/robots.txt`` is ``404`` (allow
all). The server runs in its own process (:class:`SyntheticServer` starts it) so that a
benchmark can measure its CPU apart from the crawl's.

    python -m pycrawler.testing.synthetic_server --pages 1000000 --hosts 8 --seed 24
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
from aiohttp import web

from ..errors import BadInput
from .synthetic_web import MISSING, PAGE, REDIRECT, SyntheticWeb

READY = "listening on port "
START_ATTEMPTS = 5
_TEXT_BYTES = 1 << 19
_WORDS = ("crawl", "frontier", "queue", "seen", "page", "link", "host", "fetch", "store", "table", "log",
          "window", "cache", "merge", "bucket", "disk", "key", "batch", "flush", "record")


def text_block(seed: int) -> str:
    """Half a MiB of words from ``seed``: the text pages are cut from (so they cost no work)."""
    rng = random.Random(seed)
    words, size = [], 0
    while size < _TEXT_BYTES:
        word = rng.choice(_WORDS)
        words.append(word)
        size += len(word) + 1
    return " ".join(words)


class PageRenderer:
    """The bytes of one page: text (its size from the web) and its links as anchors, computed
    when asked (:mod:`.synthetic_kernels`: microseconds a page, in whatever order the crawl asks)."""

    def __init__(self, web: SyntheticWeb, port: int):
        self.web, self.port = web, port
        self.text = text_block(web.seed)

    def page(self, page: int) -> bytes:
        ids = np.array([page], dtype=np.int64)
        links = self.web.links(ids)
        size = int(self.web.size(ids)[0])
        at = page * 7919 % (len(self.text) - size) if size < len(self.text) else 0
        link_url, port = self.web.link_url, self.port
        anchors = "".join(f'<a href="{link_url(port, kind, target, variant)}">l{i}</a>\n' for i, (kind, target, variant)
                          in enumerate(zip(links.kind.tolist(), links.target.tolist(), links.variant.tolist())))
        return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>p{page}</title></head>"
                f"<body><p>{self.text[at:at + size]}</p>\n{anchors}</body></html>").encode()

    def redirect(self, page: int) -> str:
        return self.web.url(self.port, PAGE, int(self.web.redirect_target(np.array([page], dtype=np.int64))[0]))


def make_app(synthetic: SyntheticWeb, port: int) -> web.Application:
    renderer = PageRenderer(synthetic, port)
    first = 0x7F000001  # 127.0.0.1

    async def answer(request: web.Request) -> web.StreamResponse:
        address = request.transport.get_extra_info("sockname")[0]
        host = int.from_bytes(bytes(int(p) for p in address.split(".")), "big") - first
        found = synthetic.resolve(host, request.path) if 0 <= host < synthetic.hosts else None
        if found is None or found[0] == MISSING:
            return web.Response(status=404, text="not here")
        kind, page = found
        if kind == REDIRECT:
            return web.Response(status=301, headers={"Location": renderer.redirect(page)})
        return web.Response(body=renderer.page(page), content_type="text/html", charset="utf-8")

    app = web.Application()
    app.router.add_get("/{tail:.*}", answer)
    return app


async def _serve(synthetic: SyntheticWeb, port: int) -> None:
    for _attempt in range(START_ATTEMPTS):
        runner, chosen = await _bind(synthetic, port)
        if runner is not None:
            break
    else:
        raise OSError("no port free on every address of the synthetic web")
    print(f"{READY}{chosen}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    await runner.cleanup()


async def _bind(synthetic: SyntheticWeb, port: int) -> tuple[web.AppRunner | None, int]:
    """Every host's address on one port (the first's, when ``port`` is 0). The app needs the
    port for absolute links, so it is made after the binds."""
    sockets = []
    try:
        for h in range(synthetic.hosts):
            sockets.append(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sockets[-1].setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sockets[-1].bind((synthetic.address(h), port))
            port = sockets[-1].getsockname()[1]
    except OSError:
        for sock in sockets:
            sock.close()
        if port and len(sockets) == 1:  # the port asked for is taken on the first address
            raise
        return None, 0
    runner = web.AppRunner(make_app(synthetic, port), access_log=None)
    await runner.setup()
    for sock in sockets:
        await web.SockSite(runner, sock, backlog=1024).start()
    return runner, port


class SyntheticServer:
    """``with SyntheticServer(web) as server``: the web served by a child process;
    ``server.port``, ``server.pid`` (to read its CPU), ``server.seeds``."""

    def __init__(self, web: SyntheticWeb, port: int = 0):
        self.web, self.port = web, port
        self.process: subprocess.Popen | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def seeds(self) -> list[str]:
        return self.web.seeds(self.port)

    def start(self) -> SyntheticServer:
        root = Path(__file__).resolve().parents[2]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pycrawler.testing.synthetic_server", "--pages", str(self.web.pages),
             "--hosts", str(self.web.hosts), "--seed", str(self.web.seed), "--port", str(self.port)],
            stdout=subprocess.PIPE, text=True, env=env)
        line = self.process.stdout.readline()
        if not line.startswith(READY):
            self.stop()
            raise OSError(f"the synthetic web's server did not start: {line.strip() or 'no output'}")
        self.port = int(line[len(READY):])
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stdout:
            self.process.stdout.close()

    def __enter__(self) -> SyntheticServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--pages", type=int, required=True)
    parser.add_argument("--hosts", type=int, default=1)
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--port", type=int, default=0, help="0: a free one (printed)")
    args = parser.parse_args(argv)
    try:
        synthetic = SyntheticWeb(args.pages, args.hosts, args.seed)
    except BadInput as exc:
        print(f"synthetic_server: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(_serve(synthetic, args.port))
    except OSError as exc:
        print(f"synthetic_server: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
