#!/usr/bin/env python3
"""Where a crawl's CPU goes, thread by thread, window by window: one site, versions side by side.

    .venv/bin/python scripts/bench/crawl_threads.py --pages 150000 --variant before=../old --variant after=.

The site is generated once into ``--site`` (default ``bench-output/threads-site-N``), reused
when it is there: ``N`` static pages on one host, ~25 links a page (a random tree from
``index.html`` so that every page is reachable, the rest of the links to random pages), served
by nginx on 127.0.0.1 (:class:`pycrawler.static_site.server.StaticSite`). Each ``--variant
NAME=FOLDER`` runs ``pycrawler crawl`` from that source tree (``PYTHONPATH=FOLDER``, e.g. a
``git worktree`` of an older commit) with ``--seen drum --concurrency 32 --delay 0
--queue-policy bkdr`` (``--queue-policy host`` crawls the one host through one queue, as the
crawl's default does; ``--delay`` sets the politeness delay); the variants alternate, round
after round, so that the machine's drift hits them alike. A run stops at the site's end or after
``--limit`` seconds.

Every ``--window`` seconds the crawl process is sampled from /proc: pages (crawl.log lines),
the CPU of its threads (``/proc/PID/task/*/stat``) grouped as ``main`` (the Python thread),
``refq`` (JPype's "Python Reference Queue") and ``other`` (JVM compiler, GC and the rest),
its RSS, and the Java young collections in the window (the JVM logs them to a file:
``-Xlog:gc`` added to the crawl's own JVM options). The first window (start-up) and any
window the process left during are not counted. The last line is ``key=value`` medians per
variant.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pycrawler.jvm import CRAWL_JVM
from pycrawler.static_site.server import StaticSite

ROOT = Path(__file__).resolve().parents[2]
LINKS = 25
FOLDERS = 200
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
CRAWL_FLAGS = ("--seen", "drum", "--concurrency", "32", "--no-progress")
COLUMNS = ("pps", "main", "refq", "other", "jgc")


def page_name(i: int) -> str:
    return "index.html" if i == 0 else f"d{i % FOLDERS}/p{i}.html"


def write_site(root: Path, pages: int, seed: int = 24) -> None:
    """``pages`` pages, each reachable from ``index.html``: page i hangs under a random page of
    [i/2, i) (a tree a breadth-first crawl walks in waves), and fills up to :data:`LINKS`
    links with random pages."""
    rng = random.Random(seed)
    children: list[list[int]] = [[] for _ in range(pages)]
    for i in range(1, pages):
        children[rng.randrange(i // 2, i) if i > LINKS else 0].append(i)
    scratch = root.with_name(root.name + ".partial")
    shutil.rmtree(scratch, ignore_errors=True)
    for folder in range(FOLDERS):
        (scratch / f"d{folder}").mkdir(parents=True)
    for i in range(pages):
        links = children[i] + [rng.randrange(pages) for _ in range(max(0, LINKS - len(children[i])))]
        anchors = "".join(f'<a href="/{page_name(j)}">{page_name(j)}</a>\n' for j in links)
        (scratch / page_name(i)).write_text("<!DOCTYPE html><html><head><meta charset='utf-8'>"
                                            f"<title>p{i}</title></head><body><p>page {i}</p>{anchors}</body></html>")
    scratch.rename(root)  # a site is complete or absent


def thread_cpu(pid: int) -> dict[str, float]:
    """CPU seconds of the process's live threads by group: main, refq, other."""
    groups = dict.fromkeys(("main", "refq", "other"), 0.0)
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        group = "main" if int(tid) == pid else "refq" if name.startswith("Python Referen") else "other"
        groups[group] += (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return groups


def rss_mb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) // 1024
    return 0


class LineCounter:
    """Lines appended to a growing file, read incrementally. Only whole lines are passed: a
    torn last line that a killed crawl left (and the next run cuts) is never counted."""

    def __init__(self, path: Path):
        self.path, self.offset, self.lines = path, 0, 0

    def count(self) -> int:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return self.lines
        whole = data.rfind(b"\n") + 1
        self.offset += whole
        self.lines += data.count(b"\n", 0, whole)
        return self.lines


