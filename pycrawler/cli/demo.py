"""``pycrawler demo``: the main job on its embedded default: crawl the JDK API docs on loopback into JE."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import demo
from ..crawl.settings import CrawlConfig, set_crawl_jvm_defaults


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="serve the JDK API documentation on loopback, crawl it into JE, summarize",
                       description=demo.__doc__.splitlines()[0])
    p.add_argument("--docs", type=Path, default=demo.DOCS_ROOT, metavar="DIR",
                   help=f"the documentation to serve and crawl (default: {demo.DOCS_ROOT})")
    p.add_argument("--state", type=Path, default=demo.DEFAULT_STATE, metavar="DIR",
                   help=f"the crawl's state folder, rebuilt on each run (default: ./{demo.DEFAULT_STATE})")
    p.add_argument("--concurrency", type=int, default=CrawlConfig.concurrency, metavar="N",
                   help="fetches in flight (default %(default)s)")
    p.add_argument("--console", metavar="[HOST:]PORT",
                   help="watch the crawl in the operator's console there (its address is printed; see docs/console.md)")
    p.add_argument("--console-public", action="store_true",
                   help="let --console listen off loopback (plain HTTP: anyone on the path reads its token)")
    p.set_defaults(run=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    set_crawl_jvm_defaults(None)
    print(f"crawling {args.docs} served on 127.0.0.1 into {args.state} ...", flush=True)
    summary = demo.run(args.docs, args.state, concurrency=args.concurrency, console=args.console,
                       console_public=args.console_public)
    for line in demo.report(summary, args.state):
        print(line)
    return 0
