"""Overlap a batch's Java half with its Python half on two cores.

A large batch does two kinds of work: JE's B-tree inserts or cursor walks (in the JVM) and
turning records into bytes or back (in Python). JPype lets go of the GIL for the length of a
Java call, so while one thread is inside JE another can encode the next chunk or decode the
last page. :class:`JavaWorker` is that other thread: one daemon thread, calls run one at a
time in the order given, so a JE transaction is never in use by two threads at once, and the
caller does not return before the last call it started has ended (its transaction may then
commit or abort safely).

Key-ordered TODO batches (1M records, 10k per batch) went from put 75k / get 62k records/s to
95k / 84k this way (medians of 3); see docs/benchmarks.md.
"""

from __future__ import annotations

import concurrent.futures
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from .. import jvm

Item = TypeVar("Item")
Result = TypeVar("Result")
Request = TypeVar("Request")


class _Thread:
    """A daemon thread attached to the JVM that runs the calls put on its queue, for good.

    Threads are kept for the next worker rather than ended: a thread that ends attached leaks
    its JVM side, and detaching first does not hold, because freeing any Java object on the
    thread afterwards (a garbage collection can do it) attaches it again. At the process's
    exit the idle ones detach and end (:func:`_end_idle_threads`), before the JVM shuts down."""

    def __init__(self):
        self.calls: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="pycrawler-java", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        jvm.attach_thread()
        while (item := self.calls.get()) is not _END:
            future, call, args = item
            try:
                future.set_result(call(*args))
            except BaseException as exc:  # handed to the caller, who raises it
                future.set_exception(exc)
            del item, future, call, args  # nothing of a finished call stays referenced here
        jvm.detach_thread()

    def end(self) -> None:
        """Detach the thread from the JVM and end it (it must be idle)."""
        self.calls.put(_END)
        self._thread.join()


_END = object()
"""Put on an idle thread's queue: detach and end."""

_idle_threads: list[_Thread] = []
_idle_lock = threading.Lock()
_exit_hook_registered = False


def _new_thread() -> _Thread:
    global _exit_hook_registered
    if not _exit_hook_registered:
        jvm.before_shutdown(_end_idle_threads)
        _exit_hook_registered = True
    return _Thread()


def _end_idle_threads() -> None:
    """At exit, before the JVM shuts down, detach and end the idle threads.

    HotSpot's shutdown (``DestroyJavaVM``, which JPype's exit hook calls) waits for the threads
    that are in native code to block, and gives up only after 300 ms. A thread attached to the
    JVM and waiting on its queue in Python is in native code as the JVM sees it, so every
    process that had used a worker spent 300 ms more in its exit (a third of a small crawl's
    end). :func:`pycrawler.jvm.before_shutdown` runs it before the JVM's shutdown. A thread
    still held by an open worker is left as it is."""
    with _idle_lock:
        ending, _idle_threads[:] = list(_idle_threads), []
    for thread in ending:
        thread.end()


class JavaWorker:
    """One thread that runs JVM calls while the calling thread does Python work.

    The thread is taken on first use (an idle one, or a new one) and given back at
    :meth:`close` for the next worker, so a process holds as many as it has workers open at
    once."""

    def __init__(self):
        self._thread: _Thread | None = None

    def submit(self, call: Callable[..., Any], *args) -> concurrent.futures.Future:
        """Run ``call(*args)`` on the worker; its future."""
        if self._thread is None:
            with _idle_lock:
                self._thread = _idle_threads.pop() if _idle_threads else None
            if self._thread is None:
                self._thread = _new_thread()
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._thread.calls.put((future, call, args))
        return future

    def pipeline(self, items: Iterable[Item], call: Callable[[Item], Result]) -> list[Result]:
        """``[call(item) for item in items]``, each call on the worker while this thread
        produces the next item (``items`` is best a generator that does the Python work)."""
        results: list[Result] = []
        running = None
        try:
            for item in items:
                if running is not None:
                    results.append(running.result())
                running = self.submit(call, item)
            if running is not None:
                results.append(running.result())
                running = None
        finally:
            _settle(running)
        return results

    def pages(self, fetch: Callable[[Request], tuple[Result, Request | None]], request: Request) -> Iterator[Result]:
        """The results of a chain of fetches, where each fetch also names the request that
        follows it (None: the chain ends). The first fetch runs on this thread; each later one
        runs on the worker while the caller handles the result before it."""
        result, following = fetch(request)
        running = None
        try:
            while True:
                running = self.submit(fetch, following) if following is not None else None
                yield result
                if running is None:
                    return
                result, following = running.result()
                running = None
        finally:
            _settle(running)

    def close(self) -> None:
        """Give the thread back (every call of this worker has ended: callers wait for
        theirs); a later call takes one again."""
        if self._thread is not None:
            with _idle_lock:
                _idle_threads.append(self._thread)
            self._thread = None


def _settle(running: concurrent.futures.Future | None) -> None:
    """Wait out a call still in flight when the caller leaves early (an error, or a consumer
    that stopped reading): its transaction must not end under it. Its own outcome no longer
    matters, the caller's error is the one that propagates."""
    if running is not None:
        concurrent.futures.wait([running])
