#!/usr/bin/env python3
"""Which JE should write pycrawler's own new stores: the store, DRUM, frontier and crawl
benchmarks run on JE 3.3.98 (Debian's) and on JE 18.3.12 (Maven Central), side by side.

    .venv/bin/python scripts/bench/je_releases.py --repeat 3            # the sizes of record
    .venv/bin/python scripts/bench/je_releases.py --small --repeat 1    # a quick look

Each benchmark is this project's own script (``scripts/bench/store.py``, ``seen.py`` with
DRUM alone, ``frontier.py``, ``crawl_vs_scrapy.py`` with the pycrawler stage alone), run as a
child process whose new stores are written by the JE that ``PYCRAWLER_JE`` names (one JE per
process: :mod:`pycrawler.jvm.je_releases`). The two JEs alternate within each round (3.3, 18, 3.3,
18, ...), so both see the same machine. The figures are the benchmarks' own last-line
``key=value`` figures; each is the median of ``--repeat`` runs, and ``ratio`` is JE 18's
median over JE 3.3's (above 1: JE 18 is faster, or for RSS, larger).

Last line: ``key=value`` figures, ``<benchmark>_<figure>_<je>`` and ``<benchmark>_<figure>_ratio``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "scripts" / "bench"
JES = ("3.3.98", "18.3.12")

# benchmark -> (arguments of record, small arguments, the figures compared)
BENCHMARKS = {
    "store": (["--records", "1000000", "--repeat", "1"], ["--records", "100000", "--repeat", "1"],
              ("per_record_puts_per_s", "batched_puts_per_s", "sorted_batched_puts_per_s")),
    "seen": (["--engines", "drum", "--ops", "20000000", "--distinct", "12000000"],
             ["--engines", "drum", "--ops", "2000000", "--distinct", "1200000"],
             ("drum_ops_per_s", "peak_rss_mb")),
    "frontier": (["--urls", "1000000", "--queues", "10000", "--pairs", "200000"],
                 ["--urls", "100000", "--queues", "1000", "--pairs", "20000"],
                 ("schedule_per_s", "next_completed_per_s", "peak_rss_mb")),
    "crawl_vs_scrapy": (["--skip-scrapy"], ["--skip-scrapy", "--max-pages", "2000"],
                        ("pycrawler_pages_per_s", "pycrawler_peak_rss_mb")),
}


def figures(line: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in line.split() if "=" in part)


def run(bench: str, args: list[str], je: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYCRAWLER_CLASSPATH"} | {"PYCRAWLER_JE": je}
    done = subprocess.run([sys.executable, str(BENCH / f"{bench}.py"), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{bench}.py on JE {je} failed:\n{done.stderr[-2000:]}")
    last = [line for line in done.stdout.splitlines() if "=" in line][-1]
    return figures(last)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds; figures are medians")
    parser.add_argument("--small", action="store_true", help="the small sizes, for a quick look")
    parser.add_argument("--benchmarks", default=",".join(BENCHMARKS), help="which of them, comma-separated")
    options = parser.parse_args()
    chosen = options.benchmarks.split(",")
    runs: dict[tuple[str, str], list[dict[str, str]]] = {(b, je): [] for b in chosen for je in JES}
    for round_ in range(options.repeat):
        for bench in chosen:
            full, small, _ = BENCHMARKS[bench]
            for je in JES if round_ % 2 == 0 else reversed(JES):
                runs[bench, je].append(run(bench, small if options.small else full, je))
                print(f"round {round_ + 1} {bench} JE {je}: "
                      + " ".join(f"{f}={runs[bench, je][-1].get(f, 'NA')}" for f in BENCHMARKS[bench][2]), flush=True)
    result = {}
    print(f"\n{'benchmark':<16} {'figure':<24} {'JE 3.3.98':>12} {'JE 18.3.12':>12} {'18/3.3':>7}")
    for bench in chosen:
        for figure in BENCHMARKS[bench][2]:
            medians = [statistics.median(float(r[figure]) for r in runs[bench, je]) for je in JES]
            ratio = medians[1] / medians[0] if medians[0] else float("nan")
            print(f"{bench:<16} {figure:<24} {medians[0]:>12,.0f} {medians[1]:>12,.0f} {ratio:>7.2f}")
            for je, median in zip(JES, medians):
                result[f"{bench}_{figure}_{je.split('.')[0]}"] = f"{median:.0f}"
            result[f"{bench}_{figure}_ratio"] = f"{ratio:.2f}"
    print(" ".join(f"{k}={v}" for k, v in result.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
