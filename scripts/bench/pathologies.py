#!/usr/bin/env python3
"""The web of pathologies crawled by Heritrix 3.13, Scrapy and pycrawler, each with its defaults.

    .venv/bin/python scripts/bench/pathologies.py                 # all three, 120 s each at most
    .venv/bin/python scripts/bench/pathologies.py --crawlers pycrawler --limit 60

Each crawler gets a fresh :class:`pycrawler.testing.pathologies.PathologyWeb` (its request log
and its throttled pages start anew), the same seed (the home page, which links to every
family's entry on its own host), every host of the web in scope (the families' loopback hosts
and the ``.invalid`` one) and a time limit, and runs with its defaults but politeness, which is
off (loopback):

- **Heritrix 3.13** (``target/heritrix-3.13.0``, driven by ``tests/real_heritrix.py``): the
  distribution's profile, robots.txt obeyed, 25 toe threads, no delays, WARC writer off,
  ``crawlLimiter.maxTimeSeconds`` the limit, the hosts in scope as SURT prefixes;
- **Scrapy** (``crawl_vs_scrapy_spider.py``, a follow-every-link spider): Scrapy's defaults
  (16 requests, 8 per host, retries, redirects, cookies, ``DOWNLOAD_MAXSIZE`` 1 GiB) with
  ``ROBOTSTXT_OBEY`` on as a new project's settings have it, ``DEPTH_LIMIT`` 20 (the hop limit
  of the other two; Scrapy's default has none), ``CLOSESPIDER_TIMEOUT`` the limit and the hosts
  in ``allowed_domains``;
- **pycrawler**: the README's command, ``pycrawler crawl SEED --state DIR``, with ``--scope any``
  (the hosts) and ``--delay 0``, stopped (SIGINT, resumable) if still running at the limit.

The endless body stops at ``--endless-mb`` (300) and the bombs inflate to 256 MB: Scrapy holds
a body of up to ``DOWNLOAD_MAXSIZE`` (1 GiB) in memory, Heritrix has no cap at all.

Each family is judged from the server's request log (:meth:`PathologyWeb.judge`): the requests
into it and what went wrong, if anything. The output is a markdown table, a pathology a row, a
summary per crawler (families held, requests, whether it ended by itself, its wall time and
peak RSS), and a last line of ``key=value`` figures.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import sys
import tempfile
import time
from pathlib import Path

import psutil

from crawl_vs_scrapy import Run, measure, scrapy_command, tree_memory
from pycrawler.testing.pathologies import CATALOGUE, UNRESOLVABLE, PathologyWeb

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from real_heritrix import HERITRIX_HOME, Heritrix  # noqa: E402 -- tests/ joins the path first

CRAWLERS = ("heritrix", "scrapy", "pycrawler")
SAMPLE_INTERVAL = 0.2
HERITRIX_THREADS = 25   # the profile's maxToeThreads


@dataclasses.dataclass
class Outcome:
    crawler: str
    run: Run
    ended: bool                              # by itself, before the limit
    requests: dict[str, int]                 # family -> requests into it
    wrong: dict[str, list[str]]              # family -> what went wrong (empty: held)
    ordinary_once: bool

    @property
    def held(self) -> int:
        return sum(1 for problems in self.wrong.values() if not problems)


def hosts(site: PathologyWeb) -> list[str]:
    """Every host the web links to: the home host, the families' and the one that never resolves."""
    return [*site.addresses, UNRESOLVABLE]


def judged(crawler: str, site: PathologyWeb, run: Run, ended: bool) -> Outcome:
    return Outcome(crawler, run, ended, {p.name: len(site.family_hits(p.name)) for p in site.pathologies},
                   {p.name: site.judge(p) for p in site.pathologies}, set(site.ordinary_site().values()) == {1})


def run_pycrawler(site: PathologyWeb, work: Path, limit: float) -> Outcome:
    run = Run("pycrawler")
    command = ["timeout", "--signal=INT", "--kill-after=30", f"{limit:g}", sys.executable, "-m", "pycrawler",
               "crawl", site.seed, "--state", str(work / "state"), "--scope", "any", "--delay", "0", "--no-progress"]
    measure(run, command, work / "pycrawler.out")
    return judged("pycrawler", site, run, ended=run.exit_code == 0 and run.wall_s < limit)


def run_scrapy(site: PathologyWeb, work: Path, limit: float) -> Outcome:
    run = Run("scrapy")
    defaults = {"CONCURRENT_REQUESTS_PER_DOMAIN": 8, "ROBOTSTXT_OBEY": "True", "DEPTH_LIMIT": 20,
                "CLOSESPIDER_TIMEOUT": f"{limit:g}", "LOG_LEVEL": "WARNING"}
    command = [*scrapy_command(site.seed, work, 16, None, defaults), "-a", "allowed_hosts=" + ",".join(hosts(site))]
    measure(run, ["timeout", "--kill-after=30", f"{limit + 60:g}", *command], work / "scrapy.out")
    stats = work / "scrapy-stats.json"
    reason = stats.read_text() if stats.exists() else ""
    return judged("scrapy", site, run, ended=run.exit_code == 0 and '"finished_reason": "finished"' in reason)


