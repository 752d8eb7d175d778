"""pycrawler's TODO frontier: the book's protocol, two orders, Java's view of it, durability."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from crawl_url_samples import frontier_records
from java_programs import ROOT, run_java
from pycrawler.errors import BadInput
from pycrawler.frontier.todo import ORDERS, JeTodoFrontier
from pycrawler.records.crawl_url import CrawlUrl, to_dict
from pycrawler.store.bindings import get_binding


def urls(records):
    return [r.ori_url for r in records]


@pytest.fixture(params=sorted(ORDERS))
def order(request):
    return request.param


def test_key_order_pops_smallest_url_first_and_a_put_replaces_a_waiting_url(env):
    todo = JeTodoFrontier(env, "key", create=True)
    todo.put_urls([CrawlUrl("http://c/"), CrawlUrl("http://a/", layer=1), CrawlUrl("http://b/")])
    todo.put_url(CrawlUrl("http://a/", layer=2))
    assert len(todo) == 3
    assert todo.get_next() == CrawlUrl("http://a/", layer=2)
    assert urls(todo.get_next_batch(10)) == ["http://b/", "http://c/"]
    assert todo.get_next() is None and todo.get_next_batch(5) == [] and len(todo) == 0


def test_a_url_put_below_what_was_already_popped_is_still_found(env):
    todo = JeTodoFrontier(env, "key", create=True)
    todo.put_urls([CrawlUrl("http://m/"), CrawlUrl("http://n/")])
    assert todo.get_next().ori_url == "http://m/"
    todo.put_url(CrawlUrl("http://a/"))
    assert urls(todo.get_next_batch(5)) == ["http://a/", "http://n/"]


def test_a_damaged_record_stops_the_pop_and_puts_the_batch_back(env, order):
    todo = JeTodoFrontier(env, order, create=True)
    todo.put_urls([CrawlUrl("http://a/"), CrawlUrl("http://b/")])
    last_key = list(todo.db.keys())[-1]
    todo.db.put(last_key, b"\x01garbage")
    with pytest.raises(BadInput, match="damaged"):
        todo.get_next_batch(5)
    assert len(todo) == 2
    assert todo.get_next().ori_url == "http://a/"


def test_batches_over_many_chunks_keep_the_order_and_a_repeated_url_keeps_its_last_record(env, order):
    todo = JeTodoFrontier(env, order, create=True)
    todo.CHUNK = 3  # ten records: four chunks each way, the Java calls on the worker thread
    given = [CrawlUrl(f"http://{name}/") for name in "jcaihgbfde"] + [CrawlUrl("http://c/", layer=7)]
    assert todo.put_urls(given) == 11
    popped = todo.get_next_batch(4) + todo.get_next_batch(100)
    if order == "key":
        assert urls(popped) == [f"http://{name}/" for name in "abcdefghij"]
        assert popped[2].layer == 7
    else:
        assert popped == given
    assert len(todo) == 0 and todo.get_next_batch(5) == []


def test_a_record_that_cannot_be_encoded_in_a_later_chunk_stores_nothing_of_its_batch(env, order):
    todo = JeTodoFrontier(env, order, create=True)
    todo.CHUNK = 2
    batch = [CrawlUrl(f"http://{i}/") for i in range(7)] + [CrawlUrl("http://9/", url_no=2**40)]
    with pytest.raises(BadInput, match="url_no"):
        todo.put_urls(batch)
    assert len(todo) == 0


def test_a_damaged_record_on_a_later_page_puts_every_page_back(env, order):
    todo = JeTodoFrontier(env, order, create=True)
    todo.CHUNK = 2
    todo.put_urls([CrawlUrl(f"http://{i}/") for i in range(6)])
    fifth = list(todo.db.keys())[4]
    todo.db.put(fifth, b"\x01garbage")
    with pytest.raises(BadInput, match="damaged"):
        todo.get_next_batch(6)
    assert len(todo) == 6
    assert urls(todo.get_next_batch(4)) == [f"http://{i}/" for i in range(4)]


def test_fifo_order_pops_in_put_order_keeping_duplicates(env):
    todo = JeTodoFrontier(env, "fifo", create=True)
    todo.put_urls([CrawlUrl("http://c/"), CrawlUrl("http://a/")])
    todo.put_url(CrawlUrl("http://c/", layer=1))
    assert [(r.ori_url, r.layer) for r in todo.get_next_batch(2)] == [("http://c/", 0), ("http://a/", 0)]
    assert todo.get_next() == CrawlUrl("http://c/", layer=1)


def test_fifo_counter_continues_after_reopen(tmp_path):
    with JeTodoFrontier.open(tmp_path, "fifo", create=True) as todo:
        todo.put_urls(CrawlUrl(f"http://x/{i}") for i in range(5))
        todo.get_next_batch(2)
    with JeTodoFrontier.open(tmp_path, "fifo") as todo:
        todo.put_url(CrawlUrl("http://x/late"))
        assert urls(todo.get_next_batch(10)) == ["http://x/2", "http://x/3", "http://x/4", "http://x/late"]


def test_records_come_back_whole(env, order):
    records = frontier_records(200)
    todo = JeTodoFrontier(env, order, create=True)
    for start in range(0, 200, 64):
        todo.put_urls(records[start:start + 64])
    popped = todo.get_next_batch(150) + todo.get_next_batch(150)
    expected = records if order == "fifo" else sorted(records, key=lambda r: get_binding("string").encode(r.ori_url))
    assert popped == expected


def test_keys_are_the_java_bindings_bytes(env, order):
    todo = JeTodoFrontier(env, order, create=True)
    todo.put_urls([CrawlUrl("http://\U0001F600/\x00"), CrawlUrl("http://b/")])
    expected = {"key": [get_binding("string").encode(u) for u in ("http://b/", "http://\U0001F600/\x00")],
                "fifo": [get_binding("long").encode(n) for n in (0, 1)]}[order]
    assert list(todo.db.keys()) == expected
    assert todo.mapping[{"key": "http://b/", "fifo": 1}[order]] == CrawlUrl("http://b/")


@pytest.mark.parametrize("bad", [CrawlUrl(), CrawlUrl(ori_url=""), CrawlUrl(ori_url=b"http://a/")])
def test_an_entry_without_a_url_is_refused_and_nothing_of_its_batch_is_stored(env, order, bad):
    todo = JeTodoFrontier(env, order, create=True)
    with pytest.raises(BadInput, match="ori_url"):
        todo.put_urls([CrawlUrl("http://fine/"), bad])
    assert len(todo) == 0


def test_a_read_only_frontier_refuses_writes(tmp_path):
    with JeTodoFrontier.open(tmp_path, "key", create=True) as todo:
        todo.put_url(CrawlUrl("http://a/"))
    with JeTodoFrontier.open(tmp_path, "key", read_only=True) as todo:
        assert len(todo) == 1
        with pytest.raises(BadInput, match="read-only"):
            todo.put_url(CrawlUrl("http://b/"))
        with pytest.raises(BadInput, match="read-only"):
            todo.get_next()


def test_java_reads_the_store_as_a_stored_sorted_map(tmp_path, order):
    records = frontier_records(120, seed=3)
    with JeTodoFrontier.open(tmp_path, order, create=True) as todo:
        todo.put_urls(records)
    lines = run_java("org.pycrawler.bridge.TodoReader", tmp_path, ORDERS[order], "string" if order == "key" else "long")
    read = [(key, json.loads(record)) for key, record in (line.split("\t") for line in lines)]
    with JeTodoFrontier.open(tmp_path, order) as todo:
        expected = todo.get_next_batch(len(records))
    assert [r for _, r in read] == [to_dict(r) for r in expected]
    if order == "fifo":
        assert [key for key, _ in read] == [str(n) for n in range(len(records))]


WRITER = r"""
import sys
from pycrawler.frontier.todo import JeTodoFrontier
from pycrawler.records.crawl_url import CrawlUrl

