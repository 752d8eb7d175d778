"""Heritrix's frontier recover journal: the format read as Heritrix reads it (rotated parts,
a gzip cut short by a kill, garbage lines), a Heritrix 3 state's pending URLs recovered from
it without any Heritrix class (placed by the ``pending`` keys, queue by queue, and every
disagreement said), and a pycrawler crawl written as a journal that imports back to the same
pending URLs and seen set.

The Heritrix 3 states are written by processes that load JE 18 (Heritrix 3's layout, a log newer than
JE 3.3's); pycrawler's commands then choose the JE that reads them by themselves."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from gateways import Server
from heritrix_stores import h3_env, h3_key, h3_python, write_h3

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


def urls(journal) -> list[str]:
    return [pending.url for pending in journal.pending]


def pycrawler(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pycrawler", *map(str, args)], capture_output=True, text=True,
                          encoding="utf-8", timeout=300)


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
    assert [(p.url, p.hops, p.via) for p in journal.pending] == [
        ("http://a.example/2", "L", "http://a.example/"), ("http://a.example/3", "", None),
        ("http://a.example/1", "LL", "http://a.example/3")]
    assert journal.events == {ADDED: 7, SUCCESS: 1, FAILURE: 1, DISREGARDED: 1, RESCHEDULED: 1, EMITTED: 1,
                              INCLUDED: 1}
    assert (journal.skipped, journal.lines, journal.cut) == (3, 19, [])


def test_a_replay_too_big_for_memory_spills_and_leaves_what_the_rules_leave(tmp_path):
    """The events go to partition files past the memory bound; the pending URLs must be the
    ones a plain reading of the rules gives (queued from an F+ until a finish; a second F+
    while queued keeps the first one's place; an F+ after a finish queues it again)."""
    import random

    rng = random.Random(2026)
    lines, expected = [], {}
    for _ in range(20000):
        url = f"http://h{rng.randrange(7)}.example/{rng.randrange(3000)}"
        tag = rng.choice([ADDED, ADDED, SUCCESS, FAILURE, DISREGARDED, EMITTED, RESCHEDULED])
        hops = rng.choice(["", "L", "LX"])
        lines.append(journal_line(tag, url, hops, "http://via.example/" if hops else None))
        if tag == ADDED:
            expected.setdefault(url, (url, hops, "http://via.example/" if hops else None))
        elif tag in (SUCCESS, FAILURE, DISREGARDED):
            expected.pop(url, None)
    log = write(tmp_path / "frontier.recover.gz", gz(*lines))
    in_memory, spilled = replay([log]), replay([log], memory_events=64)
    assert [(p.url, p.hops, p.via) for p in spilled.pending] == list(expected.values())
    assert [(p.url, p.hops, p.via) for p in in_memory.pending] == list(expected.values())
    assert spilled.events == in_memory.events and len(spilled.pending) == len(expected) > 500
    assert [p.url for p in spilled.pending.read([5, 0, 5])] == [list(expected)[5], list(expected)[0],
                                                                list(expected)[5]]


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
    assert urls(replay_path(logs)) == ["http://a.example/2"]
    at_first = replay_path(logs, checkpoint="cp00001-20201122100000")
    assert urls(at_first) == ["http://a.example/1"]
    assert sorted(p.name for p in at_first.ignored) == [
        "frontier.recover.gz", "frontier.recover.gz.20201122093000", "frontier.recover.gz.cp00002-20201122110000"]


def test_the_empty_current_file_a_checkpoint_leaves_is_read_as_no_lines_beside_the_rotated_parts(tmp_path):
    """Heritrix 3.13 rotates the journal at a checkpoint and leaves the new current file at 0
    bytes until its gzip stream first flushes: a journal in that form is read whole, and the
    empty file said so (not refused as "not gzip"); a file cut after the gzip magic's first
    byte reads as cut."""
    logs = tmp_path / "logs"
    write(logs / "frontier.recover.gz.cp00001-20201122100000", gz("F+ http://a.example/1 L x\n",
                                                                   "F+ http://a.example/2 L x\n"))
    write(logs / "frontier.recover.gz.cp00002-20201122110000", gz("Fs http://a.example/1 L x\n"))
    write(logs / "frontier.recover.gz", b"")
    journal = replay_path(logs)
    assert urls(journal) == ["http://a.example/2"]
    assert [f.path.name for f in journal.files if f.empty] == ["frontier.recover.gz"]
    assert journal.summary()["empty_files"] == [str(logs / "frontier.recover.gz")] and not journal.cut
    write(logs / "frontier.recover.gz", b"\x1f")
    assert "gzip cut short at byte 1" in replay_path(logs).cut[0].cut
    write(logs / "frontier.recover.gz", b"")
    at_first = replay_path(logs, checkpoint="cp00001-20201122100000")
    assert urls(at_first) == ["http://a.example/1", "http://a.example/2"]
    assert [p.name for p in at_first.after_checkpoint] == ["frontier.recover.gz.cp00002-20201122110000",
                                                           "frontier.recover.gz"] and at_first.relaunched == []
    with pytest.raises(BadInput, match="every file is empty"):
        replay_path(write(tmp_path / "killed" / "frontier.recover.gz", b""))


def test_a_gzip_cut_short_keeps_every_whole_line_before_the_cut_and_says_so(tmp_path):
    deflate = zlib.compressobj(wbits=31)
    head = deflate.compress(b"F+ http://a.example/1 L x\nF+ http://a.example/2 L x\n") + deflate.flush(zlib.Z_SYNC_FLUSH)
    tail = deflate.compress(b"F+ http://a.example/3 L x\n" * 1000) + deflate.flush()
    # Several members, as forgetAllButLatest concatenates parts; the last one cut mid-way.
    log = write(tmp_path / "frontier.recover.gz", gz("F+ http://a.example/0 L x\n") + head + tail[:len(tail) // 2])
    journal = replay_path(log)
    assert urls(journal)[:3] == ["http://a.example/0", "http://a.example/1", "http://a.example/2"]
    (cut,) = journal.cut
    assert "gzip cut short" in cut.cut and "incomplete" in cut.cut
    assert journal.skipped == 0
    write(log, gz("F+ http://a.example/0 L x\n") + b"\x00" * 64)   # junk after a whole member
    assert "not gzip" in replay_path(log).cut[0].cut


def test_an_overlong_line_and_a_gzip_bomb_are_read_in_bounded_pieces(tmp_path):
    bomb = b"F+ http://a.example/1 L x\n" + b"x" * (64 << 20) + b"\nF+ http://a.example/2 L x\n"
    journal = replay_path(write(tmp_path / "frontier.recover.gz", gzip.compress(bomb, compresslevel=9, mtime=0)))
    assert urls(journal) == ["http://a.example/1", "http://a.example/2"]
    assert (journal.skipped, journal.lines) == (1, 3)


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
    assert urls(replay_path(plain)) == ["http://a.example/"]


def test_write_journal_gzips_lines_heritrix_reads_back(tmp_path):
    lines = [journal_line(ADDED, f"http://a.example/{i}", "L", "http://a.example/") for i in range(70000)]
    with open(tmp_path / "j.gz", "wb") as out:
        assert write_journal(out, iter(lines)) == 70000
    assert gzip.decompress((tmp_path / "j.gz").read_bytes()).decode() == "".join(lines)


def test_a_journal_url_goes_to_the_queue_heritrix_gave_it():
    from pycrawler.frontier.assignment import get_assignment
    from pycrawler.heritrix.journal import Pending
    from pycrawler.heritrix.recovered import heritrix_queues, matching_queue

    urls = [Pending("http://www.example.com/a", "L", "http://seed.example/"),
            Pending("https://example.com/", "", None),
            Pending("dns:www.example.com", "P", "http://www.example.com/a"),   # a prerequisite: its via's queue
            Pending("http://archive.org:8080/robots.txt", "LP", "http://archive.org:8080/x"),
            Pending("whois://example.com", "LP", None)]
    assert heritrix_queues(urls, get_assignment("heritrix-host")) == [
        "www.example.com", "example.com#443", "www.example.com", "archive.org#8080", "whois..."]
    assert heritrix_queues(urls, get_assignment("surt")) == [
        "com,example,www,", "com,example,", "com,example,www,", "org,archive,#8080", "whois..."]
    assert [matching_queue(q) for q in ("big.example+3", "big.example", "com,example,+12")] == [
        "big.example", "big.example", "com,example,"]


# -- a Heritrix 3 state and its journal ---------------------------------------------------------------
# Pending keys (queue, directive, precedence, ordinal) and how each URL was found. Heritrix's default
# HostnameQueueAssignmentPolicy: a dns: prerequisite waits in its via's queue; https gets #443;
# parallelQueues put big.example's URLs in big.example and big.example+1.

SEED = "http://example.com/"
PLACED = [  # url, hops, via, queue, directive, precedence, ordinal
    ("dns:example.com", "P", SEED, "example.com", 0, 1, 2),
    ("http://example.com/a", "L", SEED, "example.com", 3, 1, 5),
    ("https://example.com/s", "L", SEED, "example.com#443", 3, 1, 7),
    ("http://example.com/b", "LL", "http://example.com/a", "example.com", 1, 1, 9),  # HIGH: first in key order
    ("http://archive.org:8080/x", "X", SEED, "archive.org#8080", 3, 2, 11),
    ("http://archive.org:8080/y", "XL", "http://archive.org:8080/x", "archive.org#8080", 3, 1, 12),
    ("http://big.example/1/", "L", SEED, "big.example", 3, 1, 20),
    ("http://big.example/2/", "L", SEED, "big.example+1", 3, 1, 21),
    ("http://big.example/3/", "L", SEED, "big.example", 3, 1, 22),
]
KEYS_ONLY = [  # keys whose queue's journal URLs do not pair up with them
    ("http://extra.example/1", "extra.example", 40),
    ("http://late.example/1", "late.example", 30), ("http://late.example/2", "late.example", 31),
    ("http://late.example/3", "late.example", 32),
    ("http://gone.example/", "gone.example", 50),
]
SEEN = [SEED, "http://archive.org:8080/z", *(u[0] for u in PLACED), *(u[0] for u in KEYS_ONLY)]


def line(tag: str, url: str, hops: str = "", via: str | None = None) -> str:
    return journal_line(tag, url, hops, via)


def heritrix_logs(logs: Path) -> None:
    """The journal of that crawl: two parts rotated at checkpoints, a part moved aside at a
    relaunch, and the current file, cut short by a kill after late.example's first URL."""
    write(logs / "frontier.recover.gz.cp00001-20201122100000", gz(
        line(ADDED, SEED), line(ADDED, "dns:example.com", "P", SEED), line(EMITTED, SEED),
        line(SUCCESS, SEED), line(ADDED, "http://example.com/a", "L", SEED),
        line(ADDED, "https://example.com/s", "L", SEED),
        "T 2020-11-22T10:00:00.000Z\n", "E 2020-11-22T10:00:00.000Z an error\n", "\n"))
    write(logs / "frontier.recover.gz.cp00002-20201122110000", gz(
        line(ADDED, "http://example.com/b", "LL", "http://example.com/a"),
        line(ADDED, "http://archive.org:8080/x", "X", SEED),
        line(ADDED, "http://archive.org:8080/z", "X", SEED), line(EMITTED, "http://archive.org:8080/z"),
        line(SUCCESS, "http://archive.org:8080/z", "X", SEED),
        line(ADDED, "http://archive.org:8080/y", "XL", "http://archive.org:8080/x"),
        line(ADDED, "http://archive.org:8080/robots", "X", SEED), line(DISREGARDED, "http://archive.org:8080/robots"),
        line(ADDED, "http://archive.org:8080/down", "X", SEED),
        line(FAILURE, "http://archive.org:8080/down", "X", SEED),
        line(EMITTED, "https://example.com/s"), line(RESCHEDULED, "https://example.com/s"),
        "\x00\x07 garbage\n",
        *(line(ADDED, f"http://big.example/{i}/", "L", SEED) for i in (1, 2, 3)),
        line(ADDED, "http://extra.example/1", "L", SEED)))
    write(logs / "frontier.recover.gz.20201122093000", gz(line(ADDED, "http://moved-aside.example/", "L", SEED)))
    deflate = zlib.compressobj(wbits=31)
    cut = (deflate.compress(line(ADDED, "http://late.example/1", "L", SEED).encode()) + deflate.flush(zlib.Z_SYNC_FLUSH))
    write(logs / "frontier.recover.gz", gz(line(ADDED, "http://extra.example/2", "L", SEED)) + cut)


@pytest.fixture(scope="module")
def heritrix3_job(tmp_path_factory) -> Path:
    job = tmp_path_factory.mktemp("h3job")
    pending = {h3_key(q, d, p, o): url for url, _, _, q, d, p, o in PLACED}
    pending |= {h3_key(q, 3, 1, o): url for url, q, o in KEYS_ONLY}
    write_h3(job / "state", pending, heritrix_keys(SEEN).tolist())
    heritrix_logs(job / "logs")
    return job


def key_order(row) -> tuple:
    return row[3].encode(), row[4], row[5], row[6]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_export_gives_every_journal_url_at_its_key_and_says_which_queues_disagree(heritrix3_job, tmp_path):
    before = snapshot(heritrix3_job)
    done = pycrawler("heritrix", "export", heritrix3_job / "state", "--recover-log", heritrix3_job / "logs",
                     "--pending", tmp_path / "p.jsonl")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(text) for text in (tmp_path / "p.jsonl").read_text().splitlines()]
    placed = [r for r in rows if r["placed"]]
    assert [(r["uri"], r["pathFromSeed"], r["via"], r["queue"], r["directive"], r["precedence"], r["ordinal"])
            for r in placed] == sorted(PLACED, key=key_order)
    assert [(r["uri"], r["queue"], r["ordinal"]) for r in rows if not r["placed"]] == [
        ("http://extra.example/1", "extra.example", None), ("http://extra.example/2", "extra.example", None),
        ("http://late.example/1", "late.example", None)]
    notes = done.stderr
    assert "28 lines in 3 files, 12 URLs left pending; 9 placed by the pending keys (heritrix-host queues), 3 not; 1 lines skipped" in notes
    assert "gzip cut short" in notes and "frontier.recover.gz.20201122093000" in notes
    assert ('queue extra.example: 1 pending keys, 2 journal URLs, not paired: its 2 journal URLs exported with '
            '"placed": false; its 1 keys dropped (no URL)') in notes
    assert "queue late.example: 3 pending keys, 1 journal URLs, not paired" in notes
    assert "queue gone.example: 1 pending keys, 0 journal URLs, not paired: no journal URL; its 1 keys dropped" in notes
    assert "Traceback" not in notes
    assert snapshot(heritrix3_job) == before, "reading changed the state or its logs"


def kryo_value(url: str) -> bytes:
    """The start of a Heritrix 3 CrawlURI's Kryo value: its URI as Kryo writes an ASCII string
    (the last byte's top bit set), then other fields."""
    return url[:-1].encode() + bytes((ord(url[-1]) | 0x80,)) + b"\x05LLL\xcc\x00\x01"


def test_urls_whose_journal_lines_raced_their_ordinals_are_placed_by_their_values_uri(tmp_path):
    """Two Heritrix threads scheduling into one queue may write their F+ lines in the other
    order than the ordinals they took (the real Heritrix 3.13 does with 5 toe threads): the
    URI each Kryo value starts with puts each URL at its own key. A queue where a value does
    not give its URI keeps the journal's order."""
    race = ["http://a.example/1", "http://a.example/x", "http://a.example/y"]
    plain = ["http://b.example/1", "http://b.example/x", "http://b.example/y"]
    pending = {h3_key("a.example", 3, 1, n): kryo_value(url) for n, url in enumerate(race, 1)}
    pending |= {h3_key("b.example", 3, 1, n): url for n, url in enumerate(plain, 1)}   # not Kryo's form
    # A queue whose journal URLs are as many as its keys but not the ones its values name (a
    # journal of another moment): not paired, said so.
    pending |= {h3_key("c.example", 3, 1, n): kryo_value(f"http://c.example/{n}") for n in (1, 2)}
    # And so is one where a value gives no URI but another names a URL the journal does not
    # leave pending (a journal cut short, as a real Heritrix 3.13 run left one): the order
    # pairing would put http://d.example/9 on the key of http://d.example/2.
    pending |= {h3_key("d.example", 3, 1, 1): kryo_value("http://d.example/1"),
                h3_key("d.example", 3, 1, 2): kryo_value("http://d.example/2"),
                h3_key("d.example", 3, 1, 3): b"http://d.example/3"}
    write_h3(tmp_path / "state", pending, heritrix_keys(race + plain).tolist())
    swapped = [race[0], race[2], race[1], plain[0], plain[2], plain[1], "http://c.example/1", "http://c.example/3",
               "http://d.example/1", "http://d.example/9", "http://d.example/3"]
    write(tmp_path / "logs" / "frontier.recover.gz", gz(*(line(ADDED, url, "L", SEED) for url in swapped)))
    done = pycrawler("heritrix", "export", tmp_path / "state", "--recover-log", tmp_path / "logs",
                     "--pending", tmp_path / "p.jsonl")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(text) for text in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert [(r["queue"], r["ordinal"], r["uri"]) for r in rows] == [
        ("a.example", 1, race[0]), ("a.example", 2, race[1]), ("a.example", 3, race[2]),
        ("b.example", 1, plain[0]), ("b.example", 2, plain[2]), ("b.example", 3, plain[1]),
        ("c.example", None, "http://c.example/1"), ("c.example", None, "http://c.example/3"),
        ("d.example", None, "http://d.example/1"), ("d.example", None, "http://d.example/9"),
        ("d.example", None, "http://d.example/3")]
    assert "6 placed by the pending keys (heritrix-host queues) (2 by their values' URIs" in done.stderr
    assert ("queue c.example: 2 pending keys, 2 journal URLs (its values name other URLs), not paired"
            in done.stderr)
    assert ("queue d.example: 3 pending keys, 3 journal URLs (its values name other URLs), not paired"
            in done.stderr)


def test_values_that_are_not_kryo_crawl_uris_give_no_uri_and_keep_the_order_pairing(tmp_path):
    """A Heritrix-layout state whose pending values are opaque bytes (another program's records,
    not Kryo ``CrawlURI`` s) often starting with an ASCII run that holds a colon (``row:12``,
    ``v1:...``): no value names a URI, so every queue pairs its keys with its journal URLs in
    order, all 600 of them."""
    import random

    rng = random.Random(48)
    queues = [f"q{n}.example" for n in range(6)]
    order = [(queue, ordinal, f"http://{queue}/{ordinal}") for queue in queues for ordinal in range(1, 101)]
    tags = (b"row:", b"v1:", b"id:", b"k:", b"x-y:")
    pending = {h3_key(queue, 3, 1, ordinal): tags[ordinal % len(tags)] + str(ordinal).encode()
               + bytes((0x80 | rng.randrange(128),)) + rng.randbytes(24) for queue, ordinal, _ in order}
    write_h3(tmp_path / "state", pending, heritrix_keys([url for _, _, url in order]).tolist())
    write(tmp_path / "logs" / "frontier.recover.gz", gz(*(line(ADDED, url, "L", SEED) for _, _, url in order)))
    done = pycrawler("heritrix", "export", tmp_path / "state", "--recover-log", tmp_path / "logs",
                     "--pending", tmp_path / "p.jsonl")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(text) for text in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert [(r["queue"], r["ordinal"], r["uri"]) for r in rows] == order
    assert "not paired" not in done.stderr and "600 placed by the pending keys" in done.stderr


def test_export_with_a_recover_log_through_an_address_is_the_folders(heritrix3_job, tmp_path, runtime):
    """The journal is this side's file; the keys it is placed by come through the address."""
    shutil.copytree(heritrix3_job / "state", tmp_path / "copy")
    with Server(tmp_path / "copy", env=h3_env()) as server:
        served = pycrawler("heritrix", "export", server.address, "--recover-log", heritrix3_job / "logs",
                           "--pending", tmp_path / "served.jsonl")
    local = pycrawler("heritrix", "export", heritrix3_job / "state", "--recover-log", heritrix3_job / "logs",
                      "--pending", tmp_path / "local.jsonl")
    assert served.returncode == 0 and local.returncode == 0, served.stderr + local.stderr
    assert (tmp_path / "served.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    assert served.stderr.replace("served.jsonl", "local.jsonl") == local.stderr


def test_a_crawl_state_gives_the_same_journal_through_its_address(tmp_path, runtime):
    crawl_state(tmp_path / "crawl")
    with Server(tmp_path / "crawl") as server:
        served = pycrawler("heritrix", "journal", server.address, "--out", tmp_path / "served.gz")
    local = pycrawler("heritrix", "journal", tmp_path / "crawl", "--out", tmp_path / "local.gz")
    assert served.returncode == 0 and served.stdout.replace("served.gz", "local.gz") == local.stdout, served.stderr
    text = gzip.decompress((tmp_path / "served.gz").read_bytes())
    assert text == gzip.decompress((tmp_path / "local.gz").read_bytes()) and text.count(b"\nF+ ") > 1


def pycrawler_state_of(path: Path, keys: list[int]) -> tuple[list, list[bool]]:
    """(pending (class key, directive, precedence, ordinal, URL, layer, abstract text) in key order;
    whether each key is in the exact seen table) of a pycrawler state written with JE 18."""
    script = """
import json, sys
from pycrawler.frontier.pending_records import decode_entry, decode_key
from pycrawler.frontier.workqueues import WorkQueueFrontier
from pycrawler.seen.exact import ExactVisited
import numpy as np
path, keys = json.load(sys.stdin)
with WorkQueueFrontier.open(path, read_only=True) as frontier:
    rows = [[*decode_key(k), decode_entry(v).ori_url, decode_entry(v).layer, decode_entry(v).abstract_text]
            for k, v in frontier.pending.items() if v]
    seen = ExactVisited(frontier.env, "visited", create=False).contains_many(np.array(keys, dtype=np.uint64))
print(json.dumps([rows, seen.tolist()]))
"""
    rows, seen = json.loads(h3_python(script, json.dumps([str(path), keys])))
    return [tuple(r) for r in rows], seen


def test_import_restores_the_journal_urls_at_their_places_and_the_seen_set(heritrix3_job, tmp_path):
    into = tmp_path / "py"
    done = pycrawler("heritrix", "import", heritrix3_job / "state", "--recover-log", heritrix3_job / "logs",
                     "--into", into, "--seen", "exact")
    assert done.returncode == 0, done.stderr
    assert ("queue late.example: 3 pending keys, 1 journal URLs, not paired: its 1 journal URLs queued behind "
            "Heritrix's, in journal order; its 3 keys dropped (no URL)") in done.stderr
    manifest = json.loads((into / "heritrix-import.json").read_text())
    assert manifest["frontier"]["skipped"] == {"dns": 1} and manifest["seen"]["keys"] == len(SEEN)
    journal = manifest["recover_log"]
    assert (journal["placed"], journal["unplaced"], journal["skipped_lines"]) == (9, 3, 1)
    assert {m["queue"]: (m["keys"], m["journal"]) for m in journal["mismatched_queues"]} == {
        "extra.example": (1, 2), "late.example": (3, 1), "gone.example": (1, 0)}
    probe = heritrix_keys(SEEN + ["http://never.example/"]).tolist()
    pending, seen = pycrawler_state_of(into, probe)
    http = [u for u in PLACED if not u[0].startswith("dns:")]
    # Heritrix's places (a parallel queue's URL joins its host's queue: pycrawler has no parallel
    # queues); the URLs the journal could not place queue behind them, in journal order.
    assert manifest["frontier"]["rekeyed"] == 1
    assert pending == sorted([(q.partition("+")[0], d, p, o, url, len(hops), f"{hops} {via}")
                              for url, hops, via, q, d, p, o in http]
                             + [("extra.example", 3, 1, 23, "http://extra.example/1", 1, f"L {SEED}"),
                                ("extra.example", 3, 1, 24, "http://extra.example/2", 1, f"L {SEED}"),
                                ("late.example", 3, 1, 25, "http://late.example/1", 1, f"L {SEED}")],
                             key=lambda r: (r[0].encode(), *r[1:4]))
    assert seen == [True] * len(SEEN) + [False]


# -- pycrawler to Heritrix 3, and back ----------------------------------------------------------------

def crawl_state(path: Path) -> list[str]:
    """A pycrawler crawl stopped mid-way (Heritrix's queues and keys): two seeds fetched, one
    with success and one with a connection failure, one URL in process, links pending in three
    queues; returns every URL it saw."""
    from dataclasses import replace

    from pycrawler.crawl.discovery import discovered
    from pycrawler.crawl.engine import FETCHED
    from pycrawler.crawl.flush import url_key
    from pycrawler.frontier.politeness import Outcome, Politeness
    from pycrawler.frontier.workqueues import WorkQueueFrontier
    from pycrawler.records.crawl_url import encode

    seeds = ["http://a.example/", "https://b.example/", "http://c.example:8080/"]
    links = [discovered(f"http://a.example/{i}", 1, "L", seeds[0]) for i in range(5)]
    links += [discovered(f"https://b.example/{i}.css", 2, "LE", "https://b.example/page") for i in range(3)]
    links += [discovered("http://c.example:8080/p q", 1, "X", seeds[0])]
    with WorkQueueFrontier.open(path, create=True, assignment="heritrix-host", seen_key="heritrix",
                                politeness=Politeness.none()) as frontier:
        frontier.schedule([discovered(seed, 0, "", None) for seed in seeds])
        frontier.schedule(links[:5], layer=1)
        frontier.schedule(links[5:8], layer=2)
        frontier.schedule(links[8:], layer=1)
        handed = {r.ori_url: r for r in frontier.next_batch(3)}
        done = [replace(handed[seeds[0]], status_code=200), replace(handed[seeds[1]], status_code=-2)]
        frontier.env.open_database(FETCHED, create=True).put_many([url_key(r.ori_url) for r in done],
                                                                 [encode(r) for r in done])
        frontier.completed(seeds[0], Outcome.success(status_code=200))
        frontier.completed(seeds[1], Outcome.failure(status_code=-2))
    return seeds + [link.ori_url for link in links]


def test_a_crawl_written_as_a_journal_imports_back_to_the_same_pending_urls_and_seen_set(tmp_path):
    """State -> journal (pycrawler heritrix journal) -> the Heritrix 3 state that imports it
    (its pending keys: the same queues in the same order; its seen set) -> heritrix import
    --recover-log: the same pending URLs at the same places, and the same seen set."""
    from pycrawler.frontier.pending_records import decode_entry, decode_key
    from pycrawler.frontier.workqueues import WorkQueueFrontier

    # Every URL as it is requested, and as Heritrix's UURIFactory makes it before keying it: the
    # link "p q" is "p%20q" (the frontier keys the URL it requests, whatever the link's spelling).
    saw = [url.replace(" ", "%20") for url in crawl_state(tmp_path / "crawl")]
    keys = heritrix_keys(saw).tolist()
    with WorkQueueFrontier.open(tmp_path / "crawl", read_only=True) as frontier:
        records = [(k, decode_entry(v)) for k, v in frontier.pending.items() if v]
        from pycrawler.seen.exact import ExactVisited
        visited = ExactVisited(frontier.env, "visited", create=False)
        assert visited.contains_many(heritrix_keys(saw)).all() and len(visited) == len(saw)
    before = [(*decode_key(k), r.ori_url, r.layer, r.abstract_text) for k, r in records]
    assert len(before) == len(saw) - 2   # all but the two finished seeds; the third one in process

    unchanged = snapshot(tmp_path / "crawl")
    written = pycrawler("heritrix", "journal", tmp_path / "crawl", "--out", tmp_path / "frontier.recover.gz")
    assert written.returncode == 0, written.stderr
    assert snapshot(tmp_path / "crawl") == unchanged, "writing the journal changed the crawl state"
    assert f"{len(before)} pending URLs (F+), 1 succeeded (Fs), 1 failed (Ff)" in written.stdout
    assert '"format": "recoveryLog"' in written.stdout
    text = gzip.decompress((tmp_path / "frontier.recover.gz").read_bytes()).decode()
    assert text.startswith("Fs http://a.example/  \nFf https://b.example/  \n")
    assert "F+ https://b.example/0.css LE https://b.example/page\n" in text
    assert "F+ http://c.example:8080/p%20q X http://a.example/\n" in text

    # What Heritrix holds after importing the journal: each pending URL under its key, the seen set.
    write_h3(tmp_path / "h3", {k: r.ori_url.replace(" ", "%20") for k, r in records}, keys)
    back = pycrawler("heritrix", "import", tmp_path / "h3", "--recover-log", tmp_path / "frontier.recover.gz",
                     "--into", tmp_path / "again", "--seen", "exact")
    assert back.returncode == 0, back.stderr
    manifest = json.loads((tmp_path / "again" / "heritrix-import.json").read_text())
    assert (manifest["recover_log"]["mismatched_queues"], manifest["seen"]["keys"]) == ([], len(saw))
    pending, seen = pycrawler_state_of(tmp_path / "again", keys)
    assert pending == [(*row[:4], row[4].replace(" ", "%20"), *row[5:]) for row in before]
    assert all(seen)


def test_bad_input_is_one_line_and_exit_2(heritrix3_job, tmp_path):
    state = heritrix3_job / "state"
    for given, needle in [(tmp_path / "nowhere.gz", "does not exist"),
                          (write(tmp_path / "frontier.recover.gz", b"PK\x03\x04 a zip"), "is not gzip"),
                          (write(tmp_path / "noise.gz", gz("\x00 binary\n")), "holds no Heritrix frontier journal")]:
        one_line_error(pycrawler("heritrix", "import", state, "--recover-log", given, "--into", tmp_path / "py"), 2, needle)
        assert not (tmp_path / "py").exists()
    one_line_error(pycrawler("heritrix", "export", state, "--recover-log", heritrix3_job / "logs", "--seen",
                             tmp_path / "s"), 2, "--recover-log gives the pending URLs: add --pending FILE")
    write_h3(tmp_path / "seen-only", {}, heritrix_keys([SEED]).tolist())
    one_line_error(pycrawler("heritrix", "export", tmp_path / "seen-only", "--recover-log", heritrix3_job / "logs",
                             "--pending", tmp_path / "p.jsonl"), 2, "has no pending database")
    one_line_error(pycrawler("heritrix", "journal", tmp_path / "nowhere", "--out", tmp_path / "j.gz"), 2,
                   "is not a pycrawler crawl state: it does not exist")
    one_line_error(pycrawler("heritrix", "journal", state, "--out", tmp_path / "j.gz"), 2,
                   "is not a pycrawler crawl state: its pending database is no work-queue frontier's")
    one_line_error(pycrawler("heritrix", "journal", tmp_path / "seen-only", "--out", tmp_path / "j.gz"), 2,
                   "is not a pycrawler crawl state: it has neither a pending nor a fetched database")
    assert not (tmp_path / "j.gz").exists() and not (tmp_path / "j.gz.part").exists()
