"""``pycrawler crawl`` refuses bad input in one line, exit 2, before it touches the state folder.

Each kind of bad seed has its own reason, given before the ``--contact`` rule (which would
otherwise answer every one of them with "crawling other servers needs --contact URL"); a
``--state`` that is a file, or under one, is named as such. Nothing is written: a new state
folder is not made, an existing one keeps every byte.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from crawl_sites import ROOT, CountingServer, run_crawl, write_site

CLI_RUNS = Path(__file__).resolve().parent / "cli_runs.py"

BAD_SEEDS = {
    "not-a-url": "not an http(s) URL (a seed starts with http:// or https://)",
    "mailto:ops@example.org": "not an http(s) URL (a seed starts with http:// or https://)",
    "ftp://example.org/pub/": "scheme 'ftp' is not crawled (only http and https)",
    "http://": "no host",
    "https:///index.html": "no host",
    "http://127.0.0.1:0/": "port 0 is not a port (1 to 65535)",
    "http://example.org:99999/": "port 99999 is not a port (1 to 65535)",
    "http://127.0.0.1:65536/": "port 65536 is not a port (1 to 65535)",
    "http://example.org:http/": "port 'http' is not a number",
    "http://exa mple.org/": "host 'exa mple.org' is not a host name or address",
}


def crawl_commands(state: Path, seeds) -> list[dict]:
    """``pycrawler crawl SEED --state STATE`` for each seed, with no --contact, all in one process."""
    commands = [["crawl", seed, "--state", str(state), "--no-progress"] for seed in seeds]
    done = subprocess.run([sys.executable, str(CLI_RUNS)], input=json.dumps(commands), cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def assert_refused_with_their_reasons(results: list[dict]) -> None:
    for (seed, reason), result in zip(BAD_SEEDS.items(), results):
        assert (result["exit"], result["stderr"]) == (2, f"pycrawler: seed {seed!r}: {reason}\n"), seed
        assert result["stdout"] == ""


def test_each_bad_seed_is_refused_with_its_own_reason_and_no_state_folder_is_made(tmp_path):
    state = tmp_path / "state"
    assert_refused_with_their_reasons(crawl_commands(state, BAD_SEEDS))
    assert not state.exists()


def test_a_bad_seed_leaves_an_existing_state_byte_for_byte_as_it_was(tmp_path):
    site, state = tmp_path / "site", tmp_path / "state"
    site.mkdir()
    write_site(site, 10, seed=3)
    with CountingServer(site) as base:
        done = run_crawl(base + "index.html", state, "--delay", "0")
    assert done.returncode == 0, done.stderr
    before = folder_bytes(state)
    assert "crawl.json" in before
    assert_refused_with_their_reasons(crawl_commands(state, BAD_SEEDS))
    assert folder_bytes(state) == before


@pytest.mark.parametrize("under", [False, True], ids=["the state", "its parent"])
def test_a_state_that_is_a_file_is_one_plain_line(tmp_path, under):
    file = tmp_path / "notes.txt"
    file.write_text("not a crawl\n")
    state = file / "state" if under else file
    [result] = crawl_commands(state, ["http://127.0.0.1:8080/"])
    named = f"--state {state}: {file} is a file, not a folder" if under else f"--state {state} is a file, not a folder"
    assert (result["exit"], result["stderr"]) == (2, f"pycrawler: {named}\n")
    assert file.read_text() == "not a crawl\n"
