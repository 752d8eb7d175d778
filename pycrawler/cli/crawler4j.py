"""``pycrawler crawler4j inspect|export|import``: crawler4j frontiers, read-only.

Each command opens a crawler4j ``frontier`` folder (``crawlStorageFolder/frontier``, or the
storage folder itself) read-only and changes nothing in it (see docs/crawler4j.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..progress import add_option as add_progress_option
from ..progress import meter
from .jsonl import json_line
from .plain import first_line
from .store import _output

SEEN_TABLES = ("drum", "bloom", "exact")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("crawler4j", help="inspect, export and import crawler4j frontiers (read-only)",
                       description=first_line(__doc__))
    actions = p.add_subparsers(dest="crawler4j_command", required=True, metavar="ACTION")

    def frontier_command(name: str, help: str, run):
        command = actions.add_parser(name, help=help)
        command.add_argument("dir", metavar="DIR", help="the crawl's crawlStorageFolder/frontier folder")
        command.set_defaults(run=run)
        return command

    frontier_command("inspect", "JE log version, databases, pending URLs by depth and priority, counters", run_inspect)

    export = frontier_command("export", "write the pending URLs (JSON lines, crawl order) and the done ones",
                              run_export)
    export.add_argument("--pending", required=True, metavar="FILE",
                        help="pending URLs (in process or not) in crawl order, one JSON object a line")
    export.add_argument("--done", metavar="FILE",
                        help="URLs crawler4j scheduled and no longer holds pending (DocIDs order): url, docid")
    add_progress_option(export)

    imp = frontier_command("import", "make a pycrawler crawl state that continues the crawl "
                                     "(pycrawler crawl --state STATE)", run_import)
    imp.add_argument("--into", required=True, metavar="STATE", help="a new or empty folder")
    imp.add_argument("--seen", choices=SEEN_TABLES, default="drum",
                     help="seen table for the DocIDs URLs: drum (default), bloom (approximate) or exact")
    imp.add_argument("--queue-policy", default="host", metavar="POLICY",
                     help="queue assignment of the continuing crawl (default: host)")
    imp.add_argument("--bloom-fpr", type=float, default=0.001, metavar="P", help="Bloom false-positive rate")
    imp.add_argument("--bloom-capacity", type=int, metavar="N",
                     help="Bloom filter capacity (default: twice the DocIDs count, at least 10 million)")
    imp.add_argument("--max-depth", type=int, default=-1, metavar="N",
                     help="the crawl's maxDepthOfCrawling (default -1, crawler4j's: no limit), recorded as the "
                          "continuing crawl's default --max-depth")
    imp.add_argument("--politeness-ms", type=int, default=200, metavar="MS",
                     help="the crawl's politenessDelay (default 200, crawler4j's), recorded as the continuing "
                          "crawl's default --delay")
    add_progress_option(imp)


def _open(args):
    from ..crawler4j import Crawler4jFrontier

    return Crawler4jFrontier.open(args.dir)


def _spread(counts) -> str:
    return " ".join(f"{value}:{n}" for value, n in sorted(counts.items()))


def run_inspect(args: argparse.Namespace) -> int:
    from ..crawler4j.frontier import DOC_IDS, IN_PROCESS, PENDING
    from ..jvm.je_releases import writer_of
    from ..crawler4j.records import DEPTH_CAP

    PROCESSED = "Processed-Pages"

    with _open(args) as frontier:
        writer = writer_of(frontier.log_version)
        mode = "resumable" if frontier.resumable else "not resumable"
        print(f"{frontier.path}: crawler4j frontier ({mode}), JE log version {frontier.log_version} "
              f"(written by {writer}), read with JE {frontier.env.je_version()}")
        counts = frontier.counts()
        width = max([len("records")] + [len(str(n)) for n in counts.values()])
        print(f"{'records':>{width}}  database")
        for name, count in counts.items():
            print(f"{count:>{width}}  {name}")
        waiting, in_process = counts.get(PENDING, 0), counts.get(IN_PROCESS, 0)
        print(f"pending: {waiting + in_process} URLs ({waiting} waiting, {in_process} in process)")
        depths, priorities = frontier.queue_census()
        if depths:
            width = max(len("urls"), *(len(str(n)) for n in depths.values()))
            print(f"  {'urls':>{width}}  depth")
            for depth, n in sorted(depths.items()):
                print(f"  {n:>{width}}  {depth}{'+' if depth == DEPTH_CAP else ''}")
            print(f"  priority:count  {_spread(priorities)}")
        scheduled, pending = counts[DOC_IDS], waiting + in_process
        print(f"scheduled: {scheduled} URLs with a docid ({DOC_IDS}), {max(scheduled - pending, 0)} of them no "
              "longer pending")
        statistics = frontier.statistics()
        if PROCESSED in statistics:
            processed = statistics[PROCESSED]
            print(f"  {processed} processed ({PROCESSED}), {max(scheduled - pending - processed, 0)} dropped by "
                  "crawler4j: given a docid, neither pending nor processed (lost at a kill, or past maxPagesToFetch; "
                  "see docs/crawler4j.md)")
        elif scheduled > pending:
            print("  fetched, failed or dropped by crawler4j: a crawl that is not resumable keeps no counters to tell "
                  "them apart")
        if statistics:
            print("counters: " + " ".join(f"{name}={value}" for name, value in sorted(statistics.items())))
    return 0


def run_export(args: argparse.Namespace) -> int:
    with _open(args) as frontier:
        for path, what, rows in ((args.pending, "pending", frontier.pending), (args.done, "done", frontier.done)):
            if path is None:
                continue
            count = 0
            with _output(path) as out, meter(what, unit="URLs", enabled=args.progress) as bar:
                for row in rows():
                    out.write(json_line(row))
                    count += 1
                    bar.update()
            print(f"{what}: {count} URLs -> {path}", file=sys.stderr)
    return 0


def run_import(args: argparse.Namespace) -> int:
    from ..crawler4j.migrate import import_frontier, start_jvm

    start_jvm(args.dir)
    with _open(args) as frontier:
        manifest = import_frontier(frontier, Path(args.into), seen_table=args.seen, queue_policy=args.queue_policy,
                                   bloom_fpr=args.bloom_fpr, bloom_capacity=args.bloom_capacity,
                                   progress=args.progress, max_depth=args.max_depth,
                                   politeness_ms=args.politeness_ms)
    pending, seen = manifest["frontier"], manifest["seen"]
    skipped = ", ".join(f"{n} {scheme}:" for scheme, n in sorted(pending["skipped"].items()))
    print(f"imported {pending['urls']} pending URLs ({pending['in_process']} were in process) into "
          f"{pending['queues']} work queues ({pending['queue_policy']}; skipped: {skipped or 'none'}) and "
          f"{seen['keys']} DocIDs URLs into {seen['kind']} ({seen['path']}, {seen['key_scheme']} keys)")
    defaults = manifest["crawl_defaults"]
    depth = "no depth limit" if defaults["max_depth"] is None else f"--max-depth {defaults['max_depth']}"
    print(f"continue with: pycrawler crawl SEED... --state {args.into} (the crawl's seeds; the folder keeps "
          f"the seen table, queue policy and crawler4j's URL forms, and gives the crawl crawler4j's {depth} and "
          f"--delay {defaults['delay']})")
    return 0
