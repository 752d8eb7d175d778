"""Ordered scans page through the database in one JNI call per page; these hold the paging
contract where it is easiest to break: page boundaries, reverse order, and sorted duplicates
(where a page's last key alone does not say where the page ended)."""

from __future__ import annotations

import pytest


@pytest.fixture
def dups(env):
    db = env.open_database("dups", create=True, sorted_duplicates=True)
    records = [(bytes([k]), b"%05d" % v) for k in (1, 2, 3) for v in range(50)]
    db.put_many([k for k, _ in records], [v for _, v in records])
    return db, records


@pytest.mark.parametrize("page_records", [1, 7, 50, 4096])
def test_duplicates_are_read_once_each_across_pages(dups, page_records):
    db, records = dups
    assert list(db.items(page_records=page_records)) == records
    assert list(db.items(reverse=True, page_records=page_records)) == records[::-1]


def test_duplicate_ranges_and_keys_only(dups):
    db, records = dups
    middle = [r for r in records if r[0] == b"\x02"]
    assert list(db.items(prefix=b"\x02", page_records=3)) == middle
    assert list(db.items(b"\x02", b"\x03", reverse=True, page_records=3)) == middle[::-1]
    assert list(db.keys(page_records=5)) == [k for k, _ in records]


def test_reopening_takes_the_duplicates_setting_the_database_has(tmp_path, dups):
    db, records = dups
    assert db.env.open_database("dups").sorted_duplicates
    assert not db.env.open_database("plain", create=True).sorted_duplicates


@pytest.mark.parametrize("page_records", [1, 3, 4096])
def test_unique_keys_page_forward_and_back(env, page_records):
    db = env.open_database("plain", create=True)
    keys = [b"%03d" % i for i in range(20)]
    db.put_many(keys, keys)
    assert [k for k, _ in db.items(page_records=page_records)] == keys
    assert [k for k, _ in db.items(b"005", b"012", reverse=True, page_records=page_records)] == keys[5:12][::-1]
    assert list(db.keys(prefix=b"01", page_records=page_records)) == keys[10:20]
