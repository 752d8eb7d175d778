"""Parsing off the event loop: a process pool whose workers run :func:`html.extract`.

Parsing is CPU work (lexbor plus Python per link); on the fetcher's event loop it would stall
every open connection while a 20 MB page is parsed. Workers are separate processes, so the
GIL is not shared either.

Workers start with the ``spawn`` context (``forkserver`` on request), never ``fork``: the crawl
process runs the JVM (JE), and a forked copy of a process with a running JVM deadlocks or
crashes. A spawned worker imports only :mod:`pycrawler.parse`, which never starts a JVM. The
workers are all started when the pool is made, in the thread that makes it, and the kernel
kills them when that thread's process dies, even by kill -9 (:mod:`pycrawler.worker_processes`):
make the pool in a thread that outlives it.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from collections.abc import Mapping

from ..worker_processes import TiedProcessPool
from .html import MAX_OUTLINKS, Document, extract

START_METHODS = ("spawn", "forkserver")


class ParsePool:
    """``await pool.extract(body, url, headers)`` runs :func:`html.extract` in a worker process.

    ``workers`` defaults to the machine's cores. Use as a context manager, or call
    :meth:`close`; :meth:`warm_up` waits until every worker has started (so a crawl's first
    pages do not pay for interpreter start-up).
    """

    def __init__(self, workers: int | None = None, *, start_method: str = "spawn", embeds: bool = True,
                 max_outlinks: int = MAX_OUTLINKS):
        if start_method not in START_METHODS:
            raise ValueError(f"start_method must be one of {START_METHODS} (a process with a JVM must not fork)")
        self.workers = workers or os.cpu_count() or 1
        self.options = {"embeds": embeds, "max_outlinks": max_outlinks}
        self._executor = TiedProcessPool(self.workers, multiprocessing.get_context(start_method))

    async def extract(self, body: bytes, url: str, headers: Mapping[str, str]) -> Document:
        """The :class:`Document` of ``body``, computed in a worker; the event loop keeps running meanwhile."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, _extract, body, url, dict(headers), self.options)

    def warm_up(self) -> None:
        """Wait until every worker has started."""
        self._executor.wait_started()

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> ParsePool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _extract(body: bytes, url: str, headers: dict, options: dict) -> Document:
    return extract(body, url, headers, **options)
