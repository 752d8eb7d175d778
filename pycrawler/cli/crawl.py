"""``pycrawler crawl SEED... --state DIR``: crawl, resumably; the same --state continues the crawl."""

from __future__ import annotations

import argparse
import ipaddress
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..crawl.settings import JE_CACHE_MB, CrawlConfig, parse_delay, set_crawl_jvm_defaults, state_defaults
from ..crawl.scope import SCOPES, check_seeds, server
from ..crawl.stop_signals import StopSignals
from ..errors import BadInput, PycrawlerError
from ..fetch.robots import IGNORE, READINGS, RFC9309
from ..jvm import keep_error_files_in
from ..progress import add_option as add_progress_option
from .cluster import add_worker_options, join
from .plain import first_line

LOCAL_CONTACT = "http://localhost/"

if TYPE_CHECKING:
    from ..crawl.engine import Crawler


def contact_for(seeds: list[str], given: str | None) -> str:
    """The operator contact the user agent carries: ``--contact``, else ``PYCRAWLER_CONTACT``;
    a crawl whose seeds are all on loopback may go without one (who would complain?)."""
    contact = given or os.environ.get("PYCRAWLER_CONTACT")
    if contact:
        return contact
    if all((where := server(s)) is not None and _is_loopback(where[0]) for s in seeds):
        return LOCAL_CONTACT
    raise BadInput("crawling other servers needs --contact URL (or PYCRAWLER_CONTACT): a page where their "
                   "operators can reach you, sent in the User-Agent as Heritrix requires")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _not_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("cannot be negative")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("crawl", help="crawl from seed URLs into a resumable state folder",
                       description=first_line(__doc__))
    p.add_argument("seeds", nargs="+", metavar="SEED", help="http(s) URLs to start from")
    p.add_argument("--state", type=Path, required=True, metavar="DIR",
                   help="the crawl's folder: JE state, crawl.log, crawl.json (created, or resumed)")
    p.add_argument("--scope", choices=SCOPES, default="seed-hosts",
                   help="which links to follow: the seeds' hosts (default), their registered domains, "
                        "URLs under a seed's folder, or any http(s) URL")
    p.add_argument("--max-pages", type=_positive, metavar="N",
                   help="stop after N URLs have been fetched or refused (counting earlier runs of this state)")
    p.add_argument("--max-depth", type=int, metavar="N",
                   help=f"follow links at most N hops from a seed (default {CrawlConfig.max_depth}, Heritrix's "
                        "maxHops, unless the state records another, as a crawler4j import does: no limit; redirects "
                        "do not count)")
    p.add_argument("--concurrency", type=_positive, default=CrawlConfig.concurrency, metavar="N",
                   help="fetches in flight at once (default %(default)s); also the most a kill -9 makes the next "
                        "run refetch")
    p.add_argument("--delay", metavar="SPEC",
                   help="politeness per work queue after each fetch: 'polite' (default: 10x the fetch time, "
                        "3 to 30 s, as Heritrix; a state may record another, as a crawler4j import does), "
                        "SECONDS (fixed; 0 = none), or FACTORx (e.g. 5x the fetch time, at most 30 s). "
                        "robots.txt Crawl-delay raises it")
    kept = " (kept by the state folder: a resume without it uses the folder's)"
    p.add_argument("--seen", choices=("exact", "bloom", "drum"),
                   help="URL-seen table: exact JE set (default), Bloom filter, DRUM" + kept)
    p.add_argument("--bloom-capacity", type=_positive, default=CrawlConfig.bloom_capacity, metavar="N",
                   help="URLs the Bloom filter of --seen bloom is sized for, at a 0.1%% false-positive rate "
                        "(default %(default)s); past N its rate climbs and new URLs are taken for seen. Used when "
                        "the filter is made: a state's filter keeps its size")
    p.add_argument("--je-cache-mb", type=_positive, metavar="MB",
                   help=f"JE's cache for the state, in MiB (default: {JE_CACHE_MB['exact']} with --seen exact, whose "
                        f"keys share it with the frontier, else {JE_CACHE_MB['drum']}; the JVM's heap is twice it). "
                        "JE fills it only as the state grows")
    p.add_argument("--url-cache", metavar="POLICY:SIZE",
                   help="a URL cache in front of the seen table: clock (the default policy), lru or random, "
                        "with SIZE entries (e.g. clock:50000, 2^16, lru:64k); a hit answers 'seen' without the table")
    p.add_argument("--queue-policy", metavar="POLICY",
                   help="work-queue assignment: host (default), heritrix-host, surt, domain, bkdr (one site over "
                        "4x concurrency queues), bkdr:N, bkdr-host:N, parallel-host:N (Heritrix's parallelQueues: N queues a "
                        "host, each polite on its own); one URL per queue is in flight at a time" + kept)
    p.add_argument("--canon", choices=("web", "safe", "heritrix", "crawler4j"),
                   help="URL canonicalisation for the seen test (default web: the normal form without userinfo "
                        "or session ids; safe: the normal form alone, an older state's; heritrix with --seen-key "
                        "heritrix; crawler4j: crawler4j's, set by crawler4j import)"
                        + kept)
    p.add_argument("--seen-key", choices=("md5", "heritrix"),
                   help="how URLs are keyed in the seen table: md5 (default) or heritrix (Heritrix's createKey, "
                        "to continue or dedupe against a Heritrix crawl; implies --canon heritrix)" + kept)
    p.add_argument("--warc", type=Path, metavar="DIR", help="write WARC 1.1 files into DIR")
    p.add_argument("--trace", type=Path, metavar="FILE", help="append every extracted link to FILE")
    p.add_argument("--fsync", action="store_true",
                   help="fsync crawl.log, WARC and trace before each commit, so they hold every fetch the state "
                        "counts after a power loss too (a kill -9 never loses one either way)")
    p.add_argument("--repair", action="store_true",
                   help="continue a state whose JE files lost commits (a cut or damaged .jdb) although no WARC "
                        "file holds some of the pages crawl.log says it fetched: those are fetched again")
    p.add_argument("--min-free", type=int, default=CrawlConfig.min_free_mb, metavar="MB",
                   help="stop (resumably) when a filesystem the crawl writes to has less than MB free "
                        "(default %(default)s; 0: never)")
    p.add_argument("--queue-budget", type=_not_negative, metavar="N",
                   help="fetches a work queue may make (a host's, under the default --queue-policy host), as "
                        "Heritrix's queueTotalBudget: a queue that spent it retires, its URLs left pending, so a "
                        "trap no rule knows ends there; kept by the state until a command names another (a higher "
                        "one fetches the rest; 0: no limit, the default)")
    p.add_argument("--robots", choices=READINGS, default=RFC9309,
                   help="how robots.txt is read: rfc9309 (default: a 5xx, a 429 or no answer disallows the host, "
                        "whose URLs wait while robots.txt is retried), heritrix (any answer but 2xx allows all, as "
                        "Heritrix 3: to continue a Heritrix crawl), ignore (only for your own servers)")
    p.add_argument("--no-robots", dest="robots", action="store_const", const=IGNORE, help="--robots ignore")
    p.add_argument("--no-sitemaps", action="store_true",
                   help="do not read the sitemaps robots.txt names (nor a seed that is one); see docs/crawler.md")
    p.add_argument("--contact", metavar="URL",
                   help="operator contact URL for the User-Agent (required unless all seeds are on loopback)")
    p.add_argument("--fetchers", "--parse-workers", dest="fetchers", type=_positive, metavar="N",
                   help="fetcher processes, each fetching, parsing and writing its own WARC files (default: one "
                        "a core; --parse-workers is its former name); see docs/crawler.md")
    add_progress_option(p)
    p.add_argument("--serve", action="store_true",
                   help="serve the crawl's state while it runs (py4j, printed on stderr), so that store ls/dump "
                        "read it live; see docs/gateway.md")
    p.add_argument("--serve-port", type=int, default=0, metavar="N", help="port for --serve (default: a free one)")
    p.add_argument("--stats", type=Path, metavar="FILE",
                   help="append the crawl's counters to FILE every second, one JSON line each (seen-table "
                        "checks, flush time, JE cache misses and log bytes; for benchmarks)")
    p.add_argument("--console", metavar="[HOST:]PORT",
                   help="serve the operator's console (a web page, its JSON and Prometheus /metrics; pause, resume, "
                        "stop, add seeds) on 127.0.0.1:PORT, or HOST:PORT (off loopback: with --console-public, "
                        "and every request wants the token); the token is in DIR/console.token; see docs/console.md")
    p.add_argument("--console-public", action="store_true",
                   help="let --console listen off loopback, over plain HTTP (its token crosses the network in clear)")
    add_worker_options(p)
    p.set_defaults(run=run_crawl)


