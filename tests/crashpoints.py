"""The crash-point harness: ``pycrawler crawl --warc`` killed -9 at many points, resumed each
time, then completed, for every seen table with and without a URL cache.

A run serves a generated site (:func:`crawl_sites.write_site`, whose reachable pages are known)
on loopback with a server that counts what it served, and for each mode crawls it into a fresh
state folder: start the crawl, let it fetch a random number of pages, kill it -9, start it
again with the same command, and so on; after the last kill the crawl runs to its end. Then it
checks what a user keeps:

- every reachable page has a 200 line in crawl.log and a response record in the WARC files
  (read with warcio): a page missing from either is *lost*;
- the pages fetched again (server side) number at most ``--concurrency`` per kill, the URLs a
  kill can catch in process: more is a *repeat beyond the bound*.

The kill points come from one seed, printed with the points each kill hit (pages served when
the kill fell), so a failure is replayed with ``--seed``. The small form runs in pytest
(tests/test_crashpoints.py); the large form by hand::

    python tests/crashpoints.py --kills 30 --pages 600

and ends with one ``key=value`` line per mode and a total line.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from crawl_sites import ROOT, CountingServer, crawl_command, run_crawl, write_site
from test_crawl_kill import crawl_log_200s, warc_responses

MODES = ("exact", "bloom", "drum")
CACHE = "clock:4096"
CONCURRENCY = 8
START_TIMEOUT = 60.0


@dataclasses.dataclass
class ModeResult:
    """What one mode's crawl did and what it lost."""

    mode: str
    kills: int
    kill_points: list[int]     # pages the server had served, in all, when each kill fell
    repeats: int               # fetches beyond the first of a page, server side
    lost_log: list[str]        # reachable pages without a 200 line in crawl.log
    lost_warc: list[str]       # reachable pages without a response record in the WARC files
    exit_code: int             # of the final, uninterrupted run

    @property
    def bound(self) -> int:
        return self.kills * CONCURRENCY

    @property
    def ok(self) -> bool:
        return not self.lost_log and not self.lost_warc and self.repeats <= self.bound and self.exit_code == 0

    def line(self) -> str:
        return (f"mode={self.mode} kills={self.kills} repeats={self.repeats} repeat_bound={self.bound} "
                f"lost_crawl_log={len(self.lost_log)} lost_warc={len(self.lost_warc)} exit={self.exit_code}")


def modes(names=MODES) -> list[tuple[str, str | None]]:
    """(seen table, URL cache) of every mode: each table bare and behind a cache."""
    return [(seen, cache) for seen in names for cache in (None, CACHE)]


def crash_mode(base: str, server: CountingServer, reachable: set[str], work: Path, seen: str,
               cache: str | None, kills: int, rng: random.Random, spread: int, out=sys.stdout) -> ModeResult:
    """Crawl ``base`` into ``work`` with ``--seen seen`` (and ``--url-cache cache``), killing it
    -9 ``kills`` times after a random number (1 to ``spread``) of pages each, then to the end."""
    name = seen + ("+cache" if cache else "")
    state, warcs = work / f"state-{name}", work / f"warcs-{name}"
    options = ["--seen", seen, "--delay", "0", "--queue-policy", "bkdr", "--concurrency", str(CONCURRENCY),
               "--parse-workers", "1", "--warc", str(warcs)] + (["--url-cache", cache] if cache else [])
    command = crawl_command(base + "index.html", state, *options)
    points: list[int] = []
    for _ in range(kills):
        served = sum(server.page_counts().values())
        target, pause = served + rng.randint(1, spread), rng.random() * 0.02
        crawl = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT
        while sum(server.page_counts().values()) < target and crawl.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(pause)  # between two flushes, or inside one
        if crawl.poll() is not None:
            break  # the crawl ended before this kill: nothing left to kill
        os.kill(crawl.pid, signal.SIGKILL)
        crawl.wait()
        points.append(sum(server.page_counts().values()))
        print(f"  {name}: kill {len(points)} at {points[-1]} pages served", file=out, flush=True)
    done = run_crawl(base + "index.html", state, *options, timeout=600)
    counts = server.page_counts()
    log = crawl_log_200s(state / "crawl.log", base)
    warc = warc_responses(warcs, base)
    return ModeResult(name, len(points), points, sum(n - 1 for n in counts.values() if n > 1),
                      sorted(reachable - set(log)), sorted(reachable - set(warc)), done.returncode)


def run(kills: int, pages: int, seed: int, seen_modes=MODES, out=sys.stdout) -> list[ModeResult]:
    """Every mode of ``seen_modes``, each on its own copy of a site of ``pages`` pages (so the
    server's counts are the mode's own), ``kills`` kills each; prints and returns the results."""
    rng = random.Random(seed)
    spread = max(2, 2 * pages // max(1, kills + 1))
    print(f"crash points: seed={seed} kills={kills} pages={pages} spread=1..{spread} concurrency={CONCURRENCY}",
          file=out, flush=True)
    results = []
    with tempfile.TemporaryDirectory(prefix="crashpoints-") as scratch:
        work = Path(scratch)
        for seen, cache in modes(seen_modes):
            root = work / f"site-{seen}-{bool(cache)}"
            reachable = write_site(root, pages, seed=seed)
            server = CountingServer(root)
            with server as base:
                server.quiet()
                results.append(crash_mode(base, server, reachable, work, seen, cache, kills, rng, spread, out))
            print(results[-1].line(), file=out, flush=True)
    lost = sum(len(r.lost_log) + len(r.lost_warc) for r in results)
    print(f"total modes={len(results)} kills={sum(r.kills for r in results)} "
          f"repeats={sum(r.repeats for r in results)} lost={lost} "
          f"failed={sum(not r.ok for r in results)}", file=out, flush=True)
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=30, help="kills per mode (default 30)")
    parser.add_argument("--pages", type=int, default=600, help="pages of the generated site (default 600)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the site and the kill points")
    parser.add_argument("--seen", nargs="+", choices=MODES, default=list(MODES))
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    results = run(args.kills, args.pages, seed, args.seen)
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
