"""Live progress as a user sees it: commands run with stderr on a real pseudo-terminal draw a
live display there (tqdm's, see pycrawler/progress.py) that updates in place, while standard
output, where the data goes, stays byte for byte what it is without a terminal; without a
terminal, or with --no-progress, nothing is drawn."""

from __future__ import annotations

import dataclasses
import io
import re
import subprocess
import sys

import pytest
from crawl_sites import ROOT, CountingServer, write_site
from heritrix_stores import crawl, write_h1

from pycrawler.heritrix.journal import ADDED, journal_line, write_journal

sys.path.insert(0, str(ROOT / "scripts" / "bench"))
from terminal import pseudo_terminal  # the benchmarks' terminal, shared

RECORDS = 30_000
COLUMNS = 120
FRAME = re.compile(r"\r([^\r\n\x1b]+)")  # what one redraw leaves on a line


@dataclasses.dataclass
class Run:
    returncode: int
    stdout: bytes     # what went to the pipe
    terminal: str     # everything written to the terminal (stderr)

    def frames(self, start: str) -> list[str]:
        """The successive drawings of the display line that starts with ``start``."""
        return [f.rstrip() for f in FRAME.findall(self.terminal) if f.startswith(start)]


def in_terminal(*args, timeout: float = 120) -> Run:
    """``pycrawler ARGS`` with stderr on a pseudo-terminal COLUMNS wide, as in a user's shell,
    and stdout to a pipe (as in ``pycrawler store dump ... > file`` there)."""
    shown = io.BytesIO()
    with pseudo_terminal(shown, COLUMNS) as terminal:
        child = subprocess.Popen([sys.executable, "-m", "pycrawler", *map(str, args)], cwd=ROOT,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=terminal)
        stdout, _ = child.communicate(timeout=timeout)
    return Run(child.returncode, stdout, shown.getvalue().decode("utf-8", "replace"))


def plain(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pycrawler", *map(str, args)], cwd=ROOT, capture_output=True,
                          timeout=120)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from pycrawler.store import Environment

    path = tmp_path_factory.mktemp("progress") / "env"
    with Environment(path, create=True) as env, env.open_database("pages", create=True) as db:
        db.put_many([b"page%06d" % i for i in range(RECORDS)], [b"v" * (i % 50) for i in range(RECORDS)])
    return path


def counts(frames: list[str], unit: str) -> list[int]:
    """The count each frame shows: ``12 URLs [...`` without a total, ``12/24 [...`` with one."""
    return [int(m.group(1)) for f in frames if (m := re.search(rf"(\d+)(?: {unit}|/\d+) \[", f))]


@pytest.mark.parametrize("fmt", ["jsonl", "dbdump"])
def test_store_dump_draws_a_bar_on_the_terminal_and_leaves_stdout_byte_identical(store, fmt):
    without = plain("store", "dump", store, "--db", "pages", "--format", fmt)
    assert without.returncode == 0 and without.stderr == b""  # no terminal: no display
    run = in_terminal("store", "dump", store, "--db", "pages", "--format", fmt)
    assert run.returncode == 0, run.terminal
    assert run.stdout == without.stdout
    frames = run.frames("dump pages:")
    assert frames[0].startswith("dump pages:   0%") and f"0/{RECORDS}" in frames[0]
    assert frames[-1].startswith("dump pages: 100%") and f"{RECORDS}/{RECORDS} [" in frames[-1]
    assert frames[-1].endswith("records/s]")


def test_store_load_counts_records_live_and_prints_its_line_as_before(store, tmp_path):
    dump = tmp_path / "pages.jsonl"
    assert plain("store", "dump", store, "--db", "pages", "-o", dump).returncode == 0
    without = plain("store", "load", tmp_path / "plain", "--db", "pages", dump)
    run = in_terminal("store", "load", tmp_path / "shown", "--db", "pages", dump)
    assert run.returncode == without.returncode == 0, run.terminal
    assert without.stderr == b""
    assert run.stdout == without.stdout.replace(b"plain", b"shown")  # the same line, its folder apart
    assert counts(run.frames("load pages:"), "records")[-1] == RECORDS


def test_no_progress_draws_nothing_even_on_a_terminal(store):
    run = in_terminal("store", "dump", store, "--db", "pages", "--no-progress")
    assert run.returncode == 0 and run.terminal == ""


def test_no_progress_also_holds_for_a_stores_recovery_shown_while_it_opens(monkeypatch):
    """A slow open (JE recovering its log for over a second) draws a line under the command's own
    meters; ``--no-progress`` silences it too."""
    from pycrawler import progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(progress, "_command_choice", None)
    assert progress.wanted(None, Terminal())
    progress.choose(False)
    assert not progress.wanted(None, Terminal()) and progress.status_line(stream=Terminal()).disable


def test_heritrix_export_and_import_count_urls_keys_and_journal_lines(tmp_path):
    urls = crawl(24)
    state = tmp_path / "job" / "state"
    write_h1(state, urls, [u.uri for u in urls[::2]])
    run = in_terminal("heritrix", "export", state, "--pending", tmp_path / "pending.jsonl",
                      "--seen", tmp_path / "seen.u64")
    assert run.returncode == 0, run.terminal
    assert counts(run.frames("pending:"), "URLs")[-1] == len(urls)
    assert run.frames("seen:")[-1].startswith("seen: 100%") and counts(run.frames("seen:"), "keys")[-1] == 12
    assert "pending: 24 URLs -> " in run.terminal  # the plain summary lines follow the display
    assert len((tmp_path / "pending.jsonl").read_text().splitlines()) == len(urls)

    run = in_terminal("heritrix", "import", state, "--into", tmp_path / "imported")
    assert run.returncode == 0, run.terminal
    assert counts(run.frames("pending:"), "URLs")[-1] == len(urls)
    assert counts(run.frames("seen:"), "keys")[-1] == 12
    assert b"imported 24 pending URLs" in run.stdout and b"\x1b" not in run.stdout

    with open(tmp_path / "frontier.recover.gz", "wb") as out:  # the crawl's journal: every URL added
        write_journal(out, (journal_line(ADDED, u.uri, u.path_from_seed, u.via) for u in urls))
    run = in_terminal("heritrix", "import", state, "--into", tmp_path / "from-journal",
                      "--recover-log", tmp_path / "frontier.recover.gz")
    assert run.returncode == 0, run.terminal
    assert counts(run.frames("journal:"), "lines")[-1] == len(urls)
    assert counts(run.frames("pending:"), "URLs")[-1] == len(urls)


def test_crawl_shows_pages_and_gauges_updating_live(tmp_path):
    site = tmp_path / "site"
    reachable = write_site(site, pages=600)
    with CountingServer(site) as base:
        run = in_terminal("crawl", base + "index.html", "--state", tmp_path / "state", "--delay", "0",
                          "--queue-policy", "bkdr", "--concurrency", "4", timeout=180)
    assert run.returncode == 0, run.terminal
    pages = counts(run.frames("crawl:"), "pages")
    assert len(set(pages)) >= 3 and pages == sorted(pages)  # redrawn in place as pages come in
    summary = run.stdout.decode()
    answered = int(re.search(r"fetched: +(\d+) answered", summary).group(1))
    assert pages[-1] == answered == len(reachable) + 1  # and the dangling link's 404
    gauges = [f for f in FRAME.findall(run.terminal) if " queues " in f]
    assert gauges and all(re.search(r"/s  queues \d+ ready \d+ snoozed  URLs \d+ pending \d+ seen  .* errors", g)
                          for g in gauges)
    assert "\r" not in summary and "\x1b" not in summary and "crawl.log:" in summary
