"""The demo: a documentation folder served on loopback, crawled into JE, checked against the files."""

from __future__ import annotations

import pytest
from crawl_sites import fetched_records, write_site

from pycrawler import demo
from pycrawler.cli import main
from pycrawler.errors import BadInput, SetupError


@pytest.fixture
def docs(tmp_path):
    """A generated docs tree: 60 pages reachable from index.html, orphans, a dangling link."""
    root = tmp_path / "api"
    return root, write_site(root, 60)


def test_demo_crawls_every_reachable_page_and_reports_coverage(docs, tmp_path):
    root, reachable = docs
    state = tmp_path / "state"
    summary = demo.run(root, state, concurrency=8)
    assert (summary.reachable, summary.covered, summary.coverage) == (len(reachable), len(reachable), 1.0)
    assert summary.crawl.fetched == len(reachable) + 1  # and the dangling link's 404
    assert summary.crawl.dupes_avoided > 0 and summary.crawl.store_bytes > 0
    records = fetched_records(state)
    assert {url.removeprefix(summary.base_url) for url, r in records.items() if r.status_code == 200} == reachable
    lines = list(demo.report(summary, state))
    assert any(line.startswith("coverage:") and "100.00%" in line for line in lines)


def test_each_run_starts_fresh_but_never_deletes_a_foreign_folder(docs, tmp_path):
    root, reachable = docs
    state = tmp_path / "state"
    demo.run(root, state, concurrency=8)
    (root / "orphan0.html").write_text("<a href='index.html'>x</a>")
    assert demo.run(root, state, concurrency=8).crawl.fetched == len(reachable) + 1  # not resumed: refetched

    foreign = tmp_path / "precious"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(BadInput, match="not a demo state folder"):
        demo.run(root, foreign)
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_missing_documentation_is_one_line_naming_scripts_setup(tmp_path, capsys):
    with pytest.raises(SetupError, match="scripts/setup"):
        demo.run(tmp_path / "nowhere", tmp_path / "state")
    assert main(["demo", "--docs", str(tmp_path / "nowhere"), "--state", str(tmp_path / "state")]) == 3
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "scripts/setup" in err