def config_from(args: argparse.Namespace) -> CrawlConfig:
    defaults = state_defaults(args.state)  # what an import recorded of the other crawler's settings
    max_depth = args.max_depth if args.max_depth is not None else defaults.get("max_depth", CrawlConfig.max_depth)
    delay = args.delay if args.delay is not None else defaults.get("delay", "polite")
    return CrawlConfig(
        seeds=args.seeds, state=args.state, scope=args.scope, max_pages=args.max_pages, max_depth=max_depth,
        concurrency=args.concurrency, politeness=parse_delay(delay), seen=args.seen, url_cache=args.url_cache,
        bloom_capacity=args.bloom_capacity, je_cache_mb=args.je_cache_mb, queue_policy=args.queue_policy,
        canon=args.canon, seen_key=args.seen_key, warc=args.warc, trace=args.trace,
        fsync=args.fsync, repair=args.repair, min_free_mb=args.min_free, queue_budget=args.queue_budget,
        robots=args.robots, sitemaps=not args.no_sitemaps,
        contact_url=contact_for(args.seeds, args.contact), fetchers=args.fetchers, progress=args.progress,
        serve=args.serve_port if args.serve else None, stats=args.stats)


def check_state_folder(state: Path) -> None:
    """Refuse, in one line, a --state the crawl could not make its folder of: a file, or a
    folder (or the nearest existing parent of a new one) the user may not write into."""
    if state.exists() and not state.is_dir():
        raise BadInput(f"--state {state} is a file, not a folder")
    existing = next(folder for folder in (state, *state.absolute().parents) if folder.exists())
    if not existing.is_dir():
        raise BadInput(f"--state {state}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise BadInput(f"--state {state}: {existing} is not writable")


def run_crawl(args: argparse.Namespace) -> int:
    check_seeds(args.seeds)  # before the --contact rule, and before the state folder is touched
    check_state_folder(args.state)
    set_crawl_jvm_defaults(args.je_cache_mb)
    config = config_from(args)
    keep_error_files_in(args.state)
    with StopSignals() as signals:  # joining a cluster is start-up too, and the summary's lines close the run
        exchange = join(args, config.seeds)
        try:
            console = None
            if args.console:  # its web server (aiohttp.web, prometheus_client) is loaded for it alone
                from ..console.server import CrawlConsole

                console = CrawlConsole(args.console, args.console_public)
            from ..crawl.engine import Crawler  # the crawl's side (numpy, numba): not needed by the other commands

            summary = _crawl(Crawler(config, exchange, console), args.state, signals)
        finally:
            if exchange is not None:
                exchange.close()
        _print_summary(summary, args.state)
        stopped_by = summary.signal or signals.caught  # caught: a signal that came after the close
    if stopped_by is not None:
        return 128 + stopped_by
    return 130 if summary.interrupted else 0


def _crawl(crawler: Crawler, state: Path, signals: StopSignals):
    try:
        return crawler.run(signals)
    except PycrawlerError:
        if crawler.summary.seconds:  # it crawled before it stopped: say what it did, then why
            _print_summary(crawler.summary, state)
        raise


def _print_summary(summary, state: Path) -> None:
    for line in summary.lines():
        print(line)
    print(f"crawl.log:      {state / 'crawl.log'}", flush=True)