def young_collections(log: Path) -> int:
    try:
        return sum(1 for line in log.open() if "Pause Young" in line)
    except FileNotFoundError:
        return 0


def crawl(name: str, source: Path, url: str, state: Path, args: argparse.Namespace) -> tuple[list[dict], dict]:
    """One crawl of ``url`` from the code in ``source``: its windows and its totals."""
    gc_log = state.with_suffix(".gc.log")
    env = dict(os.environ, PYTHONPATH=str(source), PYCRAWLER_HEAP=CRAWL_JVM["PYCRAWLER_HEAP"],
               PYCRAWLER_JVM_OPTS=f"{CRAWL_JVM['PYCRAWLER_JVM_OPTS']} -Xlog:gc:file={gc_log}")
    command = [sys.executable, "-m", "pycrawler", "crawl", url + "index.html", "--state", str(state), *CRAWL_FLAGS,
               "--queue-policy", args.queue_policy, "--delay", args.delay]
    with open(state.with_suffix(".out"), "wb") as out:
        process = subprocess.Popen(command, env=env, cwd=source, stdout=out, stderr=subprocess.STDOUT)
    started, pages = time.monotonic(), LineCounter(state / "crawl.log")
    windows, previous, totals = [], None, {}
    try:
        while process.poll() is None and time.monotonic() - started < args.limit:
            time.sleep(args.window)
            try:
                sample = (time.monotonic(), pages.count(), thread_cpu(process.pid), young_collections(gc_log),
                          rss_mb(process.pid))
            except OSError:
                break
            if process.poll() is not None:
                break  # its threads were leaving: the sample is partial
            if previous is not None:
                seconds = sample[0] - previous[0]
                window = {"at": sample[1], "pps": (sample[1] - previous[1]) / seconds,
                          **{g: 100 * (sample[2][g] - previous[2][g]) / seconds for g in sample[2]},
                          "jgc": sample[3] - previous[3], "rss_mb": sample[4]}
                windows.append(window)
                print(name, json.dumps({k: round(v) for k, v in window.items()}), flush=True)
            previous = sample
            totals = {"pages": sample[1], "seconds": round(sample[0] - started),
                      **{f"{g}_cpu_s": round(v) for g, v in sample[2].items()}, "young_gcs": sample[3]}
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait()
    print(name, "total", json.dumps(totals), flush=True)
    return windows[1:], totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--pages", type=int, default=150_000, help="pages of the generated site")
    parser.add_argument("--site", type=Path, help="the site's folder (default bench-output/threads-site-PAGES)")
    parser.add_argument("--variant", action="append", required=True, metavar="NAME=FOLDER",
                        help="a source tree to crawl with (repeat; alternated)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--window", type=float, default=20.0, help="seconds per window")
    parser.add_argument("--limit", type=float, default=540.0, help="seconds a crawl may run at most")
    parser.add_argument("--queue-policy", default="bkdr", help="the crawl's --queue-policy (host: one queue)")
    parser.add_argument("--delay", default="0", help="the crawl's --delay (seconds)")
    args = parser.parse_args(argv)
    variants = dict(v.split("=", 1) for v in args.variant)
    site = args.site or ROOT / "bench-output" / f"threads-site-{args.pages}"
    if not site.is_dir():
        print(f"writing {args.pages:,} pages into {site}", flush=True)
        write_site(site, args.pages)
    windows: dict[str, list[dict]] = {name: [] for name in variants}
    with StaticSite(site, server="nginx") as url, tempfile.TemporaryDirectory(prefix="crawl-threads-") as scratch:
        for round_ in range(args.rounds):
            for name, source in variants.items():
                state = Path(scratch) / f"{name}-{round_}"
                windows[name] += crawl(name, Path(source).resolve(), url, state, args)[0]
    figures = []
    for name, rows in windows.items():
        for column in COLUMNS:
            figures.append(f"{name}_{column}={statistics.median(r[column] for r in rows):.0f}" if rows else
                           f"{name}_{column}=NA")
    print(" ".join(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
