"""``pycrawler heritrix inspect|seen|export|import|rescue|journal``: Heritrix crawl state, read-only.

``journal`` writes a pycrawler crawl state as Heritrix's frontier recover journal; ``rescue``
rebuilds the frontier of a crawl that died with no usable state from its crawl.log, WARC files
and last checkpoint (:mod:`pycrawler.heritrix.rescue`); every other
command opens the state (a job's ``state/`` folder, or ``--checkpoint NAME|latest``)
read-only and changes nothing in it; a state that a running crawler holds is refused (see
docs/heritrix.md). Heritrix 1.14 stores are read with pycrawler's JE 3.3; Heritrix 3 stores
need the user's Heritrix ``lib/`` on ``PYCRAWLER_CLASSPATH``.

Each command also takes a served environment's address (``py4j://HOST:PORT``) where it takes
a folder: ``pycrawler serve`` on a copy of a Heritrix state (in a process whose JE reads it),
or, for ``journal``, ``pycrawler crawl --serve``. The output is the folder's, byte for byte
(``inspect``'s first line names the address and the folder served). ``--checkpoint`` is
refused with an address: a checkpoint is assembled from the state folder's files.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from itertools import islice
from pathlib import Path

from ..atomic_write import replacing
from ..crawl.scope import SCOPES
from ..errors import BadInput
from ..heritrix.rescue import DEFAULT_MAX_HOPS, LINK_SOURCES
from ..progress import add_option as add_progress_option
from ..progress import meter
from .jsonl import json_line
from .plain import first_line
from .store import _output

SEEN_BATCH = 100_000
TOP_QUEUES = 10


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("heritrix", help="inspect, check, export and import Heritrix crawl state (read-only)",
                       description=first_line(__doc__))
    actions = p.add_subparsers(dest="heritrix_command", required=True, metavar="ACTION")

    def state_command(name: str, help: str, run):
        command = actions.add_parser(name, help=help)
        command.add_argument("state", metavar="STATE", help="the crawl's state folder (jobs/<job>/state), or a "
                                                            "served copy's py4j://HOST:PORT")
        command.add_argument("--checkpoint", metavar="NAME",
                             help="read this checkpoint of the crawl instead (a name, 'latest', or its folder)")
        command.set_defaults(run=run)
        return command

    inspect = state_command("inspect", "JE and log version, databases, queues, seen count", run_inspect)
    inspect.add_argument("--top", type=int, default=TOP_QUEUES, metavar="N", help="queues to list (largest first)")

    seen = state_command("seen", "is each URL in alreadySeenUrl? (URLs as arguments or one per line on stdin)",
                         run_seen)
    seen.add_argument("urls", nargs="*", metavar="URL")
    seen.add_argument("--no-canon", action="store_true", help="key the URLs as given, without canonicalising")

    export = state_command("export", "write pending URLs (JSON lines) and seen keys", run_export)
    export.add_argument("--pending", metavar="FILE", help="pending URLs in queue order, one JSON object a line")
    export.add_argument("--seen", metavar="FILE", help="seen keys, ascending (see --seen-format)")
    export.add_argument("--seen-format", choices=("raw", "hex"), default="raw",
                        help="raw (default): 8-byte big-endian unsigned records; hex: 16 hex digits a line")
    recover_log_help = ("Heritrix's frontier journal (logs/frontier.recover.gz, or the logs/ folder with its rotated "
                        "parts): the pending URLs are read from it and placed by the pending keys, no Heritrix class "
                        "needed")
    export.add_argument("--recover-log", metavar="PATH", help=recover_log_help)
    add_progress_option(export)

    imp = state_command("import", "make a pycrawler crawl state that continues the crawl (pycrawler crawl --state DIR)",
                        run_import)
    imp.add_argument("--into", required=True, metavar="DIR", help="a new or empty folder")
    imp.add_argument("--seen", choices=("drum", "bloom", "exact"), default="drum",
                     help="seen table for Heritrix's keys: drum (default), bloom (approximate, see --bloom-fpr) "
                          "or exact (a JE database)")
    imp.add_argument("--queue-policy", metavar="POLICY",
                     help="queue assignment of the continuing crawl (default: the one Heritrix used, detected "
                          "from its queues: heritrix-host or surt); URLs are re-queued under it where it differs")
    imp.add_argument("--recover-log", metavar="PATH", help=recover_log_help)
    imp.add_argument("--bloom-fpr", type=float, default=0.001, metavar="P", help="Bloom false-positive rate")
    imp.add_argument("--bloom-capacity", type=int, metavar="N",
                     help="Bloom filter capacity (default: twice Heritrix's seen count, at least 10 million)")
    add_progress_option(imp)


    rescue = actions.add_parser(
        "rescue", help="rebuild the frontier of a Heritrix crawl that died with no usable state (kill -9, no "
                       "checkpoint) from its crawl.log, WARC files and last checkpoint: a pycrawler crawl state "
                       "and/or a journal for Heritrix's importURIs")
    rescue.add_argument("crawl", metavar="JOB_OR_LAUNCH", help="the job folder (jobs/NAME; its latest launch is read) "
                                                                "or a launch folder (jobs/NAME/TIMESTAMP)")
    rescue.add_argument("--into", metavar="DIR", help="write a pycrawler crawl state here (a new or empty folder)")
    rescue.add_argument("--journal", metavar="FILE", help="write the frontier as a Heritrix recover journal (gzip), "
                                                          "for importURIs (a new file: an existing one is refused)")
    rescue.add_argument("--warcs", metavar="DIR", help="the crawl's WARC files (default: the launch's warcs/)")
    rescue.add_argument("--no-warcs", action="store_true",
                        help="the crawl kept no WARC files: every page it fetched is fetched again (without it, a "
                             "launch with no warcs/ folder is refused)")
    rescue.add_argument("--checkpoint", metavar="NAME", default="latest",
                        help="the checkpoint whose seen keys and pending URLs to add: a name, 'latest' (the default: "
                             "the newest taken during the launch, if any) or 'none'")
    rescue.add_argument("--seed", action="append", default=[], metavar="URL",
                        help="a seed of the crawl (repeatable; crawl.log's seeds are found by themselves)")
    rescue.add_argument("--scope", choices=SCOPES, default="seed-hosts",
                        help="which discovered links are queued, as pycrawler crawl --scope (default: seed-hosts)")
    rescue.add_argument("--links", choices=LINK_SOURCES, default="all",
                        help="all (default): pycrawler's parse of the archived responses and the outlinks of "
                             "Heritrix's metadata records; parsed: pycrawler's parse only")
    rescue.add_argument("--max-hops", type=int, default=DEFAULT_MAX_HOPS, metavar="N",
                        help=f"leave out links more hops from a seed (default: {DEFAULT_MAX_HOPS}, Heritrix's maxHops)")
    rescue.add_argument("--queue-policy", metavar="POLICY",
                        help="queue assignment (default: the checkpoint's, detected from its queues, else "
                             "heritrix-host)")
    rescue.add_argument("--seen", choices=("drum", "bloom", "exact"), default="drum",
                        help="seen table of the crawl state (default: drum)")
    rescue.add_argument("--bloom-fpr", type=float, default=0.001, metavar="P", help="Bloom false-positive rate")
    rescue.add_argument("--bloom-capacity", type=int, metavar="N", help="Bloom filter capacity")
    add_progress_option(rescue)
    rescue.set_defaults(run=run_rescue)

    journal = actions.add_parser(
        "journal", help="write a pycrawler crawl state as a Heritrix frontier recover journal, which Heritrix 3 "
                        "imports (importURIs, format recoveryLog)")
    journal.add_argument("state", metavar="DIR", help="a pycrawler crawl state (pycrawler crawl --state DIR), or "
                                                      "its py4j://HOST:PORT (pycrawler crawl --serve)")
    journal.add_argument("--out", required=True, metavar="FILE", help="the journal to write (gzip)")
    journal.set_defaults(run=run_journal)


def _open(args):
    from ..heritrix.state import HeritrixState

    return HeritrixState.open(args.state, checkpoint=args.checkpoint)


# -- inspect ------------------------------------------------------------------------------------
def _spread(counts: dict[int, int]) -> str:
    return " ".join(f"{value}:{n}" for value, n in sorted(counts.items()))


def run_inspect(args: argparse.Namespace) -> int:
    from ..heritrix.export import queue_stats

    with _open(args) as state:
        source = (f"served from {state.env.home}" if state.served else
                  f"checkpoint {state.checkpoint.name}" if state.checkpoint else "live state (no writer)")
        print(f"{args.state}: Heritrix {state.heritrix} crawl state, JE log version {state.log_version}, "
              f"read with JE {state.env.je_version()} ({source})")
        counts = state.counts()
        width = max([len("records")] + [len(str(n)) for n in counts.values()])
        print(f"{'records':>{width}}  database")
        for name, count in counts.items():
            print(f"{count:>{width}}  {name}")
        queues = queue_stats(state)
        total = sum(q["urls"] for q in queues.values())
        print(f"pending: {total} URLs in {len(queues)} queues")
        if queues:
            largest = sorted(queues.items(), key=lambda kv: (-kv[1]["urls"], kv[0]))[:max(args.top, 0)]
            width = max(len("urls"), *(len(str(q["urls"])) for _, q in largest)) if largest else 4
            print(f"  {'urls':>{width}}  directive:count  precedence:count  queue")
            for name, q in largest:
                print(f"  {q['urls']:>{width}}  {_spread(q['directives']) or '-':15}  "
                      f"{_spread(q['precedences']) or '-':16}  {name}")
            if len(queues) > len(largest):
                print(f"  ... {len(queues) - len(largest)} more queues")
        print(f"seen: {state.seen_count()} URL keys (alreadySeenUrl)")
    return 0


# -- seen ---------------------------------------------------------------------------------------
def _input_urls(args) -> iter[str]:
    if args.urls:
        return iter(args.urls)
    stdin = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else sys.stdin
    lines = (line.decode("utf-8", "surrogateescape") if isinstance(line, bytes) else line for line in stdin)
    return (stripped for line in lines if (stripped := line.rstrip("\r\n")))


def run_seen(args: argparse.Namespace) -> int:
    from ..keys.heritrix_canon import canonicalize_many
    from ..keys.heritrix_fp import create_keys
    from ..store.packing import as_list

    urls = _input_urls(args)
    with _open(args) as state:
        while batch := list(islice(urls, SEEN_BATCH)):
            canonical = batch if args.no_canon else canonicalize_many(batch)
            keys = create_keys(canonical)
            found = state.contains_keys(keys)
            sys.stdout.write("".join(
                f"{'seen' if hit else 'new'}\t{key:016x}\t{canon}\t{url}\n"
                for hit, key, canon, url in zip(as_list(found), as_list(keys), canonical, batch)))
        sys.stdout.flush()
    return 0


# -- export -------------------------------------------------------------------------------------
def run_export(args: argparse.Namespace) -> int:
    from ..heritrix.export import pending_urls, value_decoder, write_seen
    from ..heritrix.pending import KRYO_NEEDS

    if not args.pending and not args.seen:
        raise BadInput("say what to export: --pending FILE and/or --seen FILE")
    if args.recover_log and not args.pending:
        raise BadInput("--recover-log gives the pending URLs: add --pending FILE")
    with _open(args) as state:
        if args.pending:
            recovered = None
            if args.recover_log:
                from ..heritrix.recovered import recover_from_log

                journal, recovered = recover_from_log(state, args.recover_log, progress=args.progress)
                _print_recovered({**journal.summary(), **recovered.summary()}, "exported with \"placed\": false")
                rows = recovered.rows()
            else:
                decode_many = value_decoder(state)
                if decode_many is None:
                    print(f"pycrawler: note: {KRYO_NEEDS} (or give its journal with --recover-log); exporting the "
                          "key fields only (queue, directive, precedence, ordinal) with each value's bytes as "
                          "value_hex", file=sys.stderr)
                rows = pending_urls(state, decode_many)
            count = 0
            try:
                with _output(args.pending) as out, meter("pending", unit="URLs", enabled=args.progress) as bar:
                    for row in rows:
                        out.write(json_line(row))
                        count += 1
                        bar.update()
            finally:
                if recovered is not None:
                    recovered.close()
            print(f"pending: {count} URLs -> {args.pending}", file=sys.stderr)
        if args.seen:
            count = _write_binary(args.seen, lambda out: write_seen(state, out, args.seen_format,
                                                                    progress=args.progress))
            print(f"seen: {count} keys ({args.seen_format}) -> {args.seen}", file=sys.stderr)
    return 0


def _write_binary(path: str, write) -> int:
    """Run ``write(stream)`` into ``path``, which appears only whole (:func:`replacing`)."""
    with replacing(path, binary=True) as stream:
        return write(stream)


MISMATCHES_SHOWN = 20


def _print_recovered(summary: dict, action: str) -> None:
    """What reading the journal gave, on stderr: lines, what was skipped or cut, and each queue
    whose keys and journal URLs disagree (the first few; the import's manifest has them all)."""
    from ..heritrix.recovered import Mismatch

    def note(text: str) -> None:
        print(f"pycrawler: note: {text}", file=sys.stderr)

    reordered = summary.get("reordered", 0)
    by_uri = f" ({reordered} by their values' URIs: journal lines out of ordinal order)" if reordered else ""
    note(f"recover log: {summary['lines']} lines in {len(summary['files'])} files, {summary['pending']} URLs left "
         f"pending; {summary['placed']} placed by the pending keys ({summary['policy']} queues){by_uri}, "
         f"{summary['unplaced']} not; {summary['skipped_lines']} lines skipped (not journal events)")
    for path, why in summary["cut_short"].items():
        note(f"recover log {path}: {why}")
    for path in summary.get("empty_files", ()):
        note(f"recover log {path}: empty (0 bytes: Heritrix had not yet flushed its gzip stream there, "
             "as right after a checkpoint); no lines")
    if summary.get("after_checkpoint"):
        note(f"not read (written after checkpoint {summary['checkpoint']}, the state read): "
             f"{', '.join(summary['after_checkpoint'])}")
    relaunched = summary.get("relaunched", summary["ignored_files"])
    if relaunched:
        note(f"not read (moved aside at a relaunch: not the run this state continues): {', '.join(relaunched)}")
    mismatches = summary["mismatched_queues"]
    for m in mismatches[:MISMATCHES_SHOWN]:
        note(Mismatch(**m).describe(action))
    if len(mismatches) > MISMATCHES_SHOWN:
        note(f"... and {len(mismatches) - MISMATCHES_SHOWN} more queues whose counts disagree")


# -- import -------------------------------------------------------------------------------------
def run_import(args: argparse.Namespace) -> int:
    from ..heritrix.migrate import import_state

    with _open(args) as state:
        manifest = import_state(state, Path(args.into), seen_table=args.seen, queue_policy=args.queue_policy,
                                bloom_fpr=args.bloom_fpr, bloom_capacity=args.bloom_capacity,
                                recover_log=args.recover_log, progress=args.progress)
    if "recover_log" in manifest:
        _print_recovered(manifest["recover_log"], "queued behind Heritrix's, in journal order")
    frontier, seen = manifest["frontier"], manifest["seen"]
    skipped = ", ".join(f"{n} {scheme}:" for scheme, n in sorted(frontier["skipped"].items()))
    print(f"imported {frontier['urls']} pending URLs into {frontier['queues']} work queues "
          f"({frontier['queue_policy']}; {frontier['rekeyed']} re-queued; skipped: {skipped or 'none'}) "
          f"and {seen['keys']} seen keys into {seen['kind']} ({seen['path']}, Heritrix createKey)")
    print(f"continue with: pycrawler crawl SEED... --state {args.into} (the job's seeds and scope; "
          "the folder keeps the seen table, queue policy and keys)")
    return 0


# -- rescue -------------------------------------------------------------------------------------
def run_rescue(args: argparse.Namespace) -> int:
    from ..heritrix.rescue import describe, rescue, survivors, write_rescue_journal, write_state

    if not args.into and not args.journal:
        raise BadInput("say what to write: --into DIR (a pycrawler crawl state) and/or --journal FILE")
    if args.into:
        from ..whole_folder import require_new_folder

        require_new_folder(args.into, "rescue")   # refused before minutes of reading, not after
    if args.journal and os.path.lexists(args.journal):
        raise BadInput(f"--journal {args.journal} exists: a rescue writes a new journal and never replaces a file "
                       "(remove it, or name another)")
    found = survivors(args.crawl, warcs=args.warcs, checkpoint=None if args.checkpoint == "none" else args.checkpoint,
                      no_warcs=args.no_warcs)
    rescued = rescue(found, scope=args.scope, seeds=args.seed, links=args.links, max_hops=args.max_hops,
                     queue_policy=args.queue_policy, progress=args.progress)
    for line in describe(rescued.summary):
        print(line)
    if args.into:
        manifest = write_state(rescued, Path(args.into), seen_table=args.seen, bloom_fpr=args.bloom_fpr,
                               bloom_capacity=args.bloom_capacity, progress=args.progress)
        frontier, seen = manifest["frontier"], manifest["seen"]
        print(f"wrote {args.into}: {frontier['urls']} pending URLs in {frontier['queues']} work queues "
              f"({frontier['queue_policy']}) and {seen['keys']} seen keys into {seen['kind']} (Heritrix createKey)")
        print(f"continue with: pycrawler crawl {' '.join(rescued.seeds)} --state {args.into} (the job's scope; "
              "the folder keeps the seen table, queue policy and keys)")
    if args.journal:
        from ..heritrix.journal import ADDED, FAILURE, SUCCESS

        counts = _write_binary(args.journal, lambda out: write_rescue_journal(rescued, out))
        print(f"wrote {args.journal}: {counts[ADDED]} pending URLs (F+), {counts[SUCCESS]} succeeded (Fs), "
              f"{counts[FAILURE]} failed (Ff)" + (f"; the checkpoint's {rescued.summary['checkpoint_seen_keys']} seen "
                                                 "keys name no URL and are not in it" if found.checkpoint else ""))
        params = json.dumps({"path": str(Path(args.journal).resolve()), "format": "recoveryLog",
                             "includeSuccesses": True, "includeFailures": True, "scheduleScheduleds": True})
        print(f"import it into Heritrix 3 from the job's scripting console: "
              f"appCtx.getBean('frontier').importURIs('{params}')")
    return 0


# -- journal ------------------------------------------------------------------------------------
def run_journal(args: argparse.Namespace) -> int:
    from ..heritrix.journal import ADDED, FAILURE, SUCCESS
    from ..heritrix.to_journal import write_crawl_journal

    counts = _write_binary(args.out, lambda out: write_crawl_journal(args.state, out))
    print(f"wrote {args.out}: {counts[ADDED]} pending URLs (F+), {counts[SUCCESS]} succeeded (Fs), "
          f"{counts[FAILURE]} failed (Ff)")
    params = json.dumps({"path": str(Path(args.out).resolve()), "format": "recoveryLog", "includeSuccesses": True,
                         "includeFailures": True, "scheduleScheduleds": True})
    print(f"import it into Heritrix 3 from the job's scripting console: "
          f"appCtx.getBean('frontier').importURIs('{params}')")
    return 0
