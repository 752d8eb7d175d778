#!/usr/bin/env python3
"""Benchmark the store layer: one JNI call per record against one per batch, same process.

    .venv/bin/python scripts/bench/store.py --records 1000000 --repeat 3

Inserts ``--records`` 8-byte keys (random 63-bit integers, big-endian: ``u64_keys``) into a
fresh, empty database, three ways:

- per record: ``Database.put_if_absent(key, b"", txn)`` (or ``put`` with ``--op put``) once
  per key, in explicit transactions of ``Bulk.COMMIT_EVERY`` (50,000) records, so that it
  commits and holds locks exactly as often as the batched path does;
- bare call (random keys only): ``putNoOverwrite`` (``put``) of the JE ``Database`` called
  directly, its ``DatabaseEntry`` objects built beforehand and untimed: one JNI crossing per
  record and nothing else, the floor of any per-record path (``Database.put_if_absent`` also
  converts the key and value, which costs more than the call itself);
- batched: ``Database.put_if_absent_many`` (or ``put_many``) on keys packed with
  ``pack_fixed(u64_keys(...))``, ``--batch`` keys per call (default: all of them in one
  call), no transaction passed, so the bridge commits every 50,000 records (in key order).

All run on the same environment configuration, which is the project's default and is
printed: a transactional environment, JE's default durability (sync at commit), JE's
default cache (60% of the heap), the heap from ``PYCRAWLER_HEAP`` (default 1g). Packing is
inside the batched timing; turning numpy keys into ``bytes`` for the per-record loop is not.
Each timed run starts from an empty environment. Keys come in random order, then (second
figure) in sorted order. A small warm-up of both paths runs first, so that the JIT's
compilation of JE is not charged to the first repetition.

Rates are medians of ``--repeat`` runs of wall time; ``*_per_cpu_s`` and ``cpu_ratio`` use
the process's CPU time instead (all threads: Python, JVM, garbage collector, JE's daemons),
which moves less with other work on a shared machine. The last line is ``key=value`` figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pycrawler import jvm
from pycrawler.store import Environment
from pycrawler.store.packing import pack_fixed, u64_keys

WARM_UP_RECORDS = 50_000


def peak_rss_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def commit_slices(n: int) -> Iterator[slice]:
    """The stretches of records the batched path commits together (``Bulk.COMMIT_EVERY``)."""
    every = int(jvm.jclass("org.pycrawler.bridge.Bulk").COMMIT_EVERY)
    return (slice(start, start + every) for start in range(0, n, every))


def per_record(db, env, op: str, keys: list[bytes], values: list[bytes]) -> None:
    for part in commit_slices(len(keys)):
        with env.begin() as txn:
            if op == "put":
                for key, value in zip(keys[part], values[part]):
                    db.put(key, value, txn=txn)
            else:
                for key in keys[part]:
                    db.put_if_absent(key, b"", txn=txn)


def bare_calls(db, env, op: str, keys: list[bytes], values: list[bytes]) -> tuple[float, float]:
    """Wall and CPU seconds spent in the JE calls alone, entries built outside the timing."""
    entry, array = jvm.jclass("com.sleepycat.je.DatabaseEntry"), jvm.byte_array
    call = db.java.put if op == "put" else db.java.putNoOverwrite
    wall = cpu = 0.0
    for part in commit_slices(len(keys)):
        pairs = [(entry(array(k)), entry(array(v if op == "put" else b""))) for k, v in zip(keys[part], values[part])]
        began, began_cpu = time.perf_counter(), cpu_seconds()
        with env.begin() as txn:
            for key, value in pairs:
                call(txn.java, key, value)
        wall, cpu = wall + time.perf_counter() - began, cpu + cpu_seconds() - began_cpu
    return wall, cpu


def batched(db, op: str, keys: np.ndarray, values: np.ndarray, batch: int) -> None:
    for start in range(0, len(keys), batch):
        packed = pack_fixed(u64_keys(keys[start:start + batch]))
        if op == "put":
            db.put_many(packed, pack_fixed(u64_keys(values[start:start + batch])))
        else:
            db.put_if_absent_many(packed)


def in_fresh_store(workdir: Path, run):
    """``run(env, db)`` on an empty database of a new default environment."""
    path = Path(tempfile.mkdtemp(prefix="store-bench-", dir=workdir))
    try:
        with Environment(path, create=True) as env:
            return run(env, db=env.open_database("bench", create=True))
    finally:
        shutil.rmtree(path)


def cpu_seconds() -> float:
    """CPU time of the whole process: Python, the JVM's threads, its garbage collector."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed_in_fresh_store(workdir: Path, run) -> tuple[float, float]:
    """Wall and CPU seconds ``run(env, db)`` takes on an empty database of a new default
    environment."""
    def timed(env, db):
        wall, cpu = time.perf_counter(), cpu_seconds()
        run(env, db)
        return time.perf_counter() - wall, cpu_seconds() - cpu
    return in_fresh_store(workdir, timed)


