"""A pycrawler crawl state written as Heritrix's frontier recover journal, for Heritrix 3 to import.

The journal (:mod:`.journal`) is the one form of frontier state that every Heritrix 3 reads
without its own classes' storage: ``Frontier.importURIs`` with ``format: recoveryLog`` marks
the ``Fs``/``Ff`` URLs seen and schedules the ``F+`` URLs not finished. So a crawl state
(``pycrawler crawl --state DIR``, or one ``pycrawler heritrix import`` made) is written as:

- ``Fs URL HOPS VIA`` for every URL of the ``fetched`` database that Heritrix would count a
  success (a status > 0: any HTTP answer), ``Ff URL HOPS VIA`` for the others (connection
  failures, robots.txt exclusions, ...): Heritrix's import with ``includeSuccesses`` and
  ``includeFailures`` marks them seen;
- then ``F+ URL HOPS VIA`` for every URL of the work-queue frontier's ``pending`` database, in
  ordinal order, the order they were scheduled (Heritrix's import schedules them in line
  order, so each queue keeps its order). A URL both fetched and pending (in process when the
  crawl stopped, or waiting for a retry) is pending: its ``F+`` line comes last.

Hop path and via are the ones the crawl keeps in each record (``abstract_text``, see
:func:`pycrawler.crawl.discovery.discovery`). Not carried: seen keys without a URL (a Heritrix
import's ``alreadySeenUrl`` keys; a journal names URLs), directives and precedences (Heritrix
recomputes them as it schedules), per-queue politeness state.

The state is opened read-only: a folder, or a served one's address (``pycrawler crawl
--serve`` or ``pycrawler serve``). A running crawl moves while it is read, so ``pending`` is
read first, then ``fetched``: a URL that leaves ``pending`` in between has its record in
``fetched`` by then (the crawl writes the record before it deletes the URL), so no URL the
crawl had is missing; one fetched in between is written twice, ``Fs`` and ``F+`` (pending).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import BinaryIO

import numpy as np

from ..errors import BadInput
from .. import store
from ..spill import SpillFile
from ..store import Environment, gateway_address, logfile
from .journal import ADDED, FAILURE, SUCCESS, journal_line, write_journal

PAGE = 65536


def crawl_journal_lines(env: Environment, counts: dict[str, int]) -> Iterator[str]:
    """The journal lines of the crawl state in ``env`` (module docstring); ``counts`` receives
    lines per tag."""
    from ..crawl.discovery import discovery
    from ..crawl.engine import FETCHED
    from ..frontier.pending_records import decode_key
    from ..frontier.workqueues import META, PENDING
    from ..records.crawl_url import decode_many

    names = env.database_names()
    if PENDING not in names and FETCHED not in names:
        raise BadInput(f"{env.path} is not a pycrawler crawl state: it has neither a {PENDING} nor a {FETCHED} "
                       f"database (its databases: {', '.join(names) or 'none'})")
    if PENDING in names and META not in names:
        raise BadInput(f"{env.path} is not a pycrawler crawl state: its {PENDING} database is no work-queue "
                       f"frontier's (it has no {META}); a Heritrix crawl state is read with pycrawler heritrix export")
    counts.update(dict.fromkeys((SUCCESS, FAILURE, ADDED), 0))
    with SpillFile() as queued:   # the pending values, in key order; ordinals in memory (8 bytes each)
        ordinals = array("Q")
        if PENDING in names:
            items = env.open_database(PENDING, read_only=True).items(page_records=PAGE)
            while page := list(islice(items, PAGE)):
                urls = [(key, value) for key, value in page if value]   # a queue's cap has no value
                ordinals.extend(decode_key(key)[3] for key, _ in urls)
                queued.extend([value for _, value in urls])
        if FETCHED in names:
            values = env.open_database(FETCHED, read_only=True).values(page_records=PAGE)
            while page := list(islice(values, PAGE)):
                for record in decode_many(page):
                    tag = SUCCESS if record.status_code > 0 else FAILURE
                    counts[tag] += 1
                    yield journal_line(tag, record.ori_url, *discovery(record))
        by_ordinal = np.argsort(np.frombuffer(ordinals, dtype=np.uint64), kind="stable")
        for start in range(0, len(by_ordinal), PAGE):
            for record in decode_many(queued.read(by_ordinal[start:start + PAGE])):
                counts[ADDED] += 1
                yield journal_line(ADDED, record.ori_url, *discovery(record))


def write_crawl_journal(state: str | Path, out: BinaryIO) -> dict[str, int]:
    """Write the crawl state at ``state`` (a folder or an address, opened read-only) as a
    gzipped journal to ``out``; returns lines per tag."""
    if not gateway_address.is_address(str(state)):
        state = Path(state)
        if not state.is_dir() or not logfile.jdb_files(state):
            raise BadInput(f"{state} is not a pycrawler crawl state: "
                           + ("it does not exist" if not state.exists() else "it holds no JE log files (.jdb)"))
    counts: dict[str, int] = {}
    with store.open(state, read_only=True) as env:
        write_journal(out, crawl_journal_lines(env, counts))
    return counts
