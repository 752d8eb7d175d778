#!/usr/bin/env python3
"""pycrawler against the crawlers its users would pick instead, on the same loopback sites.

    .venv/bin/python scripts/bench/vs_crawlers.py                          # every shape, mode, crawler; 2 rounds
    .venv/bin/python scripts/bench/vs_crawlers.py --shapes one-host --modes best --rounds 3

The crawlers, one after another, rounds interleaved (round 1 of every crawler, then round 2, so
that the machine's drift hits all alike): **Heritrix 3.13** (its distribution, which
``scripts/setup`` unpacks into ``target/``; driven over its REST API by ``tests/real_heritrix.py``),
**crawler4j 4.4** (``scripts/bench/peers/Crawler4jBench.java``, compiled here against
``target/crawler4j-4.4.0/``), **Scrapy** (the plain follow-every-link spider of
``crawl_vs_scrapy_spider.py``) and **pycrawler** (``pycrawler crawl``). Every crawler obeys
robots.txt (the sites have none: all allowed), stays on the seeds' hosts and has no politeness
delay and no page limit; none writes WARC files.

The sites (``--shapes``), generated into the work folder and served by nginx (two workers), one
``server`` per loopback address, each with its own folder, all on one port:

- ``one-host``: ``--one-host-pages`` pages (2,500) on 127.0.0.1;
- ``few-hosts``: ``--few-hosts`` hosts (4) of ``--few-hosts-pages`` pages (1,000) each;
- ``web``: ``--web-pages`` pages (100,000) over ``--web-hosts`` hosts (128).

Each page has ~25 links: one page per host is its root (a seed), every other page hangs from a
random earlier page of a random tree (so every page is reachable, at a depth of about 10 hops,
within Heritrix's ``maxHops`` of 20), the rest point to random pages, one in ten on another
host. Pages are 2 to 6 KB of text.

The modes (``--modes``):

- ``best``: each crawler at its best settings for the job. pycrawler: ``--concurrency 32
  --queue-policy bkdr`` (one URL in flight per queue, 4x concurrency queues over the site).
  Heritrix: its 25 toe threads, ``parallelQueues`` 8 with ``parallelQueuesRandomAssignment``
  (one host over 8 queues, the fastest it crawled one host), WARC writer off. crawler4j: 32
  threads, or each count of ``--crawler4j-threads`` as a peer of its own (``crawler4j-N``): more
  threads contend in crawler4j, so its best count is searched. Scrapy: 32 requests, 32 per host.
- ``per-host-1``: one connection per host, Heritrix's rule. pycrawler ``--queue-policy host``,
  Heritrix's default queues (one per host), Scrapy ``CONCURRENT_REQUESTS_PER_DOMAIN=1``; 32
  fetches in flight at most over all hosts (Heritrix: 32 toe threads). crawler4j has no
  per-host limit (its threads take any URL; its politeness delay is one lock over all hosts):
  not run, said so.
- ``per-host-8``: 8 connections per host. pycrawler ``--queue-policy parallel-host:8`` (before
  it existed, ``bkdr-host:8``: 8 queues a host under one politeness key, so one connection a
  host: the runs of this mode before it measured pycrawler at one), Heritrix
  ``parallelQueues`` 8 with random assignment, Scrapy ``CONCURRENT_REQUESTS_PER_DOMAIN=8``;
  32 in flight at most. crawler4j: 8 threads on the one-host site only (elsewhere 8 threads
  are 8 connections in all, not 8 per host: not run).

Each run is measured from outside: wall time (for pycrawler, crawler4j and Scrapy from the start
of their process to its exit, their start-up included; for Heritrix, whose process is started
once for all its jobs, from the unpause of its launched job to the report saying FINISHED, the
job's build and launch left out), CPU (user+sys of the process and its children; Heritrix's JVM
over the same span) and the peak RSS of the process tree (sampled every 0.2 s; Heritrix's JVM
from the job's launch, its heap as it stood counted). What was fetched is counted by the server
(nginx's access log, robots.txt left out): **pages** are the requests answered, pages/s is pages
over wall time (and, beside it, over the span from the first request to the last, which leaves
out start-up and the time a crawler takes to notice it is done), and **once** says whether every page of the site was fetched exactly once and
nothing else was (else the missed and repeated counts).

The output: a line per run, then per shape and mode a table of medians (pages/s, CPU s per
1,000 pages, peak RSS MB, every page once in every round), then the targets of the comparison
(pycrawler's pages/s against the best peer's, its RSS against that peer's, its CPU per 1,000
pages against half of Heritrix's), and a last line of ``key=value`` figures.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil

from crawl_vs_scrapy import Run, measure, scrapy_command, tree_memory
from pycrawler.local_servers import free_port, terminate
from pycrawler.static_site.server import find_nginx, worker_user

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from real_heritrix import HERITRIX_HOME, Heritrix  # noqa: E402 -- tests/ joins the path first

CRAWLER4J_HOME = ROOT / "target" / "crawler4j-4.4.0"
CRAWLER4J_PROGRAM = Path(__file__).with_name("peers") / "Crawler4jBench.java"
CRAWLERS = ("heritrix", "crawler4j", "scrapy", "pycrawler")
SHAPES = ("one-host", "few-hosts", "web")
MODES = ("best", "per-host-1", "per-host-8")
CONCURRENCY = 32
PER_HOST = 8
LINKS = 25
CROSS_HOST = 0.1
SAMPLE_INTERVAL = 0.2
WORDS = ("crawl", "frontier", "queue", "seen", "page", "link", "host", "fetch", "store", "table", "log",
         "window", "cache", "merge", "bucket", "disk", "key", "batch", "flush", "record")


# -- the sites -------------------------------------------------------------------------------------
@dataclasses.dataclass
class Site:
    """A generated site: ``hosts`` loopback addresses, each serving ``folder/ADDRESS/``."""

    folder: Path
    hosts: list[str]
    pages: set[tuple[str, str]]   # (address, path) of every page
    port: int

    def url(self, host: str, path: str) -> str:
        return f"http://{host}:{self.port}{path}"

    @property
    def seeds(self) -> list[str]:
        return [self.url(host, "/") for host in self.hosts]


def page_path(index: int) -> str:
    return "/" if index == 0 else f"/d{index % 50}/p{index}.html"


def generate(folder: Path, hosts: int, pages_per_host: int, port: int, seed: int = 11) -> Site:
    """Write the site (see the module's docstring) into ``folder``, links naming ``port``."""
    rng = random.Random(seed)
    addresses = [f"127.0.0.{h + 1}" for h in range(hosts)]
    text = " ".join(rng.choice(WORDS) for _ in range(4000))
    links: dict[tuple[int, int], list[tuple[int, int]]] = collections.defaultdict(list)
    for h in range(hosts):
        for i in range(1, pages_per_host):
            # A random tree over all pages, roots first: a parent on another host now and then.
            parent_host = h if rng.random() >= CROSS_HOST or hosts == 1 else rng.randrange(hosts)
            links[(parent_host, rng.randrange(min(i, pages_per_host)))].append((h, i))
    shutil.rmtree(folder, ignore_errors=True)
    pages = set()
    for h, address in enumerate(addresses):
        for i in range(pages_per_host):
            out = list(links.get((h, i), ()))
            while len(out) < LINKS:
                other = rng.randrange(hosts) if rng.random() < CROSS_HOST else h
                out.append((other, rng.randrange(pages_per_host)))
            hrefs = [page_path(j) if o == h else f"http://{addresses[o]}:{port}{page_path(j)}" for o, j in out]
            start = rng.randrange(len(text) - 6000)
            body = text[start:start + rng.randrange(2000, 6000)]
            path = page_path(i)
            file = folder / address / (path.lstrip("/") or "index.html")
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(f"<!doctype html><html><head><title>{address} page {i}</title></head><body><p>{body}</p>"
                            + "".join(f'<a href="{href}">link {n}</a> ' for n, href in enumerate(hrefs))
                            + "</body></html>")
            pages.add((address, path))
    return Site(folder, addresses, pages, port)


class Nginx:
    """nginx serving a :class:`Site`, one ``server`` per address; :meth:`requests` reads what
    it answered since :meth:`mark`."""

    def __init__(self, site: Site, scratch: Path):
        self.site, self.scratch = site, scratch
        self.process: subprocess.Popen | None = None
        self.log = scratch / "access.log"
        self._offset = 0

    def __enter__(self) -> Nginx:
        nginx = find_nginx()
        if nginx is None:
            sys.exit("vs_crawlers: nginx is not installed (scripts/setup installs Debian's nginx-light)")
        self.scratch.mkdir(parents=True, exist_ok=True)
        servers = "".join(f"""
    server {{
        listen {address}:{self.site.port};
        root {self.site.folder / address};
    }}""" for address in self.site.hosts)
        config = self.scratch / "nginx.conf"
        config.write_text(f"""daemon off;
{worker_user()}
worker_processes 2;
pid {self.scratch / 'nginx.pid'};
error_log {self.scratch / 'error.log'} warn;
events {{ worker_connections 4096; }}
http {{
    log_format hits '$msec $server_addr $request_uri $status';
    access_log {self.log} hits;
    keepalive_requests 100000;
    types {{ text/html html; }}
    default_type text/html;
    client_body_temp_path {self.scratch}; proxy_temp_path {self.scratch}; fastcgi_temp_path {self.scratch};
    uwsgi_temp_path {self.scratch}; scgi_temp_path {self.scratch};
{servers}
}}
""")
        self.process = subprocess.Popen([nginx, "-p", str(self.scratch), "-c", str(config), "-e",
                                         str(self.scratch / "error.log")], stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not self.log.exists() or not self._answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"vs_crawlers: nginx did not start: {(self.scratch / 'error.log').read_text()}")
            time.sleep(0.1)
        return self

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.site.seeds[0], timeout=1) as answer:
                return answer.status == 200
        except OSError:
            return False

    def __exit__(self, *exc) -> None:
        if self.process is not None:
            terminate(self.process)

    def mark(self) -> None:
        self._offset = self.log.stat().st_size

    def requests(self) -> tuple[collections.Counter, float]:
        """What was answered since :meth:`mark`, robots.txt left out: (address, path) -> requests,
        and the seconds from the first request to the last."""
        counts: collections.Counter = collections.Counter()
        times = []
        with open(self.log, "rb") as log:
            log.seek(self._offset)
            for line in log.read().decode(errors="replace").splitlines():
                stamp, address, path, _status = line.split(" ")
                if path != "/robots.txt":
                    counts[(address, "/" if path == "/index.html" else path)] += 1
                    times.append(float(stamp))
        return counts, (max(times) - min(times) if times else 0.0)


