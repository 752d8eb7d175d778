#!/usr/bin/env python3
"""Benchmark Heritrix URL keys: batch ``create_keys`` and ``fp_many`` against the scalar forms.

    .venv/bin/python scripts/bench/heritrix_fp.py --urls 1000000 --repeat 5

The URLs are those of ../shared/vectors/heritrix-fp.tsv (JDK API links plus the edge cases:
non-BMP, IDN, a 5,000-character URL...), repeated to ``--urls``. Batch figures are over the
whole list in one call (the function cuts it in chunks itself); the scalar baseline (one
Python call per URL) runs on ``--scalar-urls`` of them, and Heritrix's default
canonicalisation (one Python call per URL too) on ``--canon-urls``. Rates are medians of ``--repeat``
runs of this process's CPU time (the work is single-threaded), with the best run beside
them. ``--without-numpy`` runs it where numpy and numba cannot be imported, as under GraalPy
(the batch forms then call the scalar one per URL). The last line is ``key=value`` figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
if "--without-numpy" in sys.argv:  # before pycrawler chooses its paths, at import
    sys.modules["numpy"] = sys.modules["numba"] = None

from pycrawler.heritrix import STD64, canonicalize_many, create_key, create_keys  # noqa: E402


def read_vector_urls(path: Path) -> list[str]:
    lines = path.read_bytes().decode("utf-8").split("\n")[:-1]
    return [line.split("\t", 4)[4] for line in lines]


def rates(n: int, fn, repeat: int) -> tuple[int, int]:
    """(median, best) items per CPU second of ``repeat`` runs of fn().

    CPU time of this process, not wall time: on a machine shared with other work the wall
    clock mostly measures how often the scheduler runs us. The work is single-threaded.
    """
    seconds = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        seconds.append(time.process_time() - start)
    return round(n / statistics.median(seconds)), round(n / min(seconds))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=1_000_000, help="URLs per batch run")
    parser.add_argument("--scalar-urls", type=int, default=20_000, help="URLs for the scalar baseline")
    parser.add_argument("--canon-urls", type=int, default=200_000, help="URLs to canonicalise")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--vectors", type=Path, default=ROOT.parent / "shared" / "vectors" / "heritrix-fp.tsv")
    parser.add_argument("--without-numpy", action="store_true", help="numpy and numba not importable (GraalPy)")
    args = parser.parse_args()

    sample = read_vector_urls(args.vectors)
    urls = (sample * (args.urls // len(sample) + 1))[: args.urls]
    scalar_urls = urls[: args.scalar_urls]
    create_keys(urls[:10_000])  # build the tables outside the timing
    STD64.fp_many(urls[:10_000])

    key_rate, key_best = rates(len(urls), lambda: create_keys(urls), args.repeat)
    print(f"create_keys: {key_rate:,}/s (best {key_best:,}/s) over {len(urls):,} URLs", flush=True)
    fp64_rate, fp64_best = rates(len(urls), lambda: STD64.fp_many(urls), args.repeat)
    print(f"std64 fp_many: {fp64_rate:,}/s (best {fp64_best:,}/s)", flush=True)
    scalar_rate, _ = rates(len(scalar_urls), lambda: [create_key(u) for u in scalar_urls], args.repeat)
    print(f"scalar create_key: {scalar_rate:,}/s over {len(scalar_urls):,} URLs", flush=True)

    canon_urls = urls[: args.canon_urls]
    canon_rate, _ = rates(len(canon_urls), lambda: canonicalize_many(canon_urls), args.repeat)
    print(f"canonicalize_many (default rules): {canon_rate:,}/s", flush=True)

    mean_chars = sum(map(len, urls)) / len(urls)
    print(
        f"create_key_per_s={key_rate} create_key_best_per_s={key_best} "
        f"fp64_per_s={fp64_rate} fp64_best_per_s={fp64_best} "
        f"scalar_create_key_per_s={scalar_rate} speedup={key_rate / scalar_rate:.1f} "
        f"canonicalize_per_s={canon_rate} "
        f"urls={len(urls)} mean_url_chars={mean_chars:.1f} numpy={not args.without_numpy}"
    )


if __name__ == "__main__":
    main()
