"""``pycrawler demo``: the main job on its embedded default (for now, the store-layer demo)."""

from __future__ import annotations

import argparse
from pathlib import Path

from .. import demo


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="store the JDK API documentation's link graph in JE and summarize it",
                       description=demo.__doc__.splitlines()[0])
    p.add_argument("--docs", type=Path, default=demo.DOCS_ROOT, metavar="DIR",
                   help=f"the JDK API documentation to read (default: {demo.DOCS_ROOT})")
    p.add_argument("--state", type=Path, default=demo.DEFAULT_STATE, metavar="DIR",
                   help=f"the demo's JE environment, rebuilt on each run (default: ./{demo.DEFAULT_STATE})")
    p.set_defaults(run=run_demo)


def run_demo(args: argparse.Namespace) -> int:
    print(f"reading {args.docs} into {args.state} ...", flush=True)
    summary = demo.run(args.docs, args.state)
    for line in demo.report(summary, args.state):
        print(line)
    return 0
