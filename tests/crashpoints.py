"""The crash-point harness: ``pycrawler crawl --warc`` killed -9 at every failpoint it passes, at
random instants too, resumed each time with the same command, and checked against the site.

Modes: every seen table (``exact``, ``bloom``, ``drum``), bare and behind ``--url-cache``, and a
one-worker cluster in each of its two modes (``--redis URL --cluster NAME --dedupe split`` or
``central``, on a private redis-server). Each mode crawls its own copy of a generated site
(:func:`crawl_sites.write_site`, whose reachable pages are known), served on loopback by a
server that counts what it serves: cross-linked pages, and a tree (:data:`TREE_PAGES`) whose
pages each have one in-link, so that a URL a kill loses there is never found again.

**Which points.** Failpoints (:mod:`pycrawler.failpoints`) sit at the durable steps; every
process the harness starts writes the points it passes to a trace
(``PYCRAWLER_FAILPOINT_TRACE``), so a mode learns its points from its own runs, those passed
only on a resume (a mark log replayed, ``.open`` WARC files repaired, JE's recovery) or at close
included, and whatever points other code adds later. Every point a mode passes is killed twice
(``PYCRAWLER_FAILPOINT=name:N``): at its first hit, and at a later one (N drawn from the seed
between 2 and the hits the coming process is expected to make, up to :data:`LATER_HIT_MAX`; a
point a process passes only once is killed again at its hit in a later process). Two settings
for crash tests make a crawl of a few hundred pages pass every step: DRUM merges inside its
flushes, in paced rounds of few buckets (:data:`DRUM_BUCKET_BYTES`), and WARC files are
finished while it runs (:data:`WARC_MAX_SIZE`).

**Chained kills.** The processes of a *round* share one state folder: each resumes the one
killed before it, with the same command, armed with the next point. The point chosen is the
one the coming process is expected to reach first (from the trace of the process before it),
so a kill keeps the crawl's work for the kills after it and start-up points are killed before
close points. A process armed with a start-up point that it passes by (a ``.open`` WARC file
or a mark-log record it was expected to find is not there) is killed by the harness at its
first flush, and the point tried again after a later kill. A kill leaves a torn last line
in crawl.log only if it comes in the middle of a write, so a process armed with the cut of
such a line resumes from a crawl.log the harness tore (:func:`tear_last_line`): every mode
kills there, whether or not a random kill happened to tear one. A round ends when a process
finishes (exit 0) and no point left is expected in another resume of the finished crawl. A
process that went to the end past points left to kill in its work (one that ran unarmed, or went
past its own, may be the only one to finish a WARC file late in the crawl), points that resumes
of the finished crawl never reach, is run again: the state it
started from (its folder, its WARC files, and a cluster's keys in Redis, saved before every
process that may finish the crawl) is put back, its run is dropped from the round as if it never
happened, and the next process starts from there armed with the first such point it passed. The
next round crawls again from an empty state while points are left (a Bloom filter is created
only by a round's first process). The first round opens with random kills: after a seeded
number of pages served and a pause of up to 20 ms, anywhere in or between flushes.

**What is checked**, per round, as a user would read the outputs:

- every reachable page goes through each of its steps (:data:`STEPS`: discovered in a page's
  outlinks in the WARC files, fetched by the server's count, logged in crawl.log, in the WARC files,
  recorded in the state): a page that misses one is *lost* at the first it missed; and no page
  reaches a step without the one before it (:func:`follow_pages`);
- repeats, per kill: the server's counts are taken after each process, so each fetch is known
  to come from one process. A page fetched by process *a* and again by a later process was
  lost in process by the kill that ended *a*: that repeat is that kill's, and each kill's
  repeats must be at most ``--concurrency``. A page fetched twice by one process, or again
  after a process that finished, is an *unexplained* repeat.

A mode fails when it loses a page, a page skips a step, a kill exceeds the bound, a repeat is
unexplained, a process fails (exit other than 0 or the kill), a point it passed is left unkilled
at its first or later hit, or it has fewer point kills than points.

The CI form is tests/test_crashpoints.py (two modes at a time); by hand, for more pages, random
kills and rounds::

    python tests/crashpoints.py                                  # every mode
    python tests/crashpoints.py --modes drum drum+cache --pages 400 --random-kills 10 --seed 5

It prints each kill (point and hit, or pages served for a random one), a line per round, and a
``key=value`` line per mode, then a total line; ``--seed`` replays the choices.
tests/crash_mutations.py brings back, in a copy of the tree, losses this harness must catch.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import contextlib
import dataclasses
import json
import os
import pickle
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from crawl_sites import ROOT, CountingServer, crawl_command, write_site
from test_crawl_kill import crawl_log_200s, warc_responses
from warcio.archiveiterator import ArchiveIterator

from pycrawler.crawl.warc import MAX_SIZE_VARIABLE, OPEN_SUFFIX
from pycrawler.failpoints import ARM_VARIABLE, TRACE_VARIABLE
from pycrawler.seen.drum.visited import BUCKET_BYTES_VARIABLE, BUCKETS_VARIABLE

CACHE = "clock:4096"
CONCURRENCY = 8
PROCESS_TIMEOUT = 180.0
LATER_HIT_MAX = 6
REPAIR_POINTS = ("warc.repair.cut", "warc.repair.renamed")  # passed at start-up when a .open WARC file is left
TORN_LINE_POINT = "durable.torn_line_cut"  # passed at start-up when crawl.log ends in a torn line
MISSES_PER_ROUND = 2  # processes of a round that may go past a start-up point armed, before it waits for the next
FLUSH_POINTS = ("flush.", "outputs.log_flushed")  # a flush's points: before the first, start-up; after the last, close
CLOSE_POINTS = ("crawl.close.",)  # passed only in a crawl's close
DRUM_BUCKET_BYTES, DRUM_BUCKETS = "1024", "4"
"""DRUM's buckets are 4 of 1 KB: a crawl of a few hundred pages then merges inside its flushes
too, not only when its frontier runs dry, and ends a paced merge round (a bucket a step, as a
crawl at scale merges) every few flushes, so its points inside a round and at its end are each
passed several times by one process; a bucket past 2 KB, a few flushes' links, is merged at
once (the overgrown path)."""
WARC_MAX_SIZE = str(32 << 10)
"""WARC files of 32 KB: a crawl finishes some while it runs (about 20 pages each), not only at close."""
TREE_PAGES = 100
"""Pages of the site's tree (:func:`crawl_sites.write_site`'s ``one_path``): each has one in-link,
so a URL a kill loses stays lost (the cross-linked pages find most of theirs again)."""
CLUSTER_TIMINGS = ("--lease", "2", "--heartbeat", "0.3", "--settle", "0.3")


@dataclasses.dataclass(frozen=True)
class Mode:
    """A way to crawl: its seen table, URL cache, and cluster mode (None: a crawl on its own)."""

    name: str
    seen: str
    cache: str | None = None
    dedupe: str | None = None


MODES = {mode.name: mode for mode in [
    *(Mode(seen + suffix, seen, cache) for seen in ("exact", "bloom", "drum")
      for suffix, cache in (("", None), ("+cache", CACHE))),
    Mode("cluster-split", "exact", dedupe="split"),
    Mode("cluster-central", "exact", dedupe="central"),
]}


@dataclasses.dataclass(frozen=True)
class Target:
    """A kill to make: ``point`` at its ``hit``-th pass in a process."""

    point: str
    later: bool              # the kill at a later hit (else at the first)
    hit: int
    in_startup: bool         # expected before the process's first flush

    @property
    def key(self) -> tuple[str, bool]:
        return self.point, self.later


@dataclasses.dataclass
class Run:
    """One process of a round: what it was armed with, how it ended, what it passed and fetched."""

    armed: Target | None
    exit_code: int                        # -9: killed (by its failpoint or by the harness)
    passed: list[str]                     # the points it passed, in order
    fetches: collections.Counter          # page -> its fetches by this process
    served: int                           # pages served in all when it ended
    harness_kill: str = ""                # why the harness killed it ("": it was not)
    error: str = ""

    @property
    def killed(self) -> bool:
        return self.exit_code == -signal.SIGKILL


@dataclasses.dataclass
class Kill:
    """One kill: where it fell and the repeats it caused."""

    round: int
    run: int
    point: str | None          # None: killed by the harness
    hit: int                   # the point's hit it died at
    later: bool
    served: int
    why: str = ""              # a kill by the harness: when it fell
    repeats: int = 0

    def label(self) -> str:
        if self.point is None:
            return f"{self.why}, {self.served} pages served"
        return f"{self.point}:{self.hit} ({'later' if self.later else 'first'} hit), {self.served} pages served"


@dataclasses.dataclass
class ModeResult:
    """What one mode's rounds did, and what they lost."""

    mode: str
    points: dict[str, int]       # every point passed -> the most hits one process made
    kills: list[Kill]
    unkilled: list[str]          # "point (first|later)" never killed
    lost_log: list[str]          # reachable pages without a 200 line in crawl.log (all rounds)
    lost_warc: list[str]         # reachable pages without a response record in the WARC files
    lost_steps: collections.Counter  # step -> reachable pages lost at it (see STEPS; all rounds)
    skipped: list[str]           # pages that reached a step without the one before it
    unexplained: int             # repeats not caused by a kill
    errors: list[str]
    rounds: int
    seconds: float = 0.0         # wall time

    @property
    def point_kills(self) -> int:
        return sum(k.point is not None for k in self.kills)

    @property
    def over_bound(self) -> list[Kill]:
        return [k for k in self.kills if k.repeats > CONCURRENCY]

    @property
    def ok(self) -> bool:
        return (not self.lost_log and not self.lost_warc and not self.lost_steps and not self.skipped
                and not self.over_bound and not self.unexplained
                and not self.errors and not self.unkilled and self.point_kills >= len(self.points) > 0)

    def line(self) -> str:
        repeats = [k.repeats for k in self.kills]
        return (f"mode={self.mode} points={len(self.points)} kills={len(self.kills)} point_kills={self.point_kills} "
                f"random_kills={len(self.kills) - self.point_kills} rounds={self.rounds} repeats={sum(repeats)} "
                f"max_repeats_per_kill={max(repeats, default=0)} bound_per_kill={CONCURRENCY} "
                f"over_bound={len(self.over_bound)} unexplained_repeats={self.unexplained} "
                f"lost_crawl_log={len(self.lost_log)} lost_warc={len(self.lost_warc)} "
                f"lost_at={','.join(f'{step}:{self.lost_steps[step]}' for step in STEPS if self.lost_steps[step]) or '-'} "
                f"skipped_steps={len(self.skipped)} unkilled={len(self.unkilled)} errors={len(self.errors)} seconds={self.seconds:.0f} "
                f"{'ok' if self.ok else 'FAILED'}")


