"""What a killed crawl leaves half-written is cut back to its last complete record or line.

A WARC file cut at any byte (inside a record's headers, inside a gzip member, inside its
trailer, between records) keeps exactly the records that were whole, and reads back through
warcio; a garbage or zero-filled tail (what a power loss can leave) is cut the same way.
"""

from __future__ import annotations

import errno
import os
import random

import pytest
from warcio.archiveiterator import ArchiveIterator

from pycrawler.crawl.crawllog import fetch_line
from pycrawler.crawl.durable import cut_torn_line
from pycrawler.crawl.outputs import CrawlOutputs
from pycrawler.crawl.warc import OPEN_SUFFIX, WarcWriter, complete_records, repair, repair_open_files
from pycrawler.errors import DiskFull
from pycrawler.fetch.result import FetchResult


def fake_fetch(n: int) -> FetchResult:
    body = f"<html><title>page {n}</title>{'x' * (n * 37 % 900)}</html>".encode()
    return FetchResult(url=f"http://127.0.0.1/p{n}.html", status=200, reason="OK",
                       request_headers=[("User-Agent", "pycrawler/test")],
                       headers=[("Content-Type", "text/html"), ("Content-Length", str(len(body)))],
                       payload=body, body=body, ip="127.0.0.1", started=1714564800.0 + n, duration_ms=3.0)


def write_warc(directory, pages: int, *, compress: bool):
    with WarcWriter(directory, compress=compress) as writer:
        for n in range(pages):
            writer.write_fetch(fake_fetch(n))
    (path,) = writer.files
    return path


def record_ends(path) -> list[int]:
    return [end for _, end in complete_records(path)]


def warcio_records(path) -> list[str]:
    with open(path, "rb") as stream:
        return [r.rec_type for r in ArchiveIterator(stream, check_digests="raise")]


@pytest.mark.parametrize("compress", [True, False], ids=["gzip", "plain"])
def test_a_finished_warc_is_all_complete_records(tmp_path, compress):
    path = write_warc(tmp_path, 5, compress=compress)
    ends = record_ends(path)
    assert len(ends) == 1 + 3 * 5 and ends[-1] == path.stat().st_size


@pytest.mark.parametrize("compress", [True, False], ids=["gzip", "plain"])
def test_a_warc_cut_anywhere_keeps_exactly_its_whole_records(tmp_path, compress):
    original = write_warc(tmp_path / "src", 6, compress=compress)
    data = original.read_bytes()
    ends = record_ends(original)
    rng = random.Random(7)
    cuts = sorted({*rng.sample(range(1, len(data)), 150), *ends, *(e - 1 for e in ends), *(e + 1 for e in ends[:-1])})
    for cut in cuts:
        work = tmp_path / f"cut-{cut}.warc{'.gz' if compress else ''}{OPEN_SUFFIX}"
        work.write_bytes(data[:cut])
        whole = [end for end in ends if end <= cut]
        done = repair(work)
        assert not work.exists()
        if not whole:
            assert done.removed and not done.path.with_name(work.name.removesuffix(OPEN_SUFFIX)).exists()
            continue
        final = done.path
        assert final.name == work.name.removesuffix(OPEN_SUFFIX)
        assert final.read_bytes() == data[:whole[-1]], f"cut at {cut}"
        assert (done.records, done.bytes_cut) == (len(whole), cut - whole[-1])
        assert len(warcio_records(final)) == len(whole)
        final.unlink()


@pytest.mark.parametrize("tail", [b"\0" * 4096, b"garbage that is no record\r\n\r\n", b"\x1f\x8b\x08\0broken"],
                         ids=["zeros", "text", "bad-gzip"])
def test_a_garbage_tail_is_cut(tmp_path, tail):
    original = write_warc(tmp_path / "src", 3, compress=True)
    work = tmp_path / (original.name + OPEN_SUFFIX)
    work.write_bytes(original.read_bytes() + tail)
    done = repair(work)
    assert done.path.read_bytes() == original.read_bytes() and done.bytes_cut == len(tail)


def test_a_record_whose_block_does_not_match_its_digest_is_not_whole(tmp_path):
    original = write_warc(tmp_path / "src", 2, compress=False)
    data = bytearray(original.read_bytes())
    ends = record_ends(original)
    data[ends[-1] - 10] ^= 0x20  # one flipped bit inside the last record's block
    work = tmp_path / ("flipped.warc" + OPEN_SUFFIX)
    work.write_bytes(bytes(data))
    assert repair(work).records == len(ends) - 1