# -- one run ---------------------------------------------------------------------------------------
@dataclasses.dataclass
class Result:
    crawler: str
    shape: str
    mode: str
    run: Run
    pages: int = 0
    missed: int = 0
    repeated: int = 0
    strays: int = 0
    settings: str = ""
    span_s: float = 0.0          # first request to last, as the server saw them
    odd: list = dataclasses.field(default_factory=list)  # a few of the repeated and stray URLs

    @property
    def once(self) -> bool:
        return self.run.ran and self.missed == self.repeated == self.strays == 0

    @property
    def pages_per_s(self) -> float | None:
        return self.pages / self.run.wall_s if self.run.ran and self.run.wall_s else None

    @property
    def span_pages_per_s(self) -> float | None:
        """Pages over the span the server was fetched from: start-up and the end's wait left out."""
        return self.pages / self.span_s if self.run.ran and self.span_s else None

    @property
    def cpu_per_1k(self) -> float | None:
        return 1000 * self.run.cpu_s / self.pages if self.run.ran and self.pages else None

    @property
    def rss_mb(self) -> float | None:
        return self.run.peak_rss_bytes / 2**20 if self.run.ran else None


def pycrawler_settings(mode: str, fetchers: int | None) -> list[str]:
    policy = {"best": "bkdr", "per-host-1": "host", "per-host-8": f"parallel-host:{PER_HOST}"}[mode]
    return (["--concurrency", str(CONCURRENCY), "--queue-policy", policy, "--delay", "0"]
            + (["--fetchers", str(fetchers)] if fetchers else []))


