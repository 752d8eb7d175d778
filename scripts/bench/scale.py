#!/usr/bin/env python3
"""A crawl of a synthetic web of N pages, window by window: speed, CPU, seen table, JE, RSS.

    .venv/bin/python scripts/bench/scale.py --pages 1000000 --seen drum --kill-at 500000 --plot docs/scale-1m.png

The web is :class:`pycrawler.testing.synthetic_web.SyntheticWeb` (``--pages`` over ``--hosts``
loopback addresses, from ``--seed``), served from its seed by its own process
(:mod:`pycrawler.testing.synthetic_server`); its ground truth (the pages, redirects and missing
pages reachable from the hosts' roots) comes from the generator, before the crawl. The crawl is
``pycrawler crawl ROOTS --seen S [--url-cache C] --concurrency 32 --delay 0 --queue-policy bkdr
--stats FILE``, in its own process.

Every ``--sample`` seconds the processes are read from /proc (CPU and RSS of the crawl, of the
processes below it together: its fetchers, their fork server and any page workers, and of the
server), crawl.log's lines are counted and the crawl's ``--stats`` line
is read. Each time another ``--window`` pages are done a row is printed (and one, ``partial``,
for the tail after the last whole window, left out of the figures): pages/s, CPU (% of a
core) of the crawl, the processes below it and the server, seen-table operations/s (URLs scheduled minus
URL-cache hits), flush time (share of the window and ms per flush), RSS of each, JE log bytes
per known URL and JE cache misses/s.

``--kill-at K``: at K pages the crawl's process group is killed with SIGKILL and the same
command started again on the same state; the time from the restart to its first crawl.log line
(first fetch) and to full speed (pages/s over ``--sample``-spaced 5-second spans back at 0.85x
the 10 s before the kill) are reported.

**Stalls.** The samples are also cut into 10-second intervals (``--interval``): the targets
are every ``--window`` at least 0.85x the median window and no interval below 0.5x it (the
crawl's first and last intervals and those of a restart left out). Each interval that falls
below 0.85x the median is listed with what ran in it beside the crawl, from the ``--stats``
lines: seconds of DRUM merges, JE cleaner runs and checkpoints, seconds of the JVM's and of
Python's garbage collectors, and the share of the interval spent in flushes. ``--plot-time
FILE`` draws pages/s per interval against time with those dips marked by cause.

At the end crawl.log is read against the ground truth: coverage (share of the reachable pages
fetched with 200), repeats (fetches beyond the first of one URL of the web, all statuses; a
kill may repeat up to ``--concurrency``) and strays (fetches of URLs outside the truth). The
server's CPU per fetch and its share of all the CPU (server, crawl and the processes below it; its own
start-up left out) say how far it is from being the bottleneck. "Pages" in the windows are
crawl.log lines: every fetch, 301 and 404 included. The last line is
``key=value`` figures. ``--plot FILE``: pages/s and RSS against pages crawled (matplotlib).
"""

from __future__ import annotations

import argparse
import array
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
from crawl_threads import LineCounter, rss_mb

from pycrawler.errors import BadInput
from pycrawler.keys.canon import canonicalize
from pycrawler.testing.synthetic_server import SyntheticServer
from pycrawler.testing.synthetic_web import MISSING, PAGE, REDIRECT, SyntheticWeb, Truth

ROOT = Path(__file__).resolve().parents[2]
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
FULL_SPEED = 0.85
SPAN = 5.0            # seconds a rate is taken over around a kill
BEFORE_KILL = 10.0
RESTART_SPAN = 30.0   # seconds after a restart left out of the stall figures: the kill's own figures judge them
CUMULATIVE = ("done", "seen_checks", "cache_hits", "flushes", "flush_s", "je_cache_misses", "drum_merge_s",
              "je_cleaner_runs", "je_checkpoints", "jvm_gc_s", "py_gc_s")
