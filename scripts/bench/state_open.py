#!/usr/bin/env python3
"""What checking a crawl state against crawl.log adds to its open, on a state of N pages.

    .venv/bin/python scripts/bench/state_open.py --pages 100000

Crawls a synthetic web (:mod:`pycrawler.testing.synthetic_web`, served from its own process on
loopback) of ``--pages`` pages into a fresh state with ``--max-pages`` the same (or, with
``--state DIR`` holding a crawl already, takes that one), then times,
``--rounds`` times each in this process, alternated:

- **env**: opening the state's JE environment and closing it (what every crawl's open does,
  JE's recovery of a cleanly closed log included);
- **check**: :func:`pycrawler.crawl.state_check.check_state` on that open environment (JE's
  mark, ``crawl.log.committed``, crawl.log's length), the open's added cost;
- **scan**: reading and parsing the whole crawl.log, what a check that counts the log against the
  ``fetched`` database would cost instead.

Ends with one line of ``key=value`` medians.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pycrawler.crawl.engine import CRAWL_LOG, is_transient
from pycrawler.crawl.state_check import LogMark, logged_fetches, check_state
from pycrawler.store import Environment
from pycrawler.testing.synthetic_server import SyntheticServer
from pycrawler.testing.synthetic_web import SyntheticWeb


def timed(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--state", type=Path, help="crawl into DIR and keep it; a DIR with a crawl is taken as is")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="state-open-") as scratch:
        state = args.state or Path(scratch) / "state"
        if not (state / CRAWL_LOG).is_file():
            crawl(state, args.pages, args.hosts)
        measure(state, args.rounds)
    return 0


def crawl(state: Path, pages: int, hosts: int) -> None:
    with SyntheticServer(SyntheticWeb(pages, hosts)) as server:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pycrawler", "crawl", *server.seeds, "--state", str(state),
                               "--no-progress", "--delay", "0", "--concurrency", "64", "--queue-policy", "bkdr",
                               "--max-pages", str(pages)], capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"state_open: the crawl failed:\n{done.stderr}")
        print(f"crawled {pages:,} pages in {time.perf_counter() - started:.0f} s")


def measure(state: Path, rounds: int) -> None:
    log = state / CRAWL_LOG
    lines = sum(1 for _ in open(log, "rb"))
    print(f"{state}: crawl.log {lines:,} lines, {log.stat().st_size:,} bytes; "
          f"JE {sum(p.stat().st_size for p in state.glob('*.jdb')):,} bytes")

    env_s, check_s, scan_s = [], [], []
    for _ in range(rounds):
        env_s.append(timed(lambda: Environment(state, durability="write_no_sync").close()))
        with Environment(state, durability="write_no_sync") as env:
            mark = LogMark(env, state)
            if mark.held() is None:
                sys.exit(f"state_open: {state} holds no crawl.log mark: crawl it with this version")
            check_s.append(timed(lambda: check_state(state, mark, log, None, repair=False,
                                                     is_transient=is_transient)))
            mark.close()
        scan_s.append(timed(lambda: logged_fetches(log, 0, is_transient)))
    env_ms, check_ms, scan_ms = (statistics.median(s) * 1000 for s in (env_s, check_s, scan_s))
    print(f"lines={lines} env_open_ms={env_ms:.1f} check_ms={check_ms:.3f} "
          f"check_share={check_ms / env_ms:.4f} full_log_scan_ms={scan_ms:.0f}")


if __name__ == "__main__":
    sys.exit(main())