def run_pycrawler(site: Site, mode: str, work: Path, fetchers: int | None, checkout: Path | None) -> tuple[Run, str]:
    """``pycrawler crawl`` with ``fetchers`` (None: its default), from ``checkout`` (None: this
    one; else an earlier pycrawler's checkout, put first on the path: the baseline)."""
    settings = pycrawler_settings(mode, fetchers if checkout is None else None)
    run = Run("pycrawler")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = None if checkout is None else os.environ | {"PYTHONPATH": str(checkout.resolve())}
    measure(run, [sys.executable, "-m", "pycrawler", "crawl", *site.seeds, "--state", str(work / "state"),
                  "--no-progress", *settings], work / "crawl.out", env=env)
    return run, " ".join(settings) + (f" (checkout {checkout.name})" if checkout else "")


def run_scrapy(site: Site, mode: str, work: Path) -> tuple[Run, str]:
    per_host = {"best": CONCURRENCY, "per-host-1": 1, "per-host-8": PER_HOST}[mode]
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    # crawl_vs_scrapy.py's spider and settings, with robots.txt obeyed (as every crawler here) and
    # the per-host limit of the mode.
    command = scrapy_command(",".join(site.seeds), work, CONCURRENCY, None,
                             {"ROBOTSTXT_OBEY": "True", "CONCURRENT_REQUESTS_PER_DOMAIN": per_host})
    run = Run("scrapy")
    measure(run, command, work / "scrapy.log")
    return run, f"CONCURRENT_REQUESTS={CONCURRENCY} CONCURRENT_REQUESTS_PER_DOMAIN={per_host}"