DIP, STALL = 0.85, 0.5  # an interval below DIP x the median window is a dip (its causes listed); below STALL, a stall
CAUSES = {  # a --stats counter -> how a dip names it, and the least change in an interval that counts
    # (seconds counters: a share of the interval, so a 0.1 s collection is not named as a dip's cause)
    "drum_merge_s": ("DRUM merges", 0.05), "je_cleaner_runs": ("JE cleaner", 1), "je_checkpoints": ("JE checkpoint", 1),
    "jvm_gc_s": ("JVM GC", 0.05), "py_gc_s": ("Python GC", 0.05)}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def descendants(pid: int) -> list[int]:
    """Every process below ``pid``: its children and theirs (the fetchers are the fork
    server's children, not the crawl's)."""
    found, todo = [], [pid]
    while todo:
        try:
            tasks = list(Path(f"/proc/{todo.pop()}/task").iterdir())
        except OSError:  # ended meanwhile
            continue
        for task in tasks:
            try:
                below = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            found += below
            todo += below
    return found


def processes(crawl: int | None, server: int) -> dict[str, tuple[float, int]]:
    """(CPU seconds, RSS MB) of the crawl, of all the processes below it together (the fork
    server, the fetchers, the page workers) and of the server; a process that ended meanwhile
    counts nothing."""
    out = {}
    groups = {"crawl": [crawl] if crawl else [], "workers": descendants(crawl) if crawl else [], "server": [server]}
    for name, pids in groups.items():
        cpu, rss = 0.0, 0
        for pid in pids:
            try:
                cpu, rss = cpu + cpu_seconds(pid), rss + rss_mb(pid)
            except (OSError, IndexError):
                continue
        out[name] = (cpu, rss)
    return out


class StatsReader:
    """The crawl's ``--stats`` lines, summed over the runs of one state (a restart counts from 0)."""

    def __init__(self, path: Path):
        self.base, self.last = dict.fromkeys(CUMULATIVE, 0), None
        self.path, self.offset = path, 0

    def read(self) -> dict:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return self.current()
        whole = data.rfind(b"\n") + 1
        self.offset += whole
        for raw in data[:whole].splitlines():
            line = dict.fromkeys(CUMULATIVE, 0) | json.loads(raw)
            if self.last is not None and line["done"] < self.last["done"]:  # a new run
                for k in CUMULATIVE:
                    self.base[k] += self.last[k]
            self.last = line
        return self.current()

    def current(self) -> dict:
        if self.last is None:
            return dict.fromkeys((*CUMULATIVE, "pending", "je_log_bytes"), 0)
        return {**self.last, **{k: self.base[k] + self.last[k] for k in CUMULATIVE}}


class Sample:
    """One reading of everything, at a time."""

    def __init__(self, at: float, pages: int, procs: dict, stats: dict):
        self.at, self.pages, self.procs, self.stats = at, pages, procs, stats


def window_row(a: Sample, b: Sample) -> dict:
    seconds = b.at - a.at
    d = {k: b.stats[k] - a.stats[k] for k in CUMULATIVE}
    known = b.stats["done"] + b.stats["pending"]
    row = {"pages": b.pages, "pps": (b.pages - a.pages) / seconds}
    for name in ("crawl", "workers", "server"):
        row[f"cpu_{name}"] = 100 * max(0.0, b.procs[name][0] - a.procs[name][0]) / seconds
    row["seen_ops_s"] = (d["seen_checks"] - d["cache_hits"]) / seconds
    row["flush_share"] = 100 * d["flush_s"] / seconds
    row["flush_ms"] = 1000 * d["flush_s"] / d["flushes"] if d["flushes"] else 0.0
    for name in ("crawl", "workers", "server"):
        row[f"rss_{name}"] = b.procs[name][1]
    row["log_b_per_url"] = b.stats["je_log_bytes"] / known if known else 0.0
    row["je_miss_s"] = d["je_cache_misses"] / seconds
    return row


def cpu_used(samples: list[Sample], name: str, since_start: bool) -> float:
    """CPU seconds a group of processes used, across a kill and restart (its count falls to 0
    when the crawl is gone and starts again from 0): from the start of the first process
    (``since_start``) or from the first sample."""
    total = samples[0].procs[name][0] if since_start else 0.0
    for a, b in zip(samples, samples[1:]):
        before, after = a.procs[name][0], b.procs[name][0]
        total += after - before if after >= before else after
    return total


def rate_between(samples: list[Sample], start: float, end: float) -> float:
    inside = [s for s in samples if start <= s.at <= end]
    if len(inside) < 2 or inside[-1].at == inside[0].at:
        return 0.0
    return (inside[-1].pages - inside[0].pages) / (inside[-1].at - inside[0].at)


