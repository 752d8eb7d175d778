"""State and metadata files are replaced whole or not at all (pycrawler.atomic_write).

A failure (or a kill) between the write and the rename leaves the old file as it was, and a
crawl killed while it rewrites ``crawl.json`` at start-up resumes on the next run.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys

import pytest
from crawl_sites import ROOT, CountingServer, crawl_command, run_crawl, write_site
from test_crawl_kill import crawl_log_200s

from pycrawler import atomic_write
from pycrawler.atomic_write import replacing, write_atomically
from pycrawler.errors import BadInput


def test_a_write_replaces_the_file_whole(tmp_path):
    path = tmp_path / "crawl.json"
    write_atomically(path, '{"seen": "exact"}\n')
    write_atomically(path, '{"seen": "drum"}\n')
    assert json.loads(path.read_text()) == {"seen": "drum"}
    assert [p.name for p in tmp_path.iterdir()] == ["crawl.json"]


def test_a_failure_between_write_and_rename_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "crawl.json"
    write_atomically(path, '{"seen": "exact"}\n')

    def fail(source, target):
        raise OSError("the rename never happens")

    monkeypatch.setattr(atomic_write.os, "replace", fail)
    with pytest.raises(OSError, match="never happens"):
        write_atomically(path, '{"seen": "drum", "seeds": ' + json.dumps(["http://127.0.0.1/"] * 1000) + "}\n")
    assert json.loads(path.read_text()) == {"seen": "exact"}
    assert [p.name for p in tmp_path.iterdir()] == ["crawl.json"]


def test_an_error_inside_the_block_keeps_the_old_file(tmp_path):
    path = tmp_path / "dump.jsonl"
    path.write_text("old\n")
    with pytest.raises(ValueError), replacing(path) as out:
        out.write("half of a new dump\n")
        raise ValueError("the dump failed")
    assert path.read_text() == "old\n"
    assert not (tmp_path / "dump.jsonl.part").exists()


def test_a_private_file_is_readable_by_its_owner_only_even_over_a_stale_partial(tmp_path):
    path = tmp_path / "gateway.json"
    stale = tmp_path / "gateway.json.part"
    stale.write_text("left by a kill")
    stale.chmod(0o644)
    write_atomically(path, '{"token": "t"}', private=True)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {"token": "t"}


def test_a_file_that_cannot_be_created_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="cannot write .*missing/crawl.json"):
        write_atomically(tmp_path / "missing" / "crawl.json", "{}")


KILLED_AT_THE_RENAME = """
import os, signal, sys
replace = os.replace
def killed_before_crawl_json_is_renamed(source, target):
    if str(target).endswith("crawl.json"):
        os.kill(os.getpid(), signal.SIGKILL)
    replace(source, target)
os.replace = killed_before_crawl_json_is_renamed
from pycrawler.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_crawl_killed_while_it_rewrites_crawl_json_resumes(tmp_path):
    root = tmp_path / "site"
    reachable = write_site(root, 30, seed=4)
    state = tmp_path / "state"
    options = ("--delay", "0", "--max-pages", "10")
    with CountingServer(root) as base:
        first = run_crawl(base + "index.html", state, *options)
        assert first.returncode == 0, first.stderr
        written = (state / "crawl.json").read_text()
        command = crawl_command(base + "index.html", state, "--delay", "0")
        killed = subprocess.run([sys.executable, "-c", KILLED_AT_THE_RENAME, *command[3:]], cwd=ROOT,
                                capture_output=True, text=True, timeout=60,
                                env=os.environ | {"PYTHONPATH": str(ROOT)})
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        assert (state / "crawl.json").read_text() == written  # the kill left the old file, whole
        done = run_crawl(base + "index.html", state, "--delay", "0")
    assert done.returncode == 0, done.stderr
    assert set(crawl_log_200s(state / "crawl.log", base)) == reachable
    assert not (state / "crawl.json.part").exists()