def crawler4j_program(work: Path) -> list[str]:
    jars = sorted(CRAWLER4J_HOME.glob("*.jar"))
    if not any(jar.name == "crawler4j-4.4.0.jar" for jar in jars):
        sys.exit(f"vs_crawlers: no crawler4j-4.4.0.jar in {CRAWLER4J_HOME} (scripts/setup resolves it)")
    classes = work / "crawler4j-classes"
    classes.mkdir(parents=True, exist_ok=True)
    classpath = os.pathsep.join([str(classes), *map(str, jars)])
    done = subprocess.run(["javac", "-nowarn", "-cp", classpath, "-d", str(classes), str(CRAWLER4J_PROGRAM)],
                          capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"vs_crawlers: {CRAWLER4J_PROGRAM.name} does not compile:\n{done.stderr}")
    return ["java", "-cp", classpath, "Crawler4jBench"]


def crawler4j_threads(site: Site, mode: str, best: list[int]) -> list[int]:
    """crawler4j's thread counts to run in the mode (``best``: those searched at its best),
    none where it has no such setting."""
    if mode == "best":
        return best
    if mode == "per-host-8" and len(site.hosts) == 1:
        return [PER_HOST]
    return []


def run_crawler4j(site: Site, threads: int, work: Path, program: list[str]) -> tuple[Run, str]:
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    run = Run("crawler4j")
    measure(run, [*program, str(work / "storage"), str(threads), "0", *site.seeds], work / "crawler4j.out")
    return run, f"{threads} threads, politeness 0 ms"


class HeritrixRunner:
    """One Heritrix for all of a site's jobs (its JVM's start is not part of a crawl)."""

    def __init__(self, work: Path):
        self.heritrix = Heritrix(work)
        self.jobs = 0

    def __enter__(self) -> HeritrixRunner:
        self.heritrix.start()
        return self

    def __exit__(self, *exc) -> None:
        self.heritrix.stop()

    def run(self, site: Site, mode: str) -> tuple[Run, str]:
        threads = 25 if mode == "best" else CONCURRENCY
        self.jobs += 1
        name = f"job{self.jobs}"
        heritrix = self.heritrix
        heritrix.create_job(name, site.seeds, threads=threads, overrides={"warcWriter.enabled": "false"},
                            parallel_queues=None if mode == "per-host-1" else PER_HOST)
        heritrix.launch(name, unpause=False)
        jvm = psutil.Process(heritrix.process.pid)
        run = Run("heritrix")
        before = jvm.cpu_times()
        started = time.monotonic()
        heritrix.action(name, "unpause")
        peak = 0
        last_poll = 0.0
        while True:
            peak = max(peak, tree_memory(jvm)[0])
            now = time.monotonic()
            if now - last_poll >= 0.5:
                last_poll = now
                if heritrix.state(name) == "FINISHED":
                    break
            time.sleep(SAMPLE_INTERVAL)
        run.wall_s = time.monotonic() - started
        after = jvm.cpu_times()
        run.cpu_s = (after.user + after.system) - (before.user + before.system)
        run.peak_rss_bytes = peak
        run.exit_code = 0
        settings = (f"{threads} toe threads, "
                    + ("one queue per host" if mode == "per-host-1" else f"parallelQueues {PER_HOST}, random")
                    + ", WARC off")
        return run, settings


def check(result: Result, site: Site, fetched: collections.Counter, span_s: float) -> None:
    result.pages, result.span_s = sum(fetched.values()), span_s
    result.odd = sorted(f"{a}{p}x{n}" for (a, p), n in fetched.items() if n > 1 or (a, p) not in site.pages)[:3]
    result.missed = len(site.pages - set(fetched))
    result.repeated = sum(n - 1 for key, n in fetched.items() if n > 1)
    result.strays = sum(n for key, n in fetched.items() if key not in site.pages)


# -- the report ------------------------------------------------------------------------------------
def figure(value: float | None, digits: int = 1) -> str:
    return "NA" if value is None else f"{value:,.{digits}f}"


