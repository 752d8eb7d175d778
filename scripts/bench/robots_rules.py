#!/usr/bin/env python3
"""robots.txt rules: parse time and time per decision of pycrawler.fetch.robots_rules, beside
protego (Scrapy's parser, which pycrawler used before) in the same run.

    .venv/bin/python scripts/bench/robots_rules.py                 # 20, 200 and 2,000 rules
    .venv/bin/python scripts/bench/robots_rules.py --rules 50 --urls 5000 --rounds 5

Each robots.txt is one ``User-agent: *`` group of ``Allow`` and ``Disallow`` lines over ten
path words (a third with a ``*`` and a word after it, a tenth anchored with ``$``, a tenth
with an escape); the URLs are 1 to 5 of the same words, some with a query or ``.html``, a
tenth with an escape. Times are CPU seconds of this process (steadier than wall time on a
shared machine), medians over ``--rounds``; the last line is ``key=value`` figures.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

from protego import Protego

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pycrawler.fetch.robots_rules import parse

WORDS = ["search", "cgi-bin", "admin", "tmp", "print", "login", "user", "api", "static", "img"]


def robots_txt(rng: random.Random, rules: int) -> str:
    lines = ["User-agent: *"]
    for _ in range(rules):
        path = "/" + "/".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
        kind = rng.random()
        path += "*" + rng.choice(WORDS) if kind < 0.3 else "$" if kind < 0.4 else "%7E/" if kind < 0.5 else "/"
        lines.append(f"{rng.choice(['Allow', 'Disallow'])}: {path}")
    return "\n".join(lines) + "\n"


def urls(rng: random.Random, n: int) -> list[str]:
    return ["http://example.com/" + "/".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))
            + rng.choice(["", "?q=1", ".html", "/%7Ex"] + [""] * 6) for _ in range(n)]


def cpu(call) -> float:
    start = time.process_time()
    call()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rules", type=int, nargs="+", default=[20, 200, 2000])
    parser.add_argument("--urls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(1)
    figures = {}
    for n in args.rules:
        text, batch = robots_txt(rng, n), urls(rng, args.urls)
        body = text.encode()
        ours, theirs = parse(body, "pycrawler"), Protego.parse(text)
        timings = {
            "parse_ms": [cpu(lambda: parse(body, "pycrawler")) * 1e3 for _ in range(args.rounds)],
            "protego_parse_ms": [cpu(lambda: Protego.parse(text)) * 1e3 for _ in range(args.rounds)],
            "decide_us": [cpu(lambda: [ours.allows(u) for u in batch]) / len(batch) * 1e6
                          for _ in range(args.rounds)],
            "protego_decide_us": [cpu(lambda: [theirs.can_fetch(u, "pycrawler") for u in batch]) / len(batch) * 1e6
                                  for _ in range(args.rounds)],
        }
        medians = {name: statistics.median(values) for name, values in timings.items()}
        print(f"{n:>6,} rules: parse {medians['parse_ms']:.2f} ms (protego {medians['protego_parse_ms']:.2f}), "
              f"a decision {medians['decide_us']:.1f} us (protego {medians['protego_decide_us']:.1f})")
        figures.update({f"{name}_{n}": f"{value:.3g}" for name, value in medians.items()})
    print(" ".join(f"{key}={value}" for key, value in figures.items()))


if __name__ == "__main__":
    main()