todo = JeTodoFrontier.open(sys.argv[1], sys.argv[2], create=True)
number = 0
def put():
    global number
    todo.put_urls([CrawlUrl(f"http://h{i % 7}.example/{i}") for i in range(number, number + 50)])
    print("put", number, number + 50, flush=True)
    number += 50
put(); put()
for record in todo.get_next_batch(30):
    print("took", record.ori_url, flush=True)
while True:
    put()
"""


def test_every_acknowledged_url_not_taken_survives_kill_9(tmp_path, order):
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), order], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    acknowledged, taken = set(), set()
    try:
        for line in writer.stdout:
            word, *rest = line.split()
            if word == "put":
                acknowledged.update(f"http://h{i % 7}.example/{i}" for i in range(int(rest[0]), int(rest[1])))
            else:
                taken.add(rest[0])
            if len(acknowledged) >= 1000:
                break
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
    assert writer.returncode == -signal.SIGKILL
    assert len(taken) == 30
    with JeTodoFrontier.open(tmp_path, order) as todo:
        stored = {r.ori_url for r in todo.get_next_batch(10**6)}
    assert acknowledged - taken <= stored
    assert not taken & stored


def test_threads_putting_and_popping_lose_nothing(env, order):
    import threading

    todo = JeTodoFrontier(env, order, create=True)
    taken: list[CrawlUrl] = []

    def producer(base: int) -> None:
        for start in range(0, 300, 30):  # descending URLs, so puts land below earlier pops
            todo.put_urls(CrawlUrl(f"http://t/{base}/{999 - i:03d}") for i in range(start, start + 30))

    def consumer() -> None:
        for _ in range(40):
            taken.extend(todo.get_next_batch(7))

    threads = [threading.Thread(target=producer, args=(b,)) for b in range(3)] + [threading.Thread(target=consumer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    taken.extend(todo.get_next_batch(10_000))
    assert sorted(urls(taken)) == sorted(f"http://t/{b}/{999 - i:03d}" for b in range(3) for i in range(300))
