#!/usr/bin/env python3
"""Crawl benchmark: pycrawler against Scrapy on the same site, same concurrency, one run.

    .venv/bin/python scripts/bench/crawl_vs_scrapy.py                    # the JDK 17 API docs
    .venv/bin/python scripts/bench/crawl_vs_scrapy.py --max-pages 500    # a short run

The site is a directory of static files (by default the JDK 17 API documentation Debian's
``openjdk-17-doc`` installs, seed ``index.html``) served on 127.0.0.1 by nginx with two
workers (:class:`pycrawler.static_site.server.StaticSite`), so the server is not the bottleneck.
Before any crawl, the ground truth is computed from the files: every HTML page reachable
from the seed by same-host links (:func:`pycrawler.static_site.ground_truth.reachable_pages`).

Then each crawler runs as a child process, Scrapy first, with ``--concurrency`` requests in
flight, no politeness delay and robots.txt off:

- Scrapy 2.x: a plain spider following every same-host link its LinkExtractor finds
  (``crawl_vs_scrapy_spider.py``), through ``python -m scrapy runspider``, AutoThrottle and
  the HTTP cache off, no item pipelines;
- pycrawler: ``pycrawler crawl SEED --state DIR`` with the same settings (:data:`PYCRAWLER_FLAGS`).
  This stage runs only when the ``crawl`` command exists; until then its figures are ``NA``.

Each child is measured from here: wall time from start to exit, user+sys CPU (``wait4`` of
the child, which includes its own reaped children), peak RSS (the child's and all its
descendants' resident sets, summed, sampled every :data:`SAMPLE_INTERVAL` s with psutil, and
at least the kernel's ``ru_maxrss``; the summed PSS is shown beside it, since a crawler of
several processes shares library pages that RSS counts once per process). Pages fetched come from the crawler's own record
(Scrapy's ``response_received_count`` stat, pycrawler's ``crawl.log`` lines with an HTTP
status), and pages/s is pages over wall time, start-up included. Coverage is the share of the
ground truth among the pages the crawler got with status 200.

The last line is ``key=value`` figures (``NA`` where a side did not run).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import psutil

from pycrawler.static_site.ground_truth import coverage, reachable_pages
from pycrawler.static_site.server import StaticSite
from terminal import pseudo_terminal

DEFAULT_DOCS = Path("/usr/share/doc/openjdk-17-doc/api")
DEFAULT_SEED = "index.html"
SAMPLE_INTERVAL = 0.2
SPIDER = Path(__file__).with_name("crawl_vs_scrapy_spider.py")

PYCRAWLER_FLAGS = ("--delay", "0", "--queue-policy", "bkdr", "--no-robots")
"""``pycrawler crawl`` options besides seed, state and concurrency: no politeness delay, one
queue per BKDR hash of the host, robots.txt off (what Scrapy gets through its settings)."""


@dataclasses.dataclass
class Run:
    """One crawler's run, as measured from outside plus what its own record says."""

    name: str
    wall_s: float = 0.0
    cpu_s: float = 0.0
    peak_rss_bytes: int = 0
    peak_pss_bytes: int = 0
    exit_code: int | None = None
    responses: int = 0          # responses received, any status (the crawler's own count)
    ok_urls: list[str] = dataclasses.field(default_factory=list)  # URLs fetched with status 200
    coverage: float | None = None
    covered: int = 0
    note: str = ""              # why a side has no figures, or what to look at

    @property
    def ran(self) -> bool:
        return self.exit_code == 0

    @property
    def pages_per_s(self) -> float | None:
        return self.responses / self.wall_s if self.ran and self.wall_s > 0 else None

    @property
    def pages_per_cpu_s(self) -> float | None:
        """Pages per second of CPU used: less moved by other work on the machine than pages/s."""
        return self.responses / self.cpu_s if self.ran and self.cpu_s > 0 else None

    @property
    def peak_rss_mb(self) -> float | None:
        return self.peak_rss_bytes / 2**20 if self.ran else None

    @property
    def peak_pss_mb(self) -> float | None:
        return self.peak_pss_bytes / 2**20 if self.ran else None


