#!/usr/bin/env python3
"""What Python in Heritrix's scripting console costs: the REST calls of docs/heritrix.md's script
(GraalPy's JSR-223 engine) on a running crawl's frontier of about ``--pending`` URLs, timed.

    .venv/bin/python scripts/bench/heritrix_console.py --pending 20000

Heritrix 3.13 (target/heritrix-3.13.0, driven by tests/real_heritrix.py) starts with the engine's
jar and GraalPy's jars after its lib/ (target/graalpy/, or ``--build``) and crawls a loopback
:class:`HeldSite` whose hosts' roots each link to 5,000 pages at most (under Heritrix's 6,000
outlinks a page), as many hosts as ``--pending`` needs. The roots and robots.txt are answered, every other
page is held: the toe threads (one a host) wait on their fetches, the crawl RUNS and its frontier holds still.
Wall seconds of each REST call (``POST /engine/job/JOB/script``), the best of ``--rounds``:

- ``python_start``: the first Python script in Heritrix's JVM (GraalPy starts; once per JVM);
- ``python_trivial``: ``print(frontier.queuedUriCount())``: the floor of a call;
- ``python_count``, ``python_list``, ``python_export``: the docs' script counting only
  (LIMIT 0), listing 20, and exporting every URL as JSON lines;
- ``groovy_count``: the same count in Groovy through Heritrix's own ``forAllPendingDo`` (which
  takes JE's default locks), the operator's tool today.

The last line is ``key=value`` figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from real_heritrix import Heritrix, HeldSite, console_script  # noqa: E402 -- tests/ joins the path first

MAX_LINKS = 5000
GROOVY_COUNT = """
def n = 0
appCtx.getBean('frontier').forAllPendingDo({ curi -> n++ } as org.apache.commons.collections.Closure)
rawOut.print(n)
"""
TRIVIAL = "print('queued', appCtx.getBean('frontier').queuedUriCount(), file=rawOut)"


class WideSite(HeldSite):
    """:class:`HeldSite` whose roots link to every page of their host and are never held."""

    def __init__(self, hosts: int, pages: int):
        super().__init__(hosts, pages)
        for h in range(hosts):
            self.graph[(h, "/")] = [(h, f"/p{i}.html") for i in range(pages)]

    def hold(self, host: int, path: str) -> None:
        if path != "/":
            super().hold(host, path)


def timed(call, rounds: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(rounds):
        start = time.monotonic()
        result = call()
        best = min(best, time.monotonic() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pending", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--build", type=Path, default=ROOT / "target" / "graalpy")
    args = parser.parse_args()
    hosts = -(-args.pending // MAX_LINKS)
    pages = args.pending // hosts
    with tempfile.TemporaryDirectory(prefix="heritrix-console-") as scratch, WideSite(hosts, pages) as site:
        folder = Path(scratch)
        export = folder / "pending.jsonl"
        heritrix = Heritrix(folder, heap_mb=1536,
                            classpath=[str(args.build / "pycrawler-graalpy.jar"), str(args.build / "lib") + "/*"],
                            java_options=[f"-Dpycrawler.home={ROOT}"])
        heritrix.start()
        try:
            # a toe thread a host: a host is a queue, which one thread at a time fetches from
            heritrix.create_job("job", site.seeds, threads=hosts, overrides={"fetchHttp.soTimeoutMs": "1800000"})
            heritrix.launch("job", unpause=False)
            site.gate.clear()
            start = time.monotonic()
            heritrix.script("job", TRIVIAL, engine="python")
            figures = {"python_start": time.monotonic() - start}
            heritrix.action("job", "unpause")
            deadline = time.monotonic() + 600
            while site.held_count() < hosts or heritrix.report("job")["uriTotalsReport"]["queuedUriCount"] < hosts * pages:
                if time.monotonic() > deadline:
                    raise SystemExit(f"the frontier did not fill: {heritrix.report('job')['uriTotalsReport']}")
                time.sleep(0.5)
            queued = heritrix.report("job")["uriTotalsReport"]["queuedUriCount"]
            print(f"{queued:,} URLs pending on {hosts} hosts, crawl {heritrix.state('job')}", flush=True)
            calls = {
                "python_trivial": lambda: heritrix.script("job", TRIVIAL, engine="python"),
                "python_count": lambda: heritrix.script("job", console_script(0, None), engine="python"),
                "python_list": lambda: heritrix.script("job", console_script(20, None), engine="python"),
                "python_export": lambda: heritrix.script("job", console_script(0, export), engine="python"),
                "groovy_count": lambda: heritrix.script("job", GROOVY_COUNT),
            }
            for name, call in calls.items():
                figures[name], output = timed(call, args.rounds)
                print(f"{name}: {figures[name]:.2f} s  ({str(output).splitlines()[-1]})", flush=True)
            exported = sum(1 for _ in export.open())
            assert exported == queued, f"exported {exported} of {queued}"
            json.loads(export.open().readline())
            state = heritrix.state("job")
        finally:
            site.gate.set()
            heritrix.stop()
    print(" ".join([f"pending={queued}", f"hosts={hosts}", f"state={state}",
                    *(f"{k}_s={v:.2f}" for k, v in figures.items()),
                    f"python_us_per_url={figures['python_count'] / queued * 1e6:.0f}",
                    f"export_us_per_url={figures['python_export'] / queued * 1e6:.0f}"]))


if __name__ == "__main__":
    main()
