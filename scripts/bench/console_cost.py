#!/usr/bin/env python3
"""What the operator's console costs a crawl: pages/s with and without ``--console``, same site, same run.

    .venv/bin/python scripts/bench/console_cost.py --pages 100000 --rounds 3 --seconds 60

The site is :func:`scripts.bench.crawl_threads.write_site`'s (``N`` static pages on one host,
~25 links a page), written once into ``bench-output/threads-site-N`` and served by nginx on
127.0.0.1. Each round crawls it twice from scratch, once plain and once with ``--console``
and a poller that asks what an open page asks (``/api/figures`` every two seconds, the
frontier, hosts and crawl.log reports every five, as ``static/console.js`` does) plus a
Prometheus scrape of ``/metrics`` every 5 seconds; the two alternate which goes first, round after round, so the
machine's drift hits them alike; with ``--together`` they run at the same time instead, from
their own state folders against the same nginx, sharing the cores and whatever else loads the
machine at that moment (a paired ratio that other people's work on a shared machine moves far
less than the alternated runs'). With ``--span FIRST LAST`` each crawl is measured over the
same pages (its FIRST-th to its LAST-th crawl.log line) instead of the same seconds: a window
of time may catch one crawl in a DRUM merge and the other between two, while the same pages
hold the same merges and flushes. Else a crawl runs ``--seconds``; its rate is the crawl.log lines
after the first ``--warmup`` seconds over the time since, and its CPU per page the crawling
process's CPU time over those lines (``/proc``: its threads, the page workers left out, whose
work the console does not change); on a shared machine the CPU per page moves less with the
others' load than the rate. The crawl's flags are those of crawl_threads.py (``--seen drum
--concurrency 32 --delay 0 --queue-policy bkdr``). The last line gives the medians, and the
medians of each round's console run over its plain run (the pairs share the load of the moment).

With ``--flood`` the crawl is of a synthetic web of ``--hosts`` hosts on loopback
(:class:`~pycrawler.testing.synthetic_server.SyntheticServer`, its own process), at
``--concurrency 4 --delay DELAY`` (``--delay``, default 0.5 s): the shape of a crawl of many
hosts, whose reports (hosts, queues) are the console's heaviest. Both crawls of a round have
``--console``; one is left alone, the other is read by ``--connections`` clients (threads of
this process, keep-alive connections) asking every endpoint, the heaviest forms included
(``/api/hosts?limit=10000``, ``/api/log?limit=5000``, ``/metrics``...), as fast as the
console answers: what a local process reading in a loop does to the crawl it shares a loop
with. The last line gives the medians, the paired ratio (flooded over alone), the CPU per
page's and the answers a second the flood got.

    .venv/bin/python scripts/bench/console_cost.py --flood --pages 100000 --hosts 100 --rounds 5 --seconds 35 --warmup 15
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crawl_threads import CRAWL_FLAGS, ROOT, LineCounter, thread_cpu, write_site

from pycrawler.local_servers import free_port
from pycrawler.static_site.server import StaticSite
from pycrawler.testing.synthetic_server import SyntheticServer
from pycrawler.testing.synthetic_web import SyntheticWeb

POLLS = (("api/figures", 2.0), ("api/frontier?top=15", 5.0), ("api/hosts?limit=15", 5.0),
         ("api/log?limit=40&contains=", 5.0), ("metrics", 5.0))
"""What an open page (and a Prometheus) asks, and how often (seconds)."""

NGINX_FLAGS = (*CRAWL_FLAGS, "--queue-policy", "bkdr", "--delay", "0")
"""The crawl of the nginx site: crawl_threads.py's."""


def poll(base: str, stop: threading.Event) -> None:
    """Ask :data:`POLLS` of the console at ``base`` until ``stop``."""
    due = {path: 0.0 for path, _ in POLLS}
    while not stop.wait(0.1):
        for path, every in POLLS:
            if time.monotonic() >= due[path]:
                due[path] = time.monotonic() + every
                try:
                    with urllib.request.urlopen(base + path, timeout=5) as answer:
                        answer.read()
                except OSError:
                    pass  # the console is not up yet


FLOOD = ("/api/figures", "/api/frontier?top=1000", "/api/hosts?limit=10000", "/api/log?limit=5000",
         "/api/log?limit=5000&contains=text", "/metrics", "/api/cluster", "/", "/static/console.js")
"""What a flood asks, in turn: every endpoint, in its heaviest form."""


