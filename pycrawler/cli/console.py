"""``pycrawler console STATE``: the operator's console of a stopped crawl, read-only (docs/console.md)."""

from __future__ import annotations

import argparse
import asyncio
import signal

from .plain import first_line


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("console", help="serve the console's page for a stopped crawl's state folder, read-only",
                       description=first_line(__doc__) + " Prints its address, serves until Ctrl-C or SIGTERM. "
                                                         "A running crawl has its own: crawl --console.")
    p.add_argument("state", metavar="STATE", help="the crawl's --state folder")
    p.add_argument("--listen", default="127.0.0.1:8765", metavar="[HOST:]PORT",
                   help="where to serve (default 127.0.0.1:8765; 0: a free port; another address than loopback "
                        "wants a token on every request: printed once, with the address; nothing is written "
                        "into STATE)")
    p.set_defaults(run=run_console)


def run_console(args: argparse.Namespace) -> int:
    from ..console.access import parse_listen
    from ..console.server import ConsoleServer
    from ..console.stopped import StoppedFigures

    host, port = parse_listen(args.listen)
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
        print(f"pycrawler console: {args.state} at {shown}", flush=True)
        try:
            await stop.wait()
        finally:
            await console.close()

    asyncio.run(serve())
    return 0
