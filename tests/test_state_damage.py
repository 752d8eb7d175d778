"""A damaged crawl state is repaired from crawl.log and the WARC files, or refused in one line;
a folder that is no crawl state is refused before anything is written into it.

The state's JE files are cut as a disk or a careless copy cuts them: JE's recovery keeps its
log up to the cut and silently drops the commits after it, so a crawl that believed the state
would fetch again every page fetched since (or, with the file cut to its first kilobyte, crawl
the site from scratch). Real JE, a real site on loopback.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from crawl_sites import (ROOT, CountingServer, assert_each_page_fetched_once, crawl_command, fetched_records, run_crawl,
                         write_site)

PAGES = 800
FIRST_RUN = 500   # pages the first run fetches (--max-pages), so the repaired crawl has pages left to fetch


def crawl_log_urls(state: Path) -> list[str]:
    return [line.split()[3] for line in (state / "crawl.log").read_text().splitlines()]


def folder_bytes(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (names, and content digests): what a refusal must leave as it was."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(folder.rglob("*"))}


def the_jdb(state: Path) -> Path:
    (jdb,) = state.glob("*.jdb")
    return jdb


def cut_jdb(state: Path, size: int) -> None:
    with open(the_jdb(state), "r+b") as file:
        file.truncate(size)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    reachable = write_site(root, PAGES)
    server = CountingServer(root)
    with server as url:
        yield server, url, reachable


@pytest.fixture(scope="module")
def first_runs(site, tmp_path_factory):
    """``first_runs(seen)``: a state whose crawl with that seen table fetched FIRST_RUN pages with
    WARC files (a folder beside it), and the server's counts of that run; made once a table."""
    server, url, _ = site
    made = {}

    def first_run(seen: str, pages: int = FIRST_RUN):
        if (seen, pages) not in made:
            base = tmp_path_factory.mktemp(f"first-{seen}")
            server.counts.clear()
            done = run_crawl(url, base / "state", "--delay", "0", "--max-pages", str(pages), "--seen", seen,
                             "--warc", str(base / "warcs"), timeout=180)
            assert done.returncode == 0, done.stderr
            made[seen, pages] = base, server.page_counts()
        return made[seen, pages]
    return first_run


def copy_first_run(first_runs, tmp_path, seen: str = "exact", pages: int = FIRST_RUN):
    """A fresh copy of the first run's state and WARC files, and the first run's counts."""
    base, counts = first_runs(seen, pages)
    shutil.copytree(base / "state", tmp_path / "state")
    shutil.copytree(base / "warcs", tmp_path / "warcs")
    return tmp_path, counts


@pytest.fixture
def copy_of_first_run(first_runs, tmp_path):
    return copy_first_run(first_runs, tmp_path)


def resume(site, folder: Path, *options: str, warcs: bool = True):
    server, url, _ = site
    server.counts.clear()
    warc = ("--warc", str(folder / "warcs")) if warcs else ()
    done = run_crawl(url, folder / "state", "--delay", "0", *warc, *options, timeout=180)
    return done, server.page_counts()


def assert_whole_site_once(site, state: Path, first: dict, second: dict) -> None:
    """Both runs together fetched every reachable page once, and crawl.log names each URL once."""
    _, _, reachable = site
    together = {path: first.get(path, 0) + second.get(path, 0) for path in first.keys() | second.keys()}
    assert_each_page_fetched_once(together, reachable)
    logged = crawl_log_urls(state)
    assert len(logged) == len(set(logged)), [u for u in set(logged) if logged.count(u) > 1][:5]
    assert len(fetched_records(state)) == len(logged)


def test_a_jdb_cut_in_half_is_repaired_from_crawl_log_and_the_warc_files_and_no_page_is_fetched_twice(
        site, copy_of_first_run):
    folder, first = copy_of_first_run
    cut_jdb(folder / "state", the_jdb(folder / "state").stat().st_size // 2)
    done, second = resume(site, folder)
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if "its JE files had lost commits" in line]
    assert ", not fetched again" in line and "no WARC file holds" not in line
    assert_whole_site_once(site, folder / "state", first, second)


@pytest.mark.parametrize("seen", ["bloom", "drum"])
def test_a_cut_jdb_whose_seen_table_lives_outside_je_is_refused_in_one_line(site, first_runs, tmp_path, seen):
    folder, _ = copy_first_run(first_runs, tmp_path, seen, pages=100)
    cut_jdb(folder / "state", 1000)
    log = (folder / "state" / "crawl.log").read_bytes()
    done, second = resume(site, folder)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert f"its --seen {seen} table keeps files outside JE" in line and "fresh --state" in line, line
    assert not second and (folder / "state" / "crawl.log").read_bytes() == log


