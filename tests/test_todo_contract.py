"""The TODO protocol (pycrawler/frontier/protocol.py), held once for every store behind it:
pycrawler's JE frontier in key and in FIFO order, the seed book's layout, and the work-queue
frontier (without politeness delays, so every queue is ready).

What each store does beyond the protocol (its order, its layout on disk, politeness, Java's view
of the store) is held by its own module: tests/test_todo_frontier.py, test_book_layout.py,
test_workqueues.py.
"""

from __future__ import annotations

import pytest

from pycrawler.frontier.book import BookFrontier
from pycrawler.frontier.politeness import Politeness
from pycrawler.frontier.protocol import TodoFrontier
from pycrawler.frontier.todo import JeTodoFrontier
from pycrawler.frontier.workqueues import WorkQueueFrontier
from pycrawler.records.crawl_url import CrawlUrl

STORES = {
    "pycrawler key": lambda path, create: JeTodoFrontier.open(path, "key", create=create),
    "pycrawler fifo": lambda path, create: JeTodoFrontier.open(path, "fifo", create=create),
    "book": lambda path, create: BookFrontier.open(path, create=create),
    "work queues": lambda path, create: WorkQueueFrontier.open(path, create=create, politeness=Politeness.none()),
}


@pytest.fixture(params=list(STORES))
def kind(request):
    return request.param


@pytest.fixture
def todo(kind, tmp_path):
    with STORES[kind](tmp_path / "todo", True) as frontier:
        yield frontier


def records(count: int, start: int = 0) -> list[CrawlUrl]:
    """Distinct URLs over a few hosts, with fields beyond the URL set."""
    return [CrawlUrl(f"http://h{i % 3}.example/p{i}", layer=i % 4, hit_num=i, title=f"page {i}", weight=-i)
            for i in range(start, start + count)]


def by_url(batch: list[CrawlUrl]) -> list[CrawlUrl]:
    return sorted(batch, key=lambda record: record.ori_url)


def take_all(todo: TodoFrontier) -> list[CrawlUrl]:
    out = []
    while batch := todo.get_next_batch(7):
        out += batch
    return out


def test_every_record_put_is_handed_out_once_whole_and_then_the_store_is_dry(todo):
    given = records(20)
    assert todo.put_urls(given[:12]) == 12
    assert todo.put_urls(iter(given[12:])) == 8
    assert len(todo) == 20
    first = todo.get_next_batch(5)
    assert len(first) == 5 and len(todo) == 15, "a record handed out is gone from the store"
    assert by_url(first + take_all(todo)) == by_url(given)
    assert len(todo) == 0 and todo.get_next() is None and todo.get_next_batch(5) == []


def test_one_record_at_a_time_the_books_put_url_and_get_next(todo):
    assert todo.put_url(CrawlUrl("http://a.example/", layer=2)) is True
    assert len(todo) == 1
    assert todo.get_next() == CrawlUrl("http://a.example/", layer=2)
    assert todo.get_next() is None and len(todo) == 0


def test_a_batch_asks_for_more_than_waits_and_gets_what_there_is(todo):
    todo.put_urls(records(3))
    assert len(todo.get_next_batch(100)) == 3
    assert todo.get_next_batch(0) == [] and todo.put_urls([]) == 0


def test_what_was_put_and_not_taken_is_there_after_reopening_and_what_was_taken_is_not(kind, tmp_path):
    given = records(10)
    with STORES[kind](tmp_path / "todo", True) as todo:
        todo.put_urls(given)
        taken = todo.get_next_batch(4)
    with STORES[kind](tmp_path / "todo", False) as todo:
        assert len(todo) == 6
        assert by_url(take_all(todo)) == by_url([r for r in given if r not in taken])


def test_layout_and_order_name_the_store_and_close_may_be_called_again(todo):
    assert isinstance(todo, TodoFrontier)
    assert isinstance(todo.layout, str) and isinstance(todo.order, str)
    todo.close()
    todo.close()
