"""``pycrawler frontier put|pop|stats``: a TODO frontier from the shell.

The commands see only the TODO protocol (:mod:`pycrawler.frontier.protocol`); which store a
directory holds (pycrawler's, in key or FIFO order, or the seed book's ``BDBFrontier``) is
detected by :func:`pycrawler.frontier.layouts.open_frontier`, and an unknown one is refused.

``put`` reads URLs from its arguments or, with none, from stdin (one per line, UTF-8, blank
lines skipped) and stores them in batches, each one transaction: when a bad URL stops the
command, the batches before it are stored and the message says how many URLs that was.
A URL must be absolute (``scheme://host...``), without whitespace or control characters,
and at most ``--max-url-chars`` long (default 8192; 0: no limit). Characters outside the
BMP are kept as they are.

``pop`` removes what it prints (the book's at-most-once ``getNext``).

A directory holding a work-queue frontier (:mod:`pycrawler.frontier.workqueues`, detected by
its ``pending`` database; ``put --layout workqueues`` makes one) works the same way: ``put``
schedules (canonicalised, deduplicated, one queue per host), ``pop`` takes URLs from the
queues in turn without politeness waits, and ``stats`` lists the queues by state.

Every command also takes a served environment's address (``py4j://HOST:PORT``, from
``pycrawler serve`` or ``pycrawler crawl --serve``), except ``pop`` of a TODO store (taking
runs in Java beside JE). A work-queue frontier keeps its queues in the process that opened it
(a running crawl), so through an address only ``stats`` reads it: from one Java walk of
``pending``'s keys (``Served.census``) and the queue records, committed data only, a page of
records per round trip and no lock held across them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta, timezone
from itertools import islice
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import BadInput
from ..frontier.layouts import LAYOUTS, open_frontier
from ..frontier.politeness import Politeness
from ..frontier.protocol import TodoFrontier
from ..store.gateway_address import is_address
from ..store.logfile import jdb_files
from ..records.crawl_url import CrawlUrl, to_dict
from .jsonl import json_line

BATCH = 10_000
MAX_URL_CHARS = 8192
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*\Z")
_FORBIDDEN = re.compile(r"[\x00-\x20\x7f-\x9f\ud800-\udfff]")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
WORKQUEUES = "workqueues"
"""``WorkQueueFrontier.layout``: its module (numpy) is imported when a frontier is opened, so the
command line's other groups load without numpy."""


class _IntermixedParser(argparse.ArgumentParser):
    """Accepts options between positionals, as in ``put DIR --layout book URL...`` (plain
    argparse would take DIR and an empty URL list from the first run of positionals)."""

    _intermixing = False

    def parse_known_args(self, args=None, namespace=None):
        if self._intermixing:  # parse_known_intermixed_args calls back here for each pass
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixing = False


def _open(path: str, *, layout: str | None = None, order: str | None = None, create: bool = False,
          read_only: bool = False) -> TodoFrontier:
    """The work-queue frontier the directory holds (or ``--layout workqueues`` makes), else
    whichever TODO store :func:`open_frontier` detects."""
    from ..frontier.workqueues import WorkQueueFrontier, open_store

    workqueues = open_store(path, read_only=read_only, politeness=Politeness.none())
    if workqueues is None and layout == WORKQUEUES:
        if is_address(path):
            raise BadInput(f"{path} holds no work-queue frontier: a new one is made in a directory (its queues live "
                           "in the process that opens it)")
        if jdb_files(path) if Path(path).is_dir() else False:
            raise BadInput(f"{path} holds another kind of store: use another directory for a work-queue frontier")
        workqueues = WorkQueueFrontier.open(path, create=create, politeness=Politeness.none())
    if workqueues is None:
        return open_frontier(path, layout=layout, order=order, create=create, read_only=read_only)
    if layout not in (None, WORKQUEUES) or order is not None:
        workqueues.close()
        raise BadInput(f"{path} holds a work-queue frontier: leave out --layout/--order or use another directory")
    return workqueues


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("frontier", help="put URLs into, pop them from, and count a TODO frontier")
    actions = p.add_subparsers(dest="frontier_command", required=True, metavar="ACTION",
                               parser_class=_IntermixedParser)

    put = actions.add_parser("put", help="add URLs (arguments, or stdin one per line)")
    put.add_argument("dir", help="the frontier's directory (created when absent)")
    put.add_argument("urls", nargs="*", metavar="URL", help="URLs to add; none: read stdin")
    put.add_argument("--layout", choices=list(LAYOUTS) + [WORKQUEUES], help="layout of a new store (default "
                     "pycrawler); an existing store's is detected")
    put.add_argument("--order", choices=sorted({o for orders in LAYOUTS.values() for o in orders}),
                     help="order of a new store (default key)")
    put.add_argument("--batch", type=_positive, default=BATCH, help=f"URLs per transaction (default {BATCH})")
    put.add_argument("--max-url-chars", type=int, default=MAX_URL_CHARS,
                     help=f"refuse longer URLs (default {MAX_URL_CHARS}; 0: no limit)")
    put.set_defaults(run=run_put)

    pop = actions.add_parser("pop", help="remove and print the next records")
    pop.add_argument("dir")
    pop.add_argument("-n", type=_positive, default=1, help="how many records (default %(default)s)")
    pop.add_argument("--format", choices=("text", "jsonl"), default="text",
                     help="text (for reading) or jsonl (one JSON object of every field per record)")
    pop.set_defaults(run=run_pop)

    stats = actions.add_parser("stats", help="layout, order and count of a store (read-only)")
    stats.add_argument("dir")
    stats.set_defaults(run=run_stats)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


