"""``pycrawler serve``: one process owns a JE environment and serves it to others (py4j)."""

from __future__ import annotations

import argparse
import signal
import threading

from ..store.gateway_server import IDLE_TIMEOUT


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="own a JE environment and serve it to other processes (py4j://HOST:PORT)",
                       description="Open DIR (read-write unless --read-only) and serve it through py4j until stopped "
                                   "(Ctrl-C, SIGTERM). "
                                   "Prints py4j://HOST:PORT when ready; the store, frontier and heritrix commands "
                                   "take that address where they take a folder. See docs/gateway.md.")
    p.add_argument("dir", help="the JE environment to serve")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--create", action="store_true", help="create the environment when DIR has none")
    mode.add_argument("--read-only", action="store_true",
                      help="open DIR read-only: clients read it, none can write, and no byte of DIR changes "
                           "(serve a Heritrix state or another untrusted store this way)")
    p.add_argument("--port", type=int, default=0, help="port to listen on (default: a free one)")
    p.add_argument("--bind", default="127.0.0.1", metavar="ADDR",
                   help="address to listen on (default 127.0.0.1; a non-loopback one needs --allow-remote)")
    p.add_argument("--allow-remote", action="store_true",
                   help="accept a non-loopback --bind and peers other than 127.0.0.1/::1 (the token still applies)")
    p.add_argument("--idle-timeout", type=float, default=IDLE_TIMEOUT, metavar="SECONDS",
                   help=f"abort a client's transaction after this long without a call (default {IDLE_TIMEOUT:g})")
    p.set_defaults(run=run_serve)


def run_serve(args: argparse.Namespace) -> int:
    from ..errors import BadInput
    from ..store import Environment
    from ..store.gateway_server import Gateway

    if args.idle_timeout <= 0:
        raise BadInput("--idle-timeout must be positive")
    stop = threading.Event()
    with Environment(args.dir, create=args.create, read_only=args.read_only) as env, Gateway(
            env, host=args.bind, port=args.port, idle_timeout=args.idle_timeout,
            allow_remote=args.allow_remote) as gateway:
        # After the JVM started: its own handlers would end the process without closing.
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
        print(gateway.address, flush=True)
        while not stop.wait(0.5):
            pass
    return 0
