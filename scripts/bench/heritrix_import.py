#!/usr/bin/env python3
"""Benchmark ``heritrix import --recover-log``: a Heritrix 3 state and its journal into a crawl state.

    .venv/bin/python scripts/bench/heritrix_import.py --seen 10000000 --pending 1000000

Generates, under ``--out`` (default ``bench-output/heritrix-import``, git-ignored), a JE 7.5
store in Heritrix 3's layout and the frontier journal that goes with it, then imports it the
way ``pycrawler heritrix import STATE --recover-log logs/ --into DIR`` does:

- ``--seen`` URLs were scheduled, one in ``seen / pending`` of them is still pending (its key in
  ``pending``: its host's queue, directive 3, precedence 1, its schedule number as ordinal;
  the value is the URL's bytes where Heritrix keeps a Kryo CrawlURI), the others finished;
  every URL's ``createKey`` is in ``alreadySeenUrl``;
- the journal has an ``F+`` line per URL in schedule order and an ``Fs`` line per finished
  one (written ``--lag`` lines after its ``F+``, as fetches finish behind the schedule), in
  two parts: one rotated at a checkpoint, then the current file;
- URLs: ``http://hostQ.example/dirD/pageI.html`` over ``--queues`` hosts.

The JE is ``--je-jar`` (default JE 18.3.12 from target/je/, which writes a log as new as
Heritrix 3's; a Heritrix 3 ``lib/`` or its ``je-7.5.11.jar`` works too): generation and import
run in this one process. Timed: the journal replay
on its own, then the whole import (replay again, pairing with the keys, restoring the pending
URLs, the seen keys into DRUM), in wall seconds, and the import's CPU seconds (all threads of
the process, the JVM's included). The last line is ``key=value`` figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

BATCH = 1 << 20


def url(i: int, queues: int) -> str:
    return f"http://host{i % queues}.example/dir{i // 7919 % 100}/page{i}.html"


def generate(out: Path, seen: int, pending: int, queues: int, lag: int) -> None:
    import numpy as np

    from pycrawler.heritrix.journal import ADDED, SUCCESS, journal_line, write_journal
    from pycrawler.heritrix.migrate import heritrix_keys
    from pycrawler.heritrix.state import long_binding
    from pycrawler.progress import meter
    from pycrawler.store import Environment
    from pycrawler.store.packing import pack, pack_fixed

    every = max(seen // pending, 1)
    is_pending = lambda i: i % every == 0 and i // every < pending  # noqa: E731
    with Environment(out / "state", create=True, transactional=False) as env:
        queued = env.open_database("pending", create=True)
        queued.put_many(pack([f"host{q}.example".encode() + b"\x00" for q in range(queues)]),
                        pack([b""] * queues))
        seen_db = env.open_database("alreadySeenUrl", create=True)
        with meter("generate state", total=seen, unit="URLs") as bar:
            for start in range(0, seen, BATCH):
                numbers = range(start, min(start + BATCH, seen))
                urls = [url(i, queues) for i in numbers]
                keys = np.sort(heritrix_keys(urls) ^ np.uint64(1 << 63)) ^ np.uint64(1 << 63)  # LongBinding order
                seen_db.put_many(pack_fixed(long_binding(keys)), pack([b""] * len(keys)))
                mine = [(i, u) for i, u in zip(numbers, urls) if is_pending(i)]
                queued.put_many(pack([f"host{i % queues}.example".encode() + b"\x00\x03\x01"
                                      + (i + 1).to_bytes(6, "big") for i, _ in mine]),
                                pack([u.encode() for _, u in mine]))
                bar.update(len(numbers))
    logs = out / "logs"
    logs.mkdir()

    def lines(numbers: range):
        for i in numbers:
            yield journal_line(ADDED, url(i, queues), "L", "http://seed.example/")
            done = i - lag
            if done >= 0 and not is_pending(done):
                yield journal_line(SUCCESS, url(done, queues), "L", "http://seed.example/")

    def tail():
        yield from lines(range(seen // 2, seen))
        for done in range(max(seen - lag, 0), seen):
            if not is_pending(done):
                yield journal_line(SUCCESS, url(done, queues), "L", "http://seed.example/")

    with open(logs / "frontier.recover.gz.cp00001-20201122100000", "wb") as part:
        write_journal(part, lines(range(seen // 2)))
    with open(logs / "frontier.recover.gz", "wb") as current:
        write_journal(current, tail())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seen", type=int, default=10_000_000, help="URLs in alreadySeenUrl (all scheduled)")
    parser.add_argument("--pending", type=int, default=1_000_000, help="of them still pending")
    parser.add_argument("--queues", type=int, default=10_000, help="hosts (Heritrix queues)")
    parser.add_argument("--lag", type=int, default=10_000, help="journal lines between a URL's F+ and its Fs")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-output" / "heritrix-import")
    parser.add_argument("--je-jar", default=str(ROOT / "target" / "je" / "je-18.3.12.jar"))
    parser.add_argument("--keep", action="store_true", help="reuse a state and journal generated before")
    args = parser.parse_args()
    os.environ["PYCRAWLER_CLASSPATH"] = args.je_jar

    from pycrawler.heritrix.journal import replay_path
    from pycrawler.heritrix.migrate import import_state
    from pycrawler.heritrix.state import HeritrixState

    source = args.out / "source"
    if not (args.keep and (source / "logs" / "frontier.recover.gz").is_file()):
        shutil.rmtree(source, ignore_errors=True)
        source.mkdir(parents=True)
        started = time.perf_counter()
        generate(source, args.seen, args.pending, args.queues, args.lag)
        print(f"generated {args.seen:,} seen, {args.pending:,} pending in {time.perf_counter() - started:.1f} s",
              file=sys.stderr)
    journal_mb = sum(p.stat().st_size for p in (source / "logs").iterdir()) / 1e6

    started = time.perf_counter()
    journal = replay_path(source / "logs", progress=None)  # live on a terminal
    replay_s = time.perf_counter() - started
    lines = journal.lines
    del journal

    into = args.out / "imported"
    shutil.rmtree(into, ignore_errors=True)
    started, cpu = time.perf_counter(), time.process_time()
    with HeritrixState.open(source / "state") as state:
        manifest = import_state(state, into, recover_log=source / "logs", progress=None)  # live on a terminal
    import_s, import_cpu_s = time.perf_counter() - started, time.process_time() - cpu
    placed, imported, keys = manifest["recover_log"]["placed"], manifest["frontier"]["urls"], manifest["seen"]["keys"]
    assert placed == imported == args.pending and keys == args.seen, manifest
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"seen={keys} pending={imported} journal_lines={lines} journal_mb={journal_mb:.0f} "
          f"replay_s={replay_s:.1f} replay_lines_per_s={lines / replay_s:.0f} import_s={import_s:.1f} "
          f"import_cpu_s={import_cpu_s:.1f} "
          f"pending_urls_per_s={imported / import_s:.0f} seen_keys_per_s={keys / import_s:.0f} "
          f"peak_rss_mb={rss_mb:.0f}")


if __name__ == "__main__":
    main()