def measure(keys: np.ndarray, op: str, batch: int, repeat: int, workdir: Path,
            bare: bool) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) seconds per repetition of each path (per record, bare call when ``bare``,
    batched), the paths alternating within each repetition."""
    values = keys[::-1].copy()
    key_bytes = [k.tobytes() for k in u64_keys(keys)]
    value_bytes = [v.tobytes() for v in u64_keys(values)]
    runs: dict[str, list[tuple[float, float]]] = {"per_record": [], "bare_call": [], "batched": []}
    for _ in range(repeat):
        runs["per_record"].append(timed_in_fresh_store(
            workdir, lambda env, db: per_record(db, env, op, key_bytes, value_bytes)))
        if bare:
            runs["bare_call"].append(in_fresh_store(
                workdir, lambda env, db: bare_calls(db, env, op, key_bytes, value_bytes)))
        runs["batched"].append(timed_in_fresh_store(workdir, lambda env, db: batched(db, op, keys, values, batch)))
    return {path: seconds for path, seconds in runs.items() if seconds}


def describe_environment(workdir: Path) -> str:
    path = Path(tempfile.mkdtemp(prefix="store-bench-", dir=workdir))
    try:
        with Environment(path, create=True) as env:
            config = env.java.getConfig()
            cache_mb = int(env.java.getMutableConfig().getCacheSize()) >> 20
            return (f"JE {jvm.je_version()}, Java {jvm.java_version()}, JVM {' '.join(jvm.jvm_options())}, "
                    f"transactional={bool(config.getTransactional())}, "
                    f"durability=JE default (sync at commit), JE cache {cache_mb} MB")
    finally:
        shutil.rmtree(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="keys inserted per timed run")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions; rates are medians")
    parser.add_argument("--batch", type=int, default=None, help="keys per batched call (default: all)")
    parser.add_argument("--op", choices=("put_if_absent", "put"), default="put_if_absent",
                        help="put_if_absent: empty values (a URL-seen set); put: 8-byte values, overwriting")
    parser.add_argument("--workdir", type=Path, default=None, help="where the scratch environments go")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    args.batch = args.batch or args.records
    workdir = args.workdir or Path(tempfile.gettempdir())
    workdir.mkdir(parents=True, exist_ok=True)

    print(f"environment: {describe_environment(workdir)}", flush=True)
    print(f"op={args.op} records={args.records} batch={args.batch} repeat={args.repeat} "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    rng = np.random.default_rng(args.seed)
    measure(rng.integers(0, 2**63, WARM_UP_RECORDS, dtype=np.uint64), args.op, WARM_UP_RECORDS, 1, workdir, True)

    figures: dict[str, object] = {}
    keys = rng.integers(0, 2**63, args.records, dtype=np.uint64)
    for order, prefix in (("random", ""), ("sorted", "sorted_")):
        ordered = np.sort(keys) if order == "sorted" else keys
        runs = measure(ordered, args.op, args.batch, args.repeat, workdir, bare=order == "random")
        rates = {path: args.records / statistics.median(wall for wall, _ in r) for path, r in runs.items()}
        cpu_rates = {path: args.records / statistics.median(cpu for _, cpu in r) for path, r in runs.items()}
        figures[f"{prefix}per_record_puts_per_s"] = round(rates["per_record"])
        figures[f"{prefix}batched_puts_per_s"] = round(rates["batched"])
        figures[f"{prefix}ratio"] = round(rates["batched"] / rates["per_record"], 1)
        figures[f"{prefix}cpu_ratio"] = round(cpu_rates["batched"] / cpu_rates["per_record"], 1)
        figures[f"{prefix}batched_puts_per_cpu_s"] = round(cpu_rates["batched"])
        if "bare_call" in rates:
            figures["bare_call_puts_per_s"] = round(rates["bare_call"])
            figures["ratio_to_bare_call"] = round(rates["batched"] / rates["bare_call"], 1)
        print(f"{order} keys: " + "; ".join(
            f"{path.replace('_', ' ')} {rates[path]:,.0f}/s (runs {', '.join(f'{w:.2f}' for w, _ in r)} s wall, "
            f"{', '.join(f'{c:.2f}' for _, c in r)} s CPU)" for path, r in runs.items())
            + f"; ratio {rates['batched'] / rates['per_record']:.1f}", flush=True)
    figures["op"] = args.op
    figures["records"] = args.records
    figures["load_average"] = round(os.getloadavg()[0], 1)
    figures["peak_rss_mb"] = peak_rss_mb()
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
