"""The seed book's BDBFrontier store, both ways: Java's book code writes, Python reads and
pops (decoding from the class catalog, never loading CrawlUrl); Python writes, the book's
Java code reads."""

from __future__ import annotations

import json

import pytest

from crawl_url_samples import frontier_records, in_datetime_range
from java_programs import run_java
from pycrawler.errors import BadInput
from pycrawler.frontier.book import BOOK_CLASS, BookFrontier
from pycrawler.frontier.layouts import open_frontier
from pycrawler.records.crawl_url import CrawlUrl, encode, to_dict
from pycrawler.store import Environment
from pycrawler.store.catalog import ClassCatalog
from pycrawler.store.serial.encoder import SerialEncoder, java_class


def java_put(path, records) -> None:
    run_java("BookFrontierTool", "put", path, stdin="".join(encode(r).hex() + "\n" for r in records))


def java_pop(path, n: int) -> list[dict]:
    return [json.loads(line) for line in run_java("BookFrontierTool", "pop", path, n)]


def book_key_order(records: list[CrawlUrl]) -> list[CrawlUrl]:
    """The order of the book's getNext: serialized String keys (length first) in byte order."""
    return sorted(records, key=lambda r: SerialEncoder(None).encode_string(r.ori_url))


def test_python_reads_and_pops_what_the_books_java_code_stored(tmp_path):
    records = frontier_records(60, seed=5)  # extremes of time included: beyond datetime's years
    java_put(tmp_path, records)
    with open_frontier(tmp_path, read_only=True) as frontier:
        assert (frontier.layout, frontier.order, len(frontier)) == ("book", "key", 60)
    with open_frontier(tmp_path) as frontier:
        popped = frontier.get_next_batch(25) + frontier.get_next_batch(100)
        assert len(frontier) == 0
    assert popped == book_key_order(records)


def test_the_books_java_code_reads_what_python_stored(tmp_path):
    records = [r for r in frontier_records(80, seed=9) if in_datetime_range(r)]
    with BookFrontier.open(tmp_path, create=True) as frontier:
        frontier.put_urls(records[:30])
        frontier.put_urls(records[30:])
    assert java_pop(tmp_path, 1000) == [to_dict(r) for r in book_key_order(records)]


def test_java_and_python_share_one_catalog(tmp_path):
    first, second = frontier_records(10, seed=1)[:5], [CrawlUrl(f"http://python/{i}", layer=i) for i in range(5)]
    java_put(tmp_path, first)
    with open_frontier(tmp_path) as frontier:
        frontier.put_urls(second)
        catalog = ClassCatalog(frontier.env.open_database("java_class_catalog"))
        assert list(catalog.class_ids()).count("CrawlUrl") == 1
    assert sorted(json.dumps(r, sort_keys=True) for r in java_pop(tmp_path, 100)) == \
        sorted(json.dumps(to_dict(r), sort_keys=True) for r in first + second)


def test_a_record_of_another_class_is_refused_and_left_in_place(tmp_path):
    with BookFrontier.open(tmp_path, create=True) as frontier:
        impostor = java_class("Impostor", 1, [("oriUrl", "java.lang.String")])
        encoder = SerialEncoder(frontier.catalog)
        frontier.db.put(encoder.encode_string("http://x/"), encoder.encode_object(impostor, {"oriUrl": "http://x/"}))
        with pytest.raises(BadInput, match="expected the book's CrawlUrl, found Impostor"):
            frontier.get_next()
        assert len(frontier) == 1


def test_times_beyond_datetime_are_refused_in_the_books_layout(tmp_path):
    with BookFrontier.open(tmp_path, create=True) as frontier:
        with pytest.raises(BadInput, match="years 1..9999"):
            frontier.put_url(CrawlUrl("http://a/", time_to_live=-(1 << 63)))
        assert len(frontier) == 0


def test_the_book_class_descriptor_is_the_books(tmp_path):
    assert (BOOK_CLASS.name, BOOK_CLASS.serial_version_uid) == ("CrawlUrl", 7931672194843948629)
    assert [f.name for f in BOOK_CLASS.fields][:6] == ["fileSize", "hitNum", "layer", "statusCode", "urlNo", "weight"]


def test_a_store_of_no_known_layout_is_refused(tmp_path):
    with Environment(tmp_path, create=True) as env:
        env.open_database("something_else", create=True).close()
    with pytest.raises(BadInput, match="no TODO store of a known layout"):
        open_frontier(tmp_path)
    with pytest.raises(BadInput, match="no TODO store of a known layout"):
        open_frontier(tmp_path, create=True)


def test_a_layout_or_order_that_contradicts_the_store_is_refused(tmp_path):
    java_put(tmp_path, [CrawlUrl("http://a/")])
    with pytest.raises(BadInput, match="book-layout frontier in key order"):
        open_frontier(tmp_path, layout="pycrawler")
    with pytest.raises(BadInput, match="orders key"):
        open_frontier(tmp_path, layout="book", order="fifo")
