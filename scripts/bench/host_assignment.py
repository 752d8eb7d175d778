#!/usr/bin/env python3
"""Host moves per membership change and load spread: plain rendezvous hashing against the host
table with bounded loads (pycrawler/cluster/host_table.py), on a real redis-server.

    .venv/bin/python scripts/bench/host_assignment.py                      # the run of record
    .venv/bin/python scripts/bench/host_assignment.py --hosts 300 --trials 5

For each worker count w and trial (fresh worker and host names), ``hosts`` hosts are placed:
plainly, each with its heaviest worker (:func:`pycrawler.cluster.membership.weight`); bounded,
one by one in the table's ASSIGN script, as a crawl meets them. Then, from that state, a worker
joins (w + 1) and, apart, one leaves (w - 1, a random one): the hosts whose owner changed are
the moves (the bounded table's REBALANCE script, timed). ``max/mean`` is the largest load over
the mean, before the change, and ``bound`` whether every load after it is within
ceil(1.25 h / w). A last table shows the issue's small case: how often a worker of 3 gets no
host of 6, plainly and bounded, over ``--small-trials`` host name sets.

Prints a table per figure (medians over trials) and a last ``key=value`` line.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from pycrawler.cluster.host_table import HostTable
from pycrawler.cluster.membership import weight
from pycrawler.testing.local_redis import LocalRedis


def plain(hosts: list[str], workers: list[str]) -> dict[str, str]:
    return {h: max(workers, key=lambda w: weight(w, h)) for h in hosts}


def bounded(client: redis.Redis, hosts: list[str], workers: list[str]) -> HostTable:
    table = HostTable(client, f"bench:{time.monotonic_ns()}")
    table.rebalance(workers)
    table.assign(hosts, workers)  # the script places a batch one by one, as a crawl meets them
    return table


def spread(owners: dict[str, str], workers: list[str]) -> tuple[float, int, int]:
    loads = [list(owners.values()).count(w) for w in workers]
    return max(loads) / (len(owners) / len(workers)), max(loads), min(loads)


def moves(before: dict[str, str], after: dict[str, str]) -> int:
    return sum(1 for h in before if before[h] != after[h])


def trial(client: redis.Redis, rng: random.Random, hosts_n: int, w: int) -> dict[str, float]:
    tag = rng.getrandbits(32)
    hosts = [f"site{tag}-{i}.example:80" for i in range(hosts_n)]
    workers = [f"worker{tag}-{i}" for i in range(w)]
    joiner, leaver = f"worker{tag}-{w}", rng.choice(workers)
    joined, left = workers + [joiner], [x for x in workers if x != leaver]
    out: dict[str, float] = {}
    start = plain(hosts, workers)
    out["plain_maxmean"] = spread(start, workers)[0]
    out["plain_join"] = moves(start, plain(hosts, joined))
    out["plain_leave"] = moves(start, plain(hosts, left))
    cap = {n: math.ceil(1.25 * hosts_n / n) for n in (w - 1, w, w + 1) if n}
    for change, members in (("join", joined), ("leave", left)):
        table = bounded(client, hosts, workers)
        before = table.table()
        out["bounded_maxmean"] = spread(before, workers)[0]
        began = time.perf_counter()
        _, moved = table.rebalance(members)
        out[f"rebalance_ms_{change}"] = 1000 * (time.perf_counter() - began)
        after = table.table()
        assert moved == moves(before, after)
        out[f"bounded_{change}"] = moved
        out[f"bound_{change}"] = float(spread(after, members)[1] <= cap[len(members)])
    return out


def small_case(client: redis.Redis, rng: random.Random, trials: int) -> dict[str, float]:
    """Three workers, six hosts (the issue's reproducer): how often a worker holds none."""
    empty = {"plain": 0, "bounded": 0}
    for _ in range(trials):
        tag = rng.getrandbits(32)
        hosts = [f"127.0.0.{i}:{tag % 60000 + 1024}" for i in range(1, 7)]
        workers = [f"w{tag}-{i}" for i in range(3)]
        empty["plain"] += spread(plain(hosts, workers), workers)[2] == 0
        empty["bounded"] += spread(bounded(client, hosts, workers).table(), workers)[2] == 0
    return {k: v / trials for k, v in empty.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--workers", default="2,3,4,8,16", help="worker counts, comma-separated")
    parser.add_argument("--trials", type=int, default=11)
    parser.add_argument("--small-trials", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    counts = [int(x) for x in args.workers.split(",")]
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder, LocalRedis(Path(folder)) as url:
        client = redis.Redis.from_url(url)
        print(f"{args.hosts} hosts, medians of {args.trials} trials")
        print(f"{'workers':>7} {'plain max/mean':>14} {'bounded':>8} {'join: plain':>11} {'bounded':>8} "
              f"{'leave: plain':>12} {'bounded':>8} {'in bound':>8} {'rebalance ms':>12}")
        for w in counts:
            runs = [trial(client, rng, args.hosts, w) for _ in range(args.trials)]
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            inside = min(min(r["bound_join"], r["bound_leave"]) for r in runs)
            print(f"{w:>7} {med['plain_maxmean']:>14.2f} {med['bounded_maxmean']:>8.2f} {med['plain_join']:>11.0f} "
                  f"{med['bounded_join']:>8.0f} {med['plain_leave']:>12.0f} {med['bounded_leave']:>8.0f} "
                  f"{'all' if inside else 'NOT':>8} {max(med['rebalance_ms_join'], med['rebalance_ms_leave']):>12.1f}")
            figures |= {f"{k}_w{w}": round(v, 2) for k, v in med.items() if not k.startswith("bound_")}
            figures[f"in_bound_w{w}"] = inside
        small = small_case(client, rng, args.small_trials)
        print(f"3 workers, 6 hosts, {args.small_trials} host name sets: a worker with no host "
              f"{100 * small['plain']:.1f}% of them plainly, {100 * small['bounded']:.1f}% bounded")
        figures |= {f"empty_of_3on6_{k}": round(v, 3) for k, v in small.items()}
    print(" ".join(f"{k}={v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