# -- put --------------------------------------------------------------------------------------------

def check_url(url: str | None, max_chars: int = MAX_URL_CHARS) -> str:
    """``url`` if a frontier should hold it, else BadInput saying why."""
    if url is None or url == "":
        raise BadInput("empty URL")
    if max_chars and len(url) > max_chars:
        raise BadInput(f"URL of {len(url)} characters is longer than {max_chars} (see --max-url-chars): "
                       f"{url[:60]}...")
    if bad := _FORBIDDEN.search(url):
        what = "undecodable bytes" if "\ud800" <= bad.group() <= "\udfff" else "whitespace or a control character"
        raise BadInput(f"URL contains {what} ({bad.group()!r} at {bad.start()}): {url[:80]!r}")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise BadInput(f"malformed URL ({exc}): {url[:80]!r}") from None
    if not _SCHEME.match(parts.scheme) or not parts.netloc:
        raise BadInput(f"not an absolute URL (scheme://host...): {url[:80]!r}")
    return url


def _stdin_urls() -> Iterator[tuple[str, str]]:
    for number, raw in enumerate(sys.stdin.buffer, 1):
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError as exc:
            raise BadInput(f"stdin line {number} is not UTF-8 ({exc.reason} at byte {exc.start})") from None
        if line:
            yield f"stdin line {number}", line


def _checked(sources: Iterable[tuple[str, str]], max_chars: int) -> Iterator[CrawlUrl]:
    for where, url in sources:
        try:
            yield CrawlUrl(ori_url=check_url(url, max_chars))
        except BadInput as exc:
            raise BadInput(f"{where}: {exc}") from None


def url_sources(urls: list[str]) -> Iterator[tuple[str, str]]:
    """(where, URL) for each URL argument, or with none, each non-blank stdin line
    (``argument 2``, ``stdin line 7``: how an error names the URL)."""
    if urls:
        return ((f"argument {i}", url) for i, url in enumerate(urls, 1))
    return _stdin_urls()


def run_put(args: argparse.Namespace) -> int:
    records = _checked(url_sources(args.urls), args.max_url_chars)
    batch = list(islice(records, args.batch))  # a bad first batch leaves no store behind
    stored = 0
    with _open(args.dir, layout=args.layout, order=args.order, create=True) as frontier:
        try:
            while batch:
                stored += frontier.put_urls(batch)
                batch = list(islice(records, args.batch))
        except BadInput as exc:
            raise BadInput(f"{exc} ({stored} URLs stored before it)") from None
        print(f"put {stored} URLs into {args.dir} ({frontier.layout} layout, {frontier.order} order, "
              f"{len(frontier)} waiting)")
    return 0


# -- pop --------------------------------------------------------------------------------------------

def _time_note(value: int | None, unit_per_second: int) -> str:
    if value is None:
        return ""
    try:
        moment = _EPOCH + timedelta(seconds=value // unit_per_second)
    except OverflowError:
        return ""
    fraction = value % unit_per_second
    digits = len(str(unit_per_second)) - 1
    return f" ({moment:%Y-%m-%dT%H:%M:%S}.{fraction:0{digits}d}Z)"


def _text(record: CrawlUrl) -> str:
    lines = [record.ori_url or ""]
    for name, value in to_dict(record).items():
        note = _time_note(value, 10**9) if name == "last_update_time" else \
            _time_note(value, 1000) if name == "time_to_live" else ""
        lines.append(f"  {name}: {json.dumps(value, ensure_ascii=False)}{note}")
    return "\n".join(lines)


def run_pop(args: argparse.Namespace) -> int:
    with _open(args.dir) as frontier:
        remaining = args.n
        while remaining and (batch := frontier.get_next_batch(min(remaining, BATCH))):
            remaining -= len(batch)
            if args.format == "jsonl":
                out = "".join(json_line(to_dict(r)) for r in batch)
            else:
                out = "".join(_text(r) + "\n" for r in batch)
            sys.stdout.write(out)
        sys.stdout.flush()
    return 0


# -- stats ------------------------------------------------------------------------------------------

def describe(frontier: TodoFrontier) -> dict:
    facts = {"layout": frontier.layout, "order": frontier.order, "count": len(frontier)}
    if frontier.layout == WORKQUEUES:
        stats = frontier.stats()
        facts.update(queues=stats["queues"], assignment=stats["assignment"])
        for state, figures in stats["by_state"].items():
            facts[f"queues {state}"] = f"{figures['queues']} queues, {figures['urls']} URLs"
    return facts


def run_stats(args: argparse.Namespace) -> int:
    with _open(args.dir, read_only=True) as frontier:
        for name, value in describe(frontier).items():
            print(f"{name}: {value}")
    return 0
