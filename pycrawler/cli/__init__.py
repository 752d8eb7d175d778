"""The ``pycrawler`` command line.

Each command group lives in its own module with a ``register(subparsers)`` function; this
module wires them together and owns the error contract: a user's mistake prints one line
on stderr and exits non-zero (2 for bad input); ``--debug`` shows the whole trace. Standard
output is UTF-8 whatever the locale (:func:`.jsonl.utf8_stdout`).
"""

from __future__ import annotations

import argparse
import sys
import traceback

from .. import jvm, progress
from ..errors import PycrawlerError, as_disk_full
from ..store import je_choice
from . import cachesim, cluster, console, crawl, crawler4j, demo, fingerprint, frontier, heritrix, info, serve, store
from .jsonl import utf8_stdout

DESCRIPTION = ("pycrawler: crawl frontiers and URL-seen tables on Berkeley DB Java Edition (JE), driven from "
               "Python; tools for the JE stores of Heritrix, crawler4j and other programs.")
"""The first lines of ``pycrawler --help``: plain text, for a user's first contact."""

GROUPS = (info, demo, crawl, console, cluster, store, serve, fingerprint, frontier, heritrix, crawler4j, cachesim)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pycrawler", description=DESCRIPTION)
    parser.add_argument("--debug", action="store_true", help="show full Python and Java stack traces")
    parser.add_argument("--upgrade-log", action="store_true",
                        help="let a JE newer than a store's own write into it (the store's own JE may no longer read it)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in GROUPS:
        group.register(sub)
    return parser


def _java_exception_line(exc: BaseException) -> str | None:
    """One line for a Java exception that escaped the library's own translation."""
    if isinstance(exc, jvm.JavaException):
        java = jvm.throwable(exc)
        return f"{java.getClass().getSimpleName()}: {java.getMessage()}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    utf8_stdout()
    progress.choose(getattr(args, "progress", None))
    if args.upgrade_log:
        je_choice.allow_upgrade()
    try:
        return args.run(args) or 0
    except PycrawlerError as exc:
        if args.debug:
            traceback.print_exc()
        print(f"pycrawler: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("pycrawler: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except (Exception, jvm.JavaException) as exc:  # one line, not a trace (GraalPy raises Java's as BaseExceptions)
        if args.debug:
            traceback.print_exc()
        if full := as_disk_full(exc):  # a write outside the paths that say so themselves
            print(f"pycrawler: {full}", file=sys.stderr)
            return full.exit_code
        line = _java_exception_line(exc) or f"{type(exc).__name__}: {exc}"
        print(f"pycrawler: internal error: {line} (rerun with --debug for the trace)", file=sys.stderr)
        return 1