def flood(port: int, stop: threading.Event, answers: list[int], client: int) -> None:
    """Ask :data:`FLOOD` of the console on ``port``, on one keep-alive connection, as fast as it
    answers, until ``stop``; ``answers[client]`` counts the answers."""
    connection = None
    while not stop.is_set():
        try:
            if connection is None:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            connection.request("GET", FLOOD[(client + answers[client]) % len(FLOOD)])
            connection.getresponse().read()
            answers[client] += 1
        except (OSError, http.client.HTTPException):
            connection = None  # the console is not up yet
            stop.wait(0.1)


class Crawl:
    """One crawl of the bench, plain or with ``--console`` and the poller (or, ``flood``
    connections, a flood: :func:`flood`), started at once."""

    def __init__(self, seeds: list[str], state: Path, console: bool, flags: tuple[str, ...], flood_connections: int = 0):
        port = free_port()
        command = [sys.executable, "-m", "pycrawler", "crawl", *seeds, "--state", str(state), *flags,
                   *(["--console", f"127.0.0.1:{port}"] if console else [])]
        self.console, self.stop = console, threading.Event()
        self.answers = [0] * flood_connections
        with open(state.with_suffix(".out"), "wb") as out:
            self.process = subprocess.Popen(command, env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT,
                                            stdout=out, stderr=subprocess.STDOUT)
        self.flooders = [threading.Thread(target=flood, args=(port, self.stop, self.answers, i), daemon=True)
                         for i in range(flood_connections)]
        for flooder in self.flooders:
            flooder.start()
        if console and not flood_connections:
            threading.Thread(target=poll, args=(f"http://127.0.0.1:{port}/", self.stop), daemon=True).start()
        self.pages = LineCounter(state / "crawl.log")

    def mark(self) -> tuple[int, float, dict[str, float]]:
        return self.pages.count(), time.monotonic(), thread_cpu(self.process.pid)

    def since(self, start: tuple[int, float, dict[str, float]]) -> tuple[float, dict[str, float]]:
        """Pages/s and CPU ms per page, by thread group (crawl_threads.py's main, refq, other)
        and in all, since ``start`` (:meth:`mark`)."""
        first, started, cpu = start
        cpu = {group: seconds - cpu[group] for group, seconds in thread_cpu(self.process.pid).items()}
        done = self.pages.count() - first
        cpu_ms = {group: 1000 * seconds / max(done, 1) for group, seconds in cpu.items()}
        cpu_ms["all"] = sum(cpu_ms.values())
        if self.process.poll() is not None:
            raise SystemExit("a crawl ended before its --seconds: use a larger --pages")
        return done / (time.monotonic() - started), cpu_ms

    def end(self) -> None:
        self.stop.set()
        for flooder in self.flooders:
            flooder.join()
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait()


def measure(crawls: list[Crawl], args: argparse.Namespace) -> list[tuple[float, dict[str, float]]]:
    """Pages/s and CPU ms per page of ``crawls`` (started together) over the same window, after
    ``--warmup``, or each over its own ``--span`` of pages (module docstring)."""
    try:
        if args.span:
            return over_span(crawls, *args.span)
        time.sleep(args.warmup)
        marks = [crawl.mark() for crawl in crawls]
        time.sleep(args.seconds - args.warmup)
        return [crawl.since(mark) for crawl, mark in zip(crawls, marks)]
    finally:
        for crawl in crawls:
            crawl.end()