def sections(passed: list[str]) -> tuple[list[str], list[str], list[str]]:
    """A trace cut into start-up (before its first flush), work and close (after its last flush
    point); a trace without a flush is all start-up and close: (it, [], [])."""
    flushes = [i for i, name in enumerate(passed) if name.startswith(FLUSH_POINTS)]
    if not flushes:
        return passed, [], []
    return passed[:flushes[0]], passed[flushes[0]:flushes[-1] + 1], passed[flushes[-1] + 1:]


def closes(passed: list[str]) -> bool:
    """Whether a trace holds a crawl's close (after its last flush): a process that resumes one
    killed in its close is expected to pass that close once, not twice."""
    return any(name.startswith(CLOSE_POINTS) for name in sections(passed)[2])


def continued(reference: list[str], passed: list[str]) -> list[str]:
    """What to expect of the process after one that was expected to pass ``reference`` and was
    killed having ``passed`` these points: what it passed (a resume passes its start-up again),
    then what ``reference`` had after the point it died at."""
    if not passed:
        return reference
    last, hit = passed[-1], passed.count(passed[-1])
    at = [i for i, name in enumerate(reference) if name == last]
    return passed + reference[at[hit - 1] + 1 if len(at) >= hit else len(passed):]


class Campaign:
    """Every round of one mode (see the module docstring)."""

    def __init__(self, mode: Mode, work: Path, *, pages: int, tree_pages: int, seed: int, random_kills: int,
                 max_rounds: int, out=sys.stdout, redis_url: str | None = None):
        self.mode, self.work, self.out = mode, work, out
        self.rng = random.Random(f"{seed}/{mode.name}")
        self.site = work / "site"
        self.reachable = write_site(self.site, pages, seed=seed, one_path=tree_pages)
        self.spread = max(2, len(self.reachable) // 4)
        self.random_kills = self.random_left = random_kills
        self.max_rounds, self.redis_url = max_rounds, redis_url
        self.most: dict[str, int] = {}                       # point -> most hits by one process
        self.pending: dict[tuple[str, bool], None] = {}      # (point, later) to kill, in the order learnt
        self.first_trace: list[str] | None = None            # round 0's first process
        self.completion: list[str] | None = None             # the last process that completed a crawl
        self.resume_startup: dict[str, None] = {}            # points a resume passed in its start-up, in order
        self.learn_point(TORN_LINE_POINT, 1)                 # passed once a resume, when the harness tears the log
        self.kills: list[Kill] = []
        self.lost_log: set[str] = set()
        self.lost_warc: set[str] = set()
        self.lost_steps: dict[str, str] = {}                 # "page (round N)" -> the step it was lost at
        self.skipped: list[str] = []
        self.unexplained = 0
        self.errors: list[str] = []
        self.rounds = 0

    def say(self, text: str) -> None:
        print(f"  {self.mode.name}: {text}", file=self.out, flush=True)

    # -- learning ---------------------------------------------------------------------------------
    def learn_point(self, point: str, hits: int) -> None:
        if point not in self.most:
            self.pending[(point, False)] = self.pending[(point, True)] = None
        self.most[point] = max(self.most.get(point, 0), hits)

    def learn(self, run: Run, resume: bool) -> None:
        for point, hits in collections.Counter(run.passed).items():
            self.learn_point(point, hits)
        if run.exit_code == 0 and run.fetches:
            self.completion = run.passed
        startup, work, _ = sections(run.passed)
        if resume and work:  # a start-up known to be one (a trace without a flush may be all close)
            self.resume_startup.update(dict.fromkeys(startup))

    def expected(self, reference: list[str], completed: bool, state: Path, warcs: Path) -> list[str]:
        """The points the round's next process should pass, in order: those of ``reference``
        (the trace expected of the process before it, see :func:`continued`), with the cut of a
        torn line in its start-up when there is a crawl.log to tear (:func:`tear_last_line`),
        and WARC repair if and only if a ``.open`` file is there to repair."""
        if completed:  # a resume of a finished crawl: start-up and close only
            startup, _, close = sections(reference)
            # and the start-up points a resume passes in some states only (a mark log's replay of
            # the record a clean close leaves): the finished crawl may be the only state left
            # in the round that reaches one
            expected = startup + [name for name in self.resume_startup if name not in startup] + close
        elif self.completion is not None and not closes(reference):  # it may complete the crawl: its close too
            expected = reference + sections(self.completion)[2]
        else:
            expected = list(reference)
        expected = [name for name in expected if name not in (TORN_LINE_POINT, *REPAIR_POINTS)]
        startup = len(sections(expected)[0])
        if any(warcs.glob("*" + OPEN_SUFFIX)):
            expected[startup:startup] = [name for name in REPAIR_POINTS if name in self.most]
        if whole_lines(state / "crawl.log"):  # crawl.log is cut before the WARC files are repaired
            expected.insert(startup, TORN_LINE_POINT)
        return expected

    def choose(self, expected: list[str], missed: collections.Counter) -> Target | None:
        """The pending kill the coming process should reach first. A later hit is one after
        the first in the process when it is expected to pass the point more than once, else its
        first hit in a later process than the first kill's (when nothing else is left to kill in
        this process: a point passed once a process, or a process with little work left)."""
        counts = collections.Counter(expected)
        startup = len(sections(expected)[0])
        for repeated_only in (True, False):
            for point in dict.fromkeys(expected):
                for later in (False, True):
                    if (point, later) not in self.pending or missed[point, later] >= MISSES_PER_ROUND:
                        continue
                    if later and (point, False) in self.pending:
                        break  # its first hit first
                    if later and counts[point] >= 2:
                        hit = self.rng.randint(2, min(LATER_HIT_MAX, counts[point]))
                    elif later and repeated_only and self.most[point] > 1:
                        continue
                    else:
                        hit = 1
                    at = [i for i, name in enumerate(expected) if name == point][hit - 1]
                    return Target(point, later, hit, at < startup)
        return None

    # -- one process ------------------------------------------------------------------------------
    def command(self, base: str, state: Path, warcs: Path, round_index: int) -> list[str]:
        mode = self.mode
        options = ["--seen", mode.seen, "--delay", "0", "--queue-policy", "bkdr", "--concurrency", str(CONCURRENCY),
                   "--parse-workers", "1", "--warc", str(warcs)] + (["--url-cache", mode.cache] if mode.cache else [])
        if mode.dedupe:
            options += ["--redis", self.redis_url, "--cluster", f"crash{round_index}", "--dedupe", mode.dedupe,
                        "--worker", "w0", *CLUSTER_TIMINGS]
        return crawl_command(base + "index.html", state, *options)

    def start(self, command: list[str], server: CountingServer, armed: Target | None, random_kill: bool,
              trace: Path) -> Run:
        """Run one process (armed with ``armed``, or killed at random) to its end; what it did."""
        environment = {k: v for k, v in os.environ.items() if k != ARM_VARIABLE}
        environment |= {TRACE_VARIABLE: str(trace), BUCKET_BYTES_VARIABLE: DRUM_BUCKET_BYTES,
                        BUCKETS_VARIABLE: DRUM_BUCKETS, MAX_SIZE_VARIABLE: WARC_MAX_SIZE}
        if armed is not None:
            environment[ARM_VARIABLE] = f"{armed.point}:{armed.hit}"
        before = server.page_counts()
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                   env=environment)
        harness_kill = ""
        if random_kill:
            target = sum(before.values()) + self.rng.randint(1, self.spread)
            pause, deadline = self.rng.random() * 0.02, time.monotonic() + PROCESS_TIMEOUT
            while sum(server.page_counts().values()) < target and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(pause)  # between two flushes, or inside one
            harness_kill = "random"
        elif armed is not None and armed.in_startup:
            # A start-up point a resume passes only in some states (a .open WARC file to repair, a
            # mark log to replay): past start-up without it, the crawl's work is kept for others.
            while process.poll() is None and not missed_in_startup(armed, passed_so_far(trace)):
                time.sleep(0.02)
            harness_kill = f"by the harness at a flush: {armed.point}:{armed.hit} not passed in start-up"
        if harness_kill and process.poll() is None:
            process.send_signal(signal.SIGKILL)
        else:
            harness_kill = ""
        error = ""
        try:
            _, stderr = process.communicate(timeout=PROCESS_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            _, stderr = process.communicate()
            error = f"no end after {PROCESS_TIMEOUT:.0f} s"
        if process.returncode not in (0, -signal.SIGKILL) and not error:
            error = f"exit {process.returncode}: {stderr.strip()[-300:]}"
        after = settled_counts(server)
        fetches = collections.Counter({page: n - before.get(page, 0) for page, n in after.items()
                                       if n > before.get(page, 0)})
        return Run(armed, process.returncode, passed_so_far(trace), fetches, sum(after.values()), harness_kill, error)

    # -- the state a process starts from ----------------------------------------------------------
    def save(self, folders: list[Path], saved: Path, index: int) -> None:
        """Copy ``folders`` (those that exist) to ``saved``, and a cluster mode's keys in Redis
        (with their time to live) beside them."""
        shutil.rmtree(saved, ignore_errors=True)
        saved.mkdir()
        for folder in folders:
            if folder.exists():
                shutil.copytree(folder, saved / folder.name)
        if self.mode.dedupe:
            with self.redis(index) as (client, keys):
                dumps = [(key, client.pttl(key), client.dump(key)) for key in keys]
            (saved / "redis").write_bytes(pickle.dumps([d for d in dumps if d[2] is not None]))

    def restore(self, folders: list[Path], saved: Path, index: int) -> None:
        """Put back what :meth:`save` saved: the folders as they were (gone if they were not
        there), and the cluster's keys in Redis, those made since deleted."""
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
            if (saved / folder.name).exists():
                shutil.copytree(saved / folder.name, folder)
        if self.mode.dedupe:
            with self.redis(index) as (client, keys):
                pipe = client.pipeline(transaction=True)
                if keys:
                    pipe.delete(*keys)
                for key, ttl, data in pickle.loads((saved / "redis").read_bytes()):
                    pipe.restore(key, max(ttl, 0), data, replace=True)
                pipe.execute()

    @contextlib.contextmanager
    def redis(self, index: int):
        """(a client of the mode's Redis, the keys of round ``index``'s cluster)."""
        import redis

        client = redis.Redis.from_url(self.redis_url)
        try:
            name = f"crash{index}"
            yield client, [key for pattern in (f"pycrawler:{name}:*", f"pycrawler:{{{name}}}:*")
                           for key in client.scan_iter(match=pattern, count=1000)]
        finally:
            client.close()

    # -- a round ----------------------------------------------------------------------------------
    def round(self, index: int) -> None:
        folder = self.work / f"round{index}"
        state, warcs, saved = folder / "state", folder / "warcs", folder / "saved"
        folder.mkdir()
        runs: list[Run] = []
        missed = collections.Counter()  # (point, later) -> processes of this round that went past it
        reference = self.first_trace
        completed = False
        started = 0  # processes started, a dropped one included (each its own trace)
        server = CountingServer(self.site)
        with server as base:
            server.quiet()
            command = self.command(base, state, warcs, index)
            while True:
                random_kill = index == 0 and self.random_left > 0 and not completed
                armed = None
                if not random_kill and reference is not None:
                    armed = self.choose(self.expected(reference, completed, state, warcs), missed)
                if armed is None and not random_kill and runs and runs[-1].exit_code == 0:
                    break  # finished, and nothing left to kill in this state
                if started > 6 * len(self.most) + self.random_kills + 20:  # each point: 2 kills, a miss or two
                    self.errors.append(f"round {index}: {started} processes and still not done")
                    break
                if not completed and not random_kill:  # it may finish the crawl: kept to run again
                    self.save([state, warcs], saved, index)
                resume = state.exists() and any(state.iterdir())
                if armed is not None and armed.point == TORN_LINE_POINT:
                    tear_last_line(state / "crawl.log")
                run = self.start(command, server, armed, random_kill, folder / f"trace{started}")
                started += 1
                runs.append(run)
                self.learn(run, resume)
                if index == 0 and started == 1:
                    self.first_trace = run.passed
                if run.error:
                    self.errors.append(f"round {index} process {len(runs) - 1}: {run.error}")
                    break
                if run.killed and not run.harness_kill:
                    self.kills.append(Kill(index, len(runs) - 1, armed.point, armed.hit, armed.later, run.served))
                    del self.pending[armed.key]
                elif run.killed:
                    self.kills.append(Kill(index, len(runs) - 1, None, 0, False, run.served, run.harness_kill))
                    self.random_left -= random_kill
                if run.killed:
                    self.say(f"kill {len(self.kills)}: {self.kills[-1].label()} (round {index})")
                if armed is not None and armed.key in self.pending:  # the process went past it:
                    # past start-up, it may be passed after another kill (a WARC file left .open);
                    # past the end, not in this round
                    missed[armed.key] += 1 if run.killed else MISSES_PER_ROUND
                startup, work, _ = sections(run.passed)
                if run.exit_code == 0 and not completed and not random_kill and any(
                        (point, later) in self.pending and missed[point, later] < MISSES_PER_ROUND
                        for point in set(work) for later in (False, True)):
                    # It went past points left to kill in its work, which resumes of the finished
                    # crawl (its start-up and close again) never reach: put back the state it
                    # started from, and the next process, armed with the first point left there,
                    # runs it again.
                    self.check_dropped(index, runs, base, state, warcs)
                    self.restore([state, warcs], saved, index)
                    runs.pop()
                    reference = startup + work
                    self.say(f"process {started - 1} ({run.armed.point + ':' + str(run.armed.hit) if run.armed else 'unarmed'})"
                             " ran to the end past points left to kill in its work: run again from the state it "
                             "started from")
                    continue
                completed |= run.exit_code == 0
                reference = run.passed if run.exit_code == 0 or reference is None else continued(reference, run.passed)
        if not self.errors:
            self.check(index, runs, base, state, warcs)

    def follow(self, index: int, runs: list[Run], base: str, state: Path, warcs: Path) -> PageSteps | None:
        """Each reachable page's steps (:func:`follow_pages`), its losses and skipped steps kept
        for the mode's result; None when the outputs do not read (an error kept)."""
        try:
            steps = follow_pages(self.reachable, runs, base, state, warcs)
        except AssertionError as exc:
            self.errors.append(f"round {index}: {exc}")
            return None
        self.lost_log |= {f"{page} (round {index})" for page in steps.reachable - set(steps.log)}
        self.lost_warc |= {f"{page} (round {index})" for page in steps.reachable - set(steps.warc)}
        self.lost_steps |= {f"{page} (round {index})": step for page, step in steps.lost.items()}
        self.skipped += [f"{page}: {why} (round {index})" for page, why in sorted(steps.skipped.items())]
        return steps

    def check_dropped(self, index: int, runs: list[Run], base: str, state: Path, warcs: Path) -> None:
        """What a run about to be dropped (the last of ``runs``) leaves is checked like a round's
        end: nothing lost, no step skipped, and no repeat of its own that no kill explains."""
        steps = self.follow(index, runs, base, state, warcs)
        unexplained = attribute_repeats(runs)[1] - attribute_repeats(runs[:-1])[1]
        self.unexplained += unexplained
        if unexplained or steps is None or steps.lost or steps.skipped:
            self.say(f"round {index}, the run dropped: unexplained_repeats={unexplained} "
                     + (steps.summary() if steps else "outputs unreadable"))

    def check(self, index: int, runs: list[Run], base: str, state: Path, warcs: Path) -> None:
        if (steps := self.follow(index, runs, base, state, warcs)) is None:
            return
        repeats, unexplained = attribute_repeats(runs)
        round_kills = [k for k in self.kills if k.round == index]
        for kill in round_kills:
            kill.repeats = repeats[kill.run]
        self.unexplained += unexplained
        self.say(f"round {index}: processes={len(runs)} kills={len(round_kills)} "
                 f"repeats_per_kill={','.join(str(k.repeats) for k in round_kills) or '-'} "
                 f"unexplained_repeats={unexplained} {steps.summary()}")
        for kill in round_kills:
            if kill.repeats > CONCURRENCY:
                self.say(f"kill {self.kills.index(kill) + 1} ({kill.label()}) caused {kill.repeats} repeats, "
                         f"more than --concurrency {CONCURRENCY}")

    def run(self) -> ModeResult:
        progress = True
        while self.rounds < self.max_rounds and not self.errors and progress and (self.rounds == 0 or self.pending):
            killed = len(self.kills)
            self.round(self.rounds)
            self.rounds += 1
            progress = any(kill.point for kill in self.kills[killed:])
        unkilled = [f"{point} ({'later' if later else 'first'})" for point, later in self.pending]
        if unkilled:
            self.say(f"never killed: {', '.join(unkilled)}")
        for error in self.errors:
            self.say(f"error: {error}")
        killed = collections.defaultdict(list)
        for kill in self.kills:
            if kill.point is not None:
                killed[kill.point].append(str(kill.hit))
        self.say("points (most hits a process made: hits killed at): " + ", ".join(
            f"{point} {most}: {'/'.join(killed[point]) or '-'}" for point, most in sorted(self.most.items())))
        return ModeResult(self.mode.name, dict(self.most), self.kills, unkilled, sorted(self.lost_log),
                          sorted(self.lost_warc), collections.Counter(self.lost_steps.values()), self.skipped,
                          self.unexplained, self.errors, self.rounds)


STEPS = ("discovered", "fetched", "logged", "in_warc", "recorded")
"""A page's steps in a crawl, in their order: discovered (an outlink in the WARC metadata record
of a page, written with its capture; the seed is), fetched (the server served it), logged (a
200 line in crawl.log), in_warc (a response record in the WARC files) and recorded (its record in
the state's ``fetched`` database, written in the flush that commits its completion)."""


@dataclasses.dataclass
class PageSteps:
    """What a round's outputs, state and server say each page went through."""

    log: collections.Counter     # page -> its 200 lines in crawl.log
    warc: collections.Counter    # page -> its response records
    lost: dict[str, str]         # reachable page -> the first of its steps it never reached
    skipped: dict[str, str]      # page -> a step it reached without the one before it, or more often
    reachable: set[str]

    def summary(self) -> str:
        lost = collections.Counter(self.lost.values())
        examples = sorted(self.lost.items(), key=lambda item: (-STEPS.index(item[1]), item[0]))[:6]  # the first lost first
        return (f"lost_crawl_log={len(self.reachable - set(self.log))} lost_warc={len(self.reachable - set(self.warc))} "
                f"lost_at={','.join(f'{step}:{lost[step]}' for step in STEPS if lost[step]) or '-'} "
                f"skipped_steps={len(self.skipped)}"
                + (f" lost: {', '.join(f'{page} ({step})' for page, step in examples)}" if examples else "")
                + (f" skipped: {'; '.join(f'{page}: {why}' for page, why in sorted(self.skipped.items())[:4])}"
                   if self.skipped else ""))


def follow_pages(reachable: set[str], runs: list[Run], base: str, state: Path, warcs: Path) -> PageSteps:
    """Each page's steps (:data:`STEPS`) in a round whose processes were ``runs``: a reachable
    page is lost at the first step it never reached (at ``discovered``: a page above it was lost;
    at ``fetched``: found, never fetched). A step is skipped when a page has more 200 lines or
    response records than fetches, fetches that neither crawl.log nor the WARC files hold beyond
    those of killed processes (a fetch in process at a kill), or a 200 line whose via is not a
    page whose outlinks (its WARC metadata record) name it."""
    log, warc = crawl_log_200s(state / "crawl.log", base), warc_responses(warcs, base)
    vias = collections.defaultdict(set)
    for fields in map(str.split, (state / "crawl.log").read_text().splitlines()):
        if fields[1] == "200":
            vias[fields[3].removeprefix(base)].add(fields[5].removeprefix(base))
    found_on = warc_outlinks(warcs, base)
    records = recorded_pages(state, base)
    fetched, killed = collections.Counter(), collections.Counter()
    for run in runs:
        fetched.update(run.fetches)
        if run.killed:
            killed.update(run.fetches)
    lost, skipped = {}, {}
    for page in sorted(reachable | set(log) | set(warc)):
        discovered = page == "index.html" or bool(found_on[page])
        reached = dict(zip(STEPS, (discovered, fetched[page] > 0, log[page] > 0, warc[page] > 0, page in records)))
        missing = next((step for step in STEPS if not reached[step]), None)
        if page in reachable and missing is not None:
            lost[page] = missing
        if max(log[page], warc[page]) > fetched[page]:
            skipped[page] = f"{log[page]} 200 lines, {warc[page]} response records for {fetched[page]} fetches"
        elif fetched[page] - min(log[page], warc[page]) > killed[page]:
            skipped[page] = (f"{fetched[page]} fetches, {killed[page]} by killed processes, "
                             f"{log[page]} 200 lines, {warc[page]} response records")
        elif bad_vias := {via for via in vias[page] if via != "-" and via not in found_on[page]}:
            skipped[page] = f"logged via {', '.join(sorted(bad_vias))}, whose outlinks do not name it"
    return PageSteps(log, warc, lost, skipped, reachable)


def recorded_pages(state: Path, base: str) -> set[str]:
    """The pages the state's ``fetched`` database holds a record of, read by ``pycrawler store
    dump`` (a JVM in the harness's own process would hold up its exit)."""
    dump = subprocess.run([sys.executable, "-m", "pycrawler", "store", "dump", str(state), "--db", "fetched",
                           "--key", "string", "--no-progress"], cwd=ROOT, capture_output=True, text=True)
    assert dump.returncode == 0, f"store dump of the state's fetched records: {dump.stderr.strip()[-300:]}"
    return {json.loads(line)["key"].removeprefix(base) for line in dump.stdout.splitlines()}


def warc_outlinks(directory: Path, base: str) -> collections.defaultdict:
    """Site path -> the pages whose WARC metadata records name it as an outlink."""
    found_on = collections.defaultdict(set)
    for path in sorted(directory.glob("*.warc.gz")):
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream):
                if record.rec_type == "metadata":
                    page = record.rec_headers.get_header("WARC-Target-URI").removeprefix(base)
                    for line in record.content_stream().read().decode().splitlines():
                        if line.startswith("outlink: "):
                            found_on[line.split()[1].removeprefix(base)].add(page)
    return found_on