def test_open_files_of_a_live_writer_are_left_alone(tmp_path):
    live = WarcWriter(tmp_path)  # holds a lock on its .open file until it closes
    live.write_fetch(fake_fetch(1))
    live.flush()
    (live_path,) = tmp_path.glob("*" + OPEN_SUFFIX)
    before = live_path.read_bytes()
    dead = tmp_path / f"pycrawler-20240101000000000-00001-1.warc.gz{OPEN_SUFFIX}"
    dead.write_bytes(write_warc(tmp_path / "src", 1, compress=True).read_bytes()[:-3])
    assert [r.path.name for r in repair_open_files(tmp_path)] == [dead.name.removesuffix(OPEN_SUFFIX)]
    assert live_path.read_bytes() == before
    live.close()
    assert not list(tmp_path.glob("*" + OPEN_SUFFIX))


def test_cut_torn_line_keeps_whole_lines(tmp_path):
    log = tmp_path / "crawl.log"
    log.write_bytes(b"one\ntwo\nthr")
    assert cut_torn_line(log) == 3 and log.read_bytes() == b"one\ntwo\n"
    assert cut_torn_line(log) == 0 and log.read_bytes() == b"one\ntwo\n"
    log.write_bytes(b"no newline at all")
    assert cut_torn_line(log) == 17 and log.read_bytes() == b""
    assert cut_torn_line(tmp_path / "missing.log") == 0


def test_outputs_opened_after_a_kill_repair_everything_and_say_so(tmp_path):
    warcs = tmp_path / "warcs"
    killed = WarcWriter(warcs)
    for n in range(4):
        killed.write_fetch(fake_fetch(n))
    killed.flush()
    open_path = next(warcs.glob("*" + OPEN_SUFFIX))
    whole = open_path.read_bytes()
    open_path.write_bytes(whole + whole[100:180])  # a partial record after the flushed ones
    killed._file.close()  # the process died: its lock is gone
    (tmp_path / "crawl.log").write_bytes(b"line 1\nline 2\nhalf a li")
    (tmp_path / "trace.txt").write_bytes(b"http://a/\nhttp://b")

    outputs = CrawlOutputs(tmp_path / "crawl.log", warcs, tmp_path / "trace.txt")
    outputs.close()
    assert outputs.repairs == [
        "crawl.log: cut a torn last line of 9 bytes",
        "trace.txt: cut a torn last line of 8 bytes",
        f"{open_path.name.removesuffix(OPEN_SUFFIX)}: kept 13 records, cut 80 bytes",
    ]
    assert not list(warcs.glob("*" + OPEN_SUFFIX))
    assert (tmp_path / "crawl.log").read_bytes() == b"line 1\nline 2\n"
    assert len(warcio_records(warcs / open_path.name.removesuffix(OPEN_SUFFIX))) == 13


def test_a_full_disk_stops_writes_and_later_flushes_with_one_error(tmp_path, monkeypatch):
    outputs = CrawlOutputs(tmp_path / "crawl.log", tmp_path / "warcs")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "crawl.log"))

    monkeypatch.setattr(outputs.log, "flush", full)
    outputs.fetched(fetch_line(fake_fetch(1), worker=1), outlinks=None)
    with pytest.raises(DiskFull, match="the disk is full"):
        outputs.flush()
    with pytest.raises(DiskFull):  # nothing is written behind the hole
        outputs.fetched(fetch_line(fake_fetch(2), worker=1), outlinks=None)
    outputs.close()


def test_a_fetchers_failed_warc_write_fails_the_outputs_as_a_write_of_their_own(tmp_path):
    outputs = CrawlOutputs(tmp_path / "crawl.log", tmp_path / "warcs")
    with pytest.raises(DiskFull, match=r"the disk is full \(.*x.warc.gz.open\)"):
        outputs.failed_elsewhere("No space left on device", " (x.warc.gz.open)", disk_full=True)
    with pytest.raises(DiskFull):  # and nothing more is written, here either
        outputs.fetched(fetch_line(fake_fetch(1), worker=1), outlinks=None)
    outputs.close()


def test_with_fsync_a_flush_reaches_the_disk_for_every_output(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")), real_fsync(fd)))
    outputs = CrawlOutputs(tmp_path / "crawl.log", tmp_path / "warcs", tmp_path / "trace.txt", fsync=True)
    outputs.fetched(fetch_line(fake_fetch(1), worker=1), outlinks=[])
    synced.clear()
    outputs.flush()
    assert {"crawl.log", "trace.txt"} <= {os.path.basename(path) for path in synced}
    outputs.close()
    # A fetcher's WARC records: written, then flushed (with fsync, to the disk) before the fetch is reported.
    writer = WarcWriter(tmp_path / "warcs", fsync=True)
    writer.write_fetch(fake_fetch(1))
    synced.clear()
    writer.flush()
    assert any(os.path.basename(path).endswith(".warc.gz" + OPEN_SUFFIX) for path in synced)
    writer.close()