def median(values: list[float | None]) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarise(results: list[Result], shapes: list[str], modes: list[str]) -> dict[str, str]:
    figures: dict[str, str] = {}
    for shape in shapes:
        for mode in modes:
            rows = [r for r in results if r.shape == shape and r.mode == mode]
            if not rows:
                continue
            print(f"\n{shape}, {mode}:")
            print(f"  {'crawler':12} {'pages/s':>9} {'in span':>9} {'CPU s/1k':>9} {'RSS MB':>8} {'once':>5}  settings")
            medians = {}
            for crawler in dict.fromkeys(r.crawler for r in rows):
                mine = [r for r in rows if r.crawler == crawler]
                if not mine[0].run.ran and mine[0].run.exit_code is None:
                    print(f"  {crawler:12} {'NA':>9} {'NA':>9} {'NA':>9} {'NA':>8} {'NA':>5}  {mine[0].run.note}")
                    continue
                pps, cpu, rss = (median([r.pages_per_s for r in mine]), median([r.cpu_per_1k for r in mine]),
                                 median([r.rss_mb for r in mine]))
                once = all(r.once for r in mine)
                medians[crawler] = (pps, cpu, rss, once)
                span = median([r.span_pages_per_s for r in mine])
                print(f"  {crawler:12} {figure(pps):>9} {figure(span):>9} {figure(cpu, 2):>9} {figure(rss, 0):>8} "
                      f"{'yes' if once else 'no':>5}  {mine[0].settings}")
                figures[f"{shape}.{mode}.{crawler}_pps"] = figure(pps)
            peers = {c: m for c, m in medians.items() if not c.startswith("pycrawler") and m[0] is not None}
            warm = max((r.pages_per_s for r in rows if r.crawler == "heritrix" and r.pages_per_s), default=None)
            for crawler, ours in medians.items():
                if not crawler.startswith("pycrawler") or not ours[0] or not peers:
                    continue
                best = max(peers, key=lambda c: peers[c][0])
                ratio = ours[0] / peers[best][0]
                print(f"  {crawler} / best peer ({best}): {ratio:.2f}x pages/s (target 2x), RSS "
                      f"{figure(ours[2], 0)} MB against {figure(peers[best][2], 0)} MB")
                figures[f"{shape}.{mode}.{crawler}.ratio"] = f"{ratio:.2f}"
                if warm:  # Heritrix's JVM warms over a shape's jobs: its fastest round is counted too
                    print(f"  {crawler} / Heritrix's fastest round ({warm:,.1f} pages/s): {ours[0] / warm:.2f}x")
                    figures[f"{shape}.{mode}.{crawler}.ratio_heritrix_warm"] = f"{ours[0] / warm:.2f}"
                if "heritrix" in peers and peers["heritrix"][1]:
                    share = ours[1] / peers["heritrix"][1]
                    print(f"  {crawler} CPU per 1,000 pages: {share:.2f}x Heritrix's (target at most 0.5x)")
                    figures[f"{shape}.{mode}.{crawler}.cpu_vs_heritrix"] = f"{share:.2f}"
    return figures


