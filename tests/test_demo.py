"""The interim demo: a documentation folder's link graph stored in JE, as the docstring says."""

from __future__ import annotations

import pytest

from pycrawler import demo
from pycrawler.cli import main
from pycrawler.errors import BadInput, SetupError
from pycrawler.store import Environment

BASE = demo.BASE_URL


@pytest.fixture
def docs(tmp_path):
    """A three-page site: links up and across folders, a duplicate, a dangling one, an external."""
    root = tmp_path / "api"
    (root / "pkg").mkdir(parents=True)
    (root / "index.html").write_text(
        '<html><head><title>Index &amp; overview</title><link href="style.css"></head>'
        '<a href="pkg/A.html">A</a> <a href="pkg/A.html#m">A again</a> <a href="#top">top</a>'
        '<a href="https://example.org/x#y">out</a> <a href="mailto:x@example.org">mail</a></html>')
    (root / "style.css").write_text("body {}")
    (root / "pkg" / "A.html").write_text(
        "<title>A</title><a href='../index.html'>up</a> <a href=\"B.html\">B</a> <a href=\"gone.html\">gone</a>")
    (root / "pkg" / "B.html").write_text("<title>B</title><a href='../../../index.html?q=1'>clamped</a>")
    return root


def test_resolve_follows_relative_links_like_a_browser():
    assert demo.resolve("java.base/java/lang", "../util/List.html#add()") == BASE + "java.base/java/util/List.html"
    assert demo.resolve("a", "../../../x.html") == BASE + "x.html"
    assert demo.resolve("a", "b.html?x=1&amp;y=2") == BASE + "a/b.html?x=1&y=2"
    assert demo.resolve("a", "HTTPS://example.org/p") == "HTTPS://example.org/p"
    assert demo.resolve("a", "#frag") is None
    assert demo.resolve("a", "javascript:void(0)") is None


def test_demo_stores_pages_and_links_and_counts_them(docs, tmp_path):
    state = tmp_path / "state"
    summary = demo.run(docs, state)
    assert summary.pages == 3
    # index: style.css, pkg/A.html (twice: one link), example.org; A: index, B, gone; B: index?q=1
    assert summary.links == 7
    assert summary.targets == 7
    assert summary.external_targets == 1
    assert (summary.dangling_targets, summary.dangling_links) == (1, 1)  # pkg/gone.html
    assert summary.records == 10
    assert summary.store_bytes > 0

    with Environment(state, read_only=True) as env:
        pages = env.open_database("pages")
        assert pages.get(demo.string_key(BASE + "index.html")) == demo.string_key("Index & overview")
        links = env.open_database("links")
        prefix = demo.string_key(BASE + "pkg/A.html")
        assert [k[len(prefix):] for k in links.keys(prefix=prefix)] == [
            demo.string_key(BASE + u) for u in ("index.html", "pkg/B.html", "pkg/gone.html")]


def test_each_run_starts_fresh_but_never_deletes_a_foreign_folder(docs, tmp_path):
    state = tmp_path / "state"
    demo.run(docs, state)
    (docs / "pkg" / "B.html").unlink()
    assert demo.run(docs, state).pages == 2

    foreign = tmp_path / "precious"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(BadInput, match="not a demo state folder"):
        demo.run(docs, foreign)
    assert (foreign / "notes.txt").read_text() == "keep me"


def test_missing_documentation_is_one_line_naming_scripts_setup(tmp_path, capsys):
    with pytest.raises(SetupError, match="scripts/setup"):
        demo.run(tmp_path / "nowhere", tmp_path / "state")
    assert main(["demo", "--docs", str(tmp_path / "nowhere"), "--state", str(tmp_path / "state")]) == 3
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "scripts/setup" in err
