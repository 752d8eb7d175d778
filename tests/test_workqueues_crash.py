"""Kill -9 of a process driving the work-queue frontier, at random points: no URL is lost, and
none is handed out twice except those that were in process at the kill."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

from java_programs import ROOT
from pycrawler.frontier.politeness import Outcome, Politeness
from pycrawler.frontier.workqueues import WorkQueueFrontier

DRIVER = r"""
import random, sys
from pycrawler.frontier.politeness import Outcome, Politeness
from pycrawler.frontier.workqueues import WorkQueueFrontier

path, seed, first = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
frontier = WorkQueueFrontier.open(path, create=True, politeness=Politeness.none(), prefetch=3)
number, out = first, []
while True:
    new = [f"http://h{i % 11}.example/{i}" for i in range(number, number + 40)]
    frontier.schedule(new + [f"http://h{i % 11}.example/{i}" for i in range(first, number, 7)])
    print("scheduled", number, number + 40, flush=True)
    number += 40
    batch = frontier.next_batch(rng.randint(1, 15))
    print("out", *[r.ori_url for r in batch], flush=True)
    out += batch
    rng.shuffle(out)
    finish, out = out[:len(out) // 2], out[len(out) // 2:]
    frontier.completed_many((r, Outcome.success()) for r in finish)
    print("done", *[r.ori_url for r in finish], flush=True)
"""


def drive_and_kill(path, seed: int, first: int, lines: int, log: dict) -> None:
    """Run the driver until it has printed ``lines`` lines, let it run a random moment more,
    kill -9 it, and read everything it printed before it died."""
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(path), str(seed), str(first)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        for count, line in enumerate(driver.stdout, 1):
            record(line, log)
            if count >= lines:
                break
        time.sleep(random.Random(seed).random() * 0.05)  # somewhere inside a later step
    finally:
        os.kill(driver.pid, signal.SIGKILL)
        for line in driver.stdout:
            record(line, log)
        driver.wait()
    assert driver.returncode == -signal.SIGKILL
    # What was out and not acknowledged as done may have finished or may come back, once.
    log["may_return"] |= log["out"]
    log["out"].clear()


def record(line: str, log: dict) -> None:
    if not line.endswith("\n"):
        return  # cut by the kill
    word, *rest = line.split()
    if word == "scheduled":
        log["scheduled"].update(f"http://h{i % 11}.example/{i}" for i in range(int(rest[0]), int(rest[1])))
    elif word == "out":
        for url in rest:
            hand_out(url, log)
    else:
        log["done"].update(rest)
        log["out"].difference_update(rest)


def hand_out(url: str, log: dict) -> None:
    if url in log["handed"]:
        assert url in log["may_return"], f"{url} handed out twice, and it was not in process at a kill"
        log["may_return"].remove(url)
    log["handed"].add(url)
    log["out"].add(url)


def test_no_url_is_lost_or_handed_out_twice_across_kills(tmp_path):
    log = {"scheduled": set(), "handed": set(), "done": set(), "out": set(), "may_return": set()}
    rng = random.Random(20261122)
    for first in (0, 100_000):
        drive_and_kill(tmp_path, seed=rng.randint(0, 10**6), first=first, lines=rng.randint(15, 45), log=log)
        # A kill may land after the last acknowledged step: URLs of an unacknowledged schedule
        # may or may not be there, so only acknowledged ones are checked.
        with WorkQueueFrontier.open(tmp_path, politeness=Politeness.none()) as frontier:
            census = {q.class_key: q.count for q in frontier.queues.values() if q.count}
            pending = set()
            for _key, value in frontier.pending.items():
                if value:
                    pending.add(frontier_url(value))
            assert sum(census.values()) == len(pending)
            assert log["scheduled"] - log["done"] - log["may_return"] <= pending, "acknowledged URLs were lost"
            assert not pending & log["done"], "finished URLs came back"
    with WorkQueueFrontier.open(tmp_path, politeness=Politeness.none()) as frontier:
        while batch := frontier.next_batch(50):
            for record in batch:
                hand_out(record.ori_url, log)
            frontier.completed_many((r, Outcome.success()) for r in batch)
            log["done"].update(r.ori_url for r in batch)
        assert len(frontier) == 0
    assert log["scheduled"] - log["done"] <= log["may_return"]


def frontier_url(value: bytes) -> str:
    from pycrawler.frontier.pending_records import decode_entry

    return decode_entry(value).ori_url
