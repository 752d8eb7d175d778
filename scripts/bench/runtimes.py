#!/usr/bin/env python3
"""Time the same operations under CPython + JPype, GraalPy interpreted and GraalPy with its JIT.

    nice -n 10 .venv/bin/python scripts/bench/runtimes.py
    nice -n 10 .venv/bin/python scripts/bench/runtimes.py --records 1000000 --graalpy-records 10000 --jit-records 10000

The workload is ``scripts/bench/runtimes_work.py`` (its docstring lists the operations: batched
``put_many`` + ``items``, per-record ``put`` and ``get``, Heritrix ``seen``, Bloom adds), run in
a child process per runtime:

- **cpython**: this Python, with numpy, pycrawler as users run it (JE through JPype);
- **graalpy**: ``scripts/graalpy`` with ``PYCRAWLER_GRAALPY_JIT=0``, interpreted on the Java on
  PATH (pycrawler's numpy-free paths; bytes cross to Java as Latin-1 strings);
- **jit**: ``scripts/graalpy`` with GraalPy's JIT, when ``target/graalpy/lib-jit`` and a Java
  21+ under /usr/lib/jvm (or JAVA_HOME) exist; else the output says it was not run.

Each runtime runs its own record count (GraalPy interpreted is some hundred times slower on the
pure-Python keys and Bloom probes), so the figures are items per second: the median of --rounds
rounds after --warmup untimed ones, and for GraalPy also the first round (its warm-up is the
JIT's compilation, or the interpreter's). The last line is ``key=value`` figures:
``<operation>_<runtime>`` per second, ``<operation>_<runtime>_first`` for GraalPy, and each
runtime's record count.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORK = ROOT / "scripts" / "bench" / "runtimes_work.py"
FIXTURE = ROOT.parent / "shared" / "fixtures" / "je7-heritrix-layout"
LABELS = {"put_many_items": "`put_many` + `items` (16-byte keys, 100-byte values)",
          "put_one": "`put`, one record a call", "get_one": "`get`, one record a call",
          "heritrix_seen": "Heritrix `seen`: `create_keys` + `contains_keys`",
          "bloom_add": "Bloom `add_many` (blocked, 64-bit keys)"}


def java_feature(home: Path) -> int:
    try:
        for line in (home / "release").read_text().splitlines():
            if line.startswith("JAVA_VERSION="):
                return int(line.split("=", 1)[1].strip('"').split(".")[0])
    except (OSError, ValueError):
        pass
    return 0


def jit_missing() -> str | None:
    """Why GraalPy's JIT cannot run here, or None (as scripts/graalpy chooses its Java)."""
    if not (ROOT / "target" / "graalpy" / "lib-jit").is_dir():
        return "target/graalpy/lib-jit is not built"
    homes = [Path(os.environ["JAVA_HOME"])] if os.environ.get("JAVA_HOME") else list(Path("/usr/lib/jvm").glob("*"))
    if not any(java_feature(home) >= 21 for home in homes):
        return "no Java 21+ (JAVA_HOME, or under /usr/lib/jvm)"
    return None


def run(command: list[str], env: dict[str, str], records: int, args) -> dict:
    done = subprocess.run([*command, str(WORK), "--records", str(records), "--rounds", str(args.rounds),
                           "--warmup", str(args.warmup), "--heritrix", str(args.heritrix), "--urls", str(args.urls)],
                          env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"runtimes: {' '.join(command)} failed:\n{done.stderr}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["interpreted_said"] = "running interpreted" in done.stderr
    return result


def rates(result: dict, warmup: int) -> dict[str, tuple[float, float]]:
    """Each operation's items a second: the median after the warm-up, and the first round."""
    return {name: (op["items"] / statistics.median(op["seconds"][warmup:]), op["items"] / op["seconds"][0])
            for name, op in result["operations"].items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="records/keys under CPython")
    parser.add_argument("--graalpy-records", type=int, default=10_000, help="under GraalPy interpreted")
    parser.add_argument("--jit-records", type=int, default=10_000, help="under GraalPy with its JIT")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds (the median is kept)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first")
    parser.add_argument("--heritrix", type=Path, default=FIXTURE, help="a Heritrix state (default: %(default)s)")
    parser.add_argument("--urls", type=Path, help="its URLs, one a line (default: the state's .urls.txt)")
    args = parser.parse_args()
    args.urls = args.urls or args.heritrix.with_name(args.heritrix.name + ".urls.txt")
    if args.rounds < 1 or args.warmup < 0 or not args.heritrix.is_dir() or not args.urls.is_file():
        print("runtimes: need --rounds >= 1, --warmup >= 0, a Heritrix state folder and its URL list", file=sys.stderr)
        sys.exit(2)

    base = {key: value for key, value in os.environ.items() if key != "PYCRAWLER_GRAALPY_JIT"}
    base["PYTHONPATH"] = str(ROOT)
    graalpy = [str(ROOT / "scripts" / "graalpy")]
    results = {"cpython": run([sys.executable], base, args.records, args)}
    print(f"cpython: {results['cpython']['python']}, {args.records:,} records", file=sys.stderr, flush=True)
    results["graalpy"] = run(graalpy, {**base, "PYCRAWLER_GRAALPY_JIT": "0"}, args.graalpy_records, args)
    print(f"graalpy interpreted: {results['graalpy']['python']}, {args.graalpy_records:,} records",
          file=sys.stderr, flush=True)
    missing = jit_missing()
    if missing is None:
        results["jit"] = run(graalpy, base, args.jit_records, args)
        if results["jit"]["interpreted_said"]:
            missing = "scripts/graalpy ran it interpreted"
            del results["jit"]
    if missing:
        print(f"jit: not run: {missing}", flush=True)

    for runtime, result in results.items():
        for name, op in result["operations"].items():
            print(f"{runtime} {name} rounds/s: " + " ".join(f"{op['items'] / seconds:,.0f}" for seconds in op["seconds"]),
                  flush=True)
    figures = {runtime: rates(result, args.warmup) for runtime, result in results.items()}
    for name, label in LABELS.items():
        cpython = figures["cpython"][name][0]
        parts = [f"cpython {cpython:,.0f}/s"]
        for runtime in ("graalpy", "jit"):
            if runtime in figures:
                median, first = figures[runtime][name]
                parts.append(f"{runtime} {median:,.0f}/s ({median / cpython:.3f}x; first round {first:,.0f}/s)")
        print(f"{label}: " + ", ".join(parts), flush=True)
    line = []
    for name in LABELS:
        for runtime, rate in figures.items():
            line.append(f"{name}_{runtime}={rate[name][0]:.0f}")
            if runtime != "cpython":
                line.append(f"{name}_{runtime}_first={rate[name][1]:.0f}")
    line += [f"records_{runtime}={result['records']}" for runtime, result in results.items()]
    line += [f"rounds={args.rounds}", f"warmup={args.warmup}", f"jit={'yes' if 'jit' in results else 'no'}",
             f"load_average={os.getloadavg()[0]:.1f}"]
    print(" ".join(line))


if __name__ == "__main__":
    main()
