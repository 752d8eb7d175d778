"""The synthetic web (pycrawler/testing/synthetic_web.py, synthetic_server.py), scripts/bench/scale.py
and the crawl's ``--stats`` it reads: a web deterministic from its seed, served as it is computed,
whose ground truth is what a real crawl of it fetches, each URL once."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request

import numpy as np
import pytest

from pycrawler.errors import BadInput
from pycrawler.testing.synthetic_server import PageRenderer, SyntheticServer
from pycrawler.testing.synthetic_web import MISSING, PAGE, REDIRECT, SyntheticWeb

from conftest import ROOT
from crawl_sites import run_crawl

SCALE = ROOT / "scripts" / "bench" / "scale.py"


def scale(*args: str) -> tuple[int, dict[str, str], str]:
    """Run scale.py; (exit code, its key=value figures, its whole output)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, str(SCALE), *args], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=180)
    lines = done.stdout.strip().splitlines()
    figures = dict(pair.split("=", 1) for pair in lines[-1].split()) if done.returncode == 0 and lines else {}
    return done.returncode, figures, done.stdout + done.stderr


def test_the_same_seed_makes_the_same_web_and_another_seed_another():
    a, b, c = SyntheticWeb(20_000, 4, seed=5), SyntheticWeb(20_000, 4, seed=5), SyntheticWeb(20_000, 4, seed=6)
    ids = np.arange(20_000)
    for field in ("source", "kind", "target", "variant"):
        assert np.array_equal(getattr(a.links(ids), field), getattr(b.links(ids), field))
    assert np.array_equal(a.size(ids), b.size(ids))
    assert np.array_equal(a.truth().pages, b.truth().pages)
    assert PageRenderer(a, 80).page(4321) == PageRenderer(b, 80).page(4321)
    assert not np.array_equal(a.links(ids).target, c.links(ids).target)
    assert PageRenderer(a, 80).page(4321) != PageRenderer(c, 80).page(4321)


def test_the_web_has_the_shape_it_is_drawn_from():
    web = SyntheticWeb(100_000, 8, seed=24)
    ids = np.arange(100_000)
    pages = ids[~web.is_redirect(ids)]
    links = web.links(pages)
    shape = web.shape
    assert abs(web.is_redirect(ids).mean() - shape.redirect_share) < 0.005
    random_links = web.degree(pages).sum()                   # the tree links are never missing
    assert abs((links.kind == MISSING).sum() / random_links - shape.missing_share) < 0.01
    assert abs((links.variant > 0).mean() - shape.duplicate_share) < 0.01
    degree = web.degree(ids)
    assert degree.min() == shape.min_links and degree.max() > 10 * shape.min_links  # a heavy tail
    in_links = np.bincount(links.target[links.kind == PAGE], minlength=100_000)
    assert in_links[:8].min() > 100 * np.median(in_links)  # the roots collect most links: a power law
    same_host = (links.target[links.kind != MISSING] % 8) == (links.source[links.kind != MISSING] % 8)
    assert same_host.mean() > shape.locality
    sizes = web.size(ids)
    assert 0.8 * shape.median_bytes < np.median(sizes) < 1.2 * shape.median_bytes


