#!/usr/bin/env python3
"""Benchmark the library half with numpy and without it (CPython without numpy, GraalPy), on the same input.

    .venv/bin/python scripts/bench/without_numpy.py --records 200000
    .venv/bin/python scripts/bench/without_numpy.py --records 20000 --sides plain,graalpy,graalpy_jit \
        --operations create_keys,xxh64_urls,bloom_add

Each operation runs in one child process per side (``--sides``): ``numpy``, this Python as
usual; ``plain``, this Python where numpy and numba cannot be imported (``sys.modules`` holds
None for them before pycrawler is imported), so pycrawler takes its plain-Python paths;
``graalpy`` and ``graalpy_jit``, ``scripts/graalpy`` with ``PYCRAWLER_GRAALPY_JIT=0`` or 1
(the JIT needs a Java 21+ and target/graalpy/lib-jit; without them the launcher runs
interpreted and says so). Figures are items per second of wall time, the best of ``--repeat``
runs, after one warm-up run (numba's compilation is not timed):

- ``put_many_items``: ``--records`` 16-byte keys and 100-byte values into a JE database
  in batches of 10,000, then read back in key order;
- ``todo``: ``--records`` CrawlUrls put into a TODO frontier (key order) and taken back,
  10,000 a batch (encoding, decoding, the packing of batches);
- ``md5_keys``, ``create_keys`` (Heritrix), ``xxh64_urls``: over the vectors' URLs repeated to
  ``--records`` (mean ~95 characters);
- ``bloom_add`` (blocked, 64-bit keys, 100,000 a batch) and ``exact_add`` (the JE set), ``--records`` keys.

``--operations`` chooses among them. The last line is ``key=value`` figures,
``<operation>_<side>`` per second.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WITHOUT_NUMPY = "import sys; sys.modules['numpy'] = sys.modules['numba'] = None\n"

CHILD = """
import json, random, shutil, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, ROOT)
n, repeat, vectors, chosen = json.load(sys.stdin)
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

from pycrawler.frontier.todo import JeTodoFrontier
from pycrawler.keys.heritrix_fp import create_keys
from pycrawler.keys.md5 import md5_keys
from pycrawler.keys.xxh64 import xxh64_urls
from pycrawler.records.crawl_url import CrawlUrl
from pycrawler.seen import BloomFilter, ExactVisited
from pycrawler.store import Environment

env = None

def store(run):
    global env, records
    if env is None:
        env = Environment(work / "store", create=True)
        records = [(rnd.getrandbits(128).to_bytes(16, "big"), bytes(100)) for _ in range(n)]
    db = env.open_database(f"d{run}", create=True)
    for i in range(0, n, 10_000):
        chunk = records[i:i + 10_000]
        db.put_many([k for k, _ in chunk], [v for _, v in chunk])
    assert sum(1 for _ in db.items()) == n
    db.close()

def todo(run):
    with JeTodoFrontier.open(work / f"todo{run}", create=True) as frontier:
        for i in range(0, n, 10_000):
            frontier.put_urls([CrawlUrl(ori_url=f"{u}#{j}", layer=j % 5) for j, u in enumerate(urls[i:i + 10_000], i)])
        taken = 0
        while batch := frontier.get_next_batch(10_000):
            taken += len(batch)
        assert taken == n

def bloom(run):
    table = BloomFilter.create(work / f"b{run}.bloom", capacity=n, fpr=0.01)
    for i in range(0, n, 100_000):
        table.add_many(keys[i:i + 100_000])
    table.close()

def exact(run):
    global env
    env = env or Environment(work / "store", create=True)
    table = ExactVisited(env, name=f"v{run}")
    table.add_many(keys)
    table.close()

operations = {"put_many_items": store, "todo": todo, "md5_keys": lambda _: md5_keys(urls),
              "create_keys": lambda _: create_keys(urls), "xxh64_urls": lambda _: xxh64_urls(urls),
              "bloom_add": bloom, "exact_add": exact}
figures = {name: best(operations[name]) for name in chosen}
if env is not None:
    env.close()
shutil.rmtree(work)
json.dump(figures, sys.stdout)
"""


SIDES = {"numpy": "with numpy", "plain": "without numpy", "graalpy": "GraalPy interpreted",
         "graalpy_jit": "GraalPy JIT"}
OPERATIONS = ("put_many_items", "todo", "md5_keys", "create_keys", "xxh64_urls", "bloom_add", "exact_add")


def measure(side: str, records: int, repeat: int, vectors: Path, operations: list[str]) -> dict[str, int]:
    script = (WITHOUT_NUMPY if side == "plain" else "") + f"ROOT = {str(ROOT)!r}\n" + CHILD
    command, env = [sys.executable, "-c", script], None
    if side.startswith("graalpy"):
        command = [str(ROOT / "scripts" / "graalpy"), "-c", script]
        env = {**os.environ, "PYCRAWLER_GRAALPY_JIT": "1" if side == "graalpy_jit" else "0"}
    done = subprocess.run(command, input=json.dumps([records, repeat, str(vectors), operations]),
                          capture_output=True, text=True, check=False, env=env)
    if done.returncode:
        sys.exit(done.stderr)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000, help="records, URLs or keys per operation")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs per figure (the best is kept)")
    parser.add_argument("--vectors", type=Path, default=ROOT.parent / "shared" / "vectors" / "heritrix-fp.tsv")
    parser.add_argument("--sides", default="numpy,plain", help=f"comma-separated, of {', '.join(SIDES)}")
    parser.add_argument("--operations", default=",".join(OPERATIONS), help="comma-separated, of the above")
    args = parser.parse_args()
    sides, operations = args.sides.split(","), args.operations.split(",")
    if not set(sides) <= set(SIDES) or not set(operations) <= set(OPERATIONS):
        parser.error(f"--sides are among {', '.join(SIDES)}; --operations among {', '.join(OPERATIONS)}")
    figures = {side: measure(side, args.records, args.repeat, args.vectors, operations) for side in sides}
    for name in operations:
        print(f"{name}: " + ", ".join(f"{figures[side][name]:,}/s {SIDES[side]}" for side in sides), flush=True)
    print(" ".join([f"{name}_{side}={figures[side][name]}" for name in operations for side in sides]
                   + [f"records={args.records}"]))


if __name__ == "__main__":
    main()
