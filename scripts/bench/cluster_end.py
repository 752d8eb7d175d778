#!/usr/bin/env python3
"""What the end-of-crawl check costs Redis while many workers wait for the last one to finish.

    .venv/bin/python scripts/bench/cluster_end.py --workers 10,30,100 --seconds 5

N workers (`Membership`s with host splitting's stream check, one Redis connection each, in
this process) have joined a cluster on a fresh redis-server; all but one are idle and ask
whether the cluster is done every 0.1 s, as an idle crawl worker does; the last one is busy,
so the answer stays no. Measured: the Redis commands a second (`INFO commandstats`) and Redis's
CPU a second (`INFO cpu`), over ``--seconds``.

Two ways of asking, side by side in one run:

- ``first-member``: `Membership.cluster_done`, the way the crawl asks: the first live member
  checks every flag and stream in one transaction; the others read its answer (one `EXISTS`);
- ``every-worker``: every idle worker runs the whole check itself (`SMEMBERS`, then one
  `HGET` per worker and one `XLEN` per stream in a transaction): how the crawl asked before.

The rounds are paced at 0.1 s. All the workers here share one Python thread, so a round that
takes longer than that (every worker running the whole check, with many workers) slows the
pace instead of loading Redis more: ``cmds/round`` is what one round asks for whatever the
pace, and ``at pace/s`` (ten rounds a second) is what separate worker processes would send.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pycrawler.cluster.hostsplit import HostSplitExchange  # noqa: E402
from pycrawler.cluster.membership import Membership  # noqa: E402
from pycrawler.testing.local_redis import LocalRedis  # noqa: E402

INTERVAL = 0.1  # the crawl's RECEIVE_INTERVAL: how often an idle worker asks


def every_worker_checks(member: Membership, exchange: HostSplitExchange) -> bool:
    """The check every idle worker ran before the first member alone did."""
    streams = [s.decode() for s in member.redis.smembers(member.key("streams"))]
    pipe = member.redis.pipeline(transaction=True)
    for other in member.members:
        pipe.hget(member.key("worker", other), "idle")
    for worker in streams:
        pipe.xlen(exchange.stream(worker))
    answers = pipe.execute()
    return all(flag == b"1" for flag in answers[: len(member.members)]) and not any(answers[len(member.members):])


def measure(url: str, workers: int, way: str, seconds: float) -> dict:
    members = [Membership(redis.Redis.from_url(url), f"end{way}{workers}", f"w{i:03d}", lease=60, heartbeat=2)
               for i in range(workers)]
    exchanges = [HostSplitExchange(member, settle=0) for member in members]
    for member, exchange in zip(members, exchanges):
        exchange._ensure_group()
        member.join()
    for member in members:
        member.beat()
    idle = list(zip(members, exchanges))[:-1]  # the last worker is still busy
    for member, _ in idle:
        member.cluster_done(lambda pipe: None)  # shows its idle flag once, as the crawl does
    client = redis.Redis.from_url(url)
    before, cpu_before = client.info("commandstats"), client.info("cpu")
    began, rounds = time.monotonic(), 0
    while time.monotonic() - began < seconds:
        round_began = time.monotonic()
        for member, exchange in idle:
            done = (member.cluster_done(exchange._stream_lengths) if way == "first-member"
                    else every_worker_checks(member, exchange))
            assert not done, "the busy worker was taken for idle"
        rounds += 1
        time.sleep(max(0.0, INTERVAL - (time.monotonic() - round_began)))
    elapsed = time.monotonic() - began
    after, cpu_after = client.info("commandstats"), client.info("cpu")
    calls = sum(s["calls"] for s in after.values()) - sum(s["calls"] for s in before.values())
    cpu = sum(cpu_after[k] - cpu_before[k] for k in ("used_cpu_user", "used_cpu_sys"))
    for member in members:
        member.redis.close()
    client.close()
    return {"commands_per_s": calls / elapsed, "commands_per_round": calls / rounds, "redis_cpu": cpu / elapsed,
            "rounds_per_s": rounds / elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", default="10,30,100")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    ways = ("first-member", "every-worker")
    with tempfile.TemporaryDirectory(prefix="pycrawler-cluster-end-") as work, LocalRedis(Path(work)) as url:
        print(f"{'workers':>7} {'way':<13} {'commands/s':>10} {'Redis CPU':>9} {'rounds/s':>8} {'cmds/round':>10}"
              f" {'at pace/s':>9}")
        line = []
        for workers in [int(n) for n in args.workers.split(",")]:
            runs = {way: [] for way in ways}
            for _ in range(args.repeat):
                for way in ways:  # in turn, so the machine's drift hits both alike
                    runs[way].append(measure(url, workers, way, args.seconds))
            for way in ways:
                med = {k: statistics.median(r[k] for r in runs[way]) for k in runs[way][0]}
                print(f"{workers:>7} {way:<13} {med['commands_per_s']:>10,.0f} {med['redis_cpu']:>9.3f}"
                      f" {med['rounds_per_s']:>8.1f} {med['commands_per_round']:>10,.0f}"
                      f" {med['commands_per_round'] / INTERVAL:>9,.0f}")
                line.append(f"{workers}.{way}.commands_per_round={med['commands_per_round']:.0f}")
        print(" ".join(line))


if __name__ == "__main__":
    main()