class ScaleRun:
    """One crawl of the web, sampled; ``kill_at``: where it is killed and restarted."""

    def __init__(self, web: SyntheticWeb, server: SyntheticServer, state: Path, args: argparse.Namespace):
        self.web, self.server, self.state, self.args = web, server, state, args
        self.samples: list[Sample] = []
        self.rows: list[dict] = []
        self.kill: dict = {}
        self.restarted = 0.0
        self.limited = False   # stopped at --limit (SIGTERM: a graceful stop, not a failure)

    def command(self) -> list[str]:
        a = self.args
        command = [sys.executable, "-m", "pycrawler", "crawl", *self.server.seeds, "--state", str(self.state),
                   "--seen", a.seen, "--concurrency", str(a.concurrency), "--delay", "0", "--queue-policy", "bkdr",
                   "--max-depth", "1000", "--no-progress", "--stats", str(self.state.with_suffix(".stats.jsonl"))]
        return (command + (["--je-cache-mb", str(a.je_cache_mb)] if a.je_cache_mb else [])
                + (["--url-cache", a.url_cache] if a.url_cache else []))

    def start(self) -> subprocess.Popen:
        env = dict(os.environ, PYTHONPATH=str(ROOT))  # the JVM's heap: the crawl's, for its JE cache
        out = open(self.state.with_suffix(".out"), "ab")
        with out:
            return subprocess.Popen(self.command(), env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True)  # its own group: a kill takes the workers too

    def run(self) -> subprocess.Popen:
        a = self.args
        pages, stats = LineCounter(self.state / "crawl.log"), StatsReader(self.state.with_suffix(".stats.jsonl"))
        process = self.start()
        started = time.monotonic()
        last_row_at, next_row = None, a.window
        while True:
            alive = process.poll() is None
            sample = Sample(time.monotonic(), pages.count(), processes(process.pid if alive else None,
                                                                        self.server.pid), stats.read())
            self.samples.append(sample)
            if last_row_at is None:
                last_row_at = sample
            if sample.pages >= next_row or (not alive and sample.pages > last_row_at.pages):
                row = window_row(last_row_at, sample)
                row["partial"] = sample.pages < next_row  # the crawl's tail and its close: not a window
                self.rows.append(row)
                print(json.dumps({k: round(v, 1) if isinstance(v, float) else v for k, v in row.items()}),
                      flush=True)
                last_row_at, next_row = sample, (sample.pages // a.window + 1) * a.window
            if not alive:
                return process
            if a.kill_at and not self.kill and sample.pages >= a.kill_at:
                process = self.kill_and_restart(process, pages)
                last_row_at = None  # the restart's window starts afresh
                continue
            if time.monotonic() - started > a.limit:
                process.terminate()
                process.wait()
                self.limited = True
                print(f"stopped at the {a.limit:.0f} s limit", flush=True)
                return process
            time.sleep(a.sample)

    def kill_and_restart(self, process: subprocess.Popen, pages: LineCounter) -> subprocess.Popen:
        killed_at = time.monotonic()
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        before = rate_between(self.samples, killed_at - BEFORE_KILL, killed_at)
        at_kill = pages.count()
        print(f"killed -9 at {at_kill:,} pages ({before:.0f} pages/s before); restarting", flush=True)
        process = self.start()
        restarted = time.monotonic()
        while pages.count() == at_kill and process.poll() is None:
            time.sleep(0.05)
        first = time.monotonic() - restarted
        self.kill = {"kill_pages": at_kill, "first_fetch_s": round(first, 1), "pps_before_kill": round(before)}
        print(f"first fetch {first:.1f} s after the restart", flush=True)
        self.restarted = restarted
        return process

    def full_speed(self) -> float | None:
        """Seconds from the restart until a span of :data:`SPAN` s ran at :data:`FULL_SPEED` of before."""
        if not self.kill:
            return None
        target = FULL_SPEED * self.kill["pps_before_kill"]
        for s in self.samples:
            if s.at >= self.restarted + SPAN and rate_between(self.samples, s.at - SPAN, s.at) >= target:
                return s.at - self.restarted
        return None


def intervals(samples: list[Sample], span: float, restarted: float | None) -> list[dict]:
    """Pages/s per ``span`` seconds from the first page, with what each counter of
    :data:`CAUSES` and the flushes' seconds grew by; the tail shorter than ``span`` is left out
    and an interval holding a restart is marked ``restart``."""
    first = next((i for i, s in enumerate(samples) if s.pages > 0), None)
    if first is None:
        return []
    out, a = [], samples[first]
    for b in samples[first + 1:]:
        if b.at - a.at < span:
            continue
        row = {"t": round(a.at - samples[first].at, 1), "span": b.at - a.at, "pps": (b.pages - a.pages) / (b.at - a.at),
               "flush_share": (b.stats["flush_s"] - a.stats["flush_s"]) / (b.at - a.at),
               "restart": restarted is not None and a.at <= restarted + RESTART_SPAN and b.at >= restarted}
        for counter in CAUSES:
            row[counter] = b.stats[counter] - a.stats[counter]
        out.append(row)
        a = b
    return out


def dip_causes(row: dict) -> list[str]:
    """What ran beside the crawl in an interval, as a dip names it: the timed causes that took
    their share of it, longest first, then the counted ones (JE's cleaner runs, checkpoints)."""
    timed = sorted(((row[c], name) for c, (name, share) in CAUSES.items()
                    if c.endswith("_s") and row[c] >= share * row["span"]), reverse=True)
    counted = [f"{name} x{row[c]:.0f}" for c, (name, least) in CAUSES.items()
               if not c.endswith("_s") and row[c] >= least]
    return [f"{name} {seconds:.1f} s" for seconds, name in timed] + counted or ["none of these"]


def stalls(rows: list[dict], spans: list[dict]) -> dict:
    """The stall targets' figures against the median window: the worst window and interval as
    ratios (the first and last interval, where the crawl starts and ends, and a restart's, are
    left out), the dips with their causes."""
    pps = [r["pps"] for r in rows if not r["partial"]]
    median = statistics.median(pps) if pps else 0.0
    inner = [r for r in spans[1:-1] if not r["restart"]]
    dips = [r for r in inner if r["pps"] < DIP * median]
    for r in dips:
        r["causes"] = dip_causes(r)
    return {"median": median, "worst_window_ratio": min(pps) / median if median else 0.0,
            "worst_interval_ratio": min((r["pps"] for r in inner), default=0.0) / median if median else 0.0,
            "dips": dips, "stalled": [r for r in dips if r["pps"] < STALL * median]}


STRAY = -1
_KIND_SHIFT = 40  # (kind, id) packed in one int64: ids stay below 2**40


def fetched_urls(log: Path, web: SyntheticWeb, port: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (kind, id) crawl.log fetched, packed as ``kind << 40 | id`` (``STRAY``
    for URLs the web does not have), and how many times each; arrays, not a dict, so that
    10M lines fit in a few hundred MB."""
    packed = array.array("q")
    first = 0x7F000001
    with log.open(encoding="utf-8", errors="replace") as lines:
        for line in lines:
            fields = line.split()
            if len(fields) < 4:
                continue
            parts = urlsplit(canonicalize(fields[3], "safe"))
            host = int.from_bytes(bytes(int(p) for p in parts.hostname.split(".")), "big") - first
            found = web.resolve(host, unquote(parts.path)) if parts.port == port and 0 <= host < web.hosts else None
            packed.append(STRAY if found is None else found[0] << _KIND_SHIFT | found[1])
    return np.unique(np.frombuffer(packed, dtype=np.int64), return_counts=True)


def judge(keys: np.ndarray, counts: np.ndarray, truth: Truth) -> dict:
    """Coverage, repeats and strays (fetches of URLs outside the truth) against the ground truth."""
    strays = int(counts[keys == STRAY].sum())
    known = keys != STRAY
    kinds, ids, times = keys[known] >> _KIND_SHIFT, keys[known] & ((1 << _KIND_SHIFT) - 1), counts[known]
    for kind, expected in ((PAGE, truth.pages), (REDIRECT, truth.redirects), (MISSING, truth.missing)):
        mine = kinds == kind
        strays += int(times[mine][~np.isin(ids[mine], expected)].sum())
    pages = ids[kinds == PAGE]
    hit = int(np.isin(pages, truth.pages).sum())
    return {"truth_pages": len(truth.pages), "fetched_pages": len(pages),
            "coverage": round(hit / len(truth.pages), 6) if len(truth.pages) else 1.0,
            "repeats": int((counts[known] - 1).sum()),  # strays are all one key: their repeats are not told apart
            "strays": strays, "fetches": int(counts.sum()), "truth_fetches": truth.fetches}


def plot(rows: list[dict], path: Path, title: str, kill_pages: int | None) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in rows if not r["partial"]]
    x = [r["pages"] for r in rows]
    fig, left = plt.subplots(figsize=(8, 4.5))
    left.plot(x, [r["pps"] for r in rows], "o-", color="tab:blue", label="pages/s (fetches/s)")
    left.set_xlabel("URLs fetched (crawl.log lines)")
    left.set_ylabel("pages/s", color="tab:blue")
    left.set_ylim(bottom=0)
    if kill_pages:
        left.axvline(kill_pages, color="black", linewidth=0.8, linestyle="-.", label="kill -9, restart")
    right = left.twinx()
    right.plot(x, [r["rss_crawl"] + r["rss_workers"] for r in rows], "s--", color="tab:red",
               label="RSS, crawl + fetchers")
    right.plot(x, [r["rss_server"] for r in rows], "^:", color="tab:gray", label="RSS, server")
    right.set_ylabel("RSS, MB", color="tab:red")
    right.set_ylim(bottom=0)
    fig.legend(loc="lower center", ncol=4, fontsize="small")
    left.set_title(title)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_time(spans: list[dict], median: float, path: Path, title: str) -> None:
    """Pages/s per interval against time, the median window's rate and its 0.85x and 0.5x
    lines, each dip marked by the first cause it names."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(figsize=(10, 4.5))
    axes.plot([r["t"] for r in spans], [r["pps"] for r in spans], "-", color="tab:blue", linewidth=0.8,
              label="pages/s per interval")
    for ratio, style in ((1.0, "-"), (DIP, "--"), (STALL, ":")):
        axes.axhline(ratio * median, color="gray", linestyle=style, linewidth=0.8,
                     label=f"{ratio:g}x the median window ({ratio * median:.0f})")
    markers = dict(zip([name for name, _ in CAUSES.values()] + ["none of these"], "ovs^Dx"))
    for cause, marker in markers.items():
        hits = [r for r in spans if r.get("causes", [""])[0].startswith(cause)]
        if hits:
            axes.plot([r["t"] for r in hits], [r["pps"] for r in hits], marker, linestyle="none",
                      label=f"dip: {cause}")
    restart = [r for r in spans if r["restart"]]
    if restart:
        axes.plot([r["t"] for r in restart], [r["pps"] for r in restart], "x", color="black", linestyle="none",
                  label="kill -9 and restart (left out)")
    axes.set_xlabel("seconds since the first page")
    axes.set_ylabel("pages/s")
    axes.set_ylim(bottom=0)
    axes.set_title(title)
    axes.legend(fontsize="small", ncol=3, loc="lower center")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--pages", type=int, required=True, help="pages of the synthetic web")
    parser.add_argument("--hosts", type=int, default=8, help="loopback hosts it spreads over (default 8)")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--seen", choices=("drum", "exact", "bloom"), default="drum")
    parser.add_argument("--url-cache", metavar="POLICY:SIZE", help="the crawl's --url-cache")
    parser.add_argument("--je-cache-mb", type=int, metavar="MB", help="the crawl's --je-cache-mb (default: the crawl's)")
    parser.add_argument("--kill-at", type=int, metavar="K", help="kill -9 the crawl at K pages, then restart it")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--window", type=int, help="pages per reported window (default pages/20, at least 500)")
    parser.add_argument("--sample", type=float, default=1.0, help="seconds between readings")
    parser.add_argument("--limit", type=float, default=36_000.0, help="seconds the crawl may run at most")
    parser.add_argument("--state", type=Path, help="the crawl's state folder (default: a temporary one)")
    parser.add_argument("--plot", type=Path, metavar="FILE", help="write pages/s and RSS against pages to FILE")
    parser.add_argument("--interval", type=float, default=10.0, help="seconds per interval of the stall figures")
    parser.add_argument("--plot-time", type=Path, metavar="FILE",
                        help="write pages/s per interval against time, dips marked by cause, to FILE")
    args = parser.parse_args(argv)
    args.window = args.window or max(500, args.pages // 20)
    try:
        web = SyntheticWeb(args.pages, args.hosts, args.seed)
    except BadInput as exc:
        print(f"scale.py: {exc}", file=sys.stderr)
        return 2
    if args.kill_at is not None and not 0 < args.kill_at < args.pages:
        print("scale.py: --kill-at must be between 0 and --pages", file=sys.stderr)
        return 2
    began = time.perf_counter()
    truth = web.truth()
    truth_s = time.perf_counter() - began
    print(f"ground truth: {len(truth.pages):,} pages, {len(truth.redirects):,} redirects, "
          f"{len(truth.missing):,} missing pages reachable ({truth_s:.1f} s)", flush=True)
    with tempfile.TemporaryDirectory(prefix="scale-") as scratch, SyntheticServer(web) as server:
        state = args.state or Path(scratch) / "state"
        state.parent.mkdir(parents=True, exist_ok=True)
        run = ScaleRun(web, server, state, args)
        process = run.run()
        if process.returncode not in (0, None) and not run.limited:
            print(f"scale.py: the crawl ended with {process.returncode}; see {state.with_suffix('.out')}",
                  file=sys.stderr)
            print(state.with_suffix(".out").read_text()[-2000:], file=sys.stderr)
            return 1
        verdict = judge(*fetched_urls(state / "crawl.log", web, server.port), truth)
        samples = run.samples
    rows = run.rows
    seconds = samples[-1].at - samples[0].at
    server_cpu = cpu_used(samples, "server", False)  # its start-up left out
    crawl_cpu = cpu_used(samples, "crawl", True) + cpu_used(samples, "workers", True)
    pps = [r["pps"] for r in rows if not r["partial"]]
    figures = {"pages": args.pages, "hosts": args.hosts, "seen": args.seen, "url_cache": args.url_cache or "none",
               "je_cache_mb": args.je_cache_mb,
               **verdict, "seconds": round(seconds, 1), "pps": round(verdict["fetches"] / seconds),
               "first_window_pps": round(pps[0]) if pps else 0, "worst_window_pps": round(min(pps)) if pps else 0,
               "median_window_pps": round(statistics.median(pps)) if pps else 0,
               "peak_rss_mb": max(sum(s.procs[n][1] for n in ("crawl", "workers", "server")) for s in samples),
               "peak_crawl_rss_mb": max(s.procs["crawl"][1] + s.procs["workers"][1] for s in samples),
               "server_cpu_share": round(server_cpu / max(server_cpu + crawl_cpu, 1e-9), 3),
               "server_ms_per_fetch": round(1000 * server_cpu / max(verdict["fetches"], 1), 3),
               "je_log_bytes_per_url": round(rows[-1]["log_b_per_url"]) if rows else 0,
               "je_cache_misses": samples[-1].stats["je_cache_misses"],
               "truth_s": round(truth_s, 1)}
    if run.limited:
        figures["stopped_at_limit_s"] = round(args.limit)
    if run.kill:
        full = run.full_speed()
        figures |= run.kill | {"full_speed_s": round(full, 1) if full is not None else "never"}
    spans = intervals(samples, args.interval, run.restarted or None)
    stall = stalls(rows, spans)
    for dip in stall["dips"]:
        print(f"dip at {dip['t']:.0f} s: {dip['pps']:.0f} pages/s ({dip['pps'] / stall['median']:.2f}x the median "
              f"window), flushes {100 * dip['flush_share']:.0f}% of it; beside it: {', '.join(dip['causes'])}")
    figures |= {"worst_window_vs_median": round(stall["worst_window_ratio"], 2),
                "worst_interval_vs_median": round(stall["worst_interval_ratio"], 2),
                "dips": len(stall["dips"]), "stalls": len(stall["stalled"]), "intervals": len(spans)}
    if args.plot_time:
        plot_time(spans, stall["median"], args.plot_time,
                  f"synthetic web of {args.pages:,} pages, --seen {args.seen}: pages/s per {args.interval:g} s")
    if args.plot:
        plot(rows, args.plot, f"synthetic web of {args.pages:,} pages on {args.hosts} hosts, --seen {args.seen}"
             + (f", --je-cache-mb {args.je_cache_mb}" if args.je_cache_mb else ""),
             run.kill.get("kill_pages"))
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
