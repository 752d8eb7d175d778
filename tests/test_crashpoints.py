"""The crash-point harness's CI form (tests/crashpoints.py), two modes a test: every seen table
bare and DRUM behind a URL cache here, the other modes (a URL cache in front of the exact set and
the Bloom filter, a one-worker cluster of each kind) in tests/test_crashpoints_above_je.py; each
killed -9 at every failpoint
its runs pass (at the first hit and at a later one) and at random, resumed each time with the
same command; on a site whose pages are cross-linked and a tree whose pages each have one in-link,
every reachable page goes through each of its steps (discovered, fetched, logged, in the WARC
files, recorded in the state) and none is reached without the one before it, no kill repeats
more than --concurrency pages, and no mode passes with fewer kills than points. The harness must
reach what it guards: each mode passes the points of its own durable steps (a DRUM merge and
its removal of bucket files, a mark log's replay, WARC repair, JE's recovery and close).

And the failpoints the code passes are the ones :data:`pycrawler.failpoints.POINTS` registers.
"""

from __future__ import annotations

import io
import re

import pytest

from conftest import missing
from crashpoints import MODES, TREE_PAGES, run_modes
from crawl_sites import ROOT
from pycrawler.failpoints import POINTS
from pycrawler.testing.local_redis import find_redis_server

PAGES, SEED, RANDOM_KILLS, MAX_ROUNDS = 200, 20240611, 2, 4

EVERY_MODE = {"crawl.settings_written", "je.recovered", "je.closing", "je.closed", "warc.repair.cut",
              "warc.repair.renamed", "warc.file.finished", "outputs.log_flushed", "flush.outputs_written",
              "flush.links_enqueued", "flush.fetched_written", "flush.completions_committed",
              "crawl.close.outputs_closed", "crawl.close.frontier_closed"}
"""The points every mode's runs must pass: start-up (JE's recovery, WARC repair), flush, close."""
OWN_POINTS = {
    "bloom": {"bloom.create.written", "bloom.create.renamed", "marklog.logged", "marklog.committed", "marklog.marked",
              "marklog.replaying", "marklog.replayed"},
    "drum": {"drum.bucket.aux_appended", "drum.buffers.persisted", "drum.merge.written", "drum.round.merged",
             "drum.merge.committed", "drum.merge.kv_removed"},
    "exact": set(),
}
"""And those of each seen table's own durable steps."""


JE_PAIRS = [["exact", "bloom"], ["drum", "drum+cache"]]
"""Modes two at a time (the harness runs the two together: a crawl process waits on its JVM's
start most of its life). These hold what a kill leaves in JE, so they run on every JE; the
other modes are in tests/test_crashpoints_above_je.py, a file of its own so that the two test
workers share the harness."""


@pytest.mark.parametrize("names", JE_PAIRS, ids="-".join)
def test_a_kill_at_every_failpoint_and_at_random_loses_no_page(names):
    kill_at_every_failpoint(names)


def kill_at_every_failpoint(names: list[str]) -> None:
    """The harness's CI form for the modes ``names``, and every check of its results."""
    if any(MODES[name].dedupe for name in names) and find_redis_server() is None:
        missing("redis-server is not installed (scripts/setup installs it)")
    out = io.StringIO()
    results = run_modes(names, parallel=2, out=out, pages=PAGES, tree_pages=TREE_PAGES, seed=SEED,
                        random_kills=RANDOM_KILLS, max_rounds=MAX_ROUNDS)
    log = out.getvalue()
    for result in results:
        assert not result.errors, log
        assert not result.lost_log and not result.lost_warc and not result.lost_steps, log
        assert not result.skipped, log
        assert not result.over_bound and not result.unexplained, log
        assert not result.unkilled, log
        assert result.point_kills >= len(result.points), log
        assert EVERY_MODE | OWN_POINTS[MODES[result.mode].seen] <= set(result.points), log
        assert len(result.kills) > result.point_kills, f"no random kill\n{log}"


def test_the_failpoints_in_the_code_are_the_registered_ones():
    sources = [path.read_text() for path in (ROOT / "pycrawler").rglob("*.py")]
    calls = [call for text in sources for call in re.findall(r"failpoints\.hit\(([^)]*)\)", text)]
    assert calls, "no failpoint in the code"
    assert all(re.fullmatch(r'"[a-z0-9_.]+"', call) for call in calls), "a failpoint named by other than a literal"
    passed = {call.strip('"') for call in calls}
    assert passed - POINTS.keys() == set(), "passed in the code, missing from failpoints.POINTS"
    assert POINTS.keys() - passed == set(), "registered in failpoints.POINTS, passed nowhere in the code"
