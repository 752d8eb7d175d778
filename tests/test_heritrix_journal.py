"""Heritrix's frontier recover journal: the format read as Heritrix reads it (rotated parts,
a gzip cut short by a kill, garbage lines), a Heritrix 3 state's pending URLs recovered from
it without any Heritrix class (placed by the ``pending`` keys, queue by queue, and every
disagreement said), and a pycrawler crawl written as a journal that imports back to the same
pending URLs and seen set.

The Heritrix 3 states are JE 7.5 stores written and read in processes that load JE 7."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from heritrix_stores import h3_key, je7_env, je7_python, write_h3

from pycrawler.errors import BadInput
from pycrawler.heritrix.journal import (ADDED, DISREGARDED, EMITTED, FAILURE, INCLUDED, RESCHEDULED, SUCCESS,
                                        journal_files, journal_line, replay, replay_path, write_journal)
from pycrawler.heritrix.migrate import heritrix_keys


def gz(*lines: str) -> bytes:
    return gzip.compress("".join(lines).encode(), mtime=0)


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def pycrawler(*args, je7: bool = False) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pycrawler", *map(str, args)], capture_output=True, text=True,
                          encoding="utf-8", timeout=300, env=je7_env() if je7 else None)


def one_line_error(done: subprocess.CompletedProcess, code: int, *needles: str) -> None:
    assert done.returncode == code, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    for needle in needles:
        assert needle in done.stderr, done.stderr


# -- the format ---------------------------------------------------------------------------------------

def test_lines_are_written_as_frontier_journal_writes_them():
    assert journal_line(ADDED, "http://a.example/x", "LX", "http://a.example/") == \
        "F+ http://a.example/x LX http://a.example/\n"
    assert journal_line(ADDED, "http://a.example/", "", None) == "F+ http://a.example/  \n"   # a seed
    assert journal_line(SUCCESS, "http://a.example/", "", "http://elsewhere/") == "Fs http://a.example/  \n"
    assert journal_line(DISREGARDED, "http://a.example/r") == "Fd http://a.example/r\n"
    assert journal_line(ADDED, "http://a.example/a b", "L", "v") == "F+ http://a.example/a%20b L v\n"
    with pytest.raises(BadInput, match="not a frontier journal event"):
        journal_line("F?", "http://a.example/")


def test_a_url_is_pending_from_its_add_until_a_finish_in_add_order(tmp_path):
    log = write(tmp_path / "frontier.recover.gz", gz(
        "F+ http://a.example/1 L http://a.example/\n",
        "F+ http://a.example/2 L http://a.example/\n",
        "F+ http://a.example/3  \n",
        "Fe http://a.example/1\n", "Fs http://a.example/1 L http://a.example/\n",
        "Fr http://a.example/2\n",                          # a retry stays queued
        "F+ http://a.example/4 L http://a.example/\n", "Fd http://a.example/4\n",
        "F+ http://a.example/5 L http://a.example/\n", "Ff http://a.example/5 L http://a.example/\n",
        "Fi http://a.example/6\n",                          # seen by an import, not queued
        "F+ http://a.example/2 L http://a.example/\n",      # queued again unfinished: keeps its place
        "F+ http://a.example/1 LL http://a.example/3\n",    # a revisit after its finish: pending again
        "T 2020-11-22T10:00:00.000Z\n", "E 2020-11-22T10:00:00.000Z trouble\n", "\n",
        "F+\n", "F+ not-a-url L\n", "\x00\x07\x1bjunk\n"))
    journal = replay([log])
    assert [(p.url, p.hops, p.via) for p in journal.pending.values()] == [
        ("http://a.example/2", "L", "http://a.example/"), ("http://a.example/3", "", None),
        ("http://a.example/1", "LL", "http://a.example/3")]
    assert journal.events == {ADDED: 7, SUCCESS: 1, FAILURE: 1, DISREGARDED: 1, RESCHEDULED: 1, EMITTED: 1,
                              INCLUDED: 1}
    assert (journal.skipped, journal.lines, journal.cut) == (3, 19, [])


def test_a_logs_folder_is_read_oldest_part_first_and_a_checkpoint_reads_up_to_its_rotation(tmp_path):
    logs = tmp_path / "logs"
    write(logs / "frontier.recover.gz.cp00002-20201122110000", gz("Fs http://a.example/1 L x\n"))
    write(logs / "frontier.recover.gz.cp00001-20201122100000", gz("F+ http://a.example/1 L x\n"))
    write(logs / "frontier.recover.gz", gz("F+ http://a.example/2 L x\n"))
    write(logs / "frontier.recover.gz.20201122093000", gz("F+ http://moved-aside.example/ L x\n"))
    write(logs / "crawl.log", b"not a journal\n")
    files, ignored = journal_files(logs)
    assert [f.name for f in files] == ["frontier.recover.gz.cp00001-20201122100000",
                                       "frontier.recover.gz.cp00002-20201122110000", "frontier.recover.gz"]
    assert [f.name for f in ignored] == ["frontier.recover.gz.20201122093000"]
    assert list(replay_path(logs).pending) == ["http://a.example/2"]
    at_first = replay_path(logs, checkpoint="cp00001-20201122100000")
    assert list(at_first.pending) == ["http://a.example/1"]
    assert sorted(p.name for p in at_first.ignored) == [
        "frontier.recover.gz", "frontier.recover.gz.20201122093000", "frontier.recover.gz.cp00002-20201122110000"]


def test_a_gzip_cut_short_keeps_every_whole_line_before_the_cut_and_says_so(tmp_path):
    deflate = zlib.compressobj(wbits=31)
    head = deflate.compress(b"F+ http://a.example/1 L x\nF+ http://a.example/2 L x\n") + deflate.flush(zlib.Z_SYNC_FLUSH)
    tail = deflate.compress(b"F+ http://a.example/3 L x\n" * 1000) + deflate.flush()
    # Several members, as forgetAllButLatest concatenates parts; the last one cut mid-way.
    log = write(tmp_path / "frontier.recover.gz", gz("F+ http://a.example/0 L x\n") + head + tail[:len(tail) // 2])
    journal = replay_path(log)
    assert list(journal.pending)[:3] == ["http://a.example/0", "http://a.example/1", "http://a.example/2"]
    (cut,) = journal.cut
    assert "gzip cut short" in cut.cut and "incomplete" in cut.cut
    assert journal.skipped == 0
    write(log, gz("F+ http://a.example/0 L x\n") + b"\x00" * 64)   # junk after a whole member
    assert "not gzip" in replay_path(log).cut[0].cut


def test_what_is_not_a_journal_is_bad_input(tmp_path):
    with pytest.raises(BadInput, match="does not exist"):
        replay_path(tmp_path / "nowhere.gz")
    with pytest.raises(BadInput, match="is not gzip"):
        replay_path(write(tmp_path / "frontier.recover.gz", b"F+ http://a.example/ L x\n"))
    with pytest.raises(BadInput, match="holds no Heritrix frontier journal lines"):
        replay_path(write(tmp_path / "noise.gz", gz("\x00\x01\x02 binary\n", "hello world\n")))
    write(tmp_path / "logs" / "crawl.log", b"")
    with pytest.raises(BadInput, match="holds no Heritrix recover log"):
        replay_path(tmp_path / "logs")
    # A journal Heritrix did not gzip (its import reads plain text too) is read as text.
    plain = write(tmp_path / "recover.txt", b"F+ http://a.example/ L x\n")
    assert list(replay_path(plain).pending) == ["http://a.example/"]


def test_write_journal_gzips_lines_heritrix_reads_back(tmp_path):
    lines = [journal_line(ADDED, f"http://a.example/{i}", "L", "http://a.example/") for i in range(70000)]
    with open(tmp_path / "j.gz", "wb") as out:
        assert write_journal(out, iter(lines)) == 70000
    assert gzip.decompress((tmp_path / "j.gz").read_bytes()).decode() == "".join(lines)
