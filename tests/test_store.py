"""The store layer's contract: bytes in, bytes out, in unsigned byte order; batches behave
like the single-record calls they replace; transactions commit or vanish as a whole."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from pycrawler.errors import BadInput
from pycrawler.store import Environment
from pycrawler.store.environment import JE_LOG_PREFIX, _remove_je_logs_of_dead_processes
from pycrawler.store.packing import pack, pack_fixed, u64_keys, unpack


def test_single_records_round_trip(env):
    db = env.open_database("t", create=True)
    db.put(b"k", b"v")
    assert db.get(b"k") == b"v" and db[b"k"] == b"v" and b"k" in db
    assert db.get(b"missing") is None and db.get(b"missing", b"d") == b"d"
    with pytest.raises(KeyError):
        db[b"missing"]
    assert db.put_if_absent(b"k", b"other") is False and db[b"k"] == b"v"
    assert db.put_if_absent(b"n", b"") is True and db[b"n"] == b""
    assert db.delete(b"k") is True and db.delete(b"k") is False
    assert len(db) == 1


def test_batches_match_single_calls_and_keep_the_callers_order(env):
    db = env.open_database("t", create=True)
    keys = [b"c", b"a", b"b", b"a"]
    inserted = db.put_if_absent_many(keys, [b"1", b"2", b"3", b"4"])
    assert inserted.tolist() == [True, True, True, False], "the first of two equal keys wins"
    assert db.get_many([b"b", b"zz", b"a"]) == [b"3", None, b"2"]
    assert db.contains_many([b"zz", b"c"]).tolist() == [False, True]
    assert db.put_many([b"a", b"a"], [b"x", b"y"]) == 2 and db[b"a"] == b"y", "the last put stays"
    assert db.delete_many([b"c", b"nope"]).tolist() == [True, False]
    assert list(db.items()) == [(b"a", b"y"), (b"b", b"3")]


def test_fixed_width_keys_sort_numerically(env):
    db = env.open_database("t", create=True)
    numbers = np.array([2**63 + 5, 7, 2**40, 0], dtype=np.uint64)
    assert db.put_if_absent_many(pack_fixed(u64_keys(numbers))).all()
    stored = [int.from_bytes(k, "big") for k in db.keys()]
    assert stored == sorted(int(n) for n in numbers)


def test_ranges_prefixes_and_reverse(env):
    db = env.open_database("t", create=True)
    keys = [b"a", b"ab", b"abc", b"b", b"\xff", b"\xff\xff"]
    db.put_many(keys, keys)
    assert list(db.keys(b"ab", b"b")) == [b"ab", b"abc"]
    assert list(db.keys(prefix=b"ab")) == [b"ab", b"abc"]
    assert list(db.keys(prefix=b"\xff")) == [b"\xff", b"\xff\xff"]
    assert list(db.keys(reverse=True)) == keys[::-1]
    assert list(db.keys(b"b", b"a")) == []
    assert db.delete_range(b"ab", b"b") == 2 and list(db.keys()) == [b"a", b"b", b"\xff", b"\xff\xff"]


def test_a_transaction_commits_on_success_and_vanishes_on_error(env):
    db = env.open_database("t", create=True)
    with env.begin() as txn:
        db.put_many([b"kept"], [b"1"], txn=txn)
    with pytest.raises(RuntimeError):
        with env.begin() as txn:
            db.put(b"lost", b"2", txn=txn)
            db.delete(b"kept", txn=txn)
            raise RuntimeError("abort")
    assert list(db.items()) == [(b"kept", b"1")]


def test_cursor_walks_both_ways_and_edits_in_place(env):
    db = env.open_database("t", create=True)
    db.put_many([b"a", b"b", b"c"], [b"1", b"2", b"3"])
    with env.begin() as txn, db.cursor(txn) as cursor:  # a transactional store edits within a transaction
        assert cursor.seek(b"bb") == (b"c", b"3")
        assert cursor.prev() == (b"b", b"2")
        cursor.replace(b"two")
        assert cursor.first() == (b"a", b"1")
        assert cursor.delete()
        assert cursor.last() == (b"c", b"3") and cursor.next() is None
    assert list(db.items()) == [(b"b", b"two"), (b"c", b"3")]


def test_reopening_finds_what_was_written(tmp_path):
    with Environment(tmp_path / "e", create=True, durability="write_no_sync") as env:
        env.open_database("t", create=True).put_many([b"k"], [b"v"])
        assert env.database_names() == ["t"]
    with Environment(tmp_path / "e", read_only=True) as env:
        assert env.open_database("t")[b"k"] == b"v"


def test_misuse_is_a_clear_error(tmp_path, env):
    with pytest.raises(BadInput, match="does not exist"):
        Environment(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadInput, match="not a JE environment"):
        Environment(tmp_path / "empty", read_only=True)
    with pytest.raises(BadInput, match="has no database 'nope'"):
        env.open_database("nope")
    with pytest.raises(BadInput, match="durability"):
        Environment(tmp_path / "d", create=True, durability="sometimes")
    plain = Environment(tmp_path / "plain", create=True, transactional=False)
    with pytest.raises(BadInput, match="without transactions"):
        plain.begin()
    plain.close()
    plain.close()  # idempotent
    with pytest.raises(BadInput, match="closed"):
        plain.database_names()


def test_packing_round_trips():
    items = [b"", b"a", b"\x00" * 3, "é".encode()]
    data, offsets = pack(items)
    assert offsets.tolist() == [0, 0, 1, 4, 6]
    assert unpack(data, offsets) == items


def test_cache_stats_count_the_reads_the_cache_could_not_answer(tmp_path):
    keys, value = [i.to_bytes(4, "big") for i in range(5_000)], bytes(2_000)
    with Environment(tmp_path / "env", create=True) as env:
        env.open_database("t", create=True).put_many(keys, [value] * len(keys))
    with Environment(tmp_path / "env", cache_size=1 << 20) as env:   # 1 MB of cache for 10 MB of records
        db = env.open_database("t")
        before = env.cache_stats()
        assert all(db.get(key) == value for key in keys)
        after = env.cache_stats()
    assert after["cache_misses"] - before["cache_misses"] >= len(keys) // 2
    assert 0 < after["cache_bytes"] <= 2 << 20
    assert after["cache_max_bytes"] == 1 << 20


def test_the_je_log_folders_of_dead_processes_are_removed_and_live_ones_kept():
    """A writable open under JE 7+ keeps JE's log in a temporary folder of its process's own,
    removed at close; a process killed before its close (a crawl is made to be killed) leaves
    it behind, and the next writable open removes it."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = Path(tempfile.mkdtemp(prefix=f"{JE_LOG_PREFIX}{int(ended.stdout)}-"))
    live = Path(tempfile.mkdtemp(prefix=f"{JE_LOG_PREFIX}{os.getpid()}-"))
    (dead / "je.info.0").touch()
    try:
        _remove_je_logs_of_dead_processes()
        assert not dead.exists() and live.is_dir()
    finally:
        live.rmdir()