def over_span(crawls: list[Crawl], first: int, last: int) -> list[tuple[float, dict[str, float]]]:
    """Each crawl measured from its ``first``-th crawl.log line to its ``last``-th: the same
    pages, so the same DRUM merges and flushes, whenever each gets there."""
    marks: dict[Crawl, tuple] = {}
    measured: dict[Crawl, tuple[float, dict[str, float]]] = {}
    while len(measured) < len(crawls):
        time.sleep(0.1)
        for crawl in (crawl for crawl in crawls if crawl not in measured):
            pages = crawl.pages.count()
            if crawl not in marks and pages >= first:
                marks[crawl] = crawl.mark()
            elif crawl in marks and pages >= last:
                measured[crawl] = crawl.since(marks[crawl])
            elif crawl.process.poll() is not None:
                raise SystemExit(f"a crawl ended at {pages:,} pages, before --span's last: use a larger --pages")
    return [measured[crawl] for crawl in crawls]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--pages", type=int, default=100_000, help="pages of the generated site")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds each crawl runs")
    parser.add_argument("--warmup", type=float, default=15.0, help="seconds of start-up left out of the rate")
    parser.add_argument("--span", type=int, nargs=2, metavar=("FIRST", "LAST"),
                        help="measure each crawl from its FIRST-th to its LAST-th page instead of over a window of "
                             "time (--warmup, --seconds)")
    parser.add_argument("--together", action="store_true",
                        help="run a round's two crawls at the same time, sharing the cores and the moment's load")
    parser.add_argument("--flood", action="store_true",
                        help="both crawls with --console, one left alone and one flooded with reads (module docstring)")
    parser.add_argument("--connections", type=int, default=4, help="the flood's connections (default 4)")
    parser.add_argument("--hosts", type=int, default=100, help="--flood: the synthetic web's hosts (default 100)")
    parser.add_argument("--delay", type=float, default=0.5, help="--flood: the crawl's --delay (default 0.5)")
    args = parser.parse_args(argv)
    if args.flood:
        return flood_rounds(args)
    site = ROOT / "bench-output" / f"threads-site-{args.pages}"
    if not site.is_dir():
        print(f"writing {args.pages:,} pages into {site}", flush=True)
        write_site(site, args.pages)
    rates: dict[bool, list[float]] = {False: [], True: []}
    cpu: dict[bool, list[dict[str, float]]] = {False: [], True: []}
    with StaticSite(site, server="nginx") as url, tempfile.TemporaryDirectory(prefix="console-cost-") as scratch:
        for round_ in range(args.rounds):
            order = (round_ % 2 == 1, round_ % 2 == 0)
            for consoles in [order] if args.together else [(console,) for console in order]:
                crawls = [Crawl([url + "index.html"], Path(scratch) / f"{round_}-{console}", console, NGINX_FLAGS)
                          for console in consoles]
                for console, (rate, cpu_ms) in zip(consoles, measure(crawls, args)):
                    rates[console].append(rate)
                    cpu[console].append(cpu_ms)
                    print(f"round {round_} {'console' if console else 'plain'}: {rate:.1f} pages/s, CPU ms/page "
                          + " ".join(f"{group} {ms:.2f}" for group, ms in cpu_ms.items()), flush=True)
    # Each round's console run against its plain run: the pairs share the machine's load of the moment.
    ratio = statistics.median(c / p for c, p in zip(rates[True], rates[False]))
    cpu_ratio = statistics.median(c["all"] / p["all"] for c, p in zip(cpu[True], cpu[False]))
    median = {console: {group: statistics.median(run[group] for run in runs) for group in runs[0]}
              for console, runs in cpu.items()}
    print(f"plain_pps={statistics.median(rates[False]):.1f} console_pps={statistics.median(rates[True]):.1f} "
          f"paired_pps_ratio={ratio:.3f} paired_cpu_ratio={cpu_ratio:.3f} "
          + " ".join(f"{'console' if console else 'plain'}_{group}_ms={ms:.2f}"
                     for console, groups in median.items() for group, ms in groups.items()))
    return 0


def flood_rounds(args: argparse.Namespace) -> int:
    """``--flood``: rounds of the crawl left alone and the crawl flooded, in alternating order."""
    rates: dict[bool, list[float]] = {False: [], True: []}
    cpu: dict[bool, list[float]] = {False: [], True: []}
    answered: list[float] = []
    flags = ("--delay", str(args.delay), "--concurrency", "4", "--no-progress")
    with (SyntheticServer(SyntheticWeb(args.pages, args.hosts, seed=24)) as server,
          tempfile.TemporaryDirectory(prefix="console-flood-") as scratch):
        for round_ in range(args.rounds):
            for flooded in (round_ % 2 == 1, round_ % 2 == 0):
                crawl = Crawl(server.seeds, Path(scratch) / f"{round_}-{flooded}", True, flags,
                              args.connections if flooded else 0)
                try:
                    time.sleep(args.warmup)
                    mark, answers = crawl.mark(), sum(crawl.answers)
                    time.sleep(args.seconds - args.warmup)
                    rate, cpu_ms = crawl.since(mark)
                    answers = (sum(crawl.answers) - answers) / (args.seconds - args.warmup)
                finally:
                    crawl.end()
                rates[flooded].append(rate)
                cpu[flooded].append(cpu_ms["all"])
                extra = ""
                if flooded:
                    answered.append(answers)
                    extra = f", the flood answered {answers:.1f}/s"
                print(f"round {round_} {'flooded' if flooded else 'alone'}: {rate:.1f} pages/s, CPU ms/page "
                      f"{cpu_ms['all']:.2f}{extra}", flush=True)
    ratio = statistics.median(f / a for f, a in zip(rates[True], rates[False]))
    cpu_ratio = statistics.median(f / a for f, a in zip(cpu[True], cpu[False]))
    print(f"alone_pps={statistics.median(rates[False]):.1f} flooded_pps={statistics.median(rates[True]):.1f} "
          f"paired_pps_ratio={ratio:.3f} paired_cpu_ratio={cpu_ratio:.3f} "
          f"flood_answers_per_s={statistics.median(answered):.1f} connections={args.connections} hosts={args.hosts} "
          f"delay={args.delay:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
