"""``pycrawler crawl --queue-budget N``: a work queue (a host, under the default queue policy)
that has made N fetches retires, its URLs left pending, so a trap no rule knows ends at the
budget; the count is in the state, committed with the fetches it counts, so a resume (after a
kill -9 too) goes on from it; a higher budget fetches the rest. Real crawls of loopback
servers, counted by the servers."""

from __future__ import annotations

import re
import signal
import subprocess
import time

from crawl_sites import ROOT, CountingServer, answer, crawl_command, page, write_pages
from pycrawler.console.stopped import StoppedFigures


def endless(handler):
    """``/trap/N`` links three pages further down a tree that never ends (no rule knows it)."""
    n = int(handler.path.rpartition("/")[2] or 0)
    answer(handler, 200, page(f"trap {n}", [f"/trap/{3 * n + k}" for k in (1, 2, 3)]).encode())


def trap_fetches(server: CountingServer) -> dict[str, int]:
    return {path: n for path, n in server.page_counts().items() if path.startswith("trap/")}


def ordinary_site(root) -> set[str]:
    site = {"index.html": [f"p{i}.html" for i in range(12)]} | {f"p{i}.html": ["index.html"] for i in range(12)}
    write_pages(root, site)
    return set(site)


def crawl(seeds: list[str], state, *options: str, timeout: float = 120) -> subprocess.CompletedProcess:
    command = crawl_command(seeds[0], state, "--delay", "0", "--concurrency", "4", *options)
    command[5:5] = seeds[1:]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_a_budget_stops_a_trap_host_and_a_higher_one_fetches_the_rest(tmp_path):
    (tmp_path / "trap").mkdir()
    pages = ordinary_site(tmp_path / "site")
    state = tmp_path / "state"
    trap, site = CountingServer(tmp_path / "trap", {"/trap/": endless}), CountingServer(tmp_path / "site")
    with trap as trap_base, site as site_base:
        seeds = [trap_base + "trap/0", site_base + "index.html"]
        first = crawl(seeds, state, "--queue-budget", "30")
        assert first.returncode == 0, first.stderr  # ended by itself
        assert sum(trap_fetches(trap).values()) == 30
        assert set(site.page_counts()) == pages  # the other host is not held back
        budget_line = next(line for line in first.stdout.splitlines() if line.startswith("queue budget:"))
        assert re.search(r"30 fetches a queue: 1 queues spent it, \d+ of their URLs left pending", budget_line)

        # The console's host table: the trap's queue spent its budget, the site's has what it left.
        hosts = {row["host"]: row for row in StoppedFigures(state).hosts(10)}
        trap_host, site_host = (seed.split("/")[2] for seed in seeds)
        assert (hosts[trap_host]["budget_used"], hosts[trap_host]["budget_left"]) == (30, 0)
        assert (hosts[site_host]["budget_used"], hosts[site_host]["budget_left"]) == (len(pages), 30 - len(pages))

        # The state keeps the budget: the same crawl without the option fetches nothing more.
        again = crawl(seeds, state)
        assert again.returncode == 0, again.stderr
        assert sum(trap_fetches(trap).values()) == 30

        # A higher budget brings the retired queue back, for exactly the difference, each URL once.
        higher = crawl(seeds, state, "--queue-budget", "45")
        assert higher.returncode == 0, higher.stderr
        counts = trap_fetches(trap)
        assert sum(counts.values()) == 45 and set(counts.values()) == {1}
        assert set(site.page_counts().values()) == {1}


def test_the_count_survives_a_kill(tmp_path):
    """A kill -9 mid-crawl: the resumed crawl ends at the budget. The count is committed with
    the completions it counts, so only the fetches in flight at the kill (at most
    --concurrency) can be fetched again, and none counted twice beyond them."""
    (tmp_path / "trap").mkdir()
    state, budget, concurrency = tmp_path / "state", 60, 4
    trap = CountingServer(tmp_path / "trap", {"/trap/": endless})
    with trap as base:
        trap.quiet()
        command = crawl_command(base + "trap/0", state, "--delay", "0.05", "--concurrency", str(concurrency),
                                "--queue-budget", str(budget))
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while sum(trap_fetches(trap).values()) < 20 and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        before = sum(trap_fetches(trap).values())
        assert 20 <= before < budget
        resumed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        counts = trap_fetches(trap)
        assert budget - concurrency <= len(counts) <= budget
        assert sum(counts.values()) <= budget + concurrency
        assert (StoppedFigures(state).hosts(1)[0]["budget_left"]) == 0
