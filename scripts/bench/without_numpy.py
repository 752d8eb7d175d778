#!/usr/bin/env python3
"""Benchmark the library half with numpy and without it (as under GraalPy), on the same input.

    .venv/bin/python scripts/bench/without_numpy.py --records 200000

Each operation runs in two child processes of this Python: one as usual, one where numpy and
numba cannot be imported (``sys.modules`` holds None for them before pycrawler is imported),
so pycrawler takes its plain-Python paths. Figures are items per second of wall time, the
best of ``--repeat`` runs, after one warm-up run (numba's compilation is not timed):

- ``put_many`` + ``items``: ``--records`` 16-byte keys and 100-byte values into a JE database
  in batches of 10,000, then read back in key order;
- ``todo``: ``--records`` CrawlUrls put into a TODO frontier (key order) and taken back,
  10,000 a batch (encoding, decoding, the packing of batches);
- ``md5_keys``, ``create_keys`` (Heritrix), ``xxh64_urls``: over the vectors' URLs repeated to
  ``--records`` (mean ~95 characters);
- ``bloom_add`` (blocked, 64-bit keys) and ``exact_add`` (the JE set), ``--records`` keys.

The last line is ``key=value`` figures, ``<operation>_numpy`` and ``<operation>_plain`` per
second.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WITHOUT_NUMPY = "import sys; sys.modules['numpy'] = sys.modules['numba'] = None\n"

CHILD = """
import json, random, shutil, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, ROOT)
n, repeat, vectors = json.load(sys.stdin)
lines = Path(vectors).read_bytes().decode("utf-8").split("\\n")[:-1]
sample = [u for u in (line.split("\\t", 4)[4] for line in lines) if u]
urls = (sample * (n // len(sample) + 1))[:n]
rnd = random.Random(1)
keys = [rnd.getrandbits(64) for _ in range(n)]
work = Path(tempfile.mkdtemp(prefix="bench-plain-"))

def best(fn):
    fn(0)
    times = []
    for run in range(1, repeat + 1):
        start = time.perf_counter()
        fn(run)
        times.append(time.perf_counter() - start)
    return int(n / min(times))

from pycrawler.store import Environment
env = Environment(work / "store", create=True)

records = [(rnd.getrandbits(128).to_bytes(16, "big"), bytes(100)) for _ in range(n)]

def store(run):
    db = env.open_database(f"d{run}", create=True)
    for i in range(0, n, 10_000):
        chunk = records[i:i + 10_000]
        db.put_many([k for k, _ in chunk], [v for _, v in chunk])
    assert sum(1 for _ in db.items()) == n
    db.close()

from pycrawler.frontier.todo import JeTodoFrontier
from pycrawler.records.crawl_url import CrawlUrl

def todo(run):
    with JeTodoFrontier.open(work / f"todo{run}", create=True) as frontier:
        for i in range(0, n, 10_000):
            frontier.put_urls([CrawlUrl(ori_url=f"{u}#{j}", layer=j % 5) for j, u in enumerate(urls[i:i + 10_000], i)])
        taken = 0
        while batch := frontier.get_next_batch(10_000):
            taken += len(batch)
        assert taken == n

from pycrawler.keys.heritrix_fp import create_keys
from pycrawler.keys.md5 import md5_keys
from pycrawler.keys.xxh64 import xxh64_urls
from pycrawler.seen import BloomFilter, ExactVisited

def bloom(run):
    table = BloomFilter.create(work / f"b{run}.bloom", capacity=n, fpr=0.01)
    for i in range(0, n, 100_000):
        table.add_many(keys[i:i + 100_000])
    table.close()

def exact(run):
    table = ExactVisited(env, name=f"v{run}")
    table.add_many(keys)
    table.close()

figures = {"put_many_items": best(store), "todo": best(todo), "md5_keys": best(lambda _: md5_keys(urls)),
           "create_keys": best(lambda _: create_keys(urls)), "xxh64_urls": best(lambda _: xxh64_urls(urls)),
           "bloom_add": best(bloom), "exact_add": best(exact)}
env.close()
shutil.rmtree(work)
json.dump(figures, sys.stdout)
"""


def measure(numpy: bool, records: int, repeat: int, vectors: Path) -> dict[str, int]:
    script = ("" if numpy else WITHOUT_NUMPY) + f"ROOT = {str(ROOT)!r}\n" + CHILD
    done = subprocess.run([sys.executable, "-c", script], input=json.dumps([records, repeat, str(vectors)]),
                          capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(done.stderr)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000, help="records, URLs or keys per operation")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs per figure (the best is kept)")
    parser.add_argument("--vectors", type=Path, default=ROOT.parent / "shared" / "vectors" / "heritrix-fp.tsv")
    args = parser.parse_args()
    with_numpy = measure(True, args.records, args.repeat, args.vectors)
    plain = measure(False, args.records, args.repeat, args.vectors)
    for name in with_numpy:
        print(f"{name}: {with_numpy[name]:,}/s with numpy, {plain[name]:,}/s without "
              f"({plain[name] / with_numpy[name]:.2f}x)", flush=True)
    print(" ".join([f"{name}_numpy={with_numpy[name]} {name}_plain={plain[name]}" for name in with_numpy]
                   + [f"records={args.records}"]))


if __name__ == "__main__":
    main()
