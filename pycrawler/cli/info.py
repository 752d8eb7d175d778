"""``pycrawler version``: what is actually loaded, not what was asked for."""

from __future__ import annotations

import argparse

from .. import __version__, jvm


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("version", help="pycrawler, Java and JE versions actually loaded")
    p.set_defaults(run=run_version)


def run_version(args: argparse.Namespace) -> int:
    print(f"pycrawler {__version__}")
    print(f"java {jvm.java_version()}")
    print(f"je {jvm.je_version()}")
    return 0