def tree_memory(process: psutil.Process) -> tuple[int, int]:
    """(RSS, PSS) in bytes of ``process`` and all its descendants, summed (0 for any that just exited).

    RSS counts the pages processes share (libraries, copy-on-write) once per process; PSS
    splits each shared page among its sharers, so a multi-process crawler is not charged
    twice for them. RSS is the benchmark's figure; PSS says how much of it is sharing.
    """
    rss = pss = 0
    try:
        family = [process, *process.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0, 0
    for member in family:
        try:
            memory = member.memory_full_info()
        except psutil.NoSuchProcess:
            continue
        rss += memory.rss
        pss += memory.pss
    return rss, pss


def measure(run: Run, command: list[str], log: Path, *, terminal: bool = False, env: dict | None = None) -> None:
    """Run ``command`` (output to ``log``; with ``terminal``, through a :func:`pseudo_terminal`;
    ``env``: its environment, else this one's) and record its wall time, CPU (its children's,
    once it has reaped them, included) and peak RSS on ``run``."""
    with open(log, "wb") as output, (pseudo_terminal(output) if terminal else contextlib.nullcontext(output)) as sink:
        started = time.monotonic()
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT, env=env)
        watched = psutil.Process(child.pid)
        peak_rss = peak_pss = 0
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            rss, pss = tree_memory(watched)
            peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
            time.sleep(SAMPLE_INTERVAL)
    run.wall_s = time.monotonic() - started
    child.returncode = run.exit_code = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    run.cpu_s = usage.ru_utime + usage.ru_stime
    run.peak_rss_bytes = max(peak_rss, usage.ru_maxrss * 1024)
    run.peak_pss_bytes = peak_pss
    if not run.ran:
        run.note = f"exited with {run.exit_code}; see {log}"


# Scrapy


def scrapy_command(start_url: str, work: Path, concurrency: int, max_pages: int | None,
                   extra: dict | None = None) -> list[str]:
    """The spider's command line; ``extra``: more Scrapy settings (another scheduler, a JOBDIR)."""
    settings = {
        "ROBOTSTXT_OBEY": "False",
        "CONCURRENT_REQUESTS": concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": concurrency,
        "DOWNLOAD_DELAY": 0,
        "AUTOTHROTTLE_ENABLED": "False",
        "HTTPCACHE_ENABLED": "False",
        "LOG_LEVEL": "INFO",
        # Consoles that listen on ports of their own: not part of crawling.
        "TELNETCONSOLE_ENABLED": "False",
        "REMOTE_CONTROL_ENABLED": "False",
    }
    if max_pages:
        settings["CLOSESPIDER_PAGECOUNT"] = max_pages
    settings.update(extra or {})
    command = [sys.executable, "-m", "scrapy", "runspider", str(SPIDER), "-a", f"start_url={start_url}",
               "-a", f"urls_out={work / 'scrapy-urls.txt'}", "-a", f"stats_out={work / 'scrapy-stats.json'}"]
    for name, value in settings.items():
        command += ["-s", f"{name}={value}"]
    return command


def run_scrapy(start_url: str, work: Path, concurrency: int, max_pages: int | None, *, name: str = "scrapy",
               extra: dict | None = None) -> Run:
    """One measured Scrapy crawl (``name``: the run's label; ``extra``: see :func:`scrapy_command`)."""
    run = Run(name)
    measure(run, scrapy_command(start_url, work, concurrency, max_pages, extra), work / "scrapy.log")
    if run.ran:
        stats = json.loads((work / "scrapy-stats.json").read_text())
        run.responses = int(stats.get("response_received_count", 0))
        run.note = f"Scrapy's own elapsed time {float(stats.get('elapsed_time_seconds', 0)):.1f} s"
        for line in (work / "scrapy-urls.txt").read_text().splitlines():
            status, _, url = line.partition(" ")
            if status == "200":
                run.ok_urls.append(url)
    return run


# pycrawler: runs only once `pycrawler crawl` exists (its engine is being built)


