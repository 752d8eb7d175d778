"""The workload of ``scripts/bench/runtimes.py``: the same operations under whichever Python runs
it, CPython (with numpy, as users run it) or GraalPy (pycrawler's numpy-free paths), so no numpy
here. The driver runs it in a child process per runtime:

    .venv/bin/python scripts/bench/runtimes_work.py --records 1000000
    scripts/graalpy scripts/bench/runtimes_work.py --records 20000

Operations, each timed in --warmup + --rounds rounds on fresh data:

- ``put_many_items``: --records 16-byte keys and 100-byte values written with ``put_many`` in
  batches of 10,000 into a new database, then read back with ``items()``;
- ``put_one``, ``get_one``: a tenth of --records written with ``Database.put`` one record at a
  time, then read with ``Database.get`` one at a time (one Java call per record: a JNI crossing
  under JPype, a Latin-1 string each way under GraalPy);
- ``heritrix_seen``: --records URLs keyed with Heritrix's ``create_keys`` and looked up in the
  ``alreadySeenUrl`` database (LongBinding keys) of a real Heritrix state, 100,000 a batch as
  ``pycrawler heritrix seen`` does; the URLs are the state's own 1,000 (canonicalised before the
  clock starts; 500 of them seen), then those with ``?r=N`` appended, which are not;
- ``bloom_add``: --records random 64-bit keys into a new blocked ``BloomFilter`` (1% false
  positives), 100,000 a call to ``add_many``.

Prints one JSON object: the runtime, the record count, and each operation's items and its round
times in seconds (warm-up rounds first).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT.parent / "shared" / "fixtures" / "je7-heritrix-layout"
sys.path.insert(0, str(ROOT))

from pycrawler import jvm  # noqa: E402
from pycrawler.heritrix.state import HeritrixState  # noqa: E402
from pycrawler.keys.heritrix_canon import canonicalize_many  # noqa: E402
from pycrawler.keys.heritrix_fp import create_keys  # noqa: E402
from pycrawler.seen import BloomFilter  # noqa: E402
from pycrawler.store import Environment  # noqa: E402
from pycrawler.store.packing import as_list  # noqa: E402

BATCH = 10_000
SEEN_BATCH = 100_000  # as pycrawler/cli/heritrix.py's seen
BLOOM_BATCH = 100_000


def rounds_of(operation, count: int) -> list[float]:
    times = []
    for run in range(count):
        start = time.perf_counter()
        operation(run)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds after the warm-up")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first")
    parser.add_argument("--heritrix", type=Path, default=FIXTURE, help="a Heritrix state (default: %(default)s)")
    parser.add_argument("--urls", type=Path, help="its URLs, one a line (default: the state's .urls.txt)")
    args = parser.parse_args()
    args.urls = args.urls or args.heritrix.with_name(args.heritrix.name + ".urls.txt")
    n, single, count = args.records, max(1, args.records // 10), args.warmup + args.rounds
    rnd = random.Random(1)
    records = [(rnd.getrandbits(128).to_bytes(16, "big"), rnd.randbytes(100)) for _ in range(n)]
    bloom_keys = [rnd.getrandbits(64) for _ in range(n)]
    canonical = canonicalize_many(args.urls.read_text("utf-8").split())
    urls = [url if i < len(canonical) else f"{url}?r={i}"
            for i, url in ((i, canonical[i % len(canonical)]) for i in range(n))]
    work = Path(tempfile.mkdtemp(prefix="bench-runtimes-"))
    try:
        shutil.copytree(args.heritrix, work / "heritrix")
        # The Heritrix state first: its log version chooses the JE this process loads (JE 18,
        # which writes the new store too).
        state = HeritrixState.open(work / "heritrix")
        env = Environment(work / "store", create=True, transactional=False)

        def put_many_items(run: int) -> None:
            db = env.open_database(f"batched{run}", create=True)
            for i in range(0, n, BATCH):
                chunk = records[i:i + BATCH]
                db.put_many([k for k, _ in chunk], [v for _, v in chunk])
            assert sum(1 for _ in db.items()) == n
            db.close()

        singles: dict[int, object] = {}

        def put_one(run: int) -> None:
            db = singles[run] = env.open_database(f"single{run}", create=True)
            for key, value in records[:single]:
                db.put(key, value)

        def get_one(run: int) -> None:
            db = singles.pop(run)
            for key, value in records[:single]:
                assert db.get(key) == value
            db.close()

        def hits_among(batch: list[str]) -> int:
            return sum(as_list(state.contains_keys(create_keys(batch))))

        # The state's own URLs (half of them seen), counted once: the rest are new.
        expected_hits = hits_among(urls[:len(canonical)])

        def heritrix_seen(_run: int) -> None:
            hits = sum(hits_among(urls[i:i + SEEN_BATCH]) for i in range(0, n, SEEN_BATCH))
            assert hits == expected_hits, (hits, expected_hits)

        def bloom_add(run: int) -> None:
            table = BloomFilter.create(work / f"b{run}.bloom", capacity=n, fpr=0.01)
            for i in range(0, n, BLOOM_BATCH):
                table.add_many(bloom_keys[i:i + BLOOM_BATCH])
            table.close()

        times = {"put_many_items": rounds_of(put_many_items, count)}
        times["put_one"] = rounds_of(put_one, count)
        times["get_one"] = rounds_of(get_one, count)
        times["heritrix_seen"] = rounds_of(heritrix_seen, count)
        times["bloom_add"] = rounds_of(bloom_add, count)
        state.close()
        env.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    items = {"put_many_items": n, "put_one": single, "get_one": single, "heritrix_seen": n, "bloom_add": n}
    json.dump({"runtime": jvm.RUNTIME, "python": sys.version.split()[0], "records": n, "warmup": args.warmup,
               "operations": {name: {"items": items[name], "seconds": times[name]} for name in times}},
              sys.stdout)
    print()


if __name__ == "__main__":
    main()
