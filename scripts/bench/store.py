#!/usr/bin/env python3
"""Benchmark the store layer: one JNI call per record against one per batch, same process.

    .venv/bin/python scripts/bench/store.py --records 1000000 --repeat 3

Inserts ``--records`` 8-byte keys (random 63-bit integers, big-endian: ``u64_keys``) into a
fresh, empty database, two ways:

- per record: ``Database.put_if_absent(key, b"", txn)`` (or ``put`` with ``--op put``) once
  per key, all inside one explicit transaction, one commit;
- batched: ``Database.put_if_absent_many`` (or ``put_many``) on keys packed with
  ``pack_fixed(u64_keys(...))``, ``--batch`` keys per call (default: all of them in one
  call), each call in the batch's own transaction, one commit per call.

Both run on the same environment configuration, which is the project's default and is
printed: a transactional environment, JE's default durability (sync at commit), JE's
default cache (60% of the heap), the heap from ``PYCRAWLER_HEAP`` (default 1g). Packing is
inside the batched timing; turning numpy keys into ``bytes`` for the per-record loop is not.
Each timed run starts from an empty environment. Keys come in random order, then (second
figure) in sorted order. A small warm-up of both paths runs first, so that the JIT's
compilation of JE is not charged to the first repetition.

Rates are medians of ``--repeat`` runs; the last line is ``key=value`` figures.
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
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pycrawler import jvm  # noqa: E402
from pycrawler.store import Environment  # noqa: E402
from pycrawler.store.packing import pack_fixed, u64_keys  # noqa: E402

WARM_UP_RECORDS = 50_000


def peak_rss_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def per_record(db, env, op: str, keys: list[bytes], values: list[bytes]) -> None:
    with env.begin() as txn:
        if op == "put":
            for key, value in zip(keys, values):
                db.put(key, value, txn=txn)
        else:
            for key in keys:
                db.put_if_absent(key, b"", txn=txn)


def batched(db, op: str, keys: np.ndarray, values: np.ndarray, batch: int) -> None:
    for start in range(0, len(keys), batch):
        packed = pack_fixed(u64_keys(keys[start:start + batch]))
        if op == "put":
            db.put_many(packed, pack_fixed(u64_keys(values[start:start + batch])))
        else:
            db.put_if_absent_many(packed)


def timed_in_fresh_store(workdir: Path, run) -> float:
    """Seconds ``run(env, db)`` takes on an empty database of a new default environment."""
    path = Path(tempfile.mkdtemp(prefix="store-bench-", dir=workdir))
    try:
        with Environment(path, create=True) as env:
            db = env.open_database("bench", create=True)
            start = time.perf_counter()
            run(env, db)
            return time.perf_counter() - start
    finally:
        shutil.rmtree(path)


def measure(keys: np.ndarray, op: str, batch: int, repeat: int, workdir: Path) -> tuple[list[float], list[float]]:
    """Seconds per repetition for the per-record and the batched path, alternating."""
    values = keys[::-1].copy()
    key_bytes = [k.tobytes() for k in u64_keys(keys)]
    value_bytes = [v.tobytes() for v in u64_keys(values)]
    singles, batches = [], []
    for _ in range(repeat):
        singles.append(timed_in_fresh_store(workdir, lambda env, db: per_record(db, env, op, key_bytes, value_bytes)))
        batches.append(timed_in_fresh_store(workdir, lambda env, db: batched(db, op, keys, values, batch)))
    return singles, batches


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
    measure(rng.integers(0, 2**63, WARM_UP_RECORDS, dtype=np.uint64), args.op, WARM_UP_RECORDS, 1, workdir)

    figures: dict[str, object] = {}
    keys = rng.integers(0, 2**63, args.records, dtype=np.uint64)
    for order, prefix in (("random", ""), ("sorted", "sorted_")):
        ordered = np.sort(keys) if order == "sorted" else keys
        singles, batches = measure(ordered, args.op, args.batch, args.repeat, workdir)
        single_rate = args.records / statistics.median(singles)
        batch_rate = args.records / statistics.median(batches)
        figures[f"{prefix}per_record_puts_per_s"] = round(single_rate)
        figures[f"{prefix}batched_puts_per_s"] = round(batch_rate)
        figures[f"{prefix}ratio"] = round(batch_rate / single_rate, 1)
        print(f"{order} keys: per record {single_rate:,.0f}/s (runs {', '.join(f'{s:.2f}' for s in singles)} s), "
              f"batched {batch_rate:,.0f}/s (runs {', '.join(f'{s:.2f}' for s in batches)} s), "
              f"ratio {batch_rate / single_rate:.1f}", flush=True)
    figures["op"] = args.op
    figures["records"] = args.records
    figures["load_average"] = round(os.getloadavg()[0], 1)
    figures["peak_rss_mb"] = peak_rss_mb()
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
