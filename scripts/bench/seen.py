#!/usr/bin/env python3
"""URL-seen at scale: DRUM on JE against the exact per-key JE set, the sized Bloom filter and
a Python set, on one stream of check+update operations over 64-bit keys.

    scripts/bench/seen.py --ops 100000000 --distinct 60000000 --plot seen.png

The stream (the same for every engine): ``--ops`` operations in batches of ``--batch``, over
exactly ``--distinct`` keys (splitmix64 of an id), new ids mixed with repeats of earlier ones
in random order. Each engine runs in its own subprocess so its peak RSS is its own. Engines
too slow for the whole stream run a prefix (``--exact-ops``, ``--set-ops``); the ratio compares
DRUM's throughput over the whole run with the exact set's over its (smaller, so kinder) prefix.
DRUM's time includes the final ``synchronize()``: every operation merged and dispatched.

After DRUM's line, a row per merge round: where the round's time went (see ``print_rounds``)
as the repository grew. Last line: ``drum_ops_per_s=... exact_ops_per_s=... bloom_ops_per_s=...
set_ops_per_s=... ratio=... peak_rss_mb=... drum_rounds=... drum_disk_bytes_per_key=...``
(peak_rss_mb: DRUM's process; disk bytes: its JE log over the distinct keys).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent.parent
ENGINES = ("drum", "exact", "bloom", "set")
GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def splitmix64(x: np.ndarray) -> np.ndarray:
    z = x * GOLDEN + GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def stream(ops: int, distinct: int, batch: int, seed: int = 7):
    """Batches of (keys, distinct keys seen so far, including this batch)."""
    rng = np.random.default_rng(seed)
    new = 0
    for start in range(0, ops, batch):
        size = min(batch, ops - start)
        upto = (start + size) * distinct // ops
        fresh = np.arange(new, upto, dtype=np.uint64)
        repeats = rng.integers(0, max(upto, 1), size - len(fresh), dtype=np.uint64)
        ids = np.concatenate([fresh, repeats])
        rng.shuffle(ids)
        new = upto
        yield splitmix64(ids), new


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def folder_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def make_engine(name: str, workdir: Path, distinct: int):
    """(add(keys), finish(), figures()) for one engine; figures() is None, or DRUM's timings and
    disk use when a merge round ended since the last call."""
    sys.path.insert(0, str(ROOT))
    if name == "drum":
        from pycrawler.seen.drum import Dispatcher, Drum

        class CountUnique(Dispatcher):
            unique = 0

            def unique_key_update(self, keys, values, aux):
                self.unique += len(keys)

        counter = CountUnique()
        drum = Drum(workdir / "drum", counter)
        reported = [0]

        def disk() -> dict:
            return {"repository_bytes": folder_bytes(workdir / "drum" / "repository")}

        def figures():
            if drum.rounds == reported[0]:
                return None
            reported[0] = drum.rounds
            return drum.timings() | disk()

        def finish():
            drum.synchronize()
            last = drum.timings() | disk()
            drum.close()
            return {"unique": counter.unique, "figures": last}

        return drum.check_update_many, finish, figures
    if name == "exact":
        from pycrawler.seen.exact import ExactVisited
        from pycrawler.store import Environment

        env = Environment(workdir / "exact", create=True, durability="write_no_sync")
        table = ExactVisited(env)

        def finish():
            table.close()
            env.close()
            return {}

        return table.add_many, finish, lambda: None
    if name == "bloom":
        from pycrawler.seen.bloom import BloomFilter

        bloom = BloomFilter.create(workdir / "bloom.bin", capacity=distinct, fpr=0.01)
        return bloom.add_many, lambda: (bloom.close(), {})[1], lambda: None
    seen: set[int] = set()

    def add(keys):
        # check+update, one key at a time: what a Python dupefilter does
        new = []
        for k in keys.tolist():
            if k not in seen:
                seen.add(k)
                new.append(k)
        return new

    return add, lambda: {"unique": len(seen)}, lambda: None


def worker(args) -> None:
    """Run one engine on the first ``args.limit`` operations; JSON lines out."""
    add, finish, figures = make_engine(args.worker, Path(args.workdir), args.distinct)
    done, started = 0, time.perf_counter()
    for keys, distinct_so_far in stream(args.ops, args.distinct, args.batch):
        if done >= args.limit:
            break
        add(keys)
        done += len(keys)
        line = {"ops": done, "distinct": distinct_so_far, "t": time.perf_counter() - started}
        round_ended = figures()
        if round_ended is not None:
            line["round"] = round_ended
        print(json.dumps(line), flush=True)
    extra = finish()
    seconds = time.perf_counter() - started
    print(json.dumps({"done": done, "seconds": seconds, "ops_per_s": done / seconds, "peak_rss_mb": peak_rss_mb(),
                      **extra}), flush=True)


def run_engine(name: str, limit: int, args, workdir: Path) -> dict:
    env = dict(os.environ, PYCRAWLER_HEAP=args.heap)
    cmd = [sys.executable, __file__, "--worker", name, "--limit", str(limit), "--workdir", str(workdir),
           "--ops", str(args.ops), "--distinct", str(args.distinct), "--batch", str(args.batch)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"{name} failed:\n{proc.stderr[-3000:]}")
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    summary = lines[-1]
    summary["timeline"] = [line for line in lines[:-1]]
    print(f"{name:6s} {summary['done']:>12,} ops in {summary['seconds']:8.1f} s = {summary['ops_per_s']:>12,.0f} ops/s"
          f"   peak RSS {summary['peak_rss_mb']:7.0f} MB", flush=True)
    return summary


JAVA_STEPS = ("sort_s", "read_s", "merge_s", "write_s", "commit_s")


def print_rounds(summary: dict) -> None:
    """DRUM's merge rounds one by one: where the time went as the repository grew. ``wall``
    is the time since the previous round ended; ``in round`` the part of it spent merging
    (Java's sort, block reads, merge, block writes and commits, then ``jni`` the rest of the
    merge calls: arrays crossing JNI; ``files`` reading bucket files back, ``dispatch``); the
    rest of ``wall`` is submitting operations (bucketing in numpy, ``spill`` to files)."""
    rounds = [dict(line["round"], ops=line["ops"], distinct=line["distinct"], t=line["t"])
              for line in summary["timeline"] if "round" in line]
    rounds.append(dict(summary["figures"], ops=summary["done"], distinct=summary["unique"], t=summary["seconds"]))
    columns = ("wall", "in round", *(step[:-2] for step in JAVA_STEPS), "jni", "files", "dispatch", "spill")
    print(f"{'round':>5} {'ops M':>6} {'keys M':>7} {'JE GB':>6} {'B/key':>6} " + " ".join(f"{c:>8}" for c in columns)
          + f" {'GB written':>10}", flush=True)
    prev = {"t": 0.0}
    for number, now in enumerate(rounds, 1):
        spent = {name: now[name] - prev.get(name, 0) for name in now if isinstance(now[name], (int, float))}
        java = sum(spent[step] for step in JAVA_STEPS)
        merging = spent["merge_call_s"] + spent["bucket_read_s"] + spent["dispatch_s"]
        cells = (spent["t"], merging, *(spent[step] for step in JAVA_STEPS), spent["merge_call_s"] - java,
                 spent["bucket_read_s"], spent["dispatch_s"], spent["spill_s"])
        label = number if number < len(rounds) else "end"
        print(f"{label:>5} {now['ops'] / 1e6:6.0f} {now['distinct'] / 1e6:7.1f} {now['repository_bytes'] / 1e9:6.2f} "
              f"{now['repository_bytes'] / max(now['distinct'], 1):6.1f} " + " ".join(f"{c:8.1f}" for c in cells)
              + f" {spent['bytes_written'] / 1e9:10.2f}", flush=True)
        prev = now


def plot(results: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    for name, summary in results.items():
        line = summary["timeline"]
        if len(line) < 2:
            continue
        step = max(1, len(line) // 40)
        points = line[::step]
        if points[-1] is not line[-1]:
            points.append(line[-1])
        xs, ys, prev = [], [], {"ops": 0, "t": 0.0}
        for p in points:
            if p["t"] > prev["t"]:
                xs.append(p["distinct"] / 1e6)
                ys.append((p["ops"] - prev["ops"]) / (p["t"] - prev["t"]) / 1e6)
            prev = p
        ax.plot(xs, ys, marker=".", label=f"{name} ({summary['ops_per_s'] / 1e6:.2f}M ops/s overall)")
    ax.set_xlabel("distinct keys so far (millions)")
    ax.set_ylabel("check+update throughput (M ops/s, submitted)")
    ax.set_yscale("log")
    ax.set_title("URL-seen: throughput vs repository size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=100_000_000)
    parser.add_argument("--distinct", type=int, default=60_000_000)
    parser.add_argument("--batch", type=int, default=1 << 20)
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--exact-ops", type=int, default=10_000_000, help="prefix the exact JE set runs")
    parser.add_argument("--set-ops", type=int, default=30_000_000, help="prefix the Python set runs (memory)")
    parser.add_argument("--heap", default="512m", help="JVM heap of the JE engines")
    parser.add_argument("--plot", help="PNG of throughput vs repository size")
    parser.add_argument("--json", help="write every figure and timeline here")
    parser.add_argument("--workdir", help="scratch folder (default: a temporary one, removed)")
    parser.add_argument("--worker", choices=ENGINES, help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    scratch = Path(args.workdir or tempfile.mkdtemp(prefix="bench-seen-"))
    limits = {"drum": args.ops, "exact": min(args.ops, args.exact_ops), "bloom": args.ops,
              "set": min(args.ops, args.set_ops)}
    results = {}
    try:
        for name in args.engines.split(","):
            folder = scratch / name
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            results[name] = run_engine(name, limits[name], args, folder)
            if name == "drum":
                print_rounds(results[name])
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        if not args.workdir:
            shutil.rmtree(scratch, ignore_errors=True)
    if args.plot:
        plot(results, args.plot)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    rate = {name: results[name]["ops_per_s"] if name in results else 0.0 for name in ENGINES}
    ratio = rate["drum"] / rate["exact"] if rate["exact"] else float("nan")
    drum = results.get("drum", {})
    disk = (f" drum_rounds={drum['figures']['rounds']} drum_disk_bytes_per_key="
            f"{drum['figures']['repository_bytes'] / max(drum['unique'], 1):.1f}" if drum else "")
    print(f"drum_ops_per_s={rate['drum']:.0f} exact_ops_per_s={rate['exact']:.0f} bloom_ops_per_s={rate['bloom']:.0f} "
          f"set_ops_per_s={rate['set']:.0f} ratio={ratio:.1f} "
          f"peak_rss_mb={drum.get('peak_rss_mb', 0):.0f}{disk}")


if __name__ == "__main__":
    main()
