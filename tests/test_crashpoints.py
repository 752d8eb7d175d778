"""The crash-point harness's small form (tests/crashpoints.py): every seen table, bare and
behind a URL cache, killed -9 a few times during a crawl with --warc, resumed, completed;
nothing reachable is missing from crawl.log or the WARC files, and the pages fetched again
stay within --concurrency per kill. The large form (30 kills a mode) is run by hand and its
figures are in docs/crawler.md."""

from __future__ import annotations

import io

from crashpoints import MODES, run

KILLS, PAGES, SEED = 3, 120, 20240611


def test_kills_at_seeded_points_lose_no_page_in_any_seen_mode():
    out = io.StringIO()
    results = run(KILLS, PAGES, SEED, MODES, out=out)
    assert len(results) == 2 * len(MODES)
    assert sum(r.kills for r in results) >= len(results), out.getvalue()  # most crawls were killed at least once
    for result in results:
        assert not result.lost_log and not result.lost_warc, f"{result.line()}\n{out.getvalue()}"
        assert result.repeats <= result.bound, f"{result.line()}\n{out.getvalue()}"
        assert result.exit_code == 0, out.getvalue()
    assert f"seed={SEED}" in out.getvalue()