def test_a_kill_during_the_repair_leaves_the_rest_of_the_lost_fetches_to_the_next_run(site, copy_of_first_run):
    folder, first = copy_of_first_run
    cut_jdb(folder / "state", 1000)
    server, url, reachable = site
    server.quiet()
    server.counts.clear()
    killed = subprocess.run(crawl_command(url, folder / "state", "--delay", "0", "--warc", str(folder / "warcs")),
                            cwd=ROOT, capture_output=True, text=True, timeout=180,
                            env=dict(os.environ, PYCRAWLER_FAILPOINT="flush.completions_committed:3"))
    assert killed.returncode == -9, killed.stderr
    second = server.page_counts()
    done, third = resume(site, folder)
    assert done.returncode == 0, done.stderr
    assert "its JE files had lost commits" in done.stdout
    again = {path for path in first if second.get(path) or third.get(path)}
    assert not again  # every page the lost commits had fetched was replayed, across the kill too
    assert {p for p in first.keys() | second.keys() | third.keys() if p.endswith(".html")} == reachable | {"d0/missing.html"}


def test_a_jdb_cut_to_its_first_kilobyte_is_replayed_whole_not_crawled_from_scratch(site, copy_of_first_run):
    folder, first = copy_of_first_run
    cut_jdb(folder / "state", 1000)
    done, second = resume(site, folder)
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if "its JE files had lost commits" in line]
    assert f"{FIRST_RUN:,} replayed" in line
    assert_whole_site_once(site, folder / "state", first, second)


def test_a_cut_jdb_with_no_warc_files_to_rebuild_from_is_refused_in_one_line_with_the_way_out(
        site, copy_of_first_run):
    folder, first = copy_of_first_run
    cut_jdb(folder / "state", 1000)
    log = (folder / "state" / "crawl.log").read_bytes()
    done, second = resume(site, folder, warcs=False)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "lost commits" in line and "--repair" in line and "fresh --state" in line, line
    assert not second and (folder / "state" / "crawl.log").read_bytes() == log

    done, second = resume(site, folder, "--repair", warcs=False)  # the way out: what no WARC holds is fetched again
    assert done.returncode == 0, done.stderr
    assert f"{FIRST_RUN:,} no WARC file holds were fetched again" in done.stdout
    _, _, reachable = site
    assert {p for p in second if p.endswith(".html")} == reachable | {"d0/missing.html"}


def test_a_crawl_log_that_lost_lines_the_state_committed_is_refused(site, copy_of_first_run):
    folder, _ = copy_of_first_run
    log = folder / "state" / "crawl.log"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:len(lines) // 2]))
    done, second = resume(site, folder)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "crawl.log ends at byte" in line and "lost lines" in line
    assert not second


def test_a_state_whose_crawl_log_is_gone_is_refused(site, copy_of_first_run):
    folder, _ = copy_of_first_run
    (folder / "state" / "crawl.log").unlink()
    done, second = resume(site, folder)
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "crawl.log is gone" in line and "fresh --state" in line
    assert not second and not (folder / "state" / "crawl.log").exists()


def test_a_je_environment_that_is_not_a_crawl_state_is_refused_with_nothing_written(site, tmp_path):
    import pycrawler.store

    store = tmp_path / "mystore"
    with pycrawler.store.open(store, create=True) as env:  # the README's store example
        urls = env.open_database("urls", create=True)
        urls.put_many([b"https://example.org/", b"https://example.org/a"], [b"200", b"404"])
    before = folder_bytes(store)
    _, url, _ = site
    done = run_crawl(url, store, "--delay", "0")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "holds a JE environment but no crawl.json: it is not a crawl state" in line
    assert folder_bytes(store) == before


def test_a_folder_of_other_files_is_refused_with_nothing_written(site, tmp_path):
    folder = tmp_path / "papers"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "a.txt").write_text("mine\n")
    (folder / "b.pdf").write_bytes(b"%PDF-1.4\n")
    before = folder_bytes(folder)
    _, url, _ = site
    done = run_crawl(url, folder, "--delay", "0")
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "holds 2 other files but no crawl.json: it is not a crawl state" in line
    assert folder_bytes(folder) == before