def runs(crawlers: list[str], crawler4j_counts: list[int], fetcher_counts: list[int | None],
         baseline: Path | None) -> list[tuple[str, int | None]]:
    """The runs of a mode, in order: (name, crawler4j's threads or pycrawler's fetchers, or
    None); crawler4j once per thread count (named ``crawler4j-N`` when there are several: each
    a peer of its own), or once with None where the mode has no such setting; pycrawler once
    per fetcher count (``pycrawler-fN`` when there are several), and the baseline checkout's
    (``pycrawler-before``) first."""
    order: list[tuple[str, int | None]] = []
    for crawler in crawlers:
        if crawler == "pycrawler":
            if baseline is not None:
                order.append(("pycrawler-before", None))
            order += [("pycrawler" if len(fetcher_counts) == 1 else f"pycrawler-f{n}", n) for n in fetcher_counts]
        elif crawler != "crawler4j":
            order.append((crawler, None))
        elif len(crawler4j_counts) > 1:
            order += [(f"crawler4j-{n}", n) for n in crawler4j_counts]
        else:
            order.append((crawler, crawler4j_counts[0] if crawler4j_counts else None))
    return order


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--shapes", nargs="+", choices=SHAPES, default=list(SHAPES))
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--crawlers", nargs="+", choices=CRAWLERS, default=list(CRAWLERS))
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--one-host-pages", type=int, default=2500)
    parser.add_argument("--few-hosts", type=int, default=4)
    parser.add_argument("--few-hosts-pages", type=int, default=1000, help="pages per host")
    parser.add_argument("--web-pages", type=int, default=100_000)
    parser.add_argument("--web-hosts", type=int, default=128)
    parser.add_argument("--crawler4j-threads", type=int, nargs="+", default=[CONCURRENCY], metavar="N",
                        help=f"crawler4j's threads at its best, each a run of its own (default {CONCURRENCY}): "
                             "its best count is searched, not assumed")
    parser.add_argument("--pycrawler-fetchers", type=int, nargs="+", default=[None], metavar="N",
                        help="pycrawler's --fetchers, each count a run of its own (default: its default, one a "
                             "core): the scaling with cores")
    parser.add_argument("--pycrawler-baseline", type=Path, metavar="CHECKOUT",
                        help="also run the pycrawler of this checkout (an earlier commit), as pycrawler-before")
    parser.add_argument("--keep", type=Path, default=None, help="keep the sites, logs and states here")
    args = parser.parse_args(argv)

    scratch = None
    if args.keep:
        work = args.keep
        work.mkdir(parents=True, exist_ok=True)
    else:
        scratch = tempfile.TemporaryDirectory(prefix="vs-crawlers-")
        work = Path(scratch.name)
    program = crawler4j_program(work) if "crawler4j" in args.crawlers else []
    if "heritrix" in args.crawlers and not (HERITRIX_HOME / "lib" / "heritrix-engine-3.13.0.jar").is_file():
        sys.exit(f"vs_crawlers: Heritrix 3.13.0 is not in {HERITRIX_HOME} (scripts/setup unpacks it)")
    layouts = {"one-host": (1, args.one_host_pages), "few-hosts": (args.few_hosts, args.few_hosts_pages),
               "web": (args.web_hosts, -(-args.web_pages // args.web_hosts))}
    results: list[Result] = []
    for shape in args.shapes:
        hosts, per_host = layouts[shape]
        started = time.monotonic()
        site = generate(work / f"site-{shape}", hosts, per_host, free_port())
        print(f"{shape}: {len(site.pages):,} pages on {hosts} host(s) at port {site.port} "
              f"(written in {time.monotonic() - started:.0f} s)", flush=True)
        with Nginx(site, work / f"nginx-{shape}") as nginx, \
                (HeritrixRunner(work / f"heritrix-{shape}") if "heritrix" in args.crawlers
                 else contextlib.nullcontext()) as heritrix:
            for round_number in range(1, args.rounds + 1):
                for mode in args.modes:
                    for crawler, threads in runs(args.crawlers, crawler4j_threads(site, mode, args.crawler4j_threads),
                                                 args.pycrawler_fetchers, args.pycrawler_baseline):
                        folder = work / "runs" / f"{shape}-{mode}-{crawler}"
                        if crawler == "crawler4j" and threads is None:
                            run = Run("crawler4j", note="no such setting: crawler4j's threads take any host's URLs")
                            results.append(Result(crawler, shape, mode, run))
                            continue
                        nginx.mark()
                        if crawler.startswith("pycrawler"):
                            checkout = args.pycrawler_baseline if crawler == "pycrawler-before" else None
                            run, settings = run_pycrawler(site, mode, folder, threads, checkout)
                        elif crawler == "scrapy":
                            run, settings = run_scrapy(site, mode, folder)
                        elif crawler.startswith("crawler4j"):
                            run, settings = run_crawler4j(site, threads, folder, program)
                        else:
                            run, settings = heritrix.run(site, mode)
                        result = Result(crawler, shape, mode, run, settings=settings)
                        check(result, site, *nginx.requests())
                        results.append(result)
                        print(f"round {round_number} {shape} {mode} {crawler}: {result.pages:,} pages in "
                              f"{run.wall_s:.1f} s = {figure(result.pages_per_s)} pages/s "
                              f"({figure(result.span_pages_per_s)} over the fetches' span), {run.cpu_s:.1f} CPU s "
                              f"({figure(result.cpu_per_1k, 2)} per 1k), peak RSS {figure(result.rss_mb, 0)} MB, "
                              + ("every page once" if result.once else
                                 f"missed {result.missed} repeated {result.repeated} strays {result.strays} "
                                 f"(e.g. {' '.join(result.odd)})")
                              + (f" [{run.note}]" if run.note else ""), flush=True)
    figures = summarise(results, args.shapes, args.modes)
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    if scratch is not None:
        scratch.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
