"""JavaWorker runs Java calls on one thread, in order, and leaves nothing attached behind."""

import threading

import jpype
import pytest

from pycrawler import jvm
from pycrawler.store import java_worker
from pycrawler.store.java_worker import JavaWorker


@pytest.fixture
def worker():
    jvm.start()
    w = JavaWorker()
    yield w
    w.close()


def java_threads() -> int:
    return int(jpype.JClass("java.lang.management.ManagementFactory").getThreadMXBean().getThreadCount())


def test_pipeline_calls_in_order_on_one_other_thread(worker):
    threads = []

    def call(item):
        threads.append(threading.current_thread())
        return int(jpype.JClass("java.lang.Math").abs(-item))

    assert worker.pipeline((i for i in range(5)), call) == [0, 1, 2, 3, 4]
    assert len(set(threads)) == 1 and threads[0] is not threading.current_thread()


def test_an_error_in_a_call_reaches_the_caller_after_the_call_in_flight_ended(worker):
    done = []

    def call(item):
        if item == 2:
            raise ValueError("bad item")
        done.append(item)

    with pytest.raises(ValueError, match="bad item"):
        worker.pipeline(range(5), call)
    assert done == [0, 1]


def test_an_error_producing_items_waits_for_the_call_in_flight(worker):
    started, finish = threading.Event(), threading.Event()
    ended = []

    def call(item):
        started.set()
        finish.wait(5)
        ended.append(item)

    def items():
        yield 1
        started.wait(5)
        finish.set()
        raise KeyError("producer")

    with pytest.raises(KeyError):
        worker.pipeline(items(), call)
    assert ended == [1]


def test_pages_follow_the_chain_each_fetch_names(worker):
    def fetch(n):
        return n * 10, (n + 1 if n < 3 else None)

    assert list(worker.pages(fetch, 0)) == [0, 10, 20, 30]


def test_workers_opened_one_after_another_share_one_thread():
    jvm.start()
    JavaWorker().close()
    first = JavaWorker()
    first.pipeline(range(2), lambda i: jpype.JClass("java.lang.Math").abs(i))
    first.close()
    before = java_threads()
    for _ in range(20):
        w = JavaWorker()
        w.pipeline(range(2), lambda i: jpype.JClass("java.lang.Math").abs(i))
        w.close()
    assert java_threads() == before


def test_workers_open_at_once_each_have_their_own_thread(worker):
    other = JavaWorker()
    try:
        names = [w.pipeline([0], lambda _: threading.current_thread())[0] for w in (worker, other)]
        assert names[0] is not names[1]
    finally:
        other.close()


def test_at_exit_idle_threads_detach_from_the_jvm_and_end():
    """So that the JVM's shutdown does not wait 300 ms for them (java_worker._end_idle_threads)."""
    jvm.start()
    used = JavaWorker()
    thread = used.pipeline([0], lambda _: threading.current_thread())[0]
    used.close()
    attached, idle = java_threads(), len(java_worker._idle_threads)  # earlier tests' threads are idle too
    java_worker._end_idle_threads()
    assert not thread.is_alive()
    assert java_threads() == attached - idle
    later = JavaWorker()
    try:  # a worker after that takes a new thread
        assert later.pipeline([-3], lambda i: int(jpype.JClass("java.lang.Math").abs(i))) == [3]
    finally:
        later.close()