def pycrawler_crawl_help() -> str | None:
    """``pycrawler crawl --help``'s text, None while the command does not exist."""
    probe = subprocess.run([sys.executable, "-m", "pycrawler", "crawl", "--help"],
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
    return probe.stdout if probe.returncode == 0 else None


def pycrawler_command(start_url: str, state: Path, concurrency: int, max_pages: int | None) -> list[str]:
    command = [sys.executable, "-m", "pycrawler", "crawl", start_url, "--state", str(state),
               "--concurrency", str(concurrency), *PYCRAWLER_FLAGS]
    if max_pages:
        command += ["--max-pages", str(max_pages)]
    return command


def read_crawl_log(path: Path, run: Run) -> None:
    """Responses and status-200 URLs from a Heritrix-format crawl.log (status: column 2, URL: 4)."""
    for line in path.read_text(errors="replace").splitlines():
        fields = line.split()
        if len(fields) < 4 or not fields[1].lstrip("-").isdigit():
            continue
        status = int(fields[1])
        if status > 0:  # negative codes are fetch failures, no response
            run.responses += 1
        if status == 200:
            run.ok_urls.append(fields[3])


def run_pycrawler(start_url: str, work: Path, concurrency: int, max_pages: int | None) -> Run:
    run = Run("pycrawler")
    usage = pycrawler_crawl_help()
    if usage is None:
        run.note = "`pycrawler crawl` does not exist yet: this stage runs once the crawl engine lands"
        return run
    state = work / "pycrawler-state"
    shutil.rmtree(state, ignore_errors=True)  # a kept folder from an earlier run would be resumed, not crawled
    command = pycrawler_command(start_url, state, concurrency, max_pages)
    missing = [flag for flag in command
               if flag.startswith("--") and not re.search(re.escape(flag) + r"(?![\w-])", usage)]
    if missing:
        run.note = (f"`pycrawler crawl` has no {' '.join(missing)}: align PYCRAWLER_FLAGS in "
                    f"{Path(__file__).name} with its options")
        return run
    measure(run, command, work / "pycrawler.log")
    if run.ran:
        read_crawl_log(state / "crawl.log", run)
    return run


# variants of one pycrawler crawl, alternating


def alternate(variants: dict[str, tuple[str, ...]], args: argparse.Namespace, work: Path, *,
              outputs: Callable[[Path], list[str]] = lambda folder: [], terminal: bool = False,
              after: Callable[[Run, Path], str] | None = None) -> tuple[dict[str, list[Run]], bool]:
    """Crawl ``args.docs`` (served by nginx) once per variant per round (``args.rounds``), the
    variants alternating so that the machine's drift hits all alike; ``variants[name]`` are a
    variant's extra options, ``outputs(folder)`` options every crawl gets for outputs under its
    folder (where ``crawl.out``, what it printed, goes too; the next round reuses it). With
    ``terminal``, each crawl runs on a pseudo-terminal. ``after(run, folder)`` reads what else a
    benchmark wants from a crawl and returns a note for its line. Prints a line per crawl;
    returns the runs per variant and whether every run covered the whole site (or was cut at
    ``args.max_pages``)."""
    runs: dict[str, list[Run]] = {name: [] for name in variants}
    with StaticSite(args.docs, server="nginx") as base_url:
        start_url = base_url + args.seed
        truth = reachable_pages(args.docs, args.seed, base_url=base_url)
        print(f"site: {args.docs} at {base_url}; {len(truth)} pages reachable; outputs under {work}", flush=True)
        for round_number in range(1, args.rounds + 1):
            for name, extra in variants.items():
                run = Run(name)
                folder = work / name
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir(parents=True)
                command = pycrawler_command(start_url, folder / "state", args.concurrency, args.max_pages)
                measure(run, command + outputs(folder) + list(extra), folder / "crawl.out", terminal=terminal)
                if run.ran:
                    read_crawl_log(folder / "state" / "crawl.log", run)
                    run.coverage, run.covered = coverage(run.ok_urls, truth, args.docs, base_url)
                note = after(run, folder) if after else ""
                print(f"round {round_number} {name:11}: {run.responses} pages, {figure(run.pages_per_s)} pages/s, "
                      f"{figure(run.cpu_s)} CPU s, {figure(run.peak_rss_mb)} MB peak RSS, "
                      f"coverage {run.covered}/{len(truth)}{note} {run.note}", flush=True)
                runs[name].append(run)
    complete = args.max_pages is not None or all(r.covered == len(truth) for rs in runs.values() for r in rs)
    return runs, complete


def median(runs: list[Run], complete: bool, value: Callable[[Run], float | None] = lambda r: r.pages_per_s,
           ) -> float | None:
    """The median ``value`` (pages/s) of a variant's runs; None unless every run ran and the set is complete."""
    return statistics.median(value(r) for r in runs) if complete and all(r.ran for r in runs) else None


# report


def figure(value: float | None, digits: int = 1) -> str:
    return "NA" if value is None else f"{value:.{digits}f}"


def report(theirs: Run, ours: Run, truth_size: int) -> None:
    """A table of both runs, then the ``key=value`` line (Scrapy is ``theirs``, pycrawler ``ours``)."""
    columns = ("pages", "wall s", "pages/s", "CPU s", "pages/CPU s", "peak RSS MB", "peak PSS MB", "coverage")
    print(f"{'':10}" + "".join(f" {name:>12}" for name in columns) + "  note")
    for run in (theirs, ours):
        cells = [str(run.responses) if run.ran else "NA", figure(run.wall_s if run.ran else None),
                 figure(run.pages_per_s), figure(run.cpu_s if run.ran else None), figure(run.pages_per_cpu_s),
                 figure(run.peak_rss_mb), figure(run.peak_pss_mb),
                 "NA" if run.coverage is None else f"{run.covered}/{truth_size}"]
        print(f"{run.name:10}" + "".join(f" {cell:>12}" for cell in cells) + f"  {run.note}")
    ratio = (ours.pages_per_s / theirs.pages_per_s
             if ours.pages_per_s is not None and theirs.pages_per_s else None)
    figures = {
        "pycrawler_pages_per_s": figure(ours.pages_per_s),
        "scrapy_pages_per_s": figure(theirs.pages_per_s),
        "ratio": figure(ratio, 2),
        "pycrawler_coverage": figure(ours.coverage, 4),
        "scrapy_coverage": figure(theirs.coverage, 4),
        "pycrawler_peak_rss_mb": figure(ours.peak_rss_mb, 0),
        "scrapy_peak_rss_mb": figure(theirs.peak_rss_mb, 0),
        "pycrawler_peak_pss_mb": figure(ours.peak_pss_mb, 0),
        "scrapy_peak_pss_mb": figure(theirs.peak_pss_mb, 0),
        "pycrawler_cpu_s": figure(ours.cpu_s if ours.ran else None),
        "scrapy_cpu_s": figure(theirs.cpu_s if theirs.ran else None),
        "pycrawler_pages_per_cpu_s": figure(ours.pages_per_cpu_s),
        "scrapy_pages_per_cpu_s": figure(theirs.pages_per_cpu_s),
    }
    print(" ".join(f"{key}={value}" for key, value in figures.items()))


def add_site_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of a benchmark that crawls the docs: --docs, --seed, --concurrency, --max-pages."""
    parser.add_argument("--docs", type=Path, default=DEFAULT_DOCS, help="directory to serve and crawl")
    parser.add_argument("--seed", default=DEFAULT_SEED, help="seed page, a path under --docs")
    parser.add_argument("--concurrency", type=int, default=32, help="requests in flight, every crawler")
    parser.add_argument("--max-pages", type=int, default=None, help="stop each crawl after about N pages")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    add_site_arguments(parser)
    parser.add_argument("--server", choices=("auto", "nginx", "python"), default="auto",
                        help="what serves the site (python is a fallback that limits both crawlers)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep logs, fetched URL lists and crawl state in this directory")
    parser.add_argument("--skip-scrapy", action="store_true", help="run only the pycrawler stage")
    args = parser.parse_args(argv)

    work_dir = None
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        work = args.keep
    else:
        work_dir = tempfile.TemporaryDirectory(prefix="crawl-vs-scrapy-")
        work = Path(work_dir.name)
    site = StaticSite(args.docs, server=args.server)
    with site as base_url:
        start_url = base_url + args.seed
        print(f"site: {args.docs} served by {site.kind} at {base_url}; seed {start_url}", flush=True)
        if site.kind != "nginx":
            print("warning: no nginx: the pure-Python server is likely the bottleneck", flush=True)
        started = time.monotonic()
        truth = reachable_pages(args.docs, args.seed, base_url=base_url)
        print(f"ground truth: {len(truth)} HTML pages reachable ({time.monotonic() - started:.1f} s)", flush=True)

        runs = []
        for name, runner in (("scrapy", run_scrapy), ("pycrawler", run_pycrawler)):
            if name == "scrapy" and args.skip_scrapy:
                runs.append(Run(name, note="skipped (--skip-scrapy)"))
                continue
            print(f"{name}: crawling ...", flush=True)
            run = runner(start_url, work, args.concurrency, args.max_pages)
            if run.ran:
                run.coverage, run.covered = coverage(run.ok_urls, truth, args.docs, base_url)
            runs.append(run)
    report(*runs, len(truth))
    if work_dir is not None:
        if all(run.ran or run.exit_code is None for run in runs):
            work_dir.cleanup()
        else:  # a crawler failed: its log is what explains it
            print(f"logs kept in {work}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