def run_heritrix(heritrix: Heritrix, site: PathologyWeb, name: str, limit: float) -> Outcome:
    heritrix.create_job(name, [site.seed], threads=HERITRIX_THREADS,
                        scope_urls=[f"http://{host}:{site.port}/" for host in hosts(site)],
                        overrides={"warcWriter.enabled": "false", "crawlLimiter.maxTimeSeconds": f"{limit:.0f}"})
    heritrix.launch(name, unpause=False)
    jvm = psutil.Process(heritrix.process.pid)
    run, before = Run("heritrix"), jvm.cpu_times()
    started = time.monotonic()
    heritrix.action(name, "unpause")
    peak, last_poll, report = 0, 0.0, {}
    while time.monotonic() - started < limit + 60:
        peak = max(peak, tree_memory(jvm)[0])
        if time.monotonic() - last_poll >= 0.5:
            last_poll = time.monotonic()
            report = heritrix.report(name)
            if report.get("crawlControllerState") == "FINISHED":
                break
        time.sleep(SAMPLE_INTERVAL)
    run.wall_s = time.monotonic() - started
    after = jvm.cpu_times()
    run.cpu_s = (after.user + after.system) - (before.user + before.system)
    run.peak_rss_bytes, run.exit_code = peak, 0
    exit_status = (report.get("crawlExitStatus") or "") if isinstance(report, dict) else ""
    ended = report.get("crawlControllerState") == "FINISHED" and "TIME_LIMIT" not in str(exit_status)
    if report.get("crawlControllerState") != "FINISHED":
        heritrix.action(name, "terminate")
    return judged("heritrix", site, run, ended)


def cell(outcome: Outcome, name: str) -> str:
    problems = outcome.wrong[name]
    return f"{outcome.requests[name]:,} " + ("held" if not problems else "**" + "; ".join(problems) + "**")


def table(outcomes: list[Outcome]) -> str:
    lines = ["| pathology | outcome it must have | " + " | ".join(o.crawler for o in outcomes) + " |",
             "| --- | --- | " + " | ".join("---" for _ in outcomes) + " |"]
    for pathology in (p for p in CATALOGUE if p.name in outcomes[0].wrong):
        lines.append(f"| {pathology.name} | {pathology.outcome} (at most {pathology.max_requests}) | "
                     + " | ".join(cell(o, pathology.name) for o in outcomes) + " |")
    rows = [("families held", lambda o: f"{o.held} of {len(o.wrong)}"),
            ("ordinary site once a page", lambda o: "yes" if o.ordinary_once else "**no**"),
            ("requests into the families", lambda o: f"{sum(o.requests.values()):,}"),
            ("ended by itself", lambda o: "yes" if o.ended else "**no**"),
            ("wall time", lambda o: f"{o.run.wall_s:.0f} s"),
            ("peak RSS", lambda o: f"{o.run.peak_rss_bytes / 2**20:,.0f} MB")]
    for label, value in rows:
        lines.append(f"| **{label}** | | " + " | ".join(value(o) for o in outcomes) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--crawlers", nargs="+", choices=CRAWLERS, default=list(CRAWLERS))
    parser.add_argument("--limit", type=float, default=120.0, help="seconds each crawler may run (default 120)")
    parser.add_argument("--drip-interval", type=float, default=2.0, help="seconds between the drip's bytes")
    parser.add_argument("--drip-bytes", type=int, default=10, help="bytes the drip sends")
    parser.add_argument("--endless-mb", type=int, default=300, help="where the endless body gives up (MiB)")
    parser.add_argument("--leave-out", nargs="+", default=[], choices=[p.name for p in CATALOGUE], metavar="FAMILY",
                        help="families the home page does not link (e.g. the bombs, to see what they cost)")
    parser.add_argument("--work", type=Path, help="work folder (default: a temporary one, removed)")
    args = parser.parse_args()
    if args.limit <= 0:
        sys.exit("pathologies: --limit must be positive")
    if "heritrix" in args.crawlers and not (HERITRIX_HOME / "lib" / "heritrix-engine-3.13.0.jar").is_file():
        sys.exit(f"pathologies: Heritrix 3.13.0 is not in {HERITRIX_HOME} (scripts/setup unpacks it)")
    work = args.work or Path(tempfile.mkdtemp(prefix="pathologies-"))
    outcomes = []
    try:
        for crawler in args.crawlers:
            folder = work / crawler
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            with PathologyWeb(drip_interval=args.drip_interval, drip_bytes=args.drip_bytes,
                              endless_bytes=args.endless_mb << 20, leave_out=args.leave_out) as site:
                if crawler == "heritrix":
                    with Heritrix(folder) as heritrix:
                        outcome = run_heritrix(heritrix, site, "pathologies", args.limit)
                elif crawler == "scrapy":
                    outcome = run_scrapy(site, folder, args.limit)
                else:
                    outcome = run_pycrawler(site, folder, args.limit)
            outcomes.append(outcome)
            print(f"{crawler}: {outcome.held} of {len(outcome.wrong)} families held, "
                  f"{sum(outcome.requests.values()):,} requests, ended by itself: {outcome.ended}, "
                  f"{outcome.run.wall_s:.0f} s, peak RSS {outcome.run.peak_rss_bytes / 2**20:,.0f} MB", flush=True)
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print(table(outcomes))
    print()
    figures = []
    for o in outcomes:
        figures += [f"{o.crawler}_held={o.held}", f"{o.crawler}_requests={sum(o.requests.values())}",
                    f"{o.crawler}_ended={int(o.ended)}", f"{o.crawler}_peak_rss_mb={o.run.peak_rss_bytes / 2**20:.0f}"]
    print(" ".join([f"families={len(CATALOGUE) - len(args.leave_out)}", f"limit_s={args.limit:g}", *figures]))


if __name__ == "__main__":
    main()
