"""The ways a crawl stops other than finishing: SIGTERM (once, then twice; during start-up and
close too) and a full disk.

Each stops with what it counts as fetched in its outputs and a clear word, and the same
command then finishes the crawl with crawl.log and the WARC files complete against the site.
The disk tests mount a small tmpfs (root only; elsewhere they skip, but fail under CI).
"""

from __future__ import annotations

import collections
import contextlib
import io
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest
from crawl_sites import (ROOT, CountingServer, answer, assert_each_page_fetched_once, crawl_command, fetched_records,
                         page, run_crawl, write_site)
from test_crawl_kill import crawl_log_200s, warc_responses

SITE_PAGES = 120


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    return root, write_site(root, SITE_PAGES, seed=5)


def wait_for_fetches(server: CountingServer, count: int, crawl: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while sum(server.page_counts().values()) < count and crawl.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert crawl.poll() is None, "the crawl ended before it could be stopped"


def assert_outputs_complete(state, warcs, base, reachable):
    """What a user checks: a 200 line and a readable response record for every reachable page."""
    assert set(crawl_log_200s(state / "crawl.log", base)) == reachable
    assert set(warc_responses(warcs, base)) == reachable
    records = fetched_records(state)
    assert {url.removeprefix(base) for url, r in records.items() if r.status_code == 200} == reachable


# How a signal stops a crawl is Python's handler and pycrawler's order of steps, whichever JE holds
# the state (as tests/test_signals.py): the JE 3.3 leg only. A store's recovery after the stop is
# held on every JE by tests/test_crawl_kill.py; a signal inside JE's own recovery stays on both.
@pytest.mark.any_je
def test_sigterm_stops_gracefully_and_the_same_command_resumes(site, tmp_path):
    root, reachable = site
    state, warcs = tmp_path / "state", tmp_path / "warcs"
    server = CountingServer(root)
    options = ("--delay", "0.02", "--concurrency", "2", "--warc", str(warcs))
    with server as base:
        crawl = subprocess.Popen(crawl_command(base + "index.html", state, *options), cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for_fetches(server, 20, crawl)
        crawl.send_signal(signal.SIGTERM)
        out, err = crawl.communicate(timeout=30)
        assert crawl.returncode == 128 + signal.SIGTERM, err
        assert "(interrupted)" in out and "Traceback" not in err
        stopped = {url.removeprefix(base) for url, r in fetched_records(state).items() if r.status_code == 200}
        assert 0 < len(stopped) < len(reachable)
        assert stopped <= set(crawl_log_200s(state / "crawl.log", base))  # what the state counts is in the log
        assert not list(warcs.glob("*.open"))                                # a graceful stop closes its WARC
        done = run_crawl(base + "index.html", state, *options)
    assert done.returncode == 0, done.stderr
    assert_outputs_complete(state, warcs, base, reachable)
    assert all(n == 1 for path, n in server.page_counts().items() if path in reachable)


STALL = 20
"""Seconds the slow pages hold their answer in the second-signal test."""


@pytest.mark.any_je
def test_a_second_signal_stops_at_once_and_loses_nothing(tmp_path):
    root = tmp_path / "site"
    slow = [f"slow/{i}.html" for i in range(4)]
    reachable = write_site(root, 40, seed=3) | set(slow)
    (root / "index.html").write_text(page("index", [*slow, *(f"d{i}/p{i}.html" for i in range(5))]))
    stall = threading.Event()
    stall.set()

    def slow_page(handler):
        if stall.is_set():
            time.sleep(STALL)
        answer(handler, 200, page("slow", ["/index.html"]).encode())

    state, warcs = tmp_path / "state", tmp_path / "warcs"
    server = CountingServer(root, routes={"/slow/": slow_page})
    options = ("--delay", "0", "--queue-policy", "bkdr", "--concurrency", "8", "--warc", str(warcs))
    with server as base:
        crawl = subprocess.Popen(crawl_command(base + "index.html", state, *options), cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while sum(server.page_counts().get(s, 0) for s in slow) < len(slow) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.5)  # the fast pages finish; the slow ones stay in flight
        crawl.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        signalled = time.monotonic()
        crawl.send_signal(signal.SIGTERM)
        out, err = crawl.communicate(timeout=30)
        # Waiting for the fetches in flight would take the whole stall; the stop itself (close the
        # store, write the summary) takes a second or two, more on a loaded machine.
        assert time.monotonic() - signalled < STALL / 2, "the second signal waited for the fetches in flight"
        assert crawl.returncode == 128 + signal.SIGTERM, err
        assert "Traceback" not in err
        stall.clear()
        done = run_crawl(base + "index.html", state, *options)
    assert done.returncode == 0, done.stderr
    assert_outputs_complete(state, warcs, base, reachable)


# -- a full disk ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def heavy_site(tmp_path_factory):
    """Pages of ~30 kB of random text, so that WARC files fill a small disk within the crawl."""
    root = tmp_path_factory.mktemp("heavy")
    reachable = write_site(root, 200, seed=9)
    rng = random.Random(9)
    for path in root.rglob("*.html"):
        filler = "".join(rng.choice("abcdefghij klmnopqrstuvwxyz") for _ in range(30_000))
        path.write_text(path.read_text().replace("</body>", f"<p>{filler}</p></body>"))
    return root, reachable


def committed_records(state, scratch) -> dict:
    """The fetched records the state holds, as JE recovery keeps them: read from a copy opened
    for writing once. When JE's own write is the one that finds the disk full (about one run in
    six here; the WARC writer usually finds it first), the log ends in a torn write, which a
    read-only open refuses as damage and the resume's recovery cuts off."""
    from pycrawler.store import Environment

    copy = scratch / "recovered"
    shutil.copytree(state, copy)
    Environment(copy).close()
    return fetched_records(copy)


@pytest.mark.parametrize("min_free_mb, size_mb", [(8, 12), (0, 3)], ids=["below-threshold", "disk-full"])
def test_a_full_disk_stops_the_crawl_with_one_line_and_the_same_command_resumes(
        heavy_site, small_filesystem, min_free_mb, size_mb, tmp_path):
    root, reachable = heavy_site
    disk = small_filesystem(size_mb)
    state, warcs = disk.path / "state", disk.path / "warcs"
    options = ("--delay", "0", "--queue-policy", "bkdr", "--concurrency", "4", "--warc", str(warcs),
               "--min-free", str(min_free_mb))
    server = CountingServer(root)
    with server as base:
        stopped = run_crawl(base + "index.html", state, *options)
        assert stopped.returncode == 75, stopped.stderr
        (line,) = stopped.stderr.splitlines()
        assert line.startswith("pycrawler: ") and "run the same command to resume" in line
        assert ("MB free" if min_free_mb else "the disk is full") in line
        counted = {url.removeprefix(base) for url, r in committed_records(state, tmp_path).items()
                   if r.status_code == 200}
        assert 0 < len(counted) < len(reachable)
        disk.grow(64)
        done = run_crawl(base + "index.html", state, *options)
    assert done.returncode == 0, done.stderr
    assert counted <= set(crawl_log_200s(state / "crawl.log", base))
    assert_outputs_complete(state, warcs, base, reachable)
    repeats = collections.Counter({p: n - 1 for p, n in server.page_counts().items() if n > 1})
    assert sum(repeats.values()) <= 4  # at most the fetches in flight when the disk ran out


def test_a_crawl_refuses_to_start_below_the_threshold(site, small_filesystem):
    root, _ = site
    disk = small_filesystem(2)
    with CountingServer(root) as base:
        refused = run_crawl(base + "index.html", disk.path / "state", "--min-free", "16")
    assert refused.returncode == 75
    (line,) = refused.stderr.splitlines()
    assert "MB free on the filesystem of" in line and "--min-free 16 MB" in line


# -- the Bloom file: killed while it is created, or too large for the disk ---------------------------

def test_a_crawl_killed_while_creating_its_bloom_file_resumes_with_the_same_command(site, tmp_path):
    """Killed with the file written under its temporary name, before the rename (the kill after
    the rename leaves a whole file: tests/test_bloom.py)."""
    root, reachable = site
    state, warcs = tmp_path / "state", tmp_path / "warcs"
    options = ("--seen", "bloom", "--delay", "0", "--warc", str(warcs))
    server = CountingServer(root)
    with server as base:
        killed = subprocess.run(crawl_command(base + "index.html", state, *options), cwd=ROOT, capture_output=True,
                                text=True, env=os.environ | {"PYCRAWLER_FAILPOINT": "bloom.create.written"}, timeout=60)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        done = run_crawl(base + "index.html", state, *options)
    assert done.returncode == 0, done.stderr
    assert_outputs_complete(state, warcs, base, reachable)
    assert_each_page_fetched_once(server.page_counts(), reachable)


def jvm_error_files(folder) -> set:
    """The fatal-error files a JVM that aborts leaves in ``folder`` (its working folder, or the state's)."""
    return set(folder.glob("hs_err_pid*.log"))


def test_a_bloom_file_too_large_for_the_disk_stops_with_one_line_and_the_crawl_resumes_on_a_disk_with_room(
        site, small_filesystem, tmp_path):
    root, reachable = site
    disk = small_filesystem(2)  # the filter for the default capacity takes about 18 MB
    warcs = tmp_path / "warcs"
    options = ("--seen", "bloom", "--delay", "0", "--min-free", "0", "--warc", str(warcs))
    errors_before = jvm_error_files(ROOT)
    server = CountingServer(root)
    with server as base:
        stopped = run_crawl(base + "index.html", disk.path / "state", *options)
        assert stopped.returncode == 75, stopped.stderr  # not SIGBUS, nor the JVM's abort (134)
        (line,) = stopped.stderr.splitlines()
        assert line.startswith("pycrawler: the disk is full") and "visited.bloom" in line
        assert "rerun the same command" in line
        assert jvm_error_files(ROOT) == errors_before and not jvm_error_files(disk.path / "state")
        state = tmp_path / "state"
        shutil.move(disk.path / "state", state)
        done = run_crawl(base + "index.html", state, *options)
    assert done.returncode == 0, done.stderr
    assert_outputs_complete(state, warcs, base, reachable)
    assert_each_page_fetched_once(server.page_counts(), reachable)


# -- a signal during start-up or close ---------------------------------------------------------------

def write_open_warc(path, megabytes: int) -> None:
    """A large ``.open`` WARC file as a kill -9 leaves it: whole records, then a torn one."""
    from warcio.warcwriter import WARCWriter

    member = io.BytesIO()
    writer = WARCWriter(member, gzip=True)
    writer.write_record(writer.create_warc_record("http://127.0.0.1/big", "resource",
                                                  payload=io.BytesIO(random.randbytes(1 << 20)),
                                                  warc_content_type="application/octet-stream"))
    with open(path, "wb") as out:
        for _ in range(megabytes):
            out.write(member.getvalue())
        out.write(member.getvalue()[:1000])


def wait_until_open(crawl: subprocess.Popen, path, timeout: float = 60) -> None:
    """Until the crawl process has ``path`` open (its start-up is reading it)."""
    fds = f"/proc/{crawl.pid}/fd"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and crawl.poll() is None:
        with contextlib.suppress(OSError):
            if any(os.readlink(f"{fds}/{fd}") == str(path) for fd in os.listdir(fds)):
                return
        time.sleep(0.005)
    raise AssertionError(f"the crawl never opened {path.name}")


def assert_one_line_stop(crawl_or_result, err: str, signum: int, phase: str) -> None:
    assert crawl_or_result.returncode == 128 + signum, err
    (line,) = err.splitlines()
    assert line == (f"pycrawler: stopped by {signal.Signals(signum).name} during {phase}: "
                    f"{'nothing is lost' if phase == 'start-up' else 'the crawl closed cleanly'}; "
                    "run the same command to resume")


@pytest.fixture(params=[signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def signum(request) -> int:
    return request.param


@pytest.fixture
def warc_crawl(tmp_path):
    """The state folder, WARC folder and options of a crawl that writes WARC files."""
    state, warcs = tmp_path / "state", tmp_path / "warcs"
    return state, warcs, ("--delay", "0", "--warc", str(warcs))


@pytest.mark.any_je
def test_a_signal_during_the_repair_of_a_large_warc_stops_with_one_line_and_resumes(site, warc_crawl, signum):
    root, reachable = site
    state, warcs, options = warc_crawl
    with CountingServer(root) as base:
        first = run_crawl(base + "index.html", state, *options, "--max-pages", "10")
        assert first.returncode == 0, first.stderr
        left = warcs / "pycrawler-20260101000000000-00009-1.warc.gz.open"
        write_open_warc(left, 400)
        crawl = subprocess.Popen(crawl_command(base + "index.html", state, *options), cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_until_open(crawl, left)
        crawl.send_signal(signum)
        out, err = crawl.communicate(timeout=60)
        assert_one_line_stop(crawl, err, signum, "start-up")
        assert left.exists()  # not repaired yet: the next run does it
        done = run_crawl(base + "index.html", state, *options)
    assert done.returncode == 0, done.stderr
    assert left.name.removesuffix(".open") + ": kept 400 records, cut 1,000 bytes" in done.stdout
    assert_outputs_complete(state, warcs, base, reachable)


SIGNALLED_IN_CLOSE = """
import os, sys
from pycrawler.crawl.engine import Crawler
close_stores = Crawler._close_stores
def signalled_while_closing(self):
    os.kill(os.getpid(), int(os.environ["CLOSE_SIGNAL"]))
    close_stores(self)
Crawler._close_stores = signalled_while_closing
from pycrawler.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.any_je
def test_a_signal_during_close_lets_the_close_finish_then_stops_with_one_line(site, warc_crawl, signum):
    root, reachable = site
    state, warcs, options = warc_crawl
    with CountingServer(root) as base:
        command = crawl_command(base + "index.html", state, *options, "--max-pages", "30")
        closing = subprocess.run([sys.executable, "-c", SIGNALLED_IN_CLOSE, *command[3:]], cwd=ROOT,
                                 capture_output=True, text=True, timeout=60,
                                 env=os.environ | {"PYTHONPATH": str(ROOT), "CLOSE_SIGNAL": str(int(signum))})
        assert_one_line_stop(closing, closing.stderr, signum, "close")
        assert "URLs pending" in closing.stdout  # the summary of what it did, as after any stop
        assert not list(warcs.glob("*.open"))
        done = run_crawl(base + "index.html", state, *options)
    assert done.returncode == 0, done.stderr
    assert "repaired" not in done.stdout  # the close had finished: nothing left to mend
    assert_outputs_complete(state, warcs, base, reachable)


UNCHECKPOINTED = """
import os, sys
from pycrawler.store import Environment
env = Environment(sys.argv[1], durability="write_no_sync",
                  config={"je.env.runCheckpointer": "false", "je.env.runCleaner": "false"})
filler = env.open_database("filler", create=True)
for start in range(0, int(sys.argv[2]), 50_000):
    with env.begin() as txn:
        filler.put_many([i.to_bytes(8, "big") for i in range(start, start + 50_000)], [os.urandom(100)] * 50_000, txn=txn)
os._exit(0)  # as a kill -9 leaves it: all of it after the last checkpoint, for recovery to replay
"""


def test_a_signal_during_je_recovery_stops_at_once_with_one_line_and_resumes(site, warc_crawl, signum):
    """JE's recovery is one long Java call; the crawl waits for it off the main thread, so a
    signal stops the run at once, not when the recovery ends (here several seconds later)."""
    root, reachable = site
    state, warcs, options = warc_crawl
    with CountingServer(root) as base:
        first = run_crawl(base + "index.html", state, *options, "--max-pages", "10")
        assert first.returncode == 0, first.stderr
        filled = subprocess.run([sys.executable, "-c", UNCHECKPOINTED, str(state), "600000"], cwd=ROOT,
                                capture_output=True, text=True, timeout=300)
        assert filled.returncode == 0, filled.stderr
        crawl = subprocess.Popen(crawl_command(base + "index.html", state, *options), cwd=ROOT,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_until_open(crawl, state / "00000000.jdb")  # JE's recovery reads the log
        time.sleep(0.5)
        signalled = time.monotonic()
        crawl.send_signal(signum)
        out, err = crawl.communicate(timeout=60)
        assert time.monotonic() - signalled < 2.0, "the signal waited for the recovery to end"
        assert_one_line_stop(crawl, err, signum, "start-up")
        done = run_crawl(base + "index.html", state, *options, timeout=300)
    assert done.returncode == 0, done.stderr
    assert_outputs_complete(state, warcs, base, reachable)
