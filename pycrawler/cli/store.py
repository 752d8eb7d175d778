"""``pycrawler store ls|dump|load``: inspect and move JE databases."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("store", help="inspect, dump and load JE environments")
    p.add_subparsers(dest="store_command", required=True, metavar="ACTION")