def passed_so_far(trace: Path) -> list[str]:
    """The points a process has passed, from its trace (a line being written is left out)."""
    text = trace.read_text() if trace.exists() else ""
    return text[:text.rfind("\n") + 1].split()


def whole_lines(log: Path) -> bool:
    """Whether ``log`` holds a whole line."""
    return log.exists() and b"\n" in log.read_bytes()


def tear_last_line(log: Path) -> None:
    """Leave ``log`` as a kill in the middle of appending a line leaves it: after its whole
    lines, the first half of one more (here a copy of the last; nothing when it is torn already)."""
    data = log.read_bytes()
    if data.endswith(b"\n"):
        last = data[data.rfind(b"\n", 0, len(data) - 1) + 1:]
        with open(log, "ab") as file:
            file.write(last[:len(last) // 2])


def missed_in_startup(armed: Target, passed: list[str]) -> bool:
    """A process armed with a start-up point passed a flush without reaching the point's hit."""
    return any(name.startswith(FLUSH_POINTS) for name in passed) and passed.count(armed.point) < armed.hit


def settled_counts(server: CountingServer, quiet: float = 0.1, limit: float = 2.0) -> dict[str, int]:
    """The server's counts once no request has arrived for ``quiet`` seconds: a request a
    process sent just before it died is counted as that process's."""
    counts, stable_since, deadline = server.page_counts(), time.monotonic(), time.monotonic() + limit
    while time.monotonic() - stable_since < quiet and time.monotonic() < deadline:
        time.sleep(0.02)
        now = server.page_counts()
        if now != counts:
            counts, stable_since = now, time.monotonic()
    return counts


def attribute_repeats(runs: list[Run]) -> tuple[list[int], int]:
    """Repeats caused by each run's kill, and those no kill explains. A page's fetches, in the
    order of the runs that made them: each fetch after the first is a repeat of the kill that
    ended the run of the fetch before it (that run fetched the page and died before committing
    it); the same run twice, or a run that was not killed, explains nothing."""
    caused, unexplained = [0] * len(runs), 0
    for page in {page for run in runs for page in run.fetches}:
        order = [i for i, run in enumerate(runs) for _ in range(run.fetches.get(page, 0))]
        for before, again in zip(order, order[1:]):
            if before != again and runs[before].killed:
                caused[before] += 1
            else:
                unexplained += 1
    return caused, unexplained


@contextlib.contextmanager
def cluster_redis(mode: Mode, work: Path):
    """A private redis-server for a cluster mode (its URL), None for a crawl on its own."""
    if mode.dedupe is None:
        yield None
        return
    from pycrawler.testing.local_redis import LocalRedis

    with LocalRedis(work / "redis") as url:
        yield url


def run_mode(name: str, *, pages: int, tree_pages: int, seed: int, random_kills: int, max_rounds: int,
             out=sys.stdout) -> ModeResult:
    """One mode's campaign in a scratch folder of its own; prints and returns its result."""
    mode = MODES[name]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"crashpoints-{name}-") as scratch:
        work = Path(scratch)
        with cluster_redis(mode, work) as redis_url:
            result = Campaign(mode, work, pages=pages, tree_pages=tree_pages, seed=seed, random_kills=random_kills,
                              max_rounds=max_rounds,
                              out=out, redis_url=redis_url).run()
    result.seconds = time.monotonic() - started
    print(result.line(), file=out, flush=True)
    return result


def run_modes(names, *, parallel: int = 2, out=sys.stdout, **options) -> list[ModeResult]:
    """:func:`run_mode` for each of ``names``, ``parallel`` at a time (their lines, each naming
    its mode, interleave in ``out``); the results in the order of ``names``."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=parallel) as pool:
        return list(pool.map(lambda name: run_mode(name, out=out, **options), names))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--pages", type=int, default=300, help="cross-linked pages of the generated site (default 300)")
    parser.add_argument("--tree-pages", type=int, default=TREE_PAGES,
                        help=f"and pages of its tree, one in-link each (default {TREE_PAGES})")
    parser.add_argument("--random-kills", type=int, default=6, help="random kills opening each mode (default 6)")
    parser.add_argument("--max-rounds", type=int, default=6, help="crawls from scratch per mode, at most (default 6)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the site, the later hits and random kills")
    parser.add_argument("--parallel", type=int, default=2, help="modes run at once (default 2)")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 31)
    print(f"crash points: seed={seed} pages={args.pages} tree_pages={args.tree_pages} random_kills={args.random_kills} "
          f"concurrency={CONCURRENCY} modes={','.join(args.modes)}", flush=True)
    started = time.monotonic()
    results = run_modes(args.modes, parallel=args.parallel, pages=args.pages, tree_pages=args.tree_pages, seed=seed,
                        random_kills=args.random_kills, max_rounds=args.max_rounds)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    lost = sum(len(r.lost_log) + len(r.lost_warc) for r in results)
    print(f"total modes={len(results)} points={sum(len(r.points) for r in results)} "
          f"kills={sum(len(r.kills) for r in results)} repeats={sum(k.repeats for r in results for k in r.kills)} "
          f"lost={lost} failed={sum(not r.ok for r in results)} seconds={time.monotonic() - started:.0f} "
          f"cpu_seconds={usage.ru_utime + usage.ru_stime:.0f}", flush=True)
    return 0 if all(r.ok for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
