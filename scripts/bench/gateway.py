#!/usr/bin/env python3
"""Benchmark the py4j gateway against in-process JPype on the same workload.

    .venv/bin/python scripts/bench/gateway.py --records 200000 --batch 10000 --repeat 5

The same records (``--records`` random 16-byte keys, 100-byte values) go into a fresh
database and are read back, in batches of ``--batch``, two ways, side by side in each
repetition:

- in process: ``Database.put_many`` / ``get_many`` on an ``Environment`` of this process
  (JPype, one JNI crossing per batch);
- gateway: the same calls on ``pycrawler.store.open("py4j://...")`` against a
  ``pycrawler serve`` process started here (one socket round trip per batch).

Then per-record round trips: ``--single`` records through ``Database.put`` / ``get``, one
call each, both ways (what a hot path must not do). Then a work-queue frontier's ``pending``
of ``--census-urls`` keys in ``--queues`` queues: its census (``Database.queue_census``, what
``frontier stats`` of a served crawl runs) timed both ways, and the gateway's batched put
measured again while a second client runs censuses back to back (what reading a live crawl's
statistics costs its writer). Both environments have the project's
defaults (transactional, JE's durability: sync at commit, the default heap); no transaction is
passed, so each batch commits once. Rates are records per second of wall time, medians of
``--repeat`` runs; the last line is ``key=value`` figures, with the load average.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pycrawler import jvm, store


def workload(records: int, seed: int = 15) -> tuple[list[bytes], list[bytes]]:
    rng = np.random.default_rng(seed)
    keys = [bytes(row) for row in rng.integers(0, 256, size=(records, 16), dtype=np.uint8)]
    values = [bytes(row) for row in rng.integers(0, 256, size=(records, 100), dtype=np.uint8)]
    return keys, values


def batched(db, keys, values, batch: int) -> tuple[float, float]:
    """(put rate, get rate) of ``keys``/``values`` in batches of ``batch``."""
    start = time.perf_counter()
    for at in range(0, len(keys), batch):
        db.put_many(keys[at:at + batch], values[at:at + batch])
    put = time.perf_counter() - start
    start = time.perf_counter()
    for at in range(0, len(keys), batch):
        got = db.get_many(keys[at:at + batch])
        assert got == values[at:at + batch]
    get = time.perf_counter() - start
    return len(keys) / put, len(keys) / get


def single(db, keys, values) -> tuple[float, float]:
    start = time.perf_counter()
    for key, value in zip(keys, values):
        db.put(key, value)
    put = time.perf_counter() - start
    start = time.perf_counter()
    for key in keys:
        db.get(key)
    get = time.perf_counter() - start
    return len(keys) / put, len(keys) / get


def pending_keys(urls: int, queues: int) -> list[bytes]:
    """Keys laid out as a work-queue frontier's: class key, 0x00, directive, precedence, ordinal."""
    return sorted(b"host%d.example\x00" % (i % queues) + b"\x03\x01" + i.to_bytes(6, "big") for i in range(urls))


def timed_census(db) -> float:
    start = time.perf_counter()
    db.queue_census()
    return time.perf_counter() - start


def put_under_census(db, census_db, keys, values, batch: int) -> float:
    """Put rate of ``db`` while another thread (its own client) runs ``census_db``'s census in a loop."""
    done = threading.Event()

    def census_loop() -> None:
        while not done.is_set():
            census_db.queue_census()

    thread = threading.Thread(target=census_loop)
    thread.start()
    try:
        start = time.perf_counter()
        for at in range(0, len(keys), batch):
            db.put_many(keys[at:at + batch], values[at:at + batch])
        return len(keys) / (time.perf_counter() - start)
    finally:
        done.set()
        thread.join()


def serve(folder: Path, runtime: Path) -> tuple[subprocess.Popen, str]:
    env = os.environ | {"PYCRAWLER_RUNTIME_DIR": str(runtime)}
    process = subprocess.Popen([sys.executable, "-m", "pycrawler", "serve", str(folder), "--create"],
                               stdout=subprocess.PIPE, text=True, env=env)
    address = process.stdout.readline().strip()
    if not address.startswith("py4j://"):
        process.kill()
        raise SystemExit("pycrawler serve did not start")
    return process, address


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--single", type=int, default=2_000, help="records of the per-record runs")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--census-urls", type=int, default=500_000, help="keys of the census runs' pending")
    parser.add_argument("--queues", type=int, default=5_000, help="queues of the census runs' pending")
    args = parser.parse_args()

    keys, values = workload(args.records)
    work = Path(tempfile.mkdtemp(prefix="bench-gateway-"))
    os.environ["PYCRAWLER_RUNTIME_DIR"] = str(work / "run")
    server, address = serve(work / "served", work / "run")
    figures: dict[str, list[float]] = {}

    def note(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)

    try:
        jvm.start()
        with store.Environment(work / "local", create=True) as local, store.open(address) as remote, \
                store.open(address) as reader:
            warm = workload(20_000, seed=1)
            pending = pending_keys(args.census_urls, args.queues)
            for env in (local, remote):   # the JIT compiles JE and the bridge outside the timings
                batched(env.open_database("warm-up", create=True), *warm, args.batch)
                env.open_database("pending", create=True).put_many(pending, [b""] * len(pending))
            served_pending = reader.open_database("pending")
            for run in range(args.repeat):
                for name, env in (("local", local), ("gateway", remote)):
                    db = env.open_database(f"run-{run}", create=True)
                    put, get = batched(db, keys, values, args.batch)
                    note(f"{name}_put", put)
                    note(f"{name}_get", get)
                    put, get = single(env.open_database(f"single-{run}", create=True),
                                      keys[:args.single], values[:args.single])
                    note(f"{name}_single_put", put)
                    note(f"{name}_single_get", get)
                    note(f"{name}_census_ms", 1000 * timed_census(env.open_database("pending")))
                note("gateway_put_under_census", put_under_census(remote.open_database(f"census-{run}", create=True),
                                                                 served_pending, keys, values, args.batch))
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
        shutil.rmtree(work, ignore_errors=True)

    medians = {name: statistics.median(values) for name, values in figures.items()}
    print(f"records={args.records} batch={args.batch} repeat={args.repeat} JE {jvm.je_version()}")
    for op in ("put", "get"):
        print(f"batched {op}: in process {medians[f'local_{op}']:,.0f}/s, gateway {medians[f'gateway_{op}']:,.0f}/s "
              f"({medians[f'gateway_{op}'] / medians[f'local_{op}']:.0%})")
        print(f"per record {op}: in process {medians[f'local_single_{op}']:,.0f}/s, "
              f"gateway {medians[f'gateway_single_{op}']:,.0f}/s")
    print(f"census of {args.census_urls:,} keys in {args.queues:,} queues: in process {medians['local_census_ms']:.0f} ms, "
          f"gateway {medians['gateway_census_ms']:.0f} ms; gateway put while another client runs censuses "
          f"{medians['gateway_put_under_census']:,.0f}/s "
          f"({medians['gateway_put_under_census'] / medians['gateway_put']:.0%} of without)")
    ratios = {f"ratio_{op}": round(medians[f"gateway_{op}"] / medians[f"local_{op}"], 3) for op in ("put", "get")}
    ratios["ratio_put_under_census"] = round(medians["gateway_put_under_census"] / medians["gateway_put"], 3)
    load = "/".join(f"{x:.2f}" for x in os.getloadavg())
    print(" ".join([f"{name}={value:.0f}" for name, value in sorted(medians.items())]
                   + [f"{name}={value}" for name, value in ratios.items()] + [f"load={load}"]))


if __name__ == "__main__":
    main()
