#!/usr/bin/env python3
"""The traces of docs/caching.md, written under bench-output/ (git-ignored):

    .venv/bin/python scripts/bench/cache_traces.py jdk            # bench-output/traces/jdk.txt.gz
    .venv/bin/python scripts/bench/cache_traces.py debian-docs    # bench-output/traces/debian-docs.txt.gz
    .venv/bin/python scripts/bench/cache_traces.py synthetic --requests 100000000   # .../synthetic-100M.u64

- ``jdk``: ``pycrawler crawl --trace`` over the JDK 17 API docs (Debian's openjdk-17-doc)
  served by nginx on loopback: every extracted link, in crawl order.
- ``debian-docs``: one crawl over several Debian documentation packages at once, each
  served by its own nginx on its own loopback port (a host of its own to the crawler): the
  JDK API docs, the Python 3.11 docs (python3.11-doc), the PostgreSQL 15 docs
  (postgresql-doc-15) and the Debian Reference (debian-reference-en). Missing packages are
  named with the apt command that installs them.
- ``synthetic``: :mod:`pycrawler.cachesim.synthetic` (default model, seed 1) as raw
  little-endian 64-bit keys.

Crawls run with no politeness delay, BKDR queues and robots.txt off, as the crawl benchmarks.
The last line is ``key=value`` figures: the trace's path, requests and seconds.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pycrawler.cachesim.synthetic import synthetic_trace
from pycrawler.static_site.server import StaticSite

OUT = Path("bench-output/traces")
DOC_SITES = {  # Debian package -> (folder served, seed page)
    "openjdk-17-doc": ("/usr/share/doc/openjdk-17-doc/api", "index.html"),
    "python3.11-doc": ("/usr/share/doc/python3.11/html", "index.html"),
    "postgresql-doc-15": ("/usr/share/doc/postgresql-doc-15/html", "index.html"),
    "debian-reference-en": ("/usr/share/debian-reference", "index.en.html"),
}
CRAWL_FLAGS = ("--delay", "0", "--queue-policy", "bkdr", "--no-robots")


def crawl_trace(name: str, sites: dict[str, tuple[str, str]]) -> Path:
    """Serve each site on its own port, crawl them all from their seeds, gzip the trace."""
    missing = [package for package, (folder, _) in sites.items() if not Path(folder).is_dir()]
    if missing:
        raise SystemExit(f"install the documentation first: apt-get install {' '.join(missing)}")
    work = OUT / name
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    with ExitStack() as stack:
        seeds = [stack.enter_context(StaticSite(folder, server="nginx")) + seed for folder, seed in sites.values()]
        print("seeds: " + " ".join(seeds), flush=True)
        command = [sys.executable, "-m", "pycrawler", "crawl", *seeds, "--state", str(work / "state"),
                   "--trace", str(work / "trace.txt"), *CRAWL_FLAGS]
        subprocess.run(command, check=True)
    target = OUT / f"{name}.txt.gz"
    with open(work / "trace.txt", "rb") as source, gzip.open(target, "wb", compresslevel=6) as sink:
        shutil.copyfileobj(source, sink, 1 << 20)
    return target


def synthetic(requests: int) -> Path:
    OUT.mkdir(parents=True, exist_ok=True)
    label = f"{requests // 1_000_000}M" if requests % 1_000_000 == 0 else str(requests)
    target = OUT / f"synthetic-{label}.u64"
    with open(target, "wb") as sink:
        for chunk in synthetic_trace(requests):
            sink.write(chunk.astype("<u8").tobytes())
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("trace", choices=("jdk", "debian-docs", "synthetic"))
    parser.add_argument("--requests", type=int, default=100_000_000, help="synthetic: requests to write")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.trace == "synthetic":
        path = synthetic(args.requests)
    elif args.trace == "jdk":
        path = crawl_trace("jdk", {"openjdk-17-doc": DOC_SITES["openjdk-17-doc"]})
    else:
        path = crawl_trace("debian-docs", DOC_SITES)
    seconds = time.perf_counter() - started
    print(f"trace={path} bytes={path.stat().st_size} seconds={seconds:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
