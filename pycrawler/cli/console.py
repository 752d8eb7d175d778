"""``pycrawler console STATE``: the operator's console of a stopped crawl, read-only (docs/console.md)."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

from .plain import first_line


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("console", help="serve the console's page for a stopped crawl's state folder, read-only",
                       description=first_line(__doc__) + " Prints its address, serves until Ctrl-C or SIGTERM. "
                                                         "A running crawl has its own: crawl --console.")
    p.add_argument("state", metavar="STATE", help="the crawl's --state folder")
    p.add_argument("--listen", default="127.0.0.1:8765", metavar="[HOST:]PORT",
                   help="where to serve (default 127.0.0.1:8765; 0: a free port; another address than loopback "
                        "wants --public, and a token on every request: printed once, with the address; nothing is "
                        "written into STATE)")
    p.add_argument("--public", action="store_true",
                   help="let --listen be off loopback, over plain HTTP (the token crosses the network in clear)")
    p.set_defaults(run=run_console)


def refuse_running_crawl(state: Path) -> None:
    """A crawl that runs has its own console, live: this one would show its crawl.log as it
    grows beside its frontier as it was on disk, and call it stopped. Known by JE's write lock
    (asked without taking it)."""
    from ..console.access import live_console_address
    from ..errors import StoreLocked
    from ..heritrix.writer_lock import writer_pid

    if (pid := writer_pid(state)) is None:
        return
    address = live_console_address(state, pid)
    where = (f"its live console is at {address}" if address else
             "it runs without a console: stop it (Ctrl-C), or give its command --console PORT when resuming it")
    raise StoreLocked(f"{state} is being crawled (process {pid} holds its JE lock): {where}")


def run_console(args: argparse.Namespace) -> int:
    from ..console.access import parse_public_listen, plain_http_warning
    from ..console.server import ConsoleServer
    from ..console.stopped import StoppedFigures

    host, port = parse_public_listen(args.listen, args.public, "--public")
    refuse_running_crawl(Path(args.state))
    figures = StoppedFigures(args.state)

    async def serve() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):  # after the JVM's start, which may install its own
            loop.add_signal_handler(signum, stop.set)
        console = ConsoleServer(figures, host, port)
        await console.start()
        # Off loopback every read wants the token, kept in memory only: the address carries it,
        # after the '#', which the browser keeps to itself.
        shown = f"{console.url}#token={console.token.value}" if console.reads_want_token else console.url
        if warning := plain_http_warning(host, console.port):
            print(f"pycrawler console: {warning}", file=sys.stderr, flush=True)
        print(f"pycrawler console: {args.state} at {shown}", flush=True)
        try:
            await stop.wait()
        finally:
            await console.close()

    asyncio.run(serve())
    return 0
