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
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")
Request = TypeVar("Request")


def _attach_as_daemon() -> None:
    import jpype

    # A non-daemon attached thread would keep the JVM from shutting down at exit.
    jpype.java.lang.Thread.attachAsDaemon()


class JavaWorker:
    """One thread that runs JVM calls while the calling thread does Python work."""

    def __init__(self):
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def _submit(self, call: Callable[..., Any], *args) -> concurrent.futures.Future:
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                1, thread_name_prefix="pycrawler-java", initializer=_attach_as_daemon)
        return self._pool.submit(call, *args)

    def pipeline(self, items: Iterable[Item], call: Callable[[Item], Result]) -> list[Result]:
        """``[call(item) for item in items]``, each call on the worker while this thread
        produces the next item (``items`` is best a generator that does the Python work)."""
        results: list[Result] = []
        running = None
        try:
            for item in items:
                if running is not None:
                    results.append(running.result())
                running = self._submit(call, item)
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
                running = self._submit(fetch, following) if following is not None else None
                yield result
                if running is None:
                    return
                result, following = running.result()
                running = None
        finally:
            _settle(running)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


def _settle(running: concurrent.futures.Future | None) -> None:
    """Wait out a call still in flight when the caller leaves early (an error, or a consumer
    that stopped reading): its transaction must not end under it. Its own outcome no longer
    matters, the caller's error is the one that propagates."""
    if running is not None:
        concurrent.futures.wait([running])
