"""kill -9 of ``pycrawler crawl`` at any instant leaves no process of its tree behind.

The crawl runs as the leader of a session of its own, so everything it starts (page workers,
``multiprocessing``'s resource tracker, anything to come) is in that session and its process
group even once its parent is gone. Each run is killed -9, at a failpoint (the crawl kills
itself there) or at a seeded random instant; random instants are drawn both over the whole
run and just after the first page worker appears (a worker still starting is the hardest to
end). Then, within a second of the kill: the crawl's stdout reaches its end (no survivor holds
it open), and no live process is left in the session or the group, nor any of the crawl's
descendants seen just before the kill.
"""

from __future__ import annotations

import concurrent.futures
import os
import random
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass

import pytest
from crawl_sites import ROOT, CountingServer, crawl_command, write_site

from pycrawler.failpoints import ARM_VARIABLE

GRACE = 1.0
"""Seconds after the kill by which every process of the crawl's tree is gone."""

FAILPOINTS = ("crawl.settings_written", "je.recovered", "outputs.log_flushed:1", "flush.links_enqueued:2",
              "flush.completions_committed:3", "crawl.close.outputs_closed", "je.closing")
RANDOM_KILLS = 16  # seconds after launch, over the whole run
WORKER_KILLS = 12  # seconds after the first page worker is seen
RUNS_AT_ONCE = 3


@dataclass(frozen=True)
class Kill:
    failpoint: str | None = None
    after_launch: float | None = None
    after_worker: float | None = None

    def __str__(self) -> str:
        if self.failpoint:
            return f"at failpoint {self.failpoint}"
        if self.after_launch is not None:
            return f"{self.after_launch:.3f} s after launch"
        return f"{self.after_worker:.3f} s after the first page worker"


def kills() -> list[Kill]:
    rng = random.Random(48)
    return ([Kill(failpoint=point) for point in FAILPOINTS]
            + [Kill(after_launch=rng.uniform(0.0, 6.0)) for _ in range(RANDOM_KILLS)]
            + [Kill(after_worker=rng.uniform(0.0, 0.6)) for _ in range(WORKER_KILLS)])


def _stat(pid: int) -> tuple[str, int, int, int] | None:
    """(state, parent, process group, session) of a process, None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
    except OSError:
        return None
    return fields[0], int(fields[1]), int(fields[2]), int(fields[3])


def _live_processes() -> dict[int, tuple[str, int, int, int]]:
    found = {int(name): _stat(int(name)) for name in os.listdir("/proc") if name.isdigit()}
    return {pid: stat for pid, stat in found.items() if stat is not None and stat[0] not in "ZX"}


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (_, parent, _, _) in _live_processes().items():
        children.setdefault(parent, []).append(pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _wait_for_worker(crawl: subprocess.Popen, deadline: float) -> bool:
    while crawl.poll() is None and time.monotonic() < deadline:
        if _descendants(crawl.pid) - _resource_trackers():
            return True
        time.sleep(0.005)
    return False


def _resource_trackers() -> set[int]:
    found = set()
    for pid in _live_processes():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                if b"resource_tracker" in cmdline.read():
                    found.add(pid)
        except OSError:
            pass
    return found


def _seconds_to_eof(fd: int, limit: float) -> float | None:
    started = time.monotonic()
    while (waited := time.monotonic() - started) < limit:
        ready, _, _ = select.select([fd], [], [], 0.01)
        if ready and not os.read(fd, 1 << 16):
            return waited
    return None


def _killed_run(kill: Kill, base: str, state) -> str | None:
    """Run a crawl into ``state``, kill it -9 as ``kill`` says: what was left behind (None: nothing)."""
    environment = dict(os.environ)
    environment.pop(ARM_VARIABLE, None)
    if kill.failpoint:
        environment[ARM_VARIABLE] = kill.failpoint
    command = crawl_command(base + "index.html", state, "--delay", "0.02", "--parse-workers", "2")
    crawl = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        if kill.after_worker is not None and not _wait_for_worker(crawl, time.monotonic() + 60):
            return f"no page worker appeared (exit {crawl.poll()})"
        if kill.failpoint is None:
            time.sleep(kill.after_launch if kill.after_launch is not None else kill.after_worker)
            tree = _descendants(crawl.pid)
            crawl.send_signal(signal.SIGKILL)
        else:
            tree = set()
            while crawl.poll() is None:  # the crawl kills itself at the point
                tree |= _descendants(crawl.pid)
                time.sleep(0.005)
        crawl.wait(timeout=60)
        killed_at = time.monotonic()
        if crawl.returncode not in (-signal.SIGKILL, 0):
            return f"exit {crawl.returncode}"
        if kill.failpoint and crawl.returncode != -signal.SIGKILL:
            return "never reached its failpoint"
        eof = _seconds_to_eof(crawl.stdout.fileno(), GRACE)
        time.sleep(max(0.0, killed_at + GRACE - time.monotonic()))
        left = {pid: stat for pid, stat in _live_processes().items()
                if pid in tree or crawl.pid in (stat[2], stat[3])}
        if eof is None or left:
            return f"stdout {'open' if eof is None else 'closed'} {GRACE} s after the kill; left: {left}"
        return None
    finally:
        if crawl.poll() is None:
            crawl.kill()
            crawl.wait()
        crawl.stdout.close()
        for pid, stat in _live_processes().items():  # what a failure left, so later runs are not slowed
            if crawl.pid in (stat[2], stat[3]):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    write_site(root, 150, seed=5)
    server = CountingServer(root)
    with server as base:
        server.quiet()
        yield base


def test_a_kill_at_any_instant_leaves_no_process_of_the_crawl_behind(site, tmp_path):
    planned = kills()
    with concurrent.futures.ThreadPoolExecutor(RUNS_AT_ONCE) as pool:
        outcomes = pool.map(lambda numbered: _killed_run(numbered[1], site, tmp_path / str(numbered[0])),
                            enumerate(planned))
        problems = [f"killed {kill}: {problem}" for kill, problem in zip(planned, outcomes) if problem]
    assert not problems, "\n".join(problems)


POOL_OWNER = """
import sys
from pycrawler.parse import ParsePool
pool = ParsePool(2, start_method=sys.argv[1])
pool.warm_up()
print("ready", flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("start_method", ["spawn", "forkserver"])
@pytest.mark.parametrize("when", ["starting", "ready"])
def test_a_parse_pools_workers_end_with_the_process_that_made_it(start_method, when):
    """pycrawler.parse.ParsePool, the crawl's pool's public sibling, under each start method it
    takes (with ``forkserver`` the workers' parent is the fork server, which ends with the pool's
    process): killed while its workers start or once they have, nothing of it is left."""
    owner = subprocess.Popen([sys.executable, "-c", POOL_OWNER, start_method], cwd=ROOT, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, start_new_session=True)
    try:
        if when == "ready":
            assert owner.stdout.readline() == b"ready\n"
        else:
            assert _wait_for_worker(owner, time.monotonic() + 60), "no worker started"
        tree = _descendants(owner.pid)
        assert tree - _resource_trackers()
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=60)
        time.sleep(GRACE)
        left = {pid: stat for pid, stat in _live_processes().items() if pid in tree or owner.pid in stat[2:]}
        assert not left
    finally:
        for pid, stat in _live_processes().items():
            if owner.pid in stat[2:]:
                os.kill(pid, signal.SIGKILL)