def test_the_ground_truth_is_a_walk_not_a_count():
    web = SyntheticWeb(2_000, 3, seed=24)
    truth = web.truth()
    ids = np.arange(2_000)
    assert {0, 1, 2} <= set(truth.pages.tolist())                  # every root
    assert not web.is_redirect(truth.pages).any() and web.is_redirect(truth.redirects).all()
    assert np.isin(web.redirect_target(truth.redirects), truth.pages).all()
    unreached = np.setdiff1d(ids[~web.is_redirect(ids)], truth.pages)
    assert len(unreached) > 0
    # missed: pages out of the tree (orphans, or under a redirect page) that no reached page links to
    parents = unreached % 3 + 3 * ((unreached // 3 - 1) // web.shape.tree_fanout)
    assert (web.is_orphan(unreached) | web.is_redirect(parents)).all()
    links = web.links(truth.pages)
    assert not np.isin(unreached, links.target[links.kind == PAGE]).any()
    assert truth.fetches == len(truth.pages) + len(truth.redirects) + len(truth.missing)


def test_the_server_answers_pages_redirects_and_missing_pages():
    web = SyntheticWeb(2_000, 3, seed=24)
    truth = web.truth()
    with SyntheticServer(web) as server:
        page = int(truth.pages[10])
        body = urllib.request.urlopen(web.url(server.port, PAGE, page)).read()
        assert body == PageRenderer(web, server.port).page(page)
        assert body.count(b"<a href=") == np.count_nonzero(web.links(np.array([page])).source == page)
        redirect = int(truth.redirects[0])
        answer = urllib.request.urlopen(web.url(server.port, REDIRECT, redirect))
        assert answer.geturl() == web.url(server.port, PAGE, int(web.redirect_target(np.array([redirect]))[0]))
        for kind, number in ((MISSING, int(truth.missing[0])), (PAGE, 99_999)):
            with pytest.raises(urllib.error.HTTPError) as error:
                urllib.request.urlopen(web.url(server.port, kind, number))
            assert error.value.code == 404


def test_a_web_out_of_range_is_refused():
    with pytest.raises(BadInput):
        SyntheticWeb(0, 1)
    with pytest.raises(BadInput):
        SyntheticWeb(100, 300)
    code, _, output = scale("--pages", "100", "--hosts", "300")
    assert code == 2 and output.strip().splitlines() == [output.strip()] and "hosts" in output


def test_a_crawl_fetches_the_ground_truth_once(tmp_path):
    state = tmp_path / "state"
    code, figures, output = scale("--pages", "2000", "--hosts", "3", "--seen", "drum", "--window", "500",
                                  "--state", str(state), "--interval", "1", "--plot-time", str(tmp_path / "time.png"))
    assert code == 0, output
    assert figures["coverage"] == "1.0" and figures["fetched_pages"] == figures["truth_pages"]
    assert figures["repeats"] == "0" and figures["strays"] == "0"
    assert figures["fetches"] == figures["truth_fetches"]   # redirects and 404s once each too
    assert int(figures["je_cache_misses"]) >= 0 and int(figures["je_log_bytes_per_url"]) > 0
    assert 0 < float(figures["server_cpu_share"]) < 0.5
    assert re.search(r'"seen_ops_s": [1-9]', output)
    # the stall figures, and the counters that name a dip's causes, moving in the crawl's --stats
    assert int(figures["intervals"]) >= 2 and float(figures["worst_window_vs_median"]) <= 1.0
    assert (tmp_path / "time.png").read_bytes().startswith(b"\x89PNG")
    last = json.loads(state.with_suffix(".stats.jsonl").read_text().splitlines()[-1])
    assert last["je_checkpoints"] >= 1 and last["je_cleaner_runs"] >= 0
    assert last["jvm_gc_s"] >= 0 and last["py_gc_s"] > 0 and last["drum_merge_s"] > 0


def test_a_crawl_killed_and_restarted_still_fetches_the_ground_truth():
    code, figures, output = scale("--pages", "2000", "--hosts", "3", "--seen", "exact", "--kill-at", "600",
                                  "--window", "500")
    assert code == 0, output
    assert int(figures["kill_pages"]) >= 600 and float(figures["first_fetch_s"]) > 0
    assert figures["coverage"] == "1.0" and figures["strays"] == "0"
    assert int(figures["repeats"]) <= 32                    # at most the fetches in flight at the kill
    assert "full_speed_s" in figures


def test_an_unwritable_stats_file_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "file").write_text("")
    done = run_crawl("http://127.0.0.1:9/", tmp_path / "state", "--stats", str(tmp_path / "file" / "stats.jsonl"))
    assert done.returncode == 2
    assert done.stderr.strip() == f"pycrawler: cannot write --stats {tmp_path / 'file' / 'stats.jsonl'}: File exists"

